#pragma once
// SCRiBLe (Abernethy, Hazan, Rakhlin 2008/2012, "Competing in the dark") for bandit linear optimisation
// with a nu-self-concordant barrier R on K, and its private version, AS17 Algorithm 4 + SCRiBLe
// (AS17 §4.2, Thm D.1 / 4.5; docs/spec/as17.md §A3, §A5). One template, instantiated per barrier
// (kernels/learners/barriers.hpp) because the decision set is a compile-time property of a learner:
//
//   scrible-ball  scrible-cube  scrible-simplex            (this file; non-private)
//   dp-scrible-ball  dp-scrible-cube  dp-scrible-simplex   (kernels/learners/dp_scrible.hpp)
//
// Round t (1-indexed), in the barrier's parameters x in R^n (n = d; simplex n = d - 1):
//   x_1 = argmin R (the analytic centre)
//   (i_t, s_t) ~ Unif[n] x Unif{-1,+1}                   Purpose::Exploration, round t, element 0
//   (lambda_i, v_i) = eigenpair i_t of Hess R(x_t)
//   y_t = x_t + s_t lambda_i^{-1/2} v_i                   on the Dikin ellipsoid boundary, inside K
//   charged <l_t, y~_t> (y~_t the played point in R^d)    RoundResult{expected = realized = <l_t, y~_t>}
//   c~_t = <l_t, y~_t> + <Z_t, y~_t>, Z_t ~ Lap^d(lam)   dp only (AS17 Alg. 4); Purpose::FeedbackNoise,
//                                                         round t, element k = coordinates 2k, 2k+1;
//                                                         lam = 0: c~ = c
//   lattice noise (noise = "discrete-laplace", the default in float): c~_t = <r_t, y~_t>, r_t(i) = Gamma (k_i + n_i)
//   the exact release: k_i = l_t(i) / Gamma rounded at random (FeedbackNoise, sub 2, round t, element i, word 0),
//   n_i ~ DLap(lam / Gamma) (the 29 words of FeedbackNoise, sub 1, round t, element i); docs/spec/model.md §1.8
//   lhat_t = n c~_t s_t lambda_i^{1/2} v_i               E[lhat_t | past] = l~_t (in parameters)
//   x_{t+1} = argmin eta <sum_{s<=t} lhat_s, x> + R(x)   closed form (ball, cube) / damped Newton (simplex)
// The learner uses the scalar c~_t only (bandit feedback; kernels/learners/common.hpp contract). The
// regret the engine records is sum_t <l_t, y~_t> against the set's comparator (pseudo-regret of the
// played points, docs/spec/model.md §0.3 item 3 / docs/spec/as17.md §A5, what to record).
//
// Step size (A5) [RECON: eta key]: eta = sqrt(nu ln T) / (4 n B~ sqrt T), with n the number of
// parameters, B~ = 1 for scrible (Thm D.1) and B~ = M + ||X||_1 lam ln(d T^2) for dp-scrible (Thm 4.5;
// = M + ||X||_1 ||Y||_1 ln(d T^2)/eps under the paper calibration; M = 1 for all three sets). With
// epsilon = inf, lam = 0 and B~ = 1 (divided by exactly 1.0), every operation equals scrible's: the same
// exploration streams, the same doubles, bitwise identical regret (tests/learners/test_as17_blo.cpp).
//
// Privacy (A3, Lemma 4.2): each round's feedback is a Laplace release whose data enter through one
// round only, so the output sequence is eps-DP with eps = Delta / lam, Delta = max_{x in K, l,l' in Y}
// |<l - l', x>| / ||x||_inf (replace-one; ball 2 sqrt(d), cube 2, simplex d). paper: lam = ||Y||_1/eps
// (ball sqrt(d), cube 1, simplex d), which for the symmetric ball/cube provides 2 eps (reported);
// strict (the default, so that a run never gives more eps than requested): lam = Delta/eps, the same lam as paper
// on the simplex. The guarantee is local (noise added to each observed loss). With lattice noise the vector r_t is
// an exact release (the same bits in float and double) of l1 sensitivity Delta over d coordinates, one per round:
// eps = (Delta/Gamma + d 2^-31)(e^{L^} - 1), delta = d P^(|n| >= 2^17 - ceil(Delta/Gamma) - 2) (mech::lattice_guarantee
// with h' = 1; the automatic lam raised by 1/(2t) <= 0.05%, plus d / (2^31 t eps) from the d 2^-31 term, so that eps
// stays at most the continuous Delta/lam); c~_t and everything after it are post-processing of r_t. The diagnostics
// below are the simulator's, not part of the release.
//
// Diagnostics (per instance): max_outside = max_t max(0, -slack(y_t)) (must be 0: y_t in K),
// min_slack_y / min_slack_x = min_t of the smallest constraint slack of y_t / x_t (barriers.hpp),
// newton_iters_max = most Newton steps of one FTRL step (0 for closed forms); dp adds max_noise_inf =
// max_t ||Z_t||_inf and event_F = 1{exists t: ||Z_t||_inf >= lam ln(d T^2)} (A3's event F; Pr <= 1/T); with lattice
// noise Z_t = r_t - l_t (the rounding included).
//
// Backends: the registered learners run on lanes (ScribleLanes, kernels/learners/scrible_lanes.hpp: 16 instances
// per SIMD step, a GPU thread per instance; the simplex on coordinate lanes runs the lane round on one member). This
// serial round is their scalar reference (the same bits in double), run by the tests through test::Solo: all
// per-round work on rank 0 of the team, the charged loss broadcast (team.broadcast). State and scratch live in the
// workspace; nothing is allocated, nothing throws, there is no dimension cap.
//
// Workspace of this reference: one double array g[n] (sum of lhat), x[n], aux[A] (barrier slack state), v[n]
// (eigenvector / Newton direction scratch), y[d] (played point / gradient scratch); the 6 diagnostic slots are its
// scalars. It declares kInstanceLanes = false: its scalar code indexes this contiguous state directly.

