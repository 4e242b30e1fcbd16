#pragma once
// adaptive-svt-experts: AFKT23 Algorithm 2 (Theorem 2; docs/spec/afkt23.md §C2), Algorithm 1 (svt_experts.hpp) run with
// an estimate Lbar* of L* that doubles when a private check says the best expert's loss has caught up with it:
//
//   R = ceil(log2 T) + 1 runs at most (Lbar* = 1, 2, 4, ... past T), eps_0 = eps / (2R), beta_0 = beta / T
//   K = ceil(6 ceil(log2 d) + 24 ln(1/beta_0)), eta = eps_0 / (2K), B = ln(2 T^2 / beta_0)
//   Lthr = Lbar* + 4/eta + 8B/eps_0 (threshold = "paper") or + 16B/eps_0 ("strict", §4 item 13)
//   run Algorithm 1 with (Lbar*, eta, Lthr, eps_0): scores max(L_{t-1}, Lbar*), an eps_0/2 sparse vector
//   at each switch to x_t (the exponential mechanism's pick):
//       Lbar_t = L_{t-1}(x_t) + Lap(K / eps_0)
//       if Lbar_t > Lbar* - 5 K ln(1/beta_0) / eps_0     (doubling_test = "printed", §4 item 14; "plus": +)
//           and fewer than R runs have started:
//           Lbar* <- 2 Lbar*; restart Algorithm 1: k = 0, x ~ Unif[d], a new sparse vector (time continues)
//           (restart_expert = "keep": x = the expert just picked instead of Unif[d]; an ablation, same privacy)
//
// "log T" of the spec is read as R = ceil(log2 T) + 1, the number of runs Lbar* can start from 1 before it
// passes T (a doubling beyond is never needed: L* <= T), and the run count is capped at R, so the privacy
// accounting below holds for every input, not only w.h.p.
// Privacy (C2): each run of Algorithm 1 is eps_0/2 (its sparse vectors, parallel over phases) + K eta = eps_0;
// each run makes at most K switches, hence at most K Laplace checks, each (eps_0/K)-DP: eps_0 per run. R runs:
// R (eps_0 + eps_0) = eps (basic composition).
//
// Randomness: as svt-experts (every draw addressed by the round at which it is made), plus the check of round
// t (SparseVector, kSvtCheck, round t, element 0) and the uniform restart expert of round t (Exponential, sub 1,
// round t: the exponential mechanism with equal scores). A restart's sparse vector takes the threshold draw of
// its round, like any phase.
//
// State: the phase scalars of svt_phase.hpp and 3 more per instance; L_{t-1} comes from the engine (kReadsCumulative).
// Diagnostics: switches (all runs), doublings (restarts), final_lbar (Lbar* at T), svt_fires.
//
// Exact samplers (noise = "discrete-laplace", the default in float precision where they apply; views that provide
// kNoiseKey >= 0: adaptive-svt-experts; docs/spec/model.md §1.9, §1.10, docs/spec/afkt23.md §C2): svt-experts'
// two (the sparse vector on a lattice over the phase losses rounded at random onto Gamma Z, the exact exponential
// mechanism at eta/2 over max(L_{t-1}, Lbar*) in double, fitted to at most eta per draw), and the check as an exact
// lattice release (model.md §1.8 "One release per switch"): Lbar_t = Gamma_c (k + n), k the computed L_{t-1}(x_t)
// rounded at random onto Gamma_c Z with word 0 of (Lattice, sub 2, round t, element 0), n ~ the discrete Laplace
// sampler's law from the 29 words of (SparseVector, kSvtCheck, round t, element 0), at the scale K/eps_0 (1 + 2 err)
// raised until its epsilon is at most eps_0/K; err = T^2 2^-53 bounds the computed L_{t-1}'s rounding, so the
// computed value is (1 + 2 err)-sensitive. Lbar_t and the comparison with the (double) bar are exact. Every part is
// at most its continuous counterpart, so the report, R (eps_L + K eps_draw + K eps_check), is at most eps; the
// deltas of the truncated samplers add.
//
// The experts are a view (the template parameter): RowExperts below, the coordinates of the loss row
// (adaptive-svt-experts), or the points of a rho-net of the ball whose losses are formed from the row
// (net-oco, kernels/learners/net_oco.hpp: AFKT23 Theorem 3). A view provides its name, geometry and keys (the
// four of kAdaptiveKeys first), its own Params, the expert count, and per expert y: the cumulative loss
// L_{t-1}(y), this round's loss l_t(y) in [0, 1] and the charge the engine books for playing y. A view with the exact
// samplers (kNoiseKey >= 0) also bounds its computed scores: score_sensitivity (how far the exact L_{t-1}(y) of its
// computed expert moves between neighbours) and score_error(T) (how far the computed value is from it); the exact
// draw and the check are planned for their sum. The phase loss enters the lattice sparse vector clamped to [0, 1] (a
// no-op for losses in [0, 1]; for net-oco it removes the computed loss's rounding), so the queries stay 1-sensitive.

