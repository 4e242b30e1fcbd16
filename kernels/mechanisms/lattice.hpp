#pragma once
// The host's side of lattice noise (kernels/noise/discrete_laplace.hpp): the thresholds of a run's DLap(t) sampler
// and the exact accounting of a tree released with it (docs/spec/model.md §1.8). Host code only (long double).
//
// What a tree with lattice noise guarantees. One step's loss vector enters the h' released nodes that contain it;
// coordinate c's value x_c = l_c / Gamma is rounded at random to floor(x~_c) or floor(x~_c) + 1 (x~_c within 2^-32
// of x_c), once, and that one lattice point enters all h' nodes, each with its own DLap draw. For the released node
// values nu_1..nu_h' of coordinate c, as a function of x = x~_c, the probability is the linear interpolation F(x) of
// Q(r) = prod_j P^(nu_j - a_j - r) between the integers around x (a_j: the other steps' lattice points, independent
// of x). If P^ (the sampler's exact law) has |ln P^(k + 1) - ln P^(k)| <= L^ for every k of its support, then
// |ln Q(r + 1) - ln Q(r)| <= h' L^ and, on each unit interval, |F'| / F <= (Q(r+1) - Q(r)) / min Q <= e^{h' L^} - 1,
// so ln F(x) - ln F(x') <= |x - x'| (e^{h' L^} - 1). Coordinates are independent, so
//     epsilon = (Delta_1 / Gamma + d 2^-31) (e^{h' L^} - 1)
// against replace-one neighbours with l1 sensitivity Delta_1 over d coordinates (2^-31: the pre-rounding moves each
// changed coordinate by at most 2^-32 on each side). L^ = 1/t + the largest deviation the thresholds' rounding causes
// (dlap_log_lipschitz, computed from the thresholds in use), so epsilon -> h' Delta_1 / b, the continuous Laplace
// mechanism's value, as t -> inf: at t >= 1024 the factor (e^{h' L^} - 1) t / h' is 1 + h'/(2t) + ..., at most 1.6%
// for h' = 32. The path from x to x' needs every Q(r) in between positive: a draw of |n| >= 2^17 - ceil(Delta_1 /
// Gamma) - 2 (the truncation at 2^17) may break it, so
//     delta = h' d P^(|n| >= 2^17 - ceil(Delta_1 / Gamma) - 2)            (about h' d e^{-(64 - eps_node)} at most)
// and everything else the learner does with the exact releases is post-processing (the padding included).
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/mechanisms/calibration.hpp"
#include "kernels/noise/discrete_laplace.hpp"

