#pragma once
// exp, log and cos(2 pi u) for lane values (kernels/core/lanes.hpp), float and double, written once from
// correctly rounded primitives (+, -, *, /, fused multiply-add vfma, select, bit casts; the build forbids the
// compiler to contract a * b + c on its own, so every fusion is an explicit vfma, kernels/core/lanes.hpp), so
// a scalar on the CPU, every SIMD width and a GPU thread compute the same bits. This is what lets results be
// bitwise independent of the ISA and comparable bit for bit with the GPU (docs/ARCHITECTURE.md §4); the price is that
// these are not the C library's functions (they agree with glibc to <= 1 ulp on the domains below;
// tests/simd/test_simd.cpp measures it). The polynomials are evaluated by Horner's rule in vfma steps: half
// the operations of separate multiplies and adds (the CPU's ISAs with FMA and every GPU do one in one
// instruction; the generic x86-64 ISA calls the C library's exact fma per lane, correct but slow).
//
// Algorithms (Cephes, S. L. Moshier, "Methods and Programs for Mathematical Functions", 1989):
//   log   x = m 2^e, m in [sqrt(1/2), sqrt(2)):  log x = f - f^2/2 + f^3 P(f)/Q(f) + e ln 2,  f = m - 1,
//         ln 2 split in an exact head and a tail. Double: rational P5/Q5; float: polynomial of degree 8.
//   exp   n = round(x / ln 2), r = x - n ln 2 (split), exp x = 2^n p(r). Double: Taylor to r^13 (|r| <=
//         ln2/2: truncation < 2^-60); float: Cephes' degree-5 polynomial. 2^n is built in the exponent
//         field; integer conversions use the 1.5 * 2^52 (2^23) rounding constant, so no int64 <-> double
//         conversion instruction is needed (AVX2 and SSE have none).
//   cos2pi  cos(2 pi u) = -sin(2 pi (1/4 - |u - 1/2|)), an argument in [-pi/2, pi/2]; sin by its Taylor
//         series (to a^21 double, a^11 float). For Box-Muller, u in (0, 1).
// Domains and edge values: log of +0 = -inf, of a negative or NaN = NaN, of +inf = +inf, subnormals
// handled. exp overflows to +inf above 709.78 (88.72f), returns 0 below -708 (-86f) (results below
// 3.3e-308 (4.5e-38f) are flushed to 0: they never matter next to a term of size 1, and a subnormal
// intermediate costs a microcode assist per lane, ~3x the whole exp), propagates NaN (through the clamp:
// vmin/vmax keep a NaN first operand, kernels/core/lanes.hpp). vlog_pos is vlog without the edge handling,
// for arguments known to be positive, normal and finite (the noise transforms').
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"

