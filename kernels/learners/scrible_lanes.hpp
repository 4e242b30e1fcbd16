#pragma once
// SCRiBLe and DP-SCRiBLe, written over a team (kInstanceLanes = true): the algorithm of
// kernels/learners/scrible.hpp (AS17 §4.2, Alg. 4 + SCRiBLe, Thm D.1 / 4.5; docs/spec/as17.md §A3, §A5) with
// the barriers of kernels/learners/barriers.hpp, so instance lanes run 16 instances per SIMD step on the CPU
// and a GPU thread runs one instance. ScribleLanes<B, kPrivate> takes everything but the round from the
// scalar ScribleLearner<B, kPrivate> (keys, resolve, check, the privacy report, the diagnostics, and the
// scalar pieces the tests use as the reference) and replaces init(), round() and the workspace.
//
// The simplex's iterations (the eigenpair's safeguarded Newton on the secular equation, the FTRL step's
// damped Newton) stop at a tolerance, after a number of steps that differs between instances. On lanes every
// iteration is one pass over the coordinates for all lanes, and a lane whose iteration has stopped keeps its
// values (a mask) while the others go on: each lane ends where its own scalar loop ends, so the bits are the
// scalar learner's, and a pass costs as many iterations as the slowest of its 16 lanes needs.
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
//   round t, element floor(i/2)), as the scalar feedback_noise() draws them; with lattice noise <r_t, y> and
//   max |r_t - l_t| instead, r_t(i) from (FeedbackNoise, sub 1 and 2, round t, element i) as lattice_coordinate())
//   simplex: lambda = D_k at a tie (the Helmert vector), else origin + tau from the secular equation; v as in
//         barriers::Simplex::eigenpair; the played point's last coordinate y_N = x_N - step sum v enters the
//         sums last, as in the scalar loop over the d ambient coordinates
//   g += n c~ s sqrt(lambda) v;  ball: x = -c g from ||g||^2 (one pass with the update); cube: coordinate k;
//         simplex: damped Newton from x_t, the line search's halvings per lane
// In double a one-lane team and instance lanes give the scalar learner's bits, round for round
// (tests/learners/test_as17_blo.cpp, ScribleLanes.*). The state and the noise are in the run's precision
// (`[run] precision`; float: the 24-bit uniform of the first word of each pair); coordinate lanes sum in
// their own order (docs/RANDOMNESS.md §8, tier (c)).
//
// Workspace: one array of the run's precision with the rows g, x, v and (cube) the slacks 1 - |x_i| or
// (simplex) the Newton gradient and direction; the scalars are the six diagnostic slots of ScribleLearner,
// then (ball) s = 1 - ||x||^2 and r = ||x|| or (simplex) x_N = 1 - sum x.

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

/// Z_t(i) of the scalar feedback_noise(), per lane: Laplace(b) from words 2(i mod 2), 2(i mod 2) + 1 of block
/// 0 of the stream (FeedbackNoise, round t, element floor(i/2)) of each lane's instance (double: their 53-bit
/// uniform; float: the 24-bit uniform of the first).
template <class V, class L>
DPR_HD DPR_FORCEINLINE V feedback_laplace(const RngKey& key, const L& instance, std::uint32_t t, const L& i,
                                          V b) {
    using R = lane_scalar_t<V>;
    const rng::LaneStream<L> s{key.seed, key.stream, instance, rng::Purpose::FeedbackNoise, 0, t, i >> 1};
    const rng::Words4<L> w = s.block(0);
    const auto odd = (i & L(1u)) == L(1u);
    const L hi = select(odd, w.w[2], w.w[0]);
    V u;
    if constexpr (sizeof(R) == 4)
        u = rng::u24_lanes(hi);
    else
        u = rng::u53_lanes(hi, select(odd, w.w[3], w.w[1]));
    return noise::laplace_from_u(u, b);
}

