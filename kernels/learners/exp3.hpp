#pragma once
// EXP3 for adversarial multi-armed bandits (ALGORITHMS.md C8), with optional uniform exploration
// (then it is Algorithm 5 of AS17 with B~ = 1, ALGORITHMS.md A4):
//   q_t(i)  = exp(-eta Lhat_{t-1}(i)) / sum_j exp(-eta Lhat_{t-1}(j))      (max-subtracted, §5)
//   p_t     = (1 - gamma) q_t + gamma / N
//   i_t ~ p_t;  feedback c_t = l_t(i_t)   (the only coordinate of l_t the update reads)
//   lhat_t  = (c_t / p_t(i_t)) e_{i_t},   Lhat_t = Lhat_{t-1} + lhat_t     (Lhat in double: §5)
// charged the pseudo-regret term <l_t, p_t> (expected) and l_t(i_t) (realised), ALGORITHMS.md §0.3 item 3.
// gamma = 0 is plain EXP3: with eta = sqrt(2 ln N / (N T)) its pseudo-regret is <= sqrt(2 N T ln N).
// With gamma > 0 and eta = gamma / N, gamma = sqrt(N ln N / (3T)) it is Exp2 with (John's = uniform)
// exploration, pseudo-regret <= 2 sqrt(3 N T ln N) (Bubeck, Cesa-Bianchi, Kakade 2012, Thm 1; C8).
//
// The round is split into play() (form p_t, sample i_t) and update() (feed a scalar back), so that
// AS17 Algorithm 4 (kernels/learners/dp_mab.hpp) wraps this exact code and only changes the scalar:
// with no feedback noise dp-mab and exp3 are the same computation, bit for bit.
//
// Randomness: i_t is drawn by inverse CDF from one open 53-bit uniform of the stream
// (Purpose::Sampling, sub 0, round t, element 0). Every team lane draws the same uniform and scans the
// weights in index order (noise::categorical), so every lane finds the same arm; the scan order does not
// depend on the team size. Exploration is part of p_t (one draw from the mixture), so no separate
// Purpose::Exploration stream is used. CPU and GPU give the same arm unless the uniform falls within
// rounding of a CDF step (the weights' exp() may differ in the last ulp between glibc and CUDA).
//
// Per-instance state (ws, doubles): Lhat[N] | W[N] | min_t p_t(i_t) | max_t eta |lhat_t(i_t)| (the Lemma 4.4
// condition, diagnostics) | ref. The weights W(i) = exp(-eta Lhat(i) - ref) are kept between rounds: only
// W(i_t) changes in round t, so a round costs one exp instead of N (the pass over the arms is then
// multiply-adds). ref is a past maximum of -eta Lhat, rebased to the current maximum whenever that moves
// more than kRebase away (max-subtracted log-sum-exp, ALGORITHMS.md §5: noisy Lhat can have any sign).
// Each W(i) is recomputed from Lhat(i) and ref, never updated multiplicatively, so no rounding accumulates.
#include <array>
#include <cmath>
#include <cstdint>

#include "kernels/learners/common.hpp"
#include "kernels/noise/samplers.hpp"
#include "kernels/rng/uniform.hpp"

namespace dpr::learners {

/// The first open 53-bit uniform of stream `id` (words 0 and 1 of block 0): the value WordStream's first
/// next_double() returns, read straight from one Philox block (the bandit learners' hot path).
DPR_HD DPR_FORCEINLINE double first_uniform(const rng::StreamId& id) {
    const rng::U32x4 b = rng::draw_block(id, 0);
    return rng::u01_open_53(b.v[0], b.v[1]);
}

/// A word source that hands out one given uniform (for noise::categorical).
struct GivenUniform {
    double u;
    DPR_HD double next_double() const { return u; }
};

struct Exp3 {
    static constexpr const char* kName = "exp3";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr KeySpec kKeys[] = {
        {"eta", KeyType::Real, "auto", 0.0, kInf, "",
         "learning rate; auto = sqrt(2 ln N / (N T)) (EXP3, ALGORITHMS.md C8)", true},
        {"gamma", KeyType::Real, "0", 0.0, 1.0, "",
         "uniform exploration: p_t = (1 - gamma) q_t + gamma/N; 0 = plain EXP3, > 0 = AS17 Alg. 5 with "
         "B~ = 1 (C8: eta = gamma/N, gamma = sqrt(N ln N/(3T)) gives 2 sqrt(3 N T ln N))"},
    };
    static constexpr int kEta = key_index(kKeys, "eta");
    static constexpr int kGamma = key_index(kKeys, "gamma");

    struct Params {
        std::uint32_t d;
        std::uint64_t T;
        double eta;
        double gamma; ///< in [0, 1]
    };

    static constexpr std::array<const char*, 2> kDiagnostics = {"min_p_played", "max_eta_lhat"};

    static double default_eta(std::uint32_t d, std::uint64_t T) {
        // d = 1 gives eta = 0: one arm, nothing to learn, regret 0.
        return std::sqrt(2.0 * std::log(static_cast<double>(d)) /
                         (static_cast<double>(d) * static_cast<double>(T)));
    }
    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{pb.d, pb.T, kv.get(kEta, default_eta(pb.d, pb.T)), kv.get(kGamma, 0.0)};
    }
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
    static PrivacyReport privacy(const Params&) { return PrivacyReport{}; }

    // Workspace offsets.
    DPR_HD static std::uint64_t weights_at(const Params& p) { return p.d; }
    DPR_HD static std::uint64_t min_p_at(const Params& p) { return 2 * std::uint64_t{p.d}; }
    DPR_HD static std::uint64_t max_eta_lhat_at(const Params& p) { return 2 * std::uint64_t{p.d} + 1; }
    DPR_HD static std::uint64_t ref_at(const Params& p) { return 2 * std::uint64_t{p.d} + 2; }
    DPR_HD static std::uint64_t workspace(const Params& p) { return 2 * std::uint64_t{p.d} + 3; }

