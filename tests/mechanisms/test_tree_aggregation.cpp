// Tree aggregation (docs/spec/model.md §1.4, §1.5; docs/ARCHITECTURE.md §7 "Mechanisms"; docs/spec/checks.md
// §3.1 testable properties).
//
// Unit tests: an explicit-tree oracle (AS17 PrivateSum's definition of S_t, brute force over all
// nodes) against the bit formulas; noise off -> exact prefix sums through the O(hN) TreeAggregator;
// unit node noise -> popcount(t) / ceil(log2 T) draws; the learners' level cache == definition (bitwise);
// noise keying (stream layout 2).
// Statistical tests (suites *_Stat, label `statistical`): per-prefix variance, covariance between
// prefixes = shared nodes x node variance, padded prefixes identically distributed (two-sample KS),
// each with a meta-test showing that a named wrong variant is rejected.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/core/math.hpp"
#include "kernels/core/team.hpp"
#include "kernels/mechanisms/noisy_prefix.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"
#include "kernels/noise/lane_noise.hpp"
#include "kernels/rng/lanes.hpp"
#include "kernels/rng/stream.hpp"

using namespace dpr;
using namespace dpr::mech;

namespace {

using Node = std::pair<std::uint32_t, std::uint64_t>; // (level j, index m)

const std::uint64_t kHorizons[] = {1, 2, 3, 7, 8, 1000, 1024, 1025};

/// Oracle: S_t by AS17 PrivateSum step 3 (docs/spec/model.md §1.5), by brute force over every node of the
/// tree with k = ceil(log2 T) levels above the leaves: the nodes whose parent and right sibling are
/// both ancestors of leaf t (i.e. left children (j, m), m even, whose right sibling (j, m+1) contains
/// leaf t); S_T = {root} when leaf T does not exist (t = T = 2^k). No bit tricks.
std::set<Node> explicit_S(std::uint64_t t, std::uint64_t T) {
    const std::uint32_t k = tree_depth(T);
    const std::uint64_t leaves = std::uint64_t{1} << k;
    std::set<Node> s;
    if (t == leaves) {
        s.insert({k, 0});
        return s;
    }
    for (std::uint32_t j = 0; j <= k; ++j) {
        const std::uint64_t width = std::uint64_t{1} << j;
        for (std::uint64_t m = 0; m < (leaves >> j); ++m) {
            if (m % 2 != 0 || j == k) continue; // not a left child
            const std::uint64_t sib_lo = (m + 1) * width, sib_hi = (m + 2) * width;
            if (sib_lo <= t && t < sib_hi) s.insert({j, m});
        }
    }
    return s;
}

std::set<Node> formula_S(std::uint64_t t) {
    std::set<Node> s;
    for (std::uint32_t j = 0; j < 64; ++j)
        if ((t >> j) & 1u) s.insert({j, prefix_node(t, j)});
    return s;
}

TreeNoise make_noise(TreeVariant v, NodeNoise law, double scale, std::uint64_t T, std::uint32_t instance = 0,
                     std::uint32_t seed = 12345) {
    TreeNoise tn;
    tn.variant = v;
    tn.noise = law;
    tn.scale = scale;
    tn.T = T;
    tn.seed = seed;
    tn.stream = 0;
    tn.instance = instance;
    return tn;
}

/// Integer-valued losses in [-1000, 1000]: every sum is exact in double, so "exact" means ==.
std::vector<std::vector<double>> integer_losses(std::uint64_t T, std::uint32_t N, std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::uniform_int_distribution<int> d(-1000, 1000);
    std::vector<std::vector<double>> l(T + 1, std::vector<double>(N, 0.0)); // l[1..T]
    for (std::uint64_t t = 1; t <= T; ++t)
        for (auto& x : l[t]) x = d(gen);
    return l;
}

} // namespace

// ---- bookkeeping -------------------------------------------------------------------------------

