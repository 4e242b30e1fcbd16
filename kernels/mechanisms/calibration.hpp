#pragma once
// Node-noise calibration of the tree mechanisms (docs/spec/model.md §1.4, §1.5) and the REVERSE: the
// privacy guarantee that a given node scale actually provides (docs/ARCHITECTURE.md §3: every private learner
// reports the guarantee computed from its noise parameters, the accountant, and the calibration).
//
// Neighbours are replace-one (docs/spec/model.md §0.4): one round's loss l_t -> l'_t. A leaf lies in one
// node per level, so the vector of all RELEASED node values has l1-sensitivity h' Delta_1 and
// l2-sensitivity sqrt(h') Delta_2, where h' is the number of levels whose nodes are ever released
// (levels_released below) and Delta_p = max_{l,l' in Y} ||l - l'||_p (§1.4 "Privacy"). The padding
// draws of §1.5 are data independent and do not change privacy.
//
// Two calibrations (the caveat of docs/spec/model.md §1.5; docs/ARCHITECTURE.md §3):
//   Paper   AS17 Lemma 3.3 / Thm A.1 as printed, with log = log2 and k = ceil(log2 T):
//             Laplace   lambda = ||Y||_1 k / eps
//             Gaussian  sigma  = ||Y||_2 k ln(k / delta) / eps
//   Strict  exact replace-one sensitivity and released depth h':
//             Laplace   lambda = Delta_1 h' / eps                                  (§1.1, §1.4)
//             Gaussian  sigma  = sqrt(h') Delta_2 sqrt(2 ln(1.25/delta)) / eps     (§1.2, §1.4; eps < 1)
//                       sigma  = sqrt(h'/(2 rho)) Delta_2, rho from zCDP at (eps, delta)   (eps >= 1)
//
// Factor-2 caveat (docs/spec/checks.md §4.5, docs/spec/model.md §0.4): AS17 uses ||Y||_1 where replace-one
// sensitivity is max ||l - l'||_1, which equals ||Y||_1 when Y ⊆ [0,1]^N but can be 2 ||Y||_1 for symmetric Y
// (sphere, cube); and AS17 counts k = ceil(log2 T) levels, one fewer than are released when L~_T is released and T is
// a power of two. So "paper" can provide a LARGER epsilon than the one it was calibrated for; tree_guarantee()
// reports the real one. For experts (Y ⊆ [0,1]^N) Delta_1 = ||Y||_1 = N and Delta_2 = ||Y||_2 = sqrt(N)
// (experts_loss_norms), and the two Laplace calibrations agree whenever h' = k.
//
// All functions are device-callable; none throws. Preconditions (host code validates): eps > 0,
// 0 < delta < 1 for Gaussian, T >= 1, norms >= 0.
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/core/hd.hpp"
#include "kernels/core/math.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace dpr::mech {

/// The largest noise scale (a node's Laplace b or Gaussian sigma, a feedback noise's lambda) the engine
/// accepts. Its draws reach ~17 scales (24-bit uniforms), a padded prefix sums up to 33 of them, and all of it
/// must stay finite in float arithmetic (3.4e38): 1e30 leaves room for T and d. A scale that large makes every
/// play uniformly random anyway; configurations that resolve to more are refused naming the key.
inline constexpr double kMaxNoiseScale = 1e30;

/// `paper` = the paper's formula; `strict` = exact replace-one sensitivity and released tree depth.
enum class Calibration : std::uint8_t { Paper, Strict };

/// Norms of the loss set Y (AS17 §2; docs/spec/model.md §0.2, §0.4).
struct LossSetNorms {
    double y1 = 0.0;     ///< ||Y||_1 = max_{l in Y} ||l||_1        (paper Laplace)
    double y2 = 0.0;     ///< ||Y||_2 = max_{l in Y} ||l||_2        (paper Gaussian)
    double delta1 = 0.0; ///< replace-one Delta_1 = max_{l,l' in Y} ||l - l'||_1   (strict, guarantee)
    double delta2 = 0.0; ///< replace-one Delta_2 = max_{l,l' in Y} ||l - l'||_2   (strict, guarantee)
};

