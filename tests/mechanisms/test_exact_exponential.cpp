// The exact exponential mechanism (kernels/mechanisms/exact_exponential.hpp; docs/spec/model.md §1.9): its integer
// arithmetic, its plan (the grid, the weights' error gamma, epsilon and delta), the law its integer weights define
// (against the grid's softmax), the privacy theorem checked by brute force on that exact law (every ratio of
// neighbouring laws within epsilon, and a worst case that reaches it, beyond what one grid step less would allow),
// and the draws against the exact law (chi-square, with a meta-test that sees a 5% temperature error).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../noise/stat_tests.hpp"
#include "mechanisms/exact_laws.hpp"
#include "kernels/mechanisms/exact_exponential.hpp"

namespace dpr {
namespace {

using mech::BigUint;
using mech::ExactExpPlan;

/// The law of exact_exp_draw on computed scores s: W(a(i)) / S, from the same integers, as long doubles.
std::vector<long double> exact_law(const ExactExpPlan& p, const std::vector<double>& s) {
    double m = std::numeric_limits<double>::infinity();
    for (double x : s) m = std::min(m, mech::exact_exp_index(p, x));
    std::vector<long double> w(s.size());
    BigUint S;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const double W = mech::exact_exp_weight(p, mech::exact_exp_index(p, s[i]) - m);
        S.add(BigUint::of(W));
        w[i] = W;
    }
    const long double total = S.value();
    for (long double& x : w) x /= total;
    return w;
}

/// The softmax of the grid indices, e^{-c g n(i)} normalised (the law the weights approximate within gamma).
std::vector<long double> grid_softmax(const ExactExpPlan& p, const std::vector<double>& s) {
    double m = std::numeric_limits<double>::infinity();
    for (double x : s) m = std::min(m, mech::exact_exp_index(p, x));
    std::vector<long double> w(s.size());
    long double z = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
        z += w[i] = std::exp(-static_cast<long double>(p.cg) * (mech::exact_exp_index(p, s[i]) - m));
    for (long double& x : w) x /= z;
    return w;
}

/// The largest |ln P(i) - ln P'(i)| over candidates positive under both laws, and the mass P puts where P' is 0.
struct Ratio {
    long double max_log = 0;
    long double lost = 0;
};
Ratio max_log_ratio(const std::vector<long double>& P, const std::vector<long double>& Q) {
    Ratio r;
    for (std::size_t i = 0; i < P.size(); ++i) {
        if (P[i] > 0 && Q[i] > 0) r.max_log = std::max(r.max_log, std::fabs(std::log(P[i]) - std::log(Q[i])));
        else if (P[i] > 0) r.lost += P[i];
    }
    return r;
}

using test::hockey_stick;

/// 2^k as a BigUint.
BigUint pow2(int k) {
    BigUint r;
    r.w[k / 64] = std::uint64_t{1} << (k % 64);
    return r;
}

TEST(ExactExp, BigUintAddsComparesAndConvertsExactly) {
    EXPECT_TRUE(BigUint::of(0.0).zero());
    EXPECT_EQ(BigUint::of(9007199254740991.0).w[0], 9007199254740991ull); // 2^53 - 1
    const BigUint big = BigUint::of(std::ldexp(1.0, 100) + std::ldexp(1.0, 48)); // exact double
    EXPECT_EQ(big.w[0], 1ull << 48);
    EXPECT_EQ(big.w[1], 1ull << 36);
    EXPECT_EQ(big.bits(), 101);
    const BigUint top = BigUint::of(std::ldexp(3.0, 381)); // bits 381 and 382
    EXPECT_EQ(top.w[5], 3ull << 61);
    EXPECT_EQ(top.bits(), 383);
    BigUint a;
    a.w[0] = ~0ull;
    a.w[1] = ~0ull;
    BigUint one;
    one.w[0] = 1;
    a.add(one); // carries through two limbs
    EXPECT_EQ(a.w[0], 0u);
    EXPECT_EQ(a.w[1], 0u);
    EXPECT_EQ(a.w[2], 1u);
    EXPECT_TRUE(one.less(a));
    EXPECT_FALSE(a.less(one));
    EXPECT_FALSE(a.less(a));
    EXPECT_EQ(a.bits(), 129);
    const BigUint b = a.minus_one(); // borrows through two limbs
    EXPECT_EQ(b.w[0], ~0ull);
    EXPECT_EQ(b.w[1], ~0ull);
    EXPECT_EQ(b.w[2], 0u);
    EXPECT_EQ(pow2(200).minus_one().bits(), 200);
}

TEST(ExactExp, TheUniformIsTheDocumentedWordsKeptBelowS) {
    // For totals S of every width, U is the first try whose N = bitlen(S - 1) low bits of the words (limb 2b + j =
    // words 2j, 2j + 1 of block b, high word first) are below S; a power of two is accepted at the first try, and
    // otherwise a try succeeds with probability S / 2^N > 1/2.
    std::mt19937_64 rng(41);
    for (int bits : {1, 2, 31, 63, 64, 65, 128, 129, 200, 255, 256, 257, 320, 383}) {
        for (int rep = 0; rep < 40; ++rep) {
            BigUint S;
            for (int k = 0; k * 64 < bits; ++k) S.w[k] = rng();
            const int top = (bits - 1) / 64;
            if (bits % 64) S.w[top] &= (std::uint64_t{1} << (bits % 64)) - 1;
            S.w[top] |= std::uint64_t{1} << ((bits - 1) % 64); // exactly `bits` bits
            if (rep == 0) S = pow2(bits - 1);                   // a power of two
            rng::StreamId id;
            id.seed = 8;
            id.purpose = rng::Purpose::Test;
            id.round = static_cast<std::uint32_t>(rep);
            BigUint U;
            std::uint32_t tries = 0;
            ASSERT_TRUE(mech::exact_exp_uniform(S, id, &U, &tries));
            ASSERT_TRUE(U.less(S));
            const BigUint low = pow2(bits - 1);
            bool is_pow2 = true;
            for (int k = 0; k < mech::kExactExpLimbs; ++k) is_pow2 = is_pow2 && S.w[k] == low.w[k];
            const int N = is_pow2 ? bits - 1 : bits; // bitlen(S - 1)
            if (is_pow2) EXPECT_EQ(tries, 1u) << bits;
            // The reference: the words of try tries - 1, bit by bit.
            BigUint want;
            for (int bit = 0; bit < N; ++bit) {
                const int limb = bit / 64, block = limb / 2, j = limb % 2, in_limb = bit % 64;
                const auto blk = rng::draw_block(id, mech::kExactExpBlocksPerTry * (tries - 1) + block);
                const std::uint32_t word = in_limb >= 32 ? blk.v[2 * j] : blk.v[2 * j + 1];
                if ((word >> (in_limb % 32)) & 1u) want.w[limb] |= std::uint64_t{1} << in_limb;
            }
            for (int k = 0; k < mech::kExactExpLimbs; ++k) ASSERT_EQ(U.w[k], want.w[k]) << bits << " bits, limb " << k;
        }
    }
    // The mean number of tries for S just above a power of two (acceptance just above 1/2) is about 2.
    BigUint S = pow2(100);
    S.w[0] |= 1u;
    double total = 0;
    rng::StreamId id;
    id.seed = 9;
    id.purpose = rng::Purpose::Test;
    for (std::uint32_t r = 0; r < 20000; ++r) {
        id.round = r;
        BigUint U;
        std::uint32_t tries = 0;
        ASSERT_TRUE(mech::exact_exp_uniform(S, id, &U, &tries));
        total += tries;
    }
    EXPECT_NEAR(total / 20000, 2.0, 0.06);
}

TEST(ExactExp, TheScanReturnsTheFirstIndexWhoseRunningSumExceedsU) {
    const ExactExpPlan p = mech::plan_exact_exp(0.9, 1.0, 0.0, 8);
    ASSERT_TRUE(p.ok);
    const std::vector<double> s = {0.3, 2.0, 0.0, 1.1, 7.5, 0.7};
    auto score = [&](std::uint32_t i) { return s[i]; };
    std::uint32_t first_min = 99;
    const double m = mech::exact_exp_min(p, 6, score, &first_min);
    EXPECT_EQ(first_min, 2u);
    BigUint C;
    for (std::uint32_t i = 0; i < 6; ++i) {
        const double W = mech::exact_exp_weight(p, mech::exact_exp_index(p, s[i]) - m);
        ASSERT_GT(W, 0.0);
        C.add(BigUint::of(W));
        EXPECT_EQ(mech::exact_exp_scan(p, 6, score, m, C.minus_one()), i) << "U = C_i - 1";
        if (i + 1 < 6) EXPECT_EQ(mech::exact_exp_scan(p, 6, score, m, C), i + 1) << "U = C_i";
    }
    const BigUint S = mech::exact_exp_total(p, 6, score, m);
    for (int k = 0; k < mech::kExactExpLimbs; ++k) EXPECT_EQ(S.w[k], C.w[k]);
}

TEST(ExactExp, PlanKeepsTheGridTheErrorTermAndTheTailWhereTheHeaderSays) {
    for (double c : {1e-5, 0.003, 0.5, 5.0, 40.0})
        for (double delta_s : {1.0, 2.0, 0.37, 1000.0})
            for (double err_rel : {0.0, 1e-7})
                for (std::uint32_t n : {2u, 1000u, 1u << 20, 4294967295u}) {
                    const double err = err_rel * delta_s;
                    const ExactExpPlan p = mech::plan_exact_exp(c, delta_s, err, n);
                    SCOPED_TRACE(testing::Message() << "c " << c << " Delta " << delta_s << " err " << err << " n " << n);
                    // 384-bit weights hold a per-draw epsilon up to about 150 (n = 2^32) to 200 (n = 2).
                    if (2 * c * delta_s > 150) {
                        if (2 * c * delta_s > 210) EXPECT_FALSE(p.ok);
                        if (!p.ok) EXPECT_NE(std::string(p.why).find("too large"), std::string::npos) << p.why;
                        continue;
                    }
                    ASSERT_TRUE(p.ok) << p.why;
                    EXPECT_LE(p.g * 1024.0, delta_s);
                    EXPECT_GT(p.g * 2048.0, delta_s);
                    EXPECT_GE(p.K, (delta_s + 2 * err) / p.g);
                    EXPECT_LE(p.K, (delta_s + 2 * err) / p.g + 1);
                    if (err == 0) EXPECT_EQ(p.K, std::ceil(delta_s / p.g));
                    EXPECT_EQ(p.cg, c * p.g);
                    const double ideal = 2 * c * delta_s;
                    EXPECT_GE(p.epsilon, ideal);
                    EXPECT_LE(p.epsilon, ideal * (1.0 + 1.0 / 1024 + 2.0 * err / delta_s) * (1 + 1e-12) + 2 * c * p.g + 4 * p.gamma);
                    EXPECT_LT(p.gamma, 1e-9);
                    EXPECT_LT(p.delta, 1e-18);
                    EXPECT_GE(p.A, 1.0);
                    const ExactExpPlan f = mech::plan_exact_exp(c, delta_s, err, n, ideal);
                    ASSERT_TRUE(f.ok) << f.why;
                    EXPECT_LE(f.epsilon, ideal);
                    EXPECT_LE(f.c, c);
                    // lowered by at most the grid's factor and the error term: c' = (2 c Delta - 4 gamma) / (2 g K)
                    EXPECT_GE(f.c, (ideal - 4 * f.gamma) / (2 * (delta_s + p.g + 2 * err)) * (1 - 1e-12));
                }
}

TEST(ExactExp, PlanRefusesWhatItCannotSample) {
    EXPECT_FALSE(mech::plan_exact_exp(0.0, 1.0, 0.0, 10).ok);
    EXPECT_FALSE(mech::plan_exact_exp(1.0, 0.0, 0.0, 10).ok);
    EXPECT_FALSE(mech::plan_exact_exp(1e9, 1.0, 0.0, 10).ok); // P would overflow an int
    EXPECT_FALSE(mech::plan_exact_exp(1e300, 1.0, 0.0, 10).ok);
    EXPECT_FALSE(mech::plan_exact_exp(1.0, 1.0, -1.0, 10).ok);
    EXPECT_FALSE(mech::plan_exact_exp(1.0, 1.0, 0.0, 0).ok);
    const ExactExpPlan tiny = mech::plan_exact_exp(1e-30, 1.0, 0.0, 10);
    EXPECT_FALSE(tiny.ok);
    EXPECT_NE(std::string(tiny.why).find("too small"), std::string::npos) << tiny.why;
    const ExactExpPlan huge = mech::plan_exact_exp(1e4, 1.0, 0.0, 10);
    EXPECT_FALSE(huge.ok);
    EXPECT_NE(std::string(huge.why).find("too large"), std::string::npos) << huge.why;
}

TEST(ExactExp, WeightsAreTheGeometricLawWithinGammaAndCutAtA) {
    for (double c : {0.003, 0.5, 20.0}) {
        const ExactExpPlan p = mech::plan_exact_exp(c, 1.0, 0.0, 1000);
        ASSERT_TRUE(p.ok);
        const long double ln2 = std::log(2.0L);
        std::vector<double> as = {0, 1, 2, 3, 1023, 1024, 1025, p.A - 2, p.A - 1};
        std::mt19937_64 rng(5);
        for (int k = 0; k < 20000; ++k) as.push_back(std::floor(std::uniform_real_distribution<double>(0, p.A)(rng)));
        long double worst = 0;
        for (double a : as) {
            if (a < 0 || a >= p.A) continue;
            const double W = mech::exact_exp_weight(p, a);
            ASSERT_EQ(W, std::floor(W));
            ASSERT_GE(W, std::ldexp(1.0, mech::kExactExpCutBits)) << "a " << a;
            const long double dev = std::log(static_cast<long double>(W)) - (p.P * ln2 - static_cast<long double>(p.cg) * a);
            worst = std::max(worst, std::fabs(dev));
        }
        EXPECT_LE(worst, p.gamma) << "c " << c;
        // The lowest positive weights, at the cut.
        for (double a : {p.A - 1, p.A - 2, p.A - 3})
            if (a >= 0) EXPECT_GE(mech::exact_exp_weight(p, a), std::ldexp(1.0, mech::kExactExpCutBits)) << a;
        EXPECT_EQ(mech::exact_exp_weight(p, p.A), 0.0);
        EXPECT_EQ(mech::exact_exp_weight(p, p.A + 12345), 0.0);
        // What is cut weighs at most 2^32 (1 + gamma) next to W(0) = 2^P, as tau assumes.
        EXPECT_LE(std::exp(-static_cast<long double>(p.cg) * p.A) * std::ldexp(1.0L, p.P),
                  std::ldexp(1.0L, mech::kExactExpCutBits) * (1 + 1e-12L));
    }
}

TEST(ExactExp, EveryPositiveWeightIsAtLeast2To32OverRandomPlans) {
    std::mt19937_64 rng(3);
    for (int rep = 0; rep < 3000; ++rep) {
        const double c = std::exp(std::uniform_real_distribution<double>(std::log(1e-4), std::log(60.0))(rng));
        const double delta_s = std::exp(std::uniform_real_distribution<double>(std::log(0.1), std::log(10.0))(rng));
        const ExactExpPlan p = mech::plan_exact_exp(c, delta_s, 0.0, 1 + static_cast<std::uint32_t>(rng() % 100000));
        if (!p.ok) continue;
        for (double a : {p.A - 1, p.A - 2})
            if (a >= 0) ASSERT_GE(mech::exact_exp_weight(p, a), std::ldexp(1.0, mech::kExactExpCutBits)) << "c " << c << " a " << a;
        ASSERT_EQ(mech::exact_exp_weight(p, p.A), 0.0);
    }
}

TEST(ExactExp, TheLawDependsOnlyOnTheScoresRelativeToTheirMinimum) {
    // The shift m cancels: every score moved by a whole number of grid steps gives the same law, integer for integer.
    const ExactExpPlan p = mech::plan_exact_exp(1.3, 1.0, 0.0, 16);
    ASSERT_TRUE(p.ok);
    const std::vector<double> s = {0.3, 2.0, 0.0, 1.1, 7.5, 0.7, 3.25};
    for (double k : {1.0, -17.0, 123456.0}) {
        std::vector<double> t = s;
        for (double& x : t) x += k * p.g * 1000;
        EXPECT_EQ(exact_law(p, s), exact_law(p, t)) << k;
    }
}

TEST(ExactExp, TheExactLawIsTheGridSoftmaxWithin2Gamma) {
    const ExactExpPlan p = mech::plan_exact_exp(0.7, 1.0, 0.0, 64);
    ASSERT_TRUE(p.ok);
    std::mt19937_64 rng(17);
    for (int rep = 0; rep < 200; ++rep) {
        std::vector<double> s(1 + rep % 60);
        for (double& x : s) x = std::uniform_real_distribution<double>(-20, 40)(rng);
        const auto P = exact_law(p, s), G = grid_softmax(p, s);
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (G[i] < 1e-30L) continue; // far below the cut's 2^-(P - 32); checked by the tail test
            EXPECT_LE(std::fabs(std::log(P[i]) - std::log(G[i])), 2 * p.gamma + 1e-17) << "rep " << rep << " i " << i;
        }
    }
}

