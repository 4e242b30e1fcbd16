#pragma once
// net-oco: AFKT23 Theorem 3 (docs/spec/afkt23.md §C5), private online convex optimisation over the unit l2 ball by
// running the adaptive sparse-vector algorithm (Algorithm 2, adaptive_svt_experts.hpp; the proof of Thm 3
// invokes Thm 2, §4 item 16) on the experts of a rho-net {x^1, ..., x^M} of the ball, in dimension d in {1, 2}.
//
// The losses are the engine's Ball losses: l_t(x) = <g_t, x> with ||g_t||_2 <= 1 (kind = "unit-vectors",
// "drifting", "file-ball"), which are convex and 1-Lipschitz on the ball. Expert i's loss is the shifted,
// halved loss at its net point,
//     f_t(i) = (1 + <g_t, x^i>) / 2  in [0, 1],    F_{t-1}(i) = ((t - 1) + <G_{t-1}, x^i>) / 2,
// (non-negative as Thm 3 needs; the shift changes no regret, the halving makes a replaced g_t move each
// expert's loss by at most 1: the experts' sensitivity is that of AFKT23's experts), with G_{t-1} = sum_{s<t} g_s
// from the engine (kReadsCumulative): the net's M cumulative losses are never stored. The engine books
// <g_t, x_t> and the regret against the best point of the whole ball, -||G_T||_2, so the regret reported
// includes the net's discretisation, at most T L rho = T rho (Thm 3's proof: |L* - L*_net| <= T L rho).
// drifting with noise_scale = 0 (g_t = theta every round) is the realizable case: f(x*) = 0 at x* = -theta.
//
// The net (every point of the ball is within rho of a net point):
//   d = 1   M = ceil(1/rho) + 1 points -1 + i h, h = 2/(M - 1) <= 2 rho
//   d = 2   the n x n grid of [-1, 1]^2 with spacing h = 2/(n - 1) <= sqrt(2) rho, n = ceil(sqrt(2)/rho) + 1,
//           each point projected onto the ball (x / max(1, ||x||)); M = n^2. A ball point is within h/sqrt(2)
//           <= rho of a grid point, and the projection onto the ball does not increase that distance.
//   rho = auto: 1/(L T) = 1/T (Thm 3 with L = 1): M = T + 1 (d = 1), ~2 T^2 (d = 2).
// A switch is one exponential-mechanism pass over the M net points (O(M)); a round is O(d).
// Privacy: Algorithm 2's, eps (AFKT23 Thm 2; docs/spec/afkt23.md §C2): the experts' losses are 1-sensitive in g_t.
// Exact samplers (noise = "discrete-laplace", the float default where they apply; afkt23.md §C5 "Exact samplers"):
// Algorithm 2's (adaptive_svt_experts.hpp) with this view's bounds. The expert i is the net point x^i as computed
// (a fixed point: the computation does not read the data), whose norm is at most 1 + 16 u (u = 2^-53: the grid's
// two roundings, the projection's square root and division); with ||g_t|| <= 1 + 1e-12 (the slack the engine allows
// a Ball row) the exact F_{t-1}(i) moves by at most nu = (1 + 1e-12)(1 + 16 u) between neighbours
// (|<g - g', x^i>| / 2 <= 2 nu / 2). The computed F_{t-1}(i) is within
// (T^2 u + 3 T u) 1.001 of it: the engine's G_{t-1} within T^2 u per coordinate (sqrt 2 T^2 u nu / 2 in the dot
// product), the dot product's two roundings and the sum with t - 1 (below 2.6 T u after the halving). The phase
// loss is clamped to [0, 1] before its lattice rounding, so the sparse vector's queries stay 1-sensitive.
// Diagnostics: Algorithm 2's (switches, doublings, final_lbar, svt_fires).

#include "kernels/core/lanes.hpp"
#include "kernels/learners/adaptive_svt_experts.hpp"
#include "kernels/learners/common.hpp"

