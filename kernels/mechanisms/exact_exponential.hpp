#pragma once
// The exact exponential mechanism (docs/spec/model.md §1.9): a sampler whose law is defined by integer weights and
// drawn with integer arithmetic, so that what the code samples is the law the accounting bounds, in float or double
// runs and in any summation order. The floating-point sampler of exponential.hpp is the continuous law only up to its
// rounding: its running sums carry absolute errors of about n u S, which a candidate of small weight can not absorb,
// and no bound on its probability ratios follows (Mironov 2012 makes the same point for the Laplace sampler; Ilvento,
// "Implementing the exponential mechanism with base-2 differential privacy", CCS 2020, for this one).
//
// The law. Scores s(i) (lower is better) as the learner computed them, with a bound Delta^ on |s(i) - s'(i)| over
// neighbouring inputs that holds for the COMPUTED values (the exact sensitivity plus twice the learner's bound on its
// rounding error). Take the grid g = 2^floor(log2(Delta / 1024)) (a power of two, so s / g is exact) and
//     n(i) = floor(s(i) / g),   m = min_i n(i),   a(i) = n(i) - m   (integers; a(i) exact below 2^53)
//     W(a) = floor(2^P w^(a))   for a < A,   0 for a >= A
// where w^(a) is the product, in double, of Q_k = e^{-c g 2^k} (rounded to double on the host) over the set bits k of
// a, in increasing k: a deterministic function of a, the same bits on every CPU and GPU (correctly rounded multiplies,
// no fused operations). P and A (the plan below) make W(a) >= 2^32 wherever it is positive (the plan lowers A until
// the computed W(A - 1) is). The sampler returns i with probability exactly W(a(i)) / S, S = sum_j W(a(j)):
//   1. S is summed exactly (a 384-bit integer; every W is an integer-valued double);
//   2. U uniform on [0, S): N = bitlen(S - 1) random bits from the draw's Philox words, kept if below S (probability
//      S / 2^N > 1/2 per try), at most kExactExpTries tries (all failing: probability < 2^-64, the first minimiser is
//      returned; counted in epsilon and delta);
//   3. the first i whose exact running sum W(a(0)) + ... + W(a(i)) exceeds U.
// The caller's contract: n <= the plan's n_max, and score(i) returns the same value in each of the three passes.
// Every step is exact, so the index depends only on the scores and the words, never on the order of a sum.
// A score whose grid index s / g overflows is treated as not finite (never drawn).
//
// What it guarantees (the theorem of model.md §1.9). With K = ceil(Delta^ / g) (so |n(i) - n'(i)| <= K) and gamma a
// bound on |ln W(a) - (P ln 2 - c g a)| for every a < A (the doubles' rounding and the floor), one draw is
// (epsilon, delta)-DP with
//     epsilon = 2 c g K + 4 gamma + 2^-62,     delta = (e^epsilon + 2) tau + 2^-64,   tau = n 2^{32 - P} (1 + 4 gamma)
// (tau bounds the mass of the cut candidates a >= A). The shift m cancels from every ratio, as in the continuous
// proof; that is why the weights are functions of a = n - m with the exact geometric form up to gamma. With the
// default grid K is 1024..2049, so epsilon is the continuous 2 c Delta times at most 1 + 1/1024 (+ the error term);
// plan_exact_exp's `fit` lowers c so that epsilon is at most a requested value.
//
// Randomness: the words of try k are blocks 3k .. 3k + 2 of the stream (purpose, sub, round, element) of the draw's
// instance, element as the caller gives it: 0 for the phase learners' one draw per round, the address of the
// continuous sampler's uniform (ExpMechDraw), which a run uses instead; b for tree-experts' b-th draw of a set.
//
// Shared scores (exact_exp_table, exact_exp_draw_from_table): when many instances draw over the same scores (a round
// of a shared loss sequence), everything but the uniform is common to them: m, the weights and the running sums. The
// table holds the weights and the exact running sums at every kExactExpBlock-th candidate; a draw then finds the
// block whose sum first exceeds its U by binary search and scans only that block. It returns the same index as
// exact_exp_draw, bit for bit: both return the first i whose exact running sum exceeds U, and every sum is exact.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/core/hd.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::mech {

