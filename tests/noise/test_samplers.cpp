// Samplers of kernels/noise/samplers.hpp against their exact laws (docs/ARCHITECTURE.md §7, "Randomness
// and samplers"). Sample i always comes from its own stream, WordStream(StreamId{seed, purpose Test,
// element = i}), so every number below is reproducible bit for bit.
//
// Each continuous sampler gets a one-sample Kolmogorov-Smirnov test at alpha = 1e-6 against its
// exact CDF and, on the same sample, a meta-test: the identical test must REJECT (p < 1e-6) when
// the reference CDF's scale is multiplied by 1.05 and by 0.95, i.e. the test has the power to see a
// 5% scale error. Default suite (_Stat): n = 1e6. Slow suite (_Slow): n = 1e7 and a 1% error.
// Discrete samplers: Wilson intervals (Bernoulli) and chi-square with expected counts >= 5
// (categorical, uniform_index), each with its own planted-bug meta-test.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <boost/math/special_functions/binomial.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <gtest/gtest.h>

#include "kernels/noise/samplers.hpp"
#include "kernels/rng/uniform.hpp"
#include "noise/stat_tests.hpp"

using namespace dpr;
using dpr::rng::WordStream;
using dpr::test::kAlpha;

namespace {

constexpr std::size_t kN = 1000000;      // default suite: >= 1e6 samples per sampler
constexpr std::size_t kNSlow = 10000000; // slow suite
constexpr double kPerturb = 0.05;        // default meta-test: scale x 1.05 and x 0.95
constexpr double kPerturbSlow = 0.01;    // slow meta-test: scale x 1.01 and x 0.99

// ---- exact CDFs, parametrised by a scale factor f applied to the distribution's scale ----------

double laplace_cdf(double x, double b) {
    return x < 0 ? 0.5 * std::exp(x / b) : 1.0 - 0.5 * std::exp(-x / b);
}
double normal_cdf(double x, double sigma) {
    return 0.5 * std::erfc(-x / (sigma * std::sqrt(2.0)));
}
double exponential_cdf(double x, double scale) {
    return x <= 0 ? 0.0 : -std::expm1(-x / scale);
}
double gumbel_cdf(double x, double loc, double scale) {
    return std::exp(-std::exp(-(x - loc) / scale));
}
double gamma_cdf(double x, double k, double theta) {
    return x <= 0 ? 0.0 : boost::math::gamma_p(k, x / theta);
}

/// Exact CDF of the sum of k >= 1 iid Laplace(b) variables, i.e. of b (G1 - G2) with G1, G2 iid
/// Gamma(k, 1). For x >= 0 the density of G1 - G2 is
///     f(x) = e^{-x} / ((k-1)!)^2  sum_m C(k-1, m) x^{k-1-m} (k-1+m)! / 2^{k+m}        (m = 0..k-1)
/// (expand (x + y)^{k-1} in the convolution integral), and integrating each term gives the upper
/// tail as a mixture of Gamma tails:
///     P(X > x) = sum_{m=0}^{k-1} C(k-1+m, m) 2^{-(k+m)} Q(k - m, x)        (Q: regularised upper)
/// The weights sum to 1/2 (= P(X > 0)); k = 1 gives the Laplace tail e^{-x}/2; k = 2 gives
/// e^{-x}(2 + x)/4. The law is symmetric, so F(x) = P(X > -x) for x < 0.
double laplace_sum_tail_gamma_q(double x, unsigned k) {
    double s = 0.0;
    for (unsigned m = 0; m < k; ++m)
        s += boost::math::binomial_coefficient<double>(k - 1 + m, m) *
             std::ldexp(1.0, -static_cast<int>(k + m)) * boost::math::gamma_q(static_cast<double>(k - m), x);
    return s;
}
/// The same with Q(j, x) = e^{-x} sum_{i<j} x^i / i! for integer j, collected into one polynomial
/// (about 20x faster than gamma_q; checked against the form above in LaplaceSumCdf below).
double laplace_sum_tail(double x, unsigned k) {
    std::vector<double> c(k, 0.0); // c_i = sum over m with k - m > i of w_m / i!
    for (unsigned m = 0; m < k; ++m) {
        const double w = boost::math::binomial_coefficient<double>(k - 1 + m, m) *
                         std::ldexp(1.0, -static_cast<int>(k + m));
        double fact = 1.0;
        for (unsigned i = 0; i < k - m; ++i) {
            if (i > 0) fact *= i;
            c[i] += w / fact;
        }
    }
    double poly = 0.0;
    for (unsigned i = k; i-- > 0;) poly = poly * x + c[i];
    return std::exp(-x) * poly;
}
double laplace_sum_cdf(double x, unsigned k, double b) {
    return x < 0 ? laplace_sum_tail(-x / b, k) : 1.0 - laplace_sum_tail(x / b, k);
}

// ---- the KS test and its meta-test --------------------------------------------------------------

/// KS of `sample` against cdf(x, 1) (must accept) and against cdf(x, 1 + perturb), cdf(x, 1 - perturb)
/// (must reject). `cdf(x, f)` is the exact CDF with the distribution's scale multiplied by f.
void ks_with_meta(const std::string& name, std::vector<double> sample,
                  const std::function<double(double, double)>& cdf, double perturb) {
    std::sort(sample.begin(), sample.end());
    const auto ok = test::ks_one_sample_sorted(sample, [&](double x) { return cdf(x, 1.0); });
    std::cout << "[ KS ] " << name << ", exact scale: " << ok.str() << "\n";
    EXPECT_GT(ok.p, kAlpha) << name << ": KS rejects the exact CDF: " << ok.str();
    for (double f : {1.0 + perturb, 1.0 - perturb}) {
        const auto bad = test::ks_one_sample_sorted(sample, [&](double x) { return cdf(x, f); });
        std::cout << "[ KS ] " << name << ", scale x " << f << ": " << bad.str() << "\n";
        EXPECT_LT(bad.p, kAlpha) << name << ": KS has no power against scale x " << f << ": " << bad.str();
    }
}

template <class Draw>
std::vector<double> draw(std::uint32_t seed, std::size_t n, Draw&& d) {
    return test::draw_samples<double>(seed, n, std::forward<Draw>(d));
}

// Parameters: non-unit scales and locations, so that a confusion of scale with variance or rate, or
// a dropped location, is a failure.
constexpr double kLaplaceB = 1.5;
constexpr double kSigma = 2.0;
constexpr double kExpScale = 0.7;
constexpr double kGumbelLoc = 0.3, kGumbelScale = 1.7;
constexpr double kLapSumB = 0.8;

void check_laplace(std::uint32_t seed, std::size_t n, double perturb) {
    ks_with_meta(
        "laplace(b=1.5)", draw(seed, n, [](WordStream& ws) { return noise::laplace(ws, kLaplaceB); }),
        [](double x, double f) { return laplace_cdf(x, kLaplaceB * f); }, perturb);
}
void check_gaussian(std::uint32_t seed, std::size_t n, double perturb) {
    ks_with_meta(
        "gaussian(sigma=2)", draw(seed, n, [](WordStream& ws) { return noise::gaussian(ws, kSigma); }),
        [](double x, double f) { return normal_cdf(x, kSigma * f); }, perturb);
}
void check_exponential(std::uint32_t seed, std::size_t n, double perturb) {
    ks_with_meta(
        "exponential(scale=0.7)",
        draw(seed, n, [](WordStream& ws) { return noise::exponential(ws, kExpScale); }),
        [](double x, double f) { return exponential_cdf(x, kExpScale * f); }, perturb);
}
void check_gumbel(std::uint32_t seed, std::size_t n, double perturb) {
    ks_with_meta(
        "gumbel(loc=0.3, scale=1.7)",
        draw(seed, n, [](WordStream& ws) { return noise::gumbel(ws, kGumbelLoc, kGumbelScale); }),
        [](double x, double f) { return gumbel_cdf(x, kGumbelLoc, kGumbelScale * f); }, perturb);
}
void check_gamma(std::uint32_t seed, std::size_t n, double perturb, double k, double theta) {
    ks_with_meta(
        "gamma(k=" + std::to_string(k) + ", theta=" + std::to_string(theta) + ")",
        draw(seed, n, [=](WordStream& ws) { return noise::gamma(ws, k, theta); }),
        [=](double x, double f) { return gamma_cdf(x, k, theta * f); }, perturb);
}
void check_laplace_sum(std::uint32_t seed, std::size_t n, double perturb, unsigned k) {
    ks_with_meta(
        "laplace_sum(k=" + std::to_string(k) + ", b=0.8)",
        draw(seed, n, [=](WordStream& ws) { return noise::laplace_sum_stream(ws, k, kLapSumB); }),
        [=](double x, double f) { return laplace_sum_cdf(x, k, kLapSumB * f); }, perturb);
}
void check_gaussian_sum(std::uint32_t seed, std::size_t n, double perturb, unsigned k) {
    ks_with_meta(
        "gaussian_sum(k=" + std::to_string(k) + ", sigma=2)",
        draw(seed, n, [=](WordStream& ws) { return noise::gaussian_sum_stream(ws, k, kSigma); }),
        [=](double x, double f) { return normal_cdf(x, kSigma * std::sqrt(double(k)) * f); }, perturb);
}

} // namespace