#include "kernels/learners/barriers.hpp"
#include "kernels/learners/common.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/lattice.hpp"
#include "kernels/noise/discrete_laplace.hpp"
#include "kernels/noise/samplers.hpp"
#include "kernels/rng/uniform.hpp"

namespace dpr::learners {

namespace scrible_detail {

inline constexpr KeySpec kEpsilonKey{
    "epsilon",
    KeyType::Real,
    "",
    0.0,
    kInf,
    "",
    "privacy parameter eps > 0 of the whole output sequence; inf = no noise (equal to scrible-<set> bit for bit when eta and b_tilde are automatic or equal)",
    true};
inline constexpr KeySpec kCalibrationKey{
    "calibration",
    KeyType::Choice,
    "strict",
    0,
    1,
    "paper|strict",
    "strict (the default): lambda = Delta/eps, Delta = max |<l - l', x>|/||x||_inf (2 ||Y||_1 for ball and cube, "
    "||Y||_1 for the simplex), gives eps; paper: lambda = ||Y||_1/eps (AS17 Lemma 4.2, B = ||Y||_1), gives 2 eps on "
    "the ball and the cube"};
inline constexpr KeySpec kNoiseScaleKey{
    "noise_scale",
    KeyType::Real,
    "auto",
    0.0,
    mech::kMaxNoiseScale,
    "",
    "override lambda, the Laplace scale of each coordinate of Z_t; the reported eps is then Delta/lambda",
    true};
inline constexpr KeySpec kBTildeKey{"b_tilde",
                                    KeyType::Real,
                                    "auto",
                                    1.0,
                                    kInf,
                                    "",
                                    "B~ of AS17 Thm 4.5 [RECON]; auto = M + ||X||_1 lambda ln(d T^2) (= M + "
                                    "||X||_1 ||Y||_1 ln(d T^2)/eps with the paper calibration), M = 1",
                                    true};
inline constexpr KeySpec kEtaKey{"eta",
                                 KeyType::Real,
                                 "auto",
                                 0.0,
                                 kInf,
                                 "",
                                 "step size; auto = sqrt(nu ln T)/(4 n sqrt T) (AHR; AS17 Thm D.1) [RECON]; a given "
                                 "eta must keep eta n <= 1 (stability)",
                                 true};
inline constexpr KeySpec kDpEtaKey{"eta",
                                   KeyType::Real,
                                   "auto",
                                   0.0,
                                   kInf,
                                   "",
                                   "step size; auto = sqrt(nu ln T)/(4 n B~ sqrt T) (AS17 Thm 4.5) [RECON]; a given "
                                   "eta must keep eta n B~ <= 1 (stability; B~ from lambda)",
                                   true};
inline constexpr KeySpec kNewtonTolKey{
    "newton_tol",
    KeyType::Real,
    "1e-12",
    0.0,
    1.0,
    "",
    "FTRL step (damped Newton): stop when the Newton decrement <= newton_tol",
    true};
inline constexpr KeySpec kNewtonItersKey{
    "newton_iters", KeyType::Int, "100", 1, 10000, "", "FTRL step (damped Newton): iteration cap"};

inline constexpr KeySpec kNoiseKey{
    "noise",
    KeyType::Choice,
    "laplace",
    0,
    1,
    "laplace|discrete-laplace",
    "feedback noise: laplace = continuous Lap^d(lambda) in the run's precision; discrete-laplace = lattice noise, the "
    "loss vector rounded at random onto a lattice and discrete Laplace noise added per coordinate, an exact release "
    "private in floating point (the default in float precision where it applies; docs/spec/model.md §1.8)"};

template <bool kPrivate, bool kNewton>
struct Keys;
template <>
struct Keys<false, false> {
    static constexpr std::array<KeySpec, 1> kKeys = {kEtaKey};
};
template <>
struct Keys<false, true> {
    static constexpr std::array<KeySpec, 3> kKeys = {kEtaKey, kNewtonTolKey, kNewtonItersKey};
};
template <>
struct Keys<true, false> {
    static constexpr std::array<KeySpec, 6> kKeys = {kEpsilonKey, kCalibrationKey, kNoiseScaleKey, kBTildeKey,
                                                     kDpEtaKey,   kNoiseKey};
};
template <>
struct Keys<true, true> {
    static constexpr std::array<KeySpec, 8> kKeys = {kEpsilonKey, kCalibrationKey, kNoiseScaleKey, kBTildeKey,
                                                     kDpEtaKey,   kNewtonTolKey,   kNewtonItersKey, kNoiseKey};
};

template <bool kPrivate>
struct Diagnostics;
template <>
struct Diagnostics<false> {
    static constexpr std::array<const char*, 4> kNames = {"max_outside", "min_slack_y", "min_slack_x",
                                                          "newton_iters_max"};
};
template <>
struct Diagnostics<true> {
    static constexpr std::array<const char*, 6> kNames = {"max_outside",      "min_slack_y",   "min_slack_x",
                                                          "newton_iters_max", "max_noise_inf", "event_F"};
};

template <class B, bool kPrivate>
constexpr const char* name() {
    if constexpr (B::kGeometry == Geometry::Ball)
        return kPrivate ? "dp-scrible-ball" : "scrible-ball";
    else if constexpr (B::kGeometry == Geometry::Cube)
        return kPrivate ? "dp-scrible-cube" : "scrible-cube";
    else
        return kPrivate ? "dp-scrible-simplex" : "scrible-simplex";
}

} // namespace scrible_detail

template <class B, bool kPrivate>
struct ScribleLearner : SerialLearner<ScribleLearner<B, kPrivate>> {
    using Barrier = B;
    static constexpr const char* kName = scrible_detail::name<B, kPrivate>();
    static constexpr Geometry kGeometry = B::kGeometry;
    static constexpr auto kKeys = scrible_detail::Keys<kPrivate, !B::kClosedForm>::kKeys;
    static constexpr auto kDiagnostics = scrible_detail::Diagnostics<kPrivate>::kNames;

    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    static constexpr int kCalibration = key_index(kKeys, "calibration");
    static constexpr int kNoiseScale = key_index(kKeys, "noise_scale");
    static constexpr int kBTilde = key_index(kKeys, "b_tilde");
    static constexpr int kEta = key_index(kKeys, "eta");
    static constexpr int kNewtonTol = key_index(kKeys, "newton_tol");
    static constexpr int kNewtonIters = key_index(kKeys, "newton_iters");
    static constexpr int kNoise = key_index(kKeys, "noise");

