#pragma once
// `dpregret audit`: an empirical lower bound on the eps of a whole online learner (issue 10; docs/AUDITS.md).
//
// The config's learner runs on two neighbouring loss sequences (host/audit/neighbour.hpp): M instances on the
// base sequence D (instance ids 0 .. M-1) and M on its neighbour D' (ids M .. 2M-1), so every trial has its own
// seeded randomness and the two sides are independent. What is observed is a post-processing of the learner's
// released outputs that is the same function on both sides: the sum over a set R of rounds, t0 not in R, of
// the charged loss <l_t, x_t> (statistic = "expected": a function of the play x_t) or l_t(i_t) ("realized": of
// the sampled action i_t), or, for AFKT23's phase learners, their number of switches or the round of the last
// switch after round max R (functions of the switch times they release). l_t is common to both sides for t != t0, so any event on this statistic has
// probability p under D and p' under D' with p <= e^eps p' + delta if the learner is (eps, delta)-DP in its
// plays. The engine records the learners' cumulative charged losses at checkpoints (kernels/sim/
// instance_loop.hpp); the audit places checkpoints at r - 1 and r for r in R and differences them, so the round
// loop carries no observer at all: a run that is not an audit does exactly what it did before.
//
// The events are thresholds in both directions and both orientations of the pair, chosen on the first half of
// each side's trials and counted on the second (threshold_audit, host/audit/epsilon_bound.hpp), with
// Clopper-Pearson bounds at confidence 1 - alpha.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/audit/epsilon_bound.hpp"
#include "host/audit/neighbour.hpp"
#include "host/config/config.hpp"
#include "host/engine/point_runner.hpp"
#include "host/engine/registry.hpp"

namespace dpr::audit {

/// The [audit] section's keys (docs/AUDITS.md, `dpregret audit --list-keys`).
const std::vector<KeySpec>& audit_keys();
config::SectionSchema audit_section();

struct AuditSettings {
    NeighbourSpec neighbour;
    bool round_given = false;
    std::string neighbour_path;          ///< neighbour = "file"
    std::vector<std::uint64_t> rounds;   ///< R, ascending, without t0
    bool realized = false;               ///< statistic = "realized"
    /// statistic = "switches" / "last_switch_round": that diagnostic of a phase learner after the last round run
    /// (a function of its switch times); empty for the charged-loss statistics.
    std::string diagnostic;
    double alpha = 0.05;
    int candidates = 64;
    learners::Planted planted = learners::Planted::None;
    std::string planted_name = "none";
    std::uint64_t batch = 65536;         ///< instances per executor call (memory only; results do not depend on it)
};

struct AuditJob {
    const config::Config* cfg = nullptr; ///< one point (no sweep)
    LearnerRuntime learner;              ///< its resolved learner and adversary (cli::resolve_points)
    AdversaryRuntime adversary;
    Backend backend = Backend::Cpu;
    unsigned threads = 1;
    bool allow_planted = false;
    std::function<void(std::uint64_t instance_rounds)> on_progress;
    std::function<bool()> interrupted;
};

struct AuditOutcome {
    LearnerRuntime learner;     ///< privacy: the claim (of the correct learner, also when a bug is planted)
    AdversaryRuntime adversary;
    AuditSettings settings;
    std::uint64_t trials = 0;   ///< per side (= [run] instances)
    std::uint64_t rounds_run = 0; ///< max R: rounds each trial runs
    double l1 = 0, l2 = 0;      ///< ||l_{t0} - l'_{t0}||_1, _2
    std::vector<double> base, neighbour; ///< the statistic of every trial, in instance order
    AuditBound bound;
    std::string backend, policy;
    double simulate_seconds = 0.0;
    bool completed = false;
};

/// Validates [audit] against the config's single point (std::invalid_argument naming the key and its range).
AuditSettings read_audit_settings(const config::Config& cfg, const AdversaryRuntime& base);

/// Runs both sides and the bound. Throws std::invalid_argument for bad input, std::runtime_error for a
/// non-finite statistic. completed = false when interrupted.
AuditOutcome run_learner_audit(const AuditJob& job);

/// "consistent" (eps_lb <= claimed eps) or "VIOLATION".
const char* verdict(const AuditOutcome& o);

/// The empirical privacy region: for `n` thresholds (quantiles of the pooled trials), the fraction of each
/// side's trials at or above and at or below it (all trials; descriptive).
struct RegionRow {
    double threshold, base_ge, neighbour_ge, base_le, neighbour_le;
};
std::vector<RegionRow> privacy_region(const std::vector<double>& base, const std::vector<double>& neighbour, int n);

} // namespace dpr::audit
