// Open-interval uniforms (docs/ARCHITECTURE.md §2): the extreme bit patterns map inside (0, 1), and the
// conversions are what the header documents.
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "kernels/rng/uniform.hpp"

using namespace dpr::rng;

TEST(Uniform, DoubleExtremesAreStrictlyInside) {
    EXPECT_EQ(u01_open_53(std::uint64_t{0}), kU53Min);
    EXPECT_EQ(u01_open_53(~std::uint64_t{0}), kU53Max);
    EXPECT_GT(kU53Min, 0.0);
    EXPECT_LT(kU53Max, 1.0);
    EXPECT_TRUE(std::isfinite(std::log(u01_open_53(std::uint64_t{0}))));
    EXPECT_TRUE(std::isfinite(std::log1p(-u01_open_53(~std::uint64_t{0}))));
}

TEST(Uniform, FloatExtremesAreStrictlyInside) {
    EXPECT_EQ(u01_open_24(0u), kU24Min);
    EXPECT_EQ(u01_open_24(0xffffffffu), kU24Max);
    EXPECT_GT(kU24Min, 0.0f);
    EXPECT_LT(kU24Max, 1.0f);
    EXPECT_TRUE(std::isfinite(std::log(1.0f - u01_open_24(0xffffffffu))));
}

TEST(Uniform, DoubleGridIsSymmetricAndOdd) {
    // u(k) + u(2^52 - 1 - k) == 1 exactly: the grid is symmetric about 1/2, so 1 - u is again on it.
    for (std::uint64_t k : {0ull, 1ull, 12345ull, (1ull << 51), (1ull << 52) - 1}) {
        const double a = u01_open_53(k << 12);
        const double b = u01_open_53(((1ull << 52) - 1 - k) << 12);
        EXPECT_EQ(a + b, 1.0);
    }
}

TEST(Uniform, WordStreamAdvancesThroughBlocks) {
    StreamId id;
    id.seed = 1;
    id.purpose = Purpose::Test;
    WordStream ws(id);
    std::uint32_t words[12];
    for (auto& w : words) w = ws.next_u32();
    for (std::uint32_t b = 0; b < 3; ++b) {
        const U32x4 blk = draw_block(id, b);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(words[4 * b + i], blk.v[i]);
    }
}

TEST(Uniform_Stat, MeanAndVarianceOfOneMillionDraws) {
    // Mean 1/2 and variance 1/12; 6 standard errors at n = 1e6 (false alarm ~2e-9 each).
    StreamId id;
    id.seed = 2024;
    id.purpose = Purpose::Test;
    const int n = 1000000;
    double s = 0, s2 = 0;
    for (int i = 0; i < n / 2; ++i) {
        id.element = static_cast<std::uint32_t>(i);
        const U32x4 b = draw_block(id);
        for (double u : {u01_open_53(b.v[0], b.v[1]), u01_open_53(b.v[2], b.v[3])}) {
            s += u;
            s2 += u * u;
        }
    }
    const double mean = s / n, var = s2 / n - mean * mean;
    EXPECT_NEAR(mean, 0.5, 6 * std::sqrt(1.0 / 12 / n));
    EXPECT_NEAR(var, 1.0 / 12, 6 * std::sqrt(1.0 / 180 / n));
}