TEST(ExactExp, NeighbouringLawsStayWithinEpsilonAndTheWorstCaseReachesIt) {
    // Random neighbours: every computed score moves by at most Delta + 2 err. The exact laws' log-ratios stay within
    // epsilon (the theorem), and the mass a law puts where its neighbour's is cut stays below delta.
    for (double err : {0.0, 1e-3}) {
        const double delta_s = 1.0, c = 0.5;
        const ExactExpPlan p = mech::plan_exact_exp(c, delta_s, err, 100000);
        ASSERT_TRUE(p.ok);
        std::mt19937_64 rng(23);
        std::uniform_real_distribution<double> unit(-1.0, 1.0);
        long double seen = 0, lost = 0;
        for (int rep = 0; rep < 3000; ++rep) {
            std::vector<double> s(2 + rep % 30), t(s.size());
            const double spread = rep % 3 == 0 ? 3.0 : 300.0;
            for (std::size_t i = 0; i < s.size(); ++i) {
                s[i] = spread * unit(rng);
                const double move = rep % 2 ? delta_s * (unit(rng) > 0 ? 1 : -1) : delta_s * unit(rng);
                t[i] = s[i] + move + err * unit(rng);
                s[i] += err * unit(rng);
            }
            const auto P = exact_law(p, s), Q = exact_law(p, t);
            const Ratio r1 = max_log_ratio(P, Q), r2 = max_log_ratio(Q, P);
            seen = std::max({seen, r1.max_log, r2.max_log});
            lost = std::max({lost, hockey_stick(P, Q, p.epsilon), hockey_stick(Q, P, p.epsilon)});
        }
        EXPECT_LE(seen, p.epsilon) << "err " << err;
        EXPECT_LE(lost, p.delta) << "err " << err;
    }
    {
        // The cut at its worst: n - 1 candidates one grid step from the cut under D, at it under D' (a move of one
        // step, within K). Their mass under D is what D' cannot match: about (n - 1) 2^{32 - P}, within delta.
        const std::uint32_t n = 1000;
        const ExactExpPlan p = mech::plan_exact_exp(0.5, 1.0, 0.0, n);
        ASSERT_TRUE(p.ok);
        std::vector<double> s(n, (p.A - 1) * p.g), t(n, p.A * p.g);
        s[0] = t[0] = 0.0;
        const auto P = exact_law(p, s), Q = exact_law(p, t);
        const long double h = hockey_stick(P, Q, p.epsilon);
        EXPECT_GT(h, 0.0L);
        EXPECT_LE(h, p.delta);
        EXPECT_GT(h, 1e-3L * p.delta) << "the case comes near the bound"; // delta = (e^eps + 2) tau + 2^-64
    }
    // The worst case: candidate 0 moves up by Delta = 1024 grid steps while 10^5 others move down by as much.
    const ExactExpPlan p = mech::plan_exact_exp(0.5, 1.0, 0.0, 100001);
    ASSERT_TRUE(p.ok);
    ASSERT_EQ(p.K, 1024.0);
    std::vector<double> s(100001, 0.0), t(100001, -1.0);
    t[0] = 1.0;
    const Ratio r = max_log_ratio(exact_law(p, s), exact_law(p, t));
    EXPECT_LE(r.max_log, p.epsilon);
    EXPECT_GE(r.max_log, 0.9999 * p.epsilon);
    // One grid step less in the accounting (2 c g (K - 1)) would be exceeded: K is needed, not loose.
    EXPECT_GT(r.max_log, 2.0L * p.cg * (p.K - 1));
}

