#pragma once
// AboveThreshold on a lattice (docs/spec/model.md §1.10): the sparse vector of above_threshold.hpp with discrete
// Laplace noise and queries rounded onto the same lattice, so that every comparison is exact and the accounting is
// that of the sampler's exact law (the §1.8 sampler), in float or double runs.
//
//   Gamma = the lattice of DLap(b_th / Gamma) (noise/discrete_laplace.hpp: t = b_th / Gamma in [1024, 2048)),
//           b_th = 2 Delta / eps the continuous threshold scale; the query scale 4 Delta / eps is 2 b_th, so the
//           query noise is 2 Gamma n with n from the SAME table (t_q = t)
//   rho    = floor(tau / Gamma) Gamma + Gamma n_th          (n_th ~ P^, the sampler's exact law; drawn once)
//   query  = floor(q^ / Gamma) Gamma + 2 Gamma n_q  >  rho    (n_q ~ P^ per query; q^ the computed query)
// All three are multiples of Gamma, below (2^51 + 2^18) Gamma in absolute value when |tau| and |q^| are below
// 2^51 Gamma (lattice_svt refuses a plan whose promised bound max_abs is not), so the sums and the comparison are exact
// in double.
//
// Guarantee (the theorem of model.md §1.10): with q^ and q^' the computed queries of neighbouring inputs,
// |q^ - q^'| <= Delta^ = Delta + 2 err (the exact sensitivity plus twice the bound on the rounding of the computed
// query), so |floor(q^ / Gamma) - floor(q^' / Gamma)| <= K = ceil(Delta^ / Gamma). Dwork and Roth's coupling (Thm
// 3.23) with the threshold moved by K steps and the halting query's noise by K steps of 2 Gamma gives
//     epsilon = 2 K L^,     delta = (1 + m) P^(|n| >= 2^17 - K)
// with L^ = dlap_log_lipschitz (the sampler's exact law) and m the most queries an instance can answer. 2 K L^ is the
// continuous eps times K Gamma / Delta times t L^ (1 + about 1e-6, the thresholds' rounding); lattice_svt raises b_th
// by that factor so that epsilon is at most the requested value. Delta / Gamma = t eps / 2 (512 eps to 1024 eps
// steps) is a whole number when Delta is a power of two, so with exact queries (err = 0) K Gamma = Delta and the raise
// is about 1e-6; otherwise the ceiling costs up to one step, 2 / (t eps) relative (1.35% for Delta = 0.37 at eps = 1),
// and so does an error bound: a learner whose queries are sums of per-round values keeps them exact by rounding each
// value onto the lattice instead (model.md §1.10).
//
// Randomness: the address of the continuous draws (above_threshold.hpp), read as the sampler's 29 words (8 blocks)
// instead of uniform 0: the threshold of the instance started at round t from (SparseVector, kSvtThreshold, round t,
// element e), the query asked at round t from (SparseVector, kSvtQuery, round t, element e). A run uses one or the
// other.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/mechanisms/above_threshold.hpp"
#include "kernels/mechanisms/lattice.hpp"
#include "kernels/noise/discrete_laplace.hpp"
#include "kernels/rng/lanes.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::mech {

/// A lattice AboveThreshold: the sampler's table (Gamma, t and the thresholds), its accounting and why it does not
/// apply (obstacle != nullptr). Trivially copyable (it travels in a learner's Params).
struct LatticeSvt {
    noise::DlapTable tab;          ///< threshold noise Gamma n, query noise 2 Gamma n
    double threshold_scale = 0.0;  ///< b_th after the raise (the query scale is 2 b_th)
    double K = 0.0;                ///< lattice steps a computed query moves between neighbours
    double epsilon = 0.0;
    double delta = 0.0;
    const char* obstacle = nullptr;
};

/// The guarantee of a lattice AboveThreshold with table `tab` over queries whose computed values move by at most
/// sensitivity + 2 query_error, at most `max_queries` queries per instance (model.md §1.10).
inline void lattice_svt_account(LatticeSvt& s, double sensitivity, double query_error, double max_queries) {
    long double dhat = static_cast<long double>(sensitivity) + 2.0L * query_error;
    if (query_error > 0.0) dhat = std::nextafter(dhat, std::numeric_limits<long double>::infinity());
    s.K = static_cast<double>(std::ceil(dhat / s.tab.gamma));
    s.epsilon = 2.0 * s.K * dlap_log_lipschitz(s.tab) * (1.0 + 1e-15);
    const double m = static_cast<double>(noise::kDlapMax) - s.K;
    s.delta = m >= 1.0 ? std::fmin(1.0, (1.0 + max_queries) * dlap_tail(s.tab, static_cast<std::int64_t>(m))) : 1.0;
}