TEST(TreeBookkeeping, FormulaSetEqualsExplicitTreeAndCoversPrefix) {
    for (std::uint64_t T : kHorizons) {
        const std::uint32_t k = tree_depth(T);
        for (std::uint64_t t = 0; t <= T; ++t) {
            const std::set<Node> ex = explicit_S(t, T);
            ASSERT_EQ(ex, formula_S(t)) << "T=" << T << " t=" << t;
            ASSERT_EQ(released_nodes(t, T), ex.size()) << "T=" << T << " t=" << t;
            // The nodes of S_t tile [0, t) exactly: disjoint, and their widths add up to t.
            std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
            for (const Node& n : ex) ranges.push_back({n.second << n.first, (n.second + 1) << n.first});
            std::sort(ranges.begin(), ranges.end());
            std::uint64_t at = 0;
            for (const auto& r : ranges) {
                ASSERT_EQ(r.first, at);
                at = r.second;
            }
            ASSERT_EQ(at, t);
            ASSERT_LE(ex.size(), std::max<std::uint32_t>(k, 1u)); // > k only for T = 1, t = 1
        }
        // Each leaf lies in exactly k + 1 nodes (one per level 0..k).
        for (std::uint64_t leaf = 0; leaf < (std::uint64_t{1} << k);
             leaf += std::max<std::uint64_t>(1, T / 37)) {
            std::uint32_t count = 0;
            for (std::uint32_t j = 0; j <= k; ++j)
                for (std::uint64_t m = 0; m < ((std::uint64_t{1} << k) >> j); ++m)
                    count += ((m << j) <= leaf && leaf < ((m + 1) << j)) ? 1u : 0u;
            ASSERT_EQ(count, k + 1);
        }
    }
}

TEST(TreeBookkeeping, RootOnlyAtPowerOfTwoHorizon) {
    for (std::uint32_t h = 0; h <= 31; ++h) {
        const std::uint64_t T = std::uint64_t{1} << h;
        EXPECT_EQ(released_nodes(T, T), 1u);
        EXPECT_EQ(formula_S(T), (std::set<Node>{{h, 0}})); // (k, 0) is the root
        EXPECT_EQ(padding_count(TreeVariant::Padded, T, T), h == 0 ? 0u : h - 1);
    }
    EXPECT_EQ(tree_depth(1), 0u);
    EXPECT_EQ(tree_depth(1025), 11u);
}

// ---- noise off: exact prefix sums through the mechanism ----------------------------------------

TEST(TreeAggregatorTest, NoiseOffGivesExactPrefixSums) {
    constexpr std::uint32_t N = 3;
    for (TreeVariant v : {TreeVariant::Binary, TreeVariant::Padded}) {
        for (std::uint64_t T : kHorizons) {
            const TreeNoise tn = make_noise(v, NodeNoise::None, 5.0, T);
            const auto l = integer_losses(T, N, 77 + T);
            TreeAggregator<N> agg(tn);
            double out[N], L[N] = {0, 0, 0};
            agg.initial(out);
            for (std::uint32_t c = 0; c < N; ++c) ASSERT_EQ(out[c], 0.0);
            for (std::uint64_t t = 1; t <= T; ++t) {
                ASSERT_EQ(agg.add(l[t].data(), out), t);
                for (std::uint32_t c = 0; c < N; ++c) {
                    L[c] += l[t][c];
                    ASSERT_EQ(out[c], L[c]) << "T=" << T << " t=" << t << " c=" << c;
                    ASSERT_EQ(prefix_noise(tn, t, c), 0.0);
                }
            }
        }
    }
}

TEST(TreeAggregatorTest, NoiseOnEqualsExactPlusRegeneratedDefinition) {
    // The O(hN) implementation and the regenerated definition agree under the same draws
    // (§3.1 "node bookkeeping"). Tolerance: both sides add at most ~2k + 2 terms of size <= 1e3 k
    // (losses) and 40 scale (noise), so rounding is below 1e-9 of that; a missing or wrong node
    // would be off by a node draw (~scale = 3).
    constexpr std::uint32_t N = 2;
    for (TreeVariant v : {TreeVariant::Binary, TreeVariant::Padded}) {
        for (NodeNoise law : {NodeNoise::Laplace, NodeNoise::Gaussian}) {
            for (std::uint64_t T :
                 {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{1024}, std::uint64_t{1025}}) {
                const TreeNoise tn = make_noise(v, law, 3.0, T, 9);
                const auto l = integer_losses(T, N, 5 + T);
                TreeAggregator<N> agg(tn);
                double out[N], L[N] = {0, 0};
                agg.initial(out);
                for (std::uint32_t c = 0; c < N; ++c) ASSERT_EQ(out[c], prefix_noise(tn, 0, c));
                for (std::uint64_t t = 1; t <= T; ++t) {
                    agg.add(l[t].data(), out);
                    for (std::uint32_t c = 0; c < N; ++c) {
                        L[c] += l[t][c];
                        ASSERT_NEAR(out[c], L[c] + prefix_noise(tn, t, c), 1e-9 * (std::fabs(L[c]) + 1e3))
                            << "T=" << T << " t=" << t;
                    }
                }
            }
        }
    }
}