/// r_t(i) of the scalar lattice_coordinate(), per lane: the exact lattice release Gamma (k_i + n_i) of the loss l
/// (double lanes D) of coordinate i, from the streams (FeedbackNoise, sub 1 and 2, round t, element i) of each lane's
/// instance. A double, the same bits whatever the run's precision.
template <class D, class L>
DPR_HD DPR_FORCEINLINE D feedback_lattice(const RngKey& key, const L& instance, std::uint32_t t, const L& i, D l,
                                          const noise::DlapTable& tab) {
    using S = rng::LaneStream<L>;
    const L w = S{key.seed, key.stream, instance, rng::Purpose::FeedbackNoise, 2u, t, i}.block(0).w[0];
    return noise::lattice_release(l, S{key.seed, key.stream, instance, rng::Purpose::FeedbackNoise, 1u, t, i}, w, tab);
}

} // namespace scrible_detail

template <class B, bool kPrivate>
struct ScribleLanes : ScribleLearner<B, kPrivate> {
    using Scalar = ScribleLearner<B, kPrivate>;
    using Params = typename Scalar::Params;

    static constexpr bool kSerialRound = false;
    static constexpr bool kInstanceLanes = true;
    static constexpr bool kBall = B::kGeometry == Geometry::Ball;
    static constexpr bool kSimplex = B::kGeometry == Geometry::Simplex;

    /// Rows of the state array (precision of the run, n each): g, x, v, then the cube's slacks 1 - |x_i| or
    /// the simplex's Newton gradient and direction.
    enum Row : int { kG = 0, kX = 1, kV = 2, kSlack = 3, kGrad = 3, kDir = 4 };
    static constexpr int kRows = kBall ? 3 : kSimplex ? 5 : 4;
    /// Scalars: the diagnostic slots (Scalar::DiagSlot), then the ball's s = 1 - ||x||^2 and r = ||x||, or
    /// the simplex's x_N = 1 - sum x.
    static constexpr int kS = static_cast<int>(Scalar::kDiagSlots), kR = kS + 1, kXN = kS;
    static constexpr int kScalars = kBall ? kR + 1 : kSimplex ? kXN + 1 : kS;