// ================================ unit: the reference laws themselves ===========================

TEST(LaplaceSumCdf, MatchesLaplaceForOneTermAndClosedFormForTwo) {
    for (double x : {-7.0, -1.3, -0.2, 0.0, 0.4, 2.5, 9.0}) {
        EXPECT_NEAR(laplace_sum_cdf(x, 1, 1.7), laplace_cdf(x, 1.7), 1e-15) << x;
        const double a = std::abs(x);
        const double tail2 = std::exp(-a) * (2.0 + a) / 4.0; // density e^{-|x|}(1 + |x|)/4 integrated
        EXPECT_NEAR(laplace_sum_cdf(x, 2, 1.0), x < 0 ? tail2 : 1.0 - tail2, 1e-15) << x;
    }
    for (unsigned k : {1u, 3u, 5u, 12u}) {
        EXPECT_NEAR(laplace_sum_tail(0.0, k), 0.5, 1e-14) << k;
        for (double x : {0.01, 0.3, 1.0, 2.2, 5.0, 11.0, 30.0})
            EXPECT_NEAR(laplace_sum_tail(x, k), laplace_sum_tail_gamma_q(x, k),
                        1e-12 * laplace_sum_tail(x, k))
                << "k = " << k << ", x = " << x;
    }
}

TEST(KolmogorovSf, KnownValuesAndBothSeriesAgree) {
    // Classical critical values of the Kolmogorov distribution: P(K > 1.3581) = 0.05,
    // P(K > 1.6276) = 0.01, P(K > 1.9495) = 0.001.
    EXPECT_NEAR(test::kolmogorov_sf(1.3581), 0.05, 2e-5);
    EXPECT_NEAR(test::kolmogorov_sf(1.6276), 0.01, 2e-5);
    EXPECT_NEAR(test::kolmogorov_sf(1.9495), 0.001, 2e-6);
    // The two series meet at x = 1 continuously.
    EXPECT_NEAR(test::kolmogorov_sf(1.0 - 1e-12), test::kolmogorov_sf(1.0), 1e-10);
    EXPECT_DOUBLE_EQ(test::kolmogorov_sf(0.0), 1.0);
    EXPECT_LT(test::kolmogorov_sf(6.0), 1e-30);
}

