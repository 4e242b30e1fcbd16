#pragma once
// Tree aggregation: private prefix sums L~_t of a stream l_1..l_T of N-vectors.
//   TreeVariant::Binary  the standard binary mechanism (ALGORITHMS.md §1.4; Dwork-Naor-Pitassi-
//                        Rothblum 2010, Chan-Shi-Song 2011);
//   TreeVariant::Padded  AS17 Algorithm 2, TreeBasedAgg with padding (ALGORITHMS.md §1.5): every
//                        released prefix carries exactly k = ceil(log2 T) iid node draws.
//
// Labelling (§1.4). k = ceil_log2(T); leaves 0..2^k - 1, leaf s-1 holds l_s. Node (j, m), level
// j in 0..k, covers leaves [m 2^j, (m+1) 2^j). [0, t) is the disjoint union over the set bits j of
// t of the nodes (j, (t >> j) - 1): that set is S_t, |S_t| = popcount(t). For t = T = 2^k the only
// set bit is k and S_T = {(k, 0)} = {root}: the "root only" rule of §1.4/§1.5 is the same formula.
//
// Noise is regenerated, never stored (DESIGN.md §2): one node draw b_{j,m}[c] is a pure function of
//     StreamId{seed, stream, instance, Purpose::TreeNode, sub = j, round = m, element = c},
// and the AS17 padding of prefix t (fresh, used at that prefix only) of
//     StreamId{seed, stream, instance, Purpose::TreePadding, sub = 0, round = t, element = c}.
// Hence Z_t[c] = L~_t[c] - L_t[c] = sum_{(j,m) in S_t} b_{j,m}[c] + padding_t[c]     (prefix_noise)
// is the DEFINITION; tree_noise_step (O(1) amortised per round) and TreeAggregator (the O(hN)
// algorithm of §1.4) must and do (tests/mechanisms/test_tree_aggregation.cpp) equal it.
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
#include "kernels/noise/samplers.hpp"
#include "kernels/rng/stream.hpp"
#include "kernels/rng/uniform.hpp"

namespace dpr::mech {

/// Which tree (ALGORITHMS.md §1.4 standard binary mechanism / §1.5 AS17 padded).
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
};

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

/// The noise b_{j,m}[coord] of node (level, node): a pure function of (seed, stream, instance,
/// level, node, coord). Fixed forever (§1.4 "one independent draw per node").
DPR_HD inline double node_noise(const TreeNoise& tn, std::uint32_t level, std::uint64_t node,
                                std::uint32_t coord) {
    switch (tn.noise) {
    case NodeNoise::None:
        return 0.0;
    case NodeNoise::Constant:
        return tn.scale;
    default:
        break;
    }
    rng::StreamId id;
    id.seed = tn.seed;
    id.stream = tn.stream;
    id.instance = tn.instance;
    id.purpose = rng::Purpose::TreeNode;
    id.sub = level;
    id.round = static_cast<std::uint32_t>(node);
    id.element = coord;
    rng::WordStream src(id);
    return tn.noise == NodeNoise::Laplace ? noise::laplace(src, tn.scale) : noise::gaussian(src, tn.scale);
}

/// The AS17 padding of prefix t (0 <= t <= T) in coordinate coord: the sum of r_t fresh draws of the
/// node law (§1.5 step 3), drawn in one shot (Laplace: noise::laplace_sum, the Gamma difference of
/// DESIGN.md §5, exact in law; Gaussian: one N(0, r_t sigma^2)). Valid because padding draws are
/// used at this prefix only and never stored. 0 for the binary variant.
DPR_HD inline double padding_noise(const TreeNoise& tn, std::uint64_t t, std::uint32_t coord) {
    const std::uint32_t r = padding_count(tn.variant, t, tn.T);
    if (r == 0) return 0.0;
    switch (tn.noise) {
    case NodeNoise::None:
        return 0.0;
    case NodeNoise::Constant:
        return static_cast<double>(r) * tn.scale;
    default:
        break;
    }
    rng::StreamId id;
    id.seed = tn.seed;
    id.stream = tn.stream;
    id.instance = tn.instance;
    id.purpose = rng::Purpose::TreePadding;
    id.sub = 0;
    id.round = static_cast<std::uint32_t>(t);
    id.element = coord;
    rng::WordStream src(id);
    return tn.noise == NodeNoise::Laplace ? noise::laplace_sum(src, r, tn.scale)
                                          : noise::gaussian_sum(src, r, tn.scale);
}

/// The node part of Z_t: sum over S_t of node noise (no padding). 0 for t = 0.
DPR_HD inline double tree_part(const TreeNoise& tn, std::uint64_t t, std::uint32_t coord) {
    double z = 0.0;
    // Highest level first (any order gives the same value up to rounding).
    for (std::uint64_t rest = t; rest != 0;) {
        const std::uint32_t j = floor_log2(rest);
        z += node_noise(tn, j, prefix_node(t, j), coord);
        rest &= ~(std::uint64_t{1} << j);
    }
    return z;
}

/// Z_t[coord] = L~_t - L_t for 0 <= t <= T: THE DEFINITION, regenerated from the node ids.
/// t = 0: padded -> k fresh draws (L~_0 of TreeBasedAgg-Init, §1.5), binary -> 0.
DPR_HD inline double prefix_noise(const TreeNoise& tn, std::uint64_t t, std::uint32_t coord) {
    return tree_part(tn, t, coord) + padding_noise(tn, t, coord);
}

/// Incremental node part for the learners' hot loop: tree_part(t) from tree_part(t - 1), t >= 1.
/// With i = ctz(t): t - 1 = (t with bit i cleared) | (2^i - 1), and bits above i are shared, so
///     S_t = S_{t-1} \ {(j, ((t-1) >> j) - 1) : j < i}  u  {(i, (t >> i) - 1)}
/// (the node (i, (t>>i)-1) becomes complete at time t and the i completed lower blocks merge into it,
/// exactly the merge of the O(hN) algorithm in §1.4). Cost: 1 + i node draws, amortised <= 2 per
/// round. Equal to tree_part(t) up to floating-point rounding (each round adds and subtracts values
/// of size ~ scale; the drift is reset whenever t is a power of two, where S_t is one node).
DPR_HD inline double tree_noise_step(const TreeNoise& tn, std::uint64_t t, std::uint32_t coord,
                                     double tree_part_prev) {
    const std::uint32_t i = ctz64(t);
    const double added = node_noise(tn, i, prefix_node(t, i), coord);
    if ((t & (t - 1)) == 0) return added; // t = 2^i: S_t = {(i, 0)}, S_{t-1} lies entirely below i.
    double removed = 0.0;
    for (std::uint32_t j = 0; j < i; ++j) removed += node_noise(tn, j, prefix_node(t - 1, j), coord);
    return (tree_part_prev - removed) + added;
}

/// The O(h N) tree of ALGORITHMS.md §1.4 (with the §1.5 padding when tn.variant == Padded) for N
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
