#pragma once
// Lattice noise: the discrete Laplace law on the lattice Gamma Z, drawn from a fixed number of integer words, and the
// randomised rounding of a loss onto that lattice. With it a tree's node release (the lattice-valued node sum plus
// the node's lattice noise) is computed EXACTLY in float or double, so the floating-point attack of Mironov (CCS
// 2012: the rounded images of a continuous sampler's atoms differ between neighbouring inputs; issue 48 measured
// eps ~ 2 where 1 was claimed in float) has nothing to act on: what the learner does with the exact releases is
// post-processing. The proof and the accounting are in docs/spec/model.md §1.8.
//
// The law. DLap(t) on Z: P(n) = (1 - q)/(1 + q) q^|n|, q = e^{-1/t} (the discrete Laplace of Canonne, Kamath &
// Steinke 2020, §2; Ghosh, Roughgarden & Sundararajan's geometric mechanism). n = S J (1 + G) with independent
//   S  a fair sign,
//   J  ~ Bernoulli(2q / (1 + q))      (J = 0: n = 0, of mass (1 - q)/(1 + q)),
//   G  ~ Geometric(q), P(G = g) = (1 - q) q^g, whose binary digits are INDEPENDENT Bernoulli variables:
//        P(G = sum_i 2^i beta_i) = prod_i (q^{2^i})^{beta_i} (1 - q) / ... , so beta_i ~ Bernoulli(p_i) with
//        p_i = q^{2^i} / (1 + q^{2^i}) = 1 / (1 + e^{2^i / t}).
// Every Bernoulli is one comparison of w uniform 32-bit words (most significant first) with a threshold theta of w
// words: P = theta / 2^{32 w}, exact. The 17 digits i = 0..16 are kept (G < 2^17: the geometric truncated at
// 2^17 > 64 t, whose law on [0, 2^17) is still exactly proportional to q^g up to the thresholds' rounding); digits
// 0..10 use one word, 11..14 two, 15 three, 16 four (theta keeps >= 30 significant bits for every t in the range
// below), J two, S one: kDlapWords = 29 words, from 8 Philox blocks. No rejection, so lanes stay in step.
//
// The scale in lattice units t = b / Gamma lies in [kDlapUnits, 2 kDlapUnits) = [1024, 2048): Gamma is the power of
// two 2^floor(log2(b / 1024)), so lattice values k Gamma with |k| < 2^24 are exact floats. The thresholds depend on
// t and are computed on the host in long double (dlap_table); the accounting reads the thresholds actually used.
//
// Randomised rounding of x = l / Gamma (lattice_round): x~ = round(x 2^31) 2^-31 (a deterministic pre-rounding
// that moves x by at most 2^-32), then floor(x~) + 1 with probability frac(x~) exactly (one word: (w >> 1) <
// frac(x~) 2^31), floor(x~) otherwise. Valid for |x| < 2^20 (PrefixMechanism refuses a lattice where it is not).
#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/rng/lanes.hpp"