    static constexpr double kM = 1.0; ///< M = max |<l, x>| over Y x K (1 for ball, cube, simplex; §0.2)
    static constexpr double kLossCoordMax = 1.0; ///< max |l(i)| over Y (ball, cube, simplex; §0.2): the lattice's range

    struct Params : Dims { // d: the ambient dimension (loss vectors, played points)
        std::uint32_t n; ///< barrier parameters
        double nu; ///< barrier complexity
        double eta;
        double lambda;      ///< Laplace scale of each coordinate of Z_t (0 = no noise)
        double b_tilde;     ///< B~ (1 for scrible)
        double f_threshold; ///< lambda ln(d T^2): event F threshold (A3)
        double epsilon;     ///< requested eps (inf for scrible)
        double delta1;      ///< replace-one Delta of Lemma 4.2 (for the reported eps)
        barriers::NewtonSettings newton;
        mech::Calibration calibration;
        bool lattice;          ///< lattice noise (noise = "discrete-laplace"; docs/spec/model.md §1.8)
        noise::DlapTable dlap; ///< its lattice and thresholds (DLap(lambda / Gamma))
    };

    // ---- configuration --------------------------------------------------------------------------------

    /// sqrt(nu ln T) / (4 n sqrt T): Thm D.1's step for feedback bounded by 1.
    static double base_eta(double nu, std::uint32_t n, std::uint64_t T) {
        const double Td = static_cast<double>(T);
        return std::sqrt(nu * std::log(Td)) / (4.0 * static_cast<double>(n) * std::sqrt(Td));
    }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        static_cast<Dims&>(p) = dims(pb);
        p.n = B::params(pb.d);
        p.nu = B::nu(p.n);
        const mech::LossSetNorms y = B::loss_norms(pb.d);
        p.delta1 = y.delta1;
        p.epsilon = kInf;
        p.lambda = 0.0;
        p.calibration = mech::Calibration::Paper;
        if constexpr (kPrivate) {
            p.epsilon = kv.num[kEpsilon];
            // strict by default: the paper's lambda = ||Y||_1/eps gives 2 eps on the symmetric ball and cube
            // (docs/spec/as17.md §A3); on the simplex both give the same lambda.
            p.calibration = static_cast<int>(kv.get(kCalibration, 1)) == 0 ? mech::Calibration::Paper
                                                                           : mech::Calibration::Strict;
            if (kv.given[kNoiseScale])
                p.lambda = kv.num[kNoiseScale];
            else if (!std::isinf(p.epsilon))
                p.lambda = (p.calibration == mech::Calibration::Paper ? y.y1 : y.delta1) / p.epsilon;
            // Lattice noise when asked for, and by default in float precision where it applies (otherwise the
            // continuous sampler, with run.json's float warning): the automatic lambda raised so that the lattice's
            // eps is at most Delta / lambda, a given noise_scale kept.
            const bool asked = kv.given[kNoise] && static_cast<int>(kv.num[kNoise]) == 1;
            if (p.lambda > 0.0 && mech::lattice_wanted(asked, kv.given[kNoise], pb.float_precision)) {
                const mech::RoundLattice lat =
                    mech::round_lattice(p.lambda, kv.given[kNoiseScale], y.delta1, pb.d, kLossCoordMax);
                if (lat.obstacle == nullptr) {
                    p.lattice = true;
                    p.lambda = lat.scale;
                    p.dlap = lat.dlap;
                }
            }
        }
        const double Td = static_cast<double>(pb.T);
        p.f_threshold = p.lambda * std::log(static_cast<double>(pb.d) * Td * Td);
        p.b_tilde = kM + B::x_norm1(pb.d) * p.f_threshold;
        if constexpr (kPrivate) p.b_tilde = kv.get(kBTilde, p.b_tilde);
        p.eta = kv.get(kEta, base_eta(p.nu, p.n, pb.T) / p.b_tilde);
        if constexpr (!B::kClosedForm) {
            p.newton.tol = kv.get(kNewtonTol, 1e-12);
            p.newton.max_iter = static_cast<std::uint32_t>(kv.get(kNewtonIters, 100));
        }
        return p;
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        const std::uint32_t dmin = B::kGeometry == Geometry::Simplex ? 2 : 1;
        if (pb.d < dmin) return diag.fail("d", "%s needs d >= %u (got %u)", kName, dmin, pb.d);
        const Params p = resolve(kv, pb);
        if (!(p.lambda <= mech::kMaxNoiseScale))
            return diag.fail("epsilon",
                             "gives a feedback noise scale lambda = %g, above %g, the largest the engine computes with",
                             p.lambda, mech::kMaxNoiseScale);
        if constexpr (kPrivate) {
            if (kv.given[kNoise] && static_cast<int>(kv.num[kNoise]) == 1 && p.lambda > 0.0 && !p.lattice) {
                const char* why = mech::round_lattice(p.lambda, kv.given[kNoiseScale], p.delta1, pb.d, kLossCoordMax)
                                      .obstacle;
                return diag.fail("noise", "lattice noise %s (docs/spec/model.md §1.8)", why ? why : "does not apply");
            }
        }
        // Stability (AHR; docs/spec/as17.md §A5): the analysis needs eta ||lhat_t||*_{x_t} = eta n |c~_t| <= 1/2, and
        // with eta n B~ much above 1 the iterate runs into the boundary of K faster than double precision can
        // follow (the Hessian's eigenvalues overflow within a few hundred rounds). B~ here is the feedback's scale
        // on the good event, M + ||X||_1 lambda ln(d T^2), whatever b_tilde says. Only a given eta or b_tilde is
        // refused; the automatic one meets it whenever nu ln T <= 16 T.
        const double Td = static_cast<double>(pb.T);
        const double btilde = kM + B::x_norm1(pb.d) * p.lambda * std::log(static_cast<double>(pb.d) * Td * Td);
        const double stab = p.eta * static_cast<double>(p.n) * btilde;
        const bool given = kv.given[kEta] || (kBTilde >= 0 && kv.given[kBTilde]);
        if (given && !(stab <= 1.0))
            return diag.fail(kv.given[kEta] ? "eta" : "b_tilde",
                             "gives eta n B~ = %g (eta = %g, n = %u, B~ = %g): above 1, where SCRiBLe's iterate runs "
                             "into the boundary of K faster than double precision follows (AHR's stability condition "
                             "is eta n B~ <= 1/2)",
                             stab, p.eta, p.n, btilde);
        const double nu = B::nu(B::params(pb.d));
        if (!(Td > 8.0 * nu * std::log(Td))) {
            diag.fail("rounds", "T = %llu <= 8 nu ln T = %.0f (nu = %g): outside AS17 Thm D.1's condition",
                      static_cast<unsigned long long>(pb.T), 8.0 * nu * std::log(Td), nu);
            diag.warning_only = true;
        }
        return true;
    }

