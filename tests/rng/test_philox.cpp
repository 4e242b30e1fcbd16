// Philox4x32-10 known-answer vectors (Random123 kat_vectors, also in Salmon et al. SC'11) and the
// counter layout of kernels/rng/stream.hpp.
#include <gtest/gtest.h>

#include <random>

#include <Random123/philox.h>

#include "kernels/rng/philox.hpp"
#include "kernels/adversaries/common.hpp"
#include "kernels/rng/lanes.hpp"
#include "kernels/rng/stream.hpp"
#include "rng/philox_kat.hpp"

using namespace dpr::rng;

TEST(Philox, KnownAnswerVectors) {
    for (const auto& kat : dpr::test::kPhiloxKat) {
        const U32x4 out = philox4x32_10(kat.ctr, kat.key);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(out.v[i], kat.expected.v[i]) << "vector word " << i;
    }
}

// The in-house Philox (kernels/rng/philox.hpp) is Random123's, word for word, on a million random counters and
// keys (Random123 1.14 from Debian is the reference implementation).
TEST(Philox, EqualsRandom123OnRandomCountersAndKeys) {
    std::mt19937_64 g(99);
    r123::Philox4x32_R<10> ref;
    std::size_t bad = 0;
    for (int i = 0; i < 1000000; ++i) {
        const U32x4 c{{static_cast<std::uint32_t>(g()), static_cast<std::uint32_t>(g()),
                            static_cast<std::uint32_t>(g()), static_cast<std::uint32_t>(g())}};
        const U32x2 k{{static_cast<std::uint32_t>(g()), static_cast<std::uint32_t>(g())}};
        const U32x4 ours = philox4x32_10(c, k);
        const auto theirs = ref(r123::Philox4x32_R<10>::ctr_type{{c.v[0], c.v[1], c.v[2], c.v[3]}},
                                r123::Philox4x32_R<10>::key_type{{k.v[0], k.v[1]}});
        for (int w = 0; w < 4; ++w) bad += ours.v[w] != theirs[w];
    }
    EXPECT_EQ(bad, 0u);
}

TEST(Philox, CounterLayoutPutsEachFieldInItsWord) {
    StreamId id;
    id.seed = 7;
    id.stream = 9;
    id.instance = 0xdeadbeef;
    id.purpose = Purpose::TreeNode;
    id.sub = 13;
    id.round = 0x12345678;
    id.element = 0xcafebabe;
    const U32x4 c = make_counter(id, 0xabcd);
    EXPECT_EQ(c.v[0], 0xcafebabeu);
    EXPECT_EQ(c.v[1], 0x12345678u);
    EXPECT_EQ(c.v[2], 0xdeadbeefu);
    EXPECT_EQ(c.v[3], (2u << 24) | (13u << 16) | 0xabcdu);
    const U32x2 k = make_key(id);
    EXPECT_EQ(k.v[0], 7u);
    EXPECT_EQ(k.v[1], 9u);
}

TEST(Philox, LayoutLimitsAreEnforced) {
    EXPECT_EQ(check_layout(1, 1000, 1 << 20, 1 << 20), LayoutError::Ok);
    EXPECT_EQ(check_layout(1ull << 32, 1, 1, 1), LayoutError::Seed);
    // ids 0 .. instances - 1 must stay below the shared sequence's id 0xFFFFFFFF
    EXPECT_EQ(check_layout(1, (1ull << 32) - 1, 1, 1), LayoutError::Ok);
    EXPECT_EQ(check_layout(1, 1ull << 32, 1, 1), LayoutError::Instances);
    EXPECT_EQ(check_layout(1, (1ull << 32) + 1, 1, 1), LayoutError::Instances);
    EXPECT_EQ(kReservedInstance, dpr::adversaries::kSharedSequence);
    EXPECT_EQ(check_layout(1, 1, 1ull << 32, 1), LayoutError::Rounds);
    EXPECT_EQ(check_layout(1, 1, 1, (1ull << 32) + 1), LayoutError::Elements);
}

// sub and block are chosen by the code (static_asserts where they are chosen, stream.hpp header): at their
// largest values they stay in their own bits, and the last uniform of a uniform stream reads a hi block and a
// lo block that are distinct and inside the 16-bit block field.
TEST(Philox, SubAndBlockAtTheirLimitsStayInTheirFields) {
    StreamId id;
    id.purpose = Purpose::TreeStream;
    id.sub = kMaxSub - 1;
    const U32x4 c = make_counter(id, kMaxBlock - 1);
    EXPECT_EQ(c.v[3] >> 24, static_cast<std::uint32_t>(Purpose::TreeStream));
    EXPECT_EQ((c.v[3] >> 16) & 0xffu, kMaxSub - 1);
    EXPECT_EQ(c.v[3] & 0xffffu, kMaxBlock - 1);
    EXPECT_LT(static_cast<std::uint32_t>(dpr::adversaries::kSubsUsed), kMaxSub);
    const std::uint32_t last_hi = kUniformBlocks - 1, last_lo = kLoBlock + kUniformBlocks - 1;
    EXPECT_LT(last_hi, kLoBlock);
    EXPECT_LE(last_lo, kMaxBlock - 1);
    // uniform_at of the last index is built from exactly those two blocks.
    const std::uint32_t j = 4 * kUniformBlocks - 1;
    const U32x4 hi = draw_block(id, last_hi), lo = draw_block(id, last_lo);
    const double expect = (static_cast<double>((static_cast<std::uint64_t>(hi.v[3]) << 20) | (lo.v[3] >> 12)) * 2.0 + 1.0) *
                          0x1.0p-53;
    EXPECT_EQ(uniform_at<double>(id, j), expect);
}
