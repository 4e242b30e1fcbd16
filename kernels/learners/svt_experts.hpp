#pragma once
// svt-experts: AFKT23 Algorithm 1, sparse vector + exponential mechanism for (near-)zero-loss experts
// (Theorem 1; docs/spec/afkt23.md §C1), in the flat per-round form of the spec:
//
//   x <- Unif([d]); k <- 0; t_p <- 1; svt <- AboveThreshold(eps/2, Lthr)          (started at round 1)
//   round t:  if the sparse vector fired at round t-1:
//                 x ~ Pr[y] ∝ exp(-eta max(L_{t-1}(y), L*) / 2)        exponential mechanism, eta-DP (§1.7)
//                 k <- k + 1; t_p <- t; restart the sparse vector at round t if k < K, else freeze it forever
//                 (no query in the first round of a phase)
//             elif the sparse vector is live:
//                 q_t = sum_{i=t_p}^{t-1} l_i(x)  (the current expert's loss in this phase; 0 at t = 1)
//                 fire <- q_t + Lap(8/eps) > rho_hat       (AboveThreshold at eps/2 over 1-sensitive queries)
//             play x, pay l_t(x)
//
// Parameters (C1; every one a key, defaults from the spec):
//   K    = ceil(6 ceil(log2 d) + 24 ln(1/beta))    switching budget (Lemma A.2: reached w.p. <= beta)
//   B    = ln(2 T^2 / beta)
//   eta  = eps / (2K)                               pure (variant = "pure")
//        = eps / sqrt(32 K ln(1/delta))             approximate (variant = "approx", advanced composition)
//   Lthr = L* + 4/eta + 8B/eps     threshold = "paper" (as printed)
//        = L* + 4/eta + 16B/eps    threshold = "strict": an eps/2 sparse vector has accuracy 16B/eps
//                                  (Lemma 2.3 at eps/2), which the proof of Thm 1 needs (docs/spec/checks.md
//                                  §4.13)
// Privacy (C1): each loss enters the queries of exactly one sparse-vector instance (a phase only sums its own
// rounds), so all instances together are eps/2-DP (§1.3 "parallel" use); at most K exponential mechanisms,
// each eta-DP. Reported: eps/2 + K eta (basic composition; = eps for the pure defaults) or, for "approx",
// the smaller of that and eps/2 + sqrt(2K ln(1/delta)) eta + K eta (e^eta - 1) with delta (Lemma 2.2).
//
// The comparison is q + nu > rho_hat (strict): the same law as >= for eps < inf (continuous noise), and the
// eps = inf limit (no noise, eta = inf, Lthr = L*) is then exactly "follow a random consistent expert"
// (docs/spec/afkt23.md §C8): stay on x until its loss in the phase exceeds L*, then move to a uniformly
// random expert among the minimisers of max(L_{t-1}, L*) (kernels/learners/consistent_expert.hpp registers it
// with K = inf).
//
// Randomness (docs/RANDOMNESS.md): every draw is addressed by the round at which it is made, so phases and
// restarts never alias: the initial expert is the exponential mechanism of round 0 (all scores equal:
// uniform), a switch at round t uses the uniform of (Purpose::Exponential, sub 0, round t, element 0)
// (inverse CDF, kernels/mechanisms/exponential.hpp), the sparse vector started at round t its threshold draw
// (SparseVector, kSvtThreshold, round t, element 0) and the query of round t (SparseVector, kSvtQuery,
// round t, element 0) (kernels/mechanisms/above_threshold.hpp).
//
// State per instance: the scalars below, O(1) for any d. The exponential mechanism scores L_{t-1}, which the
// learner reads from the engine (kReadsCumulative, team.cum_exact: computed once per point for a shared
// oblivious sequence, kernels/learners/common.hpp) instead of keeping d cumulative losses per instance. A
// round is O(1); a switch round adds the mechanism's O(d) passes (a min, then two of one exp each).
//
// Exact samplers (noise = "discrete-laplace", the default in float precision where it applies; docs/spec/model.md
// §1.9, §1.10): the sparse vector on a lattice Gamma Z (kernels/mechanisms/lattice_above_threshold.hpp) and the
// exact exponential mechanism (kernels/mechanisms/exact_exponential.hpp), so that the report holds for the code as it
// runs, in float as in double. Round t's loss of the played expert enters the phase accumulator rounded at random
// onto Gamma Z (noise::lattice_round, the word of (Lattice, sub 1, round t - 1, element 0)): the queries are exact
// sums of lattice points and move by at most K = ceil(1/Gamma) steps between neighbours, the rounding word being the
// same on both sides. The exponential mechanism scores max(L_{t-1}, L*) in double (the engine's L_{t-1}, within
// T^2 2^-53 of the exact sum), at eta/2 lowered by at most 0.1% so that each draw is at most eta-DP. Both samplers
// give the same bits in float and double runs. On a shared sequence the CPU executor prepares the round's exact table
// once (mech::exact_exp_table: the weights and the exact running sums of every 64th candidate) and each switching
// instance draws from it in O(log d + 64); elsewhere (an own sequence, the GPU) the draw is a scalar loop per
// instance, O(d) per switch with a product of up to ~30 multiplies per candidate. Both give the same index.
//
// Diagnostics (C1 "Record"): switches (exponential-mechanism calls after the initial draw), budget_exhausted
// (1 if k reached K: the sparse vector froze), last_switch_round (0 if none), svt_fires (TOP answers; one
// more than switches when the sparse vector fires at round T).

