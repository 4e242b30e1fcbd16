#pragma once
// `dpregret audit FILE --one-run`: an eps lower bound from one long sequence per trial with m canary rounds in it
// (docs/AUDITS.md "One-run audits"; Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run",
// NeurIPS 2023, Theorems 1 and 3).
//
// Each trial runs the config's learner once, on the base sequence D of the config's adversary in which m rounds
// t_i = i s (i = 1 .. m, s = floor(T / (m + 1))) are canaries: canary i keeps the base loss l_{t_i} or takes the
// neighbour rule's l'_{t_i} ([audit] neighbour, as for a two-sample audit), by a fair coin S_i of its own
// (the trial's adversary stream; docs/RANDOMNESS.md). Changing one S_i changes one round: a replace-one neighbour,
// so an (eps, delta)-DP learner is (eps, delta)-DP in each S_i. Trials are independent runs, so the trials of a share
// together are one mechanism whose canaries are all of theirs, each in one trial (parallel composition).
//
// What is observed is a post-processing of the plays only: per canary the 2 w charges around it,
//     c_{t_i - w} .. c_{t_i - 1},  c_{t_i + 1} .. c_{t_i + w},
// c_t the charged loss of round t ([audit] statistic: <l_t, x_t> or l_t(i_t)), w <= s - 1 the window, so that no
// window holds a canary round (whose charge depends on S_i through l_{t_i}). The score is their weighted sum: Fisher's
// direction fitted on the selection share's canaries (the default), or the after window's sum minus the before's. The auditor guesses S_i for the
// canaries with the highest and the lowest scores and abstains on the rest; the rule (which end is guessed "base",
// and how many of each end, as fractions of the canaries) is chosen on the selection share of the trials, whose
// coins it reads, and applied to the evaluation share, whose coins it never reads before counting.
//
// The bound (SNJ23 Theorem 3; Theorem 1 when delta = 0): with r guesses among m_e canaries, of which v are correct,
//     p(eps) = P[Bin(r, q) >= v] + 2 m_e delta max_{1 <= i <= v} P[v - i <= Bin(r, q) < v] / i,   q = e^eps / (1 + e^eps),
// is a p-value of "the learner is (eps, delta)-DP"; eps_lb is the largest eps with p(eps) < alpha. VIOLATION when
// eps_lb exceeds the claimed eps (at the claimed delta). The guesses are a fixed number r of the evaluation canaries
// (the rule's fractions of m_e), as the theorem asks.
//
// Its reach: a canary whose effect on the plays is spread over many released quantities that other canaries also
// move (a tree's nodes over h' levels) shows only a part of its eps in any score (Keinan, Shenfeld & Ligett, "How well can
// differential privacy be audited in one run?", NeurIPS 2025); docs/AUDITS.md gives the figures.
#include <cstdint>
#include <string>
#include <vector>

#include "host/audit/learner_audit.hpp"
#include "host/audit/neighbour.hpp"

namespace dpr::audit {

/// SNJ23's p-value (above) for v correct of r guesses among m canaries, under an (eps, delta) claim.
double one_run_p_value(std::uint64_t m, std::uint64_t r, std::uint64_t v, double eps, double delta);
/// The largest eps with one_run_p_value < alpha (bisection to 1e-9 relative; at most 64): 0 when even eps = 0 is not
/// rejected.
double one_run_epsilon_lb(std::uint64_t m, std::uint64_t r, std::uint64_t v, double delta, double alpha);

/// What a one-run audit is asked for: m canaries per trial, the window w on each side (0: the default), and how a
/// canary is scored from the 2 w charges around it: fitted (w . c, Fisher's direction fitted on the selection
/// share's canaries, host/audit/fitted_statistic.hpp) or difference (the after window's sum minus the before window's).
struct OneRunRequest {
    std::uint64_t canaries = 1000;
    std::uint64_t window = 0;
    bool fitted = true;
};

/// Where the canaries of a trial are.
struct CanaryPlan {
    std::uint64_t canaries = 0;   ///< m per trial
    std::uint64_t spacing = 0;    ///< s: canary i (0-based) is round (i + 1) s
    std::uint64_t window = 0;     ///< w in [1, s - 1] (fitted: at most kMaxFittedWindow)
    std::uint64_t rounds_run = 0; ///< m s + w: the last canary's window ends there
    bool fitted = true;
    std::uint64_t round(std::uint64_t i) const { return (i + 1) * spacing; }
};
/// The widest window a fitted score weighs (2 w charges, one weight each), and its default.
inline constexpr std::uint64_t kMaxFittedWindow = 32;
inline constexpr std::uint64_t kDefaultFittedWindow = 8;
/// The canaries in T rounds (T >= 2 m + 2, so that s >= 2) with window w (0: the widest, s - 1, for the difference;
/// min(s - 1, kDefaultFittedWindow) for the fitted score). Throws std::invalid_argument naming --canaries, --window
/// or [run] rounds and the valid range.
CanaryPlan canary_plan(std::uint64_t T, const OneRunRequest& request);

/// The adversary sub of the canaries' coins (beside kernels/adversaries/common.hpp's AdversarySub values).
inline constexpr std::uint32_t kCanarySub = 7;
/// S_i of trial `instance` (its counter word): true = canary i keeps the base loss. The top bit of the first word of
/// the adversary stream (seed, stream, instance; sub kCanarySub, round i + 1, element 0).
bool canary_keeps_base(std::uint32_t seed, std::uint32_t stream, std::uint32_t instance, std::uint64_t i);

/// The base adversary (its shared sequence) with each trial's canaries applied: an AdversaryRuntime for per-instance
/// runs (the runtime points back at this object, which therefore never moves).
class CanaryAdversary {
  public:
    /// Throws std::invalid_argument as NeighbourAdversary does when the rule does not apply to the base's loss set.
    CanaryAdversary(const AdversaryRuntime& base, std::uint32_t d, const NeighbourSpec& rule, const CanaryPlan& plan);
    CanaryAdversary(const CanaryAdversary&) = delete;
    CanaryAdversary& operator=(const CanaryAdversary&) = delete;

