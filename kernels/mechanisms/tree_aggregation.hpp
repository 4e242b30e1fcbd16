#pragma once
// Tree aggregation: private prefix sums L~_t of a stream l_1..l_T of N-vectors.
//   TreeVariant::Binary  the standard binary mechanism (docs/spec/model.md §1.4; Dwork-Naor-Pitassi-
//                        Rothblum 2010, Chan-Shi-Song 2011);
//   TreeVariant::Padded  AS17 Algorithm 2, TreeBasedAgg with padding (docs/spec/model.md §1.5): every
//                        released prefix carries exactly k = ceil(log2 T) iid node draws.
//
// Labelling (§1.4). k = ceil_log2(T); leaves 0..2^k - 1, leaf s-1 holds l_s. Node (j, m), level
// j in 0..k, covers leaves [m 2^j, (m+1) 2^j). [0, t) is the disjoint union over the set bits j of
// t of the nodes (j, (t >> j) - 1): that set is S_t, |S_t| = popcount(t). For t = T = 2^k the only
// set bit is k and S_T = {(k, 0)} = {root}: the "root only" rule of §1.4/§1.5 is the same formula.
//
// Noise is regenerated, never stored (docs/ARCHITECTURE.md §2). Stream layout 2 (docs/RANDOMNESS.md): the fresh
// tree randomness that round t = s + 1 consumes is ONE uniform stream per coordinate c,
//     StreamId{seed, stream, instance, Purpose::TreeStream, sub = 0, round = s, element = c},
// (uniforms as in kernels/rng/lanes.hpp) holding, in order,
//   uniforms [0, n_node)        the node that completes when l_{s+1} is added: level j = ctz(s + 1), index
//                               m = ((s + 1) >> j) - 1  (the bijection t = (m + 1) 2^j between nodes and the
//                               rounds that complete them), n_node = 1 (Laplace, inverse CDF) or 2
//                               (Gaussian, Box-Muller);
//   uniforms [n_node, ...)      the AS17 padding of the released prefix L~_s (fresh, used at that prefix
//                               only): the sum of r_s node-law draws in one shot (noise/lane_noise.hpp).
// So a learner draws one stream per coordinate and round (s = t - 1: the node it adds after playing round
// t, and the padding of the prefix L~_{t-1} it plays), and
//     Z_t[c] = L~_t - L_t = sum_{(j,m) in S_t} b_{j,m}[c] + padding_t[c]                  (prefix_noise)
// is the DEFINITION, in precision R (float or double: the same uniforms, rounded; kernels/rng/lanes.hpp).
// The learners' level cache (noisy_prefix.hpp) and TreeAggregator (the O(hN) algorithm of §1.4) equal it
// (tests/mechanisms/test_tree_aggregation.cpp): bitwise for the cache, which sums the same nodes in the same
// order (highest level first).
//
// Preconditions (not checked here; host code validates): 1 <= T < 2^32 (the counter layout of
// kernels/rng/stream.hpp: rounds and node indices < 2^32), 0 <= t <= T, scale >= 0.
//
// T = 1: k = 0. L~_0 carries no noise term in either variant (padding count k - 0 = 0), and L~_1
// (released only with release_final, see calibration.hpp) carries the single node (0, 0) = root, so
// the padded tree carries max(k, |S_t|) = 1 draw there, not k = 0. This is the only case where
// |S_t| > k (for T >= 2, |S_t| <= k for every t <= T).
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/math.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/noise/discrete_gaussian.hpp"
#include "kernels/noise/discrete_laplace.hpp"
#include "kernels/noise/lane_noise.hpp"
#include "kernels/rng/lanes.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::mech {

/// Which tree (docs/spec/model.md §1.4 standard binary mechanism / §1.5 AS17 padded).
enum class TreeVariant : std::uint8_t { Binary, Padded };

