#pragma once
// The exponential mechanism over n candidates (docs/spec/model.md §1.7), for losses (lower is better):
//     Pr[i] = exp(-c s(i)) / sum_j exp(-c s(j)),     c = eps / (2 Delta_s)  (eps-DP for a Delta_s-sensitive s)
// AFKT23 Alg. 1 uses c = eta/2 (eta-DP for a 1-sensitive score), Alg. 5 c = eta (2 eta-DP in general, §4
// item 15). c = 0 is the uniform law; c = inf is the limit: uniform over the minimisers of s.
//
// Sampling: Gumbel-max (Gumbel 1954; e.g. Papandreou & Yuille 2011, Vieira's "Gumbel-max trick"):
//     i* = argmin_i ( c s(i) - G_i ),    G_i = -ln(-ln U_i) iid standard Gumbel,
// is distributed exactly as above (for any c, with no normalisation, so no overflow for any score scale).
// One pass over the candidates with a team argmin (kernels/core/team.hpp: fixed reduction order, ties to the
// lowest index), O(n) work and O(1) state: no prefix scan and no scratch row, on every team (CPU lanes; GPU thread, warp, block), for n up to
// 2^32 - 1 (the argmin index is 32-bit). For c = inf a first pass finds min s; the key is then -G_i on the
// minimisers and +inf elsewhere (uniform over the minimisers, never inf * 0).
//
// Randomness: U_i is the open 53-bit uniform 0 (kernels/rng/lanes.hpp) of the stream (purpose, sub, round,
// element i) of the instance -- DOUBLE in both precisions, so that the law does not depend on [run] precision
// beyond the rounding of the key c s(i) - G_i to the team's precision R (float runs compare keys in float:
// candidates whose keys differ by less than one float ulp are ordered by index; the tests of the law run in
// double). G_i = -ln(-ln U_i) in double: the largest Gumbel reachable is -ln(-ln(1 - 2^-53)) = 36.7, which
// n = 2^20 Gumbels exceed with probability < 2^20 e^-36.7 < 1e-9 (53-bit uniforms make the truncation
// irrelevant at any n the engine reaches).
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/core/team.hpp"
#include "kernels/core/vmath.hpp"
#include "kernels/rng/lanes.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::mech {

/// The address of one exponential-mechanism draw of an instance: (purpose, sub, round); element = candidate.
struct ExpMechDraw {
    rng::Purpose purpose = rng::Purpose::Exponential;
    std::uint32_t sub = 0;   ///< < rng::kMaxSub (a compile-time constant of the caller)
    std::uint32_t round = 0; ///< the round whose decision the draw makes: unique per draw of an instance
};

/// The standard Gumbel G_i of candidate(s) `idx` of the team's instance(s) for `draw` (double lanes).
template <class Team, class Idx>
DPR_HD DPR_FORCEINLINE typename Team::template lanes<double> gumbel(const Team& team, const ExpMechDraw& draw, Idx idx) {
    using U = typename Team::template lanes<std::uint32_t>;
    using D = typename Team::template lanes<double>;
    const RngKey key = team.key();
    const rng::LaneStream<U> s{key.seed, key.stream, U(team.instance()), draw.purpose, draw.sub, draw.round,
                               team.element(idx)};
    D u[4];
    rng::uniforms4<double>(s, 0, u);
    return -vlog(-vlog(u[0]));
}

/// One draw i ~ Pr[i] ∝ exp(-c s(i)) over i in [0, n) (n >= 1) per instance of the team; c in [0, inf].
/// `score(idx)` gives s at the team index idx as lanes of Team::real (finite). Every member gets the index.
template <class Team, class Score>
DPR_HD DPR_FORCEINLINE typename Team::template uni<std::uint32_t>
exponential_mechanism(const Team& team, std::uint32_t n, double c, const ExpMechDraw& draw, Score&& score) {
    using R = typename Team::real;
    using V = typename Team::template lanes<R>;
    if (std::isinf(c)) {
        const auto lo = team.template reduce<0, 1>(n, [&](auto i) {
            Contrib<V, 0, 1> k;
            k.max[0] = -score(i);
            return k;
        });
        const auto smin = -lo.max[0];
        team.sync(); // the slots of the reduction are reused below
        return team.template argmin<0>(n, [&](auto i) {
                       ArgContrib<V, 0> k;
                       const V g = convert<R>(gumbel(team, draw, i));
                       k.key = select(score(i) == V(smin), -g, V(std::numeric_limits<R>::infinity()));
                       return k;
                   }).arg;
    }
    const typename Team::template lanes<double> cd(c);
    return team.template argmin<0>(n, [&](auto i) {
               ArgContrib<V, 0> k;
               k.key = convert<R>(cd * convert<double>(score(i)) - gumbel(team, draw, i));
               return k;
           }).arg;
}

/// The exponential mechanism with equal scores: a uniform candidate of [0, n), drawn from the same Gumbels
/// (an initial or restarted expert: AFKT23 Algorithms 2 and 5).
template <class Team>
DPR_HD DPR_FORCEINLINE typename Team::template uni<std::uint32_t> uniform_candidate(const Team& team, std::uint32_t n,
                                                                                  const ExpMechDraw& draw) {
    using R = typename Team::real;
    using D = typename Team::template lanes<double>;
    return exponential_mechanism(team, n, 0.0, draw, [](auto) { return convert<R>(D(0.0)); });
}

} // namespace dpr::mech
