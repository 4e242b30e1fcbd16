// The claimed trade-off curve and the f-DP test (host/audit/tradeoff.hpp; docs/AUDITS.md "The claimed
// trade-off curve"): the Laplace composition is never above the exact trade-off function (checked against the
// closed form for one component and against an independent numerical Neyman-Pearson computation for two) and
// within 2e-3 of it; G_mu and f_(eps, delta) are their formulas; the learner's curve is the exact one only
// where the release is Laplace nodes over the loss vector; the DKW test flags a region from 0.9 of the noise
// and not the exact region.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "host/audit/tradeoff.hpp"

namespace dpr {
namespace {

using audit::ClaimedTradeoff;

/// T(Lap(0, 1), Lap(m, 1)) in closed form: 1 - e^m a up to a = e^-m / 2, e^-m / (4 a) up to 1/2, e^-m (1 - a)
/// after.
double laplace_exact(double m, double a) {
    if (a <= 0.5 * std::exp(-m)) return 1.0 - std::exp(m) * a;
    if (a <= 0.5) return std::exp(-m) / (4.0 * a);
    return std::exp(-m) * (1.0 - a);
}

TEST(ClaimedTradeoff, OneLaplaceComponentIsItsClosedFormFromBelow) {
    for (double m : {0.1, 0.5, 1.0, 3.0}) {
        const ClaimedTradeoff f = ClaimedTradeoff::laplace({m});
        for (int i = 0; i <= 1000; ++i) {
            const double a = i / 1000.0;
            const double exact = laplace_exact(m, a);
            EXPECT_LE(f.beta(a), exact + 1e-12) << "m " << m << " a " << a << ": above the true curve";
            EXPECT_GE(f.beta(a), exact - 2e-3 * m) << "m " << m << " a " << a << ": needlessly loose";
        }
        EXPECT_DOUBLE_EQ(f.beta(0.0), 1.0);
        EXPECT_DOUBLE_EQ(f.beta(1.0), 0.0);
    }
}

/// The privacy loss L of one component Lap(0, 1) vs Lap(m, 1) at or below s, under P (q = false) or Q (q =
/// true).
double loss_cdf(double m, double s, bool q) {
    if (s < -m) return 0.0;
    if (s >= m) return 1.0;
    const double x = 0.5 * (s + m); // L <= s  <=>  X <= x
    return q ? 0.5 * std::exp(x - m) : 1.0 - 0.5 * std::exp(-x);
}

/// Points (a, b) of T(Lap(0,1)^2, Lap(m1,1) x Lap(m2,1)) by the Neyman-Pearson test {L1 + L2 > tau},
/// integrating over the first component's loss numerically (its atoms exactly): independent of the
/// implementation.
std::vector<std::pair<double, double>> two_component_points(double m1, double m2) {
    std::vector<std::pair<double, double>> pts;
    for (int k = -40; k <= 40; ++k) {
        const double tau = k / 40.0 * (m1 + m2);
        double a = 0.0, b = 0.0; // a = P(L > tau), b = Q(L <= tau)
        // Atoms of L1: -m1 (P 1/2, Q e^-m1 / 2), +m1 (P e^-m1 / 2, Q 1/2).
        a += 0.5 * (1.0 - loss_cdf(m2, tau + m1, false)) +
             0.5 * std::exp(-m1) * (1.0 - loss_cdf(m2, tau - m1, false));
        b += 0.5 * std::exp(-m1) * loss_cdf(m2, tau + m1, true) + 0.5 * loss_cdf(m2, tau - m1, true);
        // 0 < x < m1: L1 = 2x - m1, densities e^-x / 2 (P) and e^(x - m1) / 2 (Q); midpoint rule.
        const int n = 200000;
        for (int i = 0; i < n; ++i) {
            const double x = (i + 0.5) * m1 / n, l1 = 2 * x - m1, w = m1 / n;
            a += w * 0.5 * std::exp(-x) * (1.0 - loss_cdf(m2, tau - l1, false));
            b += w * 0.5 * std::exp(x - m1) * loss_cdf(m2, tau - l1, true);
        }
        pts.emplace_back(a, b);
    }
    return pts;
}

TEST(ClaimedTradeoff, TwoLaplaceComponentsMatchAnIndependentNeymanPearsonComputationFromBelow) {
    for (const auto& [m1, m2] : std::vector<std::pair<double, double>>{{0.5, 0.5}, {0.3, 1.2}}) {
        const ClaimedTradeoff f = ClaimedTradeoff::laplace({m1, m2});
        for (const auto& [a, b] : two_component_points(m1, m2)) {
            if (a <= 0.0 || a >= 1.0) continue;
            EXPECT_LE(f.beta(a), b + 1e-6) << m1 << "," << m2 << " at a = " << a << ": above the true curve";
            EXPECT_GE(f.beta(a), b - 2e-3) << m1 << "," << m2 << " at a = " << a << ": needlessly loose";
        }
    }
    // The composition is strictly more private than f_(m1 + m2, 0) in the middle (the reason the exact curve
    // matters: an eps-only bound is measured against that line).
    const ClaimedTradeoff two = ClaimedTradeoff::laplace({0.5, 0.5}),
                          eps = ClaimedTradeoff::eps_delta(1.0, 0.0);
    EXPECT_GT(two.beta(0.3), eps.beta(0.3) + 0.15);
    EXPECT_THROW(ClaimedTradeoff::laplace({400.0, 400.0}), std::invalid_argument) << "e^800 would overflow";
}

TEST(ClaimedTradeoff, GaussianAndEpsDeltaAreTheirFormulas) {
    const ClaimedTradeoff g = ClaimedTradeoff::gaussian(1.0);
    EXPECT_NEAR(g.beta(0.5), 0.15865525393145707, 1e-12); // Phi(-1)
    EXPECT_NEAR(g.beta(0.05), 0.7404889771585558, 1e-12); // Phi(Phi^-1(0.95) - 1), from scipy
    const ClaimedTradeoff e = ClaimedTradeoff::eps_delta(1.0, 0.01);
    EXPECT_NEAR(e.beta(0.1), 1.0 - 0.01 - std::exp(1.0) * 0.1, 1e-15);
    EXPECT_NEAR(e.beta(0.6), std::exp(-1.0) * (1.0 - 0.01 - 0.6), 1e-15);
    EXPECT_EQ(e.beta(0.99), 0.0);
}

learners::PrivacyReport laplace_tree_report(double eps, double b, double levels, const char* accountant,
                                            bool nodes_hold_losses = true) {
    learners::PrivacyReport r;
    r.epsilon = eps;
    r.accountant = accountant;
    r.noise_scale = b;
    r.sensitivity_squared = levels;
    r.nodes_hold_losses = nodes_hold_losses;
    return r;
}

TEST(ClaimedTradeoff, TheLearnersExactCurveOnlyWhereItsNodesAreLaplaceOverTheLossVector) {
    std::string why;
    // dp_ftrl_experts_tight: b = 2, h' = 1, the pair (0, 1) vs (1, 0): two components of 1/2.
    const auto r = laplace_tree_report(1.0, 2.0, 1.0, "pure-laplace");
    const ClaimedTradeoff f = audit::learner_tradeoff(r, {-1.0, 1.0}, &why);
    EXPECT_EQ(f.kind(), ClaimedTradeoff::Kind::LaplaceComposition);
    EXPECT_TRUE(why.empty()) << why;
    EXPECT_NEAR(f.beta(0.3), ClaimedTradeoff::laplace({0.5, 0.5}).beta(0.3), 1e-15);
    // Two levels: four components.
    const ClaimedTradeoff f2 =
        audit::learner_tradeoff(laplace_tree_report(2.0, 2.0, 2.0, "pure-laplace"), {2.0}, &why);
    EXPECT_NEAR(f2.beta(0.3), ClaimedTradeoff::laplace({1.0, 1.0}).beta(0.3), 1e-15);
    // Two levels and two coordinates: four components.
    const ClaimedTradeoff f4 =
        audit::learner_tradeoff(laplace_tree_report(2.0, 2.0, 2.0, "pure-laplace"), {1.0, -1.0}, &why);
    EXPECT_NEAR(f4.beta(0.3), ClaimedTradeoff::laplace({0.5, 0.5, 0.5, 0.5}).beta(0.3), 1e-15);
    // 2 levels x 65 coordinates = 130 components (> 128), and a loss beyond e^700: f_(eps, delta), said why.
    const ClaimedTradeoff many =
        audit::learner_tradeoff(laplace_tree_report(130.0, 2.0, 2.0, "pure-laplace"), std::vector<double>(65, 1.0),
                                &why);
    EXPECT_EQ(many.kind(), ClaimedTradeoff::Kind::EpsDelta);
    EXPECT_NE(why.find("130"), std::string::npos) << why;
    const ClaimedTradeoff huge =
        audit::learner_tradeoff(laplace_tree_report(1000.0, 0.002, 1.0, "pure-laplace"), {2.0}, &why);
    EXPECT_EQ(huge.kind(), ClaimedTradeoff::Kind::EpsDelta);
    EXPECT_FALSE(why.empty());
    // Lattice noise, a tree over other estimates, a pair beyond the calibrated sensitivity: f_(eps, delta),
    // said why.
    for (const auto& [report, what, diff] :
         std::vector<std::tuple<learners::PrivacyReport, std::string, std::vector<double>>>{
             {laplace_tree_report(1.0, 2.0, 1.0, "lattice-laplace"), "lattice noise", {-1.0, 1.0}},
             {laplace_tree_report(1.0, 2.0, 1.0, "pure-laplace", false), "a tree over other vectors", {-1.0, 1.0}},
             {laplace_tree_report(1.0, 2.0, 1.0, "pure-laplace"), "beyond the sensitivity", {-2.0, 1.0}}}) {
        const ClaimedTradeoff g = audit::learner_tradeoff(report, diff, &why);
        EXPECT_EQ(g.kind(), ClaimedTradeoff::Kind::EpsDelta) << what;
        EXPECT_FALSE(why.empty()) << what;
    }
    learners::PrivacyReport gauss;
    gauss.epsilon = 3.0;
    gauss.delta = 1e-6;
    gauss.gdp_mu = 0.8;
    EXPECT_EQ(audit::learner_tradeoff(gauss, {1.0}, &why).kind(), ClaimedTradeoff::Kind::Gaussian);
}

/// The exact privacy region of the statistic X ~ Lap(0, 1) (base) against X ~ Lap(s, 1) (neighbour) at 201
/// thresholds, as fractions of n trials would estimate them without error.
std::vector<audit::RegionRow> laplace_region(double s) {
    const auto cdf = [](double x) { return x < 0 ? 0.5 * std::exp(x) : 1.0 - 0.5 * std::exp(-x); };
    std::vector<audit::RegionRow> rows;
    for (int i = 0; i <= 200; ++i) {
        const double x = -6.0 + 12.0 * i / 200.0;
        rows.push_back({x, 1.0 - cdf(x), 1.0 - cdf(x - s), cdf(x), cdf(x - s)});
    }
    return rows;
}

TEST(FdpTest, TheExactRegionIsConsistentAndTheRegionOfNineTenthsTheNoiseIsAViolation) {
    const ClaimedTradeoff f = ClaimedTradeoff::laplace({1.0});
    std::vector<audit::RegionRow> good = laplace_region(1.0), bad = laplace_region(1.0 / 0.9);
    const audit::FdpTest g = audit::fdp_test(f, good, 1000000, 1000000, 0.05);
    EXPECT_TRUE(g.tested);
    EXPECT_FALSE(g.violation) << g.test << " at " << g.threshold << ": margin " << g.margin;
    EXPECT_NEAR(g.band0, std::sqrt(std::log(80.0) / 2e6), 1e-15);
    const audit::FdpTest b = audit::fdp_test(f, bad, 1000000, 1000000, 0.05);
    EXPECT_TRUE(b.violation) << "margin " << b.margin;
    EXPECT_GT(b.margin, 0.005);
    // The same at 1e3 trials per side: the band (0.047) hides it.
    std::vector<audit::RegionRow> small = laplace_region(1.0 / 0.9);
    EXPECT_FALSE(audit::fdp_test(f, small, 1000, 1000, 0.05).violation);
    // fill_claimed: each row carries the claimed curve at its own four fractions (distinct at this row).
    audit::fill_claimed(f, good);
    const audit::RegionRow& r = good[110];
    EXPECT_EQ(r.f_base_ge, f.beta(r.base_ge));
    EXPECT_EQ(r.f_neighbour_ge, f.beta(r.neighbour_ge));
    EXPECT_EQ(r.f_base_le, f.beta(r.base_le));
    EXPECT_EQ(r.f_neighbour_le, f.beta(r.neighbour_le));
    EXPECT_NE(r.f_base_ge, r.f_neighbour_ge);
}

TEST(FdpTest, EachSidesBandComesFromItsOwnTrialCount) {
    // audit-samples' two samples may differ in size: the base side's band comes from n0, the neighbour's from
    // n1, and the margin pairs each test's null side with its own band.
    const ClaimedTradeoff f = ClaimedTradeoff::laplace({1.0});
    const std::vector<audit::RegionRow> bad = laplace_region(1.0 / 0.9);
    const audit::FdpTest t = audit::fdp_test(f, bad, 1000, 1000000, 0.05);
    EXPECT_NEAR(t.band0, std::sqrt(std::log(80.0) / 2e3), 1e-15);
    EXPECT_NEAR(t.band1, std::sqrt(std::log(80.0) / 2e6), 1e-15);
    const audit::FdpTest u = audit::fdp_test(f, bad, 1000000, 1000, 0.05);
    EXPECT_NEAR(u.band0, t.band1, 1e-15);
    EXPECT_NEAR(u.band1, t.band0, 1e-15);
    // The margin is f(a + e_null) - (b + e_alt) for the test it names.
    for (const audit::FdpTest& x : {t, u}) {
        const bool null_base = x.test.find("reject the base side") != std::string::npos;
        const double e_null = null_base ? x.band0 : x.band1, e_alt = null_base ? x.band1 : x.band0;
        EXPECT_NEAR(x.margin, f.beta(x.type1 + e_null) - (x.type2 + e_alt), 1e-15) << x.test;
    }
}

} // namespace
} // namespace dpr