/// Law of ONE node draw (per coordinate).
///   None      no noise (non-private twin; exact prefix sums)
///   Laplace   Lap(scale): density exp(-|z|/b)/(2b), variance 2 scale^2
///   Gaussian  N(0, scale^2)
///   Constant  every draw equals +scale exactly (deterministic; a test/debug hook that counts the
///             draws a prefix carries: with scale = 1, Z_t = |S_t| (+ padding count)). Not private.
enum class NodeNoise : std::uint8_t { None, Laplace, Gaussian, Constant };

/// Everything the tree noise of one learner instance depends on.
struct TreeNoise {
    TreeVariant variant = TreeVariant::Binary;
    NodeNoise noise = NodeNoise::None;
    double scale = 0.0;  ///< Laplace b or Gaussian sigma of ONE node draw (see calibration.hpp)
    std::uint64_t T = 1; ///< horizon, 1 <= T < 2^32
    std::uint32_t seed = 0;
    std::uint32_t stream = 0;
    std::uint32_t instance = 0;
    /// A planted bug of the audit suite (learners::Planted; docs/AUDITS.md), honoured by the fast path
    /// (tree_round / noisy_prefix) only: kPlantLeafWithoutNoise, kPlantReusedNoise; 0 in every real run.
    std::uint8_t planted = 0;
    /// Lattice noise (docs/spec/model.md §1.8, §1.11): every node draw comes from the words of the Lattice stream, not
    /// from the tree stream, whose uniforms then hold the padding alone: DLap(dlap.t) dlap.gamma for noise = Laplace
    /// (noise/discrete_laplace.hpp), the discrete Gaussian of scale dlap.t on the same lattice for noise = Gaussian
    /// (noise/discrete_gaussian.hpp, dlap its proposal, dgauss its acceptance).
    bool lattice = false;
    noise::DlapTable dlap;
    noise::DgaussTable dgauss;
};

inline constexpr std::uint8_t kPlantLeafWithoutNoise = 1;
inline constexpr std::uint8_t kPlantReusedNoise = 2;

/// k = ceil(log2 T): the tree depth (root at level k) and the AS17 per-prefix draw count.
DPR_HD constexpr inline std::uint32_t tree_depth(std::uint64_t T) {
    return ceil_log2(T);
}

/// |S_t| = number of nodes summed into the prefix t (0 <= t <= T): popcount(t). For t < 2^k these are
/// the dyadic blocks of [0, t); for t = T = 2^k it is 1 (the root only), which popcount also gives.
DPR_HD constexpr inline std::uint32_t released_nodes(std::uint64_t t, std::uint64_t /*T*/) {
    return popcount64(t);
}

/// Node index m of the level-j node of S_t (bit j of t must be set): (t >> j) - 1.
DPR_HD constexpr inline std::uint64_t prefix_node(std::uint64_t t, std::uint32_t j) {
    return (t >> j) - 1;
}

/// r_t = number of fresh padding draws of prefix t (§1.5 step 2: r_t = ceil(log2 T) - |S_t|);
/// 0 for the binary variant. Clamped at 0 (only T = 1, t = 1 would be negative; see the header).
DPR_HD constexpr inline std::uint32_t padding_count(TreeVariant v, std::uint64_t t, std::uint64_t T) {
    if (v != TreeVariant::Padded) return 0;
    const std::uint32_t k = tree_depth(T);
    const std::uint32_t s = released_nodes(t, T);
    return s >= k ? 0u : k - s;
}

/// Total number of iid node-law draws in Z_t: |S_t| + r_t (= k for every t in the padded tree,
/// T >= 2).
DPR_HD constexpr inline std::uint32_t prefix_draw_count(TreeVariant v, std::uint64_t t, std::uint64_t T) {
    return released_nodes(t, T) + padding_count(v, t, T);
}

/// Uniforms of one node draw: 1 for Laplace (inverse CDF), 2 for Gaussian (Box-Muller), 0 otherwise.
DPR_HD constexpr inline std::uint32_t node_uniforms(NodeNoise n) {
    return n == NodeNoise::Laplace ? 1u : (n == NodeNoise::Gaussian ? 2u : 0u);
}

