#pragma once
// `dpregret audit`: an empirical lower bound on the eps of a whole online learner (docs/AUDITS.md).
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
// instance_loop.hpp) with round t0's charge left out of every sum (EngineShape::uncharged); the audit places
// checkpoints at the ends of the runs of R and differences them. Every recorded sum is then the same floating-point
// function of the plays on both sides, so S is too, bit for bit (docs/AUDITS.md "An exact statistic"); the round
// loop carries no observer, and a run that is not an audit does exactly what it did before.
//
// The events are thresholds in both directions and both orientations of the pair, chosen on a selection share of
// each side's trials (ids first on each side, stored and sorted) and counted, streaming, on the rest (the evaluation
// trials are binned against the chosen threshold and the privacy region's thresholds, never stored), with
// Clopper-Pearson limits at confidence 1 - alpha and an (eps, delta) or a Gaussian-DP bound
// (host/audit/epsilon_bound.hpp). Memory: the selection share, O(candidates) counts and one executor batch.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/audit/curve.hpp"
#include "host/audit/epsilon_bound.hpp"
#include "host/audit/neighbour.hpp"
#include "host/audit/tradeoff.hpp"
#include "host/config/config.hpp"
#include "host/engine/point_runner.hpp"
#include "host/engine/registry.hpp"

namespace dpr::audit {

/// The [audit] section's keys (docs/AUDITS.md, `dpregret audit --list-keys`).
const std::vector<KeySpec>& audit_keys();
config::SectionSchema audit_section();

/// The values an audit's evaluation shares are binned against: the threshold of a threshold event and the privacy
/// region's thresholds, kRegionRows pooled quantiles of the two sorted selection shares (sorted0, sorted1).
struct RegionPlan {
    static constexpr int kRegionRows = 200;
    std::vector<double> edges;      ///< sorted, distinct: the EdgeHistogram's edges
    std::vector<double> thresholds; ///< the region's rows, in quantile order (repeats skipped by region_rows)
};
/// `more`: further thresholds the histograms must count exactly (the (eps, delta) curve's, CurveTally::thresholds).
RegionPlan region_plan(const AuditEvent& event, const std::vector<double>& sorted0, const std::vector<double>& sorted1,
                       const std::vector<double>& more = {});
/// The region's rows from the histograms of all of each side's values (n0 and n1 of them).
std::vector<RegionRow> region_rows(const RegionPlan& plan, const EdgeHistogram& all0, const EdgeHistogram& all1,
                                   std::uint64_t n0, std::uint64_t n1);

struct AuditSettings {
    NeighbourSpec neighbour;
    bool round_given = false;
    std::string neighbour_path;          ///< neighbour = "file"
    std::vector<std::uint64_t> rounds;   ///< R, ascending, without t0
    bool realized = false;               ///< statistic = "realized"
    /// statistic = "switches" / "last_switch_round": that diagnostic of a phase learner after the last round run
    /// (a function of its switch times); empty for the charged-loss statistics.
    std::string diagnostic;
    /// weights = "fitted" (fitted_statistic.hpp): w . c over R, w Fisher's direction from the selection shares;
    /// fitted_rounds = |R| (the vector's length), at most kMaxFittedRounds.
    bool fitted = false;
    std::uint64_t fitted_rounds = 0;
    double alpha = 0.05;
    int candidates = 256;
    double selection = 0.2;              ///< share of each side's trials that chooses the event
    BoundKind bound = BoundKind::EpsDelta; ///< resolved from [audit] bound (auto: gdp when the learner claims mu)
    std::string bound_requested = "auto";
    learners::Planted planted = learners::Planted::None;
    std::string planted_name = "none";
    std::uint64_t batch = 65536;         ///< instances per executor call (memory only; results do not depend on it)
};

struct AuditJob {
    const config::Config* cfg = nullptr; ///< one point (no sweep)
    LearnerRuntime learner;              ///< its resolved learner and adversary (api::resolve_points)
    AdversaryRuntime adversary;
    Backend backend = Backend::Cpu;
    unsigned threads = 1;
    bool allow_planted = false;
    bool keep_statistic = false;         ///< keep every trial's statistic (--save-statistic): 2 x trials doubles
    /// Tests of the statistic's exactness only: the neighbour side reuses the base side's ids (the same randomness),
    /// so that trials whose plays do not depend on l_{t0} must give bit-identical statistics. The sides are then not
    /// independent and the bound means nothing; no front end sets it.
    bool common_ids = false;
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
    std::uint64_t selection_trials = 0; ///< per side: ids [0, selection_trials) of each side choose the event
    /// The statistic of every trial in instance order; only with AuditJob::keep_statistic.
    std::vector<double> base, neighbour;
    AuditBound bound;
    AuditCurve curve;                   ///< the (eps, delta) curve (curve.hpp), its own verdict
    FdpTest fdp;                        ///< the test against the claimed trade-off curve (tradeoff.hpp), its own verdict
    std::vector<RegionRow> region;      ///< the empirical privacy region (privacy_region.csv)
    std::vector<double> weights;        ///< weights = "fitted": w, one per round of R in order (empty otherwise)
    std::string backend, policy;
    double simulate_seconds = 0.0;
    bool completed = false;
};

/// Validates [audit] against the config's single point and the learner's claim (std::invalid_argument naming the
/// key and its range), before anything is simulated: also [run] instances (enough trials for both shares) and an
/// alpha whose limits can be computed.
AuditSettings read_audit_settings(const config::Config& cfg, const AdversaryRuntime& base, const LearnerRuntime& learner);

/// Bytes the audit allocates besides one executor batch: the selection shares (2 x ceil(selection x trials)
/// doubles) and, with keep_statistic, every trial's statistic (2 x trials doubles).
std::uint64_t audit_extra_bytes(const AuditSettings& s, std::uint64_t trials, bool keep_statistic);

/// Runs both sides and the bound. Throws std::invalid_argument for bad input, std::runtime_error for a
/// non-finite statistic. completed = false when interrupted.
AuditOutcome run_learner_audit(const AuditJob& job);

/// "consistent" (eps-delta: eps_lb <= claimed eps; gdp: mu_lb <= claimed mu) or "VIOLATION".
const char* verdict(const AuditOutcome& o);

} // namespace dpr::audit
