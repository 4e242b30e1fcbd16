// Philox known-answer vectors, the kernels' own exp/log/cos and sampler draws on the device, checked against the
// host (docs/ARCHITECTURE.md §8: the serial CPU path is the oracle). Everything is bit-identical: Philox is integer
// arithmetic, and the transcendental functions are kernels/core/vmath.hpp's on both sides (no C library math,
// no FMA contraction: --fmad=false).
#include <cmath>
#include <vector>

#include "cuda/buffer.cuh"
#include "cuda/check.cuh"
#include "gpu/gpu_test.hpp"
#include "kernels/core/vmath.hpp"
#include "kernels/noise/samplers.hpp"
#include "kernels/rng/uniform.hpp"
#include "rng/philox_kat.hpp"

using namespace dpr;

__global__ void kat_kernel(const test::PhiloxKat* kat, int n, rng::U32x4* out) {
    const int i = threadIdx.x;
    if (i < n) out[i] = rng::philox4x32_10(kat[i].ctr, kat[i].key);
}

__global__ void laplace_kernel(double* out, std::uint32_t n, std::uint32_t seed, double b) {
    const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    rng::StreamId id;
    id.seed = seed;
    id.purpose = rng::Purpose::Test;
    id.element = i;
    rng::WordStream ws(id);
    out[i] = noise::laplace(ws, b);
}

__global__ void gamma_kernel(double* out, std::uint32_t n, std::uint32_t seed, double k) {
    const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    rng::StreamId id;
    id.seed = seed;
    id.purpose = rng::Purpose::Test;
    id.element = i;
    rng::WordStream ws(id);
    out[i] = noise::gamma(ws, k, 1.0);
}

__global__ void vmath_kernel(const double* x, double* out, std::uint32_t n) {
    const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float xf = static_cast<float>(x[i]);
    out[6 * i + 0] = vlog(x[i] + 1.0);
    out[6 * i + 1] = vexp(x[i] - 0.5);
    out[6 * i + 2] = vcos2pi(x[i]);
    out[6 * i + 3] = vlog(xf + 1.0f);
    out[6 * i + 4] = vexp(xf - 0.5f);
    out[6 * i + 5] = vcos2pi(xf);
}

TEST(GpuRng, VMathIsBitwiseTheHostsOnDevice) {
    DPR_REQUIRE_GPU();
    const std::uint32_t n = 1u << 16;
    std::vector<double> x(n);
    for (std::uint32_t i = 0; i < n; ++i) x[i] = (i + 0.5) / n;
    cuda::DeviceBuffer<double> d_x, d_out(6 * n);
    d_x.upload(x);
    vmath_kernel<<<(n + 255) / 256, 256>>>(d_x.data(), d_out.data(), n);
    DPR_CUDA_CHECK_LAUNCH();
    std::vector<double> out;
    d_out.download(out);
    std::uint32_t bad = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        const float xf = static_cast<float>(x[i]);
        const double want[6] = {vlog(x[i] + 1.0), vexp(x[i] - 0.5), vcos2pi(x[i]),
                                vlog(xf + 1.0f), vexp(xf - 0.5f), vcos2pi(xf)};
        for (int k = 0; k < 6; ++k) bad += out[6 * i + k] != want[k];
    }
    EXPECT_EQ(bad, 0u);
}

TEST(GpuRng, PhiloxKnownAnswerVectorsOnDevice) {
    DPR_REQUIRE_GPU();
    // The vectors travel to the device as data: a host constexpr array is not addressable there.
    cuda::DeviceBuffer<test::PhiloxKat> d_kat;
    d_kat.upload(test::kPhiloxKat, 3);
    cuda::DeviceBuffer<rng::U32x4> d_out(3);
    kat_kernel<<<1, 32>>>(d_kat.data(), 3, d_out.data());
    DPR_CUDA_CHECK_LAUNCH();
    std::vector<rng::U32x4> out;
    d_out.download(out);
    for (int k = 0; k < 3; ++k)
        for (int w = 0; w < 4; ++w) EXPECT_EQ(out[k].v[w], test::kPhiloxKat[k].expected.v[w]) << "vector " << k;
}

TEST(GpuRng, LaplaceAndGammaDrawsMatchTheHostOracle) {
    DPR_REQUIRE_GPU();
    const std::uint32_t n = 1u << 20, seed = 77;
    cuda::DeviceBuffer<double> d_lap(n), d_gam(n);
    laplace_kernel<<<(n + 255) / 256, 256>>>(d_lap.data(), n, seed, 2.0);
    DPR_CUDA_CHECK_LAUNCH();
    gamma_kernel<<<(n + 255) / 256, 256>>>(d_gam.data(), n, seed, 2.7);
    DPR_CUDA_CHECK_LAUNCH();
    std::vector<double> lap, gam;
    d_lap.download(lap);
    d_gam.download(gam);
    std::uint32_t bad_lap = 0, bad_gam = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        rng::StreamId id;
        id.seed = seed;
        id.purpose = rng::Purpose::Test;
        id.element = i;
        rng::WordStream a(id), b(id);
        const double hl = noise::laplace(a, 2.0), hg = noise::gamma(b, 2.7, 1.0);
        bad_lap += lap[i] != hl;
        bad_gam += gam[i] != hg;
    }
    EXPECT_EQ(bad_lap, 0u);
    EXPECT_EQ(bad_gam, 0u);
}
