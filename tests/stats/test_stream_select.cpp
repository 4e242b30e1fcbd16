// StreamSelect (host/stats/stream_select.hpp): exact order statistics over passes, against a full sort, and the
// summary built from them (stats::summary_from_order_statistics) against summarize().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "host/stats/stream_select.hpp"
#include "host/stats/summary.hpp"

using dpr::stats::StreamSelect;

namespace {

std::uint64_t bits(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

/// Columns of values with the hard cases: ties, both zeros, negatives, subnormals, huge magnitudes.
std::vector<std::vector<double>> columns(std::size_t n) {
    std::mt19937_64 g(7);
    std::normal_distribution<double> z;
    std::vector<std::vector<double>> cols(4, std::vector<double>(n));
    for (std::size_t i = 0; i < n; ++i) {
        cols[0][i] = 100.0 * z(g);                                   // continuous
        cols[1][i] = static_cast<double>(static_cast<int>(g() % 5)) - 2.0; // five values, many ties
        cols[2][i] = (g() % 3 == 0) ? -0.0 : (g() % 2 ? 0.0 : 1e-310 * static_cast<double>(g() % 7)); // zeros, subnormals
        cols[3][i] = std::ldexp(z(g), static_cast<int>(g() % 2000) - 1000); // every exponent
    }
    return cols;
}

} // namespace

TEST(StreamSelect, KeyOrderIsTheNumbersOrderAndRoundTrips) {
    const double xs[] = {-std::numeric_limits<double>::max(), -1e300, -1.5, -std::numeric_limits<double>::denorm_min(),
                         0.0, std::numeric_limits<double>::denorm_min(), 1e-300, 2.0, std::numeric_limits<double>::max()};
    for (std::size_t i = 0; i + 1 < std::size(xs); ++i) EXPECT_LT(StreamSelect::key(xs[i]), StreamSelect::key(xs[i + 1])) << xs[i];
    for (const double x : xs) EXPECT_EQ(bits(StreamSelect::from_key(StreamSelect::key(x))), bits(x)) << x;
    EXPECT_EQ(StreamSelect::key(-0.0), StreamSelect::key(0.0)); // -0 is +0, as in summarize()
}

TEST(StreamSelect, EveryRankEqualsTheSortedValueInAnyVisitingOrder) {
    const std::size_t n = 5003;
    auto cols = columns(n);
    std::vector<std::uint64_t> ranks = {0, 1, 17, 250, 2501, 2502, 4750, n - 2, n - 1};
    StreamSelect sel(cols.size(), n, ranks);
    std::mt19937_64 g(3);
    for (int p = 0; p < StreamSelect::kPasses; ++p) {
        ASSERT_FALSE(sel.done());
        sel.begin_pass();
        for (std::size_t c = 0; c < cols.size(); ++c) {
            std::vector<double> v = cols[c];
            std::shuffle(v.begin(), v.end(), g); // each pass may visit the values in another order
            for (const double x : v) sel.add(c, x);
        }
        sel.end_pass();
    }
    ASSERT_TRUE(sel.done());
    for (std::size_t c = 0; c < cols.size(); ++c) {
        std::vector<double> s = cols[c];
        for (double& x : s) x += 0.0;
        std::sort(s.begin(), s.end());
        for (std::size_t i = 0; i < ranks.size(); ++i)
            EXPECT_EQ(bits(sel.value(c, i)), bits(s[ranks[i]])) << "column " << c << " rank " << ranks[i];
    }
}

TEST(StreamSelect, APassThatMissesOrRepeatsValuesIsAnError) {
    StreamSelect sel(1, 10, {9});
    sel.begin_pass();
    for (int i = 0; i < 9; ++i) sel.add(0, i);
    EXPECT_THROW(sel.end_pass(), std::logic_error);
    // A later pass that sees a value of the wanted rank's group twice (its count is known from the pass before).
    StreamSelect twice(1, 10, {4});
    twice.begin_pass();
    for (int i = 0; i < 10; ++i) twice.add(0, i);
    twice.end_pass();
    twice.begin_pass();
    for (int i = 0; i < 10; ++i) twice.add(0, i);
    twice.add(0, 4.0);
    EXPECT_THROW(twice.end_pass(), std::logic_error);
}

TEST(StreamSelect, SummaryFromStreamedOrderStatisticsIsSummarizeBitwise) {
    for (const std::size_t n : {1u, 2u, 3u, 20u, 1000u, 4099u}) {
        const auto cols = columns(n);
        for (const auto& x : cols) {
            const dpr::stats::Summary a = dpr::stats::summarize(x);
            const std::vector<std::uint64_t> ranks = dpr::stats::summary_ranks(n);
            StreamSelect sel(1, n, ranks);
            while (!sel.done()) {
                sel.begin_pass();
                for (const double v : x) sel.add(0, v);
                sel.end_pass();
            }
            std::vector<double> os(ranks.size());
            for (std::size_t i = 0; i < ranks.size(); ++i) os[i] = sel.value(0, i);
            const dpr::stats::Summary b =
                dpr::stats::summary_from_order_statistics(n, dpr::stats::ordered_moments(x.data(), n), ranks, os);
            EXPECT_EQ(bits(a.mean), bits(b.mean));
            EXPECT_EQ(bits(a.stddev), bits(b.stddev));
            EXPECT_EQ(bits(a.standard_error), bits(b.standard_error));
            EXPECT_EQ(bits(a.min), bits(b.min));
            EXPECT_EQ(bits(a.max), bits(b.max));
            for (std::size_t q = 0; q < a.quantiles.size(); ++q) {
                EXPECT_EQ(bits(a.quantiles[q].value), bits(b.quantiles[q].value)) << "n " << n << " q " << q;
                EXPECT_EQ(bits(a.quantiles[q].lower), bits(b.quantiles[q].lower));
                EXPECT_EQ(bits(a.quantiles[q].upper), bits(b.quantiles[q].upper));
                EXPECT_EQ(a.quantiles[q].lower_rank, b.quantiles[q].lower_rank);
                EXPECT_EQ(a.quantiles[q].upper_rank, b.quantiles[q].upper_rank);
            }
        }
    }
}