    static PrivacyReport privacy(const Params& p) {
        PrivacyReport r;
        if constexpr (!kPrivate) return r;
        r.calibration = p.calibration == mech::Calibration::Paper ? "paper" : "strict";
        if (!(p.lambda > 0.0)) {
            r.mechanism = "none (noise off)";
            return r;
        }
        r.noise_scale = p.lambda;
        if (p.lattice) {
            // One exact release of the d-vector r_t per round, l1 sensitivity Delta: the tree bound with h' = 1
            // (docs/spec/model.md §1.8, "One release per round").
            const mech::Guarantee g = mech::lattice_guarantee(p.dlap, 1, p.delta1, p.d);
            r.set(g);
            r.mechanism = "lattice noise on each round's loss vector (AS17 Alg. 4, local): randomised rounding onto "
                          "Gamma Z^d, discrete Laplace noise, exact releases; feedback <r_t, y_t>";
            return r;
        }
        r.epsilon = p.delta1 / p.lambda; // Lemma 4.2 with the exact replace-one Delta
        r.accountant = "pure-laplace";
        r.mechanism = "Laplace feedback noise <Z_t, y_t>, Z_t ~ Lap^d(lambda) (AS17 Alg. 4, local)";
        return r;
    }

    // ---- workspace layout -----------------------------------------------------------------------------