// ---- unit node noise: the number of terms ------------------------------------------------------

TEST(TreeUnitNoise, BinaryCarriesPopcountPaddedCarriesCeilLog2T) {
    for (std::uint64_t T : kHorizons) {
        const std::uint32_t k = tree_depth(T);
        const TreeNoise bin = make_noise(TreeVariant::Binary, NodeNoise::Constant, 1.0, T);
        const TreeNoise pad = make_noise(TreeVariant::Padded, NodeNoise::Constant, 1.0, T);
        for (std::uint64_t t = 0; t <= T; ++t) {
            const double pc = popcount64(t);
            ASSERT_EQ(prefix_noise(bin, t, 0), pc) << "T=" << T << " t=" << t;
            ASSERT_EQ(tree_part(pad, t, 1), pc);
            if (t < T) {
                ASSERT_EQ(prefix_noise(pad, t, 2), static_cast<double>(k)) << "T=" << T << " t=" << t;
            }
        }
        // t = T: root only when T = 2^h (binary 1 term; padded root + k-1 fresh = k); otherwise the
        // dyadic blocks of [0, T). T = 1: the root is the leaf, one term in both (documented).
        const bool pow2 = (T & (T - 1)) == 0;
        EXPECT_EQ(prefix_noise(bin, T, 0), pow2 ? 1.0 : static_cast<double>(popcount64(T)));
        EXPECT_EQ(prefix_noise(pad, T, 0), T == 1 ? 1.0 : static_cast<double>(k));
        // Through the mechanism: released - exact = the same counts.
        TreeAggregator<1> ab(bin), ap(pad);
        double ob, op, L = 0.0;
        ab.initial(&ob);
        ap.initial(&op);
        EXPECT_EQ(ob, 0.0);
        EXPECT_EQ(op, static_cast<double>(k));
        for (std::uint64_t t = 1; t <= T; ++t) {
            const double x = static_cast<double>(t % 5);
            L += x;
            ab.add(&x, &ob);
            ap.add(&x, &op);
            ASSERT_EQ(ob - L, static_cast<double>(popcount64(t)));
            ASSERT_EQ(op - L, static_cast<double>(prefix_draw_count(TreeVariant::Padded, t, T)));
        }
    }
}

// ---- the learners' level cache == definition ------------------------------------------------------

namespace {

/// Runs the noisy-prefix kernel of the learners (kernels/mechanisms/noisy_prefix.hpp) for coordinate c of one
/// instance over rounds 1..T with a one-lane team, returning Z_{t-1} of every round t.
template <class R>
std::vector<R> cached_prefix_noise(const TreeNoise& tn, std::uint32_t c, std::vector<R>* corrupt_row = nullptr,
                                   std::uint64_t corrupt_at = 0) {
    const std::uint32_t rows = level_rows(tn);
    const std::uint32_t d = c + 1;
    std::vector<R> cache(std::size_t(rows) * d, R(0));
    SerialTeam<R> team;
    team.rng = RngKey{tn.seed, tn.stream};
    team.id = tn.instance;
    const StridedView<R> S{cache.data(), 1, d};
    std::vector<R> z;
    for (std::uint64_t t = 1; t <= tn.T; ++t) {
        if (corrupt_row && t == corrupt_at) cache[c] += R(1); // a wrong row 0 (tree part) before round t
        z.push_back(noisy_prefix(team, tn, tree_round(tn, t), S, c));
    }
    (void)corrupt_row;
    return z;
}

template <class R>
void expect_cache_equals_definition() {
    std::vector<std::uint64_t> Ts(std::begin(kHorizons), std::end(kHorizons));
    Ts.push_back(65536 + 4321);
    for (NodeNoise law : {NodeNoise::Laplace, NodeNoise::Gaussian})
        for (TreeVariant v : {TreeVariant::Padded, TreeVariant::Binary})
            for (const std::uint64_t T : Ts)
                for (std::uint32_t c : {0u, 7u}) {
                    const TreeNoise tn = make_noise(v, law, 2.5, T, 3);
                    const std::vector<R> z = cached_prefix_noise<R>(tn, c);
                    for (std::uint64_t t = 1; t <= T; ++t)
                        ASSERT_EQ(z[t - 1], prefix_noise<R>(tn, t - 1, c))
                            << "T=" << T << " t=" << t << " coord " << c << " law " << int(law) << " variant " << int(v);
                }
}

} // namespace