inline constexpr int kExactExpLimbs = 6;                ///< 384-bit integers: S < 2^384
inline constexpr int kExactExpCutBits = 32;             ///< a positive weight is at least 2^32
inline constexpr int kExactExpMaxFactors = 53;          ///< A <= 2^53: a is exact and has at most 53 bits
inline constexpr std::uint32_t kExactExpTries = 64;     ///< rejection tries for U (all fail w.p. < 2^-64)
inline constexpr std::uint32_t kExactExpBlocksPerTry = 3; ///< 12 words: up to 384 random bits per try
inline constexpr double kExactExpGridUnits = 1024.0;    ///< Delta / g in [1024, 2048)

/// A non-negative integer below 2^384, little-endian 64-bit limbs.
struct BigUint {
    std::uint64_t w[kExactExpLimbs] = {};

    DPR_HD void add(const BigUint& b) {
        std::uint64_t carry = 0;
        for (int k = 0; k < kExactExpLimbs; ++k) {
            const std::uint64_t x = w[k] + carry;
            const std::uint64_t c1 = x < carry ? 1u : 0u;
            w[k] = x + b.w[k];
            carry = c1 + (w[k] < b.w[k] ? 1u : 0u);
        }
    }
    /// Adds x, a non-negative integer-valued double below 2^384, exactly: its 53-bit significand shifted into place
    /// (the value BigUint::of(x) adds, without forming it).
    DPR_HD void add_double(double x) {
        if (!(x > 0.0)) return;
        std::uint64_t bits = 0;
        std::memcpy(&bits, &x, sizeof bits);
        const int e = static_cast<int>(bits >> 52) - 1075; // x = sig 2^e (x >= 1: normal)
        const std::uint64_t sig = (bits & ((std::uint64_t{1} << 52) - 1u)) | (std::uint64_t{1} << 52);
        if (e <= 0) return add_limb(0, sig >> -e); // an integer below 2^53: the shifted-out bits are 0
        const int limb = e / 64, bit = e % 64;
        add_limb(limb, sig << bit);
        if (bit && limb + 1 < kExactExpLimbs) add_limb(limb + 1, sig >> (64 - bit));
    }
    /// Adds v at limb k, carrying upwards.
    DPR_HD void add_limb(int k, std::uint64_t v) {
        for (; k < kExactExpLimbs && v; ++k) {
            w[k] += v;
            v = w[k] < v ? 1u : 0u;
        }
    }
    DPR_HD bool less(const BigUint& b) const {
        for (int k = kExactExpLimbs - 1; k >= 0; --k)
            if (w[k] != b.w[k]) return w[k] < b.w[k];
        return false;
    }
    DPR_HD bool zero() const {
        for (int k = 0; k < kExactExpLimbs; ++k)
            if (w[k]) return false;
        return true;
    }
    /// This minus one (this > 0).
    DPR_HD BigUint minus_one() const {
        BigUint r = *this;
        for (int k = 0; k < kExactExpLimbs; ++k)
            if (r.w[k]--) break; // no borrow past a limb that was not 0
        return r;
    }
    /// The number of significant bits (0 for zero).
    DPR_HD int bits() const {
        for (int k = kExactExpLimbs - 1; k >= 0; --k)
            if (w[k]) {
                int b = 64;
                while (!(w[k] >> (b - 1))) --b;
                return 64 * k + b;
            }
        return 0;
    }
    /// x, a non-negative integer-valued double below 2^384 (exactly: its 53-bit significand shifted).
    DPR_HD static BigUint of(double x) {
        BigUint r;
        if (!(x > 0.0)) return r;
        int e = 0;
        const double f = std::frexp(x, &e); // x = f 2^e, f in [0.5, 1)
        if (e <= 53) {
            r.w[0] = static_cast<std::uint64_t>(x); // exact: an integer below 2^53
            return r;
        }
        const std::uint64_t sig = static_cast<std::uint64_t>(std::ldexp(f, 53)); // x = sig 2^(e - 53)
        const int shift = e - 53, limb = shift / 64, bit = shift % 64;
        r.w[limb] = sig << bit;
        if (bit && limb + 1 < kExactExpLimbs) r.w[limb + 1] = sig >> (64 - bit);
        return r;
    }
    /// Its value as a long double (rounded; host tests and accounting).
    long double value() const {
        long double v = 0.0L;
        for (int k = kExactExpLimbs - 1; k >= 0; --k) v = std::ldexp(v, 64) + static_cast<long double>(w[k]);
        return v;
    }
};