/// Uniforms of one node draw in the tree stream: node_uniforms, 0 with lattice noise (its node comes from the Lattice
/// stream).
DPR_HD constexpr inline std::uint32_t tree_node_uniforms(const TreeNoise& tn) {
    return tn.lattice ? 0u : node_uniforms(tn.noise);
}

/// A lattice node draw (tn.lattice) in the lanes' precision of V from the lanes' Lattice stream `s`: discrete Laplace
/// or discrete Gaussian by tn.noise (see TreeNoise). Every lattice node of a tree goes through here.
template <class V, class U>
DPR_HD DPR_FORCEINLINE V lattice_node_draw(const TreeNoise& tn, const rng::LaneStream<U>& s) {
    return tn.noise == NodeNoise::Gaussian ? noise::dgauss_draw<V>(s, tn.dlap, tn.dgauss) : noise::dlap_draw<V>(s, tn.dlap);
}

/// The stream of round s + 1's fresh tree randomness in coordinate coord (see the header).
DPR_HD inline rng::StreamId tree_stream(const TreeNoise& tn, std::uint64_t s, std::uint32_t coord) {
    rng::StreamId id;
    id.seed = tn.seed;
    id.stream = tn.stream;
    id.instance = tn.instance;
    id.purpose = rng::Purpose::TreeStream;
    id.sub = 0;
    id.round = static_cast<std::uint32_t>(s);
    id.element = coord;
    return id;
}

/// One node-law draw from the uniforms u[0], u[1] (lanes of precision R, scale b).
template <class V>
DPR_HD DPR_FORCEINLINE V node_draw(NodeNoise law, const V* u, V b) {
    using R = lane_scalar_t<V>;
    if (law == NodeNoise::Laplace) return noise::laplace_from_u(u[0], b);
    if (law == NodeNoise::Gaussian) return b * noise::normal_from_u(u[0], u[1]);
    return law == NodeNoise::Constant ? b : V(R(0));
}

/// Uniforms of the padding of a prefix with r draws.
DPR_HD constexpr inline std::uint32_t padding_uniforms(NodeNoise law, std::uint32_t r) {
    return r == 0 ? 0u : (law == NodeNoise::Laplace ? noise::laplace_sum_uniforms(r) : (law == NodeNoise::Gaussian ? 2u : 0u));
}

/// The padding of a prefix: the sum of r node-law draws from the uniforms u[0 ..).
template <class V>
DPR_HD DPR_FORCEINLINE V padding_draw(NodeNoise law, const V* u, std::uint32_t r, V b) {
    using R = lane_scalar_t<V>;
    if (law == NodeNoise::Laplace) return noise::laplace_sum(u, r, b);
    if (law == NodeNoise::Gaussian) return noise::gaussian_sum(u, r, b);
    return law == NodeNoise::Constant ? V(static_cast<R>(r)) * b : V(R(0));
}

/// The most uniforms one round's tree stream uses: a Gaussian node (2) and a Laplace padding of up to 32
/// draws (r + 2 = 34), rounded up to whole blocks.
inline constexpr std::uint32_t kMaxTreeUniforms = 36;
static_assert(kMaxTreeUniforms % 4 == 0 && kMaxTreeUniforms / 4 <= rng::kUniformBlocks,
              "a round's tree stream must fit the hi blocks of a uniform stream (rng/lanes.hpp)");
// The largest padding has r = ceil(log2 T) <= 32 draws (T < 2^32, rng::kMaxRound).
static_assert(node_uniforms(NodeNoise::Laplace) + padding_uniforms(NodeNoise::Laplace, tree_depth(rng::kMaxRound - 1)) <=
                      kMaxTreeUniforms &&
                  node_uniforms(NodeNoise::Gaussian) + padding_uniforms(NodeNoise::Gaussian, 32) <= kMaxTreeUniforms,
              "a node and the largest padding must fit kMaxTreeUniforms");

