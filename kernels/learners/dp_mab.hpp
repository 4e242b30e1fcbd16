#pragma once
// DP-MAB: Agarwal & Singh 2017 Algorithm 4 (private bandit reduction) around Algorithm 5 (Exp2 with
// uniform exploration, specialised to MAB), AS17 §4.1, Theorem 4.1 (docs/spec/as17.md §A3 + §A4):
//   play i_t ~ p_t = (1 - gamma) q_t + gamma/N,  q_t(i) ∝ exp(-eta Lhat_{t-1}(i)) (kernels/learners/exp3.hpp)
//   observe c_t = l_t(i_t);  feed back c~_t = c_t + Z_t(i_t),  Z_t(i_t) ~ Lap(lambda)          (Alg. 4)
//   lhat_t = (c~_t / p_t(i_t)) e_{i_t};  Lhat_t = Lhat_{t-1} + lhat_t                          (Alg. 5)
// charged <l_t, p_t> (pseudo-regret) and l_t(i_t) (realised regret), docs/spec/model.md §0.3 item 3.
//
// Privacy (Lemma 4.2, [RECON]): the data enter only through c~_t, one Laplace mechanism per round on a
// scalar of replace-one sensitivity B = max |<l - l', e_i>| = 1 (losses in [0,1]^N); lambda = B/eps makes
// the whole output sequence eps-DP (post-processing), and in fact locally private (each observed loss is
// privatised on its own; Asi-Raman-Talwar 2025, as cited in docs/spec/as17.md §A4).
// Parameters (Theorem 4.1, [RECON — verify], each a key defaulting to the spec's value):
//   B~ = 1 + lambda ln(N T^2)   (= 1 + ln(N T^2)/eps: the bound on |c~_t| on the good event F^c, A3)
//   eta = sqrt(ln N / (3 N T B~^2)),   gamma = eta N B~ = sqrt(N ln N / (3T))
//   E[Regret_T] <= 2 sqrt(3 N T ln N) B~ + 1 = O(sqrt(N T log N) log(N T) / eps).
// gamma <= 1 needs T >= N ln N / 3; below that, check() accepts the point with a warning and the
// automatic gamma is capped at 1 (uniform play; the bound does not apply).
// With lambda = 0 (epsilon = inf, or noise_scale = 0) the feedback is c_t itself and every operation is
// exp3's with the same eta and gamma: identical arms, losses and regret
// (tests/learners/test_as17_bandits.cpp).
//
// Randomness: i_t as exp3 (Purpose::Sampling, round t). The noise vector Z_t is defined coordinatewise by the
// streams (Purpose::FeedbackNoise, sub 0, round t, element i) (uniform 0, inverse-CDF Laplace, in the run's
// precision), independent of everything else; the learner draws only the coordinate Z_t(i_t) it feeds back
// (one Laplace draw per round). Tests replay other coordinates (Lemma 4.3 compares against a fixed arm x = e_j,
// which needs Z_t(j)): feedback_noise().
//
// Lattice noise (noise = "discrete-laplace", the default in float precision; docs/spec/model.md §1.8 with h' = 1,
// d = 1): c~_t = Gamma (k_t + n_t), k_t = c_t / Gamma rounded at random onto the integers (the word of
// (FeedbackNoise, sub 2, round t, element i_t)), n_t ~ DLap(lambda / Gamma) from the 29 words of (FeedbackNoise,
// sub 1, round t, element i_t) (noise/discrete_laplace.hpp). c~_t is an exact double in both precisions, so the
// float run's feedback is the double run's bit for bit and the floating-point attack has nothing to act on; the
// reported eps is lattice_guarantee's, at most the continuous B / lambda it replaces (lambda raised by <= 0.05%:
// lattice_scale_for). Z_t(i_t) is then c~_t - c_t (the rounding included).
//
// Diagnostics (A4 "Record" list, read after round T):
//   max_noise_over_lambda  max_t |Z_t(i_t)| / lambda                  (0 when lambda = 0)
//   event_F                1 if max_t |Z_t(i_t)| >= lambda ln(N T^2), else 0: the bad event F of A3 with
//                          ||Z_t||_inf taken over the coordinates actually drawn; Pr[F] <= T/(N T^2) <= 1/T
//   min_p_played           min_t p_t(i_t)                             (>= gamma/N)
//   max_eta_lhat           max_t eta |lhat_t(i_t)|    (<= eta N B~ / gamma = 1 on F^c: Lemma 4.4)
//   sum_feedback_noise     sum_t Z_t(i_t)             (noisy minus true realised cost: Lemma 4.3 tests)