/// One run's exact exponential mechanism: the grid, the weights' constants and what a draw guarantees. Trivially
/// copyable (it travels in a learner's Params).
struct ExactExpPlan {
    bool ok = false;
    const char* why = "";   ///< why there is no plan (ok = false)
    double c = 0.0;         ///< the coefficient of the law sampled (Pr ∝ e^{-c s}, up to the grid), after `fit`
    double g = 0.0;         ///< the score grid, a power of two
    double cg = 0.0;        ///< c g (exact)
    double K = 0.0;         ///< grid steps a neighbouring input can move a score: ceil(Delta^ / g)
    double A = 0.0;         ///< a >= A has weight 0
    int P = 0;              ///< W(a) = floor(2^P w^(a))
    int factors = 0;        ///< bits of A - 1: the Q_k in use
    double Q[kExactExpMaxFactors] = {};
    double gamma = 0.0;     ///< |ln W(a) - (P ln 2 - c g a)| <= gamma for a < A
    double epsilon = 0.0;   ///< per draw
    double delta = 0.0;     ///< per draw
    std::uint32_t n_max = 0;
};

/// W(a) of the plan as an integer-valued double (0 for a >= A). a >= 0 an integer-valued double.
DPR_HD inline double exact_exp_weight(const ExactExpPlan& p, double a) {
    if (!(a < p.A)) return 0.0;
    std::uint64_t bits = static_cast<std::uint64_t>(a);
    double w = 1.0;
    for (int k = 0; bits; ++k, bits >>= 1)
        if (bits & 1u) w = w * p.Q[k];
    return std::floor(std::ldexp(w, p.P));
}

/// The grid index floor(s / g) of a score (exact: g is a power of two); +inf for a score that is not finite (such a
/// candidate is never drawn).
DPR_HD inline double exact_exp_index(const ExactExpPlan& p, double s) {
    const double y = s / p.g; // exact unless it overflows: then, like a non-finite score, never drawn
    return std::isfinite(y) ? std::floor(y) : std::numeric_limits<double>::infinity();
}

