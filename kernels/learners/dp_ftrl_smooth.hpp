#pragma once
// dp-ftrl-smooth: AFKT23 Algorithm 3 = DP-FTRL of Kairouz et al. 2021 for online convex optimisation over the
// unit l2 ball (Theorem 4; docs/spec/afkt23.md §C6), charged the convex linear-model losses of kernels/core/sets.hpp
// (adversaries squared-realizable / absolute-realizable):
//   G~_{t-1} = sum_{s<t} g_s + Z_{t-1}                  (tree-aggregated prefix sum of the gradients; §1.4)
//   x_t      = argmin_{||x|| <= D} <G~_{t-1}, x> + (lambda/2) ||x||^2 = -G~_{t-1} / max(lambda, ||G~_{t-1}||_2)
//   pay l_t(x_t);  g_t = clip_L(grad l_t(x_t))           (the tree's input of round t)
// with D = 1 (the engine's ball) and grad l_t(x) = c_t a_t, c_t = r_t (squared) or sign(r_t) (absolute),
// r_t = <a_t, x_t> - b_t. Deterministic play given the noise: realised = expected = l_t(x_t).
//
// Lipschitz constant L and smoothness beta of the families on the unit ball (||a_t|| <= 1, |b_t| <= 1, so
// |r_t| <= 2): squared L = 2, beta = 1; absolute L = 1 (not smooth; the key beta is then used only by the
// realizable tuning). The gradient is clipped to norm L, which the family contract makes a no-op (the
// "clipped" diagnostic counts the rounds where it was not, 0 for every registered adversary), so the
// sensitivity below holds whatever the rows are.
//
// Privacy (C6 "Tree calibration for the engine"): per-node N(0, sigma^2 I_d) on the gradients, gradient norms
// <= L, replace-one l2 sensitivity Delta_2 = 2L; only G~_0 .. G~_{T-1} are released (h' = ceil(log2 T)), so
// the release is rho-zCDP with rho = h' Delta_2^2 / (2 sigma^2), reported as (eps, delta) by
// mech::tree_guarantee (zCDP conversion, or the classical Gaussian mechanism when that is tighter and valid).
// The tree's inputs are chosen adaptively (g_t depends on x_t, a function of earlier releases); the Gaussian
// tree keeps its guarantee under adaptive inputs (Denisov, McMahan, Rush, Smith, Thakurta 2022, Thm 2.1), as
// Kairouz et al. use. Calibrations: `replace-one` solves rho for the key epsilon with Delta_2 = 2L
// (mech::gaussian_node_scale_zcdp: the zCDP conversion of the report is the key's epsilon exactly; the report is the
// smaller of it and the classical Gaussian mechanism's 2 sqrt(rho ln(1.25/delta)) where that is below 1, so between
// eps ~ 0.45 and ~ 1.01 it is up to about 1% below the key's: docs/spec/afkt23.md §C6 "Privacy"); `add-remove` uses Kairouz's
// Delta_2 = L, half the noise, and therefore reports about twice the key's epsilon under replace-one.
// In float the default is lattice noise (noise = "discrete-gaussian"; by the key in double; docs/spec/model.md §1.11
// "Computed step vectors"): g_t = R(c_t) a_t in the run's precision, held to ||g_t||_2 <= L as exact reals
// (mech::l2_clip_factor), each coordinate rounded at random onto the lattice into the exact sum G, discrete Gaussian
// nodes and exact releases (PrefixMechanism::release / accumulate); the report is mech::lattice_gaussian_guarantee's
// with the same Delta_2 = 2L (Delta_1 = 2L sqrt(d), 2L per coordinate), at the calibration's sigma.
//
// lambda (key `tuning`):
//   realizable  Theorem 4:  lambda = 32 beta + ((beta/eps^2) (L/D)^2 T d ln T ln(1/delta))^{1/3}
//               (log read as ln; §4 item 17: a standard tree adds a log T to the noise bound, which this
//               formula does not follow). Regret O(L* + beta D^2 + (L D sqrt(beta D^2 T d log T log(1/delta))/eps)^{2/3}),
//               i.e. ~ T^{1/3} when L* = 0.
//   general     the non-realizable balance of the FTRL bound
//                   Regret <= lambda D^2 / 2 + sum_t (||g_t||^2 + ||g_t|| ||Z_{t-1}||) / lambda
//               (Kairouz et al. Thm C.1's two terms, with ||x_t - x^_t|| <= ||Z_{t-1}||/lambda, Lemma C.2),
//               using ||g_t|| <= L and E||Z_{t-1}||_2 <= sigma sqrt(d ceil(log2 T)) (at most ceil(log2 T) nodes
//               of variance sigma^2 per coordinate):
//                   lambda = sqrt(2 T (L^2 + L sigma sqrt(d ceil(log2 T)))) / D,
//               regret ~ sqrt(T) (the non-realizable baseline of docs/spec/afkt23.md §C6,
//               (T sqrt(d)/eps)^{1/2}-type).
//   auto        realizable for squared losses (smooth), general for absolute losses.
// With the noise off (epsilon = inf or noise = none) sigma = 0: lambda = 32 beta (realizable) or sqrt(2T) L
// (general), and the learner is lazy projected gradient descent x_t = Proj(-sum_{s<t} g_s / lambda)
// ("Lazy OGD / FTRL-L2", docs/spec/afkt23.md §C8; tests/learners/test_afkt23_oco.cpp checks it against a direct
// implementation).
//
// Per-instance state: G_{t-1} (d doubles, exact), the tree's level cache (rows of d in the run's precision,
// kernels/mechanisms/noisy_prefix.hpp), two scalars: max_t ||Z_{t-1}||_2 and the count of clipped rounds.