#include "kernels/learners/common.hpp"
#include "kernels/learners/svt_phase.hpp"
#include "kernels/mechanisms/above_threshold.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/exact_exponential.hpp"
#include "kernels/mechanisms/exponential.hpp"
#include "kernels/mechanisms/lattice.hpp"
#include "kernels/mechanisms/lattice_above_threshold.hpp"
#include "kernels/noise/discrete_laplace.hpp"

namespace dpr::learners {

/// The keys every view of AdaptiveSvt lists first (in this order).
inline constexpr KeySpec kAdaptiveKeys[] = {
    {"epsilon", KeyType::Real, "", 0.0, 1e12, "", "privacy parameter eps > 0 of the whole play sequence (Thm 2: eps-DP)",
     true},
    {"beta", KeyType::Real, "0.05", 0.0, 1.0, "", "failure probability of Thm 2: beta_0 = beta/T enters K and B", true,
     true},
    {"threshold", KeyType::Choice, "paper", 0.0, 0.0, "paper|strict",
     "Lthr = Lbar* + 4/eta + 8B/eps_0 (paper) or + 16B/eps_0 (strict, AFKT23 Lemma 2.3; docs/spec/checks.md §4.13)"},
    {"doubling_test", KeyType::Choice, "printed", 0.0, 0.0, "printed|plus",
     "double Lbar* when Lbar_t > Lbar* - 5K ln(1/beta_0)/eps_0 (printed) or + ... (plus: the sign the "
     "proof probably meant, AFKT23 Alg. 2 line 3; docs/spec/checks.md §4.14)"},
    {"restart_expert", KeyType::Choice, "uniform", 0.0, 0.0, "uniform|keep",
     "the expert a doubling restarts from: uniform = a fresh uniform draw (Algorithm 2 restarts Algorithm 1, which "
     "starts uniformly); keep = the expert just picked (post-processing: the same eps; an ablation, "
     "docs/experiments/afkt23.md §5)"},
};

/// The experts are the coordinates of the loss row (Geometry::Simplex): adaptive-svt-experts.
struct RowExperts : Learner<Geometry::Simplex> {
    static constexpr const char* kName = "adaptive-svt-experts";
    static constexpr KeySpec kKeys[] = {kAdaptiveKeys[0], kAdaptiveKeys[1], kAdaptiveKeys[2], kAdaptiveKeys[3],
                                        kAdaptiveKeys[4], kExactSamplersKey};
    /// The exact samplers' key (AdaptiveSvt: -1 for a view without them).
    static constexpr int kNoiseKey = 5;
    struct Params {
        std::uint32_t n; ///< the number of experts: d
    };
    /// The exact samplers' bounds on the computed scores (AdaptiveSvt::exact_plans): L_{t-1}(y) moves by at most 1
    /// between neighbouring inputs (losses in [0, 1], replace-one), and the engine's sum of up to T of them is within
    /// T^2 2^-53 of the exact one (any order).
    static double score_sensitivity(const Params&) { return 1.0; }
    static double score_error(const Params&, double T) { return T * T * 0x1.0p-53 * 1.001; }
    static Params resolve(const KeyValues&, const Problem& pb) { return Params{pb.d}; }
    static bool check(const KeyValues&, const Problem& pb, Diagnostic& diag) {
        if (pb.d < 2) return diag.fail("d", "adaptive-svt-experts needs d >= 2 experts (got %u)", pb.d);
        return true;
    }
    /// L_{t-1} at the team index i (lanes of double).
    template <class Team, class Row, class Idx>
    DPR_HD DPR_FORCEINLINE static auto cum(const Params&, const Team& team, const Row& row, std::uint64_t, Idx i) {
        return team.cum_exact(row, i);
    }
    /// L_{t-1}(y) at an expert index per instance.
    template <class Team, class Row, class UI>
    DPR_HD DPR_FORCEINLINE static auto cum_at(const Params&, const Team& team, const Row& row, std::uint64_t, const UI& y) {
        return team.cum_exact_at(row, y);
    }
    /// l_t(x) in [0, 1] (the phase loss) and the engine's charge for playing x (the same here).
    template <class Team, class Row, class UI>
    DPR_HD DPR_FORCEINLINE static auto loss_at(const Params&, const Team& team, const Row& row, const UI& x) {
        return team.loss_exact_at(row, x);
    }
    template <class Team, class Row, class UI>
    DPR_HD DPR_FORCEINLINE static auto charge(const Params& v, const Team& team, const Row& row, const UI& x) {
        return loss_at(v, team, row, x);
    }
};

template <class View>
struct AdaptiveSvt {
    static constexpr const char* kName = View::kName;
    static constexpr Geometry kGeometry = View::kGeometry;
    static constexpr const auto& kKeys = View::kKeys;
    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    static constexpr int kBeta = key_index(kKeys, "beta");
    static constexpr int kThreshold = key_index(kKeys, "threshold");
    static constexpr int kDoublingTest = key_index(kKeys, "doubling_test");
    static constexpr int kRestartExpert = key_index(kKeys, "restart_expert");
    static_assert(kEpsilon == 0 && kBeta == 1 && kThreshold == 2 && kDoublingTest == 3 && kRestartExpert == 4,
                  "a view of AdaptiveSvt lists kAdaptiveKeys first");
    static constexpr bool kInstanceLanes = true;
    static constexpr bool kReadsCumulative = true;

