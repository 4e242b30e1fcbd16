#pragma once
// private-bandit-fw: ENV21 Algorithm 1, PRIVATEBANDIT (docs/spec/env21.md §B2 with the corrections of
// docs/spec/checks.md §4.7-§4.11), and garber-kretzu: the same with P = 0 (Garber & Kretzu 2020,
// docs/spec/afkt23.md §C8), bandit convex optimisation over a decision set D given by a linear-optimisation
// oracle (kernels/domains/domain.hpp; Geometry::Polytope, the adversary's `set` keys). The learner never
// projects: one LO call per round.
//
// Parameters (B2 line 1; n = n_eff = dim aff(D), the dimension of the subspace u is sampled in; D = the set's l2
// diameter; L = 1, the Lipschitz constant of the Affine, Absolute and Distance families, ||a_t||_2 <= 1):
//   T_round = ceil(sqrt T) batches of T_batch = ceil(T / T_round) rounds (the last one truncated; the number of
//   batches actually run is N_b = ceil(T / T_batch) <= T_round), eta = D / (T^{3/4} n^{1/2} L) and
//   zeta = D n^{1/2} / T^{1/4} (keys `eta`, `zeta` override them).
//
// State: x~ (the point played during the current batch), y (the Frank-Wolfe iterate), S (the exact sum of the batch
// estimates), s~ (its private release), g~ (the current batch's estimate).
//   init:  s~_0 = Z_0 (the tree's initial output: 0, or the padded tree's k draws); y = LO(eta s~_0), then T_batch
//          FW steps on q_1 (an implementation choice, docs/spec/env21.md §B2); x~_0 = y.
//   round t of batch R (1-based), r = its index in the batch:
//     u_t = P z / ||P z||, z ~ N(0, I_n)     P: the projection onto the subspace parallel to aff(D);
//                                            z_i from (Exploration, round t, element i)
//     play x_t = x~_{R-1} + zeta u_t;  charged f_t(x_t) (the only use of the row: <a_t, x_t> - b_t,
//                                       |<a_t, x_t> - b_t| or ||x_t - c_t||, bco_detail::loss_value)
//     F_t = (n / zeta) clip(f_t(x_t), C);  g~_R += F_t u_t         C = L (D + zeta) >= |f_t(x_t)| (below)
//     one FW step on q_R(y) = ||y||^2 / 2 + eta <s~_{R-1}, y>     (the sign of §4 item 7, corrected):
//        v = LO(y + eta s~_{R-1});  gap = <y - v, y + eta s~_{R-1}>;
//        y <- y + gamma (v - y),  gamma = clip(gap / ||y - v||^2, 0, 1) (exact line search, q is 1-smooth) or
//        2 / (k + 2), k = FW steps since the batch began (`fw_step = "open-loop"`)
//   end of batch R: x~_R = y;  S += g~_R;  s~_R = S + Z_R (tree prefix R);  g~ = 0.
// Batch R plays x~_{R-1} ~ grad omega^*(-eta s~_{R-2}): the staleness of Lemma C.3. With P = 0 (noise none,
// epsilon = inf, or garber-kretzu) Z = 0 and the two learners run the same operations on the same draws: their
// regret is bitwise equal (tests/learners/test_env21.cpp).
//
// The played point x_t lies within zeta of D (x~ is a convex combination of vertices); the losses of these families
// are defined on all of R^n, so ENV21's assumption "f_t defined on D + zeta B" holds without the shrinking of
// App. D. With `shrink = true` the learner runs on f'_t(x) = f_t(c + (1 - alpha)(x - c)), alpha = zeta / r for the
// set's interior ball (c, r) (domains::inradius; on the graph sets the certified ball of build.hpp interior_ball,
// spanning trees up to 20 nodes), and queries f_t at that point: every played point then lies in D
// (outside_max = 0), at an extra regret <= T zeta L D / r (ENV21 App. D; docs/spec/env21.md §B2).
// Since f_t has a zero in D and is L-Lipschitz, |f_t(x_t)| <= L (||x~ - x_0|| + zeta) <= C; the clip makes
// the sensitivity below hold whatever the rows are (rounds clipped by more than rounding are counted).
//
// Privacy (ENV21 Lemma 5.1; docs/spec/env21.md §B2, docs/spec/checks.md §4.10). Replacing one f_t changes only
// F_t u_t inside one g~_R (u_t is internal randomness), so with ||u_t||_2 = 1 and ||u_t||_1 <= sqrt(n_ambient):
//   Delta_2 = 2 (n / zeta) C,    Delta_1 = sqrt(n_ambient) Delta_2        (replace-one)
// The tree (§1.5, `tree` binary|padded) releases s~_0 .. s~_{N_b - 1}: h' = ceil(log2 N_b) levels. Node noise P:
//   laplace   calibration = paper:        lambda = T^{1/2} n L ceil(log2 T) / eps                 (Lemma 5.1)
//             calibration = sensitivity:  lambda = Delta_1 h' / eps                               (B2, derived)
//   gaussian  calibration = paper:        sigma = (T^{1/4} n^{1/2} L ceil(log2 T) ln(T/delta) / eps)
//                                                 (ln((n+T)/delta) + sqrt((1 + T^{1/2}/n) ln((n+T)/delta)))  (Lemma 5.4)
//             calibration = sensitivity:  sigma from zCDP at (eps, delta) with Delta_2 over h' levels
//   calibration = conservative (the default): the larger of the two scales. The paper's scale is not always
//   conservative for the replace-one Delta above (Laplace at n = 1024, T = 1024, eps = 1: the drawn noise is
//   eps = 1.18-DP); the larger scale never exceeds the requested (eps, delta), and equals the paper's wherever the
//   paper's is already within the request (docs/experiments/env21.md §1).
// The report is always computed from the noise actually drawn and the replace-one Delta above
// (mech::tree_guarantee: pure Laplace eps = h' Delta_1 / lambda; Gaussian: zCDP or the classical mechanism), so a
// paper calibration reports whatever eps its noise gives (docs/spec/env21.md §B2, sensitivity-based calibration).
// In float runs f_t, the clip, F_t u_t, S and the noise are float: with the continuous sampler the Delta above then
// holds up to float rounding (O(n u) relative: the normalisation of u_t, the rounding of C and n / zeta), and the
// node noise's tails end where the float samplers' do
// (docs/RANDOMNESS.md §7).
//
// Lattice noise (noise = "discrete-laplace"; the default in float with Laplace nodes on a padded or binary tree;
// docs/spec/model.md §1.8 "Batch estimates"). Round t's vector v_t = F_t u_t, as computed in the run's precision,
// is scaled by c_t = mech::l1_clip_factor(sum_i |v_t(i)|, Delta_1 / 2, n, u) <= 1 (1 unless rounding took ||v_t||_1 past
// Delta_1 / 2; the bound then holds for the doubles fl(v_t(i) c_t) as exact reals, whatever the precision's
// arithmetic did before), each coordinate is rounded at random onto Gamma Z (noise/discrete_laplace.hpp
// lattice_round; the word: Lattice stream, sub 1, round t - 1, element i) and added to the exact double row E
// (ws.dbl[1]). The release s~_R = E + Z_R is PrefixMechanism::release's exact node release over the batches; g~
// and S stay for the diagnostics. Replacing f_t moves one round's rounded vector, whose l1 distance is at most
// Delta_1 before the rounding: the lattice theorem with h' levels over n coordinates (mech::lattice_guarantee).
// Gaussian nodes (noise = "discrete-gaussian"; the default in float with noise unset stays discrete Laplace): the same
// with v_t held to ||v_t||_2 <= Delta_2 / 2 (mech::l2_clip_factor of sum_i v_t(i)^2) and discrete Gaussian nodes; the
// two vectors' distance is then at most Delta_2 in l2, Delta_1 in l1 and Delta_2 per coordinate, and the report is
// mech::lattice_gaussian_guarantee's (docs/spec/model.md §1.11 "Computed step vectors").
//
// Diagnostics (docs/spec/env21.md §B2, what to record): fw_gap_last / fw_gap_max = the duality gap <y - v, grad q_R(y)>
// of each batch's last FW step (an upper bound on q_R(y) - min q_R, Jaggi 2013); grad_norm_max / grad_norm_rms = max
// and root mean square over batches of ||g~_R|| (Lemma C.2: E||g~_R||^2 <= T_batch (L D n/zeta)^2 + T_batch^2 L^2);
// outside_max = max over batches of the distance from D of the batch's last played point (exact for the sets with a
// projection; for the graph sets a bound, not a measurement: zeta, or 0 with `shrink`); clipped_rounds; max_noise_l2 =
// max_R ||Z_R|| (private only).
//
// Backends: written over a team (kInstanceLanes = true): instance lanes run 16 instances per SIMD step, coordinate
// lanes split n over the lanes, a GPU thread, warp or block runs an instance. The direction, the play, g~, the FW
// step's vectors and sums, S and the release run on lanes; what has no lane version runs in a scalar section per
// instance (each_instance, over the instance's strided view of the state): the LO oracles of the graph sets, of
// the l2 ball and of k-subsets but on instance lanes at n <= 128 (there rank counting, rank_select; the simplex's,
// cube's and l1 ball's run on lanes: lo()), and the graph sets' parallel projection. The state and the noise are
// in the run's precision. On one lane in double the round is the scalar algorithm above bit for bit
// (tests/learners/test_env21.cpp); coordinate lanes add in their own order (docs/RANDOMNESS.md). Cost per round
// O(n) plus one LO call (O(n log n) for spanning trees, O(n) for k-subsets).
#include <algorithm>
#include <vector>