#include "kernels/learners/common.hpp"
#include "kernels/learners/svt_phase.hpp"
#include "kernels/mechanisms/above_threshold.hpp"
#include "kernels/mechanisms/exact_exponential.hpp"
#include "kernels/mechanisms/exponential.hpp"
#include "kernels/mechanisms/lattice_above_threshold.hpp"

namespace dpr::learners {

struct SvtExperts : Learner<Geometry::Simplex>, PureOrApprox {
    static constexpr const char* kName = "svt-experts";
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, "",
         "privacy parameter eps > 0 of the whole play sequence; inf = no noise: follow a random "
         "consistent expert (C8) with at most K switches",
         true},
        {"variant", KeyType::Choice, "pure", 0.0, 0.0, "pure|approx",
         "pure: eta = eps/(2K), eps-DP (Thm 1); approx: eta = eps/sqrt(32 K ln(1/delta)), (eps, delta)-DP by "
         "advanced composition (AFKT23 Thm 1; docs/spec/afkt23.md §C1)"},
        {"delta", KeyType::Real, "1e-6", 0.0, 1.0, "",
         "delta of variant = approx (advanced composition, Lemma 2.2)", true, true},
        {"beta", KeyType::Real, "0.05", 0.0, 1.0, "",
         "failure probability of Thm 1: K = ceil(6 ceil(log2 d) + 24 ln(1/beta)), B = ln(2 T^2/beta)", true,
         true},
        {"lstar", KeyType::Real, "0", 0.0, 4294967296.0, "",
         "L*, the assumed bound on the best expert's total loss (0: realizable); scores are max(L_{t-1}, "
         "L*)"},
        {"threshold", KeyType::Choice, "paper", 0.0, 0.0, "paper|strict",
         "Lthr = L* + 4/eta + 8B/eps (paper, as printed) or + 16B/eps (strict: the accuracy of an eps/2 "
         "sparse vector, docs/spec/checks.md §4.13)"},
        {"switch_budget", KeyType::Real, "auto", 1.0, kInf, "",
         "K, the most exponential-mechanism switches (then the expert is frozen); auto = ceil(6 ceil(log2 "
         "d) + 24 ln(1/beta)); the privacy report composes K mechanisms"},
        {"eta", KeyType::Real, "auto", 0.0, kInf, "",
         "sampling parameter of the exponential mechanism Pr[y] ∝ exp(-eta s(y)/2); auto by variant (see "
         "above); the report uses the value given",
         true},
        kExactSamplersKey,
    };
    static constexpr int kBeta = key_index(kKeys, "beta");
    static constexpr int kLstar = key_index(kKeys, "lstar");
    static constexpr int kThreshold = key_index(kKeys, "threshold");
    static constexpr int kSwitchBudget = key_index(kKeys, "switch_budget");
    static constexpr int kEtaKey = key_index(kKeys, "eta");
    static constexpr int kNoise = key_index(kKeys, "noise");
    static constexpr bool kInstanceLanes = true;
    static constexpr bool kReadsCumulative = true;

    struct Params : PureOrApprox::Params {
        double beta;
        double Lstar;
        bool strict;
        double K;    ///< switching budget (inf allowed)
        double B;    ///< ln(2 T^2 / beta)
        double eta;  ///< exponential mechanism: Pr ∝ exp(-eta s / 2)
        double Lthr; ///< sparse-vector threshold tau
        mech::SvtScales svt; ///< eps/2 sparse vector over 1-sensitive queries
        bool lattice;        ///< exact samplers (noise = "discrete-laplace"; see the header)
        mech::LatticeSvt lsvt;     ///< the lattice sparse vector (lattice only)
        mech::ExactExpPlan xexp;   ///< the exact exponential mechanism (lattice only)
    };

    static constexpr std::array<const char*, 4> kDiagnostics = {"switches", "budget_exhausted", "last_switch_round",
                                                                "svt_fires"};

    /// K = ceil(6 ceil(log2 d) + 24 ln(1/beta)) (C1; Lemma A.2).
    static double default_budget(std::uint32_t d, double beta) {
        return std::ceil(6.0 * ceil_log2(d) + 24.0 * std::log(1.0 / beta));
    }
    static double default_eta(double eps, bool approx, double K, double delta) {
        if (std::isinf(eps) || std::isinf(K)) return std::isinf(eps) ? kInf : 0.0;
        return approx ? eps / std::sqrt(32.0 * K * std::log(1.0 / delta)) : eps / (2.0 * K);
    }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        resolve_privacy<SvtExperts>(kv, pb, p);
        p.beta = kv.get(kBeta, 0.05);
        p.Lstar = kv.get(kLstar, 0.0);
        p.strict = kv.get(kThreshold, 0.0) == 1.0;
        p.K = kv.get(kSwitchBudget, default_budget(pb.d, p.beta));
        p.B = std::log(2.0 * static_cast<double>(pb.T) * static_cast<double>(pb.T) / p.beta);
        p.eta = kv.get(kEtaKey, default_eta(p.epsilon, p.approx, p.K, p.delta));
        const double acc = (p.strict ? 16.0 : 8.0) * p.B / p.epsilon; // 0 at eps = inf
        p.Lthr = p.Lstar + 4.0 / p.eta + acc;
        p.svt = mech::svt_scales(p.epsilon / 2.0, 1.0);
        p.lattice = false;
        if (mech::lattice_wanted(lattice_asked(kv), kv.given[kNoise], pb.float_precision) && !exact_plans(p, pb).why) {
            p.lattice = true;
            p.svt.threshold = p.lsvt.threshold_scale; // the scales in use (the report's noise_scale)
            p.svt.query = 2.0 * p.lsvt.threshold_scale;
        }
        return p;
    }

    static bool lattice_asked(const KeyValues& kv) { return kv.given[kNoise] && static_cast<int>(kv.num[kNoise]) == 1; }
    /// The lattice sparse vector of the eps/2 instances: 1-sensitive queries that are exact sums of lattice points
    /// (err = 0), at most T per instance, below T + |Lthr| in absolute value.
    static mech::LatticeSvt exact_svt(const Params& p, const Problem& pb) {
        const double T = static_cast<double>(pb.T);
        return mech::lattice_svt(mech::svt_scales(p.epsilon / 2.0, 1.0), false, 1.0, 0.0, T, T + std::fabs(p.Lthr) + 1.0);
    }
    /// The exact exponential mechanism at eta/2 over d experts: 1-sensitive scores computed within T^2 2^-53 of the
    /// exact cumulative loss (losses in [0, 1], any summation order), each draw at most eta-DP.
    static mech::ExactExpPlan exact_exp(const Params& p, const Problem& pb) {
        const double T = static_cast<double>(pb.T);
        return mech::plan_exact_exp(p.eta / 2.0, 1.0, T * T * 0x1.0p-53 * 1.001, pb.d, p.eta);
    }
    /// Plans both exact samplers into p.lsvt and p.xexp and says why they do not apply (why = nullptr: they do).
    static ExactObstacle exact_plans(Params& p, const Problem& pb) {
        if (std::isinf(p.epsilon)) return {"the exact samplers", "need a finite epsilon (eps = inf has no noise)"};
        if (std::isinf(p.K)) return {"the exact samplers", "need a finite switch_budget"};
        if (!(p.eta > 0.0) || std::isinf(p.eta)) return {"the exact samplers", "need a positive, finite eta"};
        p.lsvt = exact_svt(p, pb);
        if (p.lsvt.obstacle) return {"the sparse vector on a lattice", p.lsvt.obstacle};
        p.xexp = exact_exp(p, pb);
        if (!p.xexp.ok) return {"the exact exponential mechanism", p.xexp.why};
        return {};
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (pb.d < 2) return diag.fail("d", "svt-experts needs d >= 2 experts (got %u): with one expert there is nothing to choose", pb.d);
        const double K = kv.get(kSwitchBudget, 0.0);
        if (kv.given[kSwitchBudget] && !std::isinf(K) && K != std::floor(K))
            return diag.fail("switch_budget", "switch_budget = %g must be a whole number of switches (or inf)", K);
        Params p = resolve(kv, pb);
        if (std::isinf(p.K) && !std::isinf(p.epsilon) && !kv.given[kEtaKey])
            return diag.fail("switch_budget",
                             "switch_budget = inf composes infinitely many exponential mechanisms: eps < inf needs a "
                             "finite K (or an explicit eta, whose privacy is then reported as unbounded)");
        if (lattice_asked(kv) && !p.lattice) return exact_obstacle_error(exact_plans(p, pb), diag);
        warn_ignored_delta(p, kv, diag);
        return true;
    }

    static PrivacyReport privacy(const Params& p) {
        PrivacyReport r;
        r.calibration = p.strict ? "strict" : "paper";
        if (std::isinf(p.epsilon) && std::isinf(p.eta)) {
            r.mechanism = "none (noise off: follow a random consistent expert)";
            return r;
        }
        if (p.lattice) return exact_privacy(p, r);
        const double svt = p.epsilon / 2.0; // all sparse-vector instances together (each loss in one phase)
        const double basic = p.K * p.eta;  // K exponential mechanisms, eta-DP each
        r.epsilon = svt + basic;
        r.delta = 0.0;
        r.accountant = "basic composition: eps/2 (sparse vector, parallel over phases) + K eta (exponential mechanisms)";
        if (p.approx) {
            const double adv = advanced_composition(p.K, p.eta, p.delta);
            if (adv < basic) {
                r.epsilon = svt + adv;
                r.delta = p.delta;
                r.accountant = "eps/2 (sparse vector) + advanced composition of K eta-DP exponential mechanisms (AFKT23 Lemma 2.2)";
            }
        }
        r.mechanism = "AboveThreshold (Lap(4/eps) threshold, Lap(8/eps) queries) + exponential mechanism (eta/2-scaled scores)";
        r.noise_scale = p.svt.query;
        return r;
    }

    /// The report of the exact samplers (model.md §1.9, §1.10): the lattice sparse vectors together (each loss enters
    /// the queries of one phase) and K exact exponential mechanisms, by basic composition (or, for variant = "approx",
    /// advanced composition of their per-draw epsilon where smaller); the deltas of the truncated samplers add.
    static PrivacyReport exact_privacy(const Params& p, PrivacyReport& r) {
        const double e = p.xexp.epsilon;
        const double basic = p.K * e;
        r.epsilon = p.lsvt.epsilon + basic;
        r.delta = (p.K + 1.0) * p.lsvt.delta + p.K * p.xexp.delta;
        r.accountant = "lattice: AboveThreshold on a lattice (eps/2, parallel over phases) + K exact exponential "
                       "mechanisms (basic composition)";
        if (p.approx) {
            const double adv = advanced_composition(p.K, e, p.delta);
            if (adv < basic) {
                r.epsilon = p.lsvt.epsilon + adv;
                r.delta += p.delta;
                r.accountant = "lattice: AboveThreshold on a lattice (eps/2) + advanced composition of K exact "
                               "exponential mechanisms (AFKT23 Lemma 2.2)";
            }
        }
        r.mechanism = "AboveThreshold on a lattice (discrete Laplace threshold and queries, exact comparisons) + exact "
                      "exponential mechanism (integer weights on a score grid)";
        r.noise_scale = p.svt.query;
        r.as_run = true;
        return r;
    }

    /// The planted bugs of the audit suite (common.hpp Planted; docs/AUDITS.md): the sparse vector's and the
    /// exponential mechanism's (continuous samplers only).
    static bool plant(Params& p, Planted bug) {
        if (std::isinf(p.epsilon) || p.lattice) return false;
        if (bug == Planted::NoThresholdNoise) p.svt.threshold = 0.0;
        else if (bug == Planted::TwiceTemperature) p.eta *= 2.0;
        else return false;
        return true;
    }

    /// Only the phase scalars (kernels/learners/svt_phase.hpp; acc = the current expert's phase loss): L_{t-1}
    /// comes from the engine (kReadsCumulative).
    DPR_HD static WorkspaceSpec workspace(const Params&) { return WorkspaceSpec{}.scalars(kPhaseSlots); }

    /// The exponential mechanism of round t over the scores max(L_{t-1}(y), L*), L_{t-1}(y) = cum(y).
    template <class Team, class Cum>
    DPR_HD static typename Team::template uni<std::uint32_t> draw_expert(const Params& p, const Team& team, std::uint64_t t,
                                                                         Cum&& cum) {
        using R = typename Team::real;
        using D = typename Team::template lanes<double>;
        mech::ExpMechDraw draw;
        draw.round = static_cast<std::uint32_t>(t);
        return mech::exponential_mechanism(team, p.d, p.eta / 2.0, draw,
                                           [&](auto i) { return convert<R>(vmax(cum(i), D(p.Lstar))); });
    }

    /// Round t's draw from L_{t-1} is the same law for every instance of a shared sequence: the CPU executor
    /// prepares its CDF (with the exact samplers, the exact mechanism's table: mech::exact_exp_table) once per round
    /// in which some instance switches (kSharedDraw, kernels/learners/common.hpp) and round() searches it instead of
    /// making the O(d) passes, with the same result bit for bit. Not for eta = 0 (every weight 1: nothing to share).
    static constexpr bool kSharedDraw = true;
    static bool shares_draw(const Params& p) { return p.eta > 0.0; }
    static const mech::ExactExpPlan* shared_exact_plan(const Params& p) { return p.lattice ? &p.xexp : nullptr; }
    /// Its only O(d) work is the draw: with the CDF, O(1) per instance in either precision.
    template <class R>
    static bool shared_round(const Params& p) {
        return shares_draw(p);
    }
    static double shared_coefficient(const Params& p) { return p.eta / 2.0; }
    /// The score of draw_expert, max(L_{t-1}(y), L*) rounded to the run's precision, as double lanes (R = double:
    /// the exact mechanism's score).
    template <class R, class V>
    static V shared_score(const Params& p, V cum) {
        return convert<double>(convert<R>(vmax(cum, V(p.Lstar))));
    }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using U = typename Team::template uni<double>;
        // Round 0: L_0 = 0, all scores equal: uniform on [d]. Every weight is exp(0) = 1, so the draw is the
        // exponential mechanism's c = 0 shortcut, the same index without the O(d) passes.
        mech::ExpMechDraw draw;
        draw.round = 0;
        const auto x0 = mech::uniform_candidate(team, p.d, draw);
        const U rho = threshold(p, team, 1);
        SvtPhase<Team>::start(team, ws, x0, rho, U(0.0));
        team.sync();
    }

    /// The noisy threshold of the sparse vector started at round t: continuous or on the lattice.
    template <class Team>
    DPR_HD static typename Team::template uni<double> threshold(const Params& p, const Team& team, std::uint64_t t) {
        using U = typename Team::template uni<double>;
        return p.lattice ? mech::lattice_svt_threshold(team, p.lsvt, U(p.Lthr), t, std::uint32_t{0})
                         : mech::svt_threshold(team, p.svt, U(p.Lthr), t, std::uint32_t{0});
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t t, const Row& row) {
        using U = typename Team::template uni<double>;
        auto s = SvtPhase<Team>::load(team, ws);
        if (any(s.pending)) {
            mech::ExpMechDraw draw;
            draw.round = static_cast<std::uint32_t>(t);
            using UI = typename Team::template uni<std::uint32_t>;
            const double* cdf = shared_cdf_of(row, t); // with the exact samplers, the exact mechanism's table
            s.switch_to(p.lattice ? (cdf ? s.exact_draw_from_table(team, p.xexp, p.d, t, cdf)
                                         : s.exact_draw(team, p.xexp, p.d, t,
                                                        [&](int l, std::uint32_t i) {
                                                            return shared_score<double>(p, lane_of(team.cum_exact_at(row, UI(i)), l));
                                                        }))
                        : cdf     ? mech::exp_mech_from_cdf(team, p.d, cdf, draw)
                                  : draw_expert(p, team, t, [&](auto i) { return team.cum_exact(row, i); }),
                        t, threshold(p, team, t), U(0.0));
        }
        // q_t: the phase loss of x up to t - 1 (with the exact samplers, of its losses rounded onto the lattice)
        const auto fire = p.lattice ? s.test_lattice(team, p.lsvt, p.K, t, s.acc) : s.test(team, p.svt, p.K, t, s.acc);
        const U loss = team.loss_exact_at(row, convert<std::uint32_t>(s.x));
        const U enters = p.lattice ? SvtPhase<Team>::lattice_loss(team, loss, p.lsvt.tab.gamma, t) : loss;
        team.sync(); // every member has read this round's scalars before rank 0 overwrites them
        if (team.rank() == 0) s.store(team, ws, fire, s.acc + enters);
        team.sync();
        return {loss, loss};
    }

    DPR_HD static void diagnostics(const Params& p, const double* s, double* out) {
        budget_diagnostics(s[kPhaseK], p.K, out);
        out[2] = s[kPhaseLast];
        out[3] = s[kPhaseFires];
    }
};

} // namespace dpr::learners