/// The plan for coefficient c > 0 over at most n_max candidates whose computed scores move by at most
/// `sensitivity + 2 score_error` between neighbouring inputs (the exact sensitivity and the bound on the learner's
/// rounding of each score). fit > 0: c is lowered (never raised) to the largest value whose epsilon is at most fit.
/// Host code (long double). ok = false with `why` when no plan fits the 384-bit integers or the 53-bit a.
inline ExactExpPlan plan_exact_exp(double c, double sensitivity, double score_error, std::uint32_t n_max,
                                   double fit = 0.0) {
    ExactExpPlan p;
    p.n_max = n_max;
    auto refuse = [&p](const char* why) {
        p.ok = false;
        p.why = why;
        return p;
    };
    if (!(c > 0.0) || !std::isfinite(c)) return refuse("the coefficient must be positive and finite");
    if (!(sensitivity > 0.0) || !std::isfinite(sensitivity)) return refuse("the score sensitivity must be positive and finite");
    if (!(score_error >= 0.0) || !std::isfinite(score_error)) return refuse("the score error bound must be finite and >= 0");
    if (n_max < 1) return refuse("there must be a candidate");
    int e = 0;
    std::frexp(sensitivity / kExactExpGridUnits, &e); // = f 2^e, f in [0.5, 1)
    p.g = std::ldexp(1.0, e - 1);
    // Delta^ / g, rounded up where the long double sum is not exact (exact when score_error = 0).
    long double dhat = static_cast<long double>(sensitivity) + 2.0L * score_error;
    if (score_error > 0.0) dhat = std::nextafter(dhat, std::numeric_limits<long double>::infinity());
    p.K = static_cast<double>(std::ceil(dhat / p.g));
    int logn = 0;
    while ((1ull << logn) < n_max) ++logn;
    const long double ln2 = std::log(2.0L);
    for (int pass = 0; pass < 3; ++pass) {
        if (pass == 0) p.c = c;
        p.cg = p.c * p.g; // exact: g is a power of two
        if (!(p.cg >= 1e-12))
            return refuse("the coefficient is too small for the exact sampler (c g below 1e-12: c below about 1e-9 / Delta)");
        // P: tau (e^eps + 2) <= 2^-62 with eps at most 2 c g K + 1; the weights' sum must fit 384 bits.
        const long double eps_est = 2.0L * p.cg * p.K + 1.0L;
        if (!(eps_est / ln2 < 64.0L * kExactExpLimbs))
            return refuse("the per-draw epsilon is too large for the exact sampler's 384-bit weights");
        p.P = kExactExpCutBits + logn + 64 + static_cast<int>(std::ceil(eps_est / ln2));
        if (p.P + logn + 1 > 64 * kExactExpLimbs)
            return refuse("the per-draw epsilon is too large for the exact sampler's 384-bit weights");
        // A: the first a whose ideal weight 2^P e^{-c g a} is at most 2^32 (below 2^53 since c g >= 1e-12).
        p.A = static_cast<double>(std::ceil((p.P - kExactExpCutBits) * ln2 / static_cast<long double>(p.cg)));
        p.factors = 0;
        while (p.factors < kExactExpMaxFactors && std::ldexp(1.0, p.factors) <= p.A - 1.0) ++p.factors;
        for (int k = 0; k < kExactExpMaxFactors; ++k)
            p.Q[k] = k < p.factors ? static_cast<double>(std::exp(-static_cast<long double>(p.cg) * std::ldexp(1.0L, k)))
                                   : 0.0;
        // The ideal weight at A - 1 can sit a rounding above 2^32 and the computed one a rounding below: lower A until
        // the computed W(A - 1) is at least 2^32. Below A - 1 the ideal weight is e^{c g} >= 1 + 1e-12 times larger,
        // more than the product's rounding, so every positive weight is at least 2^32.
        while (p.A > 1.0 && exact_exp_weight(p, p.A - 1.0) < std::ldexp(1.0, kExactExpCutBits)) p.A -= 1.0;
        // gamma: each Q_k and each product rounds once (relative 2^-53; the long double exp adds at most a few of its
        // own ulps), then the floor of a value >= 2^32 moves it by at most 2^-32 relative.
        const long double u = std::ldexp(1.0L, -53), ul = std::numeric_limits<long double>::epsilon();
        p.gamma = static_cast<double>((2.0L * p.factors * u + 4.0L * p.factors * ul) * 1.001L +
                                      std::ldexp(1.0L, -kExactExpCutBits) * 1.001L);
        // + 2^-62: the fallback after kExactExpTries failed tries (model.md §1.9's proof).
        const long double eps = (2.0L * p.cg * p.K + 4.0L * p.gamma) * (1.0L + 1e-15L) + std::ldexp(1.0L, -62);
        p.epsilon = static_cast<double>(eps);
        if (fit > 0.0 && p.epsilon > fit && pass < 2) {
            // The largest c whose 2 c g K + 4 gamma fits (gamma barely depends on c; the next pass re-checks).
            const long double room = static_cast<long double>(fit) / (1.0L + 2e-15L) - 4.0L * p.gamma - std::ldexp(1.0L, -61);
            if (!(room > 0.0L)) return refuse("the requested epsilon is below the exact sampler's error term");
            p.c = std::nextafter(static_cast<double>(room / (2.0L * p.g * p.K)), 0.0);
            continue;
        }
        break;
    }
    if (fit > 0.0 && p.epsilon > fit) return refuse("no coefficient fits the requested epsilon");
    const long double tau = static_cast<long double>(n_max) * std::ldexp(1.0L, kExactExpCutBits - p.P) *
                            (1.0L + 4.0L * p.gamma) * 1.001L;
    p.delta = static_cast<double>((std::exp(static_cast<long double>(p.epsilon)) + 2.0L) * tau + std::ldexp(1.0L, -64));
    p.ok = true;
    p.why = "";
    return p;
}

/// The minimum grid index m of the candidates (+inf if none is finite) and the first index that attains it.
template <class Score>
DPR_HD inline double exact_exp_min(const ExactExpPlan& p, std::uint32_t n, Score&& score, std::uint32_t* first_min) {
    double m = std::numeric_limits<double>::infinity();
    *first_min = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        const double x = exact_exp_index(p, score(i));
        if (x < m) m = x, *first_min = i;
    }
    return m;
}

