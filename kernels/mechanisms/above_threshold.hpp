#pragma once
// AboveThreshold / sparse vector (docs/spec/model.md §1.6; Dwork & Roth 2014, Alg. 1, Thms 3.23 and 3.24):
//     rho_hat = tau + Lap(2 Delta / eps)                      drawn once per instance of the mechanism
//     for each query q_i:  nu_i ~ Lap(4 Delta / eps);  q_i + nu_i >= rho_hat ? TOP (halt) : BOTTOM
// eps-DP however many BOTTOMs it answers (Thm 3.23). Accuracy (Thm 3.24, AFKT23 Lemma 2.3 for Delta = 1):
// with probability >= 1 - beta, if it halts at query k (k = m + 1 if it never halts within m queries), every
// i < k has q_i <= tau + alpha and q_k >= tau - alpha, alpha = 8 Delta (ln m + ln(2/beta)) / eps.
// (The comparison is >= as printed; with continuous noise >= and > have the same law, and the learners use >
// so that the eps = inf limit, noise 0, fires exactly when q_i > tau: see kernels/learners/svt_experts.hpp.)
//
// The mechanism's state is two numbers (rho_hat and whether it has halted), so learners keep it in their
// per-instance scalars and call the draws below; `AboveThreshold` is the same mechanism as a small object for
// host code and tests. "Re-initialisation after a TOP" (AFKT23's InitializeSparseVec after each switch) is a
// fresh threshold draw at the round the new instance starts.
//
// Randomness (docs/RANDOMNESS.md): every draw is addressed by the ROUND at which it is made, never by a phase
// or restart count: the threshold of an instance started at round t is uniform 0 of (Purpose::SparseVector,
// sub kSvtThreshold, round t, element e), the noise of a query asked at round t uniform 0 of (SparseVector,
// sub kSvtQuery, round t, element e). An instance of a learner starts at most one sparse vector and asks at most one
// query per round per element, so no two draws share an address however many phases a run has (AFKT23 Alg. 1,
// docs/spec/afkt23.md §C1: hundreds of restarts at d = 2^20), and the 8-bit sub field only ever holds the constants
// below. Uniforms are 53-bit doubles in both precisions: the noise is scalar per instance, so the cost is nil and the
// law does not depend on [run] precision.
#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/core/team.hpp"
#include "kernels/noise/lane_noise.hpp"
#include "kernels/rng/lanes.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::mech {

/// Sub values of Purpose::SparseVector (reproducibility contract: never renumber).
enum SparseVectorSub : std::uint32_t {
    kSvtThreshold = 0, ///< rho_hat - tau of the instance started at `round`
    kSvtQuery = 1,     ///< nu of the query asked at `round`
    kSvtCheck = 2,     ///< other per-round Laplace checks of a learner (AFKT23 Alg. 2's Lbar_t)
    kSvtSubsUsed = 3,
};
static_assert(kSvtSubsUsed <= rng::kMaxSub, "sparse-vector sub values must fit the counter's 8-bit sub field");

/// Noise scales of one AboveThreshold instance: Lap(2 Delta/eps) on the threshold, Lap(4 Delta/eps) per query.
struct SvtScales {
    double threshold = 0.0; ///< 2 Delta / eps (0 = noise off, eps = inf)
    double query = 0.0;     ///< 4 Delta / eps
};

/// The scales of an eps-DP AboveThreshold over Delta-sensitive queries (Dwork-Roth Alg. 1); eps = inf: 0.
DPR_HD inline SvtScales svt_scales(double eps, double sensitivity) {
    if (std::isinf(eps)) return SvtScales{};
    return SvtScales{2.0 * sensitivity / eps, 4.0 * sensitivity / eps};
}

/// Thm 3.24's alpha for m queries at failure probability beta: 8 Delta (ln m + ln(2/beta)) / eps.
DPR_HD inline double svt_alpha(double eps, double sensitivity, double m, double beta) {
    return 8.0 * sensitivity * (std::log(m) + std::log(2.0 / beta)) / eps;
}

/// Lap(b) from uniform 0 of the stream (SparseVector, sub, round, element) of the team's instance(s).
template <class Team, class UI>
DPR_HD DPR_FORCEINLINE typename Team::template uni<double> svt_laplace(const Team& team, std::uint32_t sub,
                                                                       std::uint64_t round, UI element, double b) {
    using D = typename Team::template uni<double>;
    return noise::laplace_from_u(rng::instance_uniform<double>(team, rng::Purpose::SparseVector, sub, round, element), D(b));
}

/// rho_hat = tau + Lap(2 Delta/eps) of the instance started at `round`.
template <class Team, class UI>
DPR_HD DPR_FORCEINLINE typename Team::template uni<double> svt_threshold(const Team& team, const SvtScales& sc,
                                                                         typename Team::template uni<double> tau,
                                                                         std::uint64_t round, UI element) {
    return tau + svt_laplace(team, kSvtThreshold, round, element, sc.threshold);
}

/// The noisy query q + Lap(4 Delta/eps) asked at `round`.
template <class Team, class UI>
DPR_HD DPR_FORCEINLINE typename Team::template uni<double> svt_noisy_query(const Team& team, const SvtScales& sc,
                                                                           typename Team::template uni<double> q,
                                                                           std::uint64_t round, UI element) {
    return q + svt_laplace(team, kSvtQuery, round, element, sc.query);
}

/// AboveThreshold as an object for one instance (host code, tests): the same draws as the functions above.
/// `variant_no_threshold_noise` is the planted bug of docs/ARCHITECTURE.md §7 (a sparse vector whose threshold is not
/// noised, which is NOT eps-DP for long query streams); tests show the privacy test rejects it.
struct AboveThreshold {
    RngKey key{};
    std::uint32_t instance = 0;
    std::uint32_t element = 0;
    SvtScales scales{};
    double rho_hat = 0.0;
    bool halted = false;
    std::uint64_t queries = 0;
    bool variant_no_threshold_noise = false;

    /// A fresh instance with threshold tau started at `round`.
    void start(double tau, std::uint64_t round) {
        const SerialTeam<double> team{key, instance};
        rho_hat = variant_no_threshold_noise ? tau : svt_threshold(team, scales, tau, round, element);
        halted = false;
        queries = 0;
    }
    /// Asks q at `round` (one query per round); true = TOP (the instance halts). Must not be halted.
    bool add_query(double q, std::uint64_t round) {
        const SerialTeam<double> team{key, instance};
        ++queries;
        halted = svt_noisy_query(team, scales, q, round, element) >= rho_hat;
        return halted;
    }
};

} // namespace dpr::mech
