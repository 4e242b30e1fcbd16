#pragma once
// DP-FTPL with Gaussian tree noise: Agarwal & Singh 2017 §3.2, Thm 3.5, App. A (docs/spec/as17.md §A2):
//   x_t = argmin_{x in X} <x, L~_{t-1}>,   L~_{t-1} = L_{t-1} + Z_{t-1}   (one linear-optimisation step)
// with the tree noise Z (node law N(0, sigma^2 I), padded tree: Z_{t-1} ~ N(0, k sigma^2 I), k = ceil(log2
// T)) doubling as the FTPL perturbation (Gaussian smoothing, Abernethy-Lee-Sinha-Tewari 2014). One template,
// registered once per decision set:
//   dp-ftpl-experts  X = simplex, Y = [0,1]^d:    plays the vertex e_i, i = argmin_i L~_{t-1}(i) (lowest
//                    index on ties); charged l_t(i) (expected = realised: the play given the noise is
//                    deterministic). D_X = 1, L_Y = ||Y||_2 = sqrt(d).
//   dp-ftpl-ball     X = Y = unit l2 ball:        x_t = -L~/||L~||_2 (0 if L~ = 0). D_X = 1, L_Y = 1.
//   dp-ftpl-cube     X = [-1,1]^d, Y = unit l1:   x_t(i) = -sign(L~(i)) (0 on 0). D_X = sqrt(d), L_Y = 1.
//
// Node scale (Thm 3.5 as reconstructed in docs/spec/as17.md §A2; [RECON — verify], constants are keys):
//   sigma      = max{sigma_reg, sigma_priv}
//   sigma_reg  = reg_constant L_Y sqrt(T / (sqrt(d) k)),  reg_constant = (2 pi)^(-1/4) [DERIVED: the s that
//                minimises the bound below]; 0 when k = 0 (T = 1: no prefix carries noise)
//   sigma_priv = priv_constant x the Gaussian tree calibration (calibration.hpp), i.e. for "paper"
//                L_Y k ln(k/delta)/eps (Thm A.1 [SRC:003 Thm 2.3]); "strict": sqrt(h') Delta_2
//                sqrt(2 ln(1.25/delta))/eps. 0 when privacy = false or epsilon = inf.
// privacy = false is the non-private twin "FTPL with noise scaled only for regret" (docs/spec/afkt23.md §C8):
// sigma = sigma_reg. epsilon = inf gives the same twin. noise = "none" removes the perturbation too
// (Follow The Leader, a control). privacy() reports the guarantee the sigma actually used provides
// (tree_guarantee: zCDP / classical Gaussian at the given delta), also for the twin when delta > 0.
//
// Regret (padded tree, oblivious adversary; one-shot-noise argument of Thm 3.4 with R = 0) [DERIVED]:
//   Regret_T <= 2 s D_X sqrt(d) + 2 T D_X L_Y^2 / (s sqrt(2 pi)),   s = sqrt(k) sigma,
// minimised at sigma = sigma_reg: 4 (2 pi)^(-1/4) D_X L_Y d^(1/4) sqrt(T), the d^(1/4) sqrt(T) of §3.2.
//
// Per-instance state: L[d] = L_{t-1} (double), the level cache of the tree noise (k + 1 rows of the run's
// precision, kernels/mechanisms/noisy_prefix.hpp), one scalar max_{s <= t-1} ||Z_s||_inf ("max_noise_inf",
// written by team rank 0).
#include <limits>

#include "kernels/learners/common.hpp"
#include "kernels/learners/tree_learner.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/learners/ftrl_l2.hpp"
#include "kernels/mechanisms/noisy_prefix.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace dpr::learners {

/// One linear-optimisation step argmin_{x in X} <x, u>, charged <l_t, x_t> without materialising x_t:
///   simplex  the vertex e_i of the lowest index i attaining min_i u(i) (team argmin); charged l_t(i) exactly.
///            If every u(i) is NaN (a broken noise scale), the charge is NaN, so the run reports it.
///   ball     x = -u/||u||_2 (0 at u = 0): <l, x> = -<l, u>/||u||_2         (sums <l, u>, ||u||^2)
///   cube     x = -sign(u):                <l, x> = -sum_i l_i sign(u_i)    (one sum)
template <Geometry G>
struct LinearOracleStep {
    static constexpr int kSums = G == Geometry::Ball ? 2 : 1;