    const AdversaryRuntime& runtime() const { return rt_; }
    /// Round t of trial ctx.sequence: the base row, with the rule applied when t is a canary whose coin says so.
    void fill(const adversaries::SequenceCtx& ctx, std::uint64_t t, double* out) const;
    /// The largest ||l_{t_i} - l'_{t_i}||_1 and _2 over the canaries (the base's shared sequence).
    void distance(std::uint32_t seed, std::uint32_t stream, double* l1, double* l2) const;

  private:
    AdversaryRuntime base_, rt_;
    NeighbourAdversary rule_;
    CanaryPlan plan_;
};

/// Which canaries are guessed: the `top` share of all evaluation canaries with the highest scores is guessed
/// `top_base ? base : neighbour`, the `bottom` share with the lowest the other way; the rest abstain.
struct GuessRule {
    bool top_base = true;
    double top = 0.0, bottom = 0.0;
    std::string describe() const;
};

struct OneRunOutcome {
    LearnerRuntime learner;     ///< privacy: the claim (of the correct learner, also when a bug is planted)
    AdversaryRuntime adversary;
    AuditSettings settings;
    CanaryPlan plan;
    std::uint64_t trials = 0;            ///< [run] instances: one run each
    std::uint64_t selection_trials = 0;  ///< ids [0, selection_trials) choose the rule
    std::uint64_t evaluation_canaries = 0; ///< m_e = (trials - selection_trials) m
    double l1 = 0, l2 = 0;               ///< the largest canary distances
    std::vector<double> weights;         ///< fitted: the direction over c_{t_i - w} .. c_{t_i - 1}, c_{t_i + 1} .. c_{t_i + w}
    GuessRule rule;
    double selection_epsilon_lb = 0.0;   ///< the rule's bound on the selection share (how it was chosen)
    std::uint64_t selection_guesses = 0, selection_correct = 0;
    std::uint64_t guesses = 0, correct = 0; ///< r and v on the evaluation share
    double epsilon_lb = 0.0;
    double p_value_at_claim = 1.0;       ///< p(claimed eps): below alpha when the verdict is VIOLATION (up to the
                                         ///< bisection's 1e-9)
    std::string backend, policy;
    double simulate_seconds = 0.0;
    bool completed = false;
};

/// Bytes a one-run audit keeps besides the learners' states: every canary's score, coin and rank (21 bytes each).
std::uint64_t one_run_extra_bytes(std::uint64_t trials, std::uint64_t canaries);
/// The checkpoints a one-run audit records per trial (the difference: four per canary, shared where windows meet;
/// fitted: every round of every window and the round before it) and the trials per executor call: [audit] batch, at
/// most 2^22 / checkpoints (about 11 sums of 8 bytes per trial and checkpoint).
std::vector<std::uint64_t> one_run_checkpoints(const CanaryPlan& plan);
std::uint64_t one_run_batch(const CanaryPlan& plan, std::uint64_t batch_key, std::uint64_t trials);

/// Everything a one-run audit checks before it simulates (std::invalid_argument naming the key or option and its
/// range): the [audit] keys (below), the canaries in [run] rounds, the rule against the loss set, canaries the rule
/// moves, a planted bug the learner has (and --allow-planted). Returns where the canaries are.
CanaryPlan check_one_run(const AuditJob& job, const OneRunRequest& request);

/// Runs the trials and the bound. job.cfg's [audit] section is read as for a two-sample audit; keys that only a
/// two-sample audit reads are refused where they would change what it means (round, rounds, weights = "fitted",
/// statistic = "switches" / "last_switch_round", bound = "gdp", neighbour = "file") and ignored where they tune what a
/// one-run audit does not do (candidates); std::invalid_argument names the key. completed = false when interrupted.
OneRunOutcome run_one_run_audit(const AuditJob& job, const OneRunRequest& request);

/// "VIOLATION" when epsilon_lb exceeds the claimed eps, else "consistent".
const char* verdict(const OneRunOutcome& o);

} // namespace dpr::audit