namespace dpr::learners {

/// The experts of net-oco: the points of a rho-net of the unit ball in R^1 or R^2.
struct BallNetExperts : Learner<Geometry::Ball> {
    static constexpr const char* kName = "net-oco";
    static constexpr KeySpec kKeys[] = {
        kAdaptiveKeys[0], kAdaptiveKeys[1], kAdaptiveKeys[2], kAdaptiveKeys[3], kAdaptiveKeys[4],
        {"rho", KeyType::Real, "auto", 0.0, 1.0, "",
         "net radius: every point of the ball is within rho of a net point; auto = 1/T (Thm 3, L = 1); the regret "
         "includes up to T rho of discretisation; M = ceil(1/rho) + 1 (d = 1) or (ceil(sqrt 2/rho) + 1)^2 (d = 2) "
         "experts, one O(M) pass per switch",
         true},
        kExactSamplersKey,
    };
    static constexpr int kRho = key_index(kKeys, "rho");
    /// The exact samplers' key (AdaptiveSvt), with the bounds on the computed scores below.
    static constexpr int kNoiseKey = key_index(kKeys, "noise");
    static constexpr double kMaxExperts = 2147483648.0; ///< 2^31: the argmin index is 32-bit
    static constexpr double kLargeNet = 16777216.0;     ///< 2^24 points: above this, check() warns of the cost
    static constexpr double kNetPointsPerSecond = 1e7;  ///< one CPU thread's pass rate (2-core VM, d = 2, docs/BENCHMARKS.md)

    struct Params {
        std::uint32_t n;   ///< the number of experts M
        std::uint32_t dim; ///< 1 or 2
        std::uint32_t side; ///< grid points per axis
        double h;          ///< grid spacing
        double rho;
    };

    /// How far above 1 the norm of an accepted g_t may be: the engine takes Ball rows up to 1 + kNormSlack
    /// (kernels/adversaries/file.hpp: a file's rounding; the generated rows are normalised to 1 + O(u)).
    static constexpr double kLossNormSlack = 1e-12;
    /// How far the exact F_{t-1}(i) of a computed net point moves between neighbouring inputs: |<g - g', x^i>| / 2 <=
    /// max ||g|| ||x^i||, with ||x^i|| <= 1 + 16 u (see the header) and ||g|| <= 1 + kLossNormSlack; rounded up.
    static double score_sensitivity(const Params&) { return (1.0 + kLossNormSlack) * (1.0 + 16.0 * 0x1.0p-53) * (1.0 + 0x1.0p-52); }
    /// A bound on |computed - exact| F_{t-1}(i), t <= T (see the header).
    static double score_error(const Params&, double T) { return (T * T + 3.0 * T) * 0x1.0p-53 * 1.001; }

    static double side_for(std::uint32_t dim, double rho) {
        return dim == 1 ? std::ceil(1.0 / rho) + 1.0 : std::ceil(std::sqrt(2.0) / rho) + 1.0;
    }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params v{};
        v.dim = pb.d;
        v.rho = kv.get(kRho, 1.0 / static_cast<double>(pb.T));
        const double side = side_for(pb.d == 2 ? 2 : 1, v.rho);
        const double n = pb.d == 2 ? side * side : side;
        v.side = n < kMaxExperts ? static_cast<std::uint32_t>(side) : 2;
        v.n = n < kMaxExperts ? static_cast<std::uint32_t>(n) : 2;
        v.h = 2.0 / (side - 1.0);
        return v;
    }

    /// The smallest rho whose net has at most kLargeNet points (side <= rho-bound + 2), rounded up to 3 digits so
    /// that the value printed with %.3g is still above it.
    static double faster_rho(std::uint32_t dim) {
        const double lo = dim == 2 ? std::sqrt(2.0) / (std::sqrt(kLargeNet) - 2.0) : 1.0 / (kLargeNet - 2.0);
        const double unit = std::pow(10.0, std::floor(std::log10(lo)) - 2.0);
        return std::ceil(lo / unit) * unit;
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (pb.d != 1 && pb.d != 2)
            return diag.fail("d", "net-oco needs d in {1, 2} (got %u): a rho-net of the ball has ~(2/rho)^d points", pb.d);
        const double rho = kv.get(kRho, 1.0 / static_cast<double>(pb.T));
        const double side = side_for(pb.d, rho);
        const double n = pb.d == 2 ? side * side : side;
        if (n >= kMaxExperts)
            return diag.fail("rho", "rho = %g gives a net of %.3g points at d = %u; at most 2^31 - 1 (rho >= %.3g)", rho, n,
                             pb.d, pb.d == 2 ? std::sqrt(2.0) / (std::sqrt(kMaxExperts) - 2.0) : 1.0 / (kMaxExperts - 2.0));
        if (n > kLargeNet) {
            // Accepted, but a run's cost is the net's size: said before the run starts, with the rho that keeps a
            // pass at kLargeNet points.
            diag.fail("rho",
                      "rho = %g gives a net of %.3g points at d = %u: the first draw and every switch of each "
                      "instance is a pass over all of them (~%.2g s each on one CPU thread at 1e7 points/s); "
                      "rho >= %.3g keeps a pass under %.3g points",
                      rho, n, pb.d, n / kNetPointsPerSecond, faster_rho(pb.d), kLargeNet);
            diag.warning_only = true;
        }
        return true;
    }

