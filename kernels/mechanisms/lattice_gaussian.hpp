#pragma once
// The host's side of discrete Gaussian lattice noise (kernels/noise/discrete_gaussian.hpp): the sampler's table, its
// exact law, and the accounting of a tree released with it (docs/spec/model.md §1.11). Host code only (long double).
//
// What a tree with discrete Gaussian nodes guarantees. As with discrete Laplace nodes (lattice.hpp), coordinate c of
// the changed step is rounded at random onto the lattice once (x~_c within 2^-32 of x_c = l_c / Gamma) and that one
// lattice point enters the h' released nodes containing the step, each with its own draw. Three steps:
//  1. The ideal mechanism M_G (exact N_Z(0, s^2) draws). Per coordinate, two bounds on (alpha - 1) D_alpha, whose
//     sums over the coordinates Phi takes the smaller of (dgauss_renyi):
//     (a) coupling (dgauss_renyi_coupling, any s): for integer shifts k, D_alpha(N_Z(0,s^2) || N_Z(k,s^2)) <=
//         alpha k^2 / (2 s^2) (completing the square; the theta sum is largest at an integer centre, CKS20 §2).
//         Couple the two roundings with one uniform per coordinate (r = floor(x~ + V)): the shift is floor(delta_c)
//         or floor(delta_c) + 1, the latter with probability f = frac(delta_c); joint convexity of
//         exp((alpha - 1) D_alpha) gives beta (delta_c^2 + f (1 - f)) + psi_c with beta = alpha (alpha - 1) h' / (2 s^2),
//         summed to beta (D_2^2 + min(d/4, D_1)) + e^{beta (2 D_inf + 1)} beta^2 (9 D_1 + 2.25 D_2^2) / 2. Its
//         min(d/4, D_1) is the price of the rounding, large when coordinates move by less than a lattice step;
//     (b) tilting (dgauss_renyi_tilt, s >= 4): the nodes' likelihood is an exponential tilt in the rounded point, so
//         (alpha - 1) D_alpha = alpha (alpha - 1) h' delta_c^2 / (2 s^2) + (a term <= 0) + ln E_{G_c}[F], where F
//         carries the centred Bernoulli's log-MGF at tau ~ T / s^2; its second-order terms cancel in expectation and
//         the rest is of order h'^2 / s^4 per coordinate (docs/spec/model.md §1.11 has the derivation).
//     D_1 = sum |delta_c|, D_2^2 = sum delta_c^2, D_inf = max |delta_c| are the sensitivities over Gamma, plus the
//     pre-rounding's 2^-31 per coordinate. Phi is converted to (eps_G, delta_G) at the best alpha by
//         eps_G = Phi(alpha) / (alpha - 1) + (ln(1/delta_G) + alpha ln(1 - 1/alpha) - ln(alpha - 1)) / (alpha - 1)
//     (CKS20's conversion; Balle et al. 2020).
//  2. The sampler's exact law P^ (dgauss_law: the proposal's thresholds, the acceptance values the kernel computes,
//     the fallback to 0) is within e^{+-eta} of N_Z(0, s^2) on a core |n| <= N_c. Call an output good when every
//     draw it implies, for every lattice point either neighbour's coordinates may round to (within K = ceil(D_inf) + 2
//     of the actual one), lies in the core. On good outputs both mechanisms are within e^{+-m eta} of their ideal
//     counterparts (m = h' d draws, each factor within e^{+-eta}, for every rounding outcome, hence for the mixture),
//     so the hockey-stick divergence splits into the good part, at most e^{m eta} delta_G(eps - 2 m eta), and the bad
//     outputs' mass, at most m P^(|n| > N_c - K):
//         eps   = eps_G + 2 m eta,     delta = e^{m eta} delta_G + m P^(|n| > N_c - K).
//     The core is the smallest whose tail term fits in delta 2^-10; delta_G takes the rest.
//  3. Everything else the learner does with the exact releases is post-processing (the padding included).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/lattice.hpp"
#include "kernels/noise/discrete_gaussian.hpp"

