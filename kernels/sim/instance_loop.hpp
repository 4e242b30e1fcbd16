#pragma once
// The per-instance round loop (DESIGN.md §3), shared by the CPU executor and the CUDA kernels: advance
// one learner instance through rounds [t0, t1) of a loss chunk, accumulating its charged losses and
// recording them at the checkpoints that fall inside the chunk. Regret at a checkpoint is formed by
// the host as (cumulative charged loss) - (comparator), the comparator being shared by all instances
// of a point (or per instance when the adversary's sequence is).
#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/learners/common.hpp"

namespace dpr::sim {

/// Neumaier-compensated running sum: T up to 2^32 rounds of O(1) losses without drift.
struct CompensatedSum {
    double sum = 0.0, c = 0.0;
    DPR_HD DPR_FORCEINLINE void add(double x) {
        const double t = sum + x;
        c += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
        sum = t;
    }
    DPR_HD double value() const { return sum + c; }
};

/// Everything an instance carries from one chunk to the next besides the learner workspace.
struct InstanceTotals {
    CompensatedSum expected; ///< sum_t <l_t, x_t>
    CompensatedSum realized; ///< sum_t l_t(i_t)
    std::uint32_t next_checkpoint = 0;
    /// The first round whose charged loss (expected or realised) was not finite; 0 while every one has
    /// been. The host refuses to write statistics of a point where any instance has one (docs/OUTPUTS.md).
    std::uint64_t first_nonfinite_round = 0;
};

/// Runs rounds t0..t1-1 (1-indexed, t0 >= 1) of learner L for one instance. `losses` holds rounds
/// t0..t1-1 as rows of `stride` doubles. At each checkpoint t (sorted ascending) the cumulative
/// expected / realized losses are written to out_expected[k] / out_realized[k] (by team lane 0).
template <class L, class Team>
DPR_HD void advance(const typename L::Params& p, const learners::InstanceCtx& ctx, Team& team, double* ws,
                    InstanceTotals& acc, std::uint64_t t0, std::uint64_t t1, const double* losses,
                    std::uint64_t stride, const std::uint64_t* checkpoints, std::uint32_t ncheck,
                    double* out_expected, double* out_realized) {
    for (std::uint64_t t = t0; t < t1; ++t) {
        const learners::RoundResult r = L::round(p, ctx, team, ws, t, losses + (t - t0) * stride);
        acc.expected.add(r.expected);
        acc.realized.add(r.realized);
        if (acc.first_nonfinite_round == 0 && !(std::isfinite(r.expected) && std::isfinite(r.realized)))
            acc.first_nonfinite_round = t;
        while (acc.next_checkpoint < ncheck && checkpoints[acc.next_checkpoint] == t) {
            if (team.rank() == 0) {
                out_expected[acc.next_checkpoint] = acc.expected.value();
                out_realized[acc.next_checkpoint] = acc.realized.value();
            }
            ++acc.next_checkpoint;
        }
    }
}

} // namespace dpr::sim