TEST(ChiSquareGof, RejectsCountsInImpossibleCellsAndThinCells) {
    const auto r = test::chi_square_gof({10, 0, 1}, {0.5, 0.5, 0.0});
    EXPECT_EQ(r.p, 0.0);
    EXPECT_THROW(test::chi_square_gof({3, 3}, {0.5, 0.5}), std::invalid_argument);
}

// ================================ default statistical suite (n = 1e6, 5%) ========================

TEST(Laplace_Stat, KsExactAndRejectsScaleOff5Percent) {
    check_laplace(101, kN, kPerturb);
}
TEST(Gaussian_Stat, KsExactAndRejectsScaleOff5Percent) {
    check_gaussian(102, kN, kPerturb);
}
TEST(Exponential_Stat, KsExactAndRejectsScaleOff5Percent) {
    check_exponential(103, kN, kPerturb);
}
TEST(Gumbel_Stat, KsExactAndRejectsScaleOff5Percent) {
    check_gumbel(104, kN, kPerturb);
}
TEST(Gamma_Stat, IntegerShape3KsExactAndRejectsScaleOff5Percent) {
    check_gamma(105, kN, kPerturb, 3.0, 2.0);
}
TEST(Gamma_Stat, Shape0p4KsExactAndRejectsScaleOff5Percent) {
    check_gamma(106, kN, kPerturb, 0.4, 1.3);
}
TEST(Gamma_Stat, Shape2p7KsExactAndRejectsScaleOff5Percent) {
    check_gamma(107, kN, kPerturb, 2.7, 0.5);
}
TEST(Gamma_Stat, Shape1KsExactAndRejectsScaleOff5Percent) {
    check_gamma(108, kN, kPerturb, 1.0, 1.0);
}
TEST(LaplaceSum_Stat, K1KsExactAndRejectsScaleOff5Percent) {
    check_laplace_sum(109, kN, kPerturb, 1);
}
TEST(LaplaceSum_Stat, K5KsExactAndRejectsScaleOff5Percent) {
    check_laplace_sum(110, kN, kPerturb, 5);
}
// Both branches of the padding law and their edges (kernels/noise/lane_noise.hpp): k <= 3 is a ratio of uniform
// products, k >= 4 the normal variance mixture; k = 32 (the largest padding, T near 2^32) has two product chunks
// in double.
TEST(LaplaceSum_Stat, K3RatioBranchKsExactAndRejectsScaleOff5Percent) { check_laplace_sum(117, kN, kPerturb, 3); }
TEST(LaplaceSum_Stat, K4MixtureBranchKsExactAndRejectsScaleOff5Percent) { check_laplace_sum(118, kN, kPerturb, 4); }
// (n / 4: the k = 32 CDF is costly to evaluate, and a 5% scale error of a near-normal law still moves the KS
// distance ~4x past its critical value at that size.)
TEST(LaplaceSum_Stat, K32TwoChunksKsExactAndRejectsScaleOff5Percent) { check_laplace_sum(119, kN / 4, kPerturb, 32); }

