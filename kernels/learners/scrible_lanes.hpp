#pragma once
// SCRiBLe and DP-SCRiBLe on the ball and the cube, written over a team (kInstanceLanes = true): the algorithm
// of kernels/learners/scrible.hpp (AS17 §4.2, Alg. 4 + SCRiBLe, Thm D.1 / 4.5; docs/spec/as17.md §A3, §A5),
// whose closed-form steps (kernels/learners/barriers.hpp Ball, Cube) need no iteration, so instance lanes run
// 16 instances per SIMD step on the CPU and a GPU thread runs one instance. ScribleLanes<B, kPrivate> takes
// everything but the round from the scalar ScribleLearner<B, kPrivate> (keys, resolve, check, the privacy
// report, the diagnostics, and the scalar pieces the tests use as the reference) and replaces init(), round()
// and the workspace. The simplex (damped Newton, secular roots: data-dependent iteration counts) keeps the
// scalar serial round.
//
// Round t, per instance, the scalar code's operations in its order:
//   (k, s) = explore(t)                  the scalar's draw: Lemire's index on word 0 of the stream
//                                        (Exploration, round t, element 0), redrawn on rejection, then the
//                                        coin of the next two words (s = -1 iff the first of them is < 2^31,
//                                        i.e. their 53-bit uniform is < 1/2)
//   ball: lambda, v = eigenpair k of Hess R(x) (radial, Householder, or e_k at x = 0); cube: e_k, lambda from
//         the slack of coordinate k
//   y = x + (s / sqrt(lambda)) v;  one pass sums <x, v>, <v, v>, <l_t, y>, <Z_t, y> and max |Z_t| in index
//   order (Z_t(i): Laplace(lambda_Z) from words 2(i mod 2), 2(i mod 2) + 1 of block 0 of (FeedbackNoise,
//   round t, element floor(i/2)), as the scalar feedback_noise() draws them)
//   g += n c~ s sqrt(lambda) v;  ball: x = -c g from ||g||^2 (one pass with the update); cube: coordinate k
// In double a one-lane team and instance lanes give the scalar learner's bits, round for round
// (tests/learners/test_as17_blo.cpp, ScribleLanes.*). The state and the noise are in the run's precision
// (`[run] precision`; float: the 24-bit uniform of the first word of each pair); coordinate lanes sum in
// their own order (docs/RANDOMNESS.md §8, tier (c)).
//
// Workspace: one array of the run's precision with the rows g, x, v and (cube) the slacks 1 - |x_i|; the
// scalars are the six diagnostic slots of ScribleLearner, then (ball) s = 1 - ||x||^2 and r = ||x||.

#include "kernels/learners/scrible.hpp"
#include "kernels/noise/lane_noise.hpp"
#include "kernels/rng/lanes.hpp"

namespace dpr::learners {

namespace scrible_detail {

/// Word j of the Philox stream s (word j mod 4 of block j / 4): what a WordStream over s hands out j-th.
template <class U>
DPR_HD DPR_FORCEINLINE U stream_word(const rng::LaneStream<U>& s, std::uint32_t j) {
    return s.block(j / 4).w[j % 4];
}

/// Per lane, noise::uniform_index(src, n) and then the first word of src.next_double() on a WordStream over
/// s: writes the index k and that word (the coin). A lane that rejects its word (probability < n / 2^32)
/// takes the next one, as the scalar loop does, and its coin moves along with it.
template <class U>
DPR_HD DPR_FORCEINLINE void index_and_coin(const rng::LaneStream<U>& s, std::uint32_t n, U& k, U& coin) {
    const rng::Words4<U> b0 = s.block(0);
    const std::uint32_t threshold = (0u - n) % n; // 2^32 mod n: Lemire's rejection bound
    const U lo = mulhilo32(b0.w[0], n, k);
    auto rejected = lo < U(threshold);
    coin = b0.w[1];
    if (!any(rejected)) return;
    U accepted(0u); // the word each lane's index came from
    std::uint32_t last = 0;
    for (std::uint32_t j = 1; any(rejected); ++j) {
        U kj;
        const U lj = mulhilo32(stream_word(s, j), n, kj);
        k = select(rejected, kj, k);
        accepted = select(rejected, U(j), accepted);
        rejected = rejected & (lj < U(threshold));
        last = j;
    }
    for (std::uint32_t j = 2; j <= last + 1; ++j)
        coin = select(accepted + U(1u) == U(j), stream_word(s, j), coin);
}

} // namespace scrible_detail

template <class B, bool kPrivate>
struct ScribleLanes : ScribleLearner<B, kPrivate> {
    static_assert(B::kClosedForm, "instance lanes need a barrier with a closed-form step (ball, cube)");
    using Scalar = ScribleLearner<B, kPrivate>;
    using Params = typename Scalar::Params;