// The cache sums the same nodes as the definition in the same order (highest level first), and draws the node
// and the padding from the same stream positions: equality is bitwise, in both precisions.
TEST(TreeLevelCache, EqualsRegeneratedDefinitionBitwiseDouble) { expect_cache_equals_definition<double>(); }
TEST(TreeLevelCache, EqualsRegeneratedDefinitionBitwiseFloat) { expect_cache_equals_definition<float>(); }

TEST(TreeLevelCache, UnitNoiseCountsTheDraws) {
    // Constant noise 1: the binary tree's Z_t is |S_t| = popcount(t), the padded tree's k = ceil(log2 T).
    for (std::uint64_t T : {1000ull, 1024ull, 1025ull}) {
        const std::vector<double> zb = cached_prefix_noise<double>(make_noise(TreeVariant::Binary, NodeNoise::Constant, 1.0, T), 0);
        const std::vector<double> zp = cached_prefix_noise<double>(make_noise(TreeVariant::Padded, NodeNoise::Constant, 1.0, T), 0);
        for (std::uint64_t t = 1; t <= T; ++t) {
            ASSERT_EQ(zb[t - 1], static_cast<double>(popcount64(t - 1))) << "T=" << T << " t=" << t;
            ASSERT_EQ(zp[t - 1], t == 1 ? static_cast<double>(tree_depth(T)) : static_cast<double>(tree_depth(T)))
                << "T=" << T << " t=" << t;
        }
    }
}

TEST(TreeLevelCache, AWrongCachedRowIsCarriedNotRepaired) {
    // Meta: the comparison above can fail. A cache whose tree part is off by one before round 6 stays off
    // (it is not silently recomputed) until the node that replaces row 0 completes.
    const TreeNoise tn = make_noise(TreeVariant::Binary, NodeNoise::Laplace, 1.0, 1000, 1);
    std::vector<double> dummy;
    const std::vector<double> z = cached_prefix_noise<double>(tn, 0, &dummy, 6);
    EXPECT_EQ(z[4], prefix_noise<double>(tn, 4, 0));          // round 5, before the corruption
    EXPECT_EQ(z[5], prefix_noise<double>(tn, 5, 0) + 1.0);    // round 6 plays the corrupted prefix 5
}

// ---- noise keying -------------------------------------------------------------------------------

