// [audit] weights = "fitted" (host/audit/fitted_statistic.hpp; docs/AUDITS.md "Fitted weights"): Fisher's direction
// from two samples. What a wrong implementation would violate:
// - for two Gaussian clouds with a common, correlated covariance the direction is Sigma^-1 (mu_0 - mu_1) (cosine
//   above 0.999 at 2e4 vectors per side; the plain difference of means is far from it, so a fit that forgot the
//   covariance fails);
// - a round whose charge is constant on both sides gets weight 0 (the ridge keeps the solve defined), and samples
//   that cannot be told apart in mean give the plain sum;
// - it refuses samples it cannot fit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "host/audit/fitted_statistic.hpp"

namespace dpr::audit {
namespace {

/// n vectors of N(mu, L L^T), L lower triangular (row-major p x p), row-major.
std::vector<double> gaussian(const std::vector<double>& mu, const std::vector<double>& L, std::size_t n, unsigned seed) {
    const std::size_t p = mu.size();
    std::mt19937_64 g(seed);
    std::normal_distribution<double> z(0.0, 1.0);
    std::vector<double> out(n * p), e(p);
    for (std::size_t k = 0; k < n; ++k) {
        for (double& x : e) x = z(g);
        for (std::size_t i = 0; i < p; ++i) {
            double v = mu[i];
            for (std::size_t j = 0; j <= i; ++j) v += L[i * p + j] * e[j];
            out[k * p + i] = v;
        }
    }
    return out;
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
    return ab / std::sqrt(aa * bb);
}

TEST(FittedStatistic, FisherDirectionIsSigmaInverseTimesTheMeanDifference) {
    // Sigma = L L^T with L = [[1, 0, 0], [0.9, 0.3, 0], [0, 0, 2]]: rounds 1 and 2 strongly correlated.
    const std::vector<double> L = {1, 0, 0, 0.9, 0.3, 0, 0, 0, 2};
    const std::vector<double> mu0 = {0.5, 0.5, 0.0}, mu1 = {0.0, 0.0, 0.0};
    const std::vector<double> w = fisher_direction(gaussian(mu0, L, 20000, 1), gaussian(mu1, L, 20000, 2), 3);
    // Sigma = [[1, 0.9, 0], [0.9, 0.9, 0], [0, 0, 4]]; Sigma^-1 (0.5, 0.5, 0) = (0, 5/9, 0).
    const std::vector<double> exact = {0.0, 5.0 / 9.0, 0.0};
    EXPECT_GT(cosine(w, exact), 0.999) << w[0] << " " << w[1] << " " << w[2];
    EXPECT_LT(cosine({0.5, 0.5, 0.0}, exact), 0.75) << "the mean difference alone is not the answer";
}

TEST(FittedStatistic, AConstantRoundGetsNoWeightAndEqualMeansGiveTheSum) {
    std::vector<double> a = gaussian({1.0, 0.0}, {1, 0, 0, 1}, 5000, 3), b = gaussian({0.0, 0.0}, {1, 0, 0, 1}, 5000, 4);
    for (std::size_t k = 0; k < 5000; ++k) a[2 * k + 1] = b[2 * k + 1] = 0.25; // round 2 charges 0.25 always
    const std::vector<double> w = fisher_direction(a, b, 2);
    ASSERT_EQ(w.size(), 2u);
    EXPECT_GT(w[0], 0.5);
    EXPECT_EQ(w[1], 0.0);
    const std::vector<double> same(100, 0.7);
    EXPECT_EQ(fisher_direction(same, same, 2), std::vector<double>(2, 1.0));
}

TEST(FittedStatistic, SamplesThatCannotBeFittedAreRefused) {
    EXPECT_THROW(fisher_direction({1.0, 2.0}, {1.0, 2.0, 3.0, 4.0}, 2), std::invalid_argument); // one vector
    EXPECT_THROW(fisher_direction({1.0, 2.0, 3.0}, {1.0, 2.0, 3.0, 4.0}, 2), std::invalid_argument); // ragged
    EXPECT_THROW(fisher_direction({}, {}, 0), std::invalid_argument);
}

} // namespace
} // namespace dpr::audit
