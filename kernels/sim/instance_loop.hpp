#pragma once
// The per-instance round loop (docs/ARCHITECTURE.md §3), shared by every executor: advance one learner instance (or the
// W instances of a SIMD group, or one instance shared by several team members) through rounds [t0, t1) of a
// loss chunk, accumulating its charged losses and recording them at the checkpoints that fall inside the
// chunk. Regret at a checkpoint is formed by the host as (cumulative charged loss) - (comparator), the
// comparator being shared by all instances of a point (or per instance when the adversary's sequence is).
// Written over the team's per-instance type U = Team::uni<double> (a double, or a pack of instances).
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/core/team.hpp"
#include "kernels/sim/uncharged.hpp"

namespace dpr::sim {

/// Neumaier-compensated running sum: T up to 2^32 rounds of O(1) losses without drift.
template <class U>
struct CompensatedSum {
    U sum = U(0.0), c = U(0.0);
    DPR_HD DPR_FORCEINLINE void add(U x) {
        const U t = sum + x;
        c = c + select(vabs(sum) >= vabs(x), (sum - t) + x, (x - t) + sum);
        sum = t;
    }
    DPR_HD DPR_FORCEINLINE U value() const { return sum + c; }
};

/// Everything an instance carries from one chunk to the next besides the learner workspace.
template <class U, class UI>
struct InstanceTotals {
    CompensatedSum<U> expected; ///< sum_t <l_t, x_t>
    CompensatedSum<U> realized; ///< sum_t l_t(i_t)
    std::uint32_t next_checkpoint = 0;
    /// The first round whose charged loss (expected or realised) was not finite; 0 while every one has
    /// been. The host refuses to write statistics of a point where any instance has one (docs/OUTPUTS.md).
    UI first_nonfinite_round = UI(std::uint64_t{0});
};

/// Runs rounds t0..t1-1 (1-indexed, t0 >= 1) of learner L. `row(t)` gives the team's loss row of round t;
/// at each checkpoint t (sorted ascending) `record(k, expected, realized)` receives the cumulative sums.
/// The rounds of `uncharged` (none by default) run as every other round but their charge is left out of both sums
/// (still checked for finiteness): an audit names the rounds whose loss differs between what it compares (the
/// neighbouring sequences' t0, a one-run audit's canaries), so that every recorded sum is the same floating-point
/// function of the plays (docs/AUDITS.md "An exact statistic").
template <class L, class Team, class WS, class Rows, class Record>
DPR_HD void advance(const typename L::Params& p, const Team& team, const WS& ws,
                    InstanceTotals<typename Team::template uni<double>, typename Team::template uni<std::uint64_t>>& acc,
                    std::uint64_t t0, std::uint64_t t1, Rows&& row, const std::uint64_t* checkpoints,
                    std::uint32_t ncheck, const UnchargedRounds& uncharged, Record&& record) {
    using U = typename Team::template uni<double>;
    using UI = typename Team::template uni<std::uint64_t>;
    for (std::uint64_t t = t0; t < t1; ++t) {
        const RoundCharge<U> r = L::round(p, team, ws, t, row(t));
        if (!uncharged.contains(t)) {
            acc.expected.add(r.expected);
            acc.realized.add(r.realized);
        }
        const auto bad = !(vfinite(r.expected) & vfinite(r.realized));
        acc.first_nonfinite_round =
            select(mask_for<std::uint64_t>(bad) & (acc.first_nonfinite_round == UI(std::uint64_t{0})), UI(t),
                   acc.first_nonfinite_round);
        while (acc.next_checkpoint < ncheck && checkpoints[acc.next_checkpoint] == t) {
            record(acc.next_checkpoint, acc.expected.value(), acc.realized.value());
            ++acc.next_checkpoint;
        }
    }
}

} // namespace dpr::sim