    static constexpr std::uint32_t kDiagSlots = 6;
    enum DiagSlot : std::uint32_t { kMaxOutside, kMinSlackY, kMinSlackX, kNewtonMax, kMaxNoise, kEventF };

    DPR_HD static double* g_of(const Params&, double* ws) { return ws; }
    DPR_HD static double* x_of(const Params& p, double* ws) { return ws + p.n; }
    DPR_HD static double* aux_of(const Params& p, double* ws) { return ws + 2 * std::uint64_t{p.n}; }
    DPR_HD static double* v_of(const Params& p, double* ws) { return ws + 2 * std::uint64_t{p.n} + B::aux_size(p.n); }
    DPR_HD static double* y_of(const Params& p, double* ws) { return ws + 3 * std::uint64_t{p.n} + B::aux_size(p.n); }
    /// Doubles of the state array (g, x, aux, v, y); the diagnostics are the workspace's scalars.
    DPR_HD static std::uint64_t state_size(const Params& p) { return 3 * std::uint64_t{p.n} + B::aux_size(p.n) + p.d; }

    /// SCRiBLe's round is sequential scalar code over its state (rank 0 of a team; no instance lanes), so its
    /// workspace is one contiguous double array and the diagnostic slots.
    static constexpr bool kInstanceLanes = false;
    DPR_HD static WorkspaceSpec workspace(const Params& p) {
        return WorkspaceSpec{}.add_double(1, state_size(p)).scalars(static_cast<int>(kDiagSlots));
    }