// The float version the learners use with precision = "float": 24-bit uniforms, float arithmetic, products in
// chunks of 5 factors (k = 7 and 32: two and seven chunks).
TEST(LaplaceSum_Stat, FloatKsExactAndRejectsScaleOff5Percent) {
    for (unsigned k : {1u, 3u, 7u, 32u}) {
        ks_with_meta(
            "laplace_sum<float>(k=" + std::to_string(k) + ", b=0.8)",
            draw(120 + k, k == 32 ? kN / 4 : kN,
                 [=](WordStream& ws) {
                     float u[36];
                     for (std::uint32_t j = 0; j < noise::laplace_sum_uniforms(k); ++j) u[j] = ws.next_float();
                     return static_cast<double>(noise::laplace_sum(u, k, static_cast<float>(kLapSumB)));
                 }),
            [=](double x, double f) { return laplace_sum_cdf(x, k, kLapSumB * f); }, kPerturb);
    }
}
TEST(GaussianSum_Stat, K1KsExactAndRejectsScaleOff5Percent) {
    check_gaussian_sum(111, kN, kPerturb, 1);
}
TEST(GaussianSum_Stat, K7KsExactAndRejectsScaleOff5Percent) {
    check_gaussian_sum(112, kN, kPerturb, 7);
}

TEST(Laplace_Stat, KsRejectsMeanShiftOfTwoHundredthsSd) {
    // Google DP's planted shift: 0.02 standard deviations (sd = sqrt(2) b).
    auto s = draw(113, kN, [](WordStream& ws) { return noise::laplace(ws, kLaplaceB); });
    const double shift = 0.02 * std::sqrt(2.0) * kLaplaceB;
    const auto r = test::ks_one_sample(s, [&](double x) { return laplace_cdf(x - shift, kLaplaceB); });
    std::cout << "[ KS ] laplace(b=1.5), mean + 0.02 sd: " << r.str() << "\n";
    EXPECT_LT(r.p, kAlpha) << r.str();
}

TEST(Gaussian_Stat, KsRejectsMeanShiftOfTwoHundredthsSd) {
    auto s = draw(114, kN, [](WordStream& ws) { return noise::gaussian(ws, kSigma); });
    const auto r = test::ks_one_sample(s, [&](double x) { return normal_cdf(x - 0.02 * kSigma, kSigma); });
    std::cout << "[ KS ] gaussian(sigma=2), mean + 0.02 sd: " << r.str() << "\n";
    EXPECT_LT(r.p, kAlpha) << r.str();
}

TEST(LaplaceSum_Stat, K5MatchesExplicitSumOfFiveLaplaceDraws) {
    // Cross-check of the identity sum_{i<5} Laplace(b) = b (G1 - G2) that does not rely on the
    // closed-form CDF above: two-sample KS against explicit sums of five laplace() draws, plus the
    // variance 2 k b^2. Meta: explicit sums with b x 1.05 and x 0.95 must be told apart.
    constexpr unsigned k = 5;
    auto fused = draw(115, kN, [](WordStream& ws) { return noise::laplace_sum_stream(ws, k, kLapSumB); });
    double s2 = 0;
    for (double x : fused) s2 += x * x;
    const double var = s2 / kN, want = 2.0 * k * kLapSumB * kLapSumB;
    // sd of the sample second moment: sqrt((E x^4 - var^2) / n); E x^4 = k m4 + 3 k (k-1) (2b^2)^2,
    // m4 = 24 b^4 for one Laplace(b).
    const double b4 = std::pow(kLapSumB, 4);
    const double m4 = k * 24.0 * b4 + 3.0 * k * (k - 1.0) * 4.0 * b4;
    EXPECT_NEAR(var, want, 6.0 * std::sqrt((m4 - want * want) / kN)) << "variance of laplace_sum(5)";
    auto explicit_sum = [](double b) {
        return [b](WordStream& ws) {
            double s = 0;
            for (unsigned i = 0; i < k; ++i) s += noise::laplace(ws, b);
            return s;
        };
    };
    auto ref = draw(116, kN, explicit_sum(kLapSumB));
    const auto ok = test::ks_two_sample(fused, ref);
    std::cout << "[ KS2 ] laplace_sum(5) vs explicit sum of 5 laplace: " << ok.str() << "\n";
    EXPECT_GT(ok.p, kAlpha) << ok.str();
    for (double f : {1.0 + kPerturb, 1.0 - kPerturb}) {
        auto bad_ref = draw(116, kN, explicit_sum(kLapSumB * f));
        const auto bad = test::ks_two_sample(fused, bad_ref);
        std::cout << "[ KS2 ] laplace_sum(5) vs explicit sum with b x " << f << ": " << bad.str() << "\n";
        EXPECT_LT(bad.p, kAlpha) << bad.str();
    }
}

TEST(Bernoulli_Stat, WilsonIntervalContainsPAndExcludesPOff5Percent) {
    for (double p : {0.5, 0.1, 0.9, 1e-3}) {
        const auto hits =
            test::draw_samples<char>(117, kN, [p](WordStream& ws) { return char(noise::bernoulli(ws, p)); });
        std::uint64_t k = 0;
        for (char h : hits) k += h;
        const auto ci = test::wilson_interval(k, kN);
        EXPECT_TRUE(ci.contains(p)) << "p = " << p << ": " << k << " / " << kN << " -> [" << ci.lo << ", "
                                    << ci.hi << "]";
        if (p >= 0.05) { // power: 0.05 p must exceed the interval's width (about 2 * 4.9 sqrt(p(1-p)/n))
            EXPECT_FALSE(ci.contains(p * 1.05)) << p;
            EXPECT_FALSE(ci.contains(p * 0.95)) << p;
        }
    }
}

