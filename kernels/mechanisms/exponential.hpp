#pragma once
// The exponential mechanism over n candidates (docs/spec/model.md §1.7), for losses (lower is better):
//     Pr[i] = exp(-c s(i)) / sum_j exp(-c s(j)),     c = eps / (2 Delta_s)  (eps-DP for a Delta_s-sensitive
//     s)
// AFKT23 Alg. 1 uses c = eta/2 (eta-DP for a 1-sensitive score), Alg. 5 c = eta (2 eta-DP in general, §4
// item 15). c = 0 is the uniform law; c = inf is the limit: uniform over the minimisers of s.
//
// Sampling: inverse CDF with one exp per candidate. With m = min_j s(j) (a first pass; exact in any order),
//     w(i) = exp(-c (s(i) - m))  in (0, 1],  S = sum_i w(i) >= 1,  i* = the first i with u S < w(0) + ... +
//     w(i),
// u one open 53-bit uniform per draw; all in double in both precisions (the float run's scores are rounded to
// float, nothing else), so no overflow for any score scale and the law is that of the exact weights up to
// their double rounding (a weight below e^-745 of the largest is 0: probability < 1e-323). The running sums
// are formed by the team's categorical_scaled (kernels/core/team.hpp): in index order on one-lane and
// instance-lane teams -- the same bits as a scalar loop over the same weights, so an instance that draws from
// a CDF prepared once for all instances (shared scores) gets the same index -- and block by block on
// coordinate-lane teams (CPU SIMD, GPU warp and block), which can change a draw only when u S falls within
// rounding of a running sum. c = 0: every weight is 1, i* = floor(u n) with no pass. c = inf: w(i) = 1 on the
// minimisers, 0 elsewhere (uniform over them). Cost: a min pass, then two passes of one exp each (the sum,
// then the scan up to i*); no RNG per candidate. (Until 2026-11 the draw was Gumbel-max, argmin_i c s(i) -
// G_i with one Philox block and two logs per candidate: the same law, different draws for a given seed:
// docs/RANDOMNESS.md.)
//
// Randomness: u is the open 53-bit uniform 0 (kernels/rng/lanes.hpp) of the stream (purpose, sub, round,
// element 0) of the instance. gumbel() below (tree-experts' Gumbel-top-B selection) draws G_i = -ln(-ln U_i)
// from (purpose, sub, round, element i), U_i its uniform 0.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

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
DPR_HD DPR_FORCEINLINE typename Team::template lanes<double> gumbel(const Team& team, const ExpMechDraw& draw,
                                                                    Idx idx) {
    using D = typename Team::template lanes<double>;
    const auto s = rng::coordinate_stream(team, draw.purpose, draw.sub, draw.round, idx);
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
    using D = typename Team::template lanes<double>;
    using UI = typename Team::template uni<std::uint32_t>;
    const auto u = rng::instance_uniform<double>(team, draw.purpose, draw.sub, draw.round, std::uint32_t{0});
    if (c == 0.0) {
        // Every weight is 1, so the running sums are the integers 1..n and the scan's answer is floor(u n)
        // (n - 1 if u n rounds up to n): the same index without the pass.
        const UI i = convert<std::uint32_t>(u * static_cast<double>(n));
        return select(i < UI(n), i, UI(n - 1));
    }
    const auto lo = team.template reduce<0, 1>(n, [&](auto i) {
        Contrib<V, 0, 1> k;
        k.max[0] = -score(i);
        return k;
    });
    const auto smin = -lo.max[0];
    team.sync();       // the slots of the reduction are reused below
    if (std::isinf(c)) // the limit: uniform over the minimisers
        return team.categorical_scaled(
            n, [&](auto i) { return select(score(i) == V(smin), D(1.0), D(0.0)); }, u);
    const D m(convert<double>(smin)), neg_c(-c);
    return team.categorical_scaled(
        n, [&](auto i) { return vexp(neg_c * (convert<double>(score(i)) - m)); }, u);
}

/// The draw of exponential_mechanism at coefficient c > 0 from the CDF that exp_mech_cdf prepared: the same
/// index, with one uniform and a binary search per instance (O(log n) instead of O(n)).
template <class Team>
DPR_HD DPR_FORCEINLINE typename Team::template uni<std::uint32_t>
exp_mech_from_cdf(const Team& team, std::uint32_t n, const double* cdf, const ExpMechDraw& draw) {
    using UD = typename Team::template uni<double>;
    using UI = typename Team::template uni<std::uint32_t>;
    const UD u = rng::instance_uniform<double>(team, draw.purpose, draw.sub, draw.round, std::uint32_t{0});
    auto search = [&](double x) -> std::uint32_t {
        if (!(cdf[n - 1] > 0.0)) return 0u; // no positive weight (non-finite scores): the scan's answer too
        const double target = x * cdf[n - 1];
        std::uint32_t lo = 0, hi = n - 1; // the first i with target < cdf[i]: exists, as target < cdf[n - 1]
        while (lo < hi) {
            const std::uint32_t mid = lo + (hi - lo) / 2;
            if (target < cdf[mid])
                hi = mid;
            else
                lo = mid + 1;
        }
        return lo;
    };
    if constexpr (std::is_same<UD, double>::value) {
        return search(u);
    } else {
        UI r;
        for (int l = 0; l < Team::kWidth; ++l) r.set(l, search(u[l]));
        return r;
    }
}

/// ln sum_i exp(-c s(i)) from the CDF of exp_mech_from_cdf (c in (0, inf)): its last running sum is
/// sum_i exp(-c (s(i) - m)) and cdf[n] holds m = min s (host/cpu/cpu_teams.hpp exp_mech_cdf), so the log of
/// the total weight is -c m + ln cdf[n - 1] -- what a one-lane team computes as the max-shifted log-sum-exp
/// of the same double weights in index order (potential-svt-experts' log potential;
/// tests/engine/test_shared_draw.cpp).
DPR_HD DPR_FORCEINLINE double exp_mech_log_total(const double* cdf, std::uint32_t n, double c) {
    return -c * cdf[n] + vlog(cdf[n - 1]);
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
