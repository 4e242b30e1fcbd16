#pragma once
// FTRL with the squared-l2 regulariser = lazy projected online gradient descent (docs/spec/afkt23.md §C8
// "Lazy OGD / FTRL-L2"), the non-private twin of DP-FTRL over the sphere and the cube (AS17 Cor. 3.2 table,
// rows "Sphere" and "Cube", docs/spec/as17.md §A1; docs/spec/checks.md §3.2 "A1, noise off = non-private
// FTRL"):
//   x_t = argmin_{x in X} eta <x, L_{t-1}> + ||x||_2^2 = Proj_X(-(eta/2) L_{t-1}),   L_{t-1} = sum_{s<t} l_s,
// charged the expected loss <l_t, x_t> (deterministic play: realised = expected).
//
// The decision set is a compile-time constant of a learner (the host pairs it with the adversary's
// loss set), so the one template below is registered twice:
//   ftrl-l2-ball   X = unit l2 ball,   Y = unit l2 ball, eta = 1/sqrt(T)   x_t = y / max(1, ||y||_2)
//   ftrl-l2-cube   X = [-1,1]^d,       Y = unit l1 ball, eta = sqrt(d/T)   x_t = clip(y, -1, 1)
// with y = -(eta/2) L_{t-1}. Regret <= D_R/eta + 2 eta sum_t max_x (||l_t||*)^2 with D_R = 1 (ball) or
// d (cube) and (||l||*)^2 = ||l||_2^2 / 2 <= 1/2 (A1 Cor. 3.2 derivation notes): 2 sqrt(T) (ball),
// 2 sqrt(dT) (cube) at the default eta.
//
// LazyL2Step is the step itself, shared with DP-FTRL (kernels/learners/dp_ftrl_olo.hpp): fed the same
// u = L_{t-1} the two learners perform the same floating-point operations, which is why DP-FTRL with
// noise off has bitwise the same regret as this twin (tests/learners/test_as17_fullinfo.cpp).
//
// eta = inf is the limit of the projection, x_t = -u/||u||_2 (ball; 0 at u = 0) and x_t = -sign(u) (cube),
// computed without forming inf * 0; any eta in [0, inf] gives a finite charge.

#include "kernels/core/lanes.hpp"
#include "kernels/learners/common.hpp"

namespace dpr::learners {

/// Default learning rate of the A1 table: 1/sqrt(T) (sphere), sqrt(d/T) (cube).
template <Geometry G>
inline double l2_default_eta(std::uint32_t d, std::uint64_t T) {
    static_assert(G == Geometry::Ball || G == Geometry::Cube, "R = ||x||^2 rows: ball or cube");
    const double t = static_cast<double>(T);
    return G == Geometry::Ball ? 1.0 / std::sqrt(t) : std::sqrt(static_cast<double>(d) / t);
}

/// sign(v) in {-1, 0, 1}, lane by lane.
template <class V>
DPR_HD DPR_FORCEINLINE V lane_sign(V v) {
    using R = lane_scalar_t<V>;
    return select(v > V(R(0)), V(R(1)), select(v < V(R(0)), V(R(-1)), V(R(0))));
}

/// One lazy projected step x_t = Proj_X(-h u), h = eta / 2, charged <l_t, x_t> without materialising x_t:
///   ball  <l, x> = -h <l, u> / max(1, h ||u||_2) = -<l, u> / max(1/h, ||u||_2)   (sums <l, u>, ||u||^2)
///   cube  <l, x> = sum_i l_i clip(-h u_i, -1, 1)                                   (one sum)
/// The ball's second form is finite for every h in [0, inf]; h = inf plays -u/||u|| (0 at u = 0), the cube
/// -sign(u).
template <Geometry G>
struct LazyL2Step {
    static_assert(G == Geometry::Ball || G == Geometry::Cube, "R = ||x||^2 rows: ball or cube");
    static constexpr int kSums = G == Geometry::Ball ? 2 : 1;

    /// The coordinate's terms of the sums, into c.sum[0 .. kSums).
    template <class V, class C>
    DPR_HD DPR_FORCEINLINE static void push(C& c, V u, V l, double h) {
        using R = lane_scalar_t<V>;
        if constexpr (G == Geometry::Ball) {
            c.sum[0] = l * u;
            c.sum[1] = u * u;
        } else if (std::isinf(h)) {
            c.sum[0] = -(l * lane_sign(u));
        } else {
            c.sum[0] = l * vmin(vmax(V(static_cast<R>(-h)) * u, V(R(-1))), V(R(1)));
        }
    }