#include "kernels/learners/common.hpp"
#include "kernels/learners/exp3.hpp"
#include "kernels/mechanisms/lattice.hpp"
#include "kernels/noise/discrete_laplace.hpp"
#include "kernels/noise/lane_noise.hpp"

namespace dpr::learners {

struct DpMab : Learner<Geometry::Simplex> {
    static constexpr const char* kName = "dp-mab";
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, "",
         "privacy parameter eps > 0 of the whole play sequence; inf = no feedback noise: then equal to exp3 bit for "
         "bit given the same eta and gamma (the automatic values differ: exp3 has gamma = 0)",
         true},
        {"loss_bound", KeyType::Real, "1", 0.0, 1e12, "",
         "B of Lemma 4.2 [RECON]: replace-one sensitivity of the observed loss, max |<l - l', e_i>| = 1 for "
         "losses in [0,1]^N; lambda = B/eps; the reported eps is max(B, 1)/lambda (a B below 1 gives more eps)",
         true},
        {"noise_scale", KeyType::Real, "auto", 0.0, 1e12, "",
         "Laplace scale lambda of the feedback noise; auto = loss_bound/epsilon (Lemma 4.2); 0 = no noise; "
         "the reported eps is then loss_bound/lambda"},
        {"btilde", KeyType::Real, "auto", 1.0, 1e12, "",
         "B~, bound on |c~_t| on the good event (>= 1: |c_t| itself reaches 1); auto = 1 + lambda ln(N T^2) "
         "(A3; Thm 4.1 [RECON]: 1 + ln(N T^2)/eps)"},
        {"eta", KeyType::Real, "auto", 0.0, 1e6, "",
         "learning rate; auto = sqrt(ln N / (3 N T B~^2)) (AS17 Thm 4.1 [RECON]; docs/spec/as17.md §A4)"},
        {"gamma", KeyType::Real, "auto", 0.0, 1.0, "",
         "uniform exploration of Alg. 5; auto = eta N B~ (Thm 4.1 [RECON]), capped at 1 when T < N ln N / 3"},
        {"noise", KeyType::Choice, "laplace", 0, 1, "laplace|discrete-laplace",
         "feedback noise: laplace = continuous Lap(lambda) in the run's precision; discrete-laplace = lattice noise, "
         "the loss rounded at random onto a lattice and discrete Laplace noise added, an exact release private in "
         "floating point (the default in float precision where it applies: eps up to 29 at least; docs/spec/model.md §1.8)"},
    };
    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    /// The largest feedback noise scale (noise_scale's range): beyond it the estimates c~ / p reach the
    /// limits of double arithmetic within a few rounds, and every play is uniformly random anyway.
    static constexpr double kMaxLambda = 1e12;
    static constexpr int kLossBound = key_index(kKeys, "loss_bound");
    /// max_i |l_t(i) - l'_t(i)| for losses in [0,1]^N: the sensitivity of the observed loss (Lemma 4.2).
    static constexpr double kLossSensitivity = 1.0;
    static constexpr int kNoiseScale = key_index(kKeys, "noise_scale");
    static constexpr int kBtilde = key_index(kKeys, "btilde");
    static constexpr int kEta = key_index(kKeys, "eta");
    static constexpr int kGamma = key_index(kKeys, "gamma");
    static constexpr int kNoise = key_index(kKeys, "noise");

    struct Params {
        Exp3::Params base; ///< d, T, eta, gamma of Algorithm 5
        double epsilon;    ///< as given (the reported guarantee is loss_bound / lambda)
        double loss_bound; ///< B of Lemma 4.2
        double lambda;     ///< Laplace scale of Z_t(i_t); 0 = noise off
        double btilde;     ///< B~
        double f_level;    ///< lambda ln(N T^2): event F when some |Z_t(i_t)| reaches it
        bool lattice;      ///< lattice noise (noise = "discrete-laplace"; docs/spec/model.md §1.8)
        noise::DlapTable dlap; ///< its lattice and thresholds (DLap(lambda / Gamma))
    };

    static constexpr std::array<const char*, 5> kDiagnostics = {
        "max_noise_over_lambda", "event_F", "min_p_played", "max_eta_lhat", "sum_feedback_noise"};

    /// ln(N T^2), the log factor of the good event (A3; §1.1 with delta = 1/T^2 per round).
    static double log_nt2(std::uint32_t d, std::uint64_t T) {
        return std::log(static_cast<double>(d)) + 2.0 * std::log(static_cast<double>(T));
    }

    /// Everything resolved, with gamma before the cap at 1 (check() reports the cap).
    static Params resolve_uncapped(const KeyValues& kv, const Problem& pb) {
        Params p{};
        p.base.d = pb.d;
        p.base.T = pb.T;
        p.epsilon = kv.num[kEpsilon];
        p.loss_bound = kv.get(kLossBound, 1.0);
        if (kv.given[kNoiseScale])
            p.lambda = kv.num[kNoiseScale];
        else
            p.lambda = std::isinf(p.epsilon) ? 0.0 : p.loss_bound / p.epsilon;
        // Lattice noise when asked for, and by default in float precision where it applies (otherwise the continuous
        // sampler, with run.json's float warning). The automatic lambda is raised to the smallest whose lattice eps
        // is at most the continuous one; a given noise_scale is kept.
        const bool asked = kv.given[kNoise] && static_cast<int>(kv.num[kNoise]) == 1;
        if (p.lambda > 0.0 && mech::lattice_wanted(asked, kv.given[kNoise], pb.float_precision)) {
            const mech::RoundLattice lat = mech::round_lattice(p.lambda, kv.given[kNoiseScale],
                                                               std::fmax(p.loss_bound, kLossSensitivity), 1,
                                                               kLossSensitivity);
            if (lat.obstacle == nullptr) {
                p.lattice = true;
                p.lambda = lat.scale;
                p.dlap = lat.dlap;
            }
        }
        const double n = static_cast<double>(pb.d), T = static_cast<double>(pb.T);
        p.f_level = p.lambda * log_nt2(pb.d, pb.T);
        p.btilde = kv.get(kBtilde, 1.0 + p.f_level);
        p.base.eta = kv.get(kEta, std::sqrt(std::log(n) / (3.0 * n * T * p.btilde * p.btilde)));
        p.base.gamma = kv.get(kGamma, p.base.eta * n * p.btilde);
        return p;
    }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p = resolve_uncapped(kv, pb);
        if (p.base.gamma > 1.0) p.base.gamma = 1.0; // only the automatic gamma can exceed 1
        return p;
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (pb.d < 1) return diag.fail("d", "dp-mab needs d >= 1 arms (got %u)", pb.d);
        const Params p = resolve_uncapped(kv, pb);
        if (!kv.given[kNoiseScale] && p.lambda > kMaxLambda)
            return diag.fail("epsilon",
                             "gives a feedback noise scale lambda = loss_bound / eps = %g, above %g (the range of "
                             "noise_scale): raise epsilon or lower loss_bound",
                             p.lambda, kMaxLambda);
        if (kv.given[kNoise] && static_cast<int>(kv.num[kNoise]) == 1 && p.lambda > 0.0 && !p.lattice) {
            const char* why = mech::round_lattice(p.lambda, kv.given[kNoiseScale],
                                                  std::fmax(p.loss_bound, kLossSensitivity), 1, kLossSensitivity)
                                  .obstacle;
            return diag.fail("noise", "lattice noise %s (docs/spec/model.md §1.8)", why ? why : "does not apply");
        }
        const double n = static_cast<double>(pb.d);
        if (p.base.gamma > 1.0) {
            // Accepted: the run is meaningful (uniform play), only Thm 4.1's bound is void.
            if (kv.given[kEta])
                diag.fail(
                    "gamma",
                    "gamma = eta N B~ = %.4g exceeds 1 (Thm 4.1 needs eta N B~ <= 1); it is capped at 1 "
                    "(uniform play) and the Thm 4.1 bound does not apply",
                    p.base.gamma);
            else
                diag.fail(
                    "gamma",
                    "T = %llu < N ln N / 3 = %.4g: Thm 4.1's exploration rate gamma = sqrt(N ln N / (3T)) "
                    "= %.4g exceeds 1; it is capped at 1 (uniform play) and the Thm 4.1 bound does not apply",
                    static_cast<unsigned long long>(pb.T), n * std::log(n) / 3.0, p.base.gamma);
            diag.warning_only = true;
            return true;
        }
        if (p.base.eta * n * p.btilde > p.base.gamma * (1.0 + 1e-12)) {
            diag.fail(
                "eta",
                "eta N B~ / gamma = %.4g > 1: Lemma 4.4's condition eta |lhat_t| <= 1 on F^c fails, so the "
                "Thm 4.1 bound does not apply (auto: gamma = eta N B~)",
                p.base.eta * n * p.btilde / p.base.gamma);
            diag.warning_only = true;
            return true;
        }
        return true;
    }

    static PrivacyReport privacy(const Params& p) {
        PrivacyReport r;
        r.calibration = "paper";
        if (!(p.lambda > 0.0)) {
            r.mechanism = "none (noise off)";
            return r;
        }
        // The observed loss of one round moves by at most 1 between neighbours (losses in [0,1]^N; AS17 Lemma 4.2,
        // docs/spec/as17.md §A3), whatever loss_bound claims: a loss_bound below 1 buys less noise and more eps,
        // and the report says so (loss_bound above 1 reports the larger, still valid, bound asked for).
        r.noise_scale = p.lambda;
        if (p.lattice) {
            // One exact release per round of a scalar of sensitivity B: the tree bound with h' = 1, d = 1
            // (docs/spec/model.md §1.8).
            const mech::Guarantee g = mech::lattice_guarantee(p.dlap, 1, std::fmax(p.loss_bound, kLossSensitivity), 1);
            r.set(g);
            r.mechanism = "lattice noise on each observed loss (AS17 Alg. 4): randomised rounding onto Gamma Z, "
                          "discrete Laplace noise, exact releases";
            return r;
        }
        r.epsilon = std::fmax(p.loss_bound, kLossSensitivity) / p.lambda;
        r.delta = 0.0;
        r.accountant = "pure-laplace (local: Lemma 4.2)";
        r.mechanism = "Laplace noise on each observed loss (AS17 Alg. 4)";
        return r;
    }

    static constexpr bool kInstanceLanes = true;

    /// Exp3's state, then the scalars max_t |Z_t(i_t)| and sum_t Z_t(i_t).
    enum Scalar : int { kNoiseMax = Exp3::kScalars, kNoiseSum, kScalars };
    DPR_HD static WorkspaceSpec workspace(const Params& p) { return Exp3::workspace(p.base).scalars(kScalars); }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using U = typename Team::template uni<double>;
        Exp3::init(p.base, team, ws);
        if (team.rank() == 0) {
            team.put(ws.scalars, kNoiseMax, U(0.0));
            team.put(ws.scalars, kNoiseSum, U(0.0));
        }
        team.sync();
    }

    /// Z_t(i) ~ Lap(lambda) of each instance of the team: coordinate i of round t's feedback noise.
    template <class Team, class UI>
    DPR_HD static typename Team::template uni<double> feedback_noise(const Params& p, const Team& team, std::uint64_t t,
                                                                     UI i) {
        using R = typename Team::real;
        const auto u = rng::instance_uniform<R>(team, rng::Purpose::FeedbackNoise, 0, t, i);
        return convert<double>(noise::laplace_from_u(u, typename Team::template uni<R>(static_cast<R>(p.lambda))));
    }
    /// The same for one instance in double precision (tests: coordinates the learner did not draw).
    static double feedback_noise(const Params& p, RngKey key, std::uint32_t instance, std::uint64_t t, std::uint32_t i) {
        SerialTeam<double> team;
        team.rng = key;
        team.id = instance;
        return feedback_noise(p, team, t, i);
    }

    /// With lattice noise, the release c~_t of coordinate i of round t for the observed loss c (see the header):
    /// Gamma (k + n), exact in double whatever the team's precision.
    template <class Team, class UI>
    DPR_HD static typename Team::template uni<double> lattice_feedback(const Params& p, const Team& team, std::uint64_t t,
                                                                       UI i, typename Team::template uni<double> c) {
        using U = typename Team::template uni<std::uint32_t>;
        const auto round = static_cast<std::uint32_t>(t);
        const U w = rng::instance_stream(team, rng::Purpose::FeedbackNoise, 2u, round, i).block(0).w[0];
        return noise::lattice_release(c, rng::instance_stream(team, rng::Purpose::FeedbackNoise, 1u, round, i), w,
                                      p.dlap);
    }
    /// The same for one instance, in precision R's team (tests: the release is the same in float and double).
    template <class R = double>
    static double lattice_feedback(const Params& p, RngKey key, std::uint32_t instance, std::uint64_t t,
                                   std::uint32_t i, double c) {
        SerialTeam<R> team;
        team.rng = key;
        team.id = instance;
        return lattice_feedback(p, team, t, i, c);
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t t, const Row& row) {
        const Exp3::Play<Team> pl = Exp3::play(p.base, team, ws, t, row);
        const auto observed = team.loss_exact_at(row, pl.arm); // c_t = <l_t, e_{i_t}>
        auto feedback = observed;
        if (p.lambda > 0.0) {
            auto z = observed; // Z_t(i_t), set below
            if (p.lattice) {
                feedback = lattice_feedback(p, team, t, pl.arm, observed); // c~_t, exact
                z = feedback - observed;                                    // the rounding included (diagnostics)
            } else {
                z = feedback_noise(p, team, t, pl.arm);
                feedback = observed + z; // c~_t
            }
            if (team.rank() == 0) {
                team.put(ws.scalars, kNoiseMax, vmax(team.get(ws.scalars, kNoiseMax), vabs(z)));
                team.put(ws.scalars, kNoiseSum, team.get(ws.scalars, kNoiseSum) + z);
            }
        }
        Exp3::update(p.base, team, ws, pl, feedback);
        return {pl.expected, observed};
    }

    DPR_HD static void diagnostics(const Params& p, const double* scalars, double* out) {
        const double zmax = scalars[kNoiseMax];
        const bool noisy = p.lambda > 0.0;
        out[0] = noisy ? zmax / p.lambda : 0.0;
        out[1] = noisy && zmax >= p.f_level ? 1.0 : 0.0;
        out[2] = scalars[Exp3::kMinP];
        out[3] = scalars[Exp3::kMaxEtaLhat];
        out[4] = scalars[kNoiseSum];
    }
};

} // namespace dpr::learners