/// Uniforms [0, n) of a stream into u[] (whole blocks: u must hold n rounded up to a multiple of 4).
template <class R, class U>
DPR_HD DPR_FORCEINLINE void stream_uniforms(const rng::LaneStream<U>& s, std::uint32_t n, lane_rebind_t<U, R>* u) {
    for (std::uint32_t b = 0; 4 * b < n; ++b) rng::uniforms4<R>(s, b, u + 4 * b);
}

/// One node-law draw, in precision R, from uniforms [0, n_node) of round s's tree stream with sub-index `sub`
/// (0: the stream above; 1 + j: Honaker's right children, below) in coordinate coord. Noise must be on.
template <class R>
DPR_HD inline R stream_node_draw(const TreeNoise& tn, std::uint64_t s, std::uint32_t sub, std::uint32_t coord) {
    const rng::StreamId id = tree_stream(tn, s, coord);
    if (tn.lattice) return lattice_node_draw<R>(tn, rng::LaneStream<std::uint32_t>{id.seed, id.stream, id.instance,
                                                                                    rng::Purpose::Lattice, 0u, id.round,
                                                                                    id.element});
    R u[4];
    stream_uniforms<R, std::uint32_t>(
        rng::LaneStream<std::uint32_t>{id.seed, id.stream, id.instance, id.purpose, sub, id.round, id.element},
        node_uniforms(tn.noise), u);
    return node_draw<R>(tn.noise, u, static_cast<R>(tn.scale));
}

/// The noise b_{j,m}[coord] of node (level, node), in precision R: a pure function of (seed, stream,
/// instance, level, node, coord). Fixed forever (§1.4 "one independent draw per node").
/// `origin`: the tree's leaf 0 is round origin + 1 of the run (a tree started later, e.g. one per phase of
/// AFKT23 Algorithm 4); its nodes are addressed by the absolute round that completes them, so trees started
/// at different rounds never share a draw. 0 (every tree of AS17's learners) is the layout above.
template <class R = double>
DPR_HD inline R node_noise(const TreeNoise& tn, std::uint32_t level, std::uint64_t node, std::uint32_t coord,
                           std::uint64_t origin = 0) {
    if (tn.noise == NodeNoise::None) return R(0);
    // completed when l_{origin+s+1} is added
    return stream_node_draw<R>(tn, origin + ((node + 1) << level) - 1, 0u, coord);
}

/// The AS17 padding of prefix t (0 <= t <= T) in coordinate coord, in precision R: the sum of r_t fresh
/// node-law draws (§1.5 step 3) in one shot. 0 for the binary variant.
template <class R = double>
DPR_HD inline R padding_noise(const TreeNoise& tn, std::uint64_t t, std::uint32_t coord) {
    const std::uint32_t r = padding_count(tn.variant, t, tn.T);
    if (r == 0 || tn.noise == NodeNoise::None) return R(0);
    const rng::StreamId id = tree_stream(tn, t, coord);
    const std::uint32_t n0 = tree_node_uniforms(tn);
    R u[kMaxTreeUniforms] = {}; // the definition, not a hot path: zeros keep the compiler's flow analysis quiet
    stream_uniforms<R, std::uint32_t>(
        rng::LaneStream<std::uint32_t>{id.seed, id.stream, id.instance, id.purpose, id.sub, id.round, id.element},
        n0 + padding_uniforms(tn.noise, r), u);
    return padding_draw<R>(tn.noise, u + n0, r, static_cast<R>(tn.scale));
}

/// The node part of Z_t: sum over S_t of node noise (no padding), highest level first. 0 for t = 0.
/// `origin` as node_noise: the prefix of the first t leaves of a tree started after round origin.
template <class R = double>
DPR_HD inline R tree_part(const TreeNoise& tn, std::uint64_t t, std::uint32_t coord, std::uint64_t origin = 0) {
    R z = R(0);
    for (std::uint64_t rest = t; rest != 0;) {
        const std::uint32_t j = floor_log2(rest);
        z = z + node_noise<R>(tn, j, prefix_node(t, j), coord, origin);
        rest &= ~(std::uint64_t{1} << j);
    }
    return z;
}