TEST(ExactExp, NonFiniteAndCutScoresAreNeverDrawn) {
    const ExactExpPlan p = mech::plan_exact_exp(2.0, 1.0, 0.0, 8);
    ASSERT_TRUE(p.ok);
    const double far = p.A * p.g + 1.0; // a >= A: weight 0
    const std::vector<double> s = {far, 0.0, std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::infinity(), 0.5, far * 3};
    const auto law = exact_law(p, s);
    EXPECT_EQ(law[0], 0.0L);
    EXPECT_EQ(law[2], 0.0L);
    EXPECT_EQ(law[3], 0.0L);
    EXPECT_EQ(law[5], 0.0L);
    rng::StreamId id;
    id.seed = 3;
    id.purpose = rng::Purpose::Test;
    for (std::uint32_t r = 0; r < 20000; ++r) {
        id.round = r;
        const std::uint32_t i = mech::exact_exp_draw(p, 6, [&](std::uint32_t k) { return s[k]; }, id);
        ASSERT_TRUE(i == 1 || i == 4) << "round " << r << " drew " << i;
    }
    // No finite score: index 0.
    id.round = 1;
    EXPECT_EQ(mech::exact_exp_draw(p, 2, [](std::uint32_t) { return std::numeric_limits<double>::infinity(); }, id), 0u);
}