    struct Params : Dims { // d: the number of experts (the view's count)
        std::uint32_t row_d; ///< the loss row's width (= d for RowExperts; the ball's dimension for net-oco)
        double epsilon;
        double R;      ///< most runs of Algorithm 1: ceil(log2 T) + 1
        double eps0;   ///< eps / (2R)
        double beta0;  ///< beta / T
        double K;      ///< switches per run
        double B;      ///< ln(2 T^2 / beta_0)
        double eta;    ///< eps_0 / (2K)
        double acc;    ///< 8B/eps_0 or 16B/eps_0
        bool strict;
        bool plus;     ///< doubling test with + (else as printed, -)
        bool keep;     ///< a restart keeps the expert just picked (else a uniform draw)
        double check_scale;  ///< Laplace scale of the check: K / eps_0
        double check_margin; ///< 5 K ln(1/beta_0) / eps_0
        mech::SvtScales svt; ///< eps_0/2 sparse vector over 1-sensitive queries
        typename View::Params view;
        bool lattice;            ///< exact samplers (noise = "discrete-laplace"; see the header)
        mech::LatticeSvt lsvt;   ///< the lattice sparse vector of each run (lattice only)
        mech::ExactExpPlan xexp; ///< the exact exponential mechanism (lattice only)
        mech::RoundLattice chk;  ///< the check's lattice release (lattice only)
        mech::Guarantee chk_g;   ///< the guarantee of one check (lattice only)
    };