TEST(TreeKeying, NodeNoiseIsAPureFunctionOfInstanceLevelNodeCoordinate) {
    const TreeNoise a = make_noise(TreeVariant::Binary, NodeNoise::Laplace, 1.0, 1000, 4);
    TreeNoise b = a;
    b.variant = TreeVariant::Padded;
    b.T = 1025; // horizon and variant do not enter the node key
    EXPECT_EQ(node_noise(a, 3, 17, 2), node_noise(b, 3, 17, 2));
    // Changing any one key component changes the draw.
    TreeNoise c = a;
    c.instance = 5;
    EXPECT_NE(node_noise(a, 3, 17, 2), node_noise(c, 3, 17, 2));
    EXPECT_NE(node_noise(a, 3, 17, 2), node_noise(a, 4, 17, 2));
    EXPECT_NE(node_noise(a, 3, 17, 2), node_noise(a, 3, 18, 2));
    EXPECT_NE(node_noise(a, 3, 17, 2), node_noise(a, 3, 17, 3));
    // Stream layout 2: node (3, 17) completes when l_{(17+1) 2^3} = l_144 is added, so its draw is the
    // Laplace transform of uniform 0 of the tree stream of round 144, StreamId round field s = 143.
    rng::StreamId id;
    id.seed = a.seed;
    id.instance = 4;
    id.purpose = rng::Purpose::TreeStream;
    id.sub = 0;
    id.round = 143;
    id.element = 2;
    EXPECT_EQ(node_noise(a, 3, 17, 2), noise::laplace_from_u(rng::uniform_at<double>(id, 0), 1.0));
    // Padding of prefix 6 (r_6 = 10 - popcount(6) = 8 draws): the uniforms after the node's in the stream of
    // round 7 (s = 6).
    TreeNoise p = make_noise(TreeVariant::Padded, NodeNoise::Laplace, 1.0, 1000, 4);
    rng::StreamId pid = id;
    pid.round = 6;
    double u[12];
    for (int j = 0; j < 12; ++j) u[j] = rng::uniform_at<double>(pid, static_cast<std::uint32_t>(j));
    EXPECT_EQ(padding_noise(p, 6, 2), noise::laplace_sum(u + 1, 8, 1.0));
    EXPECT_EQ(padding_noise(a, 6, 2), 0.0); // binary: no padding
    EXPECT_NE(padding_noise(p, 6, 2), padding_noise(p, 5, 2));
    // Float draws are the same uniforms rounded to 24 bits: close to, not equal to, the double draws.
    EXPECT_NE(node_noise<float>(a, 3, 17, 2), static_cast<float>(node_noise<double>(a, 3, 17, 2)) + 1.0f);
    EXPECT_NEAR(node_noise<float>(a, 3, 17, 2), node_noise<double>(a, 3, 17, 2),
                1e-5 * (1.0 + std::fabs(node_noise<double>(a, 3, 17, 2))));
}

// ---- statistical tests --------------------------------------------------------------------------
//
// Protocol: Z_t = prefix noise of coordinate 0, one sample per instance (instances are independent
// by keying), n = 1e5 instances. Means are known (0), so Var(Z_t) is estimated by mean(Z_t^2) and
// Cov(Z_t, Z_t') by mean(Z_t Z_t'), with EXACT standard errors from the node law's moments:
//   node law: v = Var(b), m4 = E b^4 (Laplace: v = 2 b^2, m4 = 24 b^4; Gaussian: v = s^2, m4 = 3 s^4)
//   sum of c iid draws:  E S^2 = c v,  E S^4 = c m4 + 3 c (c-1) v^2
//   Var(Z^2) = E Z^4 - (c v)^2
//   Z_t = A + B, Z_t' = A + C with A the a shared nodes, B, C independent (their other nodes and
//   their padding):  Var(Z_t Z_t') = E A^4 + vA vB + vA vC + vB vC - vA^2.
// Tolerance: 6 standard errors (two-sided normal false alarm 2e-9 per comparison; < 1e-6 over all
// comparisons of this file). Power: at n = 1e5 the relative SE of a variance is <= 0.0072 (Laplace,
// c = 1), so a node scale x1.05 (variance x1.1025) is >= 14 SE away and must be rejected.