    /// The weights are rebased when the largest log-weight leaves [ref - kRebase, ref + kRebase]: then
    /// sum W <= N e^256 and the largest weight is >= e^-256, far from overflow and underflow.
    static constexpr double kRebase = 256.0;

    template <class Team>
    DPR_HD static void init(const Params& p, const InstanceCtx&, Team& team, double* ws) {
        // Lhat_0 = 0, ref = 0, W = exp(0) = 1.
        team.for_each(p.d, [&](std::uint32_t i) {
            ws[i] = 0.0;
            ws[weights_at(p) + i] = 1.0;
        });
        if (team.rank() == 0) {
            ws[min_p_at(p)] = kInf;
            ws[max_eta_lhat_at(p)] = 0.0;
            ws[ref_at(p)] = 0.0;
        }
        team.sync();
    }

    /// p_t(i) = a W(i) + b with W(i) = exp(-eta Lhat_{t-1}(i) - ref), a = (1 - gamma)/sum W, b = gamma/N.
    struct Mixture {
        const double* w;
        double a, b;
        DPR_HD double operator[](std::uint32_t i) const { return a * w[i] + b; }
    };

    /// What play() decided in round t.
    struct Play {
        std::uint32_t arm; ///< i_t
        double p_arm;      ///< p_t(i_t)
        double expected;   ///< <l_t, p_t>
    };

    /// Forms p_t from Lhat_{t-1}, samples i_t ~ p_t and charges <l_t, p_t>. Reads the whole l_t only for
    /// the pseudo-regret record; the learner's state never sees more than the feedback of update().
    template <class Team>
    DPR_HD static Play play(const Params& p, const InstanceCtx& c, Team& team, double* ws, std::uint64_t t,
                            const double* loss) {
        const double* Lhat = ws;
        double* W = ws + weights_at(p);
        const double ref = ws[ref_at(p)];
        // One pass over the stored weights (no exp): only W(i_{t-1}) changed since the last round.
        double m = -kInf, s = 0.0, wl = 0.0, ls = 0.0;
        team.for_each(p.d, [&](std::uint32_t i) {
            const double v = -p.eta * Lhat[i];
            m = v > m ? v : m;
            s += W[i];
            wl += W[i] * loss[i];
            ls += loss[i];
        });
        const double M = team.max(m); // the same on every lane, so every lane takes the same branch
        double S, WL;
        if (M - ref > kRebase || M - ref < -kRebase) {
            // Rebase (max-subtracted log-sum-exp, §5): W(i) = exp(-eta Lhat(i) - M), ref = M.
            s = 0.0, wl = 0.0;
            team.for_each(p.d, [&](std::uint32_t i) {
                const double w = std::exp(-p.eta * Lhat[i] - M);
                W[i] = w;
                s += w;
                wl += w * loss[i];
            });
            S = team.sum(s);
            WL = team.sum(wl);
            if (team.rank() == 0) ws[ref_at(p)] = M; // every lane read ref before team.max above
        } else {
            S = team.sum(s);
            WL = team.sum(wl);
        }
        const double LS = team.sum(ls);
        team.sync(); // W[] written by its owner lanes is read by every lane below
        const double n = static_cast<double>(p.d);
        const Mixture mix{W, (1.0 - p.gamma) / S, p.gamma / n}; // p_t(i) = a W(i) + b
        GivenUniform src{first_uniform(c.id(rng::Purpose::Sampling, 0, static_cast<std::uint32_t>(t), 0))};
        // sum_i p_t(i) = 1 in exact arithmetic; the scan stops at the last positive weight if rounding
        // leaves the uniform above the final partial sum.
        const std::uint32_t arm = noise::categorical(src, mix, p.d, 1.0);
        return Play{arm, mix[arm], mix.a * WL + mix.b * LS}; // <l_t, p_t>
    }

    /// Feeds back the scalar observed for the played arm: lhat_t = (feedback / p_t(i_t)) e_{i_t}.
    template <class Team>
    DPR_HD static void update(const Params& p, Team& team, double* ws, const Play& play, double feedback) {
        const double lhat = feedback / play.p_arm;
        team.sync(); // every lane has finished scanning W[] (play) before W[i_t] changes
        if (team.rank() == 0) {
            ws[play.arm] += lhat;
            // May exceed e^kRebase (even be inf) only if the next play rebases, which recomputes every W
            // before any is used.
            ws[weights_at(p) + play.arm] = std::exp(-p.eta * ws[play.arm] - ws[ref_at(p)]);
            ws[min_p_at(p)] = dmin(ws[min_p_at(p)], play.p_arm);
            ws[max_eta_lhat_at(p)] = dmax(ws[max_eta_lhat_at(p)], p.eta * std::fabs(lhat));
        }
        team.sync(); // Lhat[i_t] and W[i_t] are read by their owner lane next round
    }

    template <class Team>
    DPR_HD static RoundResult round(const Params& p, const InstanceCtx& c, Team& team, double* ws,
                                    std::uint64_t t, const double* loss) {
        const Play play = Exp3::play(p, c, team, ws, t, loss);
        const double observed = loss[play.arm];
        update(p, team, ws, play, observed);
        return RoundResult{play.expected, observed};
    }

    DPR_HD static void diagnostics(const Params& p, const double* ws, double* out) {
        out[0] = ws[min_p_at(p)];
        out[1] = ws[max_eta_lhat_at(p)];
    }
};

} // namespace dpr::learners