/// Experts, Y = [0,1]^N (§0.2; AFKT23's convention; AS17's {||l||_inf <= 1} restricted to the
/// non-negative losses of the experts problem): ||Y||_1 = Delta_1 = N, ||Y||_2 = Delta_2 = sqrt(N).
DPR_HD inline LossSetNorms experts_loss_norms(std::uint32_t N) {
    const double n = static_cast<double>(N);
    return LossSetNorms{n, std::sqrt(n), n, std::sqrt(n)};
}
/// OLO over the sphere, Y = unit l2 ball in R^N (§0.2, §2 A1 table): ||Y||_1 = sqrt(N), ||Y||_2 = 1;
/// symmetric, so Delta_1 = 2 sqrt(N), Delta_2 = 2 (the factor-2 caveat).
DPR_HD inline LossSetNorms sphere_loss_norms(std::uint32_t N) {
    const double r = std::sqrt(static_cast<double>(N));
    return LossSetNorms{r, 1.0, 2.0 * r, 2.0};
}
/// OLO over the cube, Y = unit l1 ball (§0.2, §2 A1 table): ||Y||_1 = ||Y||_2 = 1; Delta_1 = Delta_2 = 2
/// (l = e_1, l' = -e_1).
DPR_HD inline LossSetNorms cube_loss_norms() {
    return LossSetNorms{1.0, 1.0, 2.0, 2.0};
}

/// h' = number of tree levels whose nodes are ever released (docs/spec/model.md §1.4, privacy):
///   ceil(log2 T)       when only L~_0..L~_{T-1} are released (AS17's FTRL consumes just these);
///   floor(log2 T) + 1  when L~_T is released too (= ceil(log2 T) + 1 for T a power of two: the root).
/// T = 1: 0 without the final release (nothing released depends on the data), 1 with it.
DPR_HD constexpr inline std::uint32_t levels_released(std::uint64_t T, bool release_final) {
    return release_final ? floor_log2(T) + 1 : ceil_log2(T);
}

/// Laplace node scale lambda (Lap(lambda) per coordinate per node).
///   Paper  lambda = ||Y||_1 ceil(log2 T) / eps        AS17 Lemma 3.3 [SRC:002 s.78, SRC:003 Thm 2.3]
///   Strict lambda = Delta_1 h' / eps                   §1.4 (h' l1-sensitivity, §1.1 Laplace mech.)
/// release_final only affects Strict (the paper counts ceil(log2 T) levels regardless).
DPR_HD inline double laplace_node_scale(Calibration cal, double eps, const LossSetNorms& y, std::uint64_t T,
                                        bool release_final) {
    if (cal == Calibration::Paper) return y.y1 * static_cast<double>(ceil_log2(T)) / eps;
    return y.delta1 * static_cast<double>(levels_released(T, release_final)) / eps;
}

/// Gaussian node scale sigma (N(0, sigma^2) per coordinate per node).
///   Paper  sigma = ||Y||_2 k ln(k/delta) / eps, k = ceil(log2 T)
///          AS17 Thm A.1 [SRC:003 Thm 2.3]; §2 A1 "Gaussian variant". The formula is followed as
///          printed: at k = 1 it is ||Y||_2 ln(1/delta)/eps (positive for delta < 1); at k = 0 (T = 1)
///          the prefixes L~_0..L~_{T-1} carry no node at all and the formula's k * ln(0) is read as
///          its limit 0.
///   Strict sigma = sqrt(h') Delta_2 sqrt(2 ln(1.25/delta)) / eps                         for eps < 1
///          §1.4 (sqrt(h') l2-sensitivity) + §1.2 classical Gaussian mechanism (Dwork-Roth Thm A.1),
///          a valid (eps, delta) guarantee for eps < 1 only; for eps >= 1 the zCDP scale below
///          (gaussian_node_scale_zcdp), which tree_guarantee() reports as exactly eps. (The classical
///          formula used at every eps gave 1.2 eps at eps = 10: issue 48.)
DPR_HD inline double gaussian_node_scale_zcdp(double eps, double delta, const LossSetNorms& y, std::uint64_t T,
                                              bool release_final);
DPR_HD inline double gaussian_node_scale(Calibration cal, double eps, double delta, const LossSetNorms& y,
                                         std::uint64_t T, bool release_final) {
    if (cal == Calibration::Paper) {
        const std::uint32_t k = ceil_log2(T);
        if (k == 0) return 0.0;
        const double kd = static_cast<double>(k);
        return y.y2 * kd * (std::log(kd) - std::log(delta)) / eps; // ln(k/delta), finite for any delta > 0
    }
    if (!(eps < 1.0)) return gaussian_node_scale_zcdp(eps, delta, y, T, release_final);
    const double hp = static_cast<double>(levels_released(T, release_final));
    return std::sqrt(hp) * y.delta2 * std::sqrt(2.0 * (std::log(1.25) - std::log(delta))) / eps;
}