    static constexpr std::array<const char*, 4> kDiagnostics = {"switches", "doublings", "final_lbar", "svt_fires"};

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        p.view = View::resolve(kv, pb);
        p.d = p.view.n;
        p.row_d = pb.d;
        p.T = pb.T;
        p.epsilon = kv.num[kEpsilon];
        const double beta = kv.get(kBeta, 0.05);
        const double T = static_cast<double>(pb.T);
        p.R = static_cast<double>(ceil_log2(pb.T)) + 1.0;
        p.eps0 = p.epsilon / (2.0 * p.R);
        p.beta0 = beta / T;
        p.K = std::ceil(6.0 * ceil_log2(p.d) + 24.0 * std::log(1.0 / p.beta0));
        p.B = std::log(2.0 * T * T / p.beta0);
        p.eta = p.eps0 / (2.0 * p.K);
        p.strict = kv.get(kThreshold, 0.0) == 1.0;
        p.plus = kv.get(kDoublingTest, 0.0) == 1.0;
        p.keep = kv.get(kRestartExpert, 0.0) == 1.0;
        p.acc = (p.strict ? 16.0 : 8.0) * p.B / p.eps0;
        p.check_scale = p.K / p.eps0;
        p.check_margin = 5.0 * p.K * std::log(1.0 / p.beta0) / p.eps0;
        p.svt = mech::svt_scales(p.eps0 / 2.0, 1.0);
        p.lattice = false;
        if (View::kNoiseKey >= 0 && mech::lattice_wanted(lattice_asked(kv), noise_given(kv), pb.float_precision) &&
            !exact_plans(p, pb).why) {
            p.lattice = true;
            p.svt.threshold = p.lsvt.threshold_scale; // the scales in use (the report's noise_scale)
            p.svt.query = 2.0 * p.lsvt.threshold_scale;
            p.check_scale = p.chk.scale;
        }
        return p;
    }

    static bool noise_given(const KeyValues& kv) {
        if constexpr (View::kNoiseKey < 0) return false;
        else return kv.given[View::kNoiseKey];
    }
    static bool lattice_asked(const KeyValues& kv) {
        if constexpr (View::kNoiseKey < 0) return false;
        else return kv.given[View::kNoiseKey] && static_cast<int>(kv.num[View::kNoiseKey]) == 1;
    }

    /// Plans the exact samplers into p (see the header) and says why they do not apply (why = nullptr: they do).
    static ExactObstacle exact_plans(Params& p, const Problem& pb) {
        if (!(p.epsilon > 0.0) || std::isinf(p.epsilon)) return {"the exact samplers", "need a finite epsilon"};
        const double T = static_cast<double>(pb.T);
        const double err = View::score_error(p.view, T); // the computed L_{t-1}(y) against the exact one
        const double nu = View::score_sensitivity(p.view);
        const double lbar_max = std::ldexp(1.0, static_cast<int>(p.R) - 1); // Lbar* after R - 1 doublings
        p.lsvt = mech::lattice_svt(mech::svt_scales(p.eps0 / 2.0, 1.0), false, 1.0, 0.0, T,
                                   T + lbar_max + 4.0 / p.eta + p.acc + 1.0);
        if (p.lsvt.obstacle) return {"the sparse vector on a lattice", p.lsvt.obstacle};
        p.xexp = mech::plan_exact_exp(p.eta / 2.0, nu, err, p.d, p.eta);
        if (!p.xexp.ok) return {"the exact exponential mechanism", p.xexp.why};
        const double sens = nu + 2.0 * err;
        p.chk = mech::round_lattice(p.check_scale * sens, false, sens, 1, T + 1.0);
        if (!(p.chk.dlap.gamma * noise::kLatticeRoundMax > T + 1.0))
            return {"the lattice check of Algorithm 2",
                    "needs a lattice step above (T + 1) / 2^20 to round L_{t-1} (up to T) exactly, so eps is too large "
                    "for this T (the check's scale K / eps_0 sets the step)"};
        if (p.chk.obstacle) return {"the lattice check of Algorithm 2", p.chk.obstacle};
        p.chk_g = mech::lattice_guarantee(p.chk.dlap, 1, sens, 1);
        // Each part at most its continuous counterpart (lattice_svt and the plan's fit refuse otherwise; the check's
        // raise is a bounded search, so its result is checked here).
        if (!(p.chk_g.epsilon <= p.eps0 / p.K))
            return {"the lattice check of Algorithm 2", "found no scale whose lattice epsilon is at most eps_0 / K"};
        return {};
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (!View::check(kv, pb, diag)) return false;
        if (lattice_asked(kv)) {
            Params p = resolve(kv, pb);
            if (!p.lattice) return exact_obstacle_error(exact_plans(p, pb), diag);
        }
        return true;
    }

