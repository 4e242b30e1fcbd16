// The keyed Feistel permutation (kernels/rng/permutation.hpp): a bijection of [0, n) for every n
// (powers of two and not), inverse() inverts it, it is a pure function of its key, and over random
// keys it is close enough to a uniform random permutation for what the halving adversary uses: the
// image of one point and of a pair of points, and the whole permutation for tiny n.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "adversaries/adv_test_util.hpp"
#include "kernels/rng/permutation.hpp"

using dpr::rng::FeistelPermutation;
using dpr::rng::Purpose;
using dpr::rng::StreamId;

namespace {

StreamId key(std::uint32_t k, std::uint32_t seed = 7) {
    StreamId id;
    id.seed = seed;
    id.purpose = Purpose::Test;
    id.element = k;
    return id;
}

std::vector<std::uint32_t> images(const FeistelPermutation& pi) {
    std::vector<std::uint32_t> v(pi.size());
    for (std::uint32_t x = 0; x < pi.size(); ++x) v[x] = pi(x);
    return v;
}

} // namespace

TEST(FeistelPermutation, IsABijectionForManySizes) {
    for (std::uint32_t n : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 16u, 17u, 31u, 63u, 100u, 1000u, 4096u, 4097u,
                            65536u, 65537u, (1u << 20) + 3u}) {
        for (std::uint32_t k = 0; k < (n > 70000 ? 1u : 3u); ++k) {
            const FeistelPermutation pi(n, key(k));
            std::vector<char> hit(n, 0);
            for (std::uint32_t x = 0; x < n; ++x) {
                const std::uint32_t y = pi(x);
                ASSERT_LT(y, n) << "n = " << n;
                ASSERT_FALSE(hit[y]) << "n = " << n << ": " << y << " hit twice";
                hit[y] = 1;
                ASSERT_EQ(pi.inverse(y), x) << "n = " << n;
            }
        }
    }
}

TEST(FeistelPermutation, WorksNearTheTopOfTheDomain) {
    // n close to 2^32 uses 16-bit halves: images stay below n and inverse() inverts.
    for (std::uint32_t n : {0xFFFFFFFFu, 0x80000001u, 0x80000000u}) {
        const FeistelPermutation pi(n, key(1));
        for (std::uint32_t x : {0u, 1u, 12345u, n / 2, n - 2, n - 1}) {
            const std::uint32_t y = pi(x);
            EXPECT_LT(y, n);
            EXPECT_EQ(pi.inverse(y), x);
        }
    }
}

TEST(FeistelPermutation, IsAPureFunctionOfItsKey) {
    const std::vector<std::uint32_t> a = images(FeistelPermutation(1000, key(5)));
    EXPECT_EQ(a, images(FeistelPermutation(1000, key(5))));
    EXPECT_NE(a, images(FeistelPermutation(1000, key(6))));
    EXPECT_NE(a, images(FeistelPermutation(1000, key(5, 8))));
    std::vector<std::uint32_t> id(1000);
    for (std::uint32_t x = 0; x < 1000; ++x) id[x] = x;
    EXPECT_NE(a, id);
}

TEST(FeistelPermutation_Stat, ImageOfAPointIsUniform) {
    // Over 4000 n keys, pi(0) and pi(n - 1) are uniform on [0, n): chi-square at alpha = 1e-6.
    for (std::uint32_t n : {2u, 3u, 4u, 5u, 7u, 10u, 33u}) {
        std::vector<long> first(n, 0), last(n, 0);
        const std::uint32_t keys = 4000 * n;
        for (std::uint32_t k = 0; k < keys; ++k) {
            const FeistelPermutation pi(n, key(k));
            ++first[pi(0)];
            ++last[pi(n - 1)];
        }
        EXPECT_GT(advtest::chi_square_uniform_pvalue(first), advtest::kAlpha) << "n = " << n;
        EXPECT_GT(advtest::chi_square_uniform_pvalue(last), advtest::kAlpha) << "n = " << n;
    }
}

TEST(FeistelPermutation_Stat, ImageOfAPairIsUniform) {
    // (pi(0), pi(1)) uniform over the n (n - 1) ordered pairs, 500 per cell.
    for (std::uint32_t n : {3u, 5u, 6u, 9u}) {
        std::vector<long> cells(n * n, 0);
        const std::uint32_t keys = 500 * n * (n - 1);
        for (std::uint32_t k = 0; k < keys; ++k) {
            const FeistelPermutation pi(n, key(k, 11));
            const std::uint32_t a = pi(0), b = pi(1);
            ASSERT_NE(a, b);
            ++cells[a * n + b];
        }
        std::vector<long> off_diagonal;
        for (std::uint32_t a = 0; a < n; ++a)
            for (std::uint32_t b = 0; b < n; ++b)
                if (a != b) off_diagonal.push_back(cells[a * n + b]);
        EXPECT_GT(advtest::chi_square_uniform_pvalue(off_diagonal), advtest::kAlpha) << "n = " << n;
    }
}

TEST(FeistelPermutation_Stat, ImageOfATripleIsUniform) {
    // (pi(0), pi(1), pi(n - 1)) uniform over the ordered triples of distinct values, 100 per cell.
    for (std::uint32_t n : {9u, 17u}) {
        std::vector<long> cells(n * n * n, 0);
        const std::uint32_t keys = 100 * n * (n - 1) * (n - 2);
        for (std::uint32_t k = 0; k < keys; ++k) {
            const FeistelPermutation pi(n, key(k, 17));
            ++cells[(pi(0) * n + pi(1)) * n + pi(n - 1)];
        }
        std::vector<long> distinct;
        for (std::uint32_t a = 0; a < n; ++a)
            for (std::uint32_t b = 0; b < n; ++b)
                for (std::uint32_t c = 0; c < n; ++c)
                    if (a != b && b != c && a != c) distinct.push_back(cells[(a * n + b) * n + c]);
        EXPECT_GT(advtest::chi_square_uniform_pvalue(distinct), advtest::kAlpha) << "n = " << n;
    }
}

TEST(FeistelPermutation_Stat, WholePermutationIsUniformForTinyN) {
    // All n! permutations equally likely for n = 3..6 (100 per permutation). n = 5, 6 use 4-bit words
    // and cycle-walking: without the keyed shift (Feistel networks are even permutations of the word
    // domain) n = 5 fails with p ~ 1e-64, and with 8 rounds instead of 12, n = 6 fails.
    for (std::uint32_t n : {3u, 4u, 5u, 6u}) {
        std::vector<std::vector<std::uint32_t>> all;
        std::vector<std::uint32_t> p(n);
        for (std::uint32_t i = 0; i < n; ++i) p[i] = i;
        do all.push_back(p);
        while (std::next_permutation(p.begin(), p.end()));
        std::vector<long> counts(all.size(), 0);
        const std::uint32_t keys = 100 * static_cast<std::uint32_t>(all.size());
        for (std::uint32_t k = 0; k < keys; ++k) {
            const auto v = images(FeistelPermutation(n, key(k, 13)));
            ++counts[std::lower_bound(all.begin(), all.end(), v) - all.begin()];
        }
        EXPECT_GT(advtest::chi_square_uniform_pvalue(counts), advtest::kAlpha) << "n = " << n;
    }
}
