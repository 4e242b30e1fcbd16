#pragma once
// FTRL with the squared-l2 regulariser = lazy projected online gradient descent (ALGORITHMS.md C8
// "Lazy OGD / FTRL-L2"), the non-private twin of DP-FTRL over the sphere and the cube (A1 table, rows
// "Sphere" and "Cube"; §3.2 "A1, noise off = non-private FTRL"):
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
#include <cmath>
#include <cstdint>

#include "kernels/core/math.hpp"
#include "kernels/learners/common.hpp"

namespace dpr::learners {

DPR_HD DPR_FORCEINLINE double clip_unit(double v) {
    return v < -1.0 ? -1.0 : (v > 1.0 ? 1.0 : v);
}

/// Default learning rate of the A1 table: 1/sqrt(T) (sphere), sqrt(d/T) (cube).
template <Geometry G>
inline double l2_default_eta(std::uint32_t d, std::uint64_t T) {
    static_assert(G == Geometry::Ball || G == Geometry::Cube, "R = ||x||^2 rows: ball or cube");
    const double t = static_cast<double>(T);
    return G == Geometry::Ball ? 1.0 / std::sqrt(t) : std::sqrt(static_cast<double>(d) / t);
}

/// One lazy projected step, streamed over the coordinates of u (= L~_{t-1} or L_{t-1}) with the loss
/// l_t, returning <l_t, x_t> for x_t = Proj_X(-h u), h = eta / 2, without materialising x_t:
///   ball  <l, x> = -h <l, u> / max(1, h ||u||_2)    (two team sums: <l, u> and ||u||^2)
///   cube  <l, x> = sum_i l_i clip(-h u_i, -1, 1)     (one team sum)
/// Each lane pushes its own coordinates; finish() combines the lanes (fixed order, DESIGN.md §4).
template <Geometry G>
struct LazyL2Step {
    static_assert(G == Geometry::Ball || G == Geometry::Cube, "R = ||x||^2 rows: ball or cube");
    double h;       ///< eta / 2
    double a = 0.0; ///< ball: sum l_i u_i; cube: sum l_i x_i
    double b = 0.0; ///< ball: sum u_i^2

    DPR_HD explicit LazyL2Step(double half_eta) : h(half_eta) {}

    DPR_HD DPR_FORCEINLINE void push(double u, double l) {
        if constexpr (G == Geometry::Ball) {
            a += l * u;
            b += u * u;
        } else {
            a += l * clip_unit(-h * u);
        }
    }

    template <class Team>
    DPR_HD double finish(Team& team) const {
        if constexpr (G == Geometry::Ball) {
            const double lu = team.sum(a);
            const double uu = team.sum(b);
            return -h * lu / dmax(1.0, h * std::sqrt(uu));
        } else {
            return team.sum(a);
        }
    }
};

/// Writes x = Proj_X(-h u) into x[0..d) (u(i) gives coordinate i), explicitly: the point that
/// LazyL2Step charges. For tests and inspection (the learners' play()); not on the hot path.
template <Geometry G, class Team, class U>
DPR_HD void lazy_l2_point(Team& team, std::uint32_t d, double h, U&& u, double* x) {
    if constexpr (G == Geometry::Ball) {
        double sq = 0.0;
        team.for_each(d, [&](std::uint32_t i) {
            x[i] = u(i);
            sq += x[i] * x[i];
        });
        const double m = dmax(1.0, h * std::sqrt(team.sum(sq)));
        team.for_each(d, [&](std::uint32_t i) { x[i] = -h * x[i] / m; });
    } else {
        team.for_each(d, [&](std::uint32_t i) { x[i] = clip_unit(-h * u(i)); });
    }
}

template <Geometry G>
struct FtrlL2 {
    static_assert(G == Geometry::Ball || G == Geometry::Cube, "ftrl-l2 plays in the ball or the cube");
    static constexpr const char* kName = G == Geometry::Ball ? "ftrl-l2-ball" : "ftrl-l2-cube";
    static constexpr Geometry kGeometry = G;
    static constexpr KeySpec kKeys[] = {
        {"eta", KeyType::Real, "auto", 0.0, kInf, "",
         G == Geometry::Ball ? "learning rate; auto = 1/sqrt(T) (ALGORITHMS.md A1 table, sphere row)"
                             : "learning rate; auto = sqrt(d/T) (ALGORITHMS.md A1 table, cube row)",
         true},
    };
    static constexpr int kEta = key_index(kKeys, "eta");

    struct Params {
        std::uint32_t d;
        std::uint64_t T;
        double eta;
    };

    static double default_eta(std::uint32_t d, std::uint64_t T) { return l2_default_eta<G>(d, T); }
    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{pb.d, pb.T, kv.get(kEta, default_eta(pb.d, pb.T))};
    }
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
    static PrivacyReport privacy(const Params&) { return PrivacyReport{}; }

    DPR_HD static std::uint64_t workspace(const Params& p) { return p.d; } // L_{t-1}

    template <class Team>
    DPR_HD static void init(const Params& p, const InstanceCtx&, Team& team, double* ws) {
        team.for_each(p.d, [&](std::uint32_t i) { ws[i] = 0.0; });
    }

    /// x_t (call before round(t)): Proj_X(-(eta/2) L_{t-1}).
    template <class Team>
    DPR_HD static void play(const Params& p, const InstanceCtx&, Team& team, const double* ws, std::uint64_t,
                            double* x) {
        lazy_l2_point<G>(
            team, p.d, 0.5 * p.eta, [&](std::uint32_t i) { return ws[i]; }, x);
    }

    template <class Team>
    DPR_HD static RoundResult round(const Params& p, const InstanceCtx&, Team& team, double* ws,
                                    std::uint64_t, const double* loss) {
        double* L = ws;
        LazyL2Step<G> step(0.5 * p.eta);
        team.for_each(p.d, [&](std::uint32_t i) {
            const double li = loss[i];
            step.push(L[i], li);
            L[i] += li;
        });
        const double e = step.finish(team);
        return RoundResult{e, e};
    }
};

using FtrlL2Ball = FtrlL2<Geometry::Ball>;
using FtrlL2Cube = FtrlL2<Geometry::Cube>;

} // namespace dpr::learners