TEST(ExactExp, TheSharedTableGivesTheDrawsIndexBitForBit) {
    // exact_exp_draw_from_table must return exact_exp_draw's index for every word: both the first i whose exact running
    // sum exceeds U. Sizes around the 64-candidate blocks, plans from near-uniform to peaked, scores with cut and
    // non-finite entries; the table's weights and total are exact_exp_weight's and exact_exp_total's.
    std::mt19937_64 gen(11);
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    std::uint64_t draws = 0, boundary = 0;
    for (double c : {1e-3, 0.3, 5.0})
        for (std::uint32_t n : {1u, 2u, 63u, 64u, 65u, 127u, 128u, 129u, 1000u, 4097u}) {
            SCOPED_TRACE(testing::Message() << "c " << c << " n " << n);
            const ExactExpPlan p = mech::plan_exact_exp(c, 1.0, 1e-9, n);
            ASSERT_TRUE(p.ok);
            std::vector<double> s(n);
            for (double& x : s) x = unif(gen) * (c < 0.01 ? 3.0 : 40.0);
            if (n > 3) {
                s[1] = std::numeric_limits<double>::quiet_NaN();
                s[2] = p.A * p.g * 4.0 + 50.0; // cut
            }
            const auto score = [&](std::uint32_t k) { return s[k]; };
            std::vector<double> table(mech::exact_exp_table_size(n), -1.0);
            mech::exact_exp_table(p, n, score, table.data());
            std::uint32_t first = 0;
            const double m = mech::exact_exp_min(p, n, score, &first);
            ASSERT_EQ(table[0], m);
            ASSERT_EQ(table[1], static_cast<double>(first));
            for (std::uint32_t i = 0; i < n; ++i)
                ASSERT_EQ(table[2 + i], mech::exact_exp_weight(p, mech::exact_exp_index(p, s[i]) - m)) << i;
            const BigUint S = mech::exact_exp_total(p, n, score, m);
            const BigUint last = mech::exact_exp_table_sum(table.data(), n, (n + mech::kExactExpBlock - 1) / mech::kExactExpBlock - 1);
            ASSERT_FALSE(S.less(last) || last.less(S)) << "the last running sum is the total";
            rng::StreamId id;
            id.seed = 29;
            id.purpose = rng::Purpose::Exponential;
            for (std::uint32_t r = 0; r < 300; ++r) {
                id.round = r;
                id.instance = r * 7u;
                std::uint32_t t1 = 0, t2 = 0;
                const std::uint32_t a = mech::exact_exp_draw(p, n, score, id, &t1);
                const std::uint32_t b = mech::exact_exp_draw_from_table(p, n, table.data(), id, &t2);
                ASSERT_EQ(a, b) << "round " << r;
                ASSERT_EQ(t1, t2);
                ++draws;
                boundary += n > 64 && a % mech::kExactExpBlock == 0;
            }
        }
    EXPECT_GT(boundary, 10u) << "draws land on the first candidate of a block: the search's edges are exercised";
    // No finite score: index 0 from both.
    const ExactExpPlan p = mech::plan_exact_exp(1.0, 1.0, 0.0, 4);
    const auto none = [](std::uint32_t) { return std::numeric_limits<double>::infinity(); };
    std::vector<double> table(mech::exact_exp_table_size(4));
    mech::exact_exp_table(p, 4, none, table.data());
    rng::StreamId id;
    EXPECT_EQ(mech::exact_exp_draw_from_table(p, 4, table.data(), id), 0u);
    EXPECT_GT(draws, 8000u);
}

