#pragma once
// Lattice noise with a Gaussian law: the discrete Gaussian N_Z(0, s^2) on the lattice Gamma Z (Canonne, Kamath &
// Steinke 2020, "CKS20"), drawn by rejection from the discrete Laplace sampler of discrete_laplace.hpp with a fixed
// stream layout, so that a node release (a lattice sum plus the node's draw) is exact in float and double as with
// discrete Laplace nodes. The proof and the accounting are in docs/spec/model.md §1.11; the host side (the table, the
// sampler's exact law, the guarantee) is kernels/mechanisms/lattice_gaussian.hpp.
//
// The draw (CKS20 §4, Algorithm 3, with its acceptance made exact for our proposal). Node scale sigma, lattice step
// Gamma = 2^floor(log2(sigma / 1024)) (the discrete Laplace lattice of that scale), s = sigma / Gamma in [1024, 2048).
// Attempt k = 0, 1, ..., kDgaussAttempts - 1 uses blocks 9k .. 9k + 8 of the draw's stream:
//   1. y ~ the discrete Laplace sampler's law P^_L with t = s (the attempt's blocks 0..7, words 0..28 as dlap_words
//      reads them: dlap_from_words' digits, J and S);
//   2. accept with probability A(y) = ceil(a(y) 2^128) / 2^128 (the 4 words of the attempt's block 8 as one 128-bit
//      uniform below a(y)), where
//        a(y) = c R(|y|) exp(-(|y| - s)^2 / (2 s^2)),
//      R(|y|) = P_L(y) / P^_L(y) the ratio of the ideal DLap(s) to the law the thresholds define (a product of one
//      factor per digit and one for J, tabled in double), and c <= 1 / max R;
//   3. the first accepted attempt's y is the draw; if none is accepted (probability (1 - Z)^32 < 1e-19, Z ~ 0.76 the
//      acceptance rate) the draw is 0.
// With exact arithmetic P^_L(y) a(y) is proportional to exp(-y^2 / (2 s^2)), the discrete Gaussian. a(y) is computed
// with +, -, * only (exp_neg_det: no libm, no contraction: the kernels build with -ffp-contract=off and nvcc
// --fmad=false), so a CPU and a GPU compute the same bits, and the host recomputes a(y) with this very code to obtain
// the sampler's EXACT law P^(y) = P^_L(y) A(y) / Z (lattice_gaussian.hpp), whose ratio to the discrete Gaussian the
// accounting measures over the whole range that matters. Lanes stop drawing once every lane has accepted: the words
// an attempt reads depend on k only, so the result is the same whatever the lane width or the warp.
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/noise/discrete_laplace.hpp"
#include "kernels/rng/lanes.hpp"

