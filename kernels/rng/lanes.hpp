#pragma once
// Philox and open uniforms for lane values (kernels/core/lanes.hpp): one call draws the blocks of W
// streams at once -- W coordinates of one instance (SIMD lanes over coordinates) or W instances
// (lanes over instances) -- word for word what rng::draw_block gives each stream alone (the
// known-answer vectors hold for every lane; tests/rng/test_philox.cpp, tests/simd/test_simd.cpp).
//
// Uniform streams (stream layout 2, docs/RANDOMNESS.md). The learners' noise takes its uniforms from an
// element's stream as follows: uniform j (j = 0, 1, 2, ...) has
//     hi word = word (j mod 4) of block j/4,        lo word = word (j mod 4) of block j/4 + kLoBlock,
//     float   u = (2k + 1) / 2^24,  k = hi >> 9                        (24-bit open uniform)
//     double  u = (2k + 1) / 2^53,  k = (hi << 20) | (lo >> 12)        (53-bit open uniform)
// so a float run and a double run of the same seed draw the same noise up to float rounding (the top
// 23 bits of k agree), at no extra cost for double (two words per 53-bit uniform either way). Block
// indices of uniform streams stay below kLoBlock = 2^15: 2^17 uniforms per element stream.
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/rng/philox.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::rng {

/// The first block index of the lo words of a uniform stream (see the header).
inline constexpr std::uint32_t kLoBlock = 1u << 15;
/// Blocks of hi words a uniform stream may use (uniforms 0 .. 4 kUniformBlocks - 1); its lo words are blocks
/// kLoBlock .. kLoBlock + kUniformBlocks - 1, so hi and lo never share a block and both fit the 16-bit field.
inline constexpr std::uint32_t kUniformBlocks = kLoBlock;
static_assert(kLoBlock + kUniformBlocks <= kMaxBlock, "lo blocks must fit the counter's 16-bit block field");

/// The address of W streams that differ only in their element and/or instance words.
template <class U>
struct LaneStream {
    std::uint32_t seed;
    std::uint32_t stream;
    U instance;
    Purpose purpose;
    std::uint32_t sub;
    std::uint32_t round;
    U element;

    DPR_HD DPR_FORCEINLINE Words4<U> block(std::uint32_t b) const {
        const std::uint32_t c3 =
            (static_cast<std::uint32_t>(purpose) << 24) | ((sub & 0xffu) << 16) | (b & 0xffffu);
        return philox_lanes<U>(element, U(round), instance, U(c3), seed, stream);
    }
};

/// Open 24-bit float uniform from a word (its top 23 bits): (2k + 1) / 2^24.
template <class U>
DPR_HD DPR_FORCEINLINE lane_rebind_t<U, float> u24_lanes(U w) {
    using F = lane_rebind_t<U, float>;
    const F k = convert<float>(bit_cast<std::int32_t>(w >> 9)); // exact: < 2^23
    return (k * F(2.0f) + F(1.0f)) * F(0x1.0p-24f);
}

/// Open 53-bit double uniform from a hi and a lo word: (2k + 1) / 2^53, k = (hi << 20) | (lo >> 12).
template <class U>
DPR_HD DPR_FORCEINLINE lane_rebind_t<U, double> u53_lanes(U hi, U lo) {
    using D = lane_rebind_t<U, double>;
    using Q = lane_rebind_t<U, std::uint64_t>;
    const Q k = (convert<std::uint64_t>(hi) << 20) | convert<std::uint64_t>(lo >> 12);
    // k < 2^52: its double is exact via the 2^52 exponent trick (no int64 -> double instruction needed).
    const D kd = bit_cast<double>(k | Q(0x4330000000000000ull)) - D(4503599627370496.0);
    return (kd * D(2.0) + D(1.0)) * D(0x1.0p-53);
}

/// Uniforms 4b .. 4b+3 of the lanes' uniform streams, in precision R.
template <class R, class U>
DPR_HD DPR_FORCEINLINE void uniforms4(const LaneStream<U>& s, std::uint32_t b, lane_rebind_t<U, R> out[4]) {
    const Words4<U> hi = s.block(b);
    if constexpr (sizeof(R) == 4) {
        for (int j = 0; j < 4; ++j) out[j] = u24_lanes(hi.w[j]);
    } else {
        const Words4<U> lo = s.block(b + kLoBlock);
        for (int j = 0; j < 4; ++j) out[j] = u53_lanes(hi.w[j], lo.w[j]);
    }
}

/// Uniform j of one (scalar) stream: the definition the lane readers implement.
template <class R>
DPR_HD inline R uniform_at(const StreamId& id, std::uint32_t j) {
    const LaneStream<std::uint32_t> s{id.seed, id.stream, id.instance, id.purpose, id.sub, id.round, id.element};
    R out[4];
    uniforms4<R>(s, j / 4, out);
    return out[j % 4];
}

/// The streams (purpose, sub, round) of a team's instance(s) at coordinate(s) `idx` (element =
/// team.element(idx)), one per lane: the address of every per-coordinate draw (tree nodes, Gumbel keys,
/// exploration directions).
template <class Team, class Idx>
DPR_HD DPR_FORCEINLINE LaneStream<typename Team::template lanes<std::uint32_t>>
coordinate_stream(const Team& team, Purpose purpose, std::uint32_t sub, std::uint32_t round, Idx idx) {
    using U = typename Team::template lanes<std::uint32_t>;
    const auto key = team.key();
    return {key.seed, key.stream, U(team.instance()), purpose, sub, round, team.element(idx)};
}

/// The stream (purpose, sub, round, element) of a team's instance(s), one per instance (a pack of instances on
/// instance lanes): the address of every per-instance draw.
template <class Team, class UI>
DPR_HD DPR_FORCEINLINE LaneStream<typename Team::template uni<std::uint32_t>>
instance_stream(const Team& team, Purpose purpose, std::uint32_t sub, std::uint64_t round, UI element) {
    using U = typename Team::template uni<std::uint32_t>;
    const auto key = team.key();
    return {key.seed, key.stream, U(team.instance()), purpose, sub, static_cast<std::uint32_t>(round), U(element)};
}

/// Uniform 0 (precision T) of the stream (purpose, sub, round, element) of a team's instance(s): one value per
/// instance. The per-instance draws of the learners and mechanisms (Exp3's arm, the sparse vector's Laplace noise)
/// all come from here.
template <class T, class Team, class UI>
DPR_HD DPR_FORCEINLINE typename Team::template uni<T> instance_uniform(const Team& team, Purpose purpose,
                                                                       std::uint32_t sub, std::uint64_t round,
                                                                       UI element) {
    typename Team::template uni<T> u[4];
    uniforms4<T>(instance_stream(team, purpose, sub, round, element), 0, u);
    return u[0];
}

} // namespace dpr::rng
