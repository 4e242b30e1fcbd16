#pragma once
// The result of one point of a run: the one type that goes from the executor (run_point) through resume, shards
// and merge to the writers and to the library's caller (host/api/run.hpp RunResult::points). The executor fills the
// per-instance arrays and how it ran; the plan fills what the point is; finish_point (host/results/outputs.hpp)
// checks every value and condenses the arrays into `summary`.
#include <cstdint>
#include <string>
#include <vector>

#include "host/config/config.hpp"
#include "host/stats/summary.hpp"
#include "kernels/learners/common.hpp"

namespace dpr {

/// One row of summary.csv: a checkpoint t and the distribution of the regret there over the point's instances.
struct CheckpointRow {
    std::uint64_t t = 0;
    stats::Summary regret;    ///< over instances
    stats::Moments realized;  ///< realised regret, in instance order
    double comparator = 0.0;  ///< shared value, or the mean over instances with per-instance sequences
};

struct PointResult {
    // ---- what the point is: set by the plan (empty in the result of run_point alone) ----
    config::Point point;                    ///< its resolved settings, swept values, problem (d, T, seed, stream)
    std::string learner, adversary;
    learners::PrivacyReport privacy;        ///< the (eps, delta) the learner provides
    std::vector<std::string> diagnostic_names;
    std::uint64_t first_instance = 0;       ///< global id of row 0

    // ---- what the executor returns ----
    std::vector<std::uint64_t> checkpoints;
    std::uint64_t instances = 0;         ///< one process runs at most 2^32 - 1; a merged point may hold more
    std::vector<double> regret;          ///< instances x checkpoints: cumulative <l_t,x_t> - comparator
    std::vector<double> realized_regret; ///< instances x checkpoints: cumulative l_t(i_t) - comparator
    std::vector<double> comparator;      ///< checkpoints (shared) or instances x checkpoints
    /// With PointJob::keep_charged, instances x checkpoints: sum_{s<=t} <l_s, x_s> and sum_{s<=t} l_s(i_s) exactly
    /// as the executor accumulated them (empty otherwise).
    std::vector<double> charged, charged_realized;
    std::vector<double> diagnostics;     ///< instances x diagnostic_names.size()
    /// Per instance: the first round whose charged loss was not finite (0 = none).
    std::vector<std::uint64_t> first_nonfinite_round;
    std::string backend;                 ///< "cpu" or "cuda"
    std::string launch_policy;           ///< how the backend ran it (run.json "launch_policy")
    double wall_seconds = 0.0;
    bool completed = false;              ///< false if interrupted

    // ---- condensed by finish_point ----
    std::vector<CheckpointRow> summary;  ///< the point's rows of summary.csv
};

} // namespace dpr