/// Gaussian node scale from zCDP, valid for every eps > 0 (the classical formula above needs eps < 1):
/// the rho with rho + 2 sqrt(rho ln(1/delta)) = eps is rho = (sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta)))^2
/// (§1.2 conversion solved for sqrt(rho)), and sigma = sqrt(h'/(2 rho)) Delta_2 (§1.4). Not one of the
/// two Calibration modes; offered for eps >= 1 and for comparisons. tree_guarantee() of this sigma
/// reports "zcdp" with exactly eps (or the classical one when that is smaller and valid).
DPR_HD inline double gaussian_node_scale_zcdp(double eps, double delta, const LossSetNorms& y,
                                              std::uint64_t T, bool release_final) {
    const double hp = static_cast<double>(levels_released(T, release_final));
    const double L = -std::log(delta);
    const double r = std::sqrt(L + eps) - std::sqrt(L);
    return std::sqrt(hp / 2.0) * y.delta2 / r;
}

/// Node scale for the node law `noise` (0 for None / Constant, which are not private). delta is
/// ignored for Laplace.
DPR_HD inline double node_scale(NodeNoise noise, Calibration cal, double eps, double delta,
                                const LossSetNorms& y, std::uint64_t T, bool release_final) {
    switch (noise) {
    case NodeNoise::Laplace:
        return laplace_node_scale(cal, eps, y, T, release_final);
    case NodeNoise::Gaussian:
        return gaussian_node_scale(cal, eps, delta, y, T, release_final);
    default:
        return 0.0;
    }
}

// ---- the reverse: what a given node scale provides ------------------------------------------------

/// zCDP of the released node vector with Gaussian node noise sigma (§1.2, §1.4):
/// rho = h' Delta_2^2 / (2 sigma^2) (h' levels, one node each per leaf; zCDP composes additively).
DPR_HD inline double zcdp_rho(double sigma, double delta2, std::uint32_t hprime) {
    if (hprime == 0) return 0.0;
    if (!(sigma > 0.0)) return std::numeric_limits<double>::infinity();
    return static_cast<double>(hprime) * delta2 * delta2 / (2.0 * sigma * sigma);
}

/// rho-zCDP -> (eps, delta)-DP: eps = rho + 2 sqrt(rho ln(1/delta)) (§1.2; Bun-Steinke 2016 Prop 1.3).
DPR_HD inline double zcdp_epsilon(double rho, double delta) {
    return rho + 2.0 * std::sqrt(rho * -std::log(delta));
}

/// Classical Gaussian mechanism read backwards (§1.2, Dwork-Roth Thm A.1, l2-sensitivity
/// sqrt(h') Delta_2): eps = sqrt(h') Delta_2 sqrt(2 ln(1.25/delta)) / sigma. The theorem holds only
/// for eps < 1; the caller checks that.
DPR_HD inline double gaussian_classical_epsilon(double sigma, double delta2, std::uint32_t hprime,
                                                double delta) {
    if (hprime == 0) return 0.0;
    if (!(sigma > 0.0)) return std::numeric_limits<double>::infinity();
    return std::sqrt(static_cast<double>(hprime)) * delta2 * std::sqrt(2.0 * (std::log(1.25) - std::log(delta))) / sigma;
}

/// The guarantee a tree release provides.
///   accountant "pure-laplace"        (epsilon, 0)-DP, exact (Laplace mechanism, l1-sensitivity)
///              "gaussian-classical"  Dwork-Roth Thm A.1 at the given delta (valid since epsilon < 1)
///              "zcdp"                rho-zCDP converted at the given delta
///              "none"                no data-dependent release (h' = 0: epsilon = 0, delta = 0), or no
///                                    privacy (noise None/Constant or scale 0: epsilon = +inf)
///   rho is the zCDP parameter of the release (Laplace: epsilon-DP implies epsilon^2/2-zCDP, Bun-Steinke 2016
///   Prop 1.4), for composition by the host accountant; 0 for "lattice-gaussian", whose (epsilon, delta) with its
///   tails is not a zCDP statement (lattice_gaussian.hpp, docs/spec/model.md §1.11).
struct Guarantee {
    double epsilon = 0.0;
    double delta = 0.0;
    const char* accountant = "none";
    double rho = 0.0;
    /// mu of mu-Gaussian-DP (Dong, Roth & Su 2019), 0 when the noise is not Gaussian: the nodes one loss enters
    /// form one Gaussian mechanism of L2 sensitivity sqrt(h') Delta_2 (adaptive composition of Gaussian
    /// mechanisms is again Gaussian, their Cor. 3.3), so mu = sqrt(h') Delta_2 / sigma = sqrt(2 rho) exactly.
    /// The audit's "gdp" bound compares with it (docs/AUDITS.md "Gaussian-DP bound").
    double gdp_mu = 0.0;
    /// The guarantee holds for the implementation as it runs in floating point, in float as in double (the exact
    /// samplers: lattice noise, docs/spec/model.md §1.8-§1.10), not only for exact real-valued noise.
    bool as_run = false;
};

