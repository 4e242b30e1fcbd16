// Summaries: hand-computed moments and quantiles, split-independent accumulation (bitwise), and the
// coverage of the order-statistic confidence intervals by simulation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "host/stats/summary.hpp"

using namespace dpr::stats;

namespace {

/// Deterministic values: a fixed generator and our own transform (std distributions differ by library).
std::vector<double> exponential_values(std::uint64_t seed, std::size_t n) {
    std::mt19937_64 rng(seed);
    std::vector<double> x(n);
    for (double& v : x) v = -std::log((static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53);
    return x;
}

bool same_bits(const Moments& a, const Moments& b) {
    return a.n == b.n && std::memcmp(&a.mean, &b.mean, sizeof(double)) == 0 &&
           std::memcmp(&a.m2, &b.m2, sizeof(double)) == 0;
}

} // namespace

TEST(Moments, WelfordMatchesHandComputation) {
    Moments m;
    for (double x : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) m.add(x);
    EXPECT_EQ(m.n, 8u);
    EXPECT_DOUBLE_EQ(m.mean, 5.0);
    EXPECT_DOUBLE_EQ(m.m2, 32.0);
    EXPECT_DOUBLE_EQ(m.variance(), 32.0 / 7.0);
    EXPECT_DOUBLE_EQ(m.stddev(), std::sqrt(32.0 / 7.0));
    EXPECT_DOUBLE_EQ(m.standard_error(), std::sqrt(32.0 / 7.0) / std::sqrt(8.0));
}

TEST(Moments, ChanMergeEqualsOnePass) {
    Moments a, b, all;
    for (double x : {1.0, 2.0, 3.0}) a.add(x), all.add(x);
    for (double x : {10.0, 20.0}) b.add(x), all.add(x);
    Moments merged = a;
    merged.merge(b);
    EXPECT_EQ(merged.n, 5u);
    EXPECT_DOUBLE_EQ(merged.mean, 36.0 / 5.0);
    EXPECT_NEAR(merged.m2, all.m2, 1e-12);
    Moments empty;
    Moments copy = a;
    copy.merge(empty);
    EXPECT_TRUE(same_bits(copy, a));
    empty.merge(a);
    EXPECT_TRUE(same_bits(empty, a));
}

TEST(Moments, SmallCountsGiveNaN) {
    Moments m;
    EXPECT_TRUE(std::isnan(m.variance()));
    m.add(3.0);
    EXPECT_TRUE(std::isnan(m.stddev()));
    EXPECT_TRUE(std::isnan(m.standard_error()));
}

TEST(OrderedMoments, AnySplitMergedInAnyGroupingIsBitwiseOnePass) {
    const std::vector<double> x = exponential_values(42, 1237);
    const Moments one = ordered_moments(x.data(), x.size());
    EXPECT_NEAR(one.mean, 1.0, 0.1);

    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        // Random cut points -> contiguous pieces, each accumulated on its own.
        std::vector<std::size_t> cuts = {0, x.size()};
        const int ncuts = static_cast<int>(rng() % 12);
        for (int c = 0; c < ncuts; ++c) cuts.push_back(rng() % (x.size() + 1));
        std::sort(cuts.begin(), cuts.end());
        std::vector<OrderedMoments> pieces;
        for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
            OrderedMoments piece(cuts[k]);
            piece.add(x.data() + cuts[k], cuts[k + 1] - cuts[k]);
            pieces.push_back(piece);
        }
        // Merge adjacent pieces in a random order until one is left.
        while (pieces.size() > 1) {
            const std::size_t k = rng() % (pieces.size() - 1);
            pieces[k].append(pieces[k + 1]);
            pieces.erase(pieces.begin() + static_cast<std::ptrdiff_t>(k) + 1);
        }
        ASSERT_EQ(pieces[0].begin(), 0u);
        ASSERT_EQ(pieces[0].end(), x.size());
        ASSERT_TRUE(same_bits(pieces[0].total(), one)) << "trial " << trial;
    }
}

TEST(OrderedMoments, ChunkedWelfordIsNotSplitIndependentButTheTreeIs) {
    // Why OrderedMoments exists: plain Welford per chunk + Chan merge depends on the chunking.
    const std::vector<double> x = exponential_values(3, 1000);
    auto chunked = [&](std::size_t chunk) {
        Moments total;
        for (std::size_t s = 0; s < x.size(); s += chunk) {
            Moments part;
            for (std::size_t i = s; i < std::min(x.size(), s + chunk); ++i) part.add(x[i]);
            total.merge(part);
        }
        return total;
    };
    int differ = 0;
    for (std::size_t chunk : {7u, 64u, 100u, 333u})
        differ += same_bits(chunked(chunk), chunked(1000)) ? 0 : 1;
    EXPECT_GT(differ, 0);
    const Moments tree = ordered_moments(x.data(), x.size());
    EXPECT_NEAR(tree.mean, chunked(1000).mean, 1e-13);
    EXPECT_NEAR(tree.m2, chunked(1000).m2, 1e-10);
}

