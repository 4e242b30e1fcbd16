#pragma once
// Philox4x32-10 (Salmon et al., SC'11) as a pure function (counter, key) -> 4 x 32 bits, from
// Random123, which serves g++ and nvcc from one header. It is bit-compatible with cuRAND's Philox;
// tests/rng/test_philox.cpp checks the published known-answer vectors on the host and
// tests/gpu/test_philox_gpu.cu checks the same vectors on a device.
#include <cstdint>

#include <Random123/philox.h>

#include "kernels/core/hd.hpp"

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
inline constexpr const char* kRngName = "Philox4x32-10 (Random123 1.14; counter-based, keyed by meaning)";

/// The bijection Philox4x32 with 10 rounds.
DPR_HD DPR_FORCEINLINE U32x4 philox4x32_10(U32x4 ctr, U32x2 key) {
    r123::Philox4x32_R<10> gen;
    r123::Philox4x32_R<10>::ctr_type c = {{ctr.v[0], ctr.v[1], ctr.v[2], ctr.v[3]}};
    r123::Philox4x32_R<10>::key_type k = {{key.v[0], key.v[1]}};
    const auto r = gen(c, k);
    return U32x4{{r[0], r[1], r[2], r[3]}};
}

} // namespace dpr::rng
