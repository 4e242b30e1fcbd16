#pragma once
// The one noisy-prefix kernel of every learner built on tree aggregation (DP-FTRL experts / sphere / cube, DP-FTPL;
// AS17 Alg. 1 + 2, §3.2; docs/spec/as17.md §A1, §A2): in round t it gives, for the lanes of a team index, the noise
// Z_{t-1} = L~_{t-1} - L_{t-1} of the prefix the learner plays, and advances its per-coordinate cache to prefix t.
// Written once over the Team concept (kernels/core/team.hpp), so the same code runs on SIMD lanes (coordinates or
// instances) and on GPU threads.
//
// State per coordinate: the level cache S_0 .. S_k (k = tree depth, k + 1 rows of the precision R), where
// after prefix p, S_j = sum of the node noises of S_p at levels >= j, summed highest level first. In round t
// (c = ctz(t): the node (c, (t >> c) - 1) completes and every level below c empties):
//     Z_{t-1} = S_0 + padding_{t-1}
//     S_0 .. S_c <- S_{c+1} + b_{c, (t >> c) - 1}            (only if t < T: prefix t is played later)
// S_{c+1} holds the levels above c, shared by prefixes t - 1 and t, so S_0 is exactly tree_part(t) of the
// definition (kernels/mechanisms/tree_aggregation.hpp): the same nodes added in the same order, the same
// bits. One stream per coordinate and round (the node and the padding, stream layout 2), one node draw per
// round instead of the 1 + ctz(t) of a running sum that regenerates the nodes it removes, and no drift.
// Writes per round: c + 1 rows, 2 on average. Memory: (k + 1) d values of R per instance.
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/core/math.hpp"
#include "kernels/core/team.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"
#include "kernels/rng/lanes.hpp"

namespace dpr::mech {

/// What round t does with the tree, the same for every lane and instance.
struct TreeRound {
    std::uint32_t s;     ///< stream index t - 1 (the prefix played)
    std::uint32_t r;     ///< padding draws of prefix t - 1
    std::uint32_t c;     ///< ctz(t): rows 0..c take the new node
    bool advance;        ///< t < T: the node completing at t is drawn and cached
    bool node_noisy;     ///< advance, and the node gets its noise (false only for a planted bug of the audit suite)
    std::uint32_t n_node;     ///< uniforms of the node (before the padding's in the stream)
    std::uint32_t n_uniforms; ///< uniforms of the round's stream used: node + padding
};

DPR_HD inline TreeRound tree_round(const TreeNoise& tn, std::uint64_t t) {
    TreeRound tr;
    // Planted bug (audit suite only): every round reads round 1's stream, so equal nodes get equal noise.
    tr.s = tn.planted == kPlantReusedNoise ? 0u : static_cast<std::uint32_t>(t - 1);
    tr.r = padding_count(tn.variant, t - 1, tn.T);
    tr.c = ctz64(t);
    tr.advance = t < tn.T;
    // Planted bug (audit suite only): the leaves (level 0, c = 0) enter the cache without noise. Decided once per
    // round here, so the per-coordinate code below tests one flag, as it did before.
    tr.node_noisy = tr.advance && !(tn.planted == kPlantLeafWithoutNoise && tr.c == 0);
    tr.n_node = node_uniforms(tn.noise);
    tr.n_uniforms = tr.n_node + padding_uniforms(tn.noise, tr.r);
    return tr;
}

/// Rows of the level cache: k + 1 (k = tree depth); 0 with the noise off.
DPR_HD inline std::uint32_t level_rows(const TreeNoise& tn) {
    return tn.noise == NodeNoise::None ? 0u : tree_depth(tn.T) + 1;
}

/// Z_{t-1} for the lanes of `idx`, advancing the cache S (a view with level_rows(tn) rows) to prefix t.
/// Noise must be on. R = Team::real.
template <class Team, class View, class Idx>
DPR_HD DPR_FORCEINLINE typename Team::template lanes<typename Team::real>
noisy_prefix(const Team& team, const TreeNoise& tn, const TreeRound& tr, const View& S, Idx idx) {
    using R = typename Team::real;
    using V = typename Team::template lanes<R>;
    using U = typename Team::template lanes<std::uint32_t>;
    const RngKey key = team.key();
    const rng::LaneStream<U> stream{key.seed, key.stream, U(team.instance()), rng::Purpose::TreeStream, 0u, tr.s,
                                    team.element(idx)};
    const V b(static_cast<R>(tn.scale));
    V u[kMaxTreeUniforms];
    stream_uniforms<R, U>(stream, tr.n_uniforms, u);
    const V node = tr.node_noisy ? node_draw(tn.noise, u, b) : V(R(0));
    const V pad = padding_draw(tn.noise, u + tr.n_node, tr.r, b);
    const V z = team.load(S, idx) + pad; // row 0: the tree part of prefix t - 1
    if (tr.advance) {
        const V next = team.load(S.row(tr.c + 1), idx) + node;
        for (std::uint32_t j = 0; j <= tr.c; ++j) team.store(S.row(j), idx, next);
    }
    return z;
}

} // namespace dpr::mech
