#pragma once
// Philox4x32-10 known-answer vectors, shared by the host test and the GPU test so that both check
// exactly the same numbers (Random123's kat_vectors file, "philox4x32 10" lines).
#include "kernels/rng/philox.hpp"

namespace dpr::test {

struct PhiloxKat {
    dpr::rng::U32x4 ctr;
    dpr::rng::U32x2 key;
    dpr::rng::U32x4 expected;
};

inline constexpr PhiloxKat kPhiloxKat[3] = {
    {{{0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u}},
     {{0x00000000u, 0x00000000u}},
     {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
    {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
     {{0xffffffffu, 0xffffffffu}},
     {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
    {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
     {{0xa4093822u, 0x299f31d0u}},
     {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
};

} // namespace dpr::test