    // ---- the pieces of a round (exposed for the tests) --------------------------------------------------

    /// The exploration draw of round t: direction index k in [0, n) and sign.
    struct Exploration {
        std::uint32_t k;
        double sign;
    };
    DPR_HD static Exploration explore(const Params& p, const InstanceCtx& c, std::uint64_t t) {
        rng::WordStream src(c.id(rng::Purpose::Exploration, 0, static_cast<std::uint32_t>(t), 0));
        Exploration e;
        e.k = noise::uniform_index(src, p.n);
        e.sign = src.next_double() < 0.5 ? -1.0 : 1.0;
        return e;
    }

    /// What play() decided: the exploration, the eigenvalue and the slacks (v and y are in the workspace).
    struct Play {
        Exploration e;
        double lambda_k; ///< eigenvalue of Hess R(x_t) along v
        double slack_y;  ///< smallest constraint slack of y_t (negative = outside K)
        double slack_x;
    };
    /// Forms y_t (ambient, into y_of(ws)) and the eigenvector v (into v_of(ws)) at the current x_t.
    DPR_HD static Play play(const Params& p, const InstanceCtx& c, double* ws, std::uint64_t t) {
        Play pl;
        pl.e = explore(p, c, t);
        double* x = x_of(p, ws);
        double* aux = aux_of(p, ws);
        double* v = v_of(p, ws);
        pl.lambda_k = B::eigenpair(p.n, x, aux, pl.e.k, v);
        pl.slack_x = B::slack(p.n, x, aux);
        pl.slack_y = B::play(p.n, x, aux, v, pl.e.sign / std::sqrt(pl.lambda_k), y_of(p, ws));
        return pl;
    }

    /// <Z_t, y> with Z_t ~ Lap^d(lambda) (AS17 Alg. 4); also the largest |Z_t(i)|. Coordinates 2k and 2k+1
    /// take the two 53-bit uniforms of one Philox block: stream (FeedbackNoise, sub 0, round t, element k).
    DPR_HD static double noise_coordinate(const Params& p, const InstanceCtx& c, std::uint64_t t,
                                          std::uint32_t i) {
        rng::WordStream src(c.id(rng::Purpose::FeedbackNoise, 0, static_cast<std::uint32_t>(t), i / 2));
        const double z0 = noise::laplace(src, p.lambda);
        return i % 2 == 0 ? z0 : noise::laplace(src, p.lambda);
    }
    DPR_HD static double feedback_noise(const Params& p, const InstanceCtx& c, std::uint64_t t,
                                        const double* y, double& zmax) {
        double acc = 0.0;
        zmax = 0.0;
        for (std::uint32_t k = 0; 2 * k < p.d; ++k) {
            rng::WordStream src(c.id(rng::Purpose::FeedbackNoise, 0, static_cast<std::uint32_t>(t), k));
            for (std::uint32_t i = 2 * k; i < 2 * k + 2 && i < p.d; ++i) {
                const double z = noise::laplace(src, p.lambda);
                acc += z * y[i];
                const double az = std::fabs(z);
                zmax = az > zmax ? az : zmax;
            }
        }
        return acc;
    }

    /// With lattice noise, r_t(i) = Gamma (k_i + n_i), the exact release of coordinate i of round t's loss l (see
    /// the header): k_i from the rounding word (FeedbackNoise, sub 2, round t, element i), n_i ~ DLap from the 29 words
    /// of (FeedbackNoise, sub 1, round t, element i). A double, the same whatever the run's precision.
    DPR_HD static double lattice_coordinate(const Params& p, const InstanceCtx& c, std::uint64_t t, std::uint32_t i,
                                            double l) {
        const auto round = static_cast<std::uint32_t>(t);
        using S = rng::LaneStream<std::uint32_t>;
        const std::uint32_t w = S{c.seed, c.stream, c.instance, rng::Purpose::FeedbackNoise, 2u, round, i}.block(0).w[0];
        return noise::lattice_release(l, S{c.seed, c.stream, c.instance, rng::Purpose::FeedbackNoise, 1u, round, i}, w,
                                      p.dlap);
    }
    /// c~_t = <r_t, y> in index order (the lattice feedback; post-processing of r_t), and max_i |r_t(i) - l(i)|.
    DPR_HD static double lattice_feedback(const Params& p, const InstanceCtx& c, std::uint64_t t, const double* loss,
                                          const double* y, double& zmax) {
        double acc = 0.0;
        zmax = 0.0;
        for (std::uint32_t i = 0; i < p.d; ++i) {
            const double r = lattice_coordinate(p, c, t, i, loss[i]);
            acc += r * y[i];
            const double az = std::fabs(r - loss[i]);
            zmax = az > zmax ? az : zmax;
        }
        return acc;
    }

