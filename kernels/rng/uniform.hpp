#pragma once
// Uniforms on the open interval (0, 1): never 0, never 1 (docs/ARCHITECTURE.md §2), so log(u), log(1 - u) and
// log(-log(u)) are always finite.
//   double, "53-bit":  u = (2k + 1) / 2^53,  k = 52 random bits  ->  u in [2^-53, 1 - 2^-53]
//   float,  "24-bit":  u = (2k + 1) / 2^24,  k = 23 random bits  ->  u in [2^-24, 1 - 2^-24]
// Both grids are exactly representable (the odd numerator fits the significand), so no rounding
// can produce 0 or 1. Tail consequence: -ln(u) <= 53 ln 2 = 36.74 (double) and 24 ln 2 = 16.64
// (float); see docs/RANDOMNESS.md for what that means for each sampler.
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::rng {

/// Open-interval double from a 64-bit word (uses its top 52 bits).
DPR_HD DPR_FORCEINLINE double u01_open_53(std::uint64_t bits) {
    const std::uint64_t k = bits >> 12; // 52 bits
    return (static_cast<double>(k) * 2.0 + 1.0) * 0x1.0p-53;
}
DPR_HD DPR_FORCEINLINE double u01_open_53(std::uint32_t hi, std::uint32_t lo) {
    return u01_open_53((static_cast<std::uint64_t>(hi) << 32) | lo);
}
/// Open-interval float from a 32-bit word (uses its top 23 bits).
DPR_HD DPR_FORCEINLINE float u01_open_24(std::uint32_t bits) {
    const std::uint32_t k = bits >> 9; // 23 bits
    return (static_cast<float>(k) * 2.0f + 1.0f) * 0x1.0p-24f;
}

/// The smallest and largest values the two conversions can return.
inline constexpr double kU53Min = 0x1.0p-53;
inline constexpr double kU53Max = 1.0 - 0x1.0p-53;
inline constexpr float kU24Min = 0x1.0p-24f;
inline constexpr float kU24Max = 1.0f - 0x1.0p-24f;

/// Sequential reader over one element's stream: hands out 32-bit words, then advances to the next
/// block. Rejection samplers (Gamma) use it; fixed-count transforms read draw_block() directly.
class WordStream {
public:
    /// Draws block 0 at once: fixed-count samplers (Laplace: 2 words, Gaussian: 4) then inline to
    /// straight-line code without the refill branch. The words handed out are the same either way.
    DPR_HD explicit WordStream(const StreamId& id) : id_(id), block_(1), pos_(0), buf_(draw_block(id, 0)) {}
    DPR_HD DPR_FORCEINLINE std::uint32_t next_u32() {
        if (pos_ == 4) {
            buf_ = draw_block(id_, block_);
            // 2^16 blocks = 2^18 words per element; a Marsaglia-Tsang Gamma needs 6 words per try
            // and accepts with probability > 0.95, so wrap-around needs ~2^16 consecutive rejections.
            block_ = (block_ + 1) & 0xffffu;
            pos_ = 0;
        }
        return buf_.v[pos_++];
    }
    DPR_HD DPR_FORCEINLINE double next_double() {
        const std::uint32_t hi = next_u32();
        return u01_open_53(hi, next_u32());
    }
    DPR_HD float next_float() { return u01_open_24(next_u32()); }

private:
    StreamId id_;
    std::uint32_t block_;
    int pos_;
    U32x4 buf_{};
};

} // namespace dpr::rng
