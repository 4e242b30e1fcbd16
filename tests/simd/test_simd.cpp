// The lane vocabulary (kernels/core/lanes.hpp, vmath.hpp; host/simd/pack.hpp) on every instruction set this
// machine runs: a SIMD pack computes, lane for lane, the bits the scalar code computes (exp, log, cos(2 pi u),
// the Laplace transform, Philox and the open uniforms) -- what makes results independent of the ISA and lets
// the CPU's instance lanes equal a GPU thread per instance. And the kernels' own exp/log/cos against the C
// library: <= 1 ulp (log, exp) on their domains, edge values as documented in vmath.hpp.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "host/cpu/cpu_isa.hpp"
#include "host/simd/pack.hpp"
#include "kernels/core/vmath.hpp"
#include "kernels/noise/lane_noise.hpp"
#include "kernels/rng/lanes.hpp"
#include "kernels/rng/philox.hpp"
#include "kernels/rng/uniform.hpp"
#include "rng/philox_kat.hpp"

using namespace dpr;

namespace {

template <class T>
bool same_bits(T a, T b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

/// |a - ref| in units in the last place of ref.
template <class T>
double ulps(T a, T ref) {
    if (same_bits(a, ref)) return 0.0;
    const T up = std::nextafter(std::fabs(ref), std::numeric_limits<T>::infinity());
    return std::fabs(static_cast<double>(a) - static_cast<double>(ref)) /
           (static_cast<double>(up) - std::fabs(static_cast<double>(ref)));
}

struct Inputs {
    std::vector<double> x, y, u;
    std::vector<std::uint32_t> c0;
    explicit Inputs(std::size_t n) : x(n), y(n), u(n), c0(n) {
        std::mt19937_64 g(2024);
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(g), static_cast<int>(g() % 2000) - 1000);
            y[i] = std::uniform_real_distribution<double>(-700.0, 700.0)(g);
            u[i] = std::uniform_real_distribution<double>(0.0, 1.0)(g);
            c0[i] = static_cast<std::uint32_t>(g());
        }
        // edges: the extreme open uniforms, exp's overflow / underflow / zero, log of subnormals and of 1
        x[0] = 5e-324;
        x[1] = 1.0;
        x[2] = std::numeric_limits<double>::max();
        y[0] = 709.8;
        y[1] = -708.5;
        y[2] = 0.0;
        u[0] = 0x1.0p-53;
        u[1] = 1.0 - 0x1.0p-53;
        u[2] = 0.5;
    }
};

} // namespace

TEST(SimdLanes, EveryIsaComputesTheScalarBits) {
    constexpr std::size_t n = 4096;
    const Inputs in(n);
    int tested = 0;
    for (cpu::Isa isa : {cpu::Isa::Avx512, cpu::Isa::Avx2, cpu::Isa::Generic}) {
        if (!cpu::isa_supported(isa)) continue;
        ++tested;
        SCOPED_TRACE(cpu::isa_name(isa));
        std::vector<double> od(4 * n), u53(n);
        std::vector<float> of(4 * n), u24(n);
        std::vector<std::uint32_t> words(4 * n);
        cpu::LaneSelfTest t;
        t.n = n;
        t.x = in.x.data();
        t.y = in.y.data();
        t.u = in.u.data();
        t.c0 = in.c0.data();
        t.out_d = od.data();
        t.out_f = of.data();
        t.words = words.data();
        t.u53 = u53.data();
        t.u24 = u24.data();
        cpu::lane_selftest(isa, t);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double x = in.x[i], y = in.y[i], u = in.u[i];
            const float xf = static_cast<float>(x), yf = static_cast<float>(y), uf = static_cast<float>(u);
            bad += !same_bits(od[i], vlog(x)) + !same_bits(od[n + i], vexp(y)) + !same_bits(od[2 * n + i], vcos2pi(u)) +
                   !same_bits(od[3 * n + i], noise::laplace_from_u(u, 1.5));
            bad += !same_bits(of[i], vlog(xf)) + !same_bits(of[n + i], vexp(yf)) + !same_bits(of[2 * n + i], vcos2pi(uf)) +
                   !same_bits(of[3 * n + i], noise::laplace_from_u(uf, 1.5f));
            const rng::Words4<std::uint32_t> w =
                rng::philox_lanes<std::uint32_t>(in.c0[i], 17u, 42u, 0x0B000000u, 1234u, 5u);
            for (int j = 0; j < 4; ++j) bad += words[4 * i + j] != w.w[j];
            bad += !same_bits(u53[i], rng::u53_lanes(w.w[0], w.w[1]));
            bad += !same_bits(u24[i], rng::u24_lanes(w.w[0]));
        }
        EXPECT_EQ(bad, 0u);
    }
    EXPECT_GE(tested, 1);
}

TEST(SimdLanes, MetaTheComparisonSeesOneUlp) {
    // The bitwise comparison above is not vacuous: the scalar and a value one ulp away differ.
    const double a = vlog(3.0);
    EXPECT_FALSE(same_bits(a, std::nextafter(a, 2.0)));
}