TEST(Bernoulli, ZeroAndOneAreExact) {
    // Open uniforms: u < 0 never holds and u < 1 always does.
    for (std::uint32_t i = 0; i < 10000; ++i) {
        WordStream a(test::test_stream(118, i)), b(test::test_stream(118, i));
        EXPECT_FALSE(noise::bernoulli(a, 0.0));
        EXPECT_TRUE(noise::bernoulli(b, 1.0));
    }
}

namespace {
std::vector<std::uint64_t> categorical_counts(std::uint32_t seed, const std::vector<double>& w,
                                              std::size_t n) {
    double total = 0;
    for (double x : w) total += x;
    const auto idx = test::draw_samples<std::uint32_t>(seed, n, [&](WordStream& ws) {
        return noise::categorical(ws, w.data(), static_cast<std::uint32_t>(w.size()), total);
    });
    std::vector<std::uint64_t> c(w.size(), 0);
    for (auto i : idx) ++c.at(i);
    return c;
}
} // namespace

TEST(Categorical_Stat, ChiSquareAgainstNormalisedWeightsZeroWeightsNeverChosen) {
    // Zero weights first, in the middle and last; one small weight (expected count ~1400).
    const std::vector<double> w = {0.0, 1.0, 2.5, 0.0, 0.5, 3.0, 0.01, 0.0};
    const auto c = categorical_counts(119, w, kN);
    for (std::size_t i = 0; i < w.size(); ++i)
        if (w[i] == 0.0) EXPECT_EQ(c[i], 0u) << "zero-weight index " << i << " was selected";
    const auto ok = test::chi_square_gof(c, w);
    std::cout << "[ chi2 ] categorical, exact weights: " << ok.str() << "\n";
    EXPECT_GT(ok.p, kAlpha) << ok.str();
    // Meta: the test sees one weight off by 5%.
    auto wrong = w;
    wrong[5] *= 1.05;
    const auto bad = test::chi_square_gof(c, wrong);
    std::cout << "[ chi2 ] categorical, weight[5] x 1.05: " << bad.str() << "\n";
    EXPECT_LT(bad.p, kAlpha) << bad.str();
}

TEST(Categorical, RoundingNeverSelectsZeroWeight) {
    // A source that returns the largest open uniform: target = u * total can reach past the
    // accumulated sum when `total` carries rounding; the scan must stop at the last positive weight.
    struct Max {
        std::uint32_t next_u32() { return 0xffffffffu; }
        double next_double() { return rng::kU53Max; }
    } src;
    const double w[] = {0.1, 0.2, 0.0, 0.0};
    EXPECT_EQ(noise::categorical(src, w, 4, 0.1 + 0.2 + 1e-12), 1u);
    const double w2[] = {0.0, 0.0, 1e-300, 0.0};
    EXPECT_EQ(noise::categorical(src, w2, 4, 1e-300), 2u);
    struct Min {
        std::uint32_t next_u32() { return 0u; }
        double next_double() { return rng::kU53Min; }
    } lo;
    EXPECT_EQ(noise::categorical(lo, w2, 4, 1e-300), 2u);
}

TEST(UniformIndex_Stat, ChiSquareForNonPowerOfTwoN) {
    for (std::uint32_t n : {10u, 1000u, 7u}) {
        const auto v = test::draw_samples<std::uint32_t>(
            120 + n, kN, [n](WordStream& ws) { return noise::uniform_index(ws, n); });
        std::vector<std::uint64_t> c(n, 0);
        for (auto x : v) ++c.at(x);
        const auto r = test::chi_square_gof(c, std::vector<double>(n, 1.0));
        std::cout << "[ chi2 ] uniform_index(" << n << "): " << r.str() << "\n";
        EXPECT_GT(r.p, kAlpha) << n << ": " << r.str();
    }
}