/// Z_t[coord] = L~_t - L_t for 0 <= t <= T: THE DEFINITION, regenerated from the node ids.
/// t = 0: padded -> k fresh draws (L~_0 of TreeBasedAgg-Init, §1.5), binary -> 0.
template <class R = double>
DPR_HD inline R prefix_noise(const TreeNoise& tn, std::uint64_t t, std::uint32_t coord) {
    return tree_part<R>(tn, t, coord) + padding_noise<R>(tn, t, coord);
}

// ---- Honaker's estimator (Honaker 2015; docs/MECHANISMS.md §3.4) ----------------------------------------------------
// The binary tree releases every node v_{j,m} = alpha_{j,m} + b_{j,m} (node noise of variance s^2 = 2 lambda^2 or
// sigma^2). A node's sum is also the sum of its two children, so the variance-optimal estimate of node (j, m) from
// its subtree is, bottom up,
//     e_{0,m} = v_{0,m},     e_{j,m} = a_j v_{j,m} + (1 - a_j) (e_{j-1,2m} + e_{j-1,2m+1}),   a_j = 1 / (2 - 2^-j),
// with Var(e_j) = a_j s^2 (induction: 1/Var(e_j) = 1/s^2 + 1/(2 Var(e_{j-1})) gives a_j s^2 = s^2 / (2 - 2^-j)),
// and the prefix P~_t = sum over S_t of e (disjoint subtrees: independent), Var(Z_t) = s^2 sum_{j in bits(t)} a_j.
// It is post-processing of the nodes of the binary tree (the guarantee is the binary tree's, calibration.hpp).
//
// Every node completing by round T - 1 is needed, not only the one at level ctz(t) that the binary mechanism draws
// in round t: the nodes (j, (t >> j) - 1), j < ctz(t), complete at t too (they are right children, consumed at
// once by their parents). Randomness: the node at level ctz(t) comes from the tree stream of round t (sub 0, as
// above: the binary tree's own draw); the node at level j < ctz(t) from the stream with sub = 1 + j, same round.

/// a_j of Honaker's estimate at level j, in precision R: the weight of the node's own value.
template <class R>
DPR_HD inline R honaker_weight(std::uint32_t j) {
    return static_cast<R>(1.0 / (2.0 - 1.0 / static_cast<double>(std::uint64_t{1} << j)));
}

/// The stream sub-index of node (j, m)'s draw: 0 when j is the lowest set bit of the round that completes it (m
/// even), else 1 + j.
DPR_HD constexpr inline std::uint32_t honaker_sub(std::uint32_t j, std::uint64_t m) { return (m & 1u) ? 1u + j : 0u; }

/// The raw node noise b_{j,m}[coord] of the full tree (every node, for Honaker's estimator), in precision R.
template <class R = double>
DPR_HD inline R full_tree_node_noise(const TreeNoise& tn, std::uint32_t j, std::uint64_t m, std::uint32_t coord) {
    if (tn.noise == NodeNoise::None) return R(0);
    return stream_node_draw<R>(tn, ((m + 1) << j) - 1, honaker_sub(j, m), coord); // completed when l_{s+1} is added
}

/// Honaker's estimate e_{j,m} of node (j, m)'s noise, in precision R (THE DEFINITION; O(2^j) draws).
template <class R = double>
DPR_HD inline R honaker_node(const TreeNoise& tn, std::uint32_t j, std::uint64_t m, std::uint32_t coord) {
    const R v = full_tree_node_noise<R>(tn, j, m, coord);
    if (j == 0) return v;
    const R a = honaker_weight<R>(j);
    const R children = honaker_node<R>(tn, j - 1, 2 * m, coord) + honaker_node<R>(tn, j - 1, 2 * m + 1, coord);
    return a * v + (R(1) - a) * children;
}

