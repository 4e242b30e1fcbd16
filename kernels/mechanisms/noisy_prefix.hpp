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
#include "kernels/mechanisms/blt.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/lattice.hpp"
#include "kernels/mechanisms/lattice_gaussian.hpp"
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
    tr.n_node = tree_node_uniforms(tn);
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
    const auto stream = rng::coordinate_stream(team, rng::Purpose::TreeStream, 0u, tr.s, idx);
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

/// What a learner plays from: the released prefix value (in R) and the noise it carries (for diagnostics).
template <class V>
struct Released {
    V value;
    V noise;
};

/// Lattice noise (docs/spec/model.md §1.8, §1.11), streamed: the release L~_{t-1} for the lanes of `idx`, from the
/// learner's exact lattice sum L (double lanes, a multiple of Gamma: PrefixMechanism::accumulate), advancing the cache
/// S (as noisy_prefix's, holding multiples of Gamma below 2^22 Gamma: exact in float) to prefix t. The node release
/// L + S_0 is formed exactly in double; its conversion to R and the padding (fresh continuous noise, uniforms [0, ...)
/// of the tree stream) are post-processing. The node (discrete Laplace or discrete Gaussian, lattice_node_draw) comes
/// from the Lattice stream (sub 0) of the round.
template <class Team, class View, class Idx, class D>
DPR_HD DPR_FORCEINLINE Released<typename Team::template lanes<typename Team::real>>
lattice_prefix(const Team& team, const TreeNoise& tn, const TreeRound& tr, const View& S, Idx idx, D L) {
    using R = typename Team::real;
    using V = typename Team::template lanes<R>;
    using U = typename Team::template lanes<std::uint32_t>;
    const V b(static_cast<R>(tn.scale));
    V u[kMaxTreeUniforms];
    for (V& x : u) x = V(R(0)); // what the padding reads is filled below (the compiler cannot see that)
    stream_uniforms<R, U>(rng::coordinate_stream(team, rng::Purpose::TreeStream, 0u, tr.s, idx), tr.n_uniforms, u);
    const V pad = padding_draw(tn.noise, u, tr.r, b);
    const V tree = team.load(S, idx); // row 0: the tree part of prefix t - 1, a multiple of Gamma
    const V exact = convert<R>(L + convert<double>(tree));
    if (tr.advance) {
        const V node = tr.node_noisy
                           ? lattice_node_draw<V>(tn, rng::coordinate_stream(team, rng::Purpose::Lattice, 0u, tr.s, idx))
                           : V(R(0));
        const V next = team.load(S.row(tr.c + 1), idx) + node;
        for (std::uint32_t j = 0; j <= tr.c; ++j) team.store(S.row(j), idx, next);
    }
    return {exact + pad, tree + pad};
}

/// The binary tree with Honaker's estimator (tree_aggregation.hpp honaker_node; docs/MECHANISMS.md §3.4), streamed:
/// Z_{t-1} for the lanes of `idx`, advancing the state to prefix t. State per coordinate: the level cache S (k + 1
/// rows, as above, of node ESTIMATES) and E (k + 1 rows): E_j = the estimate of the last node completed at level j
/// that is a left child (the one at level ctz(t) in round t). Round t (c = ctz(t), t < T) forms the chain of nodes
/// completing at t bottom up, e_0 = v_0, e_j = a_j v_j + (1 - a_j) (E_{j-1} + e_{j-1}), stores E_c = e_c and
/// S_0 .. S_c <- S_{c+1} + e_c: the same operations in the same order as the definition. c + 1 node draws.
template <class Team, class View, class Idx>
DPR_HD DPR_CPU_CALL typename Team::template lanes<typename Team::real>
honaker_prefix(const Team& team, const TreeNoise& tn, const TreeRound& tr, const View& S, const View& E, Idx idx) {
    using R = typename Team::real;
    using V = typename Team::template lanes<R>;
    using U = typename Team::template lanes<std::uint32_t>;
    const V z = team.load(S, idx); // row 0: the estimates of the nodes of prefix t - 1
    if (tr.advance) {
        const V b(static_cast<R>(tn.scale));
        V e = V(R(0));
        for (std::uint32_t j = 0; j <= tr.c; ++j) {
            const auto stream =
                rng::coordinate_stream(team, rng::Purpose::TreeStream, j == tr.c ? 0u : 1u + j, tr.s, idx);
            V u[4];
            stream_uniforms<R, U>(stream, tr.n_node, u);
            // Planted bug (audit suite only): the leaves without noise.
            const V v = j == 0 && tn.planted == kPlantLeafWithoutNoise ? V(R(0)) : node_draw(tn.noise, u, b);
            if (j == 0) {
                e = v;
            } else {
                const V a(honaker_weight<R>(j));
                e = a * v + (V(R(1)) - a) * (team.load(E.row(j - 1), idx) + e);
            }
        }
        team.store(E.row(tr.c), idx, e);
        const V next = team.load(S.row(tr.c + 1), idx) + e;
        for (std::uint32_t j = 0; j <= tr.c; ++j) team.store(S.row(j), idx, next);
    }
    return z;
}