TEST(UniformIndex_Stat, NoModuloOrMultiplyShiftBiasAtNThreeTimesTwoToThe30) {
    // n = 3 * 2^30 makes both classic biases large: `word % n` doubles the probability of
    // [0, 2^30), and multiply-shift without Lemire's rejection doubles that of every index = 0 mod 3.
    // Cells: index >> 30 (3 cells) and index mod 3 (3 cells). The exact sampler passes both; the two
    // planted biased samplers, on the same streams, must each fail one.
    constexpr std::uint32_t n = 3u << 30;
    auto cells = [](const std::vector<std::uint32_t>& v) {
        std::vector<std::uint64_t> hi(3, 0), mod3(3, 0);
        for (auto x : v) ++hi.at(x >> 30), ++mod3[x % 3];
        return std::make_pair(hi, mod3);
    };
    const std::vector<double> flat(3, 1.0);
    const auto exact = cells(test::draw_samples<std::uint32_t>(
        121, kN, [](WordStream& ws) { return noise::uniform_index(ws, n); }));
    const auto r_hi = test::chi_square_gof(exact.first, flat),
               r_mod = test::chi_square_gof(exact.second, flat);
    std::cout << "[ chi2 ] uniform_index(3*2^30): index>>30 " << r_hi.str() << "; index%3 " << r_mod.str()
              << "\n";
    EXPECT_GT(r_hi.p, kAlpha) << r_hi.str();
    EXPECT_GT(r_mod.p, kAlpha) << r_mod.str();
    const auto modulo =
        cells(test::draw_samples<std::uint32_t>(121, kN, [](WordStream& ws) { return ws.next_u32() % n; }));
    const auto r_modulo = test::chi_square_gof(modulo.first, flat);
    std::cout << "[ chi2 ] planted word % n: index>>30 " << r_modulo.str() << "\n";
    EXPECT_LT(r_modulo.p, kAlpha) << r_modulo.str();
    const auto shift = cells(test::draw_samples<std::uint32_t>(121, kN, [](WordStream& ws) {
        return static_cast<std::uint32_t>((std::uint64_t{ws.next_u32()} * n) >> 32);
    }));
    const auto r_shift = test::chi_square_gof(shift.second, flat);
    std::cout << "[ chi2 ] planted multiply-shift without rejection: index%3 " << r_shift.str() << "\n";
    EXPECT_LT(r_shift.p, kAlpha) << r_shift.str();
}

TEST(UniformIndex, EdgeSizes) {
    for (std::uint32_t i = 0; i < 1000; ++i) {
        WordStream a(test::test_stream(122, i)), b(test::test_stream(122, i));
        EXPECT_EQ(noise::uniform_index(a, 1), 0u);
        EXPECT_LT(noise::uniform_index(b, 0xffffffffu), 0xffffffffu);
    }
}

// ================================ unit: word usage and edge values ==============================

namespace {
/// Counts the 32-bit words a sampler takes (next_double takes two).
struct Counting {
    WordStream ws;
    std::uint64_t words = 0;
    std::uint32_t next_u32() { return ++words, ws.next_u32(); }
    double next_double() {
        const std::uint32_t hi = next_u32();
        return rng::u01_open_53(hi, next_u32());
    }
};
} // namespace

TEST(Samplers, WordUsageIsWhatTheHeaderDocuments) {
    // Fused kernels rely on these counts to place later draws of the same element stream.
    const double w[] = {1.0, 2.0, 3.0};
    for (std::uint32_t i = 0; i < 1000; ++i) {
        auto count = [i](auto&& f) {
            Counting c{WordStream(test::test_stream(123, i))};
            f(c);
            return c.words;
        };
        EXPECT_EQ(count([](Counting& c) { noise::laplace(c, 1.0); }), 2u);
        EXPECT_EQ(count([](Counting& c) { noise::exponential(c, 1.0); }), 2u);
        EXPECT_EQ(count([](Counting& c) { noise::gumbel(c, 0.0, 1.0); }), 2u);
        EXPECT_EQ(count([](Counting& c) { noise::bernoulli(c, 0.3); }), 2u);
        EXPECT_EQ(count([](Counting& c) { noise::gaussian(c, 1.0); }), 4u);
        EXPECT_EQ(count([](Counting& c) { noise::gaussian_sum_stream(c, 3, 1.0); }), 4u);
        EXPECT_EQ(count([&](Counting& c) { noise::categorical(c, w, 3, 6.0); }), 2u);
        EXPECT_EQ(count([](Counting& c) { noise::laplace_sum_stream(c, 0, 1.0); }), 0u);
        EXPECT_EQ(count([](Counting& c) { noise::laplace_sum_stream(c, 3, 1.0); }), 12u); // 2k uniforms
        EXPECT_EQ(count([](Counting& c) { noise::laplace_sum_stream(c, 8, 1.0); }), 20u); // k + 2 uniforms
        const auto g = count([](Counting& c) { noise::gamma(c, 3.0, 1.0); });
        EXPECT_EQ(g % 2, 0u);
        EXPECT_GE(g, 6u);
        EXPECT_GE(count([](Counting& c) { noise::gamma(c, 0.4, 1.0); }), 8u); // + 2 for U^{1/k}
    }
}

TEST(Samplers, GammaWordsPerDrawAreCloseToSix) {
    // Marsaglia-Tsang accepts with probability > 0.95 for k >= 1, so about 6 / 0.95 <= 6.4 words on
    // average (plus 4 for the rare v <= 0 redraw). 1e5 draws: mean of 6 + 6 Geometric rejections.
    for (double k : {1.0, 3.0, 30.0}) {
        std::uint64_t total = 0;
        constexpr std::uint32_t n = 100000;
        for (std::uint32_t i = 0; i < n; ++i) {
            Counting c{WordStream(test::test_stream(124, i))};
            noise::gamma(c, k, 1.0);
            total += c.words;
        }
        EXPECT_LT(static_cast<double>(total) / n, 6.4) << "k = " << k;
    }
}