    /// <l_t, x_t> from the sums (per instance).
    template <class U>
    DPR_HD DPR_FORCEINLINE static U finish(const U* sums, double h) {
        using R = lane_scalar_t<U>;
        if constexpr (G == Geometry::Ball) {
            const U lu = sums[0], nu = vsqrt(sums[1]);
            const U den = vmax(U(static_cast<R>(1.0 / h)), nu);
            return select(den > U(R(0)), -lu / den, U(R(0)));
        } else {
            return sums[0];
        }
    }
};

/// Writes x = Proj_X(-h u) into x[0..d) (u(i) gives coordinate i as a double), explicitly: the point that
/// LazyL2Step charges, for tests and inspection (one-lane teams).
template <Geometry G, class U>
inline void lazy_l2_point(std::uint32_t d, double h, U&& u, double* x) {
    if constexpr (G == Geometry::Ball) {
        double sq = 0.0;
        for (std::uint32_t i = 0; i < d; ++i) {
            x[i] = u(i);
            sq += x[i] * x[i];
        }
        const double den = dmax(1.0 / h, std::sqrt(sq));
        for (std::uint32_t i = 0; i < d; ++i) x[i] = den > 0.0 ? -x[i] / den : 0.0;
    } else {
        for (std::uint32_t i = 0; i < d; ++i) {
            const double v = u(i);
            x[i] = std::isinf(h) ? (v > 0 ? -1.0 : (v < 0 ? 1.0 : 0.0)) : (-h * v < -1.0 ? -1.0 : (-h * v > 1.0 ? 1.0 : -h * v));
        }
    }
}

template <Geometry G>
struct FtrlL2 {
    static_assert(G == Geometry::Ball || G == Geometry::Cube, "ftrl-l2 plays in the ball or the cube");
    static constexpr const char* kName = G == Geometry::Ball ? "ftrl-l2-ball" : "ftrl-l2-cube";
    static constexpr Geometry kGeometry = G;
    static constexpr KeySpec kKeys[] = {
        {"eta", KeyType::Real, "auto", 0.0, kInf, "",
         G == Geometry::Ball ? "learning rate; auto = 1/sqrt(T) (AS17 Cor. 3.2, sphere; docs/spec/as17.md §A1)"
                             : "learning rate; auto = sqrt(d/T) (AS17 Cor. 3.2, cube; docs/spec/as17.md §A1)",
         true},
    };
    static constexpr int kEta = key_index(kKeys, "eta");

    struct Params : Dims {
        double eta;
    };

    static double default_eta(std::uint32_t d, std::uint64_t T) { return l2_default_eta<G>(d, T); }
    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{dims(pb), kv.get(kEta, default_eta(pb.d, pb.T))};
    }
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
    static PrivacyReport privacy(const Params&) { return PrivacyReport{}; }

    static constexpr bool kInstanceLanes = true;

    /// L_{t-1} (double).
    DPR_HD static WorkspaceSpec workspace(const Params& p) { return WorkspaceSpec{}.add_double(1, p.d); }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using D = typename Team::template lanes<double>;
        team.for_each(p.d, [&](auto i) { team.store(ws.dbl[0], i, D(0.0)); });
    }

    /// x_t (call before round(t)): Proj_X(-(eta/2) L_{t-1}). One-lane teams (tests, inspection).
    template <class Team, class WS>
    static void play(const Params& p, const Team& team, const WS& ws, std::uint64_t, double* x) {
        lazy_l2_point<G>(p.d, 0.5 * p.eta, [&](std::uint32_t i) { return team.load(ws.dbl[0], i); }, x);
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t, const Row& row) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using Step = LazyL2Step<G>;
        const auto L = ws.dbl[0];
        const double h = 0.5 * p.eta;
        const auto s = team.template reduce<Step::kSums, 0>(p.d, [&](auto i) {
            Contrib<V, Step::kSums, 0> c;
            Step::push(c, convert<R>(team.load(L, i)), team.loss(row, i), h);
            team.store(L, i, team.load(L, i) + team.loss_exact(row, i));
            return c;
        });
        const auto e = convert<double>(Step::finish(s.sum, h));
        return {e, e};
    }
};

using FtrlL2Ball = FtrlL2<Geometry::Ball>;
using FtrlL2Cube = FtrlL2<Geometry::Cube>;

} // namespace dpr::learners