    /// g += lhat_t = n c~ s lambda_k^{1/2} v (the SCRiBLe estimator).
    DPR_HD static void accumulate_estimate(const Params& p, double* ws, double ctilde, const Play& pl) {
        const double coef = static_cast<double>(p.n) * ctilde * pl.e.sign * std::sqrt(pl.lambda_k);
        double* g = g_of(p, ws);
        const double* v = v_of(p, ws);
        for (std::uint32_t i = 0; i < p.n; ++i) g[i] += coef * v[i];
    }

    /// x <- argmin eta <g, x> + R(x) after g moved along eigenvector pl.e.k (the cube then updates one
    /// coordinate, bitwise equal to the full step); returns the Newton steps taken (0 for closed forms).
    DPR_HD static std::uint32_t ftrl_step(const Params& p, double* ws, const Play& pl) {
        return B::ftrl_along(p.n, p.eta, g_of(p, ws), x_of(p, ws), aux_of(p, ws), pl.e.k, p.newton,
                             y_of(p, ws), v_of(p, ws));
    }

    // ---- the learner contract -----------------------------------------------------------------------------

    /// The state (g, x, aux) at the centre, diagnostics at their neutral values. `diag` has kDiagSlots doubles.
    DPR_HD static void init_state(const Params& p, const InstanceCtx&, double* ws, double* dg) {
        const std::uint64_t W = state_size(p);
        for (std::uint64_t i = 0; i < W; ++i) ws[i] = 0.0;
        B::center(p.n, x_of(p, ws), aux_of(p, ws));
        for (std::uint32_t i = 0; i < kDiagSlots; ++i) dg[i] = 0.0;
        dg[kMinSlackY] = kInf;
        dg[kMinSlackX] = kInf;
    }

    /// One round on the state `ws` and diagnostics `dg` (team rank 0).
    DPR_HD static double round_lane0(const Params& p, const InstanceCtx& c, double* ws, double* dg, std::uint64_t t,
                                     const double* loss) {
        const Play pl = play(p, c, ws, t);
        const double* y = y_of(p, ws);
        double loss_y = 0.0;
        for (std::uint32_t i = 0; i < p.d; ++i) loss_y += loss[i] * y[i];
        double ctilde = loss_y; // the bandit feedback: the only use of l_t
        if (kPrivate && p.lambda > 0.0) {
            double zmax;
            if (p.lattice)
                ctilde = lattice_feedback(p, c, t, loss, y, zmax);
            else
                ctilde += feedback_noise(p, c, t, y, zmax);
            if (zmax > dg[kMaxNoise]) dg[kMaxNoise] = zmax;
            if (zmax >= p.f_threshold) dg[kEventF] = 1.0;
        }
        accumulate_estimate(p, ws, ctilde, pl);
        const double outside = pl.slack_y < 0.0 ? -pl.slack_y : 0.0;
        if (outside > dg[kMaxOutside]) dg[kMaxOutside] = outside;
        if (pl.slack_y < dg[kMinSlackY]) dg[kMinSlackY] = pl.slack_y;
        if (pl.slack_x < dg[kMinSlackX]) dg[kMinSlackX] = pl.slack_x;
        if (t < p.T) { // x_{T+1} is never played
            const double it = static_cast<double>(ftrl_step(p, ws, pl));
            if (it > dg[kNewtonMax]) dg[kNewtonMax] = it;
        }
        return loss_y;
    }

    DPR_HD static void diagnostics(const Params&, const double* scalars, double* out) {
        for (std::size_t i = 0; i < kDiagnostics.size(); ++i) out[i] = scalars[i];
    }
};

// The registered learners run on lanes (kernels/learners/scrible_lanes.hpp); this serial round is their reference.

} // namespace dpr::learners
