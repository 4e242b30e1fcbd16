// The exponential mechanism (kernels/mechanisms/exponential.hpp) and AboveThreshold
// (kernels/mechanisms/above_threshold.hpp): their laws (chi-square against softmax, with a meta-test that the
// test rejects a temperature off by 5%), AboveThreshold's accuracy (Thm 3.24) and its privacy histogram test
// (docs/spec/checks.md §3.1: halting-index frequencies under neighbouring query streams, 10^6 runs each, with the
// planted variant without threshold noise that the test must reject), and the addressing of their draws
// (one address per round: no aliasing across phases or restarts, docs/spec/afkt23.md §C1, issue item 4).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "../noise/stat_tests.hpp"
#include "kernels/core/params.hpp"
#include "kernels/core/team.hpp"
#include "kernels/mechanisms/above_threshold.hpp"
#include "kernels/mechanisms/exponential.hpp"
#include "mechanisms/mechanism_runs.hpp"

namespace dpr {
namespace {

/// n draws of the exponential mechanism Pr[i] ∝ exp(-c s(i)) (draw r at round r, instance 0) as counts.
std::vector<std::uint64_t> exp_mech_counts(const std::vector<double>& s, double c, std::uint32_t n, std::uint32_t seed) {
    std::vector<std::uint64_t> counts(s.size(), 0);
    for (std::uint32_t i : test::exp_mech_draws(s, c, n, seed)) ++counts.at(i);
    return counts;
}

std::vector<double> softmax(const std::vector<double>& s, double c) {
    std::vector<double> p(s.size());
    double z = 0;
    for (std::size_t i = 0; i < s.size(); ++i) z += p[i] = std::exp(-c * s[i]);
    for (double& x : p) x /= z;
    return p;
}

const std::vector<double> kScores = {0.0, 1.0, 2.0, 3.0, 0.5, 4.0, 1.5, 2.5, 6.0, 0.25};

TEST(ExpMech_Stat, FrequenciesMatchSoftmaxAtAlpha1e6) {
    for (double c : {0.0, 0.35, 1.0}) {
        const auto counts = exp_mech_counts(kScores, c, 1000000, 11);
        const auto r = test::chi_square_gof(counts, softmax(kScores, c));
        EXPECT_GT(r.p, test::kAlpha) << "c = " << c << ": chi2 = " << r.stat << " on " << r.dof << " dof";
    }
}

TEST(ExpMech_Stat, MetaTestRejectsATemperatureOffBy5Percent) {
    // The same draws tested against softmax at 1.05 c: a sampler whose temperature were off by 5% would pass
    // the test above only if the test had no power. It must reject at alpha = 1e-6.
    const double c = 1.0;
    const auto counts = exp_mech_counts(kScores, c, 1000000, 11);
    const auto r = test::chi_square_gof(counts, softmax(kScores, 1.05 * c));
    EXPECT_LT(r.p, test::kAlpha) << "chi2 = " << r.stat;
}

TEST(ExpMech_Stat, InfiniteTemperatureIsUniformOverTheMinimisers) {
    const std::vector<double> s = {3.0, 1.0, 2.0, 1.0, 5.0, 1.0, 1.5};
    const auto counts = exp_mech_counts(s, kInf, 300000, 5);
    const std::vector<double> p = {0, 1.0 / 3, 0, 1.0 / 3, 0, 1.0 / 3, 0};
    const auto r = test::chi_square_gof(counts, p); // a count where p = 0 is an outright failure
    EXPECT_GT(r.p, test::kAlpha) << "chi2 = " << r.stat;
}

TEST(ExpMech, WorksAtTwoToTheTwentyCandidatesAndFindsAnOverwhelmingWinner) {
    // d = 2^20 with one candidate whose score is lower by 60/c: its probability is 1 - 2^20 e^-60 (> 1 - 1e-19).
    const std::uint32_t n = 1u << 20;
    const SerialTeam<double> team{RngKey{3, 0}, 7};
    for (std::uint32_t r = 1; r <= 3; ++r) {
        const std::uint32_t star = (r * 2654435761u) % n;
        mech::ExpMechDraw draw;
        draw.round = r;
        const std::uint32_t i = mech::exponential_mechanism(team, n, 1.0, draw, [&](std::uint32_t j) { return j == star ? 0.0 : 60.0; });
        EXPECT_EQ(i, star);
    }
    // And with equal scores every index is reachable: the draws of distinct rounds differ and stay in range.
    std::set<std::uint32_t> seen;
    for (std::uint32_t r = 1; r <= 8; ++r) {
        mech::ExpMechDraw draw;
        draw.round = r;
        const std::uint32_t i = mech::exponential_mechanism(team, n, 1.0, draw, [](std::uint32_t) { return 0.0; });
        EXPECT_LT(i, n);
        seen.insert(i);
    }
    EXPECT_GE(seen.size(), 7u); // 8 uniform draws on 2^20 values collide with probability < 3e-5
}

/// The draw of exponential.hpp written out as a scalar loop over a CDF prepared once: m = min s, the weights
/// w(i) = exp(-c (s(i) - m)) in double, their running sums in index order, and the first index whose running
/// sum exceeds u S (u the draw's uniform, S the last running sum).
std::uint32_t inverse_cdf_draw(const std::vector<double>& s, double c, double u) {
    double m = s[0];
    for (double x : s) m = x < m ? x : m;
    std::vector<double> cdf(s.size());
    double acc = 0.0;
    for (std::size_t i = 0; i < s.size(); ++i) cdf[i] = acc = acc + vexp(-c * (s[i] - m));
    const double target = u * cdf.back();
    for (std::size_t i = 0; i < s.size(); ++i)
        if (target < cdf[i]) return static_cast<std::uint32_t>(i);
    return static_cast<std::uint32_t>(s.size() - 1);
}

TEST(ExpMech, TheDrawIsTheInverseCdfOfOneUniformOverThePreparedWeights) {
    // Instances that share the scores can draw from one CDF prepared for all of them: the team's draw must be
    // the scalar one over that CDF, bit for bit, with the one uniform of (Exponential, sub, round, element
    // 0). A Gumbel-max draw (one Gumbel per candidate) has the same law but not these indices.
    std::vector<double> s(1000);
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = 0.01 * static_cast<double>((i * 7919) % 613);
    const SerialTeam<double> team{RngKey{17, 3}, 5};
    for (double c : {0.0, 0.05, 1.0, 40.0}) {
        for (std::uint32_t r = 0; r < 500; ++r) {
            mech::ExpMechDraw draw;
            draw.round = r;
            draw.sub = 2;
            const double u = rng::instance_uniform<double>(team, draw.purpose, draw.sub, r, std::uint32_t{0});
            const std::uint32_t got = mech::exponential_mechanism(
                team, static_cast<std::uint32_t>(s.size()), c, draw, [&](std::uint32_t j) { return s[j]; });
            ASSERT_EQ(got, inverse_cdf_draw(s, c, u)) << "c = " << c << ", round " << r;
        }
    }
}

TEST(ExpMech, FloatKeysGiveTheSameDrawAsDoubleKeysAwayFromTies) {
    // The weights and their sums are double in both precisions; only the scores' rounding to float differs.
    // On well-separated scores the float and double draws agree.
    const SerialTeam<double> td{RngKey{9, 0}, 1};
    const SerialTeam<float> tf{RngKey{9, 0}, 1};
    int same = 0;
    for (std::uint32_t r = 0; r < 2000; ++r) {
        mech::ExpMechDraw draw;
        draw.round = r;
        const auto a = mech::exponential_mechanism(td, 10, 0.7, draw, [](std::uint32_t j) { return kScores[j]; });
        const auto b = mech::exponential_mechanism(tf, 10, 0.7, draw, [](std::uint32_t j) { return static_cast<float>(kScores[j]); });
        same += a == b;
    }
    EXPECT_GE(same, 1998);
}

// ---- AboveThreshold ------------------------------------------------------------------------------------------

using test::halt_index;

std::vector<std::uint64_t> halting_histogram(double eps, const std::vector<double>& q, std::uint32_t runs,
                                             std::uint32_t seed, bool planted) {
    std::vector<std::uint64_t> h(q.size() + 2, 0);
    for (std::uint32_t i : test::halting_indices(eps, q, runs, seed, planted)) ++h[i];
    return h;
}

/// Bins where Pr_a[i] > e^eps Pr_b[i] is established at level alpha (Wilson bounds, Bonferroni over bins).
int violations(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b, std::uint64_t n, double eps) {
    const double alpha = test::kAlpha / static_cast<double>(2 * a.size());
    int bad = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto ia = test::wilson_interval(a[i], n, alpha), ib = test::wilson_interval(b[i], n, alpha);
        if (ia.lo > std::exp(eps) * ib.hi) ++bad;
    }
    return bad;
}

TEST(AboveThreshold_Stat, HaltingIndexIsEpsDpUnderNeighbouringStreamsAndThePlantedBugIsCaught) {
    // Queries 0, ..., 0, 100 (one far above the threshold tau = 0) and the neighbouring stream shifted by the
    // sensitivity, q' = q - 1. eps-DP: Pr[halt = i] <= e^eps Pr'[halt = i] both ways, for every i.
    const double eps = 1.0;
    const std::uint32_t runs = 1000000;
    const auto [q, q2] = test::neighbouring_svt_queries(12);
    const auto h = halting_histogram(eps, q, runs, 21, false);
    const auto h2 = halting_histogram(eps, q2, runs, 22, false);
    EXPECT_EQ(violations(h, h2, runs, eps), 0);
    EXPECT_EQ(violations(h2, h, runs, eps), 0);
    // The planted variant (threshold not noised) pays eps/4 per BOTTOM: by the 8th query the ratio exceeds e^eps
    // (1.22^(i-1) * 0.78 > e at i >= 8). The same test must catch it.
    const auto p = halting_histogram(eps, q, runs, 21, true);
    const auto p2 = halting_histogram(eps, q2, runs, 22, true);
    EXPECT_GT(violations(p, p2, runs, eps) + violations(p2, p, runs, eps), 0);
}

TEST(AboveThreshold_Stat, AccuracyOfTheorem324HoldsWithProbabilityOneMinusBeta) {
    // m queries rising linearly from tau - 3 alpha to tau + 3 alpha. Thm 3.24: with probability >= 1 - beta the
    // run halts at some k with q_i <= tau + alpha for every i < k and q_k >= tau - alpha.
    const double eps = 0.5, beta = 0.05, tau = 10.0;
    const std::uint32_t m = 100, runs = 100000;
    const double alpha = mech::svt_alpha(eps, 1.0, m, beta);
    std::vector<double> q(m);
    for (std::uint32_t i = 0; i < m; ++i) q[i] = tau - 3 * alpha + 6 * alpha * i / (m - 1);
    mech::AboveThreshold svt;
    svt.key = RngKey{31, 0};
    svt.scales = mech::svt_scales(eps, 1.0);
    std::uint64_t fail = 0, early = 0;
    for (std::uint32_t k = 0; k < runs; ++k) {
        svt.instance = k;
        const std::uint32_t h = halt_index(svt, tau, q);
        bool ok = true;
        for (std::uint32_t i = 1; i < h && i <= m; ++i) ok = ok && q[i - 1] <= tau + alpha;
        if (h <= m && q[h - 1] < tau - alpha) {
            ok = false;
            ++early;
        }
        fail += !ok;
    }
    const auto iv = test::wilson_interval(fail, runs);
    EXPECT_LE(iv.lo, beta) << fail << " failures of " << runs;
    // The bound is loose (a union bound): the observed rate is far below beta. A mechanism without the
    // threshold (halting at the first noisy query >= tau - 3 alpha) would fail almost always.
    EXPECT_LT(early, runs / 100);
}

TEST(AboveThreshold, ScalesAreTheDworkRothCalibrationAndInfinityIsNoiseless) {
    const auto s = mech::svt_scales(0.5, 2.0);
    EXPECT_DOUBLE_EQ(s.threshold, 2 * 2.0 / 0.5);
    EXPECT_DOUBLE_EQ(s.query, 4 * 2.0 / 0.5);
    const auto z = mech::svt_scales(kInf, 1.0);
    EXPECT_EQ(z.threshold, 0.0);
    EXPECT_EQ(z.query, 0.0);
    EXPECT_DOUBLE_EQ(mech::svt_alpha(1.0, 1.0, 100.0, 0.1), 8.0 * (std::log(100.0) + std::log(20.0)));
    // No noise: the test is q >= tau exactly.
    mech::AboveThreshold svt;
    svt.scales = z;
    svt.start(3.0, 1);
    EXPECT_FALSE(svt.add_query(2.999, 1));
    EXPECT_TRUE(svt.add_query(3.0, 2));
}

TEST(MechanismAddresses, EveryRoundHasItsOwnThresholdQueryAndGumbelDrawsNoAliasingAcrossRestarts) {
    // Learners restart a sparse vector at the round of each switch and ask one query per round; with the round
    // in the address, thousands of restarts (far beyond the 256 values of the counter's sub field) never reuse
    // a draw. Distinct rounds give distinct values; threshold, query and Gumbel draws of one round differ.
    const SerialTeam<double> team{RngKey{5, 0}, 2};
    const mech::SvtScales sc = mech::svt_scales(1.0, 1.0);
    std::set<double> values;
    const std::uint32_t rounds = 5000;
    for (std::uint32_t t = 1; t <= rounds; ++t) {
        values.insert(mech::svt_threshold(team, sc, 0.0, t, 0u));
        values.insert(mech::svt_noisy_query(team, sc, 0.0, t, 0u));
        mech::ExpMechDraw draw;
        draw.round = t;
        values.insert(mech::gumbel(team, draw, 0u));
    }
    EXPECT_EQ(values.size(), 3u * rounds);
    // The sub values in use fit the 8-bit field by construction (static_assert in above_threshold.hpp).
    EXPECT_LE(static_cast<std::uint32_t>(mech::kSvtSubsUsed), rng::kMaxSub);
}

} // namespace
} // namespace dpr
