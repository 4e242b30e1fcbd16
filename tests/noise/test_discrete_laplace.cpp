// Lattice noise (kernels/noise/discrete_laplace.hpp, kernels/mechanisms/lattice.hpp; docs/spec/model.md §1.8): the
// thresholds against the exact digit probabilities, the sampler's exact law (from its thresholds) against DLap(t) and
// the accounting's constants against a brute-force evaluation of that law, draws against the law (chi-square, with a
// meta-test that sees a 2% scale error), the randomised rounding's exact probability, and every draw on the lattice.
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/mechanisms/lattice.hpp"
#include "kernels/noise/discrete_laplace.hpp"
#include "kernels/rng/lanes.hpp"
#include "mechanisms/exact_laws.hpp"
#include "noise/stat_tests.hpp"

using namespace dpr;

namespace {

using test::ExactLaw;

long double dlap_pmf(long double t, std::int64_t n) {
    const long double q = std::exp(-1.0L / t);
    return (1.0L - q) / (1.0L + q) * std::pow(q, static_cast<long double>(n < 0 ? -n : n));
}

const double kScales[] = {1.0, 3.7, 1024.0 * 1.999, 0.02, 123456.0};

TEST(DiscreteLaplace, LatticeIsAPowerOfTwoAndTheScaleInUnitsIsInRange) {
    for (double b : kScales) {
        const noise::DlapTable tab = mech::dlap_table(b);
        int e = 0;
        EXPECT_EQ(std::frexp(tab.gamma, &e), 0.5) << b;
        EXPECT_GE(tab.t, 1024.0) << b;
        EXPECT_LT(tab.t, 2048.0) << b;
        EXPECT_EQ(tab.t * tab.gamma, b) << b;
    }
}

TEST(DiscreteLaplace, ThresholdsHoldTheDigitProbabilitiesToThirtyBits) {
    for (double b : kScales) {
        const noise::DlapTable tab = mech::dlap_table(b);
        const ExactLaw law(tab);
        const long double t = tab.t;
        for (std::uint32_t i = 0; i < noise::kDlapDigits; ++i) {
            const long double exact = 1.0L / (1.0L + std::exp(std::ldexp(1.0L, static_cast<int>(i)) / t));
            EXPECT_LT(std::fabs(law.p[i] / exact - 1.0L), 0x1.0p-30L) << "digit " << i << " b " << b;
        }
        const long double pj = 2.0L / (1.0L + std::exp(1.0L / t));
        EXPECT_LT(std::fabs((1.0L - law.pj) / (1.0L - pj) - 1.0L), 0x1.0p-30L);
        EXPECT_EQ(tab.theta[2], 0x80000000u); // the sign is fair
    }
}

TEST(DiscreteLaplace, ExactLawIsTheDiscreteLaplaceAndTheAccountingBoundsIt) {
    for (double b : {1.0, 1024.0 * 1.999, 0.02}) {
        const noise::DlapTable tab = mech::dlap_table(b);
        const ExactLaw law(tab);
        const double Lhat = mech::dlap_log_lipschitz(tab);
        // L^ is an upper bound of every adjacent log-ratio of the exact law, and close to 1/t (the thresholds'
        // rounding adds little).
        EXPECT_GE(Lhat, 1.0 / tab.t);
        EXPECT_LT(Lhat - 1.0 / tab.t, 1e-5 / tab.t);
        long double total = 0.0L, worst = 0.0L;
        for (std::int64_t n = -static_cast<std::int64_t>(noise::kDlapMax); n <= static_cast<std::int64_t>(noise::kDlapMax); ++n) {
            const long double pn = law(n);
            total += pn;
            if (n < static_cast<std::int64_t>(noise::kDlapMax)) {
                const long double r = std::fabs(std::log(law(n + 1) / pn));
                worst = std::fmax(worst, r);
            }
            if (n >= -2000 && n <= 2000) // the bulk: the law is DLap(t) to the thresholds' precision
                EXPECT_NEAR(static_cast<double>(pn / dlap_pmf(tab.t, n)), 1.0, 1e-6) << n;
        }
        EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-15);
        EXPECT_LE(static_cast<double>(worst), Lhat) << b;
        EXPECT_GT(static_cast<double>(worst), Lhat - 1e-9);
        // dlap_tail against the brute-force sum.
        for (std::int64_t m : {1, 2, 100, 5000, 60000, 131000, 131072}) {
            long double tail = 0.0L;
            for (std::int64_t n = m; n <= static_cast<std::int64_t>(noise::kDlapMax); ++n) tail += 2.0L * law(n);
            EXPECT_NEAR(mech::dlap_tail(tab, m) / static_cast<double>(tail), 1.0, 1e-9) << m;
        }
    }
}

std::uint32_t word_of(std::uint32_t element, std::uint32_t k) {
    const rng::LaneStream<std::uint32_t> s{7u, 0u, 0u, rng::Purpose::Test, 0u, 0u, element};
    return s.block(k / 4).w[k % 4];
}

