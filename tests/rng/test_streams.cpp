// Streams keyed by meaning (docs/ARCHITECTURE.md §2, kernels/rng/stream.hpp): ids that differ in any one field
// (seed, stream, instance, purpose, sub, round, element, block) give independent draws, and the
// reuse detector of tests/noise/stat_tests.hpp flags a stream that is used twice.
//
// Independence check: for n = 2^20 pairs of ids (A_i, B_i) that differ in exactly the field under
// test (the pair index i lives in another field), the 4 x 4 Pearson correlations between the words
// of A_i's block and of B_i's block (as uniforms) must each lie within 6 / sqrt(n) of 0. Under
// independence r ~ N(0, 1/n), so each check false-alarms with probability 2e-9; the 598 checks in
// this file (16 single-field variants and 21 field pairs x 16 word pairs, plus 6 within one block)
// together false-alarm with probability 1.2e-6.
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/noise/samplers.hpp"
#include "kernels/rng/stream.hpp"
#include "kernels/rng/uniform.hpp"
#include "noise/stat_tests.hpp"

using namespace dpr;
using namespace dpr::rng;

namespace {

constexpr std::uint32_t kPairs = 1u << 20;

/// A pair of stream addresses: the block of `a` and the block of `b`.
struct Addr {
    StreamId id;
    std::uint32_t block = 0;
};

StreamId base_id() {
    StreamId id;
    id.seed = 0x5eed;
    id.stream = 0;
    id.instance = 17;
    id.purpose = Purpose::TreeNode;
    id.sub = 3;
    id.round = 1000;
    id.element = 42;
    return id;
}

/// Max |r| over the 16 word pairs of the blocks of make(i) = (A_i, B_i), i < n, and the pair.
struct CorrResult {
    double max_abs_r = 0;
    int word_a = 0, word_b = 0;
    double limit = 0;
};

CorrResult word_correlations(const std::function<std::pair<Addr, Addr>(std::uint32_t)>& make,
                             std::uint32_t n = kPairs) {
    double sa[4] = {}, sb[4] = {}, saa[4] = {}, sbb[4] = {}, sab[4][4] = {};
    constexpr double scale = 0x1.0p-32;
    for (std::uint32_t i = 0; i < n; ++i) {
        const auto [a, b] = make(i);
        const U32x4 wa = draw_block(a.id, a.block), wb = draw_block(b.id, b.block);
        double x[4], y[4];
        for (int j = 0; j < 4; ++j) {
            // Centred uniforms, so the one-pass sums lose no precision.
            x[j] = (wa.v[j] + 0.5) * scale - 0.5;
            y[j] = (wb.v[j] + 0.5) * scale - 0.5;
            sa[j] += x[j], sb[j] += y[j], saa[j] += x[j] * x[j], sbb[j] += y[j] * y[j];
        }
        for (int j = 0; j < 4; ++j)
            for (int l = 0; l < 4; ++l) sab[j][l] += x[j] * y[l];
    }
    CorrResult res;
    res.limit = 6.0 / std::sqrt(static_cast<double>(n));
    const double nd = n;
    for (int j = 0; j < 4; ++j)
        for (int l = 0; l < 4; ++l) {
            const double cov = sab[j][l] / nd - sa[j] / nd * sb[l] / nd;
            const double va = saa[j] / nd - sa[j] / nd * sa[j] / nd;
            const double vb = sbb[l] / nd - sb[l] / nd * sb[l] / nd;
            const double r = cov / std::sqrt(va * vb);
            if (std::abs(r) > res.max_abs_r) res.max_abs_r = std::abs(r), res.word_a = j, res.word_b = l;
        }
    return res;
}

void expect_independent(const std::string& what,
                        const std::function<std::pair<Addr, Addr>(std::uint32_t)>& make) {
    const auto r = word_correlations(make);
    std::cout << "[ corr ] " << what << ": max |r| = " << r.max_abs_r << " (words " << r.word_a << ", "
              << r.word_b << "), limit " << r.limit << "\n";
    EXPECT_LT(r.max_abs_r, r.limit) << what << ": words " << r.word_a << " and " << r.word_b << " correlate";
}

/// A pair differing only in the field set by `change`; the pair index lives in `element` (or, when
/// the element is the field under test, in `instance`).
std::function<std::pair<Addr, Addr>(std::uint32_t)> differ(std::function<void(Addr&)> change,
                                                           bool index_in_instance = false) {
    return [change, index_in_instance](std::uint32_t i) {
        Addr a{base_id(), 0};
        if (index_in_instance)
            a.id.instance = i;
        else
            a.id.element = i;
        Addr b = a;
        change(b);
        return std::make_pair(a, b);
    };
}

} // namespace