TEST(SamplerEdges, ExtremeUniformsGiveFiniteDocumentedMaxima) {
    // What the extreme open uniforms of kernels/rng/uniform.hpp produce (docs/RANDOMNESS.md):
    //   53-bit grid, u in [2^-53, 1 - 2^-53]:
    //     laplace_from_u(u, b):      b ln(2 * 2^-53) = -52 ln2 b = -36.04365 b ... +36.04365 b
    //     exponential_from_u(u, s):  -s ln(1 - 2^-53) = 1.11e-16 s ... 53 ln2 s = 36.73680 s
    //     gumbel_from_u(u, 0, s):    -s ln(53 ln2) = -3.60378 s ... -s ln(2^-53) = 36.73680 s
    //     normal_from_u(u1, u2):     |x| <= sqrt(2 * 53 ln2) = 8.57167
    //   24-bit grid, u in [2^-24, 1 - 2^-24] (float paths):
    //     Laplace +-23 ln2 b = +-15.94238 b; exponential <= 24 ln2 = 16.63553; Gumbel in
    //     [-2.81154, 16.63553]; normal |x| <= sqrt(48 ln2) = 5.76811.
    const double ln2 = std::log(2.0);
    const double b = 1.0;
    EXPECT_NEAR(noise::laplace_from_u(rng::kU53Min, b), -52 * ln2, 1e-13);
    EXPECT_NEAR(noise::laplace_from_u(rng::kU53Max, b), 52 * ln2, 1e-13);
    EXPECT_NEAR(noise::exponential_from_u(rng::kU53Min, 1.0), 53 * ln2, 1e-13);
    EXPECT_GT(noise::exponential_from_u(rng::kU53Max, 1.0), 0.0); // never exactly 0
    EXPECT_NEAR(noise::exponential_from_u(rng::kU53Max, 1.0), 0x1.0p-53, 1e-30);
    EXPECT_NEAR(noise::gumbel_from_u(rng::kU53Min, 0.0, 1.0), -std::log(53 * ln2), 1e-13);
    EXPECT_NEAR(noise::gumbel_from_u(rng::kU53Max, 0.0, 1.0), 53 * ln2, 1e-12);
    const double gauss_max = std::sqrt(2 * 53 * ln2);
    for (double u1 : {rng::kU53Min, rng::kU53Max, 0.5 - 0x1.0p-53})
        for (double u2 : {rng::kU53Min, rng::kU53Max, 0.25 + 0x1.0p-53, 0.5 - 0x1.0p-53}) {
            const double z = noise::normal_from_u(u1, u2);
            EXPECT_TRUE(std::isfinite(z));
            EXPECT_LE(std::abs(z), gauss_max + 1e-12);
        }
    EXPECT_NEAR(noise::normal_from_u(rng::kU53Min, rng::kU53Min), gauss_max, 1e-12);

    const double f_min = rng::kU24Min, f_max = rng::kU24Max;
    EXPECT_NEAR(noise::laplace_from_u(f_min, b), -23 * ln2, 1e-12);
    EXPECT_NEAR(noise::laplace_from_u(f_max, b), 23 * ln2, 1e-12);
    EXPECT_NEAR(noise::exponential_from_u(f_min, 1.0), 24 * ln2, 1e-12);
    EXPECT_NEAR(noise::gumbel_from_u(f_min, 0.0, 1.0), -std::log(24 * ln2), 1e-12);
    EXPECT_NEAR(noise::gumbel_from_u(f_max, 0.0, 1.0), 24 * ln2, 1e-6); // -ln(-ln(1 - 2^-24))
    EXPECT_NEAR(noise::normal_from_u(f_min, f_min), std::sqrt(48 * ln2), 1e-9);
    // The same transforms evaluated in float arithmetic stay finite at the float extremes.
    EXPECT_TRUE(std::isfinite(std::log(2.0f * rng::kU24Min)));
    EXPECT_TRUE(std::isfinite(-std::log(2.0f * (1.0f - rng::kU24Max))));
    EXPECT_TRUE(std::isfinite(-std::log(-std::log(rng::kU24Max))));
    EXPECT_TRUE(std::isfinite(std::sqrt(-2.0f * std::log(rng::kU24Min))));
    EXPECT_EQ(-std::log(2.0f * (1.0f - rng::kU24Max)), -std::log(2.0f * rng::kU24Min));
}