/// S = sum_i W(a(i)), exactly.
template <class Score>
DPR_HD inline BigUint exact_exp_total(const ExactExpPlan& p, std::uint32_t n, Score&& score, double m) {
    BigUint S;
    for (std::uint32_t i = 0; i < n; ++i) S.add(BigUint::of(exact_exp_weight(p, exact_exp_index(p, score(i)) - m)));
    return S;
}

/// U uniform on [0, S) (S > 0) from the stream `id`, element as given (blocks 3k .. 3k + 2 for try k: words 2j, 2j + 1 of a block make
/// limb 2 b + j, high word first; N = bitlen(S - 1) bits kept), or false when kExactExpTries tries all land at or
/// above S. *tries: the tries made.
DPR_HD inline bool exact_exp_uniform(const BigUint& S, rng::StreamId id, BigUint* U, std::uint32_t* tries) {
    const int N = S.minus_one().bits(); // 2^N >= S > 2^(N-1): a try succeeds with probability > 1/2
    for (std::uint32_t k = 0; k < kExactExpTries; ++k) {
        *tries = k + 1;
        BigUint u;
        int have = 0;
        for (std::uint32_t b = 0; b < kExactExpBlocksPerTry && have < N; ++b) {
            const auto blk = rng::draw_block(id, kExactExpBlocksPerTry * k + b);
            for (int j = 0; j < 4 && have < N; j += 2, have += 64)
                u.w[have / 64] = (static_cast<std::uint64_t>(blk.v[j]) << 32) | blk.v[j + 1];
        }
        if (N == 0) return *U = u, true; // S = 1: U = 0
        const int top = (N - 1) / 64, keep = N - 64 * top; // bits of the top limb to keep
        if (keep < 64) u.w[top] &= (std::uint64_t{1} << keep) - 1u;
        if (u.less(S)) return *U = u, true;
    }
    return false;
}

/// The first i whose exact running sum W(a(0)) + ... + W(a(i)) exceeds U (n - 1 if none does: U >= S).
template <class Score>
DPR_HD inline std::uint32_t exact_exp_scan(const ExactExpPlan& p, std::uint32_t n, Score&& score, double m, const BigUint& U) {
    BigUint C;
    for (std::uint32_t i = 0; i < n; ++i) {
        C.add(BigUint::of(exact_exp_weight(p, exact_exp_index(p, score(i)) - m)));
        if (U.less(C)) return i;
    }
    return n - 1;
}

/// One draw i ~ W(a(i)) / S over [0, n) from the words of stream `id` (blocks as the header says).
/// score(i) -> double: the computed score, the same value in each pass; a score whose grid index is not finite has
/// weight 0 (n with no finite one: index 0). n must be at most p.n_max (the plan's tail bound counts n_max
/// candidates; a larger n, or a plan that is not ok, gets index 0). Three passes over the candidates (the minimum,
/// the total, the scan), one product of at most p.factors multiplies per candidate and pass. tries: if not null, the
/// rejection tries made.
template <class Score>
DPR_HD inline std::uint32_t exact_exp_draw(const ExactExpPlan& p, std::uint32_t n, Score&& score, rng::StreamId id,
                                           std::uint32_t* tries = nullptr) {
    if (!p.ok || n > p.n_max) return 0;
    std::uint32_t first_min = 0, made = 0;
    const double m = exact_exp_min(p, n, score, &first_min);
    if (!std::isfinite(m)) return 0;
    BigUint U;
    const bool got = exact_exp_uniform(exact_exp_total(p, n, score, m), id, &U, &made);
    if (tries) *tries = made;
    return got ? exact_exp_scan(p, n, score, m, U) : first_min;
}

inline constexpr std::uint32_t kExactExpBlock = 64; ///< candidates per stored running sum of a shared table

/// The doubles of a shared table over n candidates (exact_exp_table's layout):
///   [0] m, the minimum grid index (+inf: no finite score)      [1] the first index that attains it
///   [2, 2 + n) the weights W(a(i)), integer-valued doubles
///   then ceil(n / kExactExpBlock) exact running sums C_b = W(a(0)) + ... + W(a(min(n, (b + 1) kExactExpBlock) - 1)),
///   kExactExpLimbs 64-bit limbs each (copied bytewise into the doubles' storage).
DPR_HD constexpr std::uint64_t exact_exp_table_size(std::uint32_t n) {
    return 2u + std::uint64_t{n} + std::uint64_t{kExactExpLimbs} * ((std::uint64_t{n} + kExactExpBlock - 1) / kExactExpBlock);
}