namespace dpr::mech {

/// The sampler's constants beside its proposal `lat` = dlap_table(sigma) for a node sigma > 0 (the discrete Laplace
/// at t = s = sigma / Gamma on that lattice): R's factors (the ideal DLap(s) over the thresholds' law, per digit and
/// for J) scaled so that a <= 1.
inline noise::DgaussTable dgauss_table(const noise::DlapTable& lat) {
    noise::DgaussTable tab;
    tab.inv2s2 = 1.0 / (2.0 * lat.t * lat.t);
    const long double t = lat.t;
    long double p[noise::kDlapDigits];
    dlap_digit_probabilities(lat, p);
    long double rmax = 1.0L;
    for (std::uint32_t i = 0; i < noise::kDlapDigits; ++i) {
        const long double ideal = 1.0L / (1.0L + std::exp(std::ldexp(1.0L, static_cast<int>(i)) / t));
        const long double c1 = ideal / p[i], c0 = (1.0L - ideal) / (1.0L - p[i]);
        tab.corr[1][i] = static_cast<double>(c1);
        tab.corr[0][i] = static_cast<double>(c0);
        rmax *= std::max(c0, c1);
    }
    const long double pj = dlap_probability(lat.theta, 2);
    const long double pj_ideal = 2.0L / (1.0L + std::exp(1.0L / t));
    const long double cj1 = pj_ideal / pj, cj0 = (1.0L - pj_ideal) / (1.0L - pj);
    // c = 1 / max R, less 2^-40 for the double products' rounding: a(y) <= 1 before its clamp.
    const long double c = (1.0L - 0x1.0p-40L) / std::max(cj0, cj1 * rmax);
    tab.corr_j[1] = static_cast<double>(cj1 * c);
    tab.corr_j[0] = static_cast<double>(cj0 * c);
    return tab;
}

/// a(n) as the kernel computes it (dgauss_accept_value on one lane), for n >= 0.
inline double dgauss_accept_of(const noise::DlapTable& lat, const noise::DgaussTable& tab, std::uint32_t n) {
    const std::uint32_t g = n == 0 ? 0u : n - 1u, j = n == 0 ? 0u : 1u;
    return noise::dgauss_accept_value<double, std::uint32_t>(g, j, static_cast<double>(n), lat, tab);
}

/// The acceptance probability of a: ceil(a 2^128) / 2^128 (uniform_below over four words), exact in long double.
inline long double dgauss_accept_probability(double a) {
    return std::ldexp(std::ceil(std::ldexp(static_cast<long double>(a), 128)), -128);
}

/// What the accounting reads from the sampler's exact law P^ (see the header), the fallback to 0 included:
/// P^(n) = (1 - phi) w(n) / Z + phi [n = 0], with w(n) = P^_L(n) A(n) and Z = sum_n w(n), one attempt's acceptance.
struct DgaussLaw {
    std::vector<double> eta;  ///< eta[n] = max over |k| <= n of |ln P^(k) - ln N_Z(0, s^2)(k)| (+ 1e-15)
    std::vector<double> tail; ///< tail[n] = P^(|k| > n); beyond the vector's end P^ is 0
    double accept = 0.0;      ///< Z
    double fallback = 0.0;    ///< phi = (1 - Z)^kDgaussAttempts
    double variance = 0.0;    ///< of P^ (lattice units^2)
    /// The smallest eta over cores n whose tail beyond n - margin, counted m times, fits in budget; +inf if none.
    double eta_for(double m, std::uint32_t margin, double budget) const {
        for (std::size_t n = margin; n < eta.size(); ++n)
            if (m * tail[n - margin] <= budget) return eta[n];
        return std::numeric_limits<double>::infinity();
    }
};

/// The sampler's exact law (see DgaussLaw): the proposal's law from the thresholds, A(n) from the kernel's own a(n),
/// up to where a(n) = 0; the ideal N_Z(0, s^2) normalised over |n| <= 40 s (the rest is below 1e-340).
inline DgaussLaw dgauss_law(const noise::DlapTable& lat, const noise::DgaussTable& tab) {
    long double p[noise::kDlapDigits];
    dlap_digit_probabilities(lat, p);
    const long double pj = dlap_probability(lat.theta, 2);
    const std::uint32_t last = static_cast<std::uint32_t>(
        std::min<double>(noise::kDlapMax, std::ceil(lat.t * (1.0 + std::sqrt(2.0 * noise::kDgaussExponentMax))) + 2.0));
    std::vector<long double> w(last + 1);
    w[0] = (1.0L - pj) * dgauss_accept_probability(dgauss_accept_of(lat, tab, 0));
    long double Z = w[0];
    for (std::uint32_t n = 1; n <= last; ++n) {
        long double geo = 1.0L;
        for (std::uint32_t i = 0; i < noise::kDlapDigits; ++i) geo *= (((n - 1) >> i) & 1u) ? p[i] : 1.0L - p[i];
        w[n] = pj / 2.0L * geo * dgauss_accept_probability(dgauss_accept_of(lat, tab, n));
        Z += 2.0L * w[n];
    }
    const long double s = lat.t, phi = std::pow(1.0L - Z, static_cast<long double>(noise::kDgaussAttempts));
    const std::uint32_t far = static_cast<std::uint32_t>(std::ceil(40.0 * lat.t));
    long double theta = 1.0L;
    for (std::uint32_t n = far; n >= 1; --n) theta += 2.0L * std::exp(-(static_cast<long double>(n) * n) / (2.0L * s * s));
    DgaussLaw law;
    law.eta.resize(last + 1);
    law.tail.resize(last + 1);
    long double worst = 0.0L, var = 0.0L, above = 0.0L;
    for (std::uint32_t n = 0; n <= last; ++n) {
        const long double ph = (1.0L - phi) * w[n] / Z + (n == 0 ? phi : 0.0L);
        const long double nn = static_cast<long double>(n);
        const long double lg = -(nn * nn) / (2.0L * s * s) - std::log(theta);
        worst = std::max(worst, ph > 0.0L ? std::fabs(std::log(ph) - lg) : std::numeric_limits<long double>::infinity());
        law.eta[n] = static_cast<double>(worst) + 1e-15;
        var += (n == 0 ? 0.0L : 2.0L) * nn * nn * ph;
    }
    for (std::uint32_t n = last + 1; n-- > 0;) {
        law.tail[n] = static_cast<double>(above);
        above += (n == 0 ? 1.0L : 2.0L) * ((1.0L - phi) * w[n] / Z + (n == 0 ? phi : 0.0L));
    }
    law.accept = static_cast<double>(Z);
    law.fallback = static_cast<double>(phi);
    law.variance = static_cast<double>(var);
    return law;
}

/// Sensitivities of one step's loss vector between replace-one neighbours (loss units): l1, l2, the largest change of
/// one coordinate, and the number of coordinates.
struct LatticeSens {
    double delta1 = 0.0;
    double delta2 = 0.0;
    double delta_inf = 0.0;
    std::uint32_t coords = 0;
};

/// The coupling bound (step 1a of the header): Phi(alpha) / (alpha - 1), valid for every s > 0. Lattice units.
inline double dgauss_renyi_coupling(double alpha, double s, std::uint32_t hp, double d1, double d2, double dinf,
                                    double coords) {
    const double beta = alpha * (alpha - 1.0) * static_cast<double>(hp) / (2.0 * s * s);
    const double lead = beta * (d2 * d2 + std::min(coords / 4.0, d1));
    const double cubic = std::exp(beta * (2.0 * dinf + 1.0)) * beta * beta * (9.0 * d1 + 2.25 * d2 * d2) / 2.0;
    return (lead + cubic) / (alpha - 1.0);
}

/// The tilting bound (step 1b of the header; docs/spec/model.md §1.11 gives the proof and names every constant):
/// (alpha - 1) D_alpha <= alpha (alpha - 1) h' D_2^2 / (2 s^2) + sum_c B(mu_c), with mu_c = h' (1/2 + alpha |delta_c|)
/// / s^2 and B(mu) <= K0 + K1 mu + K2 mu^2 + K3 mu^3 + K4 mu^4, summed with sum_c |delta_c| = D_1 and sum_c |delta_c|^k <=
/// D_inf^{k-2} D_2^2 (k >= 2). Valid for s >= 4 (the theta-function corrections are then below 1e-100 and enter as
/// such); +inf where its conditions fail (8 |Y_2| v >= 1). Returns the Renyi epsilon, divided by alpha - 1.
inline double dgauss_renyi_tilt(double alpha, double s, std::uint32_t hp, double d1, double d2, double dinf,
                                double coords) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    if (!(s >= 4.0) || !(alpha > 1.0)) return inf;
    const double H = static_cast<double>(hp), v = H / (s * s); // Z = (T - h' c) / s^2 is v-subgaussian
    const double z0 = 12.0 * std::sqrt(v);                       // the event E = {|Z| <= z0}
    const double kb = 0.09622504486493763;                       // 1/(6 sqrt 3): the Bernoulli's largest |kappa_3|
    const double eps_theta = 1e-100;
    const double a = alpha, a2 = 2.0 * alpha - 1.0;
    const double p0 = 0.5 * H / (s * s), p1 = alpha * H / (s * s); // mu <= p0 + p1 |delta|
    const double mmax = p0 + p1 * dinf;
    const double y2max = a * (0.25 + kb * mmax) / 2.0; // |Y_2| at the largest mu
    if (!(8.0 * y2max * v < 1.0)) return inf;
    const double f2 = std::max(4.0 / (1.0 - 8.0 * y2max * v), 34.0 * std::exp(4.0 * y2max * v));
    const double y3 = a2 * kb / 6.0;
    const double m3 = eps_theta + std::sqrt(192.0 * v * v * v) * std::exp(-z0 * z0 / (4.0 * v));
    const double lam = a2 / 6.0;
    const double off_e = 2.0 * std::exp(a * mmax + a * v / 8.0 + a * a * v - z0 * z0 / (4.0 * v));
    const double K0 = a * a * v * v / 32.0 * f2 + a / 8.0 * v * eps_theta + y3 * m3 +
                      192.0 * y3 * y3 * v * v * v * std::exp(4.0 * y3 * z0 * z0 * z0) +
                      lam * 4.0 * v * v * std::exp(lam * z0 * z0 * z0 * z0) + off_e;
    const double K1 = a2 * kb * v / 2.0 + a * kb * v * eps_theta / 2.0;
    const double K2 = a / 8.0 + v * a2 * a2 / 4.0 + a * a * v * v * kb * kb * f2 / 2.0;
    const double K3 = a2 * kb / 6.0;
    const double K4 = v * a2 * a2 * kb * kb + a2 / 24.0;
    // sum_c mu_c^k <= 2^{k-1} (coords p0^k + p1^k S_k), S_1 = D_1, S_k = D_inf^{k-2} D_2^2; k = 1 without the 2^{k-1}.
    const double S2 = d2 * d2, S3 = dinf * d2 * d2, S4 = dinf * dinf * d2 * d2;
    const double sum1 = coords * p0 + p1 * d1;
    const double sum2 = 2.0 * (coords * p0 * p0 + p1 * p1 * S2);
    const double sum3 = 4.0 * (coords * p0 * p0 * p0 + p1 * p1 * p1 * S3);
    const double sum4 = 8.0 * (coords * p0 * p0 * p0 * p0 + p1 * p1 * p1 * p1 * S4);
    const double rest = coords * K0 + K1 * sum1 + K2 * sum2 + K3 * sum3 + K4 * sum4;
    return a * H * d2 * d2 / (2.0 * s * s) + rest / (alpha - 1.0);
}