// ---- each field alone ---------------------------------------------------------------------------

TEST(Streams_Stat, SeedsGiveIndependentDraws) {
    expect_independent("seed +1", differ([](Addr& b) { b.id.seed += 1; }));
    expect_independent("seed top bit", differ([](Addr& b) { b.id.seed ^= 0x80000000u; }));
}

TEST(Streams_Stat, StreamKeyWordGivesIndependentDraws) {
    // k1 = 0 is the common-random-numbers default; k1 = 1 an independent stream for a sweep point.
    expect_independent("stream 0 vs 1", differ([](Addr& b) { b.id.stream = 1; }));
}

TEST(Streams_Stat, InstancesGiveIndependentDraws) {
    expect_independent("instance +1", differ([](Addr& b) { b.id.instance += 1; }));
    expect_independent("instance top bit", differ([](Addr& b) { b.id.instance ^= 0x80000000u; }));
}

TEST(Streams_Stat, PurposesGiveIndependentDraws) {
    expect_independent("TreeNode vs TreePadding",
                       differ([](Addr& b) { b.id.purpose = Purpose::TreePadding; }));
    expect_independent("TreeNode vs Adversary", differ([](Addr& b) { b.id.purpose = Purpose::Adversary; }));
    expect_independent("TreeNode vs Test", differ([](Addr& b) { b.id.purpose = Purpose::Test; }));
}

TEST(Streams_Stat, SubValuesGiveIndependentDraws) {
    expect_independent("sub +1", differ([](Addr& b) { b.id.sub += 1; }));
    expect_independent("sub 255", differ([](Addr& b) { b.id.sub = 255; }));
}

TEST(Streams_Stat, RoundsGiveIndependentDraws) {
    expect_independent("round +1", differ([](Addr& b) { b.id.round += 1; }));
    expect_independent("round top bit", differ([](Addr& b) { b.id.round ^= 0x80000000u; }));
}

TEST(Streams_Stat, ElementsGiveIndependentDraws) {
    expect_independent("element +1", differ([](Addr& b) { b.id.element += 1; }, /*index_in_instance=*/true));
    expect_independent("element top bit",
                       differ([](Addr& b) { b.id.element ^= 0x80000000u; }, /*index_in_instance=*/true));
}

TEST(Streams_Stat, BlocksOfOneElementGiveIndependentDraws) {
    expect_independent("block 0 vs 1", differ([](Addr& b) { b.block = 1; }));
    expect_independent("block 0 vs 65535", differ([](Addr& b) { b.block = 0xffff; }));
}

TEST(Streams_Stat, WordsOfOneBlockAreUncorrelated) {
    // The 4 words of one block feed consecutive draws (the two halves of a 53-bit uniform, the two
    // uniforms of Box-Muller): the 6 correlations between distinct words of one block.
    double s[4] = {}, ss[4] = {}, sx[4][4] = {};
    for (std::uint32_t i = 0; i < kPairs; ++i) {
        StreamId id = base_id();
        id.element = i;
        const U32x4 w = draw_block(id);
        double x[4];
        for (int j = 0; j < 4; ++j)
            x[j] = (w.v[j] + 0.5) * 0x1.0p-32 - 0.5, s[j] += x[j], ss[j] += x[j] * x[j];
        for (int j = 0; j < 4; ++j)
            for (int l = j + 1; l < 4; ++l) sx[j][l] += x[j] * x[l];
    }
    const double n = kPairs, limit = 6.0 / std::sqrt(n);
    for (int j = 0; j < 4; ++j)
        for (int l = j + 1; l < 4; ++l) {
            const double r = (sx[j][l] / n - s[j] / n * s[l] / n) /
                             std::sqrt((ss[j] / n - s[j] / n * s[j] / n) * (ss[l] / n - s[l] / n * s[l] / n));
            EXPECT_LT(std::abs(r), limit) << "words " << j << " and " << l;
        }
}

// ---- fields do not alias each other ---------------------------------------------------------------

