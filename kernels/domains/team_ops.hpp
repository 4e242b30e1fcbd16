#pragma once
// The decision-set operations of kernels/domains/domain.hpp that a team-written learner (fkm) needs, over a
// Team (kernels/core/team.hpp) instead of one scalar array: the Euclidean projection onto the sets with
// has_projection() (l2 ball, cube, simplex, l1 ball, k-subsets), and which of those sets have a hyperplane as
// affine hull (the projection onto its parallel subspace subtracts the mean; fkm does that in its own pass).
// Values are lanes of the run's precision; arrays are the team's workspace views.
//
// Each function performs the operations of its scalar twin in domain.hpp in the same order, coordinate by
// coordinate and within each sum, so on a one-lane team (SerialTeam, instance lanes, a GPU thread per
// instance) in double it gives the scalar function's bits (tests/domains/test_team_ops.cpp); coordinate lanes
// and warp/block teams add in their own fixed order (docs/RANDOMNESS.md, tier (c)).
//
// The two iterative projections run per instance exactly as the scalar ones: Michelot's algorithm (simplex,
// l1 ball) and the bisection of the k-subsets shift stop in each instance at the pass where the scalar code
// stops, and a team keeps passing while any of its instances (lanes) has not stopped, leaving the stopped
// ones unchanged. So the number of passes is the largest over the lanes, never a fixed worst case.
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/core/team.hpp"
#include "kernels/domains/domain.hpp"