namespace dpr {

namespace vmath_detail {

/// The precision of V's lanes as a tag, so that each function below has one overload per precision.
struct Double {};
struct Float {};
template <class V>
using PrecisionOf = std::conditional_t<sizeof(lane_scalar_t<V>) == 8, Double, Float>;

/// log of positive, normal, finite x (no edge handling: the noise transforms' inputs are such).
template <class V>
DPR_HD DPR_FORCEINLINE V vlog_core(V x, Double) {
    using U = lane_rebind_t<V, std::uint64_t>;
    const U bits = bit_cast<std::uint64_t>(x);
    const U eb = bits >> 52; // biased exponent (the sign is 0)
    const V m = bit_cast<double>((bits & U(0x000FFFFFFFFFFFFFull)) | U(0x3FE0000000000000ull)); // [0.5, 1)
    V e = bit_cast<double>(eb | U(0x4330000000000000ull)) - V(4503599627370496.0) - V(1022.0);
    const auto below = m < V(0.70710678118654752440);
    e = select(below, e - V(1.0), e);
    const V f = select(below, (m + m) - V(1.0), m - V(1.0));
    const V z = f * f;
    V p = V(1.01875663804580931796E-4);
    p = vfma(p, f, V(4.97494994976747001425E-1));
    p = vfma(p, f, V(4.70579119878881725854E0));
    p = vfma(p, f, V(1.44989225341610930846E1));
    p = vfma(p, f, V(1.79368678507819816313E1));
    p = vfma(p, f, V(7.70838733755885391666E0));
    V q = f + V(1.12873587189167450590E1);
    q = vfma(q, f, V(4.52279145837532221105E1));
    q = vfma(q, f, V(8.29875266912776603211E1));
    q = vfma(q, f, V(7.11544750618563894466E1));
    q = vfma(q, f, V(2.31251620126765340583E1));
    V y = f * (z * p / q);
    y = vfma(e, V(-2.121944400546905827679e-4), y);
    y = vfma(V(-0.5), z, y);
    V r = f + y;
    return vfma(e, V(0.693359375), r);
}

template <class V>
DPR_HD DPR_FORCEINLINE V vlog_core(V x, Float) {
    using U = lane_rebind_t<V, std::uint32_t>;
    const U bits = bit_cast<std::uint32_t>(x);
    const U eb = bits >> 23;
    const V m = bit_cast<float>((bits & U(0x007FFFFFu)) | U(0x3F000000u)); // [0.5, 1)
    // float(eb) exactly: eb < 2^8, via the 2^23 rounding constant.
    V e = bit_cast<float>(eb | U(0x4B000000u)) - V(8388608.0f) - V(126.0f);
    const auto below = m < V(0.707106781186547524f);
    e = select(below, e - V(1.0f), e);
    const V f = select(below, (m + m) - V(1.0f), m - V(1.0f));
    const V z = f * f;
    V y = V(7.0376836292E-2f);
    y = vfma(y, f, V(-1.1514610310E-1f));
    y = vfma(y, f, V(1.1676998740E-1f));
    y = vfma(y, f, V(-1.2420140846E-1f));
    y = vfma(y, f, V(1.4249322787E-1f));
    y = vfma(y, f, V(-1.6668057665E-1f));
    y = vfma(y, f, V(2.0000714765E-1f));
    y = vfma(y, f, V(-2.4999993993E-1f));
    y = vfma(y, f, V(3.3333331174E-1f));
    y = y * f * z;
    y = vfma(e, V(-2.12194440e-4f), y);
    y = vfma(V(-0.5f), z, y);
    V r = f + y;
    return vfma(e, V(0.693359375f), r);
}

/// Subnormal inputs are scaled into the normal range by 2^k first (k = 54 double, 25 float) and k ln 2 taken
/// off.
template <class T>
struct LogSubnormal;
template <>
struct LogSubnormal<double> {
    static constexpr double kScale = 18014398509481984.0;      // 2^54
    static constexpr double kLogScale = 37.429947750237040745; // 54 ln 2
};
template <>
struct LogSubnormal<float> {
    static constexpr float kScale = 33554432.0f;      // 2^25
    static constexpr float kLogScale = 17.328679514f; // 25 ln 2
};

/// log with the edge values of the header: the core on normal inputs, subnormals scaled, +0 -> -inf, +inf ->
/// +inf, negative or NaN -> NaN.
template <class V, class P>
DPR_HD DPR_FORCEINLINE V vlog(V x, P) {
    using T = lane_scalar_t<V>;
    using Sub = LogSubnormal<T>;
    const auto sub = x < V(std::numeric_limits<T>::min()); // below the smallest normal
    V r = vlog_core(select(sub, x * V(Sub::kScale), x), P{});
    r = select(sub, r - V(Sub::kLogScale), r);
    constexpr T inf = std::numeric_limits<T>::infinity();
    r = select(x == V(T(0)), V(-inf), r);
    r = select(x == V(inf), V(inf), r);
    r = select((x < V(T(0))) | (x != x), V(std::numeric_limits<T>::quiet_NaN()), r);
    return r;
}

template <class V>
DPR_HD DPR_FORCEINLINE V vexp(V x, Double) {
    using I = lane_rebind_t<V, std::int64_t>;
    constexpr double kRound = 6755399441055744.0; // 1.5 * 2^52: adding it rounds to an integer
    // kMin keeps every intermediate normal: for x >= -708, 2^n >= 2^-1021 and p >= 0.7 (no subnormal product).
    constexpr double kMax = 709.782712893383973096, kMin = -708.0;
    const V xc = vmin(vmax(x, V(kMin)), V(kMax));
    const V t = vfma(xc, V(1.44269504088896340736), V(kRound));
    const V n = t - V(kRound); // round(x / ln 2), an exact integer in [-1022, 1024]
    V r = vfma(n, V(-6.93145751953125E-1), xc);
    r = vfma(n, V(-1.42860682030941723212E-6), r);
    // Taylor series of exp(r) to r^13 (Horner).
    V p = V(1.0 / 6227020800.0);
    p = vfma(p, r, V(1.0 / 479001600.0));
    p = vfma(p, r, V(1.0 / 39916800.0));
    p = vfma(p, r, V(1.0 / 3628800.0));
    p = vfma(p, r, V(1.0 / 362880.0));
    p = vfma(p, r, V(1.0 / 40320.0));
    p = vfma(p, r, V(1.0 / 5040.0));
    p = vfma(p, r, V(1.0 / 720.0));
    p = vfma(p, r, V(1.0 / 120.0));
    p = vfma(p, r, V(1.0 / 24.0));
    p = vfma(p, r, V(1.0 / 6.0));
    p = vfma(p, r, V(0.5));
    p = vfma(p, r, V(1.0));
    p = vfma(p, r, V(1.0));
    // 2^n as 2 * 2^(n-1): n = bits(t) - bits(kRound) as an integer; the exponent field n - 1 + 1023 is in
    // [1, 2046] for n in [-1021, 1024], so the scale is a normal number and p 2^n overflows only if exp(x) does.
    const I ni = bit_cast<std::int64_t>(t) - I(0x4338000000000000ll);
    const V scale = bit_cast<double>((ni + I(1022)) << 52);
    V res = (p + p) * scale;
    constexpr double inf = std::numeric_limits<double>::infinity();
    res = select(x > V(kMax), V(inf), res);
    return select(x < V(kMin), V(0.0), res); // NaN went through the clamp (vmin/vmax keep it) and stays NaN
}

template <class V>
DPR_HD DPR_FORCEINLINE V vexp(V x, Float) {
    using I = lane_rebind_t<V, std::int32_t>;
    constexpr float kRound = 12582912.0f; // 1.5 * 2^23
    // As in double: every intermediate stays normal (x >= -86: 2^(n-1) >= 2^-125).
    constexpr float kMax = 88.7228317f, kMin = -86.0f;
    const V xc = vmin(vmax(x, V(kMin)), V(kMax));
    const V t = vfma(xc, V(1.44269504088896341f), V(kRound));
    const V n = t - V(kRound);
    V r = vfma(n, V(-0.693359375f), xc);
    r = vfma(n, V(2.12194440e-4f), r);
    V p = V(1.9875691500E-4f);
    p = vfma(p, r, V(1.3981999507E-3f));
    p = vfma(p, r, V(8.3334519073E-3f));
    p = vfma(p, r, V(4.1665795894E-2f));
    p = vfma(p, r, V(1.6666665459E-1f));
    p = vfma(p, r, V(5.0000001201E-1f));
    p = vfma(p, r * r, r) + V(1.0f);
    const I ni = bit_cast<std::int32_t>(t) - I(0x4B400000);
    const V scale = bit_cast<float>((ni + I(126)) << 23); // 2^(n-1), normal for n in [-125, 128]
    V res = (p + p) * scale;
    constexpr float inf = std::numeric_limits<float>::infinity();
    res = select(x > V(kMax), V(inf), res);
    return select(x < V(kMin), V(0.0f), res);
}

template <class V>
DPR_HD DPR_FORCEINLINE V vcos2pi(V u, Double) {
    const V a = V(6.283185307179586477) * (V(0.25) - vabs(u - V(0.5)));
    const V a2 = a * a;
    // sin(a) = a + a^3 p(a^2), p(s) = sum_{k=1..10} (-1)^k s^(k-1) / (2k+1)!  (Horner from k = 10).
    V p = V(1.0 / 51090942171709440000.0);
    p = vfma(p, a2, V(-(1.0 / 121645100408832000.0)));
    p = vfma(p, a2, V(1.0 / 355687428096000.0));
    p = vfma(p, a2, V(-(1.0 / 1307674368000.0)));
    p = vfma(p, a2, V(1.0 / 6227020800.0));
    p = vfma(p, a2, V(-(1.0 / 39916800.0)));
    p = vfma(p, a2, V(1.0 / 362880.0));
    p = vfma(p, a2, V(-(1.0 / 5040.0)));
    p = vfma(p, a2, V(1.0 / 120.0));
    p = vfma(p, a2, V(-(1.0 / 6.0)));
    return -vfma(a * a2, p, a);
}

template <class V>
DPR_HD DPR_FORCEINLINE V vcos2pi(V u, Float) {
    const V a = V(6.28318530717958648f) * (V(0.25f) - vabs(u - V(0.5f)));
    const V a2 = a * a;
    V p = V(-2.5052108385441720e-08f);
    p = vfma(p, a2, V(2.7557319223985893e-06f));
    p = vfma(p, a2, V(-1.9841269841269841e-04f));
    p = vfma(p, a2, V(8.3333333333333332e-03f));
    p = vfma(p, a2, V(-1.6666666666666666e-01f));
    return -vfma(a * a2, p, a);
}

} // namespace vmath_detail

/// Natural logarithm, lane by lane (see the header for the domain and the edge values).
template <class V>
DPR_HD DPR_FORCEINLINE V vlog(V x) {
    return vmath_detail::vlog(x, vmath_detail::PrecisionOf<V>{});
}

/// Natural logarithm of a positive, normal, finite x -- the same bits as vlog there, without the edge
/// handling (the noise transforms' arguments: open uniforms, their products and ratios, all normal).
template <class V>
DPR_HD DPR_FORCEINLINE V vlog_pos(V x) {
    return vmath_detail::vlog_core(x, vmath_detail::PrecisionOf<V>{});
}

/// e^x, lane by lane.
template <class V>
DPR_HD DPR_FORCEINLINE V vexp(V x) {
    return vmath_detail::vexp(x, vmath_detail::PrecisionOf<V>{});
}

/// cos(2 pi u) for u in [0, 1].
template <class V>
DPR_HD DPR_FORCEINLINE V vcos2pi(V u) {
    return vmath_detail::vcos2pi(u, vmath_detail::PrecisionOf<V>{});
}

} // namespace dpr