/// The lattice AboveThreshold that replaces the continuous one of scales `sc` (query = 2 threshold, as every
/// DR14-calibrated instance has): the threshold scale raised (unless `scale_given`) to the smallest whose lattice
/// epsilon is at most the continuous 2 sensitivity / b_th; |queries| and |tau| at most max_abs. Host code.
inline LatticeSvt lattice_svt(const SvtScales& sc, bool scale_given, double sensitivity, double query_error,
                              double max_queries, double max_abs) {
    LatticeSvt s;
    if (!(sc.threshold > 0.0) || !std::isfinite(sc.threshold) || !(sc.query == 2.0 * sc.threshold)) {
        s.obstacle = "needs finite noise with the query scale twice the threshold scale (Dwork and Roth's calibration)";
        return s;
    }
    if (!(sensitivity > 0.0) || !(query_error >= 0.0)) {
        s.obstacle = "needs a positive query sensitivity";
        return s;
    }
    const double target = 2.0 * sensitivity / sc.threshold; // the continuous instance's epsilon
    double b = sc.threshold;
    for (int it = 0; it < 200; ++it) {
        s.tab = dlap_table(b);
        lattice_svt_account(s, sensitivity, query_error, max_queries);
        if (scale_given || s.epsilon <= target) break;
        b *= std::fmax(s.epsilon / target, 1.0 + 1e-9);
    }
    s.threshold_scale = b;
    if (!scale_given && !(s.epsilon <= target))
        s.obstacle = "found no threshold scale whose lattice epsilon meets the continuous one";
    else if (!(max_abs / s.tab.gamma < 0x1.0p51))
        s.obstacle = "needs a noise scale above 2^-41 of the largest query (the queries on the lattice must stay "
                     "below 2^51 steps)";
    else if (!(s.delta <= 1e-15))
        s.obstacle = "would give delta above 1e-15 at this epsilon (each draw is truncated at 2^17 lattice steps, "
                     "about 64 noise scales)";
    return s;
}

/// x rounded down onto the lattice: floor(x / Gamma) Gamma, exact for |x| / Gamma < 2^51 (Gamma a power of two; the
/// caller keeps |x| within the max_abs its plan was made for). Double lanes.
template <class D>
DPR_HD DPR_FORCEINLINE D lattice_floor(D x, double gamma) {
    static_assert(std::is_same<lane_scalar_t<D>, double>::value, "lattice_floor works on double lanes");
    const D y = x * D(1.0 / gamma);
    const D r = noise::rint_small(y);
    return select(r > y, r - D(1.0), r) * D(gamma);
}

/// Gamma n, n ~ P^, from the 29 words of the stream (SparseVector, sub, round, element) of the team's instance(s).
template <class Team, class UI>
DPR_HD DPR_FORCEINLINE typename Team::template uni<double> lattice_svt_noise(const Team& team, const LatticeSvt& s,
                                                                             std::uint32_t sub, std::uint64_t round,
                                                                             UI element) {
    using UD = typename Team::template uni<double>;
    return noise::dlap_draw<UD>(rng::instance_stream(team, rng::Purpose::SparseVector, sub, round, element), s.tab);
}

/// rho = floor(tau / Gamma) Gamma + Gamma n_th of the instance started at `round`.
template <class Team, class UI>
DPR_HD DPR_FORCEINLINE typename Team::template uni<double>
lattice_svt_threshold(const Team& team, const LatticeSvt& s, typename Team::template uni<double> tau, std::uint64_t round,
                      UI element) {
    return lattice_floor(tau, s.tab.gamma) + lattice_svt_noise(team, s, kSvtThreshold, round, element);
}

/// The noisy query floor(q / Gamma) Gamma + 2 Gamma n_q asked at `round` (compared with rho by the caller: > fires).
template <class Team, class UI>
DPR_HD DPR_FORCEINLINE typename Team::template uni<double>
lattice_svt_noisy_query(const Team& team, const LatticeSvt& s, typename Team::template uni<double> q, std::uint64_t round,
                        UI element) {
    using UD = typename Team::template uni<double>;
    return lattice_floor(q, s.tab.gamma) + UD(2.0) * lattice_svt_noise(team, s, kSvtQuery, round, element);
}

} // namespace dpr::mech