/// Phi(alpha) / (alpha - 1) of the header: the smaller of the two bounds (each valid), in lattice units.
inline double dgauss_renyi(double alpha, double s, std::uint32_t hp, double d1, double d2, double dinf, double coords) {
    return std::min(dgauss_renyi_coupling(alpha, s, hp, d1, d2, dinf, coords),
                    dgauss_renyi_tilt(alpha, s, hp, d1, d2, dinf, coords));
}

/// eps_G at delta_G from dgauss_renyi, minimised over alpha (any alpha > 1 is a valid bound; the search only tightens).
inline double dgauss_epsilon_ideal(double s, std::uint32_t hp, double d1, double d2, double dinf, double coords,
                                   double delta_g) {
    auto eps_at = [&](double am1) {
        const double alpha = 1.0 + am1;
        const double conv = (-std::log(delta_g) + alpha * std::log1p(-1.0 / alpha) - std::log(am1)) / am1;
        return dgauss_renyi(alpha, s, hp, d1, d2, dinf, coords) + conv;
    };
    double best = std::numeric_limits<double>::infinity(), best_x = 0.0;
    const int n = 600;
    for (int i = 0; i <= n; ++i) { // alpha - 1 from 1e-4 to 1e8, log-spaced
        const double x = std::pow(10.0, -4.0 + 12.0 * i / n);
        const double e = eps_at(x);
        if (e < best) best = e, best_x = x;
    }
    double lo = std::log(best_x) - 12.0 * std::log(10.0) / n, hi = std::log(best_x) + 12.0 * std::log(10.0) / n;
    for (int it = 0; it < 100; ++it) { // golden section on ln(alpha - 1)
        const double a = hi - (hi - lo) * 0.6180339887498949, b = lo + (hi - lo) * 0.6180339887498949;
        if (eps_at(std::exp(a)) < eps_at(std::exp(b))) hi = b; else lo = a;
    }
    return std::min(best, eps_at(std::exp(0.5 * (lo + hi))));
}

