#pragma once
// The claimed trade-off curve of an audit and the f-DP test against it (docs/AUDITS.md "The claimed trade-off
// curve"; issue 49, item 3).
//
// A claim of (eps, delta)-DP says that no test of D against D' has type-II error below f_{eps,delta}(type-I
// error) (Wasserman & Zhou 2010; Dong, Roth & Su 2019, "Gaussian differential privacy", §2). Many learners
// promise more than their eps: the noise they add has a known law, and the exact trade-off function of the
// pair (D, D') through that noise lies strictly above f_{eps,0} in the middle of the square. An
// implementation whose noise is 10% too small keeps its eps-bound far below the claim there (the bound of one
// event is limited by its tails: dp_ftrl_experts_tight reaches 0.86 of its claim at most) but falls visibly
// below the exact curve in the middle. This test compares the empirical privacy region with that curve:
//
//   Gaussian noise (the claim states mu of mu-GDP): f = G_mu, G_mu(a) = Phi(Phi^-1(1 - a) - mu) (their
//   Def. 2.6),
//       valid for every neighbouring pair;
//   Laplace tree nodes (AS17's DP-FTRL learners with continuous Laplace noise, whose nodes hold the loss
//   vector):
//       everything the learner releases that depends on l_{t0} is at most h' nodes, each the pair's
//       difference v = l_{t0} - l'_{t0} plus independent Laplace(b) noise per coordinate, so f is the
//       trade-off function of prod over h' x d components of Lap(0, 1) against Lap(|v_j| / b, 1)
//       (post-processing: their §2; composition: their §3.1), computed from the privacy-loss distribution
//       below;
//   otherwise: f_{eps,delta} of the claimed (eps, delta).
//
// The Laplace composition, computed so that the curve is never above the true one (a test never flags a
// correct learner because of the computation): the privacy loss L = ln(dQ/dP) of one component Lap(0,1) vs
// Lap(m,1) is -m with P-probability 1/2, +m with e^-m / 2, and 2x - m for x in (0, m) under P; each
// component's L is rounded UP to a grid of step h, the rounded losses are summed by convolution under P, and
//     delta(eps) = E_P[(e^L - e^eps)_+]
// is computed from the rounded distribution: rounding L up only increases it, so it bounds the pair's
// hockey-stick divergence from above at every eps, in both directions (each component is symmetric under x ->
// m - x). Then
//     f(a) = max over eps of f_{eps,delta(eps)}(a),   f_{e,d}(a) = max(0, 1 - d - e^e a, e^-e (1 - d - a)),
// (their Prop. 2.12) is below the true trade-off function at every a: every (eps, delta(eps)) is a valid
// guarantee, and so is (sum m, 0), whose f_{sum m, 0} keeps the curve's two ends exact. The grid: h = (sum of
// the components' m) / 8192; at most kMaxLaplaceComponents components are composed (the rounding adds at most
// (components) x h to L); a pair with more falls back to f_{eps,delta}.
//
// The test: by the Dvoretzky-Kiefer-Wolfowitz inequality with Massart's constant, each side's empirical
// distribution function over its n trials is within e_n = sqrt(ln(4 / alpha) / (2 n)) of the true one at
// every threshold at once with probability >= 1 - alpha/2, so both hold with >= 1 - alpha. For every
// threshold x of the privacy region and each of the four tests (reject the base side, or the neighbour side,
// when S >= x, or when S <= x) with empirical type-I error a and type-II error b: the true errors are at most
// a + e and b + e, and since f decreases, a correct claim has b + e_alt >= f(a + e_null). A row where b +
// e_alt < f(a + e_null) is a violation of the claimed curve at confidence 1 - alpha, for every row at once.
// Its verdict is its own, like the (eps, delta) curve's: the audit's verdict stays that of its main bound.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/learners/common.hpp"