TEST(OrderedMoments, AppendRefusesAGapAndNodesRoundTrip) {
    OrderedMoments a(0), b(5);
    a.add(1.0);
    EXPECT_THROW(a.append(b), std::invalid_argument);
    OrderedMoments c(3);
    for (int i = 0; i < 10; ++i) c.add(static_cast<double>(i * i));
    const OrderedMoments d = OrderedMoments::from_nodes(c.begin(), c.end(), c.nodes());
    EXPECT_TRUE(same_bits(d.total(), c.total()));
    // [3, 13) = {3}, [4, 8), [8, 12), {12}
    ASSERT_EQ(c.nodes().size(), 4u);
    EXPECT_EQ(c.nodes()[1].level, 2u);
    auto bad = c.nodes();
    std::swap(bad[1], bad[2]);
    EXPECT_THROW(OrderedMoments::from_nodes(c.begin(), c.end(), bad), std::invalid_argument);
}

TEST(Summary, HandComputedValues) {
    // R: x <- c(5, 1, 4, 2, 3); quantile(x, c(.05, .25, .5, .75, .95)) -> 1.2 2 3 4 4.8
    const Summary s = summarize({5.0, 1.0, 4.0, 2.0, 3.0});
    EXPECT_EQ(s.n, 5u);
    EXPECT_DOUBLE_EQ(s.mean, 3.0);
    EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2.5));
    EXPECT_DOUBLE_EQ(s.standard_error, std::sqrt(2.5 / 5.0));
    EXPECT_EQ(s.min, 1.0);
    EXPECT_EQ(s.max, 5.0);
    const double expected[] = {1.2, 2.0, 3.0, 4.0, 4.8};
    for (std::size_t q = 0; q < 5; ++q) {
        EXPECT_EQ(s.quantiles[q].p, kQuantileLevels[q]);
        EXPECT_NEAR(s.quantiles[q].value, expected[q], 1e-12);
    }
    // n = 5 is too small for most bounds. Median: P(B <= 0) = 1/32 > 0.025 and P(B <= 4) = 31/32 < 0.975,
    // so neither side. 5%: P(B <= 0) = 0.95^5 = 0.774 (no lower), P(B <= 1) = 0.977 -> upper rank 2.
    // 25%: P(B <= 3) = 0.984 -> upper rank 4. 75% and 95% mirror them: lower ranks 2 and 4.
    const std::uint64_t lower[] = {0, 0, 0, 2, 4}, upper[] = {2, 4, 0, 0, 0};
    const double sorted[] = {1, 2, 3, 4, 5};
    for (std::size_t q = 0; q < 5; ++q) {
        const auto& e = s.quantiles[q];
        EXPECT_EQ(e.lower_rank, lower[q]) << q;
        EXPECT_EQ(e.upper_rank, upper[q]) << q;
        if (lower[q])
            EXPECT_EQ(e.lower, sorted[lower[q] - 1]);
        else
            EXPECT_TRUE(std::isnan(e.lower));
        if (upper[q])
            EXPECT_EQ(e.upper, sorted[upper[q] - 1]);
        else
            EXPECT_TRUE(std::isnan(e.upper));
    }
}

TEST(Summary, Type7Interpolation) {
    const double sorted[] = {10.0, 20.0, 30.0, 40.0};
    EXPECT_DOUBLE_EQ(quantile_type7(sorted, 4, 0.0), 10.0);
    EXPECT_DOUBLE_EQ(quantile_type7(sorted, 4, 1.0), 40.0);
    EXPECT_DOUBLE_EQ(quantile_type7(sorted, 4, 0.5), 25.0);  // h = 1.5
    EXPECT_DOUBLE_EQ(quantile_type7(sorted, 4, 0.05), 11.5); // h = 0.15
    EXPECT_DOUBLE_EQ(quantile_type7(sorted, 1, 0.3), 10.0);
    EXPECT_TRUE(std::isnan(quantile_type7(sorted, 0, 0.5)));
}

TEST(Summary, ConfidenceRanksMatchTables) {
    // Median of 100: the classical 95% interval is (x_(40), x_(61)).
    RankInterval r = quantile_ci_ranks(100, 0.5);
    EXPECT_EQ(r.lower, 40u);
    EXPECT_EQ(r.upper, 61u);
    EXPECT_GE(quantile_ci_coverage(100, 0.5, r), 0.95);
    // Median of 10: (x_(2), x_(9)), coverage 1 - 2 * 11/1024.
    r = quantile_ci_ranks(10, 0.5);
    EXPECT_EQ(r.lower, 2u);
    EXPECT_EQ(r.upper, 9u);
    EXPECT_NEAR(quantile_ci_coverage(10, 0.5, r), 1.0 - 22.0 / 1024.0, 1e-12);
    // 5% quantile of 20: no lower bound (0.95^20 = 0.358 > 0.025); P(B <= 3) = 0.984 >= 0.975 -> u = 4.
    r = quantile_ci_ranks(20, 0.05);
    EXPECT_EQ(r.lower, 0u);
    EXPECT_EQ(r.upper, 4u);
    // 95% quantile of 20: the mirror image.
    r = quantile_ci_ranks(20, 0.95);
    EXPECT_EQ(r.lower, 17u);
    EXPECT_EQ(r.upper, 0u);
    r = quantile_ci_ranks(0, 0.5);
    EXPECT_EQ(r.lower, 0u);
    EXPECT_EQ(r.upper, 0u);
    // Large n: the interval is about p n +- 1.96 sqrt(n p (1-p)).
    r = quantile_ci_ranks(1000000, 0.25);
    EXPECT_NEAR(static_cast<double>(r.lower), 250000 - 1.96 * std::sqrt(187500.0), 3);
    EXPECT_NEAR(static_cast<double>(r.upper), 250000 + 1.96 * std::sqrt(187500.0), 3);
}