    template <class V, class C>
    DPR_HD DPR_FORCEINLINE static void push(C& c, V u, V l) {
        if constexpr (G == Geometry::Ball) {
            c.sum[0] = l * u;
            c.sum[1] = u * u;
        } else {
            c.sum[0] = -(l * lane_sign(u));
        }
    }
    template <class U>
    DPR_HD DPR_FORCEINLINE static U finish(const U* sums) {
        using R = lane_scalar_t<U>;
        if constexpr (G == Geometry::Ball) {
            const U nu = vsqrt(sums[1]);
            return select(nu > U(R(0)), -sums[0] / nu, U(R(0)));
        } else {
            return sums[0];
        }
    }
};

template <Geometry G>
struct DpFtpl : SumAndPrefixState<1> {
    static constexpr const char* kName = G == Geometry::Simplex ? "dp-ftpl-experts"
                                         : G == Geometry::Ball  ? "dp-ftpl-ball"
                                                                : "dp-ftpl-cube";
    static constexpr Geometry kGeometry = G;
    /// Lattice noise: discrete Gaussian nodes (noise = "discrete-gaussian", the default in float; docs/spec/model.md
    /// §1.11); the learner plays through PrefixMechanism::release and accumulate.
    using Prefix = PrefixKeys<PrefixLaws::Gaussian, mech::TreeVariant::Padded, /*Lattice=*/false, /*GaussianLattice=*/true>;
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, "",
         "privacy parameter eps > 0 of the whole output sequence; inf = sigma_priv = 0 (the FTPL twin)",
         true},
        {"delta", KeyType::Real, "0", 0.0, 1.0, "",
         "privacy parameter delta in [0,1) of the Gaussian noise; must be > 0 when privacy = true", false,
         /*max_exclusive=*/true},
        {"privacy", KeyType::Bool, "true", 0.0, 1.0, "",
         "false = the non-private twin: sigma = sigma_reg (noise scaled only for regret, docs/spec/afkt23.md §C8)"},
        Prefix::kNoise,
        Prefix::kMechanism,
        {"calibration", KeyType::Choice, "paper", 0, 1, "paper|strict",
         "sigma_priv: paper L_Y k ln(k/delta)/eps; strict sqrt(h') Delta_2 sqrt(2 ln(1.25/delta))/eps for eps < 1, the zCDP scale (exactly eps) for eps >= 1"},
        {"reg_constant", KeyType::Real, "auto", 0.0, kInf, "",
         "c in sigma_reg = c L_Y sqrt(T/(sqrt(d) k)); auto = (2 pi)^(-1/4) = 0.6316 (A2 [DERIVED])"},
        {"priv_constant", KeyType::Real, "1", 0.0, kInf, "",
         "multiplies sigma_priv (A2 [RECON — verify]); the reported epsilon follows the sigma used", true},
        Prefix::kNodeScale,
        Prefix::kBltBuffers,
    };
    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    static constexpr int kDelta = key_index(kKeys, "delta");
    static constexpr int kPrivacy = key_index(kKeys, "privacy");
    static constexpr int kNoise = key_index(kKeys, "noise");
    static constexpr int kMechanism = key_index(kKeys, "mechanism");
    static constexpr int kCalibration = key_index(kKeys, "calibration");
    static constexpr int kRegConstant = key_index(kKeys, "reg_constant");
    static constexpr int kPrivConstant = key_index(kKeys, "priv_constant");
    static constexpr int kNodeScale = key_index(kKeys, "node_scale");

    static constexpr std::array<const char*, 1> kDiagnostics = {"max_noise_inf"};

    struct Params : Dims {
        double epsilon, delta;
        bool private_noise; ///< the privacy key
        mech::Calibration calibration;
        double sigma_reg, sigma_priv;
        mech::PrefixMechanism prefix; ///< the noise of L~ (tree_learner.hpp): sigma actually used per node
    };

    /// Loss-set norms (calibration.hpp): experts [0,1]^d, unit l2 ball, unit l1 ball.
    static mech::LossSetNorms norms(std::uint32_t d) {
        if constexpr (G == Geometry::Simplex)
            return mech::experts_loss_norms(d);
        else if constexpr (G == Geometry::Ball)
            return mech::sphere_loss_norms(d);
        else
            return mech::cube_loss_norms();
    }
    /// D_X = max_{x in X} ||x||_2 and L_Y = max_{l in Y} ||l||_2 of the A2 bound.
    static double diameter_x(std::uint32_t d) {
        return G == Geometry::Cube ? std::sqrt(static_cast<double>(d)) : 1.0;
    }
    static double lipschitz_y(std::uint32_t d) { return norms(d).y2; }
    static double default_reg_constant() { return std::pow(2.0 * kPi, -0.25); }

    /// sigma_reg = c L_Y sqrt(T / (sqrt(d) k)) (A2), 0 for T = 1 (k = 0).
    static double sigma_reg(double c, std::uint32_t d, std::uint64_t T) {
        const std::uint32_t k = ceil_log2(T);
        if (k == 0) return 0.0;
        return c * lipschitz_y(d) *
               std::sqrt(static_cast<double>(T) /
                         (std::sqrt(static_cast<double>(d)) * static_cast<double>(k)));
    }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        static_cast<Dims&>(p) = dims(pb);
        p.epsilon = kv.num[kEpsilon];
        p.delta = kv.get(kDelta, 0.0);
        p.private_noise = kv.get(kPrivacy, 1.0) != 0.0;
        p.calibration = calibration_of(kv, kCalibration);
        p.sigma_reg = sigma_reg(kv.get(kRegConstant, default_reg_constant()), p.d, p.T);
        p.sigma_priv = 0.0;
        if (p.private_noise && !std::isinf(p.epsilon))
            p.sigma_priv =
                kv.get(kPrivConstant, 1.0) *
                mech::gaussian_node_scale(p.calibration, p.epsilon, p.delta, norms(p.d), p.T, false);
        p.prefix = Prefix::resolve(kv, Prefix::template index_of<DpFtpl>(), p.T, /*off=*/false,
                                   [&](mech::NodeNoise) { return dmax(p.sigma_reg, p.sigma_priv); });
        if (!(p.prefix.scale > 0.0)) p.prefix.noise = mech::NodeNoise::None; // e.g. T = 1 and eps = inf: nothing to draw
        // Discrete Gaussian nodes when asked for, and by default in float where they apply (docs/spec/model.md §1.11).
        p.prefix = lattice_if_wanted<Prefix>(p.prefix, kv, Prefix::template index_of<DpFtpl>(), norms(p.d), pb.float_precision,
                                             p.d, p.delta);
        return p;
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (!Prefix::check_mechanism(kv, Prefix::template index_of<DpFtpl>(), diag)) return false;
        const bool gaussian = Prefix::law(kv, kNoise) == mech::NodeNoise::Gaussian;
        const bool priv = kv.get(kPrivacy, 1.0) != 0.0;
        if (gaussian && priv && !std::isinf(kv.num[kEpsilon]) && !kv.given[kNodeScale] &&
            !(kv.get(kDelta, 0.0) > 0.0))
            return diag.fail("delta",
                             "%s (Gaussian tree noise) needs delta in (0, 1) when privacy = true (got %g)",
                             kName, kv.get(kDelta, 0.0));
        const Params p = resolve(kv, pb);
        const char* key = kv.given[kNodeScale] ? "node_scale" : p.sigma_priv >= p.sigma_reg ? "epsilon" : "reg_constant";
        if (!check_node_scale(p.prefix.scale, key, "sigma = max(sigma_reg, priv_constant x sigma_priv)", diag))
            return false;
        return check_lattice_applies<Prefix>(kv, Prefix::template index_of<DpFtpl>(), p.prefix, norms(p.d), p.d, p.delta,
                                             1.0, diag);
    }

    static PrivacyReport privacy(const Params& p) {
        const bool padded = p.prefix.tree == mech::TreeVariant::Padded;
        const bool reg = p.sigma_reg >= p.sigma_priv;
        const char* mechanism =
            p.prefix.lattice ? (reg ? "Gaussian tree with lattice noise: discrete Gaussian nodes, exact releases; sigma = "
                                      "sigma_reg (regret-dominated)"
                                    : "Gaussian tree with lattice noise: discrete Gaussian nodes, exact releases; sigma = "
                                      "sigma_priv (privacy-dominated)")
            : p.prefix.honaker ? (reg ? "binary Gaussian tree with Honaker's estimator, sigma = sigma_reg (regret-dominated)"
                                    : "binary Gaussian tree with Honaker's estimator, sigma = sigma_priv (privacy-dominated)")
            : padded ? (reg ? "padded Gaussian tree (AS17 Alg. 2), sigma = sigma_reg (regret-dominated)"
                            : "padded Gaussian tree (AS17 Alg. 2), sigma = sigma_priv (privacy-dominated)")
                     : (reg ? "binary Gaussian tree, sigma = sigma_reg (regret-dominated)"
                            : "binary Gaussian tree, sigma = sigma_priv (privacy-dominated)");
        return prefix_privacy_report(p.prefix, p.delta, norms(p.d), calibration_name(p.calibration), mechanism);
    }

    static constexpr bool kInstanceLanes = true;

    // workspace() and init(): SumAndPrefixState (tree_learner.hpp): L (double), the level cache (k + 1 rows,
    // none with the noise off); 1 scalar: max ||Z||_inf.

    /// x_t (call before round(t)): argmin_{x in X} <x, L~_{t-1}>, with the noise round(t) uses. One-lane
    /// teams (tests, inspection).
    template <class Team, class WS>
    static void play(const Params& p, const Team& team, const WS& ws, std::uint64_t t, double* x) {
        using R = typename Team::real;
        const bool noisy = p.prefix.on();
        auto u = [&](std::uint32_t i) {
            const double L = team.load(ws.dbl[0], i);
            return noisy ? p.prefix.template peek_release<R>(team, ws.real[0], t, i, L) : static_cast<R>(L);
        };
        if constexpr (G == Geometry::Simplex) {
            std::uint32_t star = 0;
            for (std::uint32_t i = 1; i < p.d; ++i)
                if (u(i) < u(star)) star = i;
            for (std::uint32_t i = 0; i < p.d; ++i) x[i] = i == star ? 1.0 : 0.0;
        } else if constexpr (G == Geometry::Ball) {
            double sq = 0.0;
            for (std::uint32_t i = 0; i < p.d; ++i) {
                x[i] = static_cast<double>(u(i));
                sq += x[i] * x[i];
            }
            const double n = std::sqrt(sq);
            for (std::uint32_t i = 0; i < p.d; ++i) x[i] = n > 0.0 ? -x[i] / n : 0.0;
        } else {
            for (std::uint32_t i = 0; i < p.d; ++i) {
                const R v = u(i);
                x[i] = v > 0 ? -1.0 : (v < 0 ? 1.0 : 0.0);
            }
        }
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t t, const Row& row) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using U = typename Team::template uni<double>;
        using Step = LinearOracleStep<G>;
        const auto L = ws.dbl[0];
        const mech::PrefixMechanism::Step st = p.prefix.step(t);
        const bool noisy = p.prefix.on();
        // u = L~_{t-1} = L_{t-1} + Z_{t-1} (exactly L_{t-1} with the noise off); |Z| for the diagnostic. Through the
        // seam's release and accumulate: without lattice noise R(L) + Z and L + l, with it the exact node release and
        // l rounded at random onto the lattice (tree_learner.hpp).
        auto perturbed = [&](auto i, V& zabs) {
            V u = convert<R>(team.load(L, i));
            zabs = V(R(0));
            if (noisy) {
                const auto rel = p.prefix.release(team, st, ws.real[0], i, team.load(L, i));
                zabs = vabs(rel.noise);
                u = rel.value;
            }
            // L + l, or with lattice noise l rounded onto the lattice (never with the noise off).
            team.store(L, i, p.prefix.accumulate(team, st, i, team.load(L, i), team.loss_exact(row, i)));
            return u;
        };
        U e;
        typename Team::template uni<R> zmax;
        if constexpr (G == Geometry::Simplex) {
            const auto a = team.template argmin<1>(p.d, [&](auto i) {
                ArgContrib<V, 1> c;
                c.key = perturbed(i, c.max[0]);
                return c;
            });
            const U charged = team.loss_exact_at(row, a.arg);
            e = select(mask_for<double>(a.key == a.key), charged, U(std::numeric_limits<double>::quiet_NaN()));
            zmax = a.max[0];
        } else {
            const auto s = team.template reduce<Step::kSums, 1>(p.d, [&](auto i) {
                Contrib<V, Step::kSums, 1> c;
                const V u = perturbed(i, c.max[0]);
                Step::push(c, u, team.loss(row, i));
                return c;
            });
            e = convert<double>(Step::finish(s.sum));
            zmax = s.max[0];
        }
        if (noisy && team.rank() == 0) team.put(ws.scalars, 0, vmax(team.get(ws.scalars, 0), convert<double>(zmax)));
        return {e, e};
    }

    /// max_{t=1..T} ||Z_{t-1}||_inf (the perturbation x_t was computed from); 0 with noise off.
    DPR_HD static void diagnostics(const Params&, const double* scalars, double* out) { out[0] = scalars[0]; }
};

using DpFtplExperts = DpFtpl<Geometry::Simplex>;
using DpFtplBall = DpFtpl<Geometry::Ball>;
using DpFtplCube = DpFtpl<Geometry::Cube>;

} // namespace dpr::learners