/// The share of delta the tails may take (see the header): the ideal mechanism is converted at the rest.
inline constexpr double kDgaussTailShare = 0x1.0p-10;

/// The guarantee of a tree with discrete Gaussian nodes (see the header): h' released levels, sensitivities `y`,
/// stated at `delta`. The core is the smallest whose tails fit in delta 2^-10; with none the guarantee is refused
/// (epsilon = inf, accountant "none").
inline Guarantee lattice_gaussian_guarantee(const noise::DlapTable& lat, const DgaussLaw& law, std::uint32_t hp,
                                            const LatticeSens& y, double delta) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    if (hp == 0) return Guarantee{0.0, 0.0, "none", 0.0};
    if (!(delta > 0.0 && delta < 1.0)) return Guarantee{inf, delta, "none", 0.0};
    const double g = lat.gamma, c = static_cast<double>(y.coords);
    const double d1 = y.delta1 / g + c * 0x1.0p-31;
    const double d2 = y.delta2 / g + std::sqrt(c) * 0x1.0p-31;
    const double dinf = y.delta_inf / g + 0x1.0p-31;
    const double m = static_cast<double>(hp) * c;
    // Every lattice point the changed step's coordinate may round to, in either neighbour, is within ceil(dinf) + 2
    // of the one it did round to.
    const double margin = std::ceil(dinf) + 2.0;
    if (!(margin < 1e9)) return Guarantee{inf, delta, "none", 0.0};
    const double eta = law.eta_for(m, static_cast<std::uint32_t>(margin), delta * kDgaussTailShare);
    if (!std::isfinite(eta)) return Guarantee{inf, delta, "none", 0.0};
    const double delta_g = delta * (1.0 - kDgaussTailShare) / std::exp(m * eta);
    const double eps = dgauss_epsilon_ideal(lat.t, hp, d1, d2, dinf, c, delta_g) + 2.0 * m * eta;
    if (!std::isfinite(eps)) return Guarantee{inf, delta, "none", 0.0};
    // Not a zCDP statement (the tails), so rho and the Gaussian-DP mu stay 0: the auditor compares with (eps, delta).
    return Guarantee{eps, delta, "lattice-gaussian", 0.0, 0.0, true};
}