#include "kernels/learners/common.hpp"
#include "kernels/learners/ftrl_l2.hpp"
#include "kernels/learners/tree_learner.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/noisy_prefix.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace dpr::learners {

struct DpFtrlSmooth : Learner<Geometry::Ball>, SumAndPrefixState<2> {
    static constexpr const char* kName = "dp-ftrl-smooth";
    static constexpr unsigned kLossFamilies = loss_bit(LossFamily::Squared) | loss_bit(LossFamily::Absolute);
    /// The standard binary tree by default (Kairouz et al.'s DP-FTRL; docs/spec/afkt23.md §C4); discrete Gaussian nodes
    /// (lattice noise) by default in float, by the key in double (docs/spec/model.md §1.11 "Computed step vectors").
    using Prefix = PrefixKeys<PrefixLaws::Gaussian, mech::TreeVariant::Binary, /*Lattice=*/false, /*GaussianLattice=*/true>;
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, "",
         "privacy parameter eps > 0 of the whole play sequence; inf = no noise (lazy projected gradient descent)",
         true},
        {"delta", KeyType::Real, "0", 0.0, 1.0, "",
         "privacy parameter delta in (0,1) of the Gaussian tree (required unless the noise is off)", false,
         /*max_exclusive=*/true},
        Prefix::kNoise,
        Prefix::kMechanism,
        {"calibration", KeyType::Choice, "replace-one", 0, 1, "replace-one|add-remove",
         "sigma from zCDP at the key's (eps, delta) with Delta_2 = 2L (replace-one) or Kairouz's L (add-remove: "
         "reports ~2 eps)"},
        {"tuning", KeyType::Choice, "auto", 0, 2, "auto|realizable|general",
         "lambda: realizable = Theorem 4, general = sqrt(2T(L^2 + L sigma sqrt(d ceil(log2 T))))/D; auto = "
         "realizable for squared, general for absolute losses"},
        {"lambda", KeyType::Real, "auto", 0.0, kInf, "",
         "regularisation lambda > 0 (x_t = -G~/max(lambda, ||G~||)); auto = from `tuning`", true},
        {"beta", KeyType::Real, "auto", 0.0, 1e12, "",
         "smoothness beta used by the realizable tuning; auto = 1 (both families on the unit ball, ||a_t|| <= 1)",
         true},
        Prefix::kNodeScale,
        Prefix::kBltBuffers,
    };
    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    static constexpr int kDelta = key_index(kKeys, "delta");
    static constexpr int kNoise = key_index(kKeys, "noise");
    static constexpr int kMechanism = key_index(kKeys, "mechanism");
    static constexpr int kCalibration = key_index(kKeys, "calibration");
    static constexpr int kTuning = key_index(kKeys, "tuning");
    static constexpr int kLambda = key_index(kKeys, "lambda");
    static constexpr int kBeta = key_index(kKeys, "beta");
    static constexpr int kNodeScale = key_index(kKeys, "node_scale");

    static constexpr std::array<const char*, 2> kDiagnostics = {"max_noise_l2", "clipped_rounds"};

    enum class Tuning : std::uint8_t { Realizable, General };

    struct Params : Dims {
        std::uint32_t row_d; ///< the loss row's width, d + 1: a_t then b_t (loss_row_width)
        LossFamily loss;
        double lipschitz; ///< L: gradients are clipped to this norm
        double beta;
        double lambda;
        double epsilon, delta;
        Tuning tuning;
        bool add_remove;       ///< calibration = add-remove (Delta_2 = L in the calibration only)
        mech::PrefixMechanism prefix; ///< the noise of G~ (tree_learner.hpp): Gaussian node sigma, or off
    };

    /// L of the family on the unit ball (kernels/core/sets.hpp): squared 2, absolute 1.
    static constexpr double lipschitz_of(LossFamily f) { return f == LossFamily::Squared ? 2.0 : 1.0; }

    /// Gradient set {||g||_2 <= L} in R^d: ||.||_1 <= L sqrt(d), ||.||_2 <= L; replace-one Delta = twice those.
    static mech::LossSetNorms gradient_norms(double L, std::uint32_t d) {
        const mech::LossSetNorms s = mech::sphere_loss_norms(d);
        return mech::LossSetNorms{L * s.y1, L * s.y2, L * s.delta1, L * s.delta2};
    }

    /// Theorem 4's lambda (D = 1, log = ln); 32 beta when eps = inf.
    static double realizable_lambda(double beta, double L, double eps, double delta, std::uint32_t d, std::uint64_t T) {
        if (std::isinf(eps)) return 32.0 * beta;
        const double t = static_cast<double>(T);
        const double inner = beta / (eps * eps) * L * L * t * static_cast<double>(d) * std::log(t) * -std::log(delta);
        return 32.0 * beta + std::cbrt(inner);
    }
    /// The general balance: sqrt(2T (L^2 + L sigma sqrt(d ceil(log2 T)))) (D = 1).
    static double general_lambda(double L, double sigma, std::uint32_t d, std::uint64_t T) {
        const double noise = sigma * std::sqrt(static_cast<double>(d) * static_cast<double>(ceil_log2(T)));
        return std::sqrt(2.0 * static_cast<double>(T) * (L * L + L * noise));
    }

    /// The largest d whose gradients the lattice's l2 hold (mech::l2_clip_factor, d u <= 1/4) covers in float.
    static constexpr std::uint32_t kLatticeMaxDimFloat = 1u << 22;

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        static_cast<Dims&>(p) = dims(pb);
        p.loss = pb.loss == LossFamily::Absolute ? LossFamily::Absolute : LossFamily::Squared;
        p.row_d = static_cast<std::uint32_t>(loss_row_width(p.loss, pb.d));
        p.lipschitz = lipschitz_of(p.loss);
        p.beta = kv.get(kBeta, 1.0);
        p.epsilon = kv.num[kEpsilon];
        p.delta = kv.get(kDelta, 0.0);
        p.add_remove = static_cast<int>(kv.get(kCalibration, 0)) == 1;
        p.prefix = Prefix::resolve(kv, Prefix::index_of<DpFtrlSmooth>(), p.T, std::isinf(p.epsilon) && !kv.given[kNodeScale],
                                   [&](mech::NodeNoise) {
                                       if (!(p.delta > 0.0)) return 0.0; // refused by check()
                                       mech::LossSetNorms y = gradient_norms(p.lipschitz, p.d);
                                       // Kairouz's convention: one gradient added or removed, Delta_2 = L
                                       if (p.add_remove) y.delta2 = y.y2;
                                       return mech::gaussian_node_scale_zcdp(p.epsilon, p.delta, y, p.T,
                                                                             /*release_final=*/false);
                                   });
        // Discrete Gaussian nodes when asked for, and by default in float where they apply: each coordinate of a
        // gradient is at most L (docs/spec/model.md §1.11 "Computed step vectors").
        if (p.prefix.scale > 0.0 && (!pb.float_precision || p.d <= kLatticeMaxDimFloat))
            p.prefix = lattice_if_wanted<Prefix>(p.prefix, kv, Prefix::index_of<DpFtrlSmooth>(),
                                                 gradient_norms(p.lipschitz, p.d), pb.float_precision, p.d, p.delta,
                                                 p.lipschitz);
        const int tuning = static_cast<int>(kv.get(kTuning, 0));
        p.tuning = tuning == 1 || (tuning == 0 && p.loss == LossFamily::Squared) ? Tuning::Realizable : Tuning::General;
        const double eps_for_lambda = p.prefix.on() ? p.epsilon : kInf;
        p.lambda = kv.given[kLambda] ? kv.num[kLambda]
                   : p.tuning == Tuning::Realizable
                       ? realizable_lambda(p.beta, p.lipschitz, eps_for_lambda, p.delta, p.d, p.T)
                       : general_lambda(p.lipschitz, p.prefix.scale, p.d, p.T);
        return p;
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (!Prefix::check(kv, Prefix::index_of<DpFtrlSmooth>(), kDelta, std::isinf(kv.num[kEpsilon]), diag)) return false;
        if (kv.given[kLambda] && !(kv.num[kLambda] > 0.0))
            return diag.fail("lambda", "must be > 0 (got %g): x_t = -G~/max(lambda, ||G~||)", kv.num[kLambda]);
        if (kv.given[kBeta] && !(kv.num[kBeta] > 0.0))
            return diag.fail("beta", "must be > 0 (got %g)", kv.num[kBeta]);
        const Params p = resolve(kv, pb);
        if (!(p.lambda > 0.0) || !std::isfinite(p.lambda))
            return diag.fail(kv.given[kLambda] ? "lambda" : "epsilon",
                             "gives lambda = %g; lambda must be finite and > 0", p.lambda);
        if (!check_node_scale(p.prefix.scale, kv.given[kNodeScale] ? "node_scale" : "epsilon",
                              "sigma from zCDP with Delta_2 = 2L at (epsilon, delta)", diag))
            return false;
        if (Prefix::lattice_asked(kv, kNoise) && pb.float_precision && p.d > kLatticeMaxDimFloat)
            return diag.fail("noise",
                             "lattice noise needs d <= %u in float precision (got %u): the l2 hold of each gradient "
                             "needs d u <= 1/4 (docs/spec/model.md §1.11); run in double",
                             kLatticeMaxDimFloat, p.d);
        return check_lattice_applies<Prefix>(kv, Prefix::index_of<DpFtrlSmooth>(), p.prefix,
                                             gradient_norms(p.lipschitz, p.d), p.d, p.delta, p.lipschitz, diag);
    }

    static PrivacyReport privacy(const Params& p) {
        return prefix_privacy_report(
            p.prefix, p.delta, gradient_norms(p.lipschitz, p.d),
            p.add_remove ? "add-remove (sigma for Delta_2 = L)" : "replace-one (sigma for Delta_2 = 2L)",
            p.prefix.lattice ? "Gaussian tree with lattice noise on clipped gradients: each round's gradient held to "
                               "l2 <= L as run, rounded at random onto the lattice; discrete Gaussian nodes, exact "
                               "releases (docs/spec/model.md §1.11)"
            : p.prefix.honaker ? "Gaussian binary tree with Honaker's estimator on clipped gradients"
            : p.prefix.tree == mech::TreeVariant::Binary ? "Gaussian binary tree on clipped gradients (Kairouz et al.)"
                                                         : "Gaussian padded tree on clipped gradients (AS17 Alg. 2)");
    }

    /// The planted bugs of the audit suite that act on the mechanism (tree_learner.hpp plant_prefix; docs/AUDITS.md).
    static bool plant(Params& p, Planted bug) { return plant_prefix(p.prefix, bug); }

    static constexpr bool kInstanceLanes = true;

    // workspace() and init(): SumAndPrefixState (tree_learner.hpp): G (double), the level cache (none with
    // the noise off); scalars: max ||Z||_2, clipped rounds.

    /// x_t (call before round(t)) with the noise round(t) uses. One-lane teams (tests, inspection).
    template <class Team, class WS>
    static void play(const Params& p, const Team& team, const WS& ws, std::uint64_t t, double* x) {
        using R = typename Team::real;
        const bool noisy = p.prefix.on();
        double sq = 0.0;
        for (std::uint32_t i = 0; i < p.d; ++i) {
            const double g = team.load(ws.dbl[0], i);
            x[i] = static_cast<double>(noisy ? p.prefix.template peek_release<R>(team, ws.real[0], t, i, g)
                                             : static_cast<R>(g));
            sq += x[i] * x[i];
        }
        const double den = dmax(p.lambda, std::sqrt(sq));
        for (std::uint32_t i = 0; i < p.d; ++i) x[i] = den > 0.0 ? -x[i] / den : 0.0;
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t t, const Row& row) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using U = typename Team::template uni<double>;
        using UI = typename Team::template uni<std::uint32_t>;
        const auto G = ws.dbl[0];
        const mech::PrefixMechanism::Step st = p.prefix.step(t);
        const bool noisy = p.prefix.on();
        // Pass 1: u = G~_{t-1} = G_{t-1} + Z_{t-1}; sums <a, u>, ||u||^2, ||a||^2, ||Z||^2.
        const auto s = team.template reduce<4, 0>(p.d, [&](auto i) {
            Contrib<V, 4, 0> c;
            V u = convert<R>(team.load(G, i));
            c.sum[3] = V(R(0));
            if (noisy) { // R(G) + Z, or with lattice noise the exact node release (PrefixMechanism::release)
                const auto rel = p.prefix.release(team, st, ws.real[0], i, team.load(G, i));
                c.sum[3] = rel.noise * rel.noise;
                u = rel.value;
            }
            const V a = team.loss(row, i);
            c.sum[0] = a * u;
            c.sum[1] = u * u;
            c.sum[2] = a * a;
            return c;
        });
        // x_t = -u / max(lambda, ||u||): <a, x_t> = -<a, u> / den.
        const U au = convert<double>(s.sum[0]), nu = vsqrt(convert<double>(s.sum[1]));
        const U na = vsqrt(convert<double>(s.sum[2]));
        const U den = vmax(U(p.lambda), nu);
        const U ax = select(den > U(0.0), -au / den, U(0.0));
        const U r = ax - team.loss_exact_at(row, UI(p.d)); // r_t = <a_t, x_t> - b_t
        const bool squared = p.loss == LossFamily::Squared;
        const U loss = squared ? U(0.5) * r * r : vabs(r);
        U coef = squared ? r : lane_sign(r);
        // Clip ||grad|| = |coef| ||a|| to L. Under the family contract this only removes rounding (||a_t|| = 1 is
        // 1 +- ulp after normalisation, and the run's precision sums ||a||^2); rounds where it removes more than
        // that (relative 1e-4) are counted.
        const U gnorm = vabs(coef) * na;
        const auto clip = gnorm > U(p.lipschitz);
        coef = select(clip, coef * (U(p.lipschitz) / gnorm), coef);
        const auto clipped = gnorm > U(p.lipschitz * (1.0 + 1e-4));
        if (p.prefix.lattice) {
            // Lattice noise (docs/spec/model.md §1.11 "Computed step vectors"): g_t = coef a_t in the run's precision,
            // held to ||g_t||_2 <= L as exact reals (mech::l2_clip_factor: 1 unless rounding took it past L), each
            // coordinate rounded at random onto the lattice into the exact sum G (PrefixMechanism::accumulate).
            using D = typename Team::template lanes<double>;
            const auto cr = convert<R>(select(coef == coef, coef, U(0.0)));
            const auto q = team.template reduce<1, 0>(p.d, [&](auto i) {
                Contrib<V, 1, 0> c;
                const V g = V(cr) * team.loss(row, i);
                c.sum[0] = g * g;
                return c;
            });
            const U cf = mech::l2_clip_factor(convert<double>(q.sum[0]), p.lipschitz, p.d,
                                              sizeof(R) == 4 ? 0x1.0p-24 : 0x1.0p-53);
            team.for_each(p.d, [&](auto i) {
                const D g = convert<double>(V(cr) * team.loss(row, i)) * D(cf);
                team.store(G, i, p.prefix.accumulate(team, st, i, team.load(G, i), g));
            });
        } else {
            // Pass 2: G_t = G_{t-1} + coef a_t (exact double rows).
            team.for_each(p.d, [&](auto i) { team.store(G, i, team.load(G, i) + coef * team.loss_exact(row, i)); });
        }
        if (team.rank() == 0) {
            if (noisy) team.put(ws.scalars, 0, vmax(team.get(ws.scalars, 0), vsqrt(convert<double>(s.sum[3]))));
            team.put(ws.scalars, 1, team.get(ws.scalars, 1) + select(clipped, U(1.0), U(0.0)));
        }
        team.sync();
        return {loss, loss};
    }

    /// max_t ||Z_{t-1}||_2 (the noise x_t was computed from; 0 with the noise off) and the number of rounds whose
    /// gradient was clipped by more than rounding (0 under the family contract).
    DPR_HD static void diagnostics(const Params&, const double* scalars, double* out) {
        out[0] = scalars[0];
        out[1] = scalars[1];
    }
};

} // namespace dpr::learners