namespace dpr::noise {

inline constexpr std::uint32_t kDgaussAttempts = 32;
/// Blocks of one attempt: the discrete Laplace proposal's 8 (words 0..28) and one for the acceptance's 4 words.
inline constexpr std::uint32_t kDgaussAttemptBlocks = kDlapBlocks + 1;
inline constexpr std::uint32_t kDgaussAcceptWords = 4;
static_assert(kDgaussAttempts * kDgaussAttemptBlocks <= 0xffffu, "the attempts fit the block field");
/// a(y) = 0 once the exponent passes this (exp(-90) = 8e-40 < 2^-128: below the acceptance's resolution).
inline constexpr double kDgaussExponentMax = 90.0;

/// One run's discrete Gaussian, beside its lattice's discrete Laplace table (the proposal, at t = s: its gamma is the
/// lattice step, its t the law's scale in lattice units s = sigma / Gamma): the acceptance's constants.
struct DgaussTable {
    double inv2s2 = 0.0; ///< 1 / (2 s^2), rounded to double (the host's exact law uses the same value)
    /// R's factors: digit i of G contributes corr[bit][i]; J = 1 contributes corr_j[1] (times every digit's), J = 0
    /// (y = 0) corr_j[0] alone. c is folded into corr_j.
    double corr[2][kDlapDigits] = {};
    double corr_j[2] = {};
};

/// e^{-g} for 0 <= g <= kDgaussExponentMax with +, -, * only: z = g 2^-7, the Taylor sum of e^{-z} to degree 18
/// (remainder below 1e-20 for z <= 0.71), squared 7 times. Relative error a few 1e-14 (the host does not rely on it:
/// it measures the sampler's law with this same function).
template <class D>
DPR_HD DPR_FORCEINLINE D exp_neg_det(D g) {
    using T = lane_scalar_t<D>;
    const D x = g * D(static_cast<T>(-0.0078125)); // -g 2^-7, exact
    D p(static_cast<T>(1.0));
    for (int k = 18; k >= 1; --k) p = D(static_cast<T>(1.0)) + x * D(static_cast<T>(1.0 / k)) * p;
    for (int k = 0; k < 7; ++k) p = p * p;
    return p;
}

/// Lanes where the w-word uniform at wd (most significant first, w = kDgaussAcceptWords) is below a in [0, 1] (a
/// double lane value): P = ceil(a 2^{32 w}) / 2^{32 w} exactly. Each step is exact in double: h = f 2^32, its floor
/// and the remainder f are exact (f keeps at most 53 significant bits).
template <class D, class U>
DPR_HD DPR_FORCEINLINE auto uniform_below(const U* wd, D a) {
    using T = lane_scalar_t<D>;
    D f = a;
    auto lt = a < D(static_cast<T>(0.0)); // false in every lane
    auto eq = !lt;
    for (std::uint32_t k = 0; k < kDgaussAcceptWords; ++k) {
        const D h = f * D(static_cast<T>(4294967296.0)); // exact: a power of two
        const D r = rint_small(h);
        const D fl = select(r > h, r - D(static_cast<T>(1.0)), r);
        const D w = convert<T>(bit_cast<std::int32_t>(wd[k] >> 1)) * D(static_cast<T>(2.0)) +
                    convert<T>(bit_cast<std::int32_t>(wd[k] & U(1u))); // the word, exact
        lt = lt | (eq & (w < fl));
        eq = eq & (w == fl);
        f = h - fl;
    }
    return lt | (eq & (f > D(static_cast<T>(0.0))));
}

/// a(y) (see the header) from the proposal's digits g (G's 17 bits), J and |y| in lattice units, in double lanes D.
template <class D, class U>
DPR_HD DPR_FORCEINLINE D dgauss_accept_value(U g, U j, D mag, const DlapTable& lat, const DgaussTable& tab) {
    using T = lane_scalar_t<D>;
    D r(static_cast<T>(1.0));
    for (std::uint32_t i = 0; i < kDlapDigits; ++i) {
        const D bit = convert<T>(bit_cast<std::int32_t>((g >> i) & U(1u)));
        r = r * select(bit > D(static_cast<T>(0.5)), D(static_cast<T>(tab.corr[1][i])),
                       D(static_cast<T>(tab.corr[0][i])));
    }
    const D jd = convert<T>(bit_cast<std::int32_t>(j));
    r = select(jd > D(static_cast<T>(0.5)), r * D(static_cast<T>(tab.corr_j[1])), D(static_cast<T>(tab.corr_j[0])));
    const D dev = mag - D(static_cast<T>(lat.t));
    const D expo = dev * dev * D(static_cast<T>(tab.inv2s2));
    const D a = r * exp_neg_det(vmin(expo, D(static_cast<T>(kDgaussExponentMax))));
    return select(expo > D(static_cast<T>(kDgaussExponentMax)), D(static_cast<T>(0.0)), vmin(a, D(static_cast<T>(1.0))));
}

/// The digits g, J and the magnitude |y| = J (1 + g) of one proposal from its 29 words (as dlap_from_words).
template <class U>
DPR_HD DPR_FORCEINLINE void dlap_parts(const U* wd, const DlapTable& tab, U& g, U& j, U& mag) {
    g = U(0u);
    for (std::uint32_t i = 0; i < kDlapDigits; ++i)
        g = g | (words_below(wd + dlap_digit_offset(i), tab.theta + dlap_digit_offset(i), dlap_digit_words(i)) << i);
    j = words_below(wd, tab.theta, 2);
    mag = select(j == U(1u), g + U(1u), U(0u));
}

/// One discrete Gaussian draw Gamma n, n ~ the sampler's exact law (see the header), from the lanes' stream `s`, in the
/// precision of V, on the lattice of `lat` (the proposal's table). Exact: |n| <= 2^17, Gamma a power of two. Every
/// discrete Gaussian draw of the engine goes through here.
template <class V, class U>
DPR_HD DPR_FORCEINLINE V dgauss_draw(const rng::LaneStream<U>& s, const DlapTable& lat, const DgaussTable& tab) {
    using R = lane_scalar_t<V>;
    using D = lane_rebind_t<U, double>;
    D out(0.0);                  // the accepted signed draw in lattice units
    auto done = D(0.0) > D(1.0); // false in every lane
    for (std::uint32_t k = 0; k < kDgaussAttempts; ++k) {
        if (all(done)) break;
        U wd[4 * kDgaussAttemptBlocks]; // words 0..28: the proposal; 32..35: the acceptance
        for (std::uint32_t b = 0; b < kDgaussAttemptBlocks; ++b) {
            const rng::Words4<U> w = s.block(k * kDgaussAttemptBlocks + b);
            for (std::uint32_t q = 0; q < 4; ++q) wd[4 * b + q] = w.w[q];
        }
        U g, j, mag;
        dlap_parts(wd, lat, g, j, mag);
        const D magd = convert<double>(bit_cast<std::int32_t>(mag));
        const D negative = convert<double>(bit_cast<std::int32_t>(wd[2] >> 31)); // S: word 2's top bit, as dlap_draw
        const D y = magd - D(2.0) * negative * magd;
        const auto acc = uniform_below(wd + 4 * kDlapBlocks, dgauss_accept_value(g, j, magd, lat, tab));
        out = select(acc & !done, y, out);
        done = done | acc;
    }
    return convert<R>(out) * V(static_cast<R>(lat.gamma));
}

} // namespace dpr::noise