TEST(VMath, LogAndExpWithinOneUlpOfTheCLibrary) {
    std::mt19937_64 g(7);
    double worst_log = 0, worst_exp = 0, worst_logf = 0, worst_expf = 0, worst_cos = 0, worst_cosf = 0;
    for (int i = 0; i < 1000000; ++i) {
        const double x = std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(g), static_cast<int>(g() % 2040) - 1020);
        const double y = std::uniform_real_distribution<double>(-708.0, 709.0)(g);
        const double u = std::uniform_real_distribution<double>(0.0, 1.0)(g);
        const float xf = std::ldexp(std::uniform_real_distribution<float>(0.5f, 1.0f)(g), static_cast<int>(g() % 250) - 125);
        const float yf = std::uniform_real_distribution<float>(-85.0f, 88.0f)(g);
        worst_log = std::max(worst_log, ulps(vlog(x), std::log(x)));
        worst_exp = std::max(worst_exp, ulps(vexp(y), std::exp(y)));
        worst_logf = std::max(worst_logf, ulps(vlog(xf), static_cast<float>(std::log(static_cast<double>(xf)))));
        worst_expf = std::max(worst_expf, ulps(vexp(yf), static_cast<float>(std::exp(static_cast<double>(yf)))));
        worst_cos = std::max(worst_cos, std::fabs(vcos2pi(u) - std::cos(2.0 * M_PI * u)));
        worst_cosf = std::max(worst_cosf, std::fabs(static_cast<double>(vcos2pi(static_cast<float>(u))) -
                                                    std::cos(2.0 * M_PI * static_cast<double>(static_cast<float>(u)))));
    }
    RecordProperty("worst_ulp_log", std::to_string(worst_log));
    RecordProperty("worst_ulp_exp", std::to_string(worst_exp));
    EXPECT_LE(worst_log, 1.0);
    EXPECT_LE(worst_exp, 1.0);
    EXPECT_LE(worst_logf, 1.0);
    EXPECT_LE(worst_expf, 1.0);
    EXPECT_LE(worst_cos, 8e-16);  // absolute: the argument 2 pi u is rounded once
    EXPECT_LE(worst_cosf, 4e-7);
}

TEST(VMath, EdgeValuesAreTheDocumentedOnes) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(vlog(0.0), -inf);
    EXPECT_EQ(vlog(inf), inf);
    EXPECT_TRUE(std::isnan(vlog(-1.0)));
    EXPECT_TRUE(std::isnan(vlog(std::nan(""))));
    EXPECT_EQ(vlog(1.0), 0.0);
    EXPECT_NEAR(vlog(5e-324), std::log(5e-324), 1e-13); // subnormal
    EXPECT_EQ(vexp(710.0), inf);
    EXPECT_EQ(vexp(-709.0), 0.0); // flushed below the normal range
    EXPECT_EQ(vexp(0.0), 1.0);
    EXPECT_TRUE(std::isnan(vexp(std::nan(""))));
    EXPECT_EQ(vexp(-inf), 0.0);
    EXPECT_EQ(vexp(inf), inf);
    EXPECT_EQ(vlog(0.0f), -std::numeric_limits<float>::infinity());
    EXPECT_EQ(vexp(89.0f), std::numeric_limits<float>::infinity());
    EXPECT_EQ(vexp(-88.0f), 0.0f);
    EXPECT_NEAR(vlog(1e-40f), std::log(1e-40), 1e-5); // float subnormal
    // The extreme open uniforms give finite Laplace draws at the documented maxima (docs/RANDOMNESS.md).
    EXPECT_NEAR(noise::laplace_from_u(0x1.0p-53, 1.0), -52 * std::log(2.0), 1e-13);
    EXPECT_NEAR(noise::laplace_from_u(1.0 - 0x1.0p-53, 1.0), 52 * std::log(2.0), 1e-13);
    EXPECT_NEAR(noise::laplace_from_u(0x1.0p-24f, 1.0f), -23 * std::log(2.0), 1e-5);
}

TEST(PhiloxLanes, KnownAnswerVectorsForEveryLane) {
    // Random123's vectors through the scalar function and through a 16-lane pack (this file's ISA), each
    // vector's counter in every lane position in turn, the other lanes holding other counters.
    using P = simd::Pack<std::uint32_t, 16>;
    for (const auto& k : test::kPhiloxKat) {
        const rng::U32x4 r = rng::philox4x32_10(k.ctr, k.key);
        for (int w = 0; w < 4; ++w) EXPECT_EQ(r.v[w], k.expected.v[w]);
        for (int lane = 0; lane < 16; ++lane) {
            P c[4];
            for (int w = 0; w < 4; ++w) {
                alignas(64) std::uint32_t v[16];
                for (int l = 0; l < 16; ++l) v[l] = l == lane ? k.ctr.v[w] : k.ctr.v[w] ^ (0x9E3779B9u * (l + 1));
                c[w] = P::load(v);
            }
            const rng::Words4<P> out = rng::philox_lanes<P>(c[0], c[1], c[2], c[3], k.key.v[0], k.key.v[1]);
            for (int w = 0; w < 4; ++w) EXPECT_EQ(out.w[w][lane], k.expected.v[w]) << "lane " << lane << " word " << w;
        }
    }
}

TEST(UniformStreams, FloatAndDoubleShareTheirTopBits) {
    // Stream layout 2 (kernels/rng/lanes.hpp): uniform j of a stream in float and in double agree to 2^-24,
    // and hi/lo come from the documented blocks.
    rng::StreamId id;
    id.seed = 3;
    id.instance = 9;
    id.purpose = rng::Purpose::TreeStream;
    id.round = 77;
    id.element = 5;
    for (std::uint32_t j = 0; j < 40; ++j) {
        const double d = rng::uniform_at<double>(id, j);
        const float f = rng::uniform_at<float>(id, j);
        EXPECT_LT(std::fabs(d - static_cast<double>(f)), 0x1.0p-24) << j;
        const rng::U32x4 hi = rng::draw_block(id, j / 4), lo = rng::draw_block(id, j / 4 + rng::kLoBlock);
        EXPECT_EQ(d, rng::u01_open_53(hi.v[j % 4], lo.v[j % 4])) << j;
        EXPECT_EQ(f, rng::u01_open_24(hi.v[j % 4])) << j;
    }
}