namespace {

constexpr std::uint32_t kInstances = 100000;

struct Law {
    double v, m4;
};
Law node_law(const TreeNoise& tn) {
    const double s2 = tn.scale * tn.scale;
    return tn.noise == NodeNoise::Laplace ? Law{2 * s2, 24 * s2 * s2} : Law{s2, 3 * s2 * s2};
}
double sum_m2(const Law& w, double c) {
    return c * w.v;
}
double sum_m4(const Law& w, double c) {
    return c * w.m4 + 3 * c * (c - 1) * w.v * w.v;
}

using PrefixFn = std::function<double(const TreeNoise&, std::uint64_t)>;

double true_prefix(const TreeNoise& tn, std::uint64_t t) {
    return prefix_noise(tn, t, 0);
}

/// Z_t over instances [first, first + n).
std::vector<double> sample(const TreeNoise& base, std::uint64_t t, const PrefixFn& f, std::uint32_t first = 0,
                           std::uint32_t n = kInstances) {
    std::vector<double> z(n);
    TreeNoise tn = base;
    for (std::uint32_t i = 0; i < n; ++i) {
        tn.instance = first + i;
        z[i] = f(tn, t);
    }
    return z;
}

struct Check {
    double estimate, expected, se;
    bool ok() const { return std::fabs(estimate - expected) <= 6.0 * se; }
};

Check variance_check(const std::vector<double>& z, const TreeNoise& tn, std::uint64_t t) {
    const Law w = node_law(tn);
    const double c = prefix_draw_count(tn.variant, t, tn.T);
    double s = 0;
    for (double x : z) s += x * x;
    const double n = static_cast<double>(z.size());
    const double m2 = sum_m2(w, c);
    return Check{s / n, m2, std::sqrt((sum_m4(w, c) - m2 * m2) / n)};
}

Check covariance_check(const std::vector<double>& zt, const std::vector<double>& zu, const TreeNoise& tn,
                       std::uint64_t t, std::uint64_t u) {
    const Law w = node_law(tn);
    std::set<Node> st = explicit_S(t, tn.T), su = explicit_S(u, tn.T), both;
    std::set_intersection(st.begin(), st.end(), su.begin(), su.end(), std::inserter(both, both.begin()));
    const double a = both.size();
    const double b = prefix_draw_count(tn.variant, t, tn.T) - a;
    const double c = prefix_draw_count(tn.variant, u, tn.T) - a;
    const double vA = a * w.v, vB = b * w.v, vC = c * w.v;
    const double var_prod = sum_m4(w, a) + vA * vB + vA * vC + vB * vC - vA * vA;
    double s = 0;
    for (std::size_t i = 0; i < zt.size(); ++i) s += zt[i] * zu[i];
    const double n = static_cast<double>(zt.size());
    return Check{s / n, vA, std::sqrt(var_prod / n)};
}

std::vector<std::uint64_t> test_times(std::uint64_t T) {
    std::vector<std::uint64_t> ts;
    for (std::uint64_t t : {0, 1, 2, 3, 4, 6, 7, 8, 255, 256, 511, 512, 767, 999, 1000, 1023, 1024})
        if (t <= T) ts.push_back(t);
    return ts;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> test_pairs(std::uint64_t T) {
    // Shared nodes (T >= 1000): (1,2) 0, (2,3) 1 = [0,2), (4,7) 1, (6,7) 2, (255,256) 0,
    // (512,767) 1, (767,999) 1, (999,1000) 5, (1023,1024) 0, (0,1) 0 (t = 0 has no node).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ps;
    for (auto p : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 2},
                                                                       {2, 3},
                                                                       {4, 7},
                                                                       {6, 7},
                                                                       {255, 256},
                                                                       {512, 767},
                                                                       {767, 999},
                                                                       {999, 1000},
                                                                       {1023, 1024},
                                                                       {0, 1}})
        if (p.second <= T) ps.push_back(p);
    return ps;
}

/// Samples every test time once and checks all variances and covariances.
void check_moments(const TreeNoise& base) {
    const auto ts = test_times(base.T);
    std::vector<std::vector<double>> z;
    for (std::uint64_t t : ts) z.push_back(sample(base, t, true_prefix));
    auto idx = [&](std::uint64_t t) { return std::find(ts.begin(), ts.end(), t) - ts.begin(); };
    for (std::size_t i = 0; i < ts.size(); ++i) {
        const Check ch = variance_check(z[i], base, ts[i]);
        EXPECT_TRUE(ch.ok()) << "Var(Z_" << ts[i] << ") = " << ch.estimate << ", expected " << ch.expected
                             << " +- 6 x " << ch.se;
    }
    for (const auto& p : test_pairs(base.T)) {
        const Check ch = covariance_check(z[idx(p.first)], z[idx(p.second)], base, p.first, p.second);
        EXPECT_TRUE(ch.ok()) << "Cov(Z_" << p.first << ", Z_" << p.second << ") = " << ch.estimate
                             << ", expected " << ch.expected << " +- 6 x " << ch.se;
    }
}

