#pragma once
// EXP3 for adversarial multi-armed bandits (docs/spec/afkt23.md §C8), with optional uniform exploration
// (then it is Algorithm 5 of AS17 with B~ = 1; AS17 §4.1, docs/spec/as17.md §A4):
//   q_t(i)  = exp(-eta Lhat_{t-1}(i)) / sum_j exp(-eta Lhat_{t-1}(j))      (max-subtracted, §5)
//   p_t     = (1 - gamma) q_t + gamma / N
//   i_t ~ p_t;  feedback c_t = l_t(i_t)   (the only coordinate of l_t the update reads)
//   lhat_t  = (c_t / p_t(i_t)) e_{i_t},   Lhat_t = Lhat_{t-1} + lhat_t     (Lhat in double: §5)
// charged the pseudo-regret term <l_t, p_t> (expected) and l_t(i_t) (realised), docs/spec/model.md §0.3 item 3.
// gamma = 0 is plain EXP3: with eta = sqrt(2 ln N / (N T)) its pseudo-regret is <= sqrt(2 N T ln N).
// With gamma > 0 and eta = gamma / N, gamma = sqrt(N ln N / (3T)) it is Exp2 with (John's = uniform)
// exploration, pseudo-regret <= 2 sqrt(3 N T ln N) (Bubeck, Cesa-Bianchi, Kakade 2012, Thm 1; C8).
//
// The round is split into play() (form p_t, sample i_t) and update() (feed a scalar back), so that
// AS17 Algorithm 4 (kernels/learners/dp_mab.hpp) wraps this exact code and only changes the scalar:
// with no feedback noise dp-mab and exp3 are the same computation, bit for bit.
//
// Randomness: i_t is drawn by inverse CDF from one open uniform of the stream (Purpose::Sampling, sub 0,
// round t, element 0) (uniform 0 of that stream, kernels/rng/lanes.hpp: 24-bit in float, 53-bit in double),
// scanning the mixture weights in index order (Team::categorical; every team member finds the same arm).
// Exploration is part of p_t (one draw from the mixture), so no separate Purpose::Exploration stream is used.
// Teams that add the weights in a different order (SIMD blocks, GPU warps) find the same arm unless the
// uniform falls within rounding of a CDF step.
//
// Per-instance state: Lhat[N] (double), W[N] (the run's precision), and the scalars min_t p_t(i_t),
// max_t eta |lhat_t(i_t)| (the Lemma 4.4 condition, diagnostics), ref. The weights W(i) = exp(-eta Lhat(i) - ref)
// are kept between rounds: only W(i_t) changes in round t, so a round costs one exp instead of N (the pass over
// the arms is then multiply-adds). ref is a past maximum of -eta Lhat, rebased to the current maximum whenever
// that moves more than kRebase away (max-subtracted log-sum-exp, docs/spec/checks.md §5: noisy Lhat can have any
// sign); with instance lanes each lane rebases on its own. Each W(i) is recomputed from Lhat(i) and ref, never
// updated multiplicatively, so no rounding accumulates.
//
// eta = inf is rejected by the key's range (an exponential-weights bandit has no meaningful limit there);
// eta in [0, 1e6].

#include "kernels/learners/common.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/core/vmath.hpp"
#include "kernels/rng/lanes.hpp"

namespace dpr::learners {

struct Exp3 : Learner<Geometry::Simplex> {
    static constexpr const char* kName = "exp3";
    static constexpr KeySpec kKeys[] = {
        {"eta", KeyType::Real, "auto", 0.0, 1e6, "",
         "learning rate; auto = sqrt(2 ln N / (N T)) (EXP3, docs/spec/afkt23.md §C8)", true},
        {"gamma", KeyType::Real, "0", 0.0, 1.0, "",
         "uniform exploration: p_t = (1 - gamma) q_t + gamma/N; 0 = plain EXP3, > 0 = AS17 Alg. 5 with "
         "B~ = 1 (C8: eta = gamma/N, gamma = sqrt(N ln N/(3T)) gives 2 sqrt(3 N T ln N))"},
    };
    static constexpr int kEta = key_index(kKeys, "eta");
    static constexpr int kGamma = key_index(kKeys, "gamma");