DPR_HD inline BigUint exact_exp_table_sum(const double* table, std::uint32_t n, std::uint32_t b) {
    BigUint r;
    std::memcpy(r.w, table + 2 + n + std::uint64_t{kExactExpLimbs} * b, sizeof r.w);
    return r;
}

/// Fills the shared table of one draw over the scores score(i), i < n (see the header): the same minimum, weights and
/// running sums exact_exp_draw forms. Host code, once per shared round. The weights of the last 64 grid offsets a
/// met are kept (a direct-mapped cache: scores that take few grid values, like sums of integer losses, cost one
/// product per value), which changes no weight: W(a) is a function of a.
template <class Score>
inline void exact_exp_table(const ExactExpPlan& p, std::uint32_t n, Score&& score, double* table) {
    std::uint32_t first_min = 0;
    const double m = exact_exp_min(p, n, score, &first_min);
    table[0] = m;
    table[1] = static_cast<double>(first_min);
    if (!std::isfinite(m)) return;
    constexpr std::uint32_t kSlots = 64; // 2^6: the hash's top 6 bits
    double key[kSlots], val[kSlots];
    for (std::uint32_t k = 0; k < kSlots; ++k) key[k] = -1.0, val[k] = 0.0; // a >= 0: no key matches yet
    BigUint C;
    for (std::uint32_t i = 0; i < n; ++i) {
        const double a = exact_exp_index(p, score(i)) - m;
        double w = 0.0;
        if (a < p.A) { // a >= A (or not finite): weight 0
            // Fibonacci hashing: grid offsets of integer scores are multiples of 1/g, whose low bits are all 0.
            const std::uint32_t slot =
                static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) * 0x9E3779B97F4A7C15ull) >> 58);
            if (key[slot] != a) key[slot] = a, val[slot] = exact_exp_weight(p, a);
            w = val[slot];
        }
        table[2 + i] = w;
        C.add_double(w);
        if ((i + 1) % kExactExpBlock == 0 || i + 1 == n)
            std::memcpy(table + 2 + n + std::uint64_t{kExactExpLimbs} * (i / kExactExpBlock), C.w, sizeof C.w);
    }
}

/// exact_exp_draw's index from a shared table (exact_exp_table over the same n candidates and plan) and the draw's own
/// words: U from the total, the first block whose running sum exceeds U by binary search, then that block's scan.
/// O(log(n / 64) + 64) per draw instead of three O(n) passes; the same index bit for bit.
DPR_HD inline std::uint32_t exact_exp_draw_from_table(const ExactExpPlan& p, std::uint32_t n, const double* table,
                                                      rng::StreamId id, std::uint32_t* tries = nullptr) {
    if (!p.ok || n > p.n_max || !std::isfinite(table[0])) return 0;
    const std::uint32_t blocks = (n + kExactExpBlock - 1) / kExactExpBlock;
    BigUint U;
    std::uint32_t made = 0;
    const bool got = exact_exp_uniform(exact_exp_table_sum(table, n, blocks - 1), id, &U, &made);
    if (tries) *tries = made;
    if (!got) return static_cast<std::uint32_t>(table[1]);
    std::uint32_t lo = 0, hi = blocks - 1; // U < S = C_{blocks - 1}: the first block whose sum exceeds U exists
    while (lo < hi) {
        const std::uint32_t mid = lo + (hi - lo) / 2;
        if (U.less(exact_exp_table_sum(table, n, mid))) hi = mid;
        else lo = mid + 1;
    }
    BigUint C = lo ? exact_exp_table_sum(table, n, lo - 1) : BigUint{};
    const std::uint32_t end = lo + 1 == blocks ? n : (lo + 1) * kExactExpBlock;
    for (std::uint32_t i = lo * kExactExpBlock; i < end; ++i) {
        C.add(BigUint::of(table[2 + i]));
        if (U.less(C)) return i;
    }
    return n - 1;
}

} // namespace dpr::mech