namespace dpr::audit {

/// The empirical privacy region: at thresholds x (200 quantiles of the pooled selection shares), the fraction
/// of each side's trials (all of them) at or above and at or below x (descriptive); and the claimed trade-off
/// curve f (tradeoff.hpp) at each of those four fractions: f_X = f(X), the least type-II error the claim
/// allows the test whose type-I error is X (NaN when no curve was computed).
struct RegionRow {
    double threshold, base_ge, neighbour_ge, base_le, neighbour_le;
    double f_base_ge = std::nan(""), f_neighbour_ge = std::nan(""), f_base_le = std::nan(""),
           f_neighbour_le = std::nan("");
};

/// A trade-off function the claim implies for the audited pair.
class ClaimedTradeoff {
  public:
    enum class Kind { EpsDelta, Gaussian, LaplaceComposition };
    static constexpr std::size_t kMaxLaplaceComponents = 128;
    static constexpr int kGrid = 8192;
    static constexpr double kMaxLaplaceEpsilon = 700.0; ///< sum of m_i, so that e^L stays finite

    static ClaimedTradeoff eps_delta(double epsilon, double delta);
    static ClaimedTradeoff gaussian(double mu);
    /// prod_i T(Lap(0, 1), Lap(m_i, 1)); m_i > 0, at most kMaxLaplaceComponents of them.
    static ClaimedTradeoff laplace(const std::vector<double>& m);

    /// f(a): the least type-II error the claim allows a test of type-I error a (a clamped to [0, 1]).
    double beta(double a) const;
    Kind kind() const { return kind_; }
    const std::string& describe() const { return describe_; }
    /// Laplace composition: the bound on delta(eps) at the grid's losses (tests compare it with the exact
    /// one).
    double laplace_delta(double eps) const;

  private:
    Kind kind_ = Kind::EpsDelta;
    std::string describe_;
    double epsilon_ = 0.0, delta_ = 0.0, mu_ = 0.0;
    std::vector<double> eps_; ///< Laplace: the grid's losses >= 0, ascending
    std::vector<double> delta_of_eps_, exp_eps_;
};

/// The curve of a learner's claim for the audited pair (see the header): `difference` l_{t0} - l'_{t0} over the
/// loss family's numbers; the exact noise curve where the report says its nodes hold the losses
/// (PrivacyReport::nodes_hold_losses). `why` says why the exact noise curve was not used (empty when it was).
ClaimedTradeoff learner_tradeoff(const learners::PrivacyReport& claim, const std::vector<double>& difference,
                                 std::string* why);

struct FdpTest {
    bool tested = false;
    std::string claim;     ///< the curve, described
    std::string exact_why; ///< why the exact noise curve was not used ("" when it was)
    double alpha = 0.05;
    double band0 = 0.0, band1 = 0.0; ///< DKW half-widths of the base and neighbour sides
    bool violation = false;
    /// The row and test with the largest margin f(a + e_null) - (b + e_alt) (> 0: a violation).
    double threshold = 0.0;
    std::string test; ///< "reject the base side when S >= x", ...
    double type1 = 0.0, type2 = 0.0, claimed_type2 = 0.0, margin = 0.0;
    double point_claimed_type2 = 0.0; ///< f(a), without the band (descriptive)
};

/// Tests the rows of a privacy region counted on the evaluation shares (fractions over n0 base and n1
/// neighbour trials that chose nothing: with weights = "fitted" the selection trials' statistic is fitted on
/// them, so they are no sample of its law) against `f` at confidence 1 - alpha.
FdpTest fdp_test(const ClaimedTradeoff& f, const std::vector<RegionRow>& rows, std::uint64_t n0,
                 std::uint64_t n1, double alpha);
/// Fills each row's claimed columns (RegionRow::f_*) with f at its four fractions (privacy_region.csv).
void fill_claimed(const ClaimedTradeoff& f, std::vector<RegionRow>& region);

} // namespace dpr::audit