    struct Params : Dims {
        double eta;
        double gamma; ///< in [0, 1]
    };

    static constexpr std::array<const char*, 2> kDiagnostics = {"min_p_played", "max_eta_lhat"};
    static constexpr bool kInstanceLanes = true;

    static double default_eta(std::uint32_t d, std::uint64_t T) {
        // d = 1 gives eta = 0: one arm, nothing to learn, regret 0.
        return std::sqrt(2.0 * std::log(static_cast<double>(d)) /
                         (static_cast<double>(d) * static_cast<double>(T)));
    }
    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{dims(pb), kv.get(kEta, default_eta(pb.d, pb.T)), kv.get(kGamma, 0.0)};
    }
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
    static PrivacyReport privacy(const Params&) { return PrivacyReport{}; }

    /// Scalars of the workspace.
    enum Scalar : int { kMinP = 0, kMaxEtaLhat = 1, kRef = 2, kScalars = 3 };

    /// Lhat (double), W (precision R); min p, max eta |lhat|, ref.
    DPR_HD static WorkspaceSpec workspace(const Params& p) {
        return WorkspaceSpec{}.add_double(1, p.d).add_real(1, p.d).scalars(kScalars);
    }

    /// The weights are rebased when the largest log-weight leaves [ref - kRebase, ref + kRebase]: then
    /// sum W <= N e^kRebase and the largest weight is >= e^-kRebase, far from overflow and underflow in double;
    /// in float (max ~e^88) the rebase distance is 64.
    template <class R>
    DPR_HD static constexpr double rebase_distance() {
        return sizeof(R) == 4 ? 64.0 : 256.0;
    }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        // Lhat_0 = 0, ref = 0, W = exp(0) = 1.
        using D = typename Team::template lanes<double>;
        using V = typename Team::template lanes<typename Team::real>;
        using U = typename Team::template uni<double>;
        team.for_each(p.d, [&](auto i) {
            team.store(ws.dbl[0], i, D(0.0));
            team.store(ws.real[0], i, V(1));
        });
        if (team.rank() == 0) {
            team.put(ws.scalars, kMinP, U(kInf));
            team.put(ws.scalars, kMaxEtaLhat, U(0.0));
            team.put(ws.scalars, kRef, U(0.0));
        }
        team.sync();
    }

    /// What play() decided in round t, per instance.
    template <class Team>
    struct Play {
        typename Team::template uni<std::uint32_t> arm;              ///< i_t
        typename Team::template uni<typename Team::real> p_arm;      ///< p_t(i_t)
        typename Team::template uni<double> expected;                ///< <l_t, p_t>
    };

    /// Forms p_t from Lhat_{t-1}, samples i_t ~ p_t and charges <l_t, p_t>. Reads the whole l_t only for the
    /// pseudo-regret record; the learner's state never sees more than the feedback of update().
    template <class Team, class WS, class Row>
    DPR_HD static Play<Team> play(const Params& p, const Team& team, const WS& ws, std::uint64_t t, const Row& row) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using UR = typename Team::template uni<R>;
        const auto Lhat = ws.dbl[0];
        const auto W = ws.real[0];
        const V neta(static_cast<R>(-p.eta));
        const UR ref = convert<R>(team.get(ws.scalars, kRef));
        // One pass over the stored weights (no exp): only W(i_{t-1}) changed since the last round.
        auto r = team.template reduce<3, 1>(p.d, [&](auto i) {
            Contrib<V, 3, 1> c;
            const V w = team.load(W, i), l = team.loss(row, i);
            c.max[0] = neta * convert<R>(team.load(Lhat, i));
            c.sum[0] = w;
            c.sum[1] = w * l;
            c.sum[2] = l;
            return c;
        });
        const UR M = r.max[0];
        const UR dist(static_cast<R>(rebase_distance<R>()));
        const auto rebase = (M - ref > dist) | (M - ref < -dist); // per instance
        UR S = r.sum[0], WL = r.sum[1];
        if (any(rebase)) {
            // Rebase (max-subtracted log-sum-exp, §5): W(i) = exp(-eta Lhat(i) - M), ref = M, in the instances
            // that need it; the others keep their weights.
            team.sync(); // every member has read W above before it changes
            const auto q = team.template reduce<2, 0>(p.d, [&](auto i) {
                const V w = select(rebase, vexp(neta * convert<R>(team.load(Lhat, i)) - M), team.load(W, i));
                team.store(W, i, w);
                Contrib<V, 2, 0> c;
                c.sum[0] = w;
                c.sum[1] = w * team.loss(row, i);
                return c;
            });
            S = select(rebase, q.sum[0], S);
            WL = select(rebase, q.sum[1], WL);
            if (team.rank() == 0) team.put(ws.scalars, kRef, select(mask_for<double>(rebase), convert<double>(M), convert<double>(ref)));
        }
        team.sync(); // W[] written by its owners is read by every member below
        const R n = static_cast<R>(p.d);
        const UR a = UR(static_cast<R>(1.0 - p.gamma)) / S, b = UR(static_cast<R>(p.gamma) / n); // p_t(i) = a W(i) + b
        const UR target = rng::instance_uniform<R>(team, rng::Purpose::Sampling, 0, t, std::uint32_t{0});
        // sum_i p_t(i) = 1 in exact arithmetic; the scan stops at the last positive weight if rounding leaves
        // the uniform above the final partial sum.
        const auto arm = team.categorical(p.d, [&](auto i) { return V(a) * team.load(W, i) + V(b); }, target);
        Play<Team> out;
        out.arm = arm;
        out.p_arm = a * team.load_at(W, arm) + b;
        out.expected = convert<double>(a * WL + b * r.sum[2]); // <l_t, p_t>
        return out;
    }

    /// Feeds back the value observed for the played arm: lhat_t = (feedback / p_t(i_t)) e_{i_t}.
    template <class Team, class WS>
    DPR_HD static void update(const Params& p, const Team& team, const WS& ws, const Play<Team>& play,
                              typename Team::template uni<double> feedback) {
        using R = typename Team::real;
        using U = typename Team::template uni<double>;
        const U lhat = feedback / convert<double>(play.p_arm);
        team.sync(); // every member has finished scanning W[] (play) before W[i_t] changes
        if (team.rank() == 0) {
            const auto Lhat = ws.dbl[0];
            const U next = team.load_at(Lhat, play.arm) + lhat;
            team.store_at(Lhat, play.arm, next);
            // May exceed e^kRebase (even be inf) only if the next play rebases, which recomputes every W before
            // any is used.
            const auto w = vexp(typename Team::template uni<R>(static_cast<R>(-p.eta)) * convert<R>(next) -
                                convert<R>(team.get(ws.scalars, kRef)));
            team.store_at(ws.real[0], play.arm, w);
            team.put(ws.scalars, kMinP, vmin(team.get(ws.scalars, kMinP), convert<double>(play.p_arm)));
            team.put(ws.scalars, kMaxEtaLhat, vmax(team.get(ws.scalars, kMaxEtaLhat), U(p.eta) * vabs(lhat)));
        }
        team.sync(); // Lhat[i_t] and W[i_t] are read by their owners next round
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t t, const Row& row) {
        const Play<Team> pl = play(p, team, ws, t, row);
        const auto observed = team.loss_exact_at(row, pl.arm);
        update(p, team, ws, pl, observed);
        return {pl.expected, observed};
    }

    DPR_HD static void diagnostics(const Params&, const double* scalars, double* out) {
        out[0] = scalars[kMinP];
        out[1] = scalars[kMaxEtaLhat];
    }
};

} // namespace dpr::learners
