#pragma once
// potential-svt-experts: AFKT23 Algorithm 5, the potential-based algorithm (App. C, Theorems 6 and 7;
// docs/spec/afkt23.md §C4), for experts with mu uniform on [d]:
//
//   ln phi(s) = logsumexp_x(-eta L_s(x)) - ln d          (the log potential after s rounds; ln phi(0) = 0)
//   x ~ Unif[d]; k = 0; t* = 0; sparse vector AboveThreshold(eps_0, threshold 2 alpha / eta) started at round
//   1 round t:  if the sparse vector fired at round t-1:
//                 x ~ Pr[y] ∝ exp(-eta L_{t-1}(y))        (the exponential mechanism, c = eta, §1.7)
//                 k <- k + 1; t* <- t - 1; restart the sparse vector at round t if k < K, else freeze it
//                 forever
//             elif the sparse vector is live:
//                 q_t = (ln phi(t*) - ln phi(t-1)) / eta     fire <- q_t + Lap(query scale) > rho_hat
//             play x, pay l_t(x)
// The spec's corrections (§4 item 15, C4 notes): the query reads phi(t-1), not phi(t) (l_t is not revealed
// yet), and the threshold 2 alpha is in log-potential units, so it is 2 alpha / eta in query units.
// The round skeleton (timing, budget, randomness addresses) is the one of Algorithms 1 and 2
// (kernels/learners/svt_phase.hpp); the phase accumulator holds ln phi(t*).
//
// Parameters (gamma = 1/d: the uniform prior puts mass 1/d on x*; every one a key):
//   K     = ceil(2 ln(1/gamma)) = ceil(2 ln d)                                 (Thm 6 / 7)
//   alpha = 1
//   pure   (Thm 6): eps_0 = eps / K,                    eta = eps_0 / (56 ln T)
//   approx (Thm 7): eps_0 = eps / sqrt(K ln(1/delta)),  eta = eps / (112 ln T sqrt(ln(1/gamma) ln(1/delta)))
//                   (Thm 7's eps_0 is printed "eps/sqrt(K) log 1/delta"; read as the advanced-composition
//                   form)
// Lemma C.2 needs alpha >= 8 Delta eta (ln T + ln(2T/beta)) / eps_0 with beta = 1/T^2 (Thm 6; Delta = 2 with
// the conservative noise): check() warns when the keys break it (conservative noise does at Thm 6's
// defaults).
//
// Privacy (§4 item 15). The query is 1-sensitive only in the losses after t*: a replaced loss at a round <=
// t* moves ln phi(t*) and ln phi(t-1) by up to eta each, so q_t is up to 2-sensitive; and the exponential
// mechanism with scores L_{t-1} (sensitivity 1, replace-one) is 2 eta-DP, not eta. The paper composes K
// phases at (eta + eps_0) each. Reported here is what the noise provably gives:
//   sensitivity = "paper"        sparse-vector noise for Delta = 1 (Lap(2/eps_0), Lap(4/eps_0)): each phase
//                                 (2 eps_0 + 2 eta)-DP, the sparse vector being eps_0-DP only for 1-sensitive
//                                 queries
//   sensitivity = "conservative" noise for Delta = 2 (Lap(4/eps_0), Lap(8/eps_0)): each phase (eps_0 + 2
//   eta)-DP; the default, with Thm 6/7's eps_0 and eta scaled down together (unless either is given) to the largest
//   factor at which the composition below is at most the requested eps: a run never gives more than it asks
// K phases by basic composition (pure), or for variant = "approx" the smaller of that and advanced
// composition sqrt(2K ln(1/delta)) e + K e (e^e - 1) with delta (e the per-phase epsilon;
// Dwork-Rothblum-Vadhan). The accountant string also quotes the paper's own count K (eta + eps_0).
//
// Cost: ln phi(t-1) is an O(d) logsumexp (two team reductions, max then sum, in the run's precision over the
// shifted scores eta (L_{t-1}(x) - min L_{t-1})) in every round in which the sparse vector is live; a switch
// adds the exponential mechanism's O(d) passes. State: O(1) scalars; L_{t-1} comes from the engine
// (kReadsCumulative). On a shared sequence both are the same for every instance: the CPU executor prepares
// the round's exponential-mechanism CDF once for all instances (kSharedDraw), a switch searches it, and in
// double runs ln phi(t-1) is read off it (mech::exp_mech_log_total: its last running sum and its min), so an
// instance's round is O(1) (O(log d) when it switches). Those are the bits a one-lane team computes itself
// (the same double weights, summed in index order); float runs form the potential's weights in float, so they
// keep their own O(d) logsumexp and share only the draw.
//
// Randomness: as svt-experts (every draw addressed by the round that makes it): the initial expert is the
// exponential mechanism of round 0 at c = 0, a switch at round t is (Exponential, sub 0, round t), the sparse
// vector started at round t its threshold draw (SparseVector, kSvtThreshold, round t), the query of round t
// (SparseVector, kSvtQuery, round t).
//
// Exact samplers (noise = "discrete-laplace", the default in float precision where it applies; docs/spec/afkt23.md
// §C4 "Exact samplers", docs/spec/model.md §1.9, §1.10): the sparse vector on a lattice (kernels/mechanisms/
// lattice_above_threshold.hpp) over the computed query, and the exact exponential mechanism (kernels/mechanisms/
// exact_exponential.hpp) at c = eta over L_{t-1} in double (within T^2 2^-53 of the exact sum), fitted to at most
// 2 eta per draw. The query is not a sum of lattice points, so the lattice sparse vector takes it rounded down with
// its computed sensitivity Delta^ = 2 + 2 err_q: ln phi(t-1) is then computed in double in both precisions
// (exact_log_potential: a min, then exp(-eta (L_{t-1}(x) - min)) summed in index order, one lane per instance, the
// same bits on every layout, ISA and device), whose error bound err_l (log_potential_error) gives
// err_q = 2 err_l / eta + the query's own two roundings. The report composes K phases of (lattice sparse vector +
// exact draw), each part at most its continuous counterpart: never more than the continuous report, so never more
// than asked by default. Cost: on a shared sequence the CPU executor makes the log potential once per round for all
// instances (shared_scalar) and the switching instances draw from the round's shared exact table (O(log d + 64)), so
// a round is O(1) per instance, as in double; elsewhere (an own sequence, the GPU) the log potential is O(d) double
// exps per instance in every live round and a switch the scalar O(d) loop (instance lanes at any d on a shared
// sequence; an own sequence above kInstanceLanesMaxD takes coordinate lanes, where it is a scalar loop per instance).
// Either way the bits are those of the loop in index order.
//
// Diagnostics: switches, budget_exhausted, svt_fires, short_phases (completed phases whose ln phi dropped by
// less than alpha: Lemma C.2 says none, with probability >= 1 - beta, when its condition on alpha holds).