/// Why discrete Gaussian lattice noise with the table `tab` cannot release sums whose elements have |l_c| <= max_abs
/// (nullptr: it can): lattice_round needs |l_c| / Gamma < 2^20; the tails must fit in delta 2^-10.
inline const char* lattice_gaussian_limit(const noise::DlapTable& lat, const DgaussLaw& law, std::uint32_t hp,
                                          const LatticeSens& y, double delta, double max_abs) {
    if (!(lat.gamma * noise::kLatticeRoundMax > max_abs))
        return "needs a noise scale above 2^-10 per unit of loss (the lattice step scale / 1024 must exceed 2^-20 "
               "|l_c|)";
    if (!std::isfinite(lattice_gaussian_guarantee(lat, law, hp, y, delta).epsilon))
        return "cannot state this delta: the discrete Gaussian's tails, counted over the h' d draws one step enters, "
               "exceed delta 2^-10 (a delta too small, or a sensitivity too large against the scale)";
    return nullptr;
}

/// The smallest node sigma' >= sigma (to a relative 1e-9) whose lattice epsilon at `delta` is at most `target`
/// (the continuous Gaussian mechanism's epsilon at sigma): the lattice then reports what the calibration promised,
/// for a little more noise (the rounding's min(d/4, D_1) term and the tails). Returns sigma unchanged when the lattice
/// cannot state `delta` at all (the caller's limit check says why), and when no sigma reaches `target`: the bounds are
/// finite only up to an alpha of a few thousand at s in [1024, 2048), so the reported epsilon has a floor (about 6e-4
/// at delta = 1e-5) that more noise does not lower. The caller then finds the lattice above the target
/// (tree_learner.hpp lattice_attempt) and keeps the continuous sampler.
inline double lattice_gaussian_scale_for(double sigma, double target, std::uint32_t hp, const LatticeSens& y,
                                         double delta) {
    if (hp == 0 || !(sigma > 0.0) || !(target > 0.0)) return sigma;
    double s = sigma, prev = std::numeric_limits<double>::infinity(), step = 1.0;
    for (int it = 0; it < 200; ++it) {
        const noise::DlapTable lat = dlap_table(s);
        const double eps = lattice_gaussian_guarantee(lat, dgauss_law(lat, dgauss_table(lat)), hp, y, delta).epsilon;
        if (!std::isfinite(eps)) return sigma;
        if (eps <= target) return s;
        // Away from the floor epsilon falls about as 1/sigma; one that falls by less than the square root of the last
        // step has met the floor.
        if (eps * std::sqrt(step) > prev) return sigma;
        prev = eps;
        step = std::fmax(eps / target, 1.0 + 1e-9);
        s *= step;
    }
    return sigma;
}

} // namespace dpr::mech
