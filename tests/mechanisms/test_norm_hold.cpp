// The norm holds of kernels/mechanisms/norm_hold.hpp (docs/spec/model.md §1.8 "Batch estimates", §1.11 "Computed
// step vectors"): whatever order a team summed in, in float or double, the doubles fl(v_i c) meet the bound as exact
// reals (checked in long double), c is 1 - O(n u) at most where the vector's exact norm is the bound, and a naive clip
// (the bound over the computed norm) fails on the same vectors, so the checks have power.
//
//   NormHold  (unit)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/mechanisms/norm_hold.hpp"

namespace {

using dpr::mech::l1_clip_factor;
using dpr::mech::l2_clip_factor;

/// The sum of f(v_i) in R: forward (order 0), backward (1) or pairwise (2), the orders a team may use.
template <class R, class F>
R team_sum(const std::vector<R>& v, int order, F f) {
    R s = 0;
    if (order == 0)
        for (R x : v) s += f(x);
    else if (order == 1)
        for (std::size_t i = v.size(); i-- > 0;) s += f(v[i]);
    else {
        std::vector<R> w(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) w[i] = f(v[i]);
        while (w.size() > 1) {
            std::vector<R> next;
            for (std::size_t i = 0; i + 1 < w.size(); i += 2) next.push_back(w[i] + w[i + 1]);
            if (w.size() % 2) next.push_back(w.back());
            w.swap(next);
        }
        s = w.empty() ? R(0) : w[0];
    }
    return s;
}

TEST(NormHold, L1ClipFactorHoldsEveryVectorWithinTheBoundAsExactReals) {
    // l1_clip_factor's claim: whatever order the team summed |v_i| in (in the run's precision), the doubles
    // fl(v_i c) have sum |.| <= half as exact reals (checked in long double, whose own error is below 2^-63 n
    // relative). The vectors are the hardest: |v_i| all at half / n rounded up, so that their float sum rounds
    // past half; and random ones. A naive clip min(1, half / ahat) fails on them: the check has power.
    int naive_fails = 0;
    const auto check = [&](auto zero, std::uint32_t n, std::uint64_t seed) {
        using R = decltype(zero);
        const double u = sizeof(R) == 4 ? 0x1.0p-24 : 0x1.0p-53;
        std::mt19937_64 gen(seed);
        std::uniform_real_distribution<double> unif(0.5, 1.5);
        const double half = 3.7;
        for (int shape = 0; shape < 4; ++shape) {
            std::vector<R> v(n);
            double hw = half; // shape 3: the bound just above the computed sum, below the exact one
            if (shape == 3) {
                // The summation's worst case: a power of two, then n - 1 terms just under half its ulp, which a
                // forward sum drops: the exact sum exceeds the computed one by about (n - 1) u.
                v[0] = R(2);
                for (std::uint32_t i = 1; i < n; ++i) v[i] = (i % 2 ? R(-1) : R(1)) * std::nextafter(R(2 * u), R(0));
                hw = 2.0 * (1.0 + 0.5 * (n - 1) * u);
            }
            for (std::uint32_t i = 0; i < n && shape != 3; ++i) {
                const double target = shape == 0 ? half / n : half / n * unif(gen);
                R x = static_cast<R>(target);
                if (x < target) x = std::nextafter(x, R(1e30));
                v[i] = (i % 2 ? -x : x);
            }
            if (shape == 1) { // random directions scaled so the exact l1 norm is about half
                long double a = 0;
                for (R x : v) a += std::fabs(static_cast<long double>(x));
                for (R& x : v) x = static_cast<R>(x * static_cast<R>(half / static_cast<double>(a)));
            }
            for (int order = 0; order < (shape == 3 ? 1 : 3); ++order) { // forward, backward, pairwise
                const R ahat = team_sum(v, order, [](R x) { return std::fabs(x); });
                const double c = l1_clip_factor(static_cast<double>(ahat), hw, n, u);
                long double sum = 0, naive = 0;
                const double cn = std::min(1.0, hw / static_cast<double>(ahat));
                for (R x : v) {
                    sum += std::fabs(static_cast<long double>(static_cast<double>(x) * c));
                    naive += std::fabs(static_cast<long double>(static_cast<double>(x) * cn));
                }
                EXPECT_LE(sum, hw * (1.0L + n * 0x1.0p-63L))
                    << (sizeof(R) == 4 ? "float" : "double") << " n " << n << " shape " << shape << " order " << order;
                if (shape <= 1) // exact norm half up to rounding: the clip takes at most the rounding's share
                    EXPECT_GT(c, 1.0 - 4.0 * n * u - 0x1.0p-46) << n;
                if (naive > hw * (1.0L + n * 0x1.0p-63L)) ++naive_fails;
                if (shape == 3 && n > 2) // the vector attains the first-order bound: a margin below (n - 1) u fails
                    EXPECT_GT(sum / (static_cast<long double>(ahat) * c), 1.0L + 0.9L * (n - 1) * u) << n;
            }
        }
    };
    // A sum inside the bound by more than the rounding's share is never touched.
    EXPECT_EQ(l1_clip_factor(3.7 / (1.0 + 4.0 * 1024 * 0x1.0p-24) * 0.999, 3.7, 1024, 0x1.0p-24), 1.0);
    EXPECT_LT(l1_clip_factor(3.7, 3.7, 1024, 0x1.0p-24), 1.0) << "a sum at the bound is (rounding's share) shrunk";
    for (std::uint32_t n : {1u, 2u, 7u, 100u, 1024u, 65536u})
        for (std::uint64_t seed : {1ull, 2ull, 3ull}) {
            check(0.0f, n, seed);
            check(0.0, n, seed);
        }
    EXPECT_GT(naive_fails, 0) << "the vectors must include one whose rounded sum hides an l1 norm above half";
}


TEST(NormHold, L2ClipFactorHoldsEveryVectorWithinTheBoundAsExactReals) {
    // The vectors: every |v_i| at bound / sqrt(n) rounded up (their computed sum of squares lands on either side of
    // bound^2); random directions scaled to norm bound; the summation's worst case (1, then n - 1 terms whose squares
    // a forward sum drops, with the bound between the computed and the exact norm); and squares that underflow to 0
    // (the absolute term of the bound). Sum of squares in long double: each term's error is below 2^-63 relative.
    int naive_fails = 0;
    const auto check = [&](auto zero, std::uint32_t n, std::uint64_t seed) {
        using R = decltype(zero);
        const char* prec = sizeof(R) == 4 ? "float" : "double";
        const double u = sizeof(R) == 4 ? 0x1.0p-24 : 0x1.0p-53;
        std::mt19937_64 gen(seed);
        std::normal_distribution<double> normal;
        for (int shape = 0; shape < 4; ++shape) {
            std::vector<R> v(n);
            double bound = 2.0;
            if (shape == 0) {
                const double target = bound / std::sqrt(static_cast<double>(n));
                R x = static_cast<R>(target);
                if (x < target) x = std::nextafter(x, R(1e30));
                for (std::uint32_t i = 0; i < n; ++i) v[i] = i % 2 ? -x : x;
            } else if (shape == 1) {
                long double s = 0;
                for (R& x : v) {
                    x = static_cast<R>(normal(gen));
                    s += static_cast<long double>(x) * x;
                }
                for (R& x : v) x = static_cast<R>(x * static_cast<R>(bound / std::sqrt(static_cast<double>(s))));
            } else if (shape == 2) {
                // 1, then terms whose squares are below u: 1 + fl(x^2) rounds back to 1 in a forward sum.
                R x = static_cast<R>(std::sqrt(u));
                while (static_cast<long double>(x) * x >= u) x = std::nextafter(x, R(0));
                v[0] = R(1);
                for (std::uint32_t i = 1; i < n; ++i) v[i] = i % 2 ? -x : x;
                bound = std::sqrt(1.0 + 0.5 * (n - 1) * u);
            } else {
                // Squares below the precision's smallest subnormal: the computed sum is 0.
                const R x = sizeof(R) == 4 ? R(0x1.0p-80) : R(0x1.0p-600);
                for (std::uint32_t i = 0; i < n; ++i) v[i] = x;
                bound = 0.9 * std::sqrt(static_cast<double>(n)) * static_cast<double>(x);
            }
            for (int order = 0; order < (shape == 2 ? 1 : 3); ++order) {
                const R shat = team_sum(v, order, [](R x) { return x * x; });
                const double c = l2_clip_factor(static_cast<double>(shat), bound, n, u);
                const double cn = shat > 0 ? std::min(1.0, bound / std::sqrt(static_cast<double>(shat))) : 1.0;
                long double sum = 0, naive = 0;
                for (R x : v) {
                    const long double h = static_cast<double>(x) * c, g = static_cast<double>(x) * cn;
                    sum += h * h;
                    naive += g * g;
                }
                const long double b2 = static_cast<long double>(bound) * bound * (1.0L + n * 0x1.0p-62L);
                EXPECT_LE(sum, b2) << prec << " n " << n << " shape " << shape << " order " << order;
                if (naive > b2) ++naive_fails;
                if (shape <= 1) // the exact norm is the bound up to rounding: the hold takes at most the rounding's share
                    EXPECT_GT(c, 1.0 - 4.0 * n * u - 0x1.0p-40) << prec << " n " << n << " shape " << shape;
                if (shape == 2 && n > 2) // the vector attains the first-order bound: a margin below (n - 1) u fails
                    EXPECT_GT(sum / (static_cast<long double>(shat) * c * c), 1.0L + 0.9L * (n - 1) * u) << prec << n;
                if (shape == 3) EXPECT_LT(c, 1.0) << prec << ": an underflowed sum of squares is still held";
            }
        }
    };
    // A sum of squares inside the bound by more than the rounding's share is never touched; one at it is shrunk.
    EXPECT_EQ(l2_clip_factor(4.0 / (1.0 + 4.0 * 1024 * 0x1.0p-24) * 0.999, 2.0, 1024, 0x1.0p-24), 1.0);
    EXPECT_LT(l2_clip_factor(4.0, 2.0, 1024, 0x1.0p-24), 1.0);
    EXPECT_EQ(l2_clip_factor(std::nan(""), 2.0, 16, 0x1.0p-53), 0.0) << "NaN gives 0";
    for (std::uint32_t n : {1u, 2u, 7u, 100u, 1024u, 65536u})
        for (std::uint64_t seed : {1ull, 2ull, 3ull}) {
            check(0.0f, n, seed);
            check(0.0, n, seed);
        }
    EXPECT_GT(naive_fails, 0) << "the vectors must include one whose computed norm hides an l2 norm above the bound";
}

} // namespace