    DPR_HD static WorkspaceSpec workspace(const Params& p) {
        return WorkspaceSpec{}.add_real(kRows, p.n).scalars(kScalars);
    }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using UD = typename Team::template uni<double>;
        const auto S = ws.real[0];
        // The centre: x = 0 (ball: s = 1, r = 0; cube: slacks 1); simplex x_i = x_N = 1/(n + 1).
        const R centre = kSimplex ? static_cast<R>(1.0 / (static_cast<double>(p.n) + 1.0)) : R(0);
        team.for_each(p.n, [&](auto i) {
            for (int r = 0; r < kRows; ++r)
                team.store(S.row(r), i, V(r == kX ? centre : R(!kSimplex && r == kSlack ? 1 : 0)));
        });
        if (team.rank() == 0) {
            for (int j = 0; j < kScalars; ++j) team.put(ws.scalars, j, UD(0.0));
            team.put(ws.scalars, Scalar::kMinSlackY, UD(kInf));
            team.put(ws.scalars, Scalar::kMinSlackX, UD(kInf));
            if constexpr (kBall) team.put(ws.scalars, kS, UD(1.0));
            if constexpr (kSimplex) team.put(ws.scalars, kXN, UD(static_cast<double>(centre)));
        }
        team.sync();
    }

    /// 1 / (D_l - origin - tau): a term of the secular equation and, scaled, a coordinate of the eigenvector
    /// (barriers::Simplex::eigenpair forms them in this order).
    template <class V>
    DPR_HD DPR_FORCEINLINE static V resolvent(V dl, V origin, V tau) {
        using R = lane_scalar_t<V>;
        return V(R(1)) / (dl - origin - tau);
    }

    /// barriers::Simplex::eigenpair k at x, per lane: what the eigenvector's coordinates are computed from.
    template <class UR>
    struct SimplexEigen {
        UR lambda;        ///< the eigenvalue
        UR dk;            ///< D_k = 1/x_k^2
        UR origin, tau;   ///< the secular root lambda = origin + tau: v_l = nrm / (D_l - origin - tau)
        UR nrm;           ///< 1 / ||(D - lambda)^{-1} 1||
        UR rank, helmert; ///< a tie (rank > 0): v_l = helmert for the tied l < k, v_k = -rank helmert
    };

    /// The scalar eigenpair's operations in its order, lanes in step: a lane whose secular iteration has
    /// stopped keeps its values while the others go on, so every lane ends where its scalar loop ends. The
    /// poles D_l = 1/x_l^2 are formed once into the row D (the Newton step's scratch row, free until then).
    template <class Team, class View>
    DPR_HD static SimplexEigen<typename Team::template uni<typename Team::real>>
    simplex_eigen(const Params& p, const Team& team, const View& X, const View& D,
                  typename Team::template uni<typename Team::real> xn,
                  typename Team::template uni<std::uint32_t> k) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using UR = typename Team::template uni<R>;
        using LI = typename Team::template lanes<std::uint32_t>;
        constexpr R kNegInf = -std::numeric_limits<R>::infinity();
        const std::uint32_t n = p.n;
        const UR one(R(1)), zero(R(0)), half(R(0.5));
        SimplexEigen<UR> e;
        const UR xk = team.load_at(X, k);
        e.dk = one / (xk * xk);
        // The tied poles before k (rank) and the smallest pole above D_k.
        const auto r1 = team.template reduce<2, 1>(n, [&](auto i) {
            Contrib<V, 2, 1> c;
            const V x = team.load(X, i);
            const V dl = V(R(1)) / (x * x);
            team.store(D, i, dl);
            c.sum[0] = select((dl == V(e.dk)) & mask_for<R>(team.element(i) < LI(k)), V(R(1)), V(R(0)));
            c.sum[1] =
                select(dl > V(e.dk), V(R(1)), V(R(0))); // counted, not read off the max: D_l may be +inf
            c.max[0] = select(dl > V(e.dk), -dl, V(kNegInf));
            return c;
        });
        e.rank = r1.sum[0];
        const auto tie = e.rank > zero;
        const auto has_next = r1.sum[1] > zero;
        const UR dnext = -r1.max[0];
        e.helmert = one / vsqrt(e.rank * (e.rank + one));
        const UR inv_c = xn * xn;
        // f(tau) = 1/c + sum_l 1/(a_l - tau), a_l = D_l - origin, 1/c added first (the scalar's order), and
        // f'(tau) = sum_l 1/(a_l - tau)^2.
        const auto secular = [&](UR origin, UR tau) {
            return team.template reduce<2, 0>(n, [&](auto i) {
                Contrib<V, 2, 0> c;
                const V r = resolvent(team.load(D, i), V(origin), V(tau));
                c.sum[0] = select(mask_for<R>(team.element(i) == LI(0u)), V(inv_c) + r, r);
                c.sum[1] = r * r;
                return c;
            });
        };
        e.origin = e.dk;
        UR lo = zero, hi = UR(static_cast<R>(n)) / inv_c; // no pole above: f(c n) >= 0 (interlacing)
        if (any(has_next & !tie)) { // bracket between D_k and the next pole, measured from the nearer one
            const UR gap = dnext - e.dk;
            const auto upper = has_next & (secular(e.dk, half * gap).sum[0] < zero);
            e.origin = select(upper, dnext, e.dk);
            lo = select(upper, -(half * gap), zero);
            hi = select(has_next, select(upper, zero, half * gap), hi);
        }
        // secular_root: the one-pole start, then safeguarded Newton.
        const auto start = team.template reduce<2, 0>(n, [&](auto i) {
            Contrib<V, 2, 0> c;
            const V a = team.load(D, i) - V(e.origin);
            const auto pole = a == V(R(0));
            c.sum[0] = select(pole, V(R(1)), V(R(0)));
            const V inv = select(pole, V(R(0)), V(R(1)) / a);
            c.sum[1] =
                select(mask_for<R>(team.element(i) == LI(0u)), select(pole, V(inv_c), V(inv_c) + inv), inv);
            return c;
        });
        const UR m = start.sum[0], K = start.sum[1];
        const UR mid = half * (lo + hi);
        e.tau = select(K != zero, m / K, mid);
        e.tau = select((e.tau > lo) & (e.tau < hi), e.tau, mid);
        auto active = !tie;
        const auto at_hi = active & (hi > zero) & (lo == zero);
        if (any(at_hi)) { // all poles tied: tau = c n
            const auto take = at_hi & (secular(e.origin, hi).sum[0] <= zero);
            e.tau = select(take, hi, e.tau);
            active = active & !take;
        }
        constexpr R kEpsR = std::numeric_limits<R>::epsilon();
        for (int it = 0; it < 200 && any(active); ++it) {
            const auto ff = secular(e.origin, e.tau);
            const UR f = ff.sum[0], fp = ff.sum[1];
            active = active & (f != zero); // f = 0: the root itself
            lo = select(active & (f < zero), e.tau, lo);
            hi = select(active & !(f < zero), e.tau, hi);
            UR next = e.tau - f / fp;
            const UR alo = vabs(lo), ahi = vabs(hi);
            const auto same_side = ((lo > zero) & (hi > zero)) | ((lo < zero) & (hi < zero));
            const auto geometric = same_side & ((ahi > UR(R(8)) * alo) | (alo > UR(R(8)) * ahi));
            const UR fallback =
                select(geometric, select(lo > zero, one, -one) * vsqrt(alo * ahi), half * (lo + hi));
            next = select((next > lo) & (next < hi), next, fallback);
            const auto done =
                (vabs(next - e.tau) <= UR(R(4) * kEpsR) * vabs(next)) | (next == lo) | (next == hi);
            e.tau = select(active, next, e.tau);
            active = active & !done;
        }
        const auto norm = team.template reduce<1, 0>(n, [&](auto i) {
            Contrib<V, 1, 0> c;
            const V v = resolvent(team.load(D, i), V(e.origin), V(e.tau));
            c.sum[0] = v * v;
            return c;
        });
        e.nrm = one / vsqrt(norm.sum[0]);
        e.lambda = select(tie, e.dk, e.origin + e.tau);
        return e;
    }

    /// barriers::newton_ftrl<Simplex> per lane, lanes in step (a lane that has stopped keeps its point);
    /// returns the Newton steps each lane took.
    template <class Team, class View, class UR>
    DPR_HD static UR simplex_newton(const Params& p, const Team& team, const View& G, const View& X,
                                    const View& Grad, const View& Dir, UR& xn) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        const std::uint32_t n = p.n;
        const UR one(R(1)), zero(R(0));
        const V eta(static_cast<R>(p.eta));
        const UR tol(static_cast<R>(p.newton.tol));
        const UR floor(
            R(sizeof(R) == 8 ? 1e-6 : 1e-3)); // the decrement's rounding floor (scalar: 1e-6, double)
        UR prev(std::numeric_limits<R>::infinity()), steps = zero;
        auto active = prev == prev;
        for (std::uint32_t it = 0; it < p.newton.max_iter; ++it) {
            // Simplex::newton_direction: grad = eta g - 1/y + 1/x_N; dir = -H^{-1} grad (Sherman-Morrison).
            const auto a = team.template reduce<2, 0>(n, [&](auto i) {
                Contrib<V, 2, 0> c;
                const V x = team.load(X, i);
                const V grad = eta * team.load(G, i) - V(R(1)) / x + V(R(1)) / V(xn);
                team.store(Grad, i, grad);
                const V y2 = x * x;
                c.sum[0] = y2 * grad;
                c.sum[1] = y2;
                return c;
            });
            const UR f = a.sum[0] / (xn * xn + a.sum[1]);
            const auto b = team.template reduce<2, 0>(n, [&](auto i) {
                Contrib<V, 2, 0> c;
                const V x = team.load(X, i), grad = team.load(Grad, i);
                const V y2 = x * x;
                const V dir = -(y2 * grad - y2 * V(f));
                team.store(Dir, i, dir);
                c.sum[0] = -(grad * dir);
                c.sum[1] = dir;
                return c;
            });
            const UR dec = vsqrt(select(b.sum[0] > zero, b.sum[0], zero));
            const UR sd = b.sum[1];
            active = active & (dec > tol) & !((dec < floor) & (dec > UR(R(0.5)) * prev));
            if (!any(active)) break;
            prev = select(active, dec, prev);
            UR alpha = select(dec > UR(R(0.25)), one / (one + dec), one);
            for (int tries = 0; tries < 60; ++tries) { // halve a step that would leave K numerically
                const auto out = team.template reduce<0, 1>(n, [&](auto i) {
                    Contrib<V, 0, 1> c;
                    const V y = team.load(X, i) + V(alpha) * team.load(Dir, i);
                    c.max[0] = select(y > V(R(0)), V(R(0)), V(R(1)));
                    return c;
                });
                const auto halve = active & !((out.max[0] == zero) & (xn - alpha * sd > zero));
                if (!any(halve)) break;
                alpha = select(halve, alpha * UR(R(0.5)), alpha);
            }
            const UR moving = select(active, one, zero);
            team.for_each(n, [&](auto i) {
                const V x = team.load(X, i);
                team.store(X, i, select(V(moving) > V(R(0)), x + V(alpha) * team.load(Dir, i), x));
            });
            xn = select(active, xn - alpha * sd, xn);
            steps = select(active, steps + one, steps);
        }
        return steps;
    }

    /// Whether a team's lanes are the coordinates of one instance (CPU CoordTeam, a GPU warp or block).
    template <class Team>
    static constexpr bool kCoordinateTeam =
        Team::kInstances == 1 && !std::is_same<Team, SerialTeam<typename Team::real>>::value;

    /// The round. On coordinate lanes the simplex runs it on one member, as a one-lane team over its
    /// instance's state: its Newton and secular iterations amplify rounding (at d = 60 a difference of 1e-16
    /// in round 3 grew tenfold about every 8 rounds, to 1e-2 by round 120), so sums taken in the lanes' order
    /// would not stay within rounding of the instance lanes' bits; this way every layout gives them
    /// (docs/RANDOMNESS.md §8).
    template <class Team, class WS, class LossRow>
    DPR_HD static RoundCharge<typename Team::template uni<double>>
    round(const Params& p, const Team& team, const WS& ws, std::uint64_t t, const LossRow& row) {
        if constexpr (kSimplex && kCoordinateTeam<Team>) {
            using R = typename Team::real;
            double charged = 0.0;
            if (team.rank() == 0) {
                const SerialTeam<R> one(team.key(), team.instance());
                Workspace<StridedView<double>, StridedView<R>, StridedView<double>> w{};
                w.real[0] = team.instance_view(ws.real[0], 0);
                w.scalars = team.instance_view(ws.scalars, 0);
                charged = round_lanes(p, one, w, t, ScalarLossRow<R>{row.exact, row.real, row.cum}).expected;
            }
            charged = team.broadcast(charged);
            team.sync();
            return {charged, charged};
        } else {
            return round_lanes(p, team, ws, t, row);
        }
    }

    template <class Team, class WS, class LossRow>
    DPR_HD static RoundCharge<typename Team::template uni<double>>
    round_lanes(const Params& p, const Team& team, const WS& ws, std::uint64_t t, const LossRow& row) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using UR = typename Team::template uni<R>;
        using UD = typename Team::template uni<double>;
        using UI = typename Team::template uni<std::uint32_t>;
        using LI = typename Team::template lanes<std::uint32_t>;
        const auto G = ws.real[0].row(kG), X = ws.real[0].row(kX), Vv = ws.real[0].row(kV);
        const auto Sl = ws.real[0].row(kBall ? kG : kSlack); // the cube's slacks (read only on the cube)
        const std::uint32_t n = p.n;
        const auto key = team.key();
        const std::uint32_t t32 = static_cast<std::uint32_t>(t);

        // (k, s): the scalar explore().
        UI k, coin;
        scrible_detail::index_and_coin(rng::LaneStream<UI>{key.seed, key.stream, team.instance(),
                                                           rng::Purpose::Exploration, 0, t32, UI(0u)},
                                       n, k, coin);
        const UR sign = select(mask_for<R>(coin < UI(0x80000000u)), UR(R(-1)), UR(R(1)));

        // The eigenpair: lambda, and what v_i needs (ball: u_0 of the Householder vector and f; simplex: se).
        UR lambda, s(R(0)), r(R(0)), w0(R(0)), f(R(0)), xn(R(0));
        SimplexEigen<UR> se{};
        if constexpr (kSimplex) {
            xn = convert<R>(team.get(ws.scalars, kXN));
            se = simplex_eigen(p, team, X, ws.real[0].row(kDir), xn, k);
            lambda = se.lambda;
        } else if constexpr (kBall) {
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
            } else if constexpr (kSimplex) {
                const V dl = team.load(ws.real[0].row(kDir), i); // D_l, formed by simplex_eigen
                const V vh =
                    select(at_k, -V(se.rank) * V(se.helmert),
                           select((dl == V(se.dk)) & mask_for<R>(ii < LI(k)), V(se.helmert), V(R(0))));
                const V vs = resolvent(dl, V(se.origin), V(se.tau)) * V(se.nrm);
                v = select(V(se.rank) > V(R(0)), vh, vs);
            } else {
                v = select(at_k, V(R(1)), V(R(0)));
            }
            team.store(Vv, i, v);
            const V dv = V(step) * v;
            const V y = x + dv;
            c.sum[0] = kSimplex ? v : x * v;
            c.sum[1] = v * v;
            c.sum[2] = team.loss(row, i) * y;
            c.sum[3] = V(R(0));
            c.max[0] = V(-std::numeric_limits<R>::infinity());
            if (noisy && p.lattice) { // c~ = <r_t, y>: the exact release's coordinates (exact in R), summed alone
                using DL = typename Team::template lanes<double>;
                const DL l = team.loss_exact(row, i);
                const DL rr = scrible_detail::feedback_lattice(key, LI(team.instance()), t32, ii, l, p.dlap);
                c.sum[3] = convert<R>(rr) * y;
                c.max[0] = convert<R>(vabs(rr - l));
            } else if (noisy) {
                const V z = scrible_detail::feedback_laplace(key, LI(team.instance()), t32, ii, lamz);
                c.sum[3] = z * y;
                c.max[0] = vabs(z);
            }
            if constexpr (kBall) {
                c.max[1] = c.max[2] = V(-std::numeric_limits<R>::infinity());
            } else if constexpr (kSimplex) { // barriers::Simplex::play's and slack's minima, as maxima
                c.max[1] = -y;
                c.max[2] = -x;
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
        UR slack_y, slack_x, loss_y = pass.sum[2], zy = pass.sum[3], zmax_r = pass.max[0];
        if constexpr (kSimplex) { // the played point's last coordinate y_N = x_N - step sum v, added last
            const UR yn = xn - step * pass.sum[0];
            const UR ymin = -pass.max[1], xmin = -pass.max[2];
            slack_y = select(yn < ymin, yn, ymin);
            slack_x = select(xmin < xn, xmin, xn);
            loss_y = loss_y + convert<R>(team.loss_exact_at(row, UI(n))) * yn;
            if (noisy && p.lattice) {
                const UD l = team.loss_exact_at(row, UI(n));
                const UD rr = scrible_detail::feedback_lattice(key, team.instance(), t32, UI(n), l, p.dlap);
                zy = zy + convert<R>(rr) * yn;
                zmax_r = vmax(zmax_r, convert<R>(vabs(rr - l)));
            } else if (noisy) {
                const UR z = scrible_detail::feedback_laplace(key, team.instance(), t32, UI(n),
                                                              UR(static_cast<R>(p.lambda)));
                zy = zy + z * yn;
                zmax_r = vmax(zmax_r, vabs(z));
            }
        } else if constexpr (kBall) { // barriers::Ball::play and slack
            const UR q = s - step * (UR(R(2)) * pass.sum[0] + step * pass.sum[1]);
            const UR norm_y = vsqrt(select(q < UR(R(1)), UR(R(1)) - q, UR(R(0))));
            slack_y = q / (UR(R(1)) + norm_y);
            slack_x = s / (UR(R(1)) + r);
        } else {
            slack_y = -pass.max[1];
            slack_x = -pass.max[2];
        }
        // The bandit feedback c~_t: with lattice noise <r_t, y> alone (post-processing of the exact release r_t).
        const UR ctilde = noisy ? (p.lattice ? zy : loss_y + zy) : loss_y;
        if (team.rank() == 0) {
            if (noisy) {
                const UD zmax = convert<double>(zmax_r);
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
            } else if constexpr (kSimplex) { // barriers::newton_ftrl<Simplex>, warm-started at x_t
                team.sync();
                const UR steps =
                    simplex_newton(p, team, G, X, ws.real[0].row(kGrad), ws.real[0].row(kDir), xn);
                if (team.rank() == 0) {
                    team.put(ws.scalars, kXN, convert<double>(xn));
                    team.put(ws.scalars, Scalar::kNewtonMax,
                             vmax(team.get(ws.scalars, Scalar::kNewtonMax), convert<double>(steps)));
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
using ScribleSimplex = ScribleLanes<barriers::Simplex, false>;
using DpScribleSimplex = ScribleLanes<barriers::Simplex, true>;

} // namespace dpr::learners