TEST(Streams_Stat, NoAliasingBetweenFields) {
    // A layout that added fields into one counter (element + round, say) would make (e + 1, r) and
    // (e, r + 1) the same stream. Every ordered pair of fields, one +1 and the other -1:
    using Setter = std::function<void(Addr&, int)>;
    const std::vector<std::pair<const char*, Setter>> fields = {
        {"element", [](Addr& a, int d) { a.id.element += d; }},
        {"round", [](Addr& a, int d) { a.id.round += d; }},
        {"instance", [](Addr& a, int d) { a.id.instance += d; }},
        {"sub", [](Addr& a, int d) { a.id.sub += d; }},
        {"block", [](Addr& a, int d) { a.block += d; }},
        {"seed", [](Addr& a, int d) { a.id.seed += d; }},
        {"stream", [](Addr& a, int d) { a.id.stream += d; }},
    };
    for (std::size_t f = 0; f < fields.size(); ++f)
        for (std::size_t g = f + 1; g < fields.size(); ++g) {
            const auto& [fname, fset] = fields[f];
            const auto& [gname, gset] = fields[g];
            const auto r = word_correlations(
                [&](std::uint32_t i) {
                    Addr a{base_id(), 1};
                    a.id.purpose = Purpose::Test;
                    a.id.sub = 3;
                    a.id.stream = 5;
                    // The pair index goes into a field that is neither f nor g.
                    if (f != 2 && g != 2)
                        a.id.instance = i;
                    else if (f != 1 && g != 1)
                        a.id.round = i;
                    else
                        a.id.element = i;
                    Addr b = a;
                    fset(a, +1);
                    gset(a, -1);
                    // b stays at the base values: a and b differ by +1 in f and -1 in g.
                    return std::make_pair(a, b);
                },
                kPairs / 8);
            EXPECT_LT(r.max_abs_r, r.limit) << fname << " +1 / " << gname << " -1";
        }
}

// ---- the reuse detector -------------------------------------------------------------------------

namespace {

constexpr std::uint32_t kLen = 100000;

/// n Laplace(b) draws over elements first .. first + n - 1 of `id` (the way a mechanism draws one
/// noise value per coordinate).
std::vector<double> laplace_vector(StreamId id, double b = 1.0, std::uint32_t n = kLen,
                                   std::uint32_t first = 0) {
    std::vector<double> v(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        id.element = first + i;
        WordStream ws(id);
        v[i] = noise::laplace(ws, b);
    }
    return v;
}

StreamId noise_id(std::uint32_t round) {
    StreamId id = base_id();
    id.purpose = Purpose::TreeNode;
    id.round = round;
    return id;
}

} // namespace

TEST(ReuseDetector, QuietOnCorrectStreams) {
    // 20 vectors that differ in one field each (round, instance, purpose, sub, seed, stream): 2e6
    // values, 190 pairs. Must not fire.
    std::vector<std::vector<double>> v;
    for (std::uint32_t r = 0; r < 8; ++r) v.push_back(laplace_vector(noise_id(r)));
    for (std::uint32_t k = 0; k < 3; ++k) {
        StreamId id = noise_id(0);
        id.instance += 1 + k;
        v.push_back(laplace_vector(id));
    }
    for (Purpose p : {Purpose::TreePadding, Purpose::Exploration, Purpose::FeedbackNoise}) {
        StreamId id = noise_id(0);
        id.purpose = p;
        v.push_back(laplace_vector(id));
    }
    for (std::uint32_t s : {0u, 4u, 255u}) {
        StreamId id = noise_id(0);
        id.sub = s;
        v.push_back(laplace_vector(id));
    }
    {
        StreamId id = noise_id(0);
        id.seed += 1;
        v.push_back(laplace_vector(id));
        id = noise_id(0);
        id.stream = 1;
        v.push_back(laplace_vector(id, 3.0)); // another sweep point with an independent stream
    }
    // Consecutive elements of one stream, as two halves: disjoint, so independent.
    v.push_back(laplace_vector(noise_id(99), 1.0, kLen, 0));
    v.push_back(laplace_vector(noise_id(99), 1.0, kLen, kLen));
    const auto f = test::detect_stream_reuse(v);
    EXPECT_FALSE(f.reused) << f.why;
}

TEST(ReuseDetector, QuietOnGaussianAndGammaNoise) {
    std::vector<std::vector<double>> v(4, std::vector<double>(kLen));
    for (std::uint32_t i = 0; i < kLen; ++i) {
        for (std::uint32_t r = 0; r < 4; ++r) {
            StreamId id = noise_id(r);
            id.element = i;
            WordStream ws(id);
            v[r][i] = r % 2 ? noise::gaussian(ws, 1.0) : noise::laplace_sum_stream(ws, 3, 1.0);
        }
    }
    const auto f = test::detect_stream_reuse(v);
    EXPECT_FALSE(f.reused) << f.why;
}

TEST(ReuseDetector, FiresOnIdenticalStreams) {
    // The classic bug: the round is not part of the id, so round 2 replays round 1's noise.
    const auto f = test::detect_stream_reuse({laplace_vector(noise_id(1)), laplace_vector(noise_id(1))});
    EXPECT_TRUE(f.reused);
    std::cout << "[ reuse ] identical: " << f.why << "\n";
}