TEST(Summary, BoundsAreTheOrderStatistics) {
    std::vector<double> x(100);
    for (int i = 0; i < 100; ++i) x[static_cast<std::size_t>((i * 37) % 100)] = static_cast<double>(i + 1);
    const Summary s = summarize(x);
    const auto& median = s.quantiles[2];
    EXPECT_EQ(median.value, 50.5);
    EXPECT_EQ(median.lower_rank, 40u);
    EXPECT_EQ(median.upper_rank, 61u);
    EXPECT_EQ(median.lower, 40.0);
    EXPECT_EQ(median.upper, 61.0);
    for (const auto& q : s.quantiles) {
        EXPECT_LE(q.lower, q.value);
        EXPECT_GE(q.upper, q.value);
    }
}

TEST(Summary, EmptyAndNaNInputs) {
    const Summary e = summarize(std::vector<double>{});
    EXPECT_EQ(e.n, 0u);
    EXPECT_TRUE(std::isnan(e.mean));
    EXPECT_TRUE(std::isnan(e.quantiles[2].value));
    const Summary n = summarize({1.0, std::numeric_limits<double>::quiet_NaN(), 3.0});
    EXPECT_TRUE(std::isnan(n.mean));
    EXPECT_TRUE(std::isnan(n.min));
    for (const auto& q : n.quantiles) EXPECT_TRUE(std::isnan(q.value));
}

TEST(Summary, MeanEqualsTheSplitIndependentAccumulation) {
    const std::vector<double> x = exponential_values(11, 5000);
    OrderedMoments left(0), right(2048 + 3);
    left.add(x.data(), 2048 + 3);
    right.add(x.data() + 2048 + 3, x.size() - 2048 - 3);
    left.append(right);
    const Summary s = summarize(x);
    EXPECT_EQ(s.mean, left.total().mean);
    EXPECT_EQ(s.stddev, left.total().stddev());
}

// Coverage of the 95% intervals over 2000 simulated samples of n = 100 exponential values, for all five
// quantiles. The number of covering samples is Binomial(2000, c) with c the exact coverage
// (quantile_ci_coverage); we accept within 5 standard deviations (false alarm ~6e-7 per check) and
// require c >= 0.95. The meta-test runs the same check on 80% intervals, which it must reject.
namespace {
struct Coverage {
    int covered[5] = {};
    int reps = 0;
};
Coverage simulate(double confidence, std::uint64_t seed) {
    Coverage c;
    c.reps = 2000;
    std::mt19937_64 rng(seed);
    for (int r = 0; r < c.reps; ++r) {
        const std::vector<double> x = exponential_values(rng(), 100);
        const Summary s = summarize(x, confidence);
        for (std::size_t q = 0; q < 5; ++q) {
            const double truth = -std::log1p(-kQuantileLevels[q]);
            const auto& e = s.quantiles[q];
            const bool lower_ok = std::isnan(e.lower) || e.lower <= truth;
            const bool upper_ok = std::isnan(e.upper) || truth <= e.upper;
            c.covered[q] += lower_ok && upper_ok ? 1 : 0;
        }
    }
    return c;
}
/// z-score of the observed count against the nominal 95%.
double z_against_nominal(int covered, int reps) {
    const double sd = std::sqrt(reps * 0.95 * 0.05);
    return (covered - reps * 0.95) / sd;
}
} // namespace

TEST(QuantileCoverage_Stat, NinetyFivePercentIntervalsCover) {
    const Coverage c = simulate(0.95, 20260101);
    for (std::size_t q = 0; q < 5; ++q) {
        const double exact =
            quantile_ci_coverage(100, kQuantileLevels[q], quantile_ci_ranks(100, kQuantileLevels[q]));
        EXPECT_GE(exact, 0.95);
        const double sd = std::sqrt(c.reps * exact * (1 - exact));
        EXPECT_NEAR(c.covered[q], c.reps * exact, 5 * sd) << "p = " << kQuantileLevels[q];
        EXPECT_GT(z_against_nominal(c.covered[q], c.reps), -5.0) << "p = " << kQuantileLevels[q];
    }
}

TEST(QuantileCoverage_Stat, MetaTestRejectsEightyPercentIntervals) {
    const Coverage c = simulate(0.80, 20260102);
    for (std::size_t q = 0; q < 5; ++q)
        EXPECT_LT(z_against_nominal(c.covered[q], c.reps), -5.0) << "p = " << kQuantileLevels[q];
}
