#pragma once
// Device-callable samplers (docs/ARCHITECTURE.md §2; parametrisations of docs/spec/model.md §0.4). Each takes
// a word source `src` with next_u32() and next_double() (an rng::WordStream over one element's stream), so a
// draw is a pure function of its StreamId. Uniforms are open, so every transform is finite:
//   Laplace(b)          density exp(-|x|/b)/(2b), variance 2b^2; |x| <= 52 ln2 b = 36.04 b
//   Gaussian(0, s^2)    Box-Muller (cos branch), 2 uniforms;       |x| <= sqrt(2*53 ln2) s = 8.57 s
//   Exponential(scale)  -scale ln u;                               x in [2^-53 scale, 36.74 scale]
//   Gumbel(mu, beta)    mu - beta ln(-ln u)
//   Gamma(k, theta)     Marsaglia-Tsang (2000) for k >= 1; k < 1 by Gamma(k+1) U^{1/k}
//   Bernoulli(p)        u < p
//   categorical(w)      inverse CDF over non-negative weights
// Word usage per call (fixed-count samplers): Laplace, exponential, Gumbel, Bernoulli: 2 words;
// Gaussian: 4 words. Gamma: 6 words per try (+4 per v <= 0 redraw, +2 once if k < 1), variable.
#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/math.hpp"
#include "kernels/core/vmath.hpp"
#include "kernels/noise/lane_noise.hpp"

namespace dpr::noise {

// ---- transforms of one open uniform --------------------------------------------------------------
// laplace_from_u and normal_from_u are the learners' lane transforms (kernels/noise/lane_noise.hpp); the
// transcendental functions are the kernels' own (kernels/core/vmath.hpp), so a draw has the same bits on every
// backend.

DPR_HD DPR_FORCEINLINE double exponential_from_u(double u, double scale) { return -scale * vlog(u); }
DPR_HD DPR_FORCEINLINE double gumbel_from_u(double u, double loc, double scale) {
    return loc - scale * vlog(-vlog(u));
}

// ---- samplers over a word source ---------------------------------------------------------------

template <class Src>
DPR_HD DPR_FORCEINLINE double laplace(Src& src, double b) {
    return laplace_from_u(src.next_double(), b);
}

template <class Src>
DPR_HD DPR_FORCEINLINE double gaussian(Src& src, double sigma) {
    const double u1 = src.next_double();
    const double u2 = src.next_double();
    return sigma * normal_from_u(u1, u2);
}

template <class Src>
DPR_HD DPR_FORCEINLINE double exponential(Src& src, double scale) {
    return exponential_from_u(src.next_double(), scale);
}

template <class Src>
DPR_HD DPR_FORCEINLINE double gumbel(Src& src, double loc, double scale) {
    return gumbel_from_u(src.next_double(), loc, scale);
}

template <class Src>
DPR_HD DPR_FORCEINLINE bool bernoulli(Src& src, double p) {
    return src.next_double() < p;
}

/// Gamma(shape k > 0, scale theta): Marsaglia & Tsang, "A simple method for generating gamma
/// variables", ACM TOMS 26(3), 2000. Exact in law; acceptance > 0.95 for k >= 1.
template <class Src>
DPR_HD double gamma(Src& src, double k, double theta) {
    double boost = 1.0;
    if (k < 1.0) {
        // Gamma(k) = Gamma(k + 1) * U^{1/k}  (Marsaglia-Tsang §6); U open so the power is > 0.
        boost = std::pow(src.next_double(), 1.0 / k);
        k += 1.0;
    }
    const double d = k - 1.0 / 3.0;
    const double c = 1.0 / vsqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            // Two statements, not normal_from_u(src.next_double(), src.next_double()): the order in
            // which function arguments are evaluated is unspecified, so that form may consume the
            // words in a different order under g++ and nvcc and break CPU/GPU bit-equality.
            const double u1 = src.next_double();
            const double u2 = src.next_double();
            x = normal_from_u(u1, u2);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        const double u = src.next_double();
        const double x2 = x * x;
        if (u < 1.0 - 0.0331 * x2 * x2) return theta * d * v * boost;             // squeeze
        if (vlog(u) < 0.5 * x2 + d * (1.0 - v + vlog(v))) return theta * d * v * boost;
    }
}

/// Sum of k iid Laplace(b) draws (0 <= k <= 32) in one shot, from the uniforms next_double() hands out: the
/// padding law of the learners (noise::laplace_sum of kernels/noise/lane_noise.hpp: a ratio of uniform
/// products for k <= 3, the normal variance mixture above), for `dpregret sample` and the tests.
template <class Src>
DPR_HD double laplace_sum_stream(Src& src, std::uint32_t k, double b) {
    double u[36];
    const std::uint32_t n = laplace_sum_uniforms(k);
    for (std::uint32_t j = 0; j < n; ++j) u[j] = src.next_double();
    return laplace_sum(u, k, b);
}

/// Sum of k iid N(0, sigma^2) draws: N(0, k sigma^2), one normal (2 uniforms).
template <class Src>
DPR_HD double gaussian_sum_stream(Src& src, std::uint32_t k, double sigma) {
    double u[2];
    if (k == 0) return 0.0;
    u[0] = src.next_double();
    u[1] = src.next_double();
    return gaussian_sum(u, k, sigma);
}

/// Unbiased integer in [0, n), n >= 1 (Lemire 2019, "Fast random integer generation in an
/// interval", with rejection: no modulo bias).
template <class Src>
DPR_HD std::uint32_t uniform_index(Src& src, std::uint32_t n) {
    std::uint64_t m = static_cast<std::uint64_t>(src.next_u32()) * n;
    std::uint32_t low = static_cast<std::uint32_t>(m);
    if (low < n) {
        const std::uint32_t threshold = static_cast<std::uint32_t>(-n) % n;
        while (low < threshold) {
            m = static_cast<std::uint64_t>(src.next_u32()) * n;
            low = static_cast<std::uint32_t>(m);
        }
    }
    return static_cast<std::uint32_t>(m >> 32);
}

/// Index i with probability w[i] / sum(w), for n >= 1 non-negative weights with a positive sum
/// (inverse CDF; `total` is sum(w), passed in because callers usually have it). Rounding can never
/// select an index of zero weight: the scan stops at the last positive weight.
template <class Src, class Weights>
DPR_HD std::uint32_t categorical(Src& src, const Weights& w, std::uint32_t n, double total) {
    const double target = src.next_double() * total;
    double acc = 0.0;
    std::uint32_t last_positive = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        const double wi = w[i];
        if (wi > 0.0) {
            last_positive = i;
            acc += wi;
            if (target < acc) return i;
        }
    }
    return last_positive;
}

} // namespace dpr::noise