    static PrivacyReport privacy(const Params& p) {
        PrivacyReport r;
        r.calibration = p.strict ? "strict" : "paper";
        if (p.lattice) {
            // R runs x (the lattice sparse vectors + K exact exponential mechanisms + K lattice checks).
            r.epsilon = p.R * (p.lsvt.epsilon + p.K * p.xexp.epsilon + p.K * p.chk_g.epsilon);
            r.delta = p.R * ((p.K + 1.0) * p.lsvt.delta + p.K * p.xexp.delta + p.K * p.chk_g.delta);
            r.accountant = "basic composition over at most R = ceil(log2 T) + 1 runs of Alg. 1 on exact samplers (a "
                           "lattice sparse vector and K exact exponential mechanisms) and K lattice checks per run";
            r.mechanism = "AboveThreshold on a lattice + exact exponential mechanism per run (Alg. 1), lattice releases "
                          "of the best loss as checks (exact samplers)";
            r.noise_scale = p.svt.query;
            r.as_run = true;
            return r;
        }
        // R runs x (eps_0/2 sparse vector + K eta exponential mechanisms + K checks of eps_0/K).
        r.epsilon = p.R * (p.eps0 / 2.0 + p.K * p.eta + p.K * (p.eps0 / p.K));
        r.delta = 0.0;
        r.accountant = "basic composition over at most R = ceil(log2 T) + 1 runs of Alg. 1 (eps_0 each) and K Laplace "
                       "checks per run (eps_0/K each)";
        r.mechanism = "AboveThreshold + exponential mechanism per run (Alg. 1), Laplace checks of the best loss";
        r.noise_scale = p.svt.query;
        return r;
    }

    /// The phase scalars (kernels/learners/svt_phase.hpp; k counts the switches of the current run, acc is the
    /// phase loss of x), then Lbar*, the runs started and the switches of all runs.
    enum Scalar : int { kLbar = kPhaseSlots, kRuns, kSwitches, kScalars };

    DPR_HD static WorkspaceSpec workspace(const Params&) { return WorkspaceSpec{}.scalars(kScalars); }

    template <class Team, class U>
    DPR_HD static U threshold(const Params& p, const U& lbar) {
        return lbar + U(4.0 / p.eta + p.acc);
    }