#include "kernels/domains/domain.hpp"
#include "kernels/domains/team_ops.hpp"
#include "kernels/learners/common.hpp"
#include "kernels/learners/tree_learner.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"
#include "kernels/noise/lane_noise.hpp"
#include "kernels/noise/samplers.hpp"
#include "kernels/rng/lanes.hpp"
#include "kernels/rng/uniform.hpp"

namespace dpr::learners {

namespace bco_detail {

/// The decision set of a Polytope learner: the problem's, or the adversaries' default (the simplex in R^d).
inline domains::Domain domain_of(const Problem& pb) {
    if (pb.domain) return *pb.domain;
    domains::Domain D;
    D.kind = domains::DomainKind::Simplex;
    D.n = pb.d;
    D.dim_aff = pb.d > 0 ? pb.d - 1 : 0;
    D.diameter = std::sqrt(2.0);
    return D;
}

/// The fields a bandit-convex learner's Params (private-bandit-fw, fkm) take from the problem: the decision set,
/// the loss row's width n + 1 (a_t then b_t), the loss family, T (at least 1) and n_eff = dim aff(D) (at least 1).
template <class P>
void set_problem(P& p, const Problem& pb) {
    p.dom = domain_of(pb);
    p.row_d = p.dom.n + 1;
    p.loss = pb.loss;
    p.T = pb.T > 0 ? pb.T : 1;
    p.n_eff = p.dom.dim_aff > 0 ? p.dom.dim_aff : 1;
}

/// u = P z / ||P z|| with z_i from (Exploration, round t, element i): a uniform unit vector of the subspace
/// parallel to aff(D). scratch: domains::scratch_size(D).
DPR_HD inline void direction(const domains::Domain& D, const InstanceCtx& c, std::uint64_t t, double* u,
                             double* scratch) {
    for (std::uint32_t i = 0; i < D.n; ++i) {
        rng::WordStream src(c.id(rng::Purpose::Exploration, 0, static_cast<std::uint32_t>(t), i));
        u[i] = noise::gaussian(src, 1.0);
    }
    domains::project_parallel(D, u, scratch);
    double sq = 0.0;
    for (std::uint32_t i = 0; i < D.n; ++i) sq += u[i] * u[i];
    const double inv = sq > 0.0 ? 1.0 / std::sqrt(sq) : 0.0;
    for (std::uint32_t i = 0; i < D.n; ++i) u[i] *= inv;
}

/// The standard normal z_i of round t at coordinate(s) i of the team's instance(s), in precision T, on lane
/// values: the draw of direction() (Exploration, round t, element i; Box-Muller on the two 53-bit uniforms of
/// the element's first Philox block, bit for bit), or in float the two 24-bit uniforms of words 0 and 2.
template <class T, class Team, class Idx>
DPR_HD DPR_FORCEINLINE auto exploration_normal(const Team& team, std::uint64_t t, Idx i) {
    const auto s =
        rng::coordinate_stream(team, rng::Purpose::Exploration, 0u, static_cast<std::uint32_t>(t), i);
    const auto w = s.block(0);
    if constexpr (sizeof(T) == 4)
        return noise::normal_from_u(rng::u24_lanes(w.w[0]), rng::u24_lanes(w.w[2]));
    else
        return noise::normal_from_u(rng::u53_lanes(w.w[0], w.w[1]), rng::u53_lanes(w.w[2], w.w[3]));
}

/// The round's direction over a team: row U <- P z with z the normals of direction() (exploration_normal), P
/// the projection onto the subspace parallel to aff(D): on lanes where P subtracts the mean (simplex,
/// k-subsets) or is the identity (balls, cube), for the graph sets in a scalar section per instance
/// (project_parallel on the double view `scratch`: n + domains::scratch_size(D) values). Returns 1 / ||P z||
/// (0 if P z = 0): u_t = U * that, which play_and_query() applies. The operations of direction() in its
/// order, so on one lane in double its bits; coordinate lanes and warps add in their own order
/// (docs/RANDOMNESS.md). kGraphSets = false: the caller never runs on a graph set (fkm) and has no scratch.
template <bool kGraphSets = true, class Team, class View, class Scratch>
DPR_HD typename Team::template uni<typename Team::real>
team_direction(const Team& team, const domains::Domain& D, std::uint64_t t, const View& U,
               const Scratch& scratch) {
    using R = typename Team::real;
    using V = typename Team::template lanes<R>;
    using UR = typename Team::template uni<R>;
    const std::uint32_t n = D.n;
    const auto zsum = team.template reduce<1, 0>(n, [&](auto i) {
        Contrib<V, 1, 0> c;
        const V z = exploration_normal<R>(team, t, i);
        team.store(U, i, z);
        c.sum[0] = z;
        return c;
    });
    const bool centred = domains::parallel_is_mean_free(D);
    if constexpr (kGraphSets)
        if (D.graph())
            each_instance(team, [&](std::uint32_t j) {
                const auto u = team.instance_view(U, j);
                const auto z = team.instance_view(scratch, j);
                for (std::uint32_t i = 0; i < n; ++i) z[i] = static_cast<double>(u[i]);
                domains::project_parallel(D, z, z + n);
                for (std::uint32_t i = 0; i < n; ++i) u[i] = static_cast<R>(z[i]);
            });
    const UR mean = centred ? zsum.sum[0] / UR(static_cast<R>(n)) : UR(R(0));
    const auto sq = team.template reduce<1, 0>(n, [&](auto i) {
        Contrib<V, 1, 0> c;
        V z = team.load(U, i);
        if (centred) z = z - V(mean);
        team.store(U, i, z);
        c.sum[0] = z * z;
        return c;
    });
    return select(sq.sum[0] > UR(R(0)), UR(R(1)) / vsqrt(sq.sum[0]), UR(R(0)));
}

/// The round's play over a team: U <- u_t = U * inv (team_direction), `to` <- the played point from + zeta
/// u_t, shrunk towards centre(i) by App. D's alpha when alpha > 0 (c + (1 - alpha)(x - c)); returns f_t there
/// (loss_value's family, from the row: <a, x> - b, its absolute value, or ||x - c||). On a one-lane team in
/// double, the bits of direction()'s scaling, the scalar play and loss_value.
template <class Team, class View, class C, class Row>
DPR_HD typename Team::template uni<typename Team::real>
play_and_query(const Team& team, const domains::Domain& D, LossFamily loss, double zeta, double alpha,
               typename Team::template uni<typename Team::real> inv, const View& U, const View& from,
               const View& to, C&& centre, const Row& row) {
    using R = typename Team::real;
    using V = typename Team::template lanes<R>;
    using UR = typename Team::template uni<R>;
    const R z = static_cast<R>(zeta), keep = static_cast<R>(1.0 - alpha);
    const bool distance = loss == LossFamily::Distance;
    const auto played = team.template reduce<1, 0>(D.n, [&](auto i) {
        Contrib<V, 1, 0> c;
        const V u = team.load(U, i) * V(inv);
        team.store(U, i, u);
        V x = team.load(from, i) + V(z) * u;
        if (alpha > 0.0) {
            const V ci = centre(i);
            x = ci + V(keep) * (x - ci);
        }
        team.store(to, i, x);
        const V a = team.loss(row, i);
        c.sum[0] = distance ? (x - a) * (x - a) : a * x;
        return c;
    });
    UR f = played.sum[0];
    if (distance) return vsqrt(f);
    f = f - convert<R>(team.loss_exact_at(row, typename Team::template uni<std::uint32_t>(D.n)));
    return loss == LossFamily::Absolute ? vabs(f) : f;
}

/// The Polytope learners accept one-dimensional sets and up; a single point (dim aff 0) has nothing to learn.
inline bool check_domain(const domains::Domain& D, Diagnostic& diag) {
    if (D.dim_aff < 1)
        return diag.fail(nullptr,
                         "the decision set %s has an affine hull of dimension 0 (a single point): nothing to learn",
                         domains::domain_name(D.kind));
    return true;
}

inline constexpr KeySpec kFwStepKey{"fw_step", KeyType::Choice, "line-search", 0, 1, "line-search|open-loop",
                                    "Frank-Wolfe step: exact line search on q_R, or gamma_k = 2/(k+2)"};
inline constexpr KeySpec kEtaKey{"eta", KeyType::Real, "auto", 0.0, 1e12, nullptr,
                                 "step size > 0; auto = D / (T^{3/4} n^{1/2} L) (ENV21 Alg. 1 line 1)", true};
/// zeta >= 1e-9: the estimate F_t = (n/zeta) f_t grows like 1/zeta, and below that its sums over T rounds and
/// their squares (the grad_norm diagnostics) would overflow; a radius that small is meaningless anyway.
inline constexpr KeySpec kZetaKey{"zeta", KeyType::Real, "auto", 1e-9, 1e6, nullptr,
                                  "exploration radius in [1e-9, 1e6]; auto = D n^{1/2} / T^{1/4} (ENV21 Alg. 1 line 1)"};

/// App. D's shrinking (ENV21 App. D; docs/spec/env21.md §B2, domain assumption and shrinking): run on f'_t(x) = f_t(c +
/// (1 - alpha) (x - c)), alpha = zeta / r, (c, r) the set's interior ball (domains::centre, domains::inradius; for the
/// graph sets the certified ball of kernels/domains/build.hpp interior_ball), so that every queried point lies in D;
/// extra regret <= T zeta L D / r. Needs zeta < r, and on spanning trees at most 20 nodes.
inline constexpr KeySpec kShrinkKey{"shrink", KeyType::Bool, "false", 0, 1, nullptr,
                                    "App. D: query f_t at c + (1 - zeta/r)(x - c) so every played point lies in D "
                                    "(needs zeta < r, the set's interior radius; spanning trees: at most 20 nodes)"};

/// alpha = zeta / r of App. D when `shrink` is on, else 0.
inline double shrink_alpha(const domains::Domain& D, bool shrink, double zeta) {
    if (!shrink) return 0.0;
    const double r = domains::inradius(D);
    return r > 0.0 ? zeta / r : kInf;
}

/// check() of the shrink key: a set with an interior ball, and zeta < r.
inline bool check_shrink(const domains::Domain& D, bool shrink, double zeta, Diagnostic& diag) {
    if (!shrink) return true;
    const double r = domains::inradius(D);
    if (!(r > 0.0)) {
        if (D.kind == domains::DomainKind::SpanningTree && D.nodes > domains::Domain::kMaxBallNodes)
            return diag.fail("shrink", "App. D's shrinking needs an interior ball of D, and set = \"%s\" with %u nodes "
                                       "has none: certifying one visits every node subset, so spanning trees get one up "
                                       "to %u nodes", domains::domain_name(D.kind), D.nodes, domains::Domain::kMaxBallNodes);
        return diag.fail("shrink", "App. D's shrinking needs an interior ball of D, and none was certified for this "
                                   "set = \"%s\" (%u nodes, %u edges): the centre built from its vertices lies on a "
                                   "facet (build.hpp interior_ball); run with shrink = false",
                         domains::domain_name(D.kind), D.nodes, D.n);
    }
    if (!(zeta < r))
        return diag.fail("zeta", "with shrink = true, zeta must be < r = %g (the interior radius of %s); got %g (the "
                                 "automatic zeta = D n^{1/2} / T^{1/4} falls below r only for large T)",
                         r, domains::domain_name(D.kind), zeta);
    return true;
}

/// The noisy-prefix key block of private-bandit-fw (ENV21 Alg. 1's TreeBasedAgg; tree_learner.hpp), with lattice
/// noise (noise = "discrete-laplace", or "discrete-gaussian" for Gaussian nodes).
using Prefix = PrefixKeys<PrefixLaws::LaplaceGaussian, mech::TreeVariant::Padded, /*Lattice=*/true, /*GaussianLattice=*/true>;

template <bool kPrivate>
struct Keys;
template <>
struct Keys<false> {
    static constexpr std::array<KeySpec, 4> kKeys = {kFwStepKey, kEtaKey, kZetaKey, kShrinkKey};
};
template <>
struct Keys<true> {
    static constexpr std::array<KeySpec, 11> kKeys = {
        KeySpec{"epsilon", KeyType::Real, "", 0.0, kInf, nullptr,
                "privacy parameter eps > 0 of the played sequence; inf = no noise (equal to garber-kretzu bit for bit)",
                true},
        KeySpec{"delta", KeyType::Real, "0", 0.0, 1.0, nullptr,
                "delta in (0,1) of the Gaussian noise (required with noise = gaussian or discrete-gaussian)", false,
                true},
        Prefix::kNoise,
        KeySpec{"calibration", KeyType::Choice, "conservative", 0, 2, "paper|sensitivity|conservative",
                "paper = Lemma 5.1 / 5.4 (may exceed the requested eps when n >~ T); sensitivity = the replace-one "
                "Delta of one F_t u_t (docs/experiments/env21.md §1); conservative = the larger scale of the two: "
                "never above the request"},
        Prefix::kMechanism,
        Prefix::kNodeScale,
        Prefix::kBltBuffers,
        kFwStepKey,
        kEtaKey,
        kZetaKey,
        kShrinkKey,
    };
};

template <bool kPrivate>
struct Diagnostics;
template <>
struct Diagnostics<false> {
    static constexpr std::array<const char*, 6> kNames = {"fw_gap_last",   "fw_gap_max",  "grad_norm_max",
                                                          "grad_norm_rms", "outside_max", "clipped_rounds"};
};
template <>
struct Diagnostics<true> {
    static constexpr std::array<const char*, 7> kNames = {"fw_gap_last", "fw_gap_max",     "grad_norm_max",
                                                          "grad_norm_rms", "outside_max", "clipped_rounds",
                                                          "max_noise_l2"};
};

/// f_t(x) of the ENV21 loss families (kernels/core/sets.hpp) from the round's row: Affine <a, x> - b (also what a
/// Polytope learner assumes when the problem names no family), Absolute |<a, x> - b|, Distance ||x - c||_2 (row = c
/// then 0). Each is 1-Lipschitz (||a||_2 <= 1) with a zero in D (b = <a, x_0> resp. <a, c>, c in D; c_t in D), which
/// is all the learners' clip C = L (D + zeta) and their sensitivity rely on.
DPR_HD inline double loss_value(LossFamily f, const double* row, const double* x, std::uint32_t n) {
    if (f == LossFamily::Distance) {
        double s = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) s += (x[i] - row[i]) * (x[i] - row[i]);
        return std::sqrt(s);
    }
    const double v = domains::dot(row, x, n) - row[n];
    return f == LossFamily::Absolute ? std::fabs(v) : v;
}

/// The families the Polytope learners are charged on.
inline constexpr unsigned kFamilies =
    loss_bit(LossFamily::Affine) | loss_bit(LossFamily::Absolute) | loss_bit(LossFamily::Distance);

} // namespace bco_detail