/// BLT noise (blt.hpp; docs/MECHANISMS.md §3.5), streamed: Z_{t-1} = N_{t-1} for the lanes of `idx`, advancing the
/// state to prefix t. State per coordinate: the B buffers (rows 0 .. B-1) and N (row B). Round t (t < T) draws one
/// node-law value g (round t - 1, sub 0: the draw of the tree's leaf t - 1) and forms
/// x = g + sum_b omega'_b buf_b, buf_b <- theta'_b buf_b + g, N <- N + x: the same operations in the same order as
/// blt_prefix_noise.
template <class Team, class View, class Idx>
DPR_HD DPR_CPU_CALL typename Team::template lanes<typename Team::real>
blt_prefix(const Team& team, const TreeNoise& tn, const TreeRound& tr, const BltNoise& m, const View& S, Idx idx) {
    using R = typename Team::real;
    using V = typename Team::template lanes<R>;
    using U = typename Team::template lanes<std::uint32_t>;
    const V z = team.load(S.row(m.buffers), idx);
    if (tr.advance) {
        const auto stream = rng::coordinate_stream(team, rng::Purpose::TreeStream, 0u, tr.s, idx);
        V u[4];
        stream_uniforms<R, U>(stream, tr.n_node, u);
        // Planted bug (audit suite only, kPlantLeafWithoutNoise): the odd steps draw nothing.
        const V g = tr.node_noisy ? node_draw(tn.noise, u, V(static_cast<R>(tn.scale))) : V(R(0));
        V x = g;
        for (std::uint32_t b = 0; b < m.buffers; ++b) {
            const V buf = team.load(S.row(b), idx);
            x = x + V(static_cast<R>(m.inv_omega[b])) * buf;
            team.store(S.row(b), idx, V(static_cast<R>(1.0 - m.inv_mu[b])) * buf + g);
        }
        team.store(S.row(m.buffers), idx, z + x);
    }
    return z;
}

/// THE SEAM between a learner and the noise of the private prefix sums it releases (docs/MECHANISMS.md §3.3): a learner
/// that plays from noisy prefix sums P~_0 .. P~_{T-1} of a stream v_1 .. v_T of d-vectors (AS17's loss sums, ENV21's
/// batch gradient estimates, AFKT23 Alg. 3's gradients) holds one PrefixMechanism in its Params and uses it for all
/// of the noise: `rows()` rows of d values of its precision in its workspace, `init()` once, and in round t `step(t)`
/// then `next()` per coordinate (the noise Z_{t-1} = P~_{t-1} - P_{t-1} of the prefix it plays; the state advances
/// to prefix t); `peek()` the same noise without advancing (play(), one-lane teams), `regenerate()` it from the
/// definition (serial learners that keep no state), `guarantee()` the privacy of the release for the learner's
/// per-step sensitivity. The learner computes the scale (its calibration) and never touches the noise's state.
/// Implemented by tree aggregation (padded or binary, with or without Honaker's estimator; the level cache above, the
/// definition in tree_aggregation.hpp) and by BLT noise (blt.hpp); a new mechanism is a new implementation here,
/// and no learner changes.
struct PrefixMechanism {
    TreeVariant tree = TreeVariant::Padded;
    bool honaker = false;     ///< the binary tree (tree = Binary) with Honaker's estimator
    bool blt = false;         ///< BLT noise (tree = Binary, no padding; Gaussian only): blt_noise's C^-1
    BltNoise blt_noise;       ///< the BLT (blt.hpp) when blt
    NodeNoise noise = NodeNoise::None;
    double scale = 0.0;       ///< per-node Laplace b or Gaussian sigma (0 with the noise off)
    std::uint64_t T = 1;      ///< steps of the stream: the horizon, or ENV21's number of batches
    std::uint8_t planted = 0; ///< a planted bug of the audit suite (kPlant*; learners::plant_prefix); 0 in real runs
    /// Lattice noise (binary or padded tree; docs/spec/model.md §1.8, §1.11): the nodes are DLap (noise = Laplace) or
    /// the discrete Gaussian (noise = Gaussian) on dlap's lattice, and the learner's sums are rounded onto it at random
    /// (accumulate), so every node release is exact in float and double. `coords`: the coordinates of one step's
    /// vector (the accounting's d); `coord_change`: the most one coordinate of a step's vector moves between
    /// neighbours (the Gaussian accounting's Delta_inf).
    bool lattice = false;
    noise::DlapTable dlap;
    noise::DgaussTable dgauss;
    std::uint32_t coords = 0;
    double coord_change = 0.0;