/// Counts of n draws (draw r at round r of instance 0) over the scores s.
std::vector<std::uint64_t> draw_counts(const ExactExpPlan& p, const std::vector<double>& s, std::uint32_t n, std::uint32_t seed) {
    std::vector<std::uint64_t> counts(s.size(), 0);
    rng::StreamId id;
    id.seed = seed;
    id.purpose = rng::Purpose::Exponential;
    for (std::uint32_t r = 0; r < n; ++r) {
        id.round = r;
        ++counts.at(mech::exact_exp_draw(p, static_cast<std::uint32_t>(s.size()), [&](std::uint32_t k) { return s[k]; }, id));
    }
    return counts;
}

const std::vector<double> kScores = {0.0, 1.0, 2.0, 3.0, 0.5, 4.0, 1.5, 2.5, 6.0, 0.25};

TEST(ExactExp_Stat, DrawsFollowTheExactLawAtAlpha1e6) {
    for (double c : {0.35, 1.0}) {
        const ExactExpPlan p = mech::plan_exact_exp(c, 1.0, 0.0, 16);
        ASSERT_TRUE(p.ok);
        const auto law = exact_law(p, kScores);
        const auto counts = draw_counts(p, kScores, 400000, 11);
        const auto r = test::chi_square_gof(counts, std::vector<double>(law.begin(), law.end()));
        EXPECT_GT(r.p, test::kAlpha) << "c " << c << ": chi2 " << r.stat << " on " << r.dof << " dof";
    }
}

TEST(ExactExp_Stat, MetaTestRejectsATemperatureOffBy5Percent) {
    const ExactExpPlan p = mech::plan_exact_exp(1.0, 1.0, 0.0, 16);
    const ExactExpPlan q = mech::plan_exact_exp(1.05, 1.0, 0.0, 16);
    ASSERT_TRUE(p.ok && q.ok);
    const auto law = exact_law(q, kScores);
    const auto counts = draw_counts(p, kScores, 400000, 11);
    const auto r = test::chi_square_gof(counts, std::vector<double>(law.begin(), law.end()));
    EXPECT_LT(r.p, test::kAlpha) << "chi2 " << r.stat;
}

} // namespace
} // namespace dpr