/// Two-sample Kolmogorov-Smirnov statistic sup |F_a - F_b|.
double ks_two_sample(std::vector<double> a, std::vector<double> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::size_t i = 0, j = 0;
    double d = 0;
    const double na = a.size(), nb = b.size();
    while (i < a.size() && j < b.size()) {
        const double x = std::min(a[i], b[j]);
        while (i < a.size() && a[i] <= x) ++i;
        while (j < b.size() && b[j] <= x) ++j;
        d = std::max(d, std::fabs(i / na - j / nb));
    }
    return d;
}
/// Asymptotic critical value at level alpha: sqrt(-ln(alpha/2)/2) sqrt((n+m)/(n m)).
double ks_critical(double n, double m, double alpha) {
    return std::sqrt(-0.5 * std::log(alpha / 2)) * std::sqrt((n + m) / (n * m));
}

} // namespace

TEST(TreeMoments_Stat, LaplaceBinaryT1000) {
    check_moments(make_noise(TreeVariant::Binary, NodeNoise::Laplace, 1.5, 1000));
}
TEST(TreeMoments_Stat, LaplacePaddedT1024) {
    check_moments(make_noise(TreeVariant::Padded, NodeNoise::Laplace, 1.5, 1024));
}
TEST(TreeMoments_Stat, GaussianBinaryT1024) {
    check_moments(make_noise(TreeVariant::Binary, NodeNoise::Gaussian, 0.7, 1024));
}
TEST(TreeMoments_Stat, GaussianPaddedT1000) {
    check_moments(make_noise(TreeVariant::Padded, NodeNoise::Gaussian, 0.7, 1000));
}

TEST(TreeMoments_Stat, MetaVarianceTestRejectsScaleTimes105) {
    // The node scale is 5% larger than the variance test assumes: every prefix with >= 1 draw must
    // be rejected (>= 14 SE away, see the protocol above).
    for (TreeVariant v : {TreeVariant::Binary, TreeVariant::Padded}) {
        for (NodeNoise law : {NodeNoise::Laplace, NodeNoise::Gaussian}) {
            const TreeNoise claimed = make_noise(v, law, 1.0, 1000);
            TreeNoise actual = claimed;
            actual.scale *= 1.05;
            for (std::uint64_t t : test_times(1000)) {
                if (prefix_draw_count(v, t, 1000) == 0) continue;
                const Check ch = variance_check(sample(actual, t, true_prefix, 0, kInstances), claimed, t);
                EXPECT_FALSE(ch.ok())
                    << "t=" << t << " not rejected: " << ch.estimate << " vs " << ch.expected;
            }
        }
    }
}

TEST(TreeMoments_Stat, MetaVarianceTestRejectsATreeMissingOneNode) {
    // Planted bug: node (9, 0) = leaves [0, 512) carries no noise. It lies in S_t for t in 512..1023,
    // so exactly those prefixes must be rejected (binary t = 512 has no noise at all; padded t = 767
    // has 9 of 10 draws: a 10% variance deficit, ~20 SE) and the others accepted.
    const Node missing{9, 0};
    const PrefixFn buggy = [missing](const TreeNoise& tn, std::uint64_t t) {
        double z = prefix_noise(tn, t, 0);
        if (((t >> missing.first) & 1u) && prefix_node(t, missing.first) == missing.second)
            z -= node_noise(tn, missing.first, missing.second, 0);
        return z;
    };
    for (TreeVariant v : {TreeVariant::Binary, TreeVariant::Padded}) {
        const TreeNoise tn = make_noise(v, NodeNoise::Laplace, 1.0, 1000);
        for (std::uint64_t t : test_times(1000)) {
            const bool affected = explicit_S(t, 1000).count(missing) > 0;
            const Check ch = variance_check(sample(tn, t, buggy), tn, t);
            EXPECT_EQ(ch.ok(), !affected) << "t=" << t << ": " << ch.estimate << " vs " << ch.expected;
        }
    }
}

