// The (eps, delta) curve of an audit (host/audit/curve.hpp; docs/AUDITS.md "The (eps, delta) curve"; issue 49,
// item 4). What a wrong implementation would violate:
// - a mechanism that meets its claim exactly (N(1, 1) against N(0, 1) is exactly 1-GDP) stays below the claim's curve
//   at every delta in at least 95 of 100 independent audits (the points hold simultaneously at 95%: Bonferroni);
// - half the noise (N(2, 1) against N(0, 1), mu = 2) exceeds the claimed mu = 1 curve at some delta in 10 of 10
//   audits of 1e6 values per side;
// - each point is the Clopper-Pearson bound of its own counts at alpha / (2 |D|) per side, the claim's curve is
//   mu-GDP's eps(delta) (inf at delta = 0) or the claimed eps from the claimed delta on (inf below it).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "host/audit/curve.hpp"
#include "host/audit/sample_audit.hpp"
#include "noise/stat_tests.hpp"

namespace dpr::audit {
namespace {

AuditOutcome gaussian_audit(double shift, std::size_t n, std::uint64_t seed, double mu_claimed) {
    SampleClaim claim;
    claim.mu = mu_claimed;
    claim.delta = 1e-5;
    return audit_two_samples(test::normal_sample(shift, n, 2 * seed), test::normal_sample(0.0, n, 2 * seed + 1), claim,
                             SampleAuditSettings{});
}

TEST(Curve, PointsAreTheGridsBoundsAgainstTheClaimsCurve) {
    const AuditOutcome o = gaussian_audit(1.0, 100000, 1, 1.0);
    const AuditCurve& c = o.curve;
    ASSERT_EQ(c.points.size(), curve_deltas().size());
    ASSERT_EQ(curve_deltas().size(), 9u);
    EXPECT_EQ(curve_deltas().front(), 0.0);
    EXPECT_EQ(curve_deltas().back(), 1e-2);
    const double each = 0.05 / 9;
    for (std::size_t i = 0; i < c.points.size(); ++i) {
        const CurvePoint& p = c.points[i];
        EXPECT_EQ(p.delta, curve_deltas()[i]);
        EXPECT_EQ(p.n1 + p.n0, 2u * 80000u) << "counted on the evaluation shares";
        EXPECT_EQ(p.epsilon_lb, epsilon_lower_bound(p.k1, p.n1, p.k0, p.n0, p.delta, each));
        if (p.delta == 0.0)
            EXPECT_TRUE(std::isinf(p.claimed));
        else
            EXPECT_DOUBLE_EQ(p.claimed, gdp_epsilon(1.0, p.delta));
        if (i > 0) EXPECT_GE(p.epsilon_lb, 0.0);
    }
    // The pure claim's curve: eps from the claimed delta on, no claim below it.
    learners::PrivacyReport pure;
    pure.epsilon = 2.0;
    pure.delta = 1e-6;
    EXPECT_TRUE(std::isinf(claimed_epsilon_at(pure, 1e-7)));
    EXPECT_EQ(claimed_epsilon_at(pure, 1e-6), 2.0);
    EXPECT_EQ(claimed_epsilon_at(pure, 1e-2), 2.0);
    pure.delta = 0.0;
    EXPECT_EQ(claimed_epsilon_at(pure, 0.0), 2.0);
    // Bonferroni: each point's bound at alpha / |D| is below the same event's bound at alpha.
    for (const CurvePoint& p : c.points)
        EXPECT_LE(p.epsilon_lb, epsilon_lower_bound(p.k1, p.n1, p.k0, p.n0, p.delta, 0.05));
}

TEST(Curve_Stat, AMechanismThatMeetsItsClaimStaysBelowTheCurveIn95Of100) {
    int violations = 0, main_violations = 0;
    for (std::uint64_t seed = 1; seed <= 100; ++seed) {
        const AuditOutcome o = gaussian_audit(1.0, 100000, seed, 1.0);
        violations += o.curve.violation;
        main_violations += std::string(verdict(o)) == "VIOLATION";
    }
    EXPECT_LE(violations, 5);
    EXPECT_LE(main_violations, 5);
}

TEST(Curve_Stat, HalfTheNoiseExceedsTheClaimsCurveIn10Of10) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        const AuditOutcome o = gaussian_audit(2.0, 1000000, 100 + seed, 1.0);
        EXPECT_TRUE(o.curve.violation) << "seed " << seed;
        int above = 0;
        for (const CurvePoint& p : o.curve.points) above += p.epsilon_lb > p.claimed;
        EXPECT_GE(above, 5) << "seed " << seed << ": the small deltas, where GDP's eps(delta) of mu = 1 is below 6";
    }
}

} // namespace
} // namespace dpr::audit