    static constexpr bool kSerialRound = false;
    static constexpr bool kInstanceLanes = true;
    static constexpr bool kBall = B::kGeometry == Geometry::Ball;

    /// Rows of the state array (precision of the run, n each).
    enum Row : int { kG = 0, kX = 1, kV = 2, kSlack = 3 };
    static constexpr int kRows = kBall ? 3 : 4;
    /// Scalars: the diagnostic slots (Scalar::DiagSlot), then the ball's s = 1 - ||x||^2 and r = ||x||.
    static constexpr int kS = static_cast<int>(Scalar::kDiagSlots), kR = kS + 1;
    static constexpr int kScalars = kBall ? kR + 1 : kS;

    DPR_HD static WorkspaceSpec workspace(const Params& p) {
        return WorkspaceSpec{}.add_real(kRows, p.n).scalars(kScalars);
    }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using UD = typename Team::template uni<double>;
        const auto S = ws.real[0];
        team.for_each(p.n, [&](auto i) { // the centre: x = 0 (ball: s = 1, r = 0; cube: slacks 1)
            for (int r = 0; r < kRows; ++r) team.store(S.row(r), i, V(R(r == kSlack ? 1 : 0)));
        });
        if (team.rank() == 0) {
            for (int j = 0; j < kScalars; ++j) team.put(ws.scalars, j, UD(0.0));
            team.put(ws.scalars, Scalar::kMinSlackY, UD(kInf));
            team.put(ws.scalars, Scalar::kMinSlackX, UD(kInf));
            if constexpr (kBall) team.put(ws.scalars, kS, UD(1.0));
        }
        team.sync();
    }

    template <class Team, class WS, class LossRow>
    DPR_HD static RoundCharge<typename Team::template uni<double>>
    round(const Params& p, const Team& team, const WS& ws, std::uint64_t t, const LossRow& row) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using UR = typename Team::template uni<R>;
        using UD = typename Team::template uni<double>;
        using UI = typename Team::template uni<std::uint32_t>;
        using LI = typename Team::template lanes<std::uint32_t>;
        const auto G = ws.real[0].row(kG), X = ws.real[0].row(kX), Vv = ws.real[0].row(kV);
        const auto Sl = ws.real[0].row(kBall ? kG : kSlack); // the cube's slacks (unused for the ball)
        const std::uint32_t n = p.n;
        const auto key = team.key();
        const std::uint32_t t32 = static_cast<std::uint32_t>(t);

        // (k, s): the scalar explore().
        UI k, coin;
        scrible_detail::index_and_coin(rng::LaneStream<UI>{key.seed, key.stream, team.instance(),
                                                           rng::Purpose::Exploration, 0, t32, UI(0u)},
                                       n, k, coin);
        const UR sign = select(mask_for<R>(coin < UI(0x80000000u)), UR(R(-1)), UR(R(1)));