    /// The noisy threshold of the sparse vector started at round t for the estimate lbar: continuous or on the lattice.
    template <class Team, class U>
    DPR_HD static U noisy_threshold(const Params& p, const Team& team, const U& lbar, std::uint64_t t) {
        return p.lattice ? mech::lattice_svt_threshold(team, p.lsvt, threshold<Team>(p, lbar), t, std::uint32_t{0})
                         : mech::svt_threshold(team, p.svt, threshold<Team>(p, lbar), t, std::uint32_t{0});
    }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using U = typename Team::template uni<double>;
        mech::ExpMechDraw draw; // round 0: uniform
        const auto x0 = mech::uniform_candidate(team, p.d, draw);
        const U lbar(1.0);
        SvtPhase<Team>::start(team, ws, x0, noisy_threshold(p, team, lbar, 1), U(0.0));
        if (team.rank() == 0) {
            team.put(ws.scalars, kLbar, lbar);
            team.put(ws.scalars, kRuns, U(1.0));
            team.put(ws.scalars, kSwitches, U(0.0));
        }
        team.sync();
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t t, const Row& row) {
        using R = typename Team::real;
        using D = typename Team::template lanes<double>;
        using U = typename Team::template uni<double>;
        using UI = typename Team::template uni<std::uint32_t>;
        const U one(1.0), zero(0.0);
        auto s = SvtPhase<Team>::load(team, ws);
        U lbar = team.get(ws.scalars, kLbar);
        U runs = team.get(ws.scalars, kRuns);
        U switches = team.get(ws.scalars, kSwitches);
        if (any(s.pending)) {
            mech::ExpMechDraw draw;
            draw.round = static_cast<std::uint32_t>(t);
            const UI y = p.lattice ? s.exact_draw(team, p.xexp, p.d, t,
                                                  [&](int l, std::uint32_t i) {
                                                      return std::fmax(lane_of(View::cum_at(p.view, team, row, t, UI(i)), l),
                                                                       lane_of(lbar, l));
                                                  })
                                   : mech::exponential_mechanism(team, p.d, p.eta / 2.0, draw, [&](auto i) {
                                         return convert<R>(vmax(View::cum(p.view, team, row, t, i), D(lbar)));
                                     });
            // The private check of the picked expert's loss so far (C2), eps_0/K-DP.
            const U cum_y = View::cum_at(p.view, team, row, t, y);
            const U check =
                p.lattice ? noise::lattice_release(cum_y, rng::instance_stream(team, rng::Purpose::SparseVector, mech::kSvtCheck, t, std::uint32_t{0}),
                                                   rng::instance_stream(team, rng::Purpose::Lattice, 2u, t, std::uint32_t{0}).block(0).w[0],
                                                   p.chk.dlap)
                          : cum_y + mech::svt_laplace(team, mech::kSvtCheck, t, std::uint32_t{0}, p.check_scale);
            const U bar = p.plus ? lbar + U(p.check_margin) : lbar - U(p.check_margin);
            const auto dbl = s.pending & (check > bar) & (runs < U(p.R));
            UI xn = y;
            if (any(dbl) && !p.keep) {
                mech::ExpMechDraw fresh; // a restarted Algorithm 1 starts from a uniform expert
                fresh.sub = 1;
                fresh.round = static_cast<std::uint32_t>(t);
                const UI u = mech::uniform_candidate(team, p.d, fresh);
                xn = select(mask_for<std::uint32_t>(dbl), u, y);
            }
            switches = switches + select(s.pending, one, zero);
            lbar = select(dbl, lbar + lbar, lbar);
            runs = runs + select(dbl, one, zero);
            s.switch_to(xn, t, noisy_threshold(p, team, lbar, t), zero);
            s.k = select(dbl, zero, s.k); // a restart begins a new run of Algorithm 1
        }
        const auto fire = p.lattice ? s.test_lattice(team, p.lsvt, p.K, t, s.acc) : s.test(team, p.svt, p.K, t, s.acc);
        const UI xi = convert<std::uint32_t>(s.x);
        const U loss = View::loss_at(p.view, team, row, xi);
        const U paid = View::charge(p.view, team, row, xi);
        const U enters =
            p.lattice ? SvtPhase<Team>::lattice_loss(team, vmin(vmax(loss, zero), one), p.lsvt.tab.gamma, t) : loss;
        team.sync(); // every member has read this round's scalars before rank 0 overwrites them
        if (team.rank() == 0) {
            s.store(team, ws, fire, s.acc + enters);
            team.put(ws.scalars, kLbar, lbar);
            team.put(ws.scalars, kRuns, runs);
            team.put(ws.scalars, kSwitches, switches);
        }
        team.sync();
        return {paid, paid};
    }

    DPR_HD static void diagnostics(const Params&, const double* s, double* out) {
        out[0] = s[kSwitches];
        out[1] = s[kRuns] - 1.0;
        out[2] = s[kLbar];
        out[3] = s[kPhaseFires];
    }
};

using AdaptiveSvtExperts = AdaptiveSvt<RowExperts>;

} // namespace dpr::learners