namespace dpr::domains {

/// Whether project_parallel() (domain.hpp) subtracts the mean: the sets whose affine hull is a hyperplane
/// sum x = const (simplex, k-subsets); identity for the other sets with a projection.
DPR_HD inline bool parallel_is_mean_free(const Domain& D) {
    return D.kind == DomainKind::Simplex || D.kind == DomainKind::KSubsets;
}

/// Writes out[i] = x(v) at every coordinate i, v = in[i], and returns sum_i (v - x(v))^2 (in index order
/// within a lane): the last pass of a projection, which also measures how far it moved the point.
template <class Team, class View, class F>
DPR_HD DPR_FORCEINLINE typename Team::template uni<typename Team::real>
write_moved(const Team& team, std::uint32_t n, const View& in, const View& out, F&& x_of) {
    using V = typename Team::template lanes<typename Team::real>;
    return team
        .template reduce<1, 0>(n,
                               [&](auto i) {
                                   Contrib<V, 1, 0> c;
                                   const V v = team.load(in, i);
                                   const V x = x_of(v);
                                   team.store(out, i, x);
                                   c.sum[0] = (v - x) * (v - x);
                                   return c;
                               })
        .sum[0];
}

/// out = the Euclidean projection of in onto D (D.has_projection(); in and out distinct views of n = D.n
/// coordinates): project() of domain.hpp for a team. Returns ||in - out||_2^2 (the distance from in to D,
/// squared).
template <class Team, class View>
DPR_HD typename Team::template uni<typename Team::real> project_team(const Team& team, const Domain& D,
                                                                     const View& in, const View& out) {
    using R = typename Team::real;
    using V = typename Team::template lanes<R>;
    using UR = typename Team::template uni<R>;
    const std::uint32_t n = D.n;
    if (D.kind == DomainKind::L2Ball) {
        const auto r = team.template reduce<1, 0>(n, [&](auto i) {
            Contrib<V, 1, 0> c;
            const V v = team.load(in, i);
            c.sum[0] = v * v;
            return c;
        });
        const R rad = static_cast<R>(D.radius), rad2 = static_cast<R>(D.radius * D.radius);
        const UR s = select(r.sum[0] > UR(rad2), UR(rad) / vsqrt(r.sum[0]), UR(R(1)));
        return write_moved(team, n, in, out, [&](const V& v) { return V(s) * v; });
    }
    if (D.kind == DomainKind::Cube) {
        return write_moved(team, n, in, out, [&](const V& v) {
            return select(v > V(R(1)), V(R(1)), select(v < V(R(-1)), V(R(-1)), v));
        });
    }
    if (D.kind == DomainKind::Simplex || D.kind == DomainKind::L1Ball) {
        // Michelot (domain.hpp detail::simplex_shift) on a_i = v_i (simplex) or |v_i| (l1 ball), mass 1 or r.
        // An l1-ball instance with ||v||_1 <= r is its own projection: its shift is 0 and it takes no pass.
        const bool l1 = D.kind == DomainKind::L1Ball;
        const R mass = l1 ? static_cast<R>(D.radius) : R(1);
        const auto abs_of = [&](const V& v) { return l1 ? vabs(v) : v; };
        const auto first = team.template reduce<1, 0>(n, [&](auto i) {
            Contrib<V, 1, 0> c;
            c.sum[0] = abs_of(team.load(in, i));
            return c;
        });
        const UR nr(static_cast<R>(n));
        auto done = UR(R(0)) != UR(R(0)); // false in every lane
        if (l1) done = first.sum[0] <= UR(mass);
        const auto inside = done; // l1 ball: the point is its own projection (copied, -0.0 included)
        UR tau = select(done, UR(R(0)), (first.sum[0] - UR(mass)) / nr);
        UR active = nr;
        while (!all(done)) {
            const auto r = team.template reduce<2, 0>(n, [&](auto i) {
                Contrib<V, 2, 0> c;
                const V a = abs_of(team.load(in, i));
                const auto above = a > V(tau);
                c.sum[0] = select(above, a, V(R(0)));
                c.sum[1] = select(above, V(R(1)), V(R(0)));
                return c;
            });
            // The scalar loop returns when the count no longer drops (c > active only by rounding at a tie).
            const auto stop = (r.sum[1] >= active) | (r.sum[1] == UR(R(0)));
            const auto move = !(done | stop);
            tau = select(move, (r.sum[0] - UR(mass)) / r.sum[1], tau);
            active = select(move, r.sum[1], active);
            done = done | stop;
        }
        return write_moved(team, n, in, out, [&](const V& v) {
            const V a = abs_of(v) - V(tau);
            const V pos = l1 ? select(v < V(R(0)), -a, a) : a;
            return select(inside, v, select(a > V(R(0)), pos, V(R(0))));
        });
    }
    // k-subsets: x = clip(v - tau, 0, 1), sum x = k (domain.hpp detail::capped_shift: bisection until both
    // ends split the coordinates alike, then the root of that linear piece).
    const R mass = static_cast<R>(D.k);
    const auto ends = team.template reduce<0, 2>(n, [&](auto i) {
        Contrib<V, 0, 2> c;
        const V v = team.load(in, i);
        c.max[0] = -v;
        c.max[1] = v;
        return c;
    });
    struct Split {
        UR capped, middle, sum_middle;
    };
    const auto split = [&](const UR& tau) {
        const auto r = team.template reduce<3, 0>(n, [&](auto i) {
            Contrib<V, 3, 0> c;
            const V v = team.load(in, i);
            const V a = v - V(tau);
            const auto capped = a >= V(R(1));
            const auto inside = !capped;
            const auto middle = inside & (a > V(R(0)));
            c.sum[0] = select(capped, V(R(1)), V(R(0)));
            c.sum[1] = select(middle, V(R(1)), V(R(0)));
            c.sum[2] = select(middle, v, V(R(0)));
            return c;
        });
        return Split{r.sum[0], r.sum[1], r.sum[2]};
    };
    const auto pick = [](const auto& m, const Split& x, const Split& y) {
        return Split{select(m, x.capped, y.capped), select(m, x.middle, y.middle),
                     select(m, x.sum_middle, y.sum_middle)};
    };
    UR lo = -ends.max[0] - UR(R(1)), hi = ends.max[1];
    Split a = split(lo), b = split(hi);
    UR tau = hi;
    auto done = UR(R(0)) != UR(R(0)); // false in every lane
    for (int it = 0; it < 100; ++it) {
        const auto live = !done;
        const auto linear = live & (a.capped == b.capped) & (a.middle == b.middle) & (b.middle > UR(R(0)));
        tau = select(linear, ((b.sum_middle + b.capped) - UR(mass)) / b.middle, tau);
        done = done | linear;
        if (all(done)) break;
        const UR mid = UR(R(0.5)) * (lo + hi);
        const Split m = split(mid);
        const auto right =
            (m.sum_middle - m.middle * mid) + m.capped > UR(mass); // f(mid) > mass: the root is right
        const auto left = !right;
        const auto up = live & right, down = live & left;
        lo = select(up, mid, lo);
        a = pick(up, m, a);
        hi = select(down, mid, hi);
        b = pick(down, m, b);
    }
    tau = select(done, tau, UR(R(0.5)) * (lo + hi)); // breakpoints too close for 100 halvings: the midpoint
    return write_moved(team, n, in, out, [&](const V& v) {
        V x = v - V(tau);
        x = select(x > V(R(0)), x, V(R(0)));
        return select(x > V(R(1)), V(R(1)), x);
    });
}

} // namespace dpr::domains