namespace dpr::noise {

inline constexpr std::uint32_t kDlapDigits = 17;
inline constexpr std::uint32_t kDlapWords = 29; ///< J (2 words), S (1), the 17 digits (26)
inline constexpr std::uint32_t kDlapBlocks = 8; ///< Philox blocks holding the 29 words
inline constexpr double kDlapUnits = 1024.0;    ///< t = b / Gamma in [kDlapUnits, 2 kDlapUnits)
/// Largest |n| a draw can take: 1 + (2^17 - 1).
inline constexpr std::uint32_t kDlapMax = 1u << kDlapDigits;
/// |x| bound of lattice_round's arithmetic (x = loss / Gamma).
inline constexpr double kLatticeRoundMax = 1048576.0; // 2^20

/// Words of digit i (see the header).
DPR_HD constexpr inline std::uint32_t dlap_digit_words(std::uint32_t i) {
    return i <= 10 ? 1u : (i <= 14 ? 2u : (i == 15 ? 3u : 4u));
}
/// Index of the first word of digit i in the draw's word sequence (after J's two words and S's one).
DPR_HD constexpr inline std::uint32_t dlap_digit_offset(std::uint32_t i) {
    std::uint32_t o = 3;
    for (std::uint32_t j = 0; j < i; ++j) o += dlap_digit_words(j);
    return o;
}
static_assert(dlap_digit_offset(kDlapDigits) == kDlapWords, "the digits fill the draw's words");
static_assert(4 * kDlapBlocks >= kDlapWords, "the blocks hold the words");

/// One run's lattice: its step, its scale in lattice units, and the thresholds of the 29 words (word k of a draw is
/// compared with theta[k]; theta[2] = 2^31 makes S exactly fair).
struct DlapTable {
    double gamma = 0.0; ///< lattice step Gamma, a power of two
    double t = 0.0;     ///< node scale in lattice units, b / Gamma, in [1024, 2048)
    std::uint32_t theta[kDlapWords] = {};
};

/// Lanes of 1 where the w-word number at wd (most significant first) is below the w-word threshold th, else 0.
template <class U>
DPR_HD DPR_FORCEINLINE U words_below(const U* wd, const std::uint32_t* th, std::uint32_t w) {
    auto lt = wd[0] < U(th[0]);
    auto eq = wd[0] == U(th[0]);
    for (std::uint32_t k = 1; k < w; ++k) {
        lt = lt | (eq & (wd[k] < U(th[k])));
        eq = eq & (wd[k] == U(th[k]));
    }
    return select(lt, U(1u), U(0u));
}

/// A DLap(t) draw times Gamma, in the lanes' precision R, from the 29 words wd[0..29) (see the header). Exact: |n| <=
/// 2^17, Gamma a power of two.
template <class V, class U>
DPR_HD DPR_FORCEINLINE V dlap_from_words(const U* wd, const DlapTable& tab) {
    using R = lane_scalar_t<V>;
    U g = U(0u);
    for (std::uint32_t i = 0; i < kDlapDigits; ++i)
        g = g | (words_below(wd + dlap_digit_offset(i), tab.theta + dlap_digit_offset(i), dlap_digit_words(i)) << i);
    const U j = words_below(wd, tab.theta, 2);
    const U mag = select(j == U(1u), g + U(1u), U(0u));
    const V m = convert<R>(bit_cast<std::int32_t>(mag)) * V(static_cast<R>(tab.gamma));
    return select(wd[2] < U(0x80000000u), m, -m);
}

/// The 29 words of a draw: words 0..28 of blocks 0..7 of the lanes' stream `s` (word k = word k mod 4 of block k/4).
template <class U>
DPR_HD DPR_FORCEINLINE void dlap_words(const rng::LaneStream<U>& s, U* wd) {
    for (std::uint32_t b = 0; b < kDlapBlocks; ++b) {
        const rng::Words4<U> w = s.block(b);
        for (std::uint32_t k = 0; k < 4; ++k)
            if (4 * b + k < kDlapWords) wd[4 * b + k] = w.w[k];
    }
}

/// One draw Gamma n, n ~ the sampler's exact law, from the 29 words of the lanes' stream `s` (dlap_words, then
/// dlap_from_words), in the lanes' precision of V: every discrete Laplace draw of the engine goes through here.
template <class V, class U>
DPR_HD DPR_FORCEINLINE V dlap_draw(const rng::LaneStream<U>& s, const DlapTable& tab) {
    U wd[kDlapWords];
    dlap_words(s, wd);
    return dlap_from_words<V>(wd, tab);
}

/// round-to-nearest-even of |y| < 2^51 (the 1.5 2^52 constant: exact under round-to-nearest).
template <class D>
DPR_HD DPR_FORCEINLINE D rint_small(D y) {
    using T = lane_scalar_t<D>;
    const D big(static_cast<T>(6755399441055744.0)); // 1.5 * 2^52
    return (y + big) - big;
}

/// lattice_round (see the header): the lattice point (a double multiple of gamma) that the loss l rounds to, given
/// the word w. Double lanes D, word lanes U of the same width.
template <class D, class U>
DPR_HD DPR_FORCEINLINE D lattice_round(D l, double gamma, U w) {
    using T = lane_scalar_t<D>;
    const D x = l * D(static_cast<T>(1.0 / gamma));                                          // exact: power of two
    const D xs = rint_small(x * D(static_cast<T>(2147483648.0))) * D(static_cast<T>(0x1.0p-31)); // 2^-31 grid
    const D r = rint_small(xs);
    const D m = select(r > xs, r - D(T(1)), r);                                               // floor(xs), exact
    const D k = (xs - m) * D(static_cast<T>(2147483648.0));                                  // frac 2^31 in [0, 2^31)
    const D u = convert<T>(bit_cast<std::int32_t>(w >> 1));                                   // exact, < 2^31
    return (m + select(u < k, D(T(1)), D(T(0)))) * D(static_cast<T>(gamma));
}

/// The exact lattice release of one value x (an observed loss, a loss coordinate; docs/spec/model.md §1.8 "One release
/// per round"): x rounded at random onto Gamma Z with the word w (lattice_round), plus a DLap(t) draw times Gamma from
/// the 29 words of the stream `noise` (dlap_words): Gamma (k + n), exact in double lanes D.
template <class D, class U>
DPR_HD DPR_FORCEINLINE D lattice_release(D x, const rng::LaneStream<U>& noise, U w, const DlapTable& tab) {
    return lattice_round(x, tab.gamma, w) + dlap_draw<D>(noise, tab);
}

} // namespace dpr::noise