TEST(DiscreteLaplace_Stat, DrawsFollowTheLawAndTheTestSeesATwoPercentScaleError) {
    const noise::DlapTable tab = mech::dlap_table(3.7);
    constexpr std::uint32_t n = 1000000;
    std::map<std::int64_t, std::uint64_t> counts;
    for (std::uint32_t e = 0; e < n; ++e) {
        std::uint32_t wd[4 * noise::kDlapBlocks];
        noise::dlap_words(rng::LaneStream<std::uint32_t>{7u, 0u, 0u, rng::Purpose::Test, 0u, 0u, e}, wd);
        const double v = noise::dlap_from_words<double>(wd, tab);
        const double k = v / tab.gamma;
        ASSERT_EQ(k, std::rint(k)) << "a draw off the lattice";
        ASSERT_EQ(static_cast<float>(v), v) << "a draw not exact in float";
        ++counts[static_cast<std::int64_t>(k)];
    }
    // Bins of width t/4 over [-8t, 8t] plus the two tails, expected counts >= 5.
    auto test_against = [&](double t) {
        const long double q = std::exp(-1.0L / t);
        const std::int64_t w = static_cast<std::int64_t>(tab.t / 4), lim = 32 * w;
        auto mass = [&](std::int64_t lo, std::int64_t hi) { // P(lo <= n <= hi), exact DLap(t)
            long double s = 0.0L;
            for (std::int64_t k = lo; k <= hi; ++k) s += (1.0L - q) / (1.0L + q) * std::pow(q, (long double)std::llabs(k));
            return static_cast<double>(s);
        };
        const double pin = mass(-lim, lim - 1);
        return test::chi_square_integer_cells(counts, w, lim, mass, (1.0 - pin) / 2.0, (1.0 - pin) / 2.0);
    };
    EXPECT_GT(test_against(tab.t), test::kAlpha);
    EXPECT_LT(test_against(tab.t * 1.02), test::kAlpha);
    EXPECT_LT(test_against(tab.t * 0.98), test::kAlpha);
}

TEST(LatticeRound, RoundsUpWithProbabilityExactlyTheFraction) {
    const double gamma = 0x1.0p-3;
    for (double l : {0.3, -0.3, 1.0, 0.0, 0.125, -1.0, 0.0625 + 0x1.0p-40}) {
        const double x = l / gamma;
        const double xs = std::rint(x * 2147483648.0) / 2147483648.0;
        const double m = std::floor(xs);
        const std::uint64_t k = static_cast<std::uint64_t>((xs - m) * 2147483648.0);
        // Every word decides by (w >> 1) < k: check the boundary words and a sweep.
        for (std::uint64_t w : {std::uint64_t{0}, 2 * k - 1, 2 * k, 2 * k + 1, std::uint64_t{0xffffffffu}}) {
            if (w > 0xffffffffu) continue;
            const double r = noise::lattice_round(l, gamma, static_cast<std::uint32_t>(w));
            const double expect = ((w >> 1) < k ? m + 1.0 : m) * gamma;
            EXPECT_EQ(r, expect) << l << " w " << w;
        }
        // Unbiased: the mean over all words of one residue class is x to 2^-31.
        long double mean = 0.0L;
        for (std::uint32_t w = 0; w < (1u << 16); ++w) mean += noise::lattice_round(l, gamma, w << 16) / gamma;
        EXPECT_NEAR(static_cast<double>(mean / 65536.0L), x, 1.0 / 65536.0 + 1e-9) << l;
    }
}

TEST(LatticeAccounting, EpsilonApproachesTheContinuousLaplaceAndTheScaleSearchDeliversIt) {
    // h' = 10 levels, Delta_1 = 2 (the cube), d = 16.
    for (double b : {0.5, 20.0, 300.0}) {
        const mech::Guarantee g = mech::lattice_guarantee(mech::dlap_table(b), 10, 2.0, 16);
        const double cont = 10 * 2.0 / b;
        EXPECT_GT(g.epsilon, cont);             // never below the continuous value
        EXPECT_LT(g.epsilon, cont * 1.006);     // 1 + h'/(2t) + ... with t >= 1024
        EXPECT_LT(g.delta, 1e-15);
        EXPECT_STREQ(g.accountant, "lattice-laplace");
        const double s = mech::lattice_scale_for(b, 10, 2.0, 16);
        EXPECT_GT(s, b);
        EXPECT_LE(mech::lattice_guarantee(mech::dlap_table(s), 10, 2.0, 16).epsilon, cont);
        EXPECT_LT(s, b * 1.006);
    }
    // A node epsilon near the truncation at 2^17 / t in (64, 128] scales: delta grows as e^{-(2^17/t - eps_node)}.
    const mech::Guarantee big = mech::lattice_guarantee(mech::dlap_table(2.0 / 125.0), 1, 2.0, 1);
    EXPECT_GT(big.delta, 1e-15);
}

} // namespace
