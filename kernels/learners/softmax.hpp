#pragma once
// The expected loss of an exponential-weights play, <l_t, x_t> with x_t(i) ∝ exp(-eta u(i)), computed
// branch-free in two passes over the coordinates (written once over the Team concept, kernels/core/team.hpp):
//   pass 1   u(i) for every coordinate, kept in a row of scratch; u_min = min_i u(i); L += l (exact, after
//            u(i) has read L_{t-1}: one pass over the double state instead of two)
//   pass 2   w(i) = exp(-eta (u(i) - u_min)) in (0, 1];  <l, x> = sum w l / sum w
// Subtracting the minimum inside the product keeps every exponent in [-inf, 0]: no overflow for any noise
// scale and any eta in [0, inf] (docs/spec/checks.md §5 "always subtract the max"), and eta = inf is the limit,
// Follow The Leader: w(i) = 1 where u(i) = u_min, else 0 (ties split evenly), never inf * 0. A NaN u
// propagates to the result (so a broken input is reported, not hidden). One exp per coordinate.
// Scores are in the run's precision R; the cumulative losses L stay exact doubles.
#include <cmath>
#include <cstdint>

#include "kernels/core/lanes.hpp"
#include "kernels/core/team.hpp"
#include "kernels/core/vmath.hpp"

namespace dpr::learners {

/// <l_t, x_t> for x_t ∝ exp(-eta u), u(idx) giving lanes of R, then L(i) += l_t(i) (exact; see `add`). `scratch` is a
/// row of d values of R of the workspace.
/// `add(i, L(i), l_t(i))` gives the new L(i): L(i) + l_t(i), or the prefix mechanism's accumulate (lattice noise).
template <class Team, class ScratchView, class Row, class U, class LView, class Add>
DPR_HD DPR_FORCEINLINE typename Team::template uni<double>
softmax_experts(const Team& team, std::uint32_t d, double eta, const ScratchView& scratch, const Row& row, U&& u,
                const LView& L, Add&& add) {
    using R = typename Team::real;
    using V = typename Team::template lanes<R>;
    const auto up = team.template reduce<0, 1>(d, [&](auto i) {
        const V ui = u(i);
        team.store(scratch, i, ui);
        team.store(L, i, add(i, team.load(L, i), team.loss_exact(row, i)));
        Contrib<V, 0, 1> c;
        c.max[0] = -ui;
        return c;
    });
    const auto umin = -up.max[0];
    const bool ftl = std::isinf(eta);
    const V neta(static_cast<R>(-eta));
    const auto s = team.template reduce<2, 0>(d, [&](auto i) {
        const V dev = team.load(scratch, i) - umin; // >= 0
        const V w = ftl ? select(dev == V(R(0)), V(R(1)), V(R(0))) : vexp(neta * dev);
        Contrib<V, 2, 0> c;
        c.sum[0] = w;
        c.sum[1] = w * team.loss(row, i);
        return c;
    });
    return convert<double>(s.sum[1] / s.sum[0]);
}

/// The same for scores that are the cumulative losses themselves, u(i) = L_{t-1}(i) in precision R (Hedge): no
/// row of scratch. Pass 1 only reads L (u_min); pass 2 reads L again, recomputes the same u(i), and adds l_t.
/// The same operations on the same values in the same order as softmax_experts with that u, so the same bits,
/// with d fewer values of state per instance and no stores in pass 1: on a GPU the state then fits on chip for
/// more instances, and the loads of pass 1 are free to overlap (docs/GPU.md "State on chip").
template <class Team, class Row, class LView>
DPR_HD DPR_FORCEINLINE typename Team::template uni<double>
softmax_of_cumulative(const Team& team, std::uint32_t d, double eta, const Row& row, const LView& L) {
    using R = typename Team::real;
    using V = typename Team::template lanes<R>;
    const auto up = team.template reduce<0, 1>(d, [&](auto i) {
        Contrib<V, 0, 1> c;
        c.max[0] = -convert<R>(team.load(L, i));
        return c;
    });
    const auto umin = -up.max[0];
    const bool ftl = std::isinf(eta);
    const V neta(static_cast<R>(-eta));
    const auto s = team.template reduce<2, 0>(d, [&](auto i) {
        const auto Li = team.load(L, i);
        const V dev = convert<R>(Li) - umin; // >= 0
        const V w = ftl ? select(dev == V(R(0)), V(R(1)), V(R(0))) : vexp(neta * dev);
        team.store(L, i, Li + team.loss_exact(row, i));
        Contrib<V, 2, 0> c;
        c.sum[0] = w;
        c.sum[1] = w * team.loss(row, i);
        return c;
    });
    return convert<double>(s.sum[1] / s.sum[0]);
}

} // namespace dpr::learners