/// Z_t[coord] of the binary tree with Honaker's estimator: the estimates of the nodes of S_t, highest level first.
template <class R = double>
DPR_HD inline R honaker_prefix_noise(const TreeNoise& tn, std::uint64_t t, std::uint32_t coord) {
    R z = R(0);
    if (tn.noise == NodeNoise::None) return z;
    for (std::uint64_t rest = t; rest != 0;) {
        const std::uint32_t j = floor_log2(rest);
        z = z + honaker_node<R>(tn, j, prefix_node(t, j), coord);
        rest &= ~(std::uint64_t{1} << j);
    }
    return z;
}

/// Var(Z_t) / (variance of one node draw) for the binary tree with Honaker's estimator: sum_{j in bits(t)} a_j.
inline double honaker_prefix_variance(std::uint64_t t) {
    double v = 0.0;
    for (std::uint32_t j = 0; j < 64; ++j)
        if ((t >> j) & 1u) v += honaker_weight<double>(j);
    return v;
}

/// The O(h N) tree of docs/spec/model.md §1.4 (with the §1.5 padding when tn.variant == Padded) for N
/// coordinates: consumes exact l_1, l_2, ... and releases L~_1, L~_2, ... . State: the exact p-sums
/// alpha[j] and the noisy p-sums noisy[j] of the nodes currently in S_t, levels 0..MaxLevels-1
/// (MaxLevels = 33 covers every T < 2^32; a smaller MaxLevels requires MaxLevels > ceil_log2(T)).
/// Plain struct, no allocation: usable on a GPU thread.
/// The release equals sum_{(j,m) in S_t} (alpha_{j,m} + b_{j,m}) + padding_t = L_t + prefix_noise(t)
/// (tests check both "noise off -> exact L_t" and "= L_t + prefix_noise(t)").
template <std::uint32_t N, std::uint32_t MaxLevels = 33>
class TreeAggregator {
    static_assert(N >= 1, "at least one coordinate");
    static_assert(MaxLevels >= 1 && MaxLevels <= 64, "levels 0..63");

  public:
    DPR_HD explicit TreeAggregator(const TreeNoise& tn) : tn_(tn), t_(0) {
        for (std::uint32_t j = 0; j < MaxLevels; ++j)
            for (std::uint32_t c = 0; c < N; ++c) alpha_[j][c] = noisy_[j][c] = 0.0;
    }

    /// Number of inputs consumed so far (the t of the last release).
    DPR_HD std::uint64_t t() const { return t_; }
    DPR_HD const TreeNoise& noise() const { return tn_; }

    /// L~_0 (TreeBasedAgg-Init output): pure noise, k padding draws when padded, 0 when binary.
    DPR_HD void initial(double* out) const {
        for (std::uint32_t c = 0; c < N; ++c) out[c] = padding_noise(tn_, 0, c);
    }

    /// Consumes l_t (t = previous t + 1 <= T) and writes L~_t to out. Returns t.
    DPR_HD std::uint64_t add(const double* l, double* out) {
        const std::uint64_t t = ++t_;
        const std::uint32_t i = ctz64(t); // node (i, (t >> i) - 1) becomes complete
        for (std::uint32_t c = 0; c < N; ++c) {
            double a = l[c];
            // Merge the completed lower levels into level i. (Zeroing them is redundant -- level j < i
            // is rewritten at t + 2^j before it is read again -- but keeps the state equal to §1.4's.)
            for (std::uint32_t j = 0; j < i; ++j) {
                a += alpha_[j][c];
                alpha_[j][c] = 0.0;
                noisy_[j][c] = 0.0;
            }
            alpha_[i][c] = a;
            noisy_[i][c] = a + node_noise(tn_, i, prefix_node(t, i), c);
        }
        for (std::uint32_t c = 0; c < N; ++c) {
            double s = 0.0;
            for (std::uint32_t j = MaxLevels; j-- > 0;)
                if ((t >> j) & 1u) s += noisy_[j][c];
            out[c] = s + padding_noise(tn_, t, c);
        }
        return t;
    }

  private:
    TreeNoise tn_;
    std::uint64_t t_;
    double alpha_[MaxLevels][N];
    double noisy_[MaxLevels][N];
};

} // namespace dpr::mech