/// The guarantee of Gaussian noise sigma when everything released about one step has squared L2 sensitivity
/// h Delta_2^2 (h = h' levels of a tree, sum_k c_k^2 for BLT), stated at `delta`: rho = h Delta_2^2 / (2 sigma^2)
/// (zcdp_rho), mu = sqrt(h) Delta_2 / sigma, and the smaller valid epsilon of the classical bound (when < 1) and
/// the zCDP conversion. Preconditions: h > 0, sigma > 0.
DPR_HD inline Guarantee gaussian_guarantee(double sigma, double h, double delta2, double delta) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const double rho = h * delta2 * delta2 / (2.0 * sigma * sigma);
    const double mu = std::sqrt(h) * delta2 / sigma;
    if (!(delta > 0.0 && delta < 1.0)) return Guarantee{inf, delta, "none", rho, mu};
    const double eps_z = zcdp_epsilon(rho, delta);
    const double eps_c = std::sqrt(h) * delta2 * std::sqrt(2.0 * (std::log(1.25) - std::log(delta))) / sigma;
    if (eps_c < 1.0 && eps_c < eps_z) return Guarantee{eps_c, delta, "gaussian-classical", rho, mu};
    return Guarantee{eps_z, delta, "zcdp", rho, mu};
}

/// Guarantee of BLT noise (blt.hpp; docs/MECHANISMS.md §3.5): the Gaussian mechanism on C v, whose L2 sensitivity is
/// sqrt(sens2) Delta_2 (sens2 = sum_k c_k^2, C's largest column). Gaussian only: with Laplace noise BLT has no
/// guarantee the engine states (its l1 column norm is large; the learners refuse the combination).
DPR_HD inline Guarantee blt_guarantee(NodeNoise noise, double sigma, double delta, const LossSetNorms& y,
                                      double sens2) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    if (!(sens2 > 0.0)) return Guarantee{0.0, 0.0, "none", 0.0};
    if (noise != NodeNoise::Gaussian || !(sigma > 0.0)) return Guarantee{inf, 0.0, "none", inf};
    return gaussian_guarantee(sigma, sens2, y.delta2, delta);
}

/// Guarantee of a tree whose every node carries `noise` with scale `scale`, over horizon T, with or
/// without releasing L~_T, against replace-one neighbours with sensitivities y.delta1 / y.delta2.
/// `delta` is the target delta at which Gaussian guarantees are stated (ignored for Laplace).
DPR_HD inline Guarantee tree_guarantee(NodeNoise noise, double scale, double delta, const LossSetNorms& y,
                                       std::uint64_t T, bool release_final) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const std::uint32_t hp = levels_released(T, release_final);
    if (hp == 0) return Guarantee{0.0, 0.0, "none", 0.0};
    const bool private_law = noise == NodeNoise::Laplace || noise == NodeNoise::Gaussian;
    if (!private_law || !(scale > 0.0)) return Guarantee{inf, 0.0, "none", inf};
    if (noise == NodeNoise::Laplace) {
        // §1.4: lambda = h' Delta_1 / eps  <=>  eps = h' Delta_1 / lambda (exact, replace-one).
        const double eps = static_cast<double>(hp) * y.delta1 / scale;
        return Guarantee{eps, 0.0, "pure-laplace", 0.5 * eps * eps};
    }
    return gaussian_guarantee(scale, static_cast<double>(hp), y.delta2, delta);
}

/// Same, for a TreeNoise (its noise, scale and T).
DPR_HD inline Guarantee tree_guarantee(const TreeNoise& tn, double delta, const LossSetNorms& y,
                                       bool release_final) {
    return tree_guarantee(tn.noise, tn.scale, delta, y, tn.T, release_final);
}

} // namespace dpr::mech