TEST(SamplerEdges, WordSourcesAtTheExtremesGiveFiniteDraws) {
    // All-zero and all-one words drive the fixed-count samplers to their extreme uniforms. (Gamma is
    // a rejection sampler: a constant source could reject forever, so its edges are covered by the
    // 1e8-draw slow test instead.)
    struct Const {
        std::uint32_t w;
        std::uint32_t next_u32() { return w; }
        double next_double() { return rng::u01_open_53(w, w); }
    };
    for (std::uint32_t w : {0u, 0xffffffffu}) {
        Const s{w};
        EXPECT_TRUE(std::isfinite(noise::laplace(s, 3.0)));
        EXPECT_TRUE(std::isfinite(noise::exponential(s, 3.0)));
        EXPECT_TRUE(std::isfinite(noise::gumbel(s, 1.0, 3.0)));
        EXPECT_TRUE(std::isfinite(noise::gaussian(s, 3.0)));
        EXPECT_TRUE(std::isfinite(noise::gaussian_sum_stream(s, 1000, 3.0)));
    }
}

// ================================ slow suite (n = 1e7, 1%) ======================================

TEST(Laplace_Slow, KsExactAndRejectsScaleOff1Percent) {
    check_laplace(201, kNSlow, kPerturbSlow);
}
TEST(Gaussian_Slow, KsExactAndRejectsScaleOff1Percent) {
    check_gaussian(202, kNSlow, kPerturbSlow);
}
TEST(Exponential_Slow, KsExactAndRejectsScaleOff1Percent) {
    check_exponential(203, kNSlow, kPerturbSlow);
}
TEST(Gumbel_Slow, KsExactAndRejectsScaleOff1Percent) {
    check_gumbel(204, kNSlow, kPerturbSlow);
}
TEST(Gamma_Slow, IntegerShape3KsExactAndRejectsScaleOff1Percent) {
    check_gamma(205, kNSlow, kPerturbSlow, 3.0, 2.0);
}
TEST(Gamma_Slow, Shape0p4KsExactAndRejectsScaleOff1Percent) {
    check_gamma(206, kNSlow, kPerturbSlow, 0.4, 1.3);
}
TEST(Gamma_Slow, Shape2p7KsExactAndRejectsScaleOff1Percent) {
    check_gamma(207, kNSlow, kPerturbSlow, 2.7, 0.5);
}
TEST(LaplaceSum_Slow, K5KsExactAndRejectsScaleOff1Percent) {
    check_laplace_sum(210, kNSlow, kPerturbSlow, 5);
}
TEST(GaussianSum_Slow, K7KsExactAndRejectsScaleOff1Percent) {
    check_gaussian_sum(212, kNSlow, kPerturbSlow, 7);
}

TEST(SamplerEdges_Slow, NoNanOrInfIn1e8DrawsOfEachSampler) {
    // 1e8 draws per sampler, element streams 0 .. 1e8-1, on all hardware threads; also records each
    // sampler's largest |x| so a regression in the tail limit shows up (Laplace: <= 36.04 b).
    constexpr std::uint64_t n = 100000000;
    struct Case {
        const char* name;
        std::function<double(WordStream&)> f;
        double bound; // a priori bound on |x| from the open uniforms (inf: none)
    };
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<Case> cases = {
        {"laplace(1)", [](WordStream& ws) { return noise::laplace(ws, 1.0); }, 52 * std::log(2.0) + 1e-12},
        {"gaussian(1)", [](WordStream& ws) { return noise::gaussian(ws, 1.0); },
         std::sqrt(106 * std::log(2.0)) + 1e-12},
        {"exponential(1)", [](WordStream& ws) { return noise::exponential(ws, 1.0); },
         53 * std::log(2.0) + 1e-12},
        {"gumbel(0,1)", [](WordStream& ws) { return noise::gumbel(ws, 0.0, 1.0); },
         53 * std::log(2.0) + 1e-12},
        {"gamma(0.4,1)", [](WordStream& ws) { return noise::gamma(ws, 0.4, 1.0); }, inf},
        {"gamma(3,1)", [](WordStream& ws) { return noise::gamma(ws, 3.0, 1.0); }, inf},
        {"laplace_sum(5,1)", [](WordStream& ws) { return noise::laplace_sum_stream(ws, 5, 1.0); }, inf},
    };
    for (const auto& c : cases) {
        const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
        std::vector<std::uint64_t> bad(threads, 0);
        std::vector<double> maxabs(threads, 0.0);
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                for (std::uint64_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
                    WordStream ws(test::test_stream(300, static_cast<std::uint32_t>(i)));
                    const double x = c.f(ws);
                    if (!std::isfinite(x))
                        ++bad[t];
                    else
                        maxabs[t] = std::max(maxabs[t], std::abs(x));
                }
            });
        for (auto& th : pool) th.join();
        std::uint64_t nbad = 0;
        double mx = 0;
        for (unsigned t = 0; t < threads; ++t) nbad += bad[t], mx = std::max(mx, maxabs[t]);
        std::cout << "[ edge ] " << c.name << ": " << nbad << " non-finite in " << n
                  << " draws, max |x| = " << mx << "\n";
        EXPECT_EQ(nbad, 0u) << c.name;
        EXPECT_LE(mx, c.bound) << c.name;
    }
}
