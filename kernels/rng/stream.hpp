#pragma once
// Randomness keyed by what it means (docs/ARCHITECTURE.md §2). A draw is a pure function of
//     key     = (seed, stream)                       stream = 0 by default (common random numbers)
//     counter = (element, round, instance, purpose | sub | block)
// so it never depends on which thread, block, GPU, shard or rank computes it.
//
// Counter bit layout (Philox4x32 counter words c0..c3):
//     c0  [31:0]   element   index of the draw inside (instance, purpose, sub, round): a coordinate,
//                            a coordinate pair, an arm ...                          < 2^32
//     c1  [31:0]   round     the round t (tree streams: s, for round s + 1's fresh    < 2^32
//                            tree randomness; mechanisms/tree_aggregation.hpp)
//     c2  [31:0]   instance  learner instance inside a config point                 < 2^32
//     c3  [31:24]  purpose   what the draw is for (Purpose below)                   < 2^8
//         [23:16]  sub       purpose-specific (the adversaries' kSub* values;       < 2^8
//                            0 for every learner purpose of stream layout 2)
//         [15:0]   block     consecutive 128-bit blocks of one element's stream     < 2^16
//                            (uniform streams: hi words from block 0 up, lo words from
//                            block 2^15 up, rng/lanes.hpp; WordStream: 0, 1, 2 ...)
// Key words: k0 = seed (< 2^32), k1 = stream (0 unless a sweep asks for independent streams per
// config point, see host/config docs).
//
// Limits that follow: seeds, rounds, node indices and elements below 2^32 each; instance ids below
// 2^32 - 1 (0xFFFFFFFF is the shared loss sequence's, kReservedInstance); 256 purposes; 256 sub values;
// 65536 blocks (2^18 32-bit words) per element stream.
//   * The fields a configuration sets (seed, instances, rounds, elements = d) are checked at run time:
//     check_layout() reports a configuration that would overflow them; host code turns that into an error.
//   * sub and block values are chosen by the code, not by a configuration, so they are checked where they
//     are chosen, at compile time: kSubsUsed (adversaries/common.hpp), kMaxTreeUniforms
//     (mechanisms/tree_aggregation.hpp) and the uniform streams' block split (rng/lanes.hpp) each
//     static_assert that they fit; WordStream (rng/uniform.hpp) wraps its block index by design.
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/rng/philox.hpp"

namespace dpr::rng {

/// Version of the mapping from meanings to counters and uniforms (printed into run.json): 2 since the fast path
/// (uniform streams, Purpose::TreeStream; docs/RANDOMNESS.md). The same seed gives other draws under another
/// layout; laws are unchanged.
inline constexpr int kStreamLayout = 2;

/// What a draw is for. Values are part of the reproducibility contract: never renumber.
enum class Purpose : std::uint8_t {
    Adversary = 1,     ///< oblivious adversary's loss sequence
    TreeNode = 2,      ///< stream layout 1 only (retired): node noise b_{j,m} (sub = level j, round = m)
    TreePadding = 3,   ///< stream layout 1 only (retired): AS17 padding draws
    Sampling = 4,      ///< sampling an action from the learner's distribution
    SparseVector = 5,  ///< AboveThreshold threshold and query noise
    Exploration = 6,   ///< bandit exploration (uniform arm, SCRiBLe direction/sign)
    FeedbackNoise = 7, ///< AS17 Alg. 4 noise added to the observed loss (sub 0; lattice noise: sub 1 the discrete
                       ///< Laplace words, sub 2 the rounding word)
    // 8 was "Perturbation", reserved for one-shot FTPL noise and never drawn (DP-FTPL draws through the tree):
    // retired; the value is not to be reused.
    Exponential = 9,   ///< exponential mechanism draws
    Inspect = 10,      ///< `dpregret sample` (noise inspection)
    TreeStream = 11,   ///< stream layout 2: the fresh tree randomness of round s + 1 (round field = s):
                       ///< the node completing at s + 1, then the padding of prefix s (tree_aggregation.hpp)
    Lattice = 12,      ///< lattice noise of round s + 1 (round field = s; noise/discrete_laplace.hpp): sub 0 the
                       ///< discrete Laplace words of the node completing at s + 1, sub 1 the rounding of l_{s+1}
    Test = 255,        ///< reserved for tests
};

inline constexpr std::uint64_t kMaxElement = 1ull << 32;
inline constexpr std::uint64_t kMaxRound = 1ull << 32;
/// The instance id of the one loss sequence shared by all instances (adversaries::kSharedSequence): per-instance
/// ids stop below it, so a point has at most kMaxInstances instances.
inline constexpr std::uint32_t kReservedInstance = 0xFFFFFFFFu;
inline constexpr std::uint64_t kMaxInstances = kReservedInstance;
inline constexpr std::uint32_t kMaxSub = 1u << 8;
inline constexpr std::uint32_t kMaxBlock = 1u << 16;

/// The address of one element's stream of 128-bit blocks.
struct StreamId {
    std::uint32_t seed = 0;
    std::uint32_t stream = 0;
    std::uint32_t instance = 0;
    Purpose purpose = Purpose::Test;
    std::uint32_t sub = 0; ///< < 2^8
    std::uint32_t round = 0;
    std::uint32_t element = 0;
};

DPR_HD DPR_FORCEINLINE U32x2 make_key(const StreamId& id) { return U32x2{{id.seed, id.stream}}; }

DPR_HD DPR_FORCEINLINE U32x4 make_counter(const StreamId& id, std::uint32_t block) {
    return U32x4{{id.element, id.round, id.instance,
                  (static_cast<std::uint32_t>(id.purpose) << 24) | ((id.sub & 0xffu) << 16) |
                      (block & 0xffffu)}};
}

/// Block `block` (< 2^16) of the stream `id`: 4 independent uniform 32-bit words.
DPR_HD DPR_FORCEINLINE U32x4 draw_block(const StreamId& id, std::uint32_t block = 0) {
    return philox4x32_10(make_counter(id, block), make_key(id));
}

/// Why a configuration does not fit the counter layout (Ok if it does).
enum class LayoutError { Ok, Instances, Rounds, Elements, Seed };

/// Checks that `instances` instances (ids 0 .. instances - 1, never kReservedInstance) of `rounds` rounds with up
/// to `elements` elements per draw fit. sub and block are not configuration-dependent: see the header.
inline constexpr LayoutError check_layout(std::uint64_t seed, std::uint64_t instances, std::uint64_t rounds,
                                          std::uint64_t elements) {
    if (seed >= (1ull << 32)) return LayoutError::Seed;
    if (instances > kMaxInstances) return LayoutError::Instances;
    // rounds are 1-indexed up to T, and tree node indices are < T: T itself must fit.
    if (rounds >= kMaxRound) return LayoutError::Rounds;
    if (elements > kMaxElement) return LayoutError::Elements;
    return LayoutError::Ok;
}

} // namespace dpr::rng