TEST(ReuseDetector, FiresOnSameUniformsAtAnotherScaleOrSign) {
    // Common random numbers are right across sweep points and wrong between draws claimed
    // independent: same uniforms, different scale (r = 1) or sign (r = -1); no value repeats.
    auto f = test::detect_stream_reuse({laplace_vector(noise_id(1), 1.0), laplace_vector(noise_id(1), 2.5)});
    EXPECT_TRUE(f.reused);
    std::cout << "[ reuse ] scaled: " << f.why << "\n";
    f = test::detect_stream_reuse({laplace_vector(noise_id(1), 1.0), laplace_vector(noise_id(1), -1.0)});
    EXPECT_TRUE(f.reused);
    std::cout << "[ reuse ] negated: " << f.why << "\n";
}

TEST(ReuseDetector, FiresOnElementOffByOne) {
    // Overlapping streams: coordinate i of vector B reads element i + 1 of the same stream.
    const auto f = test::detect_stream_reuse(
        {laplace_vector(noise_id(1), 1.0, kLen, 0), laplace_vector(noise_id(1), 1.0, kLen, 1)});
    EXPECT_TRUE(f.reused);
    std::cout << "[ reuse ] off by one: " << f.why << "\n";
}

TEST(ReuseDetector, FiresOnNoiseRepeated200Times) {
    // Tumult Core's check: one noise sequence of 5000 draws repeated 200x as a vector of 1e6.
    const auto once = laplace_vector(noise_id(7), 1.0, 5000);
    std::vector<double> repeated;
    for (int r = 0; r < 200; ++r) repeated.insert(repeated.end(), once.begin(), once.end());
    const auto f = test::detect_stream_reuse({repeated});
    EXPECT_TRUE(f.reused);
    std::cout << "[ reuse ] repeated 200x: " << f.why << "\n";
    // Three repeated values among 1e6 are already beyond what independent 53-bit draws produce
    // (expected coincidences <= 1e12 / 2 * 2^-48 = 0.0018; P(>= 3) ~ 1e-9).
    auto fresh = laplace_vector(noise_id(8), 1.0, 1000000);
    EXPECT_FALSE(test::detect_stream_reuse({fresh}).reused);
    fresh[123456] = fresh[7];
    fresh[500000] = fresh[8];
    fresh[999999] = fresh[9];
    EXPECT_TRUE(test::detect_stream_reuse({fresh}).reused);
}

TEST(ReuseDetector, FiresOnSharedRadiusInBoxMuller) {
    // Two Gaussian vectors that share the Box-Muller radius u1 but not the angle u2: Pearson of the
    // values is ~0 (E cos = 0), so only the |x| correlation (about 0.48) reveals the shared words.
    std::vector<double> a(kLen), b(kLen);
    for (std::uint32_t i = 0; i < kLen; ++i) {
        StreamId id = noise_id(3);
        id.element = i;
        WordStream ws(id);
        const double u1 = ws.next_double(), u2 = ws.next_double(), u3 = ws.next_double();
        a[i] = noise::normal_from_u(u1, u2);
        b[i] = noise::normal_from_u(u1, u3);
    }
    EXPECT_LT(std::abs(test::pearson(a, b)), 6.0 / std::sqrt(double(kLen)));
    const auto f = test::detect_stream_reuse({a, b});
    EXPECT_TRUE(f.reused);
    std::cout << "[ reuse ] shared radius: " << f.why << "\n";
}

TEST(ReuseDetector, FiresOnSubValueBeyondItsEightBits) {
    // The counter keeps 8 bits of `sub` (stream.hpp), so sub = 256 silently aliases sub = 0: a tree
    // deeper than 256 levels would reuse level 0's noise. The detector sees it; callers must keep
    // sub < 2^8 (docs/RANDOMNESS.md, limits).
    StreamId a = noise_id(1), b = noise_id(1);
    a.sub = 0;
    b.sub = 256;
    const auto f = test::detect_stream_reuse({laplace_vector(a), laplace_vector(b)});
    EXPECT_TRUE(f.reused);
}

TEST(ReuseDetector, FiresOnPartialReuse) {
    // Half of vector B's coordinates read vector A's stream (a wrong index on one code path).
    const auto a = laplace_vector(noise_id(1));
    auto b = laplace_vector(noise_id(2));
    for (std::uint32_t i = 0; i < kLen; i += 2) b[i] = a[i];
    const auto f = test::detect_stream_reuse({a, b});
    EXPECT_TRUE(f.reused);
}