    /// What round t does (the same for every lane and instance).
    struct Step {
        TreeNoise tn;
        TreeRound tr;
    };

    DPR_HD bool on() const { return noise != NodeNoise::None; }

    DPR_HD TreeNoise tree_noise(std::uint32_t seed = 0, std::uint32_t stream = 0, std::uint32_t instance = 0) const {
        return TreeNoise{tree, noise, scale, T, seed, stream, instance, planted, lattice, dlap, dgauss};
    }

    /// Rows of d values (the run's precision) the mechanism keeps per instance: the level cache (and, for Honaker,
    /// as many rows of left-child estimates); 0 with the noise off.
    DPR_HD std::uint32_t rows() const {
        if (!on()) return 0u;
        if (blt) return blt_noise.buffers + 1u;
        return (honaker ? 2u : 1u) * level_rows(tree_noise());
    }

    /// The state of prefix 0 (the tree part of Z_0 is empty: all rows zero), for the d coordinates of `S`.
    template <class Team, class View>
    DPR_HD void init(const Team& team, const View& S, std::uint32_t d) const {
        using V = typename Team::template lanes<typename Team::real>;
        const std::uint32_t n = rows();
        if (n == 0) return;
        team.for_each(d, [&](auto i) {
            for (std::uint32_t j = 0; j < n; ++j) team.store(S.row(j), i, V(0));
        });
    }

    DPR_HD Step step(std::uint64_t t) const {
        const TreeNoise tn = tree_noise();
        return Step{tn, tree_round(tn, t)};
    }

    /// Z_{t-1} for the lanes of `idx` (noise on; `st` = step(t)), advancing the state to prefix t.
    template <class Team, class View, class Idx>
    DPR_HD DPR_FORCEINLINE typename Team::template lanes<typename Team::real>
    next(const Team& team, const Step& st, const View& S, Idx idx) const {
        if (blt) return blt_prefix(team, st.tn, st.tr, blt_noise, S, idx);
        if (honaker) return honaker_prefix(team, st.tn, st.tr, S, S.row(level_rows(st.tn)), idx);
        return noisy_prefix(team, st.tn, st.tr, S, idx);
    }

    /// The released prefix L~_{t-1} = L_{t-1} + Z_{t-1} for the lanes of `idx` (noise on; `st` = step(t)) from the
    /// learner's sum L (double lanes), advancing the state to prefix t, and the noise Z_{t-1} it carries. Without
    /// lattice noise exactly convert<R>(L) + next(); with it the exact node release first (lattice_prefix).
    template <class Team, class View, class Idx, class D>
    DPR_HD DPR_FORCEINLINE Released<typename Team::template lanes<typename Team::real>>
    release(const Team& team, const Step& st, const View& S, Idx idx, D L) const {
        if (lattice) return lattice_prefix(team, st.tn, st.tr, S, idx, L);
        const auto z = next(team, st, S, idx);
        return {convert<typename Team::real>(L) + z, z};
    }

    /// The learner's exact sum after round t (`st` = step(t)): L + l_t, or with lattice noise L plus l_t rounded at
    /// random onto the lattice (noise/discrete_laplace.hpp lattice_round; the word: Lattice stream, sub 1, round t - 1).
    template <class Team, class Idx, class D>
    DPR_HD DPR_FORCEINLINE D accumulate(const Team& team, const Step& st, Idx idx, D L, D loss) const {
        if (!lattice) return L + loss;
        const auto w = rng::coordinate_stream(team, rng::Purpose::Lattice, 1u, st.tr.s, idx).block(0).w[0];
        return L + noise::lattice_round(loss, dlap.gamma, w);
    }