template <bool kPrivate>
struct BanditFw : Learner<Geometry::Polytope> {
    static constexpr const char* kName = kPrivate ? "private-bandit-fw" : "garber-kretzu";
    static constexpr unsigned kLossFamilies = bco_detail::kFamilies;
    static constexpr auto kKeys = bco_detail::Keys<kPrivate>::kKeys;
    static constexpr auto kDiagnostics = bco_detail::Diagnostics<kPrivate>::kNames;
    static constexpr bool kInstanceLanes = true;

    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    static constexpr int kDelta = key_index(kKeys, "delta");
    static constexpr int kNoise = key_index(kKeys, "noise");
    static constexpr int kCalibration = key_index(kKeys, "calibration");
    static constexpr int kMechanism = key_index(kKeys, "mechanism");
    static constexpr int kNodeScale = key_index(kKeys, "node_scale");
    static constexpr int kFwStep = key_index(kKeys, "fw_step");
    static constexpr int kEta = key_index(kKeys, "eta");
    static constexpr int kZeta = key_index(kKeys, "zeta");
    static constexpr int kShrink = key_index(kKeys, "shrink");

    static constexpr double kLipschitz = 1.0; ///< L of the three families (||a_t||_2 <= 1; kernels/core/sets.hpp)

    struct Params {
        domains::Domain dom;
        std::uint32_t row_d;   ///< the loss row's width, n + 1: a_t then b_t, or c_t then 0 (loss_row_width)
        LossFamily loss;       ///< Affine, Absolute or Distance (bco_detail::loss_value)
        std::uint64_t T;
        std::uint64_t batch;   ///< T_batch
        std::uint64_t batches; ///< N_b = ceil(T / T_batch)
        std::uint32_t n_eff;
        double eta, zeta;
        double clip;           ///< C = L (D + zeta)
        double alpha;          ///< App. D shrinking zeta / r (`shrink`), 0 = off
        bool line_search;
        double epsilon, delta;
        std::uint32_t calibration; ///< kPaper, kSensitivity or kConservative (the key's choice)
        mech::PrefixMechanism prefix; ///< the noise of s~ over the N_b batches (tree_learner.hpp): lambda / sigma, or off
        mech::LossSetNorms norms; ///< Delta_1, Delta_2 of one batch estimate (y1, y2 = half of them)
    };