#include <limits>

#include "kernels/learners/common.hpp"
#include "kernels/learners/svt_phase.hpp"
#include "kernels/mechanisms/above_threshold.hpp"
#include "kernels/mechanisms/exact_exponential.hpp"
#include "kernels/mechanisms/exponential.hpp"
#include "kernels/mechanisms/lattice_above_threshold.hpp"

namespace dpr::learners {

struct PotentialSvtExperts : Learner<Geometry::Simplex>, PureOrApprox {
    static constexpr const char* kName = "potential-svt-experts";
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, 1e12, "",
         "privacy parameter eps > 0 the parameters are set from (Thm 6 pure, Thm 7 approx); the report "
         "gives what the noise provides (see sensitivity)",
         true},
        {"variant", KeyType::Choice, "pure", 0.0, 0.0, "pure|approx",
         "pure: Thm 6 (eps_0 = eps/K, eta = eps_0/(56 ln T)); approx: Thm 7 (eps_0 = eps/sqrt(K "
         "ln(1/delta)), eta = eps/(112 ln T sqrt(ln d ln(1/delta))))"},
        {"delta", KeyType::Real, "1e-6", 0.0, 1.0, "",
         "delta of variant = approx (advanced composition over phases)", true, true},
        {"sensitivity", KeyType::Choice, "conservative", 0.0, 0.0, "paper|conservative",
         "conservative (the default): sparse-vector noise for query sensitivity 2 (Lap(4/eps_0), Lap(8/eps_0)) "
         "and eps_0, eta scaled down together until the guarantee is at most the requested eps; paper: noise "
         "for sensitivity 1 (Lap(2/eps_0), Lap(4/eps_0)) at Thm 6/7's eps_0 and eta, about 2 eps "
         "(docs/spec/checks.md §4.15); the privacy report is honest for both"},
        {"alpha", KeyType::Real, "1", 0.0, kInf, "",
         "potential drop per phase of Lemma C.2: the sparse-vector threshold is 2 alpha / eta (query units)",
         true},
        {"switch_budget", KeyType::Real, "auto", 1.0, 1e9, "",
         "K, the most phases after the first (then the expert is frozen); auto = ceil(2 ln d) (Thm 6/7, "
         "gamma = 1/d)"},
        {"eps0", KeyType::Real, "auto", 0.0, kInf, "",
         "per-phase sparse-vector epsilon eps_0; auto by variant (see above)", true},
        {"eta", KeyType::Real, "auto", 0.0, 1e12, "",
         "sampling parameter: Pr[y] ∝ exp(-eta L_{t-1}(y)), and the potential's inverse temperature "
         "(finite: ln phi needs it); auto by variant",
         true},
        kExactSamplersKey,
    };
    static constexpr int kSensitivity = key_index(kKeys, "sensitivity");
    static constexpr int kAlpha = key_index(kKeys, "alpha");
    static constexpr int kSwitchBudget = key_index(kKeys, "switch_budget");
    static constexpr int kEps0 = key_index(kKeys, "eps0");
    static constexpr int kEtaKey = key_index(kKeys, "eta");
    static constexpr int kNoise = key_index(kKeys, "noise");
    static constexpr bool kInstanceLanes = true;
    static constexpr bool kReadsCumulative = true;

    struct Params : PureOrApprox::Params {
        bool conservative; ///< sparse-vector noise for Delta = 2
        double alpha;
        double K;
        double eps0;
        double eta;
        double threshold;    ///< 2 alpha / eta
        double ln_d;
        mech::SvtScales svt; ///< eps_0 sparse vector over 1- (paper) or 2-sensitive (conservative) queries
        bool lattice;        ///< exact samplers (noise = "discrete-laplace"; see the header)
        mech::LatticeSvt lsvt;   ///< the lattice sparse vector (lattice only)
        mech::ExactExpPlan xexp; ///< the exact exponential mechanism (lattice only)
    };

    static constexpr std::array<const char*, 4> kDiagnostics = {"switches", "budget_exhausted", "svt_fires",
                                                                "short_phases"};

    static double ln_T(std::uint64_t T) { return std::log(static_cast<double>(T < 2 ? 2 : T)); }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        resolve_privacy<PotentialSvtExperts>(kv, pb, p);
        p.conservative = kv.get(kSensitivity, 1.0) == 1.0;
        p.alpha = kv.get(kAlpha, 1.0);
        p.ln_d = std::log(static_cast<double>(pb.d));
        p.K = kv.get(kSwitchBudget, std::ceil(2.0 * p.ln_d));
        const double lnT = ln_T(pb.T), lndel = std::log(1.0 / p.delta);
        const double eps0 = p.approx ? p.epsilon / std::sqrt(p.K * lndel) : p.epsilon / p.K;
        p.eps0 = kv.get(kEps0, eps0);
        p.eta = kv.get(kEtaKey, p.approx ? p.epsilon / (112.0 * lnT * std::sqrt(p.ln_d * lndel)) : p.eps0 / (56.0 * lnT));
        if (p.conservative && !kv.given[kEps0] && !kv.given[kEtaKey]) {
            // Thm 6/7's eps_0 and eta, scaled by the largest s in (0, 1] at which the phases' composition is at most
            // the request: the exponential mechanism is 2 eta-DP (replace-one), not eta, so the unscaled values
            // give eps + 2 K eta (1.0086 eps at d = 2, T = 64). Pure composition is linear in s; the advanced one
            // is increasing in s, so a bisection finds s (to a relative 2^-50, rounded down).
            const double e0 = p.eps0, h0 = p.eta;
            const auto report_at = [&](double s) {
                Params q = p;
                q.eps0 = s * e0;
                q.eta = s * h0;
                return privacy(q).epsilon;
            };
            if (report_at(1.0) > p.epsilon) {
                double lo = 0.0, hi = 1.0;
                for (int i = 0; i < 60; ++i) {
                    const double mid = 0.5 * (lo + hi);
                    (report_at(mid) <= p.epsilon ? lo : hi) = mid;
                }
                p.eps0 = lo * e0;
                p.eta = lo * h0;
            }
        }
        p.threshold = 2.0 * p.alpha / p.eta;
        p.svt = mech::svt_scales(p.eps0, p.conservative ? 2.0 : 1.0);
        p.lattice = false;
        if (mech::lattice_wanted(lattice_asked(kv), kv.given[kNoise], pb.float_precision) && !exact_plans(p, pb).why) {
            p.lattice = true;
            p.svt.threshold = p.lsvt.threshold_scale; // the scales in use (the report's noise_scale)
            p.svt.query = 2.0 * p.lsvt.threshold_scale;
        }
        return p;
    }

    static bool lattice_asked(const KeyValues& kv) { return kv.given[kNoise] && static_cast<int>(kv.num[kNoise]) == 1; }

    /// A bound on |computed - exact| of exact_log_potential's ln phi(s), s < T (afkt23.md §C4 "Exact samplers"): the
    /// engine's L_{s}(x) within E_L = T^2 2^-53 of the exact sums (ln phi is eta-Lipschitz in them), the exponents
    /// eta (L - min) rounded twice (2 u eta T), vexp and vlog within 2 ulp (4u relative: assumed, and measured
    /// by tests/simd as <= 1 ulp from glibc's on sampled inputs, not proved), the index-order sum of d terms (relative (d - 1) u), the terms below e^-708 flushed to 0 (the
    /// term of the minimum is 1), and the three roundings of -eta min + ln S - ln d; doubled for safety. Host code.
    static double log_potential_error(const Params& p, std::uint64_t T) {
        const long double u = 0x1.0p-53L, t = static_cast<long double>(T) + 1.0L, d = p.d, lnd = p.ln_d;
        const long double eta = p.eta, big = eta * t;
        const long double sum = ((d + 4.0L) * u / (1.0L - (d + 4.0L) * u)) * 1.01L + d * std::exp(-708.0L);
        const long double err = eta * t * t * u + 2.0L * u * big + sum + 4.0L * u * (lnd + 1.0L) + u * (3.0L * big + 4.0L * lnd + 2.0L);
        return static_cast<double>(2.0L * err);
    }
    /// A bound on |computed - exact| of the query (acc - ln phi(t-1)) / eta: both logs' errors over eta, then the
    /// subtraction's and the division's roundings of a value below T + (ln d + 1) / eta.
    static double query_error(const Params& p, std::uint64_t T) {
        const long double u = 0x1.0p-53L, eta = p.eta;
        const long double q = static_cast<long double>(T) + 1.0L + (p.ln_d + 1.0L) / eta;
        return static_cast<double>((2.0L * log_potential_error(p, T) / eta + 3.0L * u * q) * 1.01L);
    }
    /// Plans both exact samplers into p.lsvt and p.xexp and says why they do not apply (why = nullptr: they do):
    /// the sparse vector at the continuous one's epsilon (eps_0, or 2 eps_0 with the paper's noise) over queries of
    /// sensitivity 2 (see Privacy above) computed within query_error, at most T per instance; the exponential mechanism
    /// at c = eta over 1-sensitive scores within T^2 2^-53, each draw at most 2 eta-DP.
    static ExactObstacle exact_plans(Params& p, const Problem& pb) {
        if (!(p.eta > 0.0) || std::isinf(p.eta) || !(p.eps0 > 0.0) || std::isinf(p.eps0))
            return {"the exact samplers", "need a positive, finite eta and eps0"};
        const double T = static_cast<double>(pb.T);
        const double max_abs = T + 2.0 + (p.ln_d + 1.0) / p.eta + std::fabs(p.threshold);
        p.lsvt = mech::lattice_svt(p.svt, false, 2.0, query_error(p, pb.T), T, max_abs);
        if (p.lsvt.obstacle) return {"the sparse vector on a lattice", p.lsvt.obstacle};
        p.xexp = mech::plan_exact_exp(p.eta, 1.0, T * T * 0x1.0p-53 * 1.001, pb.d, 2.0 * p.eta);
        if (!p.xexp.ok) return {"the exact exponential mechanism", p.xexp.why};
        return {};
    }

    /// Lemma C.2's condition alpha >= 8 Delta eta (ln T + ln(2T/beta)) / eps_0 at beta = 1/T^2 (Thm 6): the
    /// sparse vector's accuracy (Thm 3.24) scales with the Delta its noise is calibrated for (2: conservative).
    static double lemma_c2_alpha(const Params& p) {
        const double T = static_cast<double>(p.T < 2 ? 2 : p.T);
        const double delta_q = p.conservative ? 2.0 : 1.0;
        return 8.0 * delta_q * p.eta * (std::log(T) + std::log(2.0 * T * T * T)) / p.eps0;
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (pb.d < 2) return diag.fail("d", "potential-svt-experts needs d >= 2 experts (got %u)", pb.d);
        const double K = kv.get(kSwitchBudget, 0.0);
        if (kv.given[kSwitchBudget] && K != std::floor(K))
            return diag.fail("switch_budget", "switch_budget = %g must be a whole number of phases", K);
        const Params p = resolve(kv, pb);
        const double need = lemma_c2_alpha(p); // one warning is reported: this one first
        if (p.alpha < need) {
            diag.fail("alpha",
                      "alpha = %g is below Lemma C.2's 8 Delta eta (ln T + ln(2T/beta))/eps_0 = %g (beta = 1/T^2): phases "
                      "may end before the potential has dropped by alpha, and Thm 6/7's loss bound does not apply",
                      p.alpha, need);
            diag.warning_only = true;
        } else {
            warn_ignored_delta(p, kv, diag);
        }
        if (lattice_asked(kv) && !p.lattice) {
            Params q = p;
            return exact_obstacle_error(exact_plans(q, pb), diag);
        }
        return true;
    }

    /// The provable epsilon of one phase: sparse vector + exponential mechanism (2 eta, replace-one).
    static double phase_epsilon(const Params& p) { return (p.conservative ? p.eps0 : 2.0 * p.eps0) + 2.0 * p.eta; }

    static PrivacyReport privacy(const Params& p) {
        PrivacyReport r;
        r.calibration = p.conservative ? "conservative" : "paper";
        if (p.lattice) return exact_privacy(p, r);
        const double e = phase_epsilon(p);
        const double basic = p.K * e;
        r.epsilon = basic;
        r.delta = 0.0;
        r.accountant = p.conservative
                           ? "basic composition of K phases, (eps_0 + 2 eta) each (sparse vector for 2-sensitive queries, "
                             "2 eta-DP exponential mechanism; the paper counts eta + eps_0)"
                           : "basic composition of K phases, (2 eps_0 + 2 eta) each (Delta = 1 sparse-vector noise on "
                             "2-sensitive queries, 2 eta-DP exponential mechanism; the paper counts eta + eps_0)";
        if (p.approx) {
            const double adv = advanced_composition(p.K, e, p.delta);
            if (adv < basic) {
                r.epsilon = adv;
                r.delta = p.delta;
                r.accountant = p.conservative
                                   ? "advanced composition of K phases, (eps_0 + 2 eta) each (the paper counts eta + eps_0)"
                                   : "advanced composition of K phases, (2 eps_0 + 2 eta) each (Delta = 1 sparse-vector "
                                     "noise on 2-sensitive queries; the paper counts eta + eps_0)";
            }
        }
        r.mechanism = "AboveThreshold on the log-potential drop + exponential mechanism exp(-eta L)";
        r.noise_scale = p.svt.query;
        return r;
    }

    /// The report of the exact samplers (afkt23.md §C4 "Exact samplers"): K phases, each a lattice sparse vector
    /// (model.md §1.10) and an exact draw (§1.9), by basic composition (or, for variant = "approx", advanced
    /// composition where smaller); the deltas of the truncated samplers add (K + 1 sparse vectors bound the K the
    /// budget allows).
    static PrivacyReport exact_privacy(const Params& p, PrivacyReport& r) {
        const double e = p.lsvt.epsilon + p.xexp.epsilon;
        const double basic = p.K * e;
        r.epsilon = basic;
        r.delta = (p.K + 1.0) * p.lsvt.delta + p.K * p.xexp.delta;
        r.accountant = "lattice: basic composition of K phases, each an AboveThreshold on a lattice over the computed "
                       "2-sensitive query + an exact exponential mechanism (at most 2 eta)";
        if (p.approx) {
            const double adv = advanced_composition(p.K, e, p.delta);
            if (adv < basic) {
                r.epsilon = adv;
                r.delta += p.delta;
                r.accountant = "lattice: advanced composition of K phases, each an AboveThreshold on a lattice + an "
                               "exact exponential mechanism";
            }
        }
        r.mechanism = "AboveThreshold on a lattice on the log-potential drop (discrete Laplace, exact comparisons) + "
                      "exact exponential mechanism exp(-eta L) (integer weights on a score grid)";
        r.noise_scale = p.svt.query;
        r.as_run = true;
        return r;
    }

    /// The draw of round t and, in double, ln phi(t-1) are the same for every instance of a shared sequence:
    /// the CPU executor prepares the CDF of exp(-eta L_{t-1}) once per round (kSharedDraw,
    /// kernels/learners/common.hpp); round() reads both off it, with the bits of its own passes on a one-lane
    /// team. Not for an infinite eta.
    static constexpr bool kSharedDraw = true;
    static bool shares_draw(const Params& p) { return p.eta > 0.0 && p.eta < kInf; }
    /// O(1) per instance only in double: float runs keep their own O(d) log potential every live round, which
    /// coordinate lanes spread over the SIMD lanes (and give other bits than instance lanes). With the exact samplers,
    /// true in either precision: the switches draw from the shared table, and the log potential (exact_log_potential,
    /// O(d) per instance) is a loop over the instances' lanes, so instance lanes are the fast layout at any d.
    template <class R>
    static bool shared_round(const Params& p) {
        return (sizeof(R) == 8 || p.lattice) && shares_draw(p);
    }
    static double shared_coefficient(const Params& p) { return p.eta; }
    /// With the exact samplers, the exact mechanism's table (over shared_score<double>, L_{t-1} in double).
    static const mech::ExactExpPlan* shared_exact_plan(const Params& p) { return p.lattice ? &p.xexp : nullptr; }
    /// The score of the draw, L_{t-1}(y) rounded to the run's precision, as double lanes.
    template <class R, class V>
    static V shared_score(const Params&, V cum) {
        return convert<double>(convert<R>(cum));
    }

    /// The phase scalars (svt_phase.hpp; acc = ln phi(t*)), then ln phi(t-1) of the latest round that computed it
    /// and the count of short phases.
    enum Scalar : int { kLogPhi = kPhaseSlots, kShort, kScalars };

    DPR_HD static WorkspaceSpec workspace(const Params&) { return WorkspaceSpec{}.scalars(kScalars); }

    /// ln phi(t-1) = -eta min L + ln sum_x exp(-eta (L_{t-1}(x) - min L)) - ln d, per instance (double).
    template <class Team, class Row>
    DPR_HD static typename Team::template uni<double> log_potential(const Params& p, const Team& team, const Row& row) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using D = typename Team::template lanes<double>;
        using U = typename Team::template uni<double>;
        const auto lo = team.template reduce<0, 1>(p.d, [&](auto i) {
            Contrib<V, 0, 1> c;
            c.max[0] = convert<R>(-team.cum_exact(row, i));
            return c;
        });
        // The shift (min L in the run's precision) only needs to be close to the minimum: the same value is used
        // in both terms below, so the identity holds for any shift, and the exponents stay <= ~0.
        const U lmin = -convert<double>(lo.max[0]);
        team.sync(); // the reduction slots are reused
        const V neta(static_cast<R>(-p.eta));
        const auto s = team.template reduce<1, 0>(p.d, [&](auto i) {
            Contrib<V, 1, 0> c;
            c.sum[0] = vexp(neta * convert<R>(team.cum_exact(row, i) - D(lmin)));
            return c;
        });
        team.sync();
        return U(-p.eta) * lmin + vlog(convert<double>(s.sum[0])) - U(p.ln_d);
    }

    /// ln phi(t-1) for the exact samplers, in double in either precision: the min of L_{t-1}, then
    /// exp(-eta (L_{t-1}(x) - min)) summed in index order, each member for its instance(s) (one lane per instance),
    /// so the bits do not depend on the layout, the ISA or the device. Within log_potential_error of the exact value.
    /// On a shared sequence the CPU executor makes it once per round (shared_scalar, read with shared_scalar_of):
    /// the same loop on one lane, so the same bits.
    template <class Team, class Row>
    DPR_HD static typename Team::template uni<double> exact_log_potential(const Params& p, const Team& team,
                                                                          const Row& row) {
        using U = typename Team::template uni<double>;
        using UI = typename Team::template uni<std::uint32_t>;
        return log_potential_in_order<U>(p, [&](std::uint32_t i) { return team.cum_exact_at(row, UI(i)); });
    }
    template <class U, class Cum>
    DPR_HD static U log_potential_in_order(const Params& p, Cum&& cum) {
        U lmin(kInf);
        for (std::uint32_t i = 0; i < p.d; ++i) lmin = vmin(lmin, cum(i));
        const U neta(-p.eta);
        U s(0.0);
        for (std::uint32_t i = 0; i < p.d; ++i) s = s + vexp(neta * (cum(i) - lmin));
        return neta * lmin + vlog(s) - U(p.ln_d);
    }
    /// The shared scalar of a round (kernels/learners/common.hpp): exact_log_potential over the shared L_{t-1}. Made
    /// (and read) only with the exact samplers.
    static double shared_scalar(const Params& p, const double* cum, std::uint32_t d) {
        return d == p.d ? log_potential_in_order<double>(p, [&](std::uint32_t i) { return cum[i]; })
                         : std::numeric_limits<double>::quiet_NaN();
    }

    /// The noisy threshold of the sparse vector started at round t: continuous or on the lattice.
    template <class Team>
    DPR_HD static typename Team::template uni<double> threshold(const Params& p, const Team& team, std::uint64_t t) {
        using U = typename Team::template uni<double>;
        return p.lattice ? mech::lattice_svt_threshold(team, p.lsvt, U(p.threshold), t, std::uint32_t{0})
                         : mech::svt_threshold(team, p.svt, U(p.threshold), t, std::uint32_t{0});
    }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using U = typename Team::template uni<double>;
        mech::ExpMechDraw draw; // round 0: x ~ mu = Unif[d]
        const auto x0 = mech::uniform_candidate(team, p.d, draw);
        SvtPhase<Team>::start(team, ws, x0, threshold(p, team, 1), U(0.0)); // ln phi(0) = 0
        if (team.rank() == 0) {
            team.put(ws.scalars, kLogPhi, U(0.0));
            team.put(ws.scalars, kShort, U(0.0));
        }
        team.sync();
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t t, const Row& row) {
        using R = typename Team::real;
        using U = typename Team::template uni<double>;
        const U one(1.0), zero(0.0);
        auto s = SvtPhase<Team>::load(team, ws);
        U lnphi = team.get(ws.scalars, kLogPhi);
        U shorts = team.get(ws.scalars, kShort);
        const bool live = any(s.pending | (s.k < U(p.K))), pending = any(s.pending);
        // The shared CDF (CPU, shared sequence; null elsewhere): for the draw, and in double for ln phi(t-1). With
        // the exact samplers, the exact table, for the draw only.
        const bool from_cdf = sizeof(R) == 8 && !p.lattice;
        const double* cdf = pending || (live && from_cdf) ? shared_cdf_of(row, t) : nullptr;
        const double* shared_lnphi = live && p.lattice ? shared_scalar_of(row, t) : nullptr;
        if (live) // ln phi(t-1)
            lnphi = shared_lnphi     ? U(*shared_lnphi)
                    : p.lattice      ? exact_log_potential(p, team, row)
                    : cdf && from_cdf ? U(mech::exp_mech_log_total(cdf, p.d, p.eta) - p.ln_d)
                                      : log_potential(p, team, row);
        if (pending) {
            using UI = typename Team::template uni<std::uint32_t>;
            mech::ExpMechDraw draw;
            draw.round = static_cast<std::uint32_t>(t);
            const UI y = p.lattice ? (cdf ? s.exact_draw_from_table(team, p.xexp, p.d, t, cdf)
                                          : s.exact_draw(team, p.xexp, p.d, t,
                                                         [&](int l, std::uint32_t i) {
                                                             return lane_of(team.cum_exact_at(row, UI(i)), l);
                                                         }))
                         : cdf ? mech::exp_mech_from_cdf(team, p.d, cdf, draw)
                               : mech::exponential_mechanism(team, p.d, p.eta, draw, [&](auto i) {
                                     return convert<R>(team.cum_exact(row, i));
                                 });
            shorts = shorts + select(s.pending & (s.acc - lnphi < U(p.alpha)), one, zero);
            s.switch_to(y, t, threshold(p, team, t), lnphi); // t* = t-1
        }
        const U q = (s.acc - lnphi) / U(p.eta);
        const auto fire = p.lattice ? s.test_lattice(team, p.lsvt, p.K, t, q) : s.test(team, p.svt, p.K, t, q);
        const U loss = team.loss_exact_at(row, convert<std::uint32_t>(s.x));
        team.sync(); // every member has read this round's scalars before rank 0 overwrites them
        if (team.rank() == 0) {
            s.store(team, ws, fire, s.acc);
            team.put(ws.scalars, kLogPhi, lnphi);
            team.put(ws.scalars, kShort, shorts);
        }
        team.sync();
        return {loss, loss};
    }

    DPR_HD static void diagnostics(const Params& p, const double* s, double* out) {
        budget_diagnostics(s[kPhaseK], p.K, out);
        out[2] = s[kPhaseFires];
        out[3] = s[kShort];
    }
};

} // namespace dpr::learners