    /// Coordinate j of net point i (lanes or a per-instance value of double).
    template <class D>
    DPR_HD DPR_FORCEINLINE static void point(const Params& v, const D& i, D& x0, D& x1) {
        if (v.dim == 1) {
            x0 = D(-1.0) + i * D(v.h);
            x1 = D(0.0);
            return;
        }
        const D side(static_cast<double>(v.side));
        const D row = convert<double>(convert<std::uint32_t>(i / side)); // exact: i < 2^31, side < 2^16
        const D a = D(-1.0) + (i - row * side) * D(v.h);
        const D b = D(-1.0) + row * D(v.h);
        const D scale = vmax(D(1.0), vsqrt(a * a + b * b));
        x0 = a / scale;
        x1 = b / scale;
    }

    /// <y, x^i> for the net point(s) of index i (lanes or a per-instance value D) and y = (y0, y1) per instance.
    template <class D, class U>
    DPR_HD DPR_FORCEINLINE static D dot(const Params& v, const D& i, const U& y0, const U& y1) {
        D x0, x1;
        point(v, i, x0, x1);
        D r = D(y0) * x0;
        if (v.dim == 2) r = r + D(y1) * x1;
        return r;
    }
    /// G_{t-1} (cum) or g_t (loss) as two per-instance values (coordinate 1 unused at d = 1).
    template <class Team, class Row>
    DPR_HD DPR_FORCEINLINE static void cum_vector(const Params& v, const Team& team, const Row& row,
                                                  typename Team::template uni<double>& y0,
                                                  typename Team::template uni<double>& y1) {
        using UI = typename Team::template uni<std::uint32_t>;
        y0 = team.cum_exact_at(row, UI(0));
        y1 = v.dim == 2 ? team.cum_exact_at(row, UI(1)) : y0;
    }
    /// F_{t-1}(i) = ((t - 1) + <G_{t-1}, x^i>) / 2 at the team index i.
    template <class Team, class Row, class Idx>
    DPR_HD DPR_FORCEINLINE static auto cum(const Params& v, const Team& team, const Row& row, std::uint64_t t, Idx i) {
        using D = typename Team::template lanes<double>;
        typename Team::template uni<double> y0, y1;
        cum_vector(v, team, row, y0, y1);
        return (D(static_cast<double>(t - 1)) + dot(v, convert<double>(team.element(i)), y0, y1)) * D(0.5);
    }
    template <class Team, class Row, class UI>
    DPR_HD DPR_FORCEINLINE static auto cum_at(const Params& v, const Team& team, const Row& row, std::uint64_t t, const UI& y) {
        using U = typename Team::template uni<double>;
        U y0, y1;
        cum_vector(v, team, row, y0, y1);
        return (U(static_cast<double>(t - 1)) + dot(v, convert<double>(y), y0, y1)) * U(0.5);
    }
    /// <g_t, x^x>, the engine's charge.
    template <class Team, class Row, class UI>
    DPR_HD DPR_FORCEINLINE static auto charge(const Params& v, const Team& team, const Row& row, const UI& x) {
        using U = typename Team::template uni<double>;
        const U g0 = team.loss_exact_at(row, UI(0));
        const U g1 = v.dim == 2 ? team.loss_exact_at(row, UI(1)) : g0;
        return dot(v, convert<double>(x), g0, g1);
    }
    /// f_t(x) = (1 + <g_t, x^x>) / 2.
    template <class Team, class Row, class UI>
    DPR_HD DPR_FORCEINLINE static auto loss_at(const Params& v, const Team& team, const Row& row, const UI& x) {
        using U = typename Team::template uni<double>;
        return (U(1.0) + charge(v, team, row, x)) * U(0.5);
    }
};

using NetOco = AdaptiveSvt<BallNetExperts>;

} // namespace dpr::learners