    /// The most one coordinate of a round's vector can be under lattice noise with the law's norm hold: ||v_t||_1 <=
    /// Delta_1 / 2 (Laplace nodes), ||v_t||_2 <= Delta_2 / 2 (Gaussian nodes).
    static double coordinate_bound(const Params& p) {
        return p.prefix.noise == mech::NodeNoise::Gaussian ? p.norms.y2 : p.norms.y1;
    }
    static_assert(domains::Domain::kMaxDim * 0x1.0p-24 <= 0.25, "the norm holds (mech::l1_clip_factor, l2_clip_factor) need n u <= 1/4 in float");

    // ---- configuration --------------------------------------------------------------------------------

    enum : std::uint32_t { kPaper = 0, kSensitivity = 1, kConservative = 2 }; ///< the calibration key's choices

    /// The node scale of ENV21 Lemma 5.1 (Laplace) or Lemma 5.4 (Gaussian), as printed.
    static double paper_scale(const Params& p, double Td, double n) {
        if (p.prefix.noise == mech::NodeNoise::Laplace) return std::sqrt(Td) * n * kLipschitz * ceil_log2(p.T) / p.epsilon;
        const double lg = std::log((n + Td) / p.delta);
        return std::pow(Td, 0.25) * std::sqrt(n) * kLipschitz * ceil_log2(p.T) * std::log(Td / p.delta) / p.epsilon *
               (lg + std::sqrt((1.0 + std::sqrt(Td) / n) * lg));
    }
    /// The node scale that makes the tree exactly (eps, delta)-DP for the replace-one Delta of one batch estimate.
    static double sensitivity_scale(const Params& p) {
        if (p.prefix.noise == mech::NodeNoise::Laplace)
            return mech::laplace_node_scale(mech::Calibration::Strict, p.epsilon, p.norms, p.batches,
                                            /*release_final=*/false);
        return mech::gaussian_node_scale_zcdp(p.epsilon, p.delta, p.norms, p.batches, false);
    }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        bco_detail::set_problem(p, pb);
        const std::uint64_t rounds = static_cast<std::uint64_t>(std::ceil(std::sqrt(static_cast<double>(p.T))));
        p.batch = (p.T + rounds - 1) / rounds;
        p.batches = (p.T + p.batch - 1) / p.batch;
        const double Td = static_cast<double>(p.T), n = static_cast<double>(p.n_eff), D = p.dom.diameter;
        p.eta = kv.given[kEta] ? kv.num[kEta] : D / (std::pow(Td, 0.75) * std::sqrt(n) * kLipschitz);
        p.zeta = kv.given[kZeta] ? kv.num[kZeta] : D * std::sqrt(n) / std::pow(Td, 0.25);
        p.clip = kLipschitz * (D + p.zeta);
        p.alpha = bco_detail::shrink_alpha(p.dom, kv.get(kShrink, 0.0) != 0.0, p.zeta);
        p.line_search = static_cast<int>(kv.get(kFwStep, 0)) == 0;
        const double d2 = 2.0 * n / p.zeta * p.clip;
        const double d1 = std::sqrt(static_cast<double>(p.dom.n)) * d2;
        p.norms = mech::LossSetNorms{0.5 * d1, 0.5 * d2, d1, d2};
        p.epsilon = kInf;
        p.delta = 0.0;
        p.calibration = kPaper;
        p.prefix.T = p.batches;
        if constexpr (kPrivate) {
            p.epsilon = kv.num[kEpsilon];
            p.delta = kv.get(kDelta, 0.0);
            p.calibration = static_cast<std::uint32_t>(kv.get(kCalibration, kConservative));
            p.prefix = bco_detail::Prefix::resolve(
                kv, bco_detail::Prefix::template index_of<BanditFw>(), p.batches, std::isinf(p.epsilon) && !kv.given[kNodeScale],
                [&](mech::NodeNoise law) {
                    if (law == mech::NodeNoise::Gaussian && !(p.delta > 0.0)) return 0.0; // refused by check()
                    Params q = p;
                    q.prefix.noise = law;
                    const double paper = paper_scale(q, Td, n);
                    const double strict = sensitivity_scale(q);
                    return p.calibration == kPaper ? paper : p.calibration == kSensitivity ? strict : std::max(paper, strict);
                });
            // Lattice noise when asked for, and by default in float where it applies (otherwise the continuous
            // sampler, with run.json's float warning); the scale raised to the smallest whose lattice eps is at most
            // the continuous one's (tree_learner.hpp lattice_version).
            if (p.prefix.scale > 0.0)
                p.prefix = lattice_if_wanted<bco_detail::Prefix>(p.prefix, kv, bco_detail::Prefix::template index_of<BanditFw>(),
                                                                 p.norms, pb.float_precision, p.dom.n, p.delta,
                                                                 coordinate_bound(p));
        }
        return p;
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        const domains::Domain D = bco_detail::domain_of(pb);
        if (!bco_detail::check_domain(D, diag)) return false;
        if (kv.given[kEta] && !(kv.num[kEta] > 0.0)) return diag.fail("eta", "must be > 0 (got %g)", kv.num[kEta]);
        if (kv.given[kZeta] && !(kv.num[kZeta] > 0.0))
            return diag.fail("zeta", "must be > 0 (got %g)", kv.num[kZeta]);
        if (!bco_detail::check_shrink(D, kv.get(kShrink, 0.0) != 0.0, resolve(kv, pb).zeta, diag)) return false;
        if constexpr (kPrivate) {
            if (!bco_detail::Prefix::check(kv, bco_detail::Prefix::template index_of<BanditFw>(), kDelta,
                                            std::isinf(kv.num[kEpsilon]), diag))
                return false;
            const Params p = resolve(kv, pb);
            if (!check_node_scale(p.prefix.scale, kv.given[kNodeScale] ? "node_scale" : "epsilon",
                                  p.calibration == kSensitivity ? "the replace-one sensitivity of B2"
                                                                : "ENV21 Lemma 5.1 / 5.4",
                                  diag))
                return false;
            if (!check_lattice_applies<bco_detail::Prefix>(kv, bco_detail::Prefix::template index_of<BanditFw>(),
                                                           p.prefix, p.norms, p.dom.n, p.delta, coordinate_bound(p), diag))
                return false;
        }
        return true;
    }

    static PrivacyReport privacy(const Params& p) {
        if (!kPrivate) {
            PrivacyReport r;
            r.mechanism = "none (garber-kretzu)";
            return r;
        }
        PrivacyReport r = prefix_privacy_report(
            p.prefix, p.delta, p.norms,
            p.calibration == kPaper         ? "paper (ENV21 Lemma 5.1 / 5.4)"
            : p.calibration == kSensitivity ? "sensitivity (replace-one Delta of one F_t u_t)"
                                            : "conservative (the larger of Lemma 5.1 / 5.4's scale and the replace-one "
                                              "sensitivity's)",
            p.prefix.honaker ? (p.prefix.noise == mech::NodeNoise::Laplace
                                    ? "Laplace binary tree with Honaker's estimator over batch gradient estimates"
                                    : "Gaussian binary tree with Honaker's estimator over batch gradient estimates")
            : p.prefix.lattice && p.prefix.noise == mech::NodeNoise::Gaussian
                ? "tree with lattice noise over batch gradient estimates (ENV21 Alg. 1): each round's F_t u_t held to "
                  "l2 <= Delta_2 / 2, rounded at random onto the lattice; discrete Gaussian nodes, exact releases "
                  "(docs/spec/model.md §1.8, §1.11)"
            : p.prefix.lattice ? "tree with lattice noise over batch gradient estimates (ENV21 Alg. 1): each round's "
                                 "F_t u_t held to l1 <= Delta_1 / 2, rounded at random onto the lattice; discrete "
                                 "Laplace nodes, exact releases (docs/spec/model.md §1.8)"
            : p.prefix.noise == mech::NodeNoise::Laplace ? "Laplace tree over batch gradient estimates (ENV21 Alg. 1)"
                                                         : "Gaussian tree over batch gradient estimates (ENV21 Alg. 1)");
        if (!p.prefix.on()) r.calibration = "none"; // a run without noise names no calibration
        return r;
    }

    // ---- state ------------------------------------------------------------------------------------------

    enum Slot : std::uint32_t { kGapLast, kGapMax, kGradMax, kGradSq, kOutside, kClipped, kNoiseMax, kSlots };

    /// The rows of the state (the run's precision, n each): x~, y, S, s~, g~, the direction u, the played
    /// point, the LO vertex v, the FW gradient, and the centre that App. D's shrinking moves towards.
    enum StateRow : int { kXc = 0, kY, kS, kSn, kG, kU, kX, kV, kGrad, kCentre, kRows };

    /// The state rows, the scratch of the scalar sections (LO in, LO out, domains::scratch_size doubles), the
    /// prefix mechanism's rows when there is noise, and with lattice noise the exact lattice sum E (ws.dbl[1]).
    DPR_HD static WorkspaceSpec workspace(const Params& p) {
        const std::uint64_t n = p.dom.n;
        WorkspaceSpec w =
            WorkspaceSpec{}.add_real(kRows, n).add_double(1, 2 * n + domains::scratch_size(p.dom));
        if (p.prefix.on()) w.add_real(p.prefix.rows(), n);
        if (p.prefix.lattice) w.add_double(1, n);
        return w.scalars(kSlots);
    }

    /// Instance lanes, k-subsets with n <= kRankSelectMaxN: x_i = 1 iff fewer than k coordinates come before
    /// i in the order of domains::detail::before (value, then index): the set of select_smallest, so the same
    /// vertex as the per-instance oracle, computed for all the group's instances at once in n^2 lane
    /// comparisons instead of a quickselect per instance (whose branches do not vectorise). Coordinate j < i
    /// comes before i unless g_i < g_j; j > i comes before i if g_j < g_i. (g is never NaN: a sum of finite
    /// terms; +-inf and ties are ordered as the oracle orders them.)
    static constexpr std::uint32_t kRankSelectMaxN = 128;
    template <class Team, class View>
    DPR_HD static void rank_select(const Team& team, const View& G, const View& X, std::uint32_t n,
                                   std::uint32_t k) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        const V one(R(1)), zero(R(0)), kk(static_cast<R>(k));
        team.for_each(n, [&](std::uint32_t i) {
            const V gi = team.load(G, i);
            // two accumulators per side, so that consecutive adds do not wait on each other
            V a0 = zero, a1 = zero, b0 = zero, b1 = zero;
            std::uint32_t j = 0;
            for (; j + 2 <= i; j += 2) {
                a0 = select(gi < team.load(G, j), a0, a0 + one);
                a1 = select(gi < team.load(G, j + 1), a1, a1 + one);
            }
            if (j < i) a0 = select(gi < team.load(G, j), a0, a0 + one);
            for (j = i + 1; j + 2 <= n; j += 2) {
                b0 = select(team.load(G, j) < gi, b0 + one, b0);
                b1 = select(team.load(G, j + 1) < gi, b1 + one, b1);
            }
            if (j < n) b0 = select(team.load(G, j) < gi, b0 + one, b0);
            const V before = (a0 + a1) + (b0 + b1);
            team.store(X, i, select(before < kk, one, zero));
        });
    }

    /// Row X <- value() e_arg per instance (the simplex's and the l1 ball's vertices): zeros, then rank 0 writes
    /// coordinate arg; value() runs on rank 0 after a barrier, so it may read what the team stored before.
    template <class Team, class View, class UI, class F>
    DPR_HD static void one_hot(const Team& team, const View& X, std::uint32_t n, const UI& arg, F&& value) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        team.for_each(n, [&](auto i) { team.store(X, i, V(R(0))); });
        team.sync();
        if (team.rank() == 0) team.store_at(X, arg, value());
        team.sync();
    }

    /// Row kGrad <- g (grad(i) computes and stores it), then row `to` <- v = LO(g), domains::lo's vertex: on lanes
    /// the simplex's lowest-index smallest coordinate (a team argmin over g as it is computed), the cube's signs,
    /// the l1 ball's lowest-index largest |g_i| (a team argmax), k-subsets on instance lanes by rank_select; the
    /// other sets' oracle in a scalar section per instance (domains::lo over double copies in ws.dbl[0]). These
    /// are exact: every layout finds the same vertex. The l2 ball's -radius g/||g|| stays in the scalar section:
    /// it is not a vertex, so a team's own summation order would move it by rounding, and the iterate with it.
    template <class Team, class WS, class G>
    DPR_HD static void lo(const Params& p, const Team& team, const WS& ws, G&& grad, int to) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        const std::uint32_t n = p.dom.n;
        const auto X = ws.real[0].row(to);
        if (p.dom.kind == domains::DomainKind::Simplex) {
            const auto best = team.template argmin<0>(n, [&](auto i) {
                ArgContrib<V, 0> c;
                c.key = grad(i);
                return c;
            });
            one_hot(team, X, n, best.arg, [&] { return typename Team::template uni<R>(R(1)); });
            return;
        }
        const auto Gr = ws.real[0].row(kGrad);
        if (p.dom.kind == domains::DomainKind::Cube) { // x_i = -1 where g_i > 0, else +1
            team.for_each(n, [&](auto i) { team.store(X, i, select(V(R(0)) < grad(i), V(R(-1)), V(R(1)))); });
            team.sync();
            return;
        }
        if (p.dom.kind == domains::DomainKind::L1Ball) { // -radius sign(g_b) e_b, b the lowest index of max |g_i|
            const auto best = argmax<0>(team, n, [&](auto i) {
                ArgContrib<V, 0> c;
                c.key = vabs(grad(i));
                return c;
            });
            using UR = typename Team::template uni<R>;
            const R radius = static_cast<R>(p.dom.radius);
            one_hot(team, X, n, best.arg,
                    [&] { return select(UR(R(0)) < team.load_at(Gr, best.arg), UR(-radius), UR(radius)); });
            return;
        }
        team.for_each(n, [&](auto i) { grad(i); });
        if constexpr (Team::kInstances > 1) {
            if (p.dom.kind == domains::DomainKind::KSubsets && n <= kRankSelectMaxN) {
                rank_select(team, Gr, X, n, p.dom.k);
                return;
            }
        }
        each_instance(team, [&](std::uint32_t j) {
            const auto in = team.instance_view(ws.dbl[0], j);
            const auto g = team.instance_view(ws.real[0].row(kGrad), j);
            const auto x = team.instance_view(X, j);
            for (std::uint32_t i = 0; i < n; ++i) in[i] = static_cast<double>(g[i]);
            domains::lo(p.dom, in, in + n, in + 2 * static_cast<std::uint64_t>(n));
            for (std::uint32_t i = 0; i < n; ++i) x[i] = static_cast<R>(in[n + i]);
        });
    }

    /// One FW step on q(y) = ||y||^2/2 + eta <s~, y> (k = steps since the warm start); returns the gap.
    template <class Team, class WS>
    DPR_HD static auto fw_step(const Params& p, const Team& team, const WS& ws, std::uint64_t k) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using UR = typename Team::template uni<R>;
        const std::uint32_t n = p.dom.n;
        const auto A = ws.real[0];
        const auto Y = A.row(kY), Vx = A.row(kV), Gr = A.row(kGrad), Sn = A.row(kSn);
        const R eta = static_cast<R>(p.eta);
        lo(
            p, team, ws,
            [&](auto i) {
                const V g = team.load(Y, i) + V(eta) * team.load(Sn, i);
                team.store(Gr, i, g);
                return g;
            },
            kV);
        const auto r = team.template reduce<2, 0>(n, [&](auto i) {
            Contrib<V, 2, 0> c;
            const V d = team.load(Y, i) - team.load(Vx, i);
            c.sum[0] = d * team.load(Gr, i);
            c.sum[1] = d * d;
            return c;
        });
        const UR gap = r.sum[0], dd = r.sum[1];
        UR gamma(static_cast<R>(2.0 / (static_cast<double>(k) + 2.0)));
        if (p.line_search) {
            const UR q = gap / dd;
            gamma = select(dd > UR(R(0)), select(q < UR(R(0)), UR(R(0)), select(q > UR(R(1)), UR(R(1)), q)),
                           UR(R(0)));
        }
        team.for_each(n, [&](auto i) {
            const V y = team.load(Y, i);
            team.store(Y, i, y + V(gamma) * (team.load(Vx, i) - y));
        });
        return gap;
    }

    /// s~_R = S + Z_R, Z_R the prefix mechanism's next() at step R + 1 (called for R = 0, 1, ... in order,
    /// each once: its state in ws.real[1] then holds prefix R + 1; in double regenerate()'s value bit for
    /// bit, tests/mechanisms/test_prefix_mechanism.cpp); returns ||Z_R||_2 (0 without noise).
    template <class Team, class WS>
    DPR_HD static auto release(const Params& p, const Team& team, const WS& ws, std::uint64_t R) {
        const auto S = ws.real[0].row(kS), Sn = ws.real[0].row(kSn);
        using V = typename Team::template lanes<typename Team::real>;
        using UR = typename Team::template uni<typename Team::real>;
        if (!p.prefix.on()) {
            team.for_each(p.dom.n, [&](auto i) { team.store(Sn, i, team.load(S, i)); });
            return UR(typename Team::real(0));
        }
        const auto st = p.prefix.step(R + 1);
        if (p.prefix.lattice) { // the exact node release of E (docs/spec/model.md §1.8)
            const auto r = team.template reduce<1, 0>(p.dom.n, [&](auto i) {
                Contrib<V, 1, 0> c;
                const auto rel = p.prefix.release(team, st, ws.real[1], i, team.load(ws.dbl[1], i));
                team.store(Sn, i, rel.value);
                c.sum[0] = rel.noise * rel.noise;
                return c;
            });
            return vsqrt(r.sum[0]);
        }
        const auto r = team.template reduce<1, 0>(p.dom.n, [&](auto i) {
            Contrib<V, 1, 0> c;
            const V z = p.prefix.next(team, st, ws.real[1], i);
            team.store(Sn, i, team.load(S, i) + z);
            c.sum[0] = z * z;
            return c;
        });
        return vsqrt(r.sum[0]);
    }

    /// s~_0 = Z_0 (the padded tree's initial draws; 0 for binary or without noise), y = LO(eta s~_0), T_batch
    /// FW steps on q_1, x~_0 = y.
    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        const std::uint32_t n = p.dom.n;
        const auto A = ws.real[0];
        const V c0(static_cast<R>(domains::centre_value(p.dom)));
        team.for_each(n, [&](auto i) {
            for (int r = 0; r < kCentre; ++r) team.store(A.row(r), i, V(R(0)));
            team.store(A.row(kCentre), i, c0);
        });
        if (p.dom.graph()) // the certified ball's centre (App. D), per coordinate
            each_instance(team, [&](std::uint32_t j) {
                const auto c = team.instance_view(A.row(kCentre), j);
                for (std::uint32_t i = 0; i < n; ++i) c[i] = static_cast<R>(p.dom.ball_centre[i]);
            });
        if (team.rank() == 0)
            for (std::uint32_t j = 0; j < kSlots; ++j)
                team.put(ws.scalars, static_cast<int>(j), typename Team::template uni<double>(0.0));
        if (p.prefix.on()) p.prefix.init(team, ws.real[1], n);
        if (p.prefix.lattice)
            team.for_each(n, [&](auto i) { team.store(ws.dbl[1], i, typename Team::template lanes<double>(0.0)); });
        team.sync();
        release(p, team, ws, 0);
        const R eta = static_cast<R>(p.eta);
        lo(
            p, team, ws,
            [&](auto i) {
                const V g = V(eta) * team.load(A.row(kSn), i);
                team.store(A.row(kGrad), i, g);
                return g;
            },
            kY);
        for (std::uint64_t k = 0; k < p.batch; ++k) fw_step(p, team, ws, k);
        team.for_each(n, [&](auto i) { team.store(A.row(kXc), i, team.load(A.row(kY), i)); });
        team.sync();
    }

    /// x_t (call before round(t)) into x (n doubles), for one-lane teams in double (tests, inspection): x~ +
    /// zeta u_t with u_t from the scalar direction(), shrunk as round() does.
    template <class Team, class WS>
    static void play(const Params& p, const Team& team, const WS& ws, std::uint64_t t, double* x) {
        const std::uint32_t n = p.dom.n;
        std::vector<double> u(n), scratch(domains::scratch_size(p.dom));
        bco_detail::direction(p.dom, InstanceCtx{team.key().seed, team.key().stream, team.instance()}, t,
                              u.data(), scratch.data());
        const auto xc = ws.real[0].row(kXc);
        for (std::uint32_t i = 0; i < n; ++i) x[i] = static_cast<double>(xc[i]) + p.zeta * u[i];
        if (p.alpha > 0.0) domains::shrink_towards_centre(p.dom, p.alpha, x); // App. D: the query of f'_t
    }

    /// Round t over the team: u_t and the played point on lanes, f_t, g~ += F_t u_t, one FW step (its LO
    /// oracle on lanes for the simplex, on rank 0 for the other sets), and at the end of a batch S, x~ and
    /// the release s~.
    template <class Team, class WS, class Row>
    DPR_HD static auto round(const Params& p, const Team& team, const WS& ws, std::uint64_t t,
                             const Row& row) {
        const auto A = ws.real[0];
        const std::uint32_t n = p.dom.n;
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using UR = typename Team::template uni<R>;
        using UD = typename Team::template uni<double>;
        const auto U = A.row(kU), G = A.row(kG), S = A.row(kS);
        const UR inv = bco_detail::team_direction(team, p.dom, t, U, ws.dbl[0]);
        const UR f = bco_detail::play_and_query(
            team, p.dom, p.loss, p.zeta, p.alpha, inv, U, A.row(kXc), A.row(kX),
            [&](auto i) { return team.load(A.row(kCentre), i); }, row);
        const UR C(static_cast<R>(p.clip));
        const UR fc = select(f > C, C, select(f < -C, -C, f));
        const UR F = UR(static_cast<R>(static_cast<double>(p.n_eff) / p.zeta)) * fc;
        if (p.prefix.lattice) {
            // Lattice noise: v = F u held to ||v||_1 <= Delta_1 / 2 (Laplace nodes: mech::l1_clip_factor) or to
            // ||v||_2 <= Delta_2 / 2 (Gaussian nodes: mech::l2_clip_factor), rounded at random onto the lattice into
            // the exact sum E; g~ as without it (diagnostics). A NaN f_t (no loss family gives one) enters E as F = 0,
            // so that no release is NaN.
            using D = typename Team::template lanes<double>;
            const UR Fl = select(fc == fc, F, UR(R(0)));
            const bool l2 = p.prefix.noise == mech::NodeNoise::Gaussian;
            const auto a = team.template reduce<1, 0>(n, [&](auto i) {
                Contrib<V, 1, 0> c;
                const V v = V(Fl) * team.load(U, i);
                c.sum[0] = l2 ? v * v : vabs(v);
                return c;
            });
            const double u = sizeof(R) == 4 ? 0x1.0p-24 : 0x1.0p-53;
            const UD cf = l2 ? mech::l2_clip_factor(convert<double>(a.sum[0]), p.norms.y2, n, u)
                             : mech::l1_clip_factor(convert<double>(a.sum[0]), p.norms.y1, n, u);
            const auto E = ws.dbl[1];
            const auto s = static_cast<std::uint32_t>(t - 1);
            team.for_each(n, [&](auto i) {
                team.store(G, i, team.load(G, i) + V(F) * team.load(U, i));
                const V v = V(Fl) * team.load(U, i);
                const auto w = rng::coordinate_stream(team, rng::Purpose::Lattice, 1u, s, i).block(0).w[0];
                const D x = convert<double>(v) * D(cf);
                team.store(E, i, team.load(E, i) + noise::lattice_round(x, p.prefix.dlap.gamma, w));
            });
        } else {
            team.for_each(n, [&](auto i) { team.store(G, i, team.load(G, i) + V(F) * team.load(U, i)); });
        }
        const auto bump = [&](Slot k, const UD& v) { // diagnostics: rank 0, the largest value so far
            if (team.rank() == 0)
                team.put(ws.scalars, k, select(v > team.get(ws.scalars, k), v, team.get(ws.scalars, k)));
        };
        if (team.rank() == 0)
            team.put(ws.scalars, kClipped,
                     team.get(ws.scalars, kClipped) +
                         select(convert<double>(vabs(f)) > UD(p.clip * (1.0 + 1e-9)), UD(1.0), UD(0.0)));
        const std::uint64_t r = (t - 1) % p.batch; // FW steps taken in this batch before this round's
        const bool last = r + 1 == p.batch || t == p.T;
        if (t < p.T) {
            const UD gap = convert<double>(fw_step(p, team, ws, r));
            if (last) {
                if (team.rank() == 0) team.put(ws.scalars, kGapLast, gap);
                bump(kGapMax, gap);
            }
        }
        if (last) {
            const auto gq = team.template reduce<1, 0>(n, [&](auto i) {
                Contrib<V, 1, 0> c;
                const V g = team.load(G, i);
                c.sum[0] = g * g;
                team.store(S, i, team.load(S, i) + g);
                team.store(G, i, V(R(0)));
                return c;
            });
            const UD gq2 = convert<double>(gq.sum[0]);
            bump(kGradMax, vsqrt(gq2));
            if (team.rank() == 0) team.put(ws.scalars, kGradSq, team.get(ws.scalars, kGradSq) + gq2);
            // The distance of the batch's last play from D (graph sets: a bound, zeta, or 0 with shrink).
            const UD out =
                p.dom.has_projection()
                    ? vsqrt(convert<double>(domains::project_team(team, p.dom, A.row(kX), A.row(kV))))
                    : UD(p.alpha > 0.0 ? 0.0 : p.zeta);
            bump(kOutside, out);
            if (t < p.T) {
                team.for_each(n, [&](auto i) { team.store(A.row(kXc), i, team.load(A.row(kY), i)); });
                bump(kNoiseMax, convert<double>(release(p, team, ws, (t - 1) / p.batch + 1)));
            }
        }
        team.sync();
        const UD charged = convert<double>(f);
        return RoundCharge<UD>{charged, charged};
    }

    DPR_HD static void diagnostics(const Params& p, const double* s, double* out) {
        out[0] = s[kGapLast];
        out[1] = s[kGapMax];
        out[2] = s[kGradMax];
        out[3] = std::sqrt(s[kGradSq] / static_cast<double>(p.batches));
        out[4] = s[kOutside];
        out[5] = s[kClipped];
        if constexpr (kPrivate) out[6] = s[kNoiseMax];
    }
};

using PrivateBanditFw = BanditFw<true>;
using GarberKretzu = BanditFw<false>;

} // namespace dpr::learners