TEST(TreeMoments_Stat, MetaCovarianceTestRejectsUnsharedNodes) {
    // Planted bug: every prefix draws its own nodes (keyed by t as well), so prefixes that should
    // share nodes are uncorrelated. Pairs with shared nodes must be rejected, the others accepted.
    const PrefixFn unshared = [](const TreeNoise& tn, std::uint64_t t) {
        TreeNoise own = tn;
        own.stream = static_cast<std::uint32_t>(t + 1);
        return prefix_noise(own, t, 0);
    };
    for (TreeVariant v : {TreeVariant::Binary, TreeVariant::Padded}) {
        const TreeNoise tn = make_noise(v, NodeNoise::Laplace, 1.0, 1000);
        for (const auto& p : test_pairs(1000)) {
            const auto zt = sample(tn, p.first, unshared), zu = sample(tn, p.second, unshared);
            const Check ch = covariance_check(zt, zu, tn, p.first, p.second);
            EXPECT_EQ(ch.ok(), ch.expected == 0.0) << "pair (" << p.first << "," << p.second << ")";
        }
    }
}

namespace {

/// Padded prefixes are identically distributed: KS of each Z_t against Z_ref (the prefix made of
/// node draws only), samples over DISJOINT instance ranges so the two samples are independent.
/// alpha = 1e-6 per comparison.
void check_identical(const TreeNoise& tn, std::uint64_t ref, const std::vector<std::uint64_t>& ts,
                     const PrefixFn& f, bool expect_same) {
    const std::uint32_t n = kInstances;
    const auto zref = sample(tn, ref, true_prefix, 0, n);
    std::uint32_t first = n;
    for (std::uint64_t t : ts) {
        const auto z = sample(tn, t, f, first, n);
        first += n;
        const double d = ks_two_sample(zref, z), crit = ks_critical(n, n, 1e-6);
        EXPECT_EQ(d <= crit, expect_same)
            << "t=" << t << " vs t=" << ref << ": D = " << d << ", critical " << crit;
    }
}

} // namespace

TEST(TreePadding_Stat, PaddedPrefixesIdenticallyDistributedT16) {
    // k = 4: Z_15 is four node draws, Z_0 four padding draws (Gamma difference), others mixed.
    std::vector<std::uint64_t> ts;
    for (std::uint64_t t = 0; t <= 16; ++t)
        if (t != 15) ts.push_back(t);
    check_identical(make_noise(TreeVariant::Padded, NodeNoise::Laplace, 1.0, 16), 15, ts, true_prefix, true);
    check_identical(make_noise(TreeVariant::Padded, NodeNoise::Gaussian, 1.0, 16), 15, {0, 1, 6, 16},
                    true_prefix, true);
}

TEST(TreePadding_Stat, PaddedPrefixesIdenticallyDistributedT1024) {
    check_identical(make_noise(TreeVariant::Padded, NodeNoise::Laplace, 1.0, 1024), 1023,
                    {0, 1, 512, 1000, 1024}, true_prefix, true);
}

TEST(TreePadding_Stat, MetaKSRejectsPaddingShortByOneDraw) {
    // Planted bug: r_t - 1 padding draws (sum of 3 instead of 4 Laplace at t = 0): scale ratio
    // sqrt(3/4), KS distance ~0.03 against a critical value 0.012. Also: the binary tree (no padding)
    // is not identically distributed across t.
    const PrefixFn short_pad = [](const TreeNoise& tn, std::uint64_t t) {
        const std::uint32_t r = padding_count(tn.variant, t, tn.T);
        const rng::StreamId id = tree_stream(tn, t, 0);
        double u[kMaxTreeUniforms];
        for (std::uint32_t j = 0; j < kMaxTreeUniforms; ++j) u[j] = rng::uniform_at<double>(id, j);
        return tree_part(tn, t, 0) + noise::laplace_sum(u + node_uniforms(tn.noise), r - 1, tn.scale);
    };
    check_identical(make_noise(TreeVariant::Padded, NodeNoise::Laplace, 1.0, 16), 15, {0, 1, 2}, short_pad,
                    false);
    check_identical(make_noise(TreeVariant::Binary, NodeNoise::Laplace, 1.0, 16), 15, {1, 3, 8}, true_prefix,
                    false);
}