        // The eigenpair: lambda, and what v_i needs (ball: u_0 of the Householder vector and f).
        UR lambda, s(R(0)), r(R(0)), w0(R(0)), f(R(0));
        if constexpr (kBall) {
            s = convert<R>(team.get(ws.scalars, kS));
            r = convert<R>(team.get(ws.scalars, kR));
            const UR two_s = UR(R(2)) / s;
            lambda =
                select(mask_for<R>(k == UI(0u)) & (r > UR(R(0))), two_s + UR(R(4)) * r * r / (s * s), two_s);
            const UR u0 = team.load_at(X, UI(0u)) / r;
            w0 = u0 + select(u0 >= UR(R(0)), UR(R(1)), UR(R(-1)));
            const UR wk = team.load_at(X, k) / r;
            const UR ww = UR(R(2)) * (UR(R(1)) + vabs(u0));
            f = UR(R(2)) * wk / ww;
        } else {
            const UR sk = team.load_at(Sl, k), o = UR(R(2)) - sk;
            lambda = UR(R(1)) / (sk * sk) + UR(R(1)) / (o * o);
        }
        const UR step = sign / vsqrt(lambda);

        // One pass: v_i (stored), y_i = x_i + step v_i, and the sums and maxima of the scalar's play(),
        // loss_y and feedback_noise(); the cube's slacks of y and x.
        const bool noisy = kPrivate && p.lambda > 0.0;
        const V lamz(static_cast<R>(p.lambda));
        const auto pass = team.template reduce<4, 3>(n, [&](auto i) {
            Contrib<V, 4, 3> c;
            const LI ii = team.element(i);
            const auto at_k = mask_for<R>(ii == LI(k));
            const V x = team.load(X, i);
            V v;
            if constexpr (kBall) {
                const V xr = x / V(r);
                V h = V(-f) * select(mask_for<R>(ii == LI(0u)), V(w0), xr);
                h = select(at_k, h + V(R(1)), h);
                v = select(V(r) > V(R(0)), select(mask_for<R>(LI(k) == LI(0u)), xr, h),
                           select(at_k, V(R(1)), V(R(0))));
            } else {
                v = select(at_k, V(R(1)), V(R(0)));
            }
            team.store(Vv, i, v);
            const V dv = V(step) * v;
            const V y = x + dv;
            c.sum[0] = x * v;
            c.sum[1] = v * v;
            c.sum[2] = team.loss(row, i) * y;
            c.sum[3] = V(R(0));
            c.max[0] = V(-std::numeric_limits<R>::infinity());
            if (noisy) {
                auto z_stream = rng::coordinate_stream(team, rng::Purpose::FeedbackNoise, 0, t32, i);
                z_stream.element = z_stream.element >> 1;
                const rng::Words4<LI> w = z_stream.block(0);
                const auto odd = (ii & LI(1u)) == LI(1u);
                const LI hi = select(odd, w.w[2], w.w[0]);
                V u;
                if constexpr (sizeof(R) == 4)
                    u = rng::u24_lanes(hi);
                else
                    u = rng::u53_lanes(hi, select(odd, w.w[3], w.w[1]));
                const V z = noise::laplace_from_u(u, lamz);
                c.sum[3] = z * y;
                c.max[0] = vabs(z);
            }
            if constexpr (kBall) {
                c.max[1] = c.max[2] = V(-std::numeric_limits<R>::infinity());
            } else { // barriers::Cube::play's slack of y_i, and the slack of x_i, as maxima of their
                     // negatives
                const V sl = team.load(Sl, i);
                const V one(R(1));
                const V ys = select(y >= V(R(0)), select(x >= V(R(0)), sl - dv, one - y),
                                    select(x < V(R(0)), sl + dv, one + y));
                c.max[1] = -select(dv == V(R(0)), sl, ys);
                c.max[2] = -sl;
            }
            return c;
        });
        UR slack_y, slack_x;
        if constexpr (kBall) { // barriers::Ball::play and slack
            const UR q = s - step * (UR(R(2)) * pass.sum[0] + step * pass.sum[1]);
            const UR norm_y = vsqrt(select(q < UR(R(1)), UR(R(1)) - q, UR(R(0))));
            slack_y = q / (UR(R(1)) + norm_y);
            slack_x = s / (UR(R(1)) + r);
        } else {
            slack_y = -pass.max[1];
            slack_x = -pass.max[2];
        }
        const UR loss_y = pass.sum[2];
        const UR ctilde = noisy ? loss_y + pass.sum[3] : loss_y; // the bandit feedback c~_t
        if (team.rank() == 0) {
            if (noisy) {
                const UD zmax = convert<double>(pass.max[0]);
                team.put(ws.scalars, Scalar::kMaxNoise, vmax(team.get(ws.scalars, Scalar::kMaxNoise), zmax));
                team.put(ws.scalars, Scalar::kEventF,
                         select(zmax >= UD(p.f_threshold), UD(1.0), team.get(ws.scalars, Scalar::kEventF)));
            }
            const UD sy = convert<double>(slack_y);
            const UD outside = select(sy < UD(0.0), -sy, UD(0.0));
            team.put(ws.scalars, Scalar::kMaxOutside,
                     vmax(team.get(ws.scalars, Scalar::kMaxOutside), outside));
            team.put(ws.scalars, Scalar::kMinSlackY, vmin(team.get(ws.scalars, Scalar::kMinSlackY), sy));
            team.put(ws.scalars, Scalar::kMinSlackX,
                     vmin(team.get(ws.scalars, Scalar::kMinSlackX), convert<double>(slack_x)));
        }
        // g += n c~ s sqrt(lambda) v (the scalar accumulate_estimate), with ||g||^2 for the ball's step.
        const UR coef = UR(static_cast<R>(n)) * ctilde * sign * vsqrt(lambda);
        const auto gg = team.template reduce<1, 0>(n, [&](auto i) {
            Contrib<V, 1, 0> c;
            const V g = team.load(G, i) + V(coef) * team.load(Vv, i);
            team.store(G, i, g);
            c.sum[0] = g * g;
            return c;
        });
        if (t < p.T) { // x_{t+1} (never played after round T)
            const UR eta(static_cast<R>(p.eta));
            if constexpr (kBall) { // barriers::Ball::ftrl
                const UR a = eta * vsqrt(gg.sum[0]);
                const auto apos = a > UR(R(0));
                const UR q = vsqrt(UR(R(1)) + a * a);
                const UR cc = eta / (UR(R(1)) + q);
                team.for_each(n, [&](auto i) {
                    team.store(X, i, select(V(a) > V(R(0)), V(-cc) * team.load(G, i), V(R(0))));
                });
                const UR rn = a / (UR(R(1)) + q);
                const UR omr = (UR(R(1)) + UR(R(1)) / (q + a)) / (UR(R(1)) + q);
                if (team.rank() == 0) {
                    team.put(ws.scalars, kS, convert<double>(select(apos, omr * (UR(R(1)) + rn), UR(R(1)))));
                    team.put(ws.scalars, kR, convert<double>(select(apos, rn, UR(R(0)))));
                }
            } else { // barriers::Cube::ftrl_coordinate of coordinate k only
                team.sync();
                const UR a = eta * team.load_at(G, k);
                const UR q = vsqrt(UR(R(1)) + a * a);
                if (team.rank() == 0) {
                    team.store_at(X, k, -a / (UR(R(1)) + q));
                    team.store_at(Sl, k, (UR(R(1)) + UR(R(1)) / (q + vabs(a))) / (UR(R(1)) + q));
                }
            }
        }
        team.sync();
        const UD charged = team.broadcast(convert<double>(loss_y));
        return {charged, charged};
    }
};

using ScribleBall = ScribleLanes<barriers::Ball, false>;
using ScribleCube = ScribleLanes<barriers::Cube, false>;
using DpScribleBall = ScribleLanes<barriers::Ball, true>;
using DpScribleCube = ScribleLanes<barriers::Cube, true>;

} // namespace dpr::learners