    /// release() of coordinate i without advancing (noise on; one-lane teams): the value only.
    template <class R, class Team, class View>
    R peek_release(const Team& team, const View& S, std::uint64_t t, std::uint32_t i, double L) const {
        if (!lattice) return static_cast<R>(L) + peek<R>(team, S, t, i);
        const TreeNoise tn = tree_noise(team.key().seed, team.key().stream, team.instance());
        return static_cast<R>(L + static_cast<double>(team.load(S, i))) + padding_noise<R>(tn, t - 1, i);
    }

    /// Z_{t-1} of coordinate i as next(t) will return it, without advancing (noise on; one-lane teams).
    template <class R, class Team, class View>
    R peek(const Team& team, const View& S, std::uint64_t t, std::uint32_t i) const {
        if (blt) return team.load(S.row(blt_noise.buffers), i);
        const TreeNoise tn = tree_noise(team.key().seed, team.key().stream, team.instance());
        return team.load(S, i) + padding_noise<R>(tn, t - 1, i);
    }

    /// Z_t of coordinate i regenerated from the definition (tree_aggregation.hpp prefix_noise), for a learner that
    /// keeps no state; 0 with the noise off. The audit suite's planted node bugs act on the state path only.
    template <class R = double>
    DPR_HD R regenerate(std::uint32_t seed, std::uint32_t stream, std::uint32_t instance, std::uint64_t t,
                        std::uint32_t i) const {
        const TreeNoise tn = tree_noise(seed, stream, instance);
        if (blt) return blt_prefix_noise<R>(tn, blt_noise, t, i);
        return honaker ? honaker_prefix_noise<R>(tn, t, i) : prefix_noise<R>(tn, t, i);
    }

    /// The privacy of releasing P~_0 .. P~_{T-1} (never P~_T) when one step's vector has the sensitivities of `y`
    /// (calibration.hpp tree_guarantee).
    Guarantee guarantee(double delta, const LossSetNorms& y) const {
        if (blt) return blt_guarantee(noise, scale, delta, y, sensitivity_squared());
        if (lattice && noise == NodeNoise::Gaussian)
            return lattice_gaussian_guarantee(dlap, dgauss_law(dlap, dgauss), levels_released(T, /*release_final=*/false),
                                              LatticeSens{y.delta1, y.delta2, coord_change, coords}, delta);
        if (lattice && on())
            return lattice_guarantee(dlap, levels_released(T, /*release_final=*/false), y.delta1, coords);
        return tree_guarantee(noise, scale, delta, y, T, /*release_final=*/false);
    }

    /// The squared l2 norm of everything released about one step's vector, per unit of its sensitivity: the tree's
    /// h' = ceil(log2 T) levels (one node each), BLT's sum_{k<T-1} c_k^2 (T - 1 steps enter P~_1 .. P~_{T-1}).
    double sensitivity_squared() const {
        if (blt) return blt_sensitivity_squared(blt_noise, T - 1);
        return static_cast<double>(levels_released(T, /*release_final=*/false));
    }

    /// run.json's name of the mechanism.
    const char* name() const {
        if (lattice && noise == NodeNoise::Gaussian)
            return tree == TreeVariant::Padded
                       ? "padded tree aggregation (AS17 Alg. 2) with lattice noise: discrete Gaussian nodes, exact releases"
                       : "binary tree aggregation (DNPR10 / CSS11) with lattice noise: discrete Gaussian nodes, exact "
                         "releases";
        if (lattice)
            return tree == TreeVariant::Padded
                       ? "padded tree aggregation (AS17 Alg. 2) with lattice noise: discrete Laplace nodes, exact releases"
                       : "binary tree aggregation (DNPR10 / CSS11) with lattice noise: discrete Laplace nodes, exact releases";
        return blt                          ? "BLT noise, buffered linear Toeplitz (Dvijotham et al. 2024)"
               : honaker                    ? "binary tree aggregation with Honaker's estimator (Honaker 2015)"
               : tree == TreeVariant::Padded ? "padded tree aggregation (AS17 Alg. 2)"
                                             : "binary tree aggregation (DNPR10 / CSS11)";
    }

    /// Var(Z_t) in units of one node draw's variance (2 b^2 for Laplace, sigma^2 for Gaussian): the padded tree k
    /// (T >= 2, every t), the binary tree popcount(t), Honaker sum_{j in bits(t)} 1 / (2 - 2^-j), BLT
    /// sum_{k<t} e_k^2.
    double unit_variance(std::uint64_t t) const {
        if (blt) return blt_prefix_variance(blt_noise, t);
        if (honaker) return honaker_prefix_variance(t);
        return static_cast<double>(prefix_draw_count(tree, t, T));
    }
};

} // namespace dpr::mech
