// Philox4x32-10 known-answer vectors (Random123 kat_vectors, also in Salmon et al. SC'11) and the
// counter layout of kernels/rng/stream.hpp.
#include <gtest/gtest.h>

#include <random>

#include <Random123/philox.h>

#include "kernels/rng/philox.hpp"
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
    EXPECT_EQ(check_layout(1, (1ull << 32) + 1, 1, 1), LayoutError::Instances);
    EXPECT_EQ(check_layout(1, 1, 1ull << 32, 1), LayoutError::Rounds);
    EXPECT_EQ(check_layout(1, 1, 1, (1ull << 32) + 1), LayoutError::Elements);
}