namespace dpr::mech {

/// The lattice and the thresholds of DLap(b / Gamma) for a node scale b > 0: Gamma = 2^floor(log2(b / 1024)), so
/// t = b / Gamma in [1024, 2048); theta = round(p 2^{32 w}) for each Bernoulli of the sampler.
inline noise::DlapTable dlap_table(double b) {
    noise::DlapTable tab;
    int e = 0;
    std::frexp(b / noise::kDlapUnits, &e); // b / 1024 = f 2^e, f in [0.5, 1)
    tab.gamma = std::ldexp(1.0, e - 1);
    tab.t = b / tab.gamma;
    const long double t = tab.t;
    auto put = [&](std::uint32_t off, std::uint32_t w, long double p) {
        long double v = std::rint(std::ldexp(p, static_cast<int>(32 * w))); // < 2^{32 w}, <= 64 significant bits
        for (std::uint32_t k = 0; k < w; ++k) {
            const long double limb = std::floor(std::ldexp(v, -static_cast<int>(32 * (w - 1 - k))));
            tab.theta[off + k] = static_cast<std::uint32_t>(limb);
            v -= std::ldexp(limb, static_cast<int>(32 * (w - 1 - k)));
        }
    };
    put(0, 2, 2.0L / (1.0L + std::exp(1.0L / t))); // J: 2q / (1 + q)
    tab.theta[2] = 0x80000000u;                     // S: fair
    for (std::uint32_t i = 0; i < noise::kDlapDigits; ++i)
        put(noise::dlap_digit_offset(i), noise::dlap_digit_words(i),
            1.0L / (1.0L + std::exp(std::ldexp(1.0L, static_cast<int>(i)) / t)));
    return tab;
}

/// P = theta / 2^{32 w} of the w-word threshold at theta (exact in long double for the sampler's thresholds).
inline long double dlap_probability(const std::uint32_t* theta, std::uint32_t w) {
    long double p = 0.0L;
    for (std::uint32_t k = 0; k < w; ++k) p += std::ldexp(static_cast<long double>(theta[k]), -static_cast<int>(32 * (k + 1)));
    return p;
}

/// The 17 digit probabilities p^_i of G that the thresholds in use give.
inline void dlap_digit_probabilities(const noise::DlapTable& tab, long double* p) {
    for (std::uint32_t i = 0; i < noise::kDlapDigits; ++i)
        p[i] = dlap_probability(tab.theta + noise::dlap_digit_offset(i), noise::dlap_digit_words(i));
}

/// L^ = max over adjacent k, k + 1 of the support of |ln P^(k + 1) - ln P^(k)| for the sampler's exact law P^ (see
/// the header): for |n| >= 1 the step is G's, -1/t + e_c - sum_{j<c} e_j with c = ctz of the new G and e_i =
/// logit(p^_i) + 2^i / t; for 0 -> 1 it is ln(p^_J / 2 prod_i (1 - p^_i) / (1 - p^_J)). A margin of 1e-14 covers the
/// long double evaluation.
inline double dlap_log_lipschitz(const noise::DlapTable& tab) {
    const long double t = tab.t;
    long double p[noise::kDlapDigits], e[noise::kDlapDigits];
    dlap_digit_probabilities(tab, p);
    long double log_g0 = 0.0L; // ln P^_G(0) = sum ln(1 - p^_i)
    for (std::uint32_t i = 0; i < noise::kDlapDigits; ++i) {
        e[i] = std::log(p[i]) - std::log1p(-p[i]) + std::ldexp(1.0L, static_cast<int>(i)) / t;
        log_g0 += std::log1p(-p[i]);
    }
    long double worst = 0.0L, below = 0.0L;
    for (std::uint32_t c = 0; c < noise::kDlapDigits; ++c) {
        worst = std::fmax(worst, std::fabs(e[c] - below));
        below += e[c];
    }
    const long double pj = dlap_probability(tab.theta, 2);
    const long double step0 = std::log(pj / 2.0L) + log_g0 - std::log1p(-pj);
    worst = std::fmax(worst, std::fabs(step0 + 1.0L / t));
    return static_cast<double>(1.0L / t + worst) + 1e-14;
}

/// P^(|n| >= m) of the sampler's exact law (m >= 1): p^_J P^(G >= m - 1), by G's digits; 0 beyond the support.
inline double dlap_tail(const noise::DlapTable& tab, std::int64_t m) {
    if (m <= 0) return 1.0;
    const std::int64_t g0 = m - 1;
    if (g0 >= static_cast<std::int64_t>(noise::kDlapMax)) return 0.0;
    long double p[noise::kDlapDigits];
    dlap_digit_probabilities(tab, p);
    // P(G >= g0) = P(G = g0) + sum over the 0 digits i of g0 of P(the digits above i as g0's) p_i.
    long double above = 1.0L, ge = 0.0L;
    for (std::uint32_t i = noise::kDlapDigits; i-- > 0;) {
        const bool bit = (g0 >> i) & 1;
        if (!bit) ge += above * p[i];
        above *= bit ? p[i] : 1.0L - p[i];
    }
    ge += above;
    return static_cast<double>(dlap_probability(tab.theta, 2) * ge);
}

/// The guarantee of a tree with lattice noise (see the header): h' released levels, l1 sensitivity delta1 over
/// `coords` coordinates.
inline Guarantee lattice_guarantee(const noise::DlapTable& tab, std::uint32_t hp, double delta1, std::uint32_t coords) {
    if (hp == 0) return Guarantee{0.0, 0.0, "none", 0.0};
    const double h = static_cast<double>(hp);
    const double units = delta1 / tab.gamma + static_cast<double>(coords) * 0x1.0p-31;
    const double eps = units * std::expm1(h * dlap_log_lipschitz(tab));
    const double margin = std::ceil(delta1 / tab.gamma) + 2.0;
    const double m = static_cast<double>(noise::kDlapMax) - margin;
    const double tail = m >= 1.0 ? dlap_tail(tab, static_cast<std::int64_t>(m)) : 1.0;
    const double delta = std::fmin(1.0, h * static_cast<double>(coords) * tail);
    return Guarantee{eps, delta, "lattice-laplace", 0.5 * eps * eps, 0.0, true};
}

/// Why lattice noise with the table `tab` cannot release sums whose elements have |l_c| <= max_abs (nullptr: it
/// can), for h' released levels, l1 sensitivity delta1 over `coords` coordinates: lattice_round needs |l_c| / Gamma
/// < 2^20; a scale so small against the sensitivity that the sampler's truncation at 2^17 would matter (delta above
/// 1e-15; docs/spec/model.md §1.8).
inline const char* lattice_limit(const noise::DlapTable& tab, std::uint32_t hp, double delta1, std::uint32_t coords,
                                 double max_abs) {
    if (!(tab.gamma * noise::kLatticeRoundMax > max_abs))
        return "needs a noise scale above 2^-10 per unit of loss (the lattice step scale / 1024 must exceed 2^-20 "
               "|l_c|)";
    if (!(lattice_guarantee(tab, hp, delta1, coords).delta <= 1e-15))
        return "would give delta above 1e-15 at this epsilon (each draw is truncated at 2^17 lattice steps, "
               "about 64 noise scales)";
    return nullptr;
}

/// The smallest node scale b' >= b (to a relative 1e-9) whose lattice epsilon is at most the continuous Laplace
/// mechanism's at b, h' delta1 / b: the lattice then reports the same epsilon as the continuous calibration it
/// replaces, for about h'/(2t) <= 1.6% more noise.
inline double lattice_scale_for(double b, std::uint32_t hp, double delta1, std::uint32_t coords) {
    if (hp == 0 || !(b > 0.0)) return b;
    const double target = static_cast<double>(hp) * delta1 / b;
    double s = b;
    for (int it = 0; it < 200; ++it) {
        const double eps = lattice_guarantee(dlap_table(s), hp, delta1, coords).epsilon;
        if (eps <= target) return s;
        s *= std::fmax(eps / target, 1.0 + 1e-9);
    }
    return s;
}

/// Whether a learner uses lattice noise: when asked for (`noise = "discrete-laplace"`), and by default (no noise key
/// given) in float precision, where the continuous sampler's report is not a guarantee (docs/spec/model.md §1.8).
/// The caller then checks that the lattice applies (lattice_limit) and falls back to the continuous sampler, with
/// run.json's float warning, when it does not.
inline bool lattice_wanted(bool asked, bool noise_given, bool float_precision) {
    return asked || (!noise_given && float_precision);
}

/// Lattice noise for one exact release per round (h' = 1) of a vector of `coords` coordinates, each |l_c| <= max_abs,
/// with l1 sensitivity delta1 between neighbours (dp-mab's observed loss, dp-scrible's loss vector; docs/spec/model.md
/// §1.8 "One release per round"): the scale (the continuous `scale` raised to the smallest whose lattice epsilon is
/// at most delta1 / scale, unless it was given), its table, and why the lattice does not apply (nullptr: it does).
struct RoundLattice {
    double scale = 0.0;
    noise::DlapTable dlap;
    const char* obstacle = nullptr;
};
inline RoundLattice round_lattice(double scale, bool scale_given, double delta1, std::uint32_t coords, double max_abs) {
    RoundLattice r;
    r.scale = scale_given ? scale : lattice_scale_for(scale, 1, delta1, coords);
    r.dlap = dlap_table(r.scale);
    r.obstacle = lattice_limit(r.dlap, 1, delta1, coords, max_abs);
    return r;
}

} // namespace dpr::mech
