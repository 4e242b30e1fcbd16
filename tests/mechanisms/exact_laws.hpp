#pragma once
// Test helpers for checking privacy theorems on exact laws (long double): the discrete Laplace sampler's exact law
// P^(n) from its thresholds (kernels/noise/discrete_laplace.hpp; docs/spec/model.md §1.8), and the hockey-stick
// divergence that an (eps, delta) guarantee bounds by delta.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/mechanisms/lattice.hpp"
#include "kernels/noise/discrete_laplace.hpp"

namespace dpr::test {

/// The sampler's exact law P^(n) from the thresholds (long double), |n| <= 2^17.
struct ExactLaw {
    long double pj;
    long double p[noise::kDlapDigits];
    explicit ExactLaw(const noise::DlapTable& tab) {
        pj = mech::dlap_probability(tab.theta, 2);
        mech::dlap_digit_probabilities(tab, p);
    }
    long double geometric(std::uint32_t g) const {
        long double v = 1.0L;
        for (std::uint32_t i = 0; i < noise::kDlapDigits; ++i) v *= ((g >> i) & 1u) ? p[i] : 1.0L - p[i];
        return v;
    }
    long double operator()(std::int64_t n) const {
        if (n == 0) return 1.0L - pj;
        const std::uint64_t m = static_cast<std::uint64_t>(n < 0 ? -n : n);
        if (m > noise::kDlapMax) return 0.0L;
        return pj / 2.0L * geometric(static_cast<std::uint32_t>(m - 1));
    }
};

/// The hockey-stick divergence sum_o max(0, P(o) - e^eps Q(o)): an (eps, delta) guarantee makes it at most delta.
inline long double hockey_stick(const std::vector<long double>& P, const std::vector<long double>& Q, double eps) {
    long double h = 0;
    for (std::size_t i = 0; i < P.size(); ++i) h += std::max(0.0L, P[i] - std::exp(static_cast<long double>(eps)) * Q[i]);
    return h;
}

/// delta(eps) of the continuous Gaussian mechanism with mu = sensitivity / sigma (Balle & Wang 2018, Thm 8).
inline double gaussian_mechanism_delta(double mu, double eps) {
    auto Phi = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
    return Phi(-eps / mu + mu / 2) - std::exp(eps) * Phi(-eps / mu - mu / 2);
}

/// Its exact epsilon at delta (bisection): what no correct report of a Gaussian mechanism can be below.
inline double gaussian_mechanism_epsilon(double mu, double delta) {
    double lo = 0.0, hi = 1000.0;
    for (int it = 0; it < 200; ++it) {
        const double mid = 0.5 * (lo + hi);
        (gaussian_mechanism_delta(mu, mid) > delta ? lo : hi) = mid;
    }
    return hi;
}

} // namespace dpr::test
