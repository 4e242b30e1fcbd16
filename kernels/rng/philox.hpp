#pragma once
// Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11) as a
// pure function (counter, key) -> 4 x 32 bits, written once over lane values (kernels/core/lanes.hpp): a
// scalar call is one stream's block, a SIMD call computes W streams' blocks at once. In-house rather than
// Random123's header so that the same code is the scalar, the SIMD and the GPU version (docs/ARCHITECTURE.md §2 allows
// either, checked against the known-answer vectors): tests/rng/test_philox.cpp checks the published vectors
// and Random123's own implementation on random counters, tests/gpu/test_rng_gpu.cu the vectors on a device.
// It is bit-compatible with Random123's and cuRAND's Philox4x32-10.
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"

namespace dpr::rng {

/// 128-bit Philox counter / output block.
struct U32x4 {
    std::uint32_t v[4];
};
/// 64-bit Philox key.
struct U32x2 {
    std::uint32_t v[2];
};

/// Identifier printed into run.json and `dpregret info`.
inline constexpr const char* kRngName = "Philox4x32-10 (in-house, Random123-compatible; counter-based, keyed by meaning)";

/// Four words per lane: one Philox4x32 block of every lane's counter.
template <class U>
struct Words4 {
    U w[4];
};

/// Philox4x32-10 of the counters (c0, c1, c2, c3) (lane by lane) under the key (k0, k1).
template <class U>
DPR_HD DPR_FORCEINLINE Words4<U> philox_lanes(U c0, U c1, U c2, U c3, std::uint32_t k0, std::uint32_t k1) {
    constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
    constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int r = 0; r < 10; ++r) {
        U hi0, hi1;
        const U lo0 = mulhilo32(c0, kM0, hi0);
        const U lo1 = mulhilo32(c2, kM1, hi1);
        const U n0 = hi1 ^ c1 ^ U(k0);
        const U n2 = hi0 ^ c3 ^ U(k1);
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
        k0 += kW0;
        k1 += kW1;
    }
    return Words4<U>{{c0, c1, c2, c3}};
}

/// The bijection Philox4x32 with 10 rounds, one block.
DPR_HD DPR_FORCEINLINE U32x4 philox4x32_10(U32x4 ctr, U32x2 key) {
    const Words4<std::uint32_t> w = philox_lanes<std::uint32_t>(ctr.v[0], ctr.v[1], ctr.v[2], ctr.v[3], key.v[0], key.v[1]);
    return U32x4{{w.w[0], w.w[1], w.w[2], w.w[3]}};
}

} // namespace dpr::rng
