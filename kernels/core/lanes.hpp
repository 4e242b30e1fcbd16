#pragma once
// Lane values: the vocabulary per-coordinate (or per-instance) code is written in, so that one source
// runs as SIMD lanes on a CPU and as the lanes of a warp on a GPU (docs/ARCHITECTURE.md §1, §5).
//
// A "lane value" V is either a plain scalar (float, double, std::uint32_t, ...: one lane, what a GPU
// thread or the serial CPU oracle computes) or a CPU SIMD pack of W lanes (host/simd/pack.hpp, a type
// with member typedefs `scalar` and `rebind<U>` and a constant `width`). Code in kernels/ is written
// once over V with the functions below; for a pack, argument-dependent lookup finds the pack versions in
// host/simd/, for a scalar the overloads here are used. Branch-free by construction: a data-dependent
// choice is a select(), never an `if` on a lane value (a mask may be tested with any()/all() to skip work
// that no lane needs).
//
// Every function here is exact or IEEE-correctly rounded (select, min, max, abs, sqrt, conversions), so
// the scalar and every SIMD version give the same bits; transcendental functions are in vmath.hpp,
// written once over V from these primitives, hence also bitwise identical across ISAs and backends
// (given no FMA contraction: the build uses -ffp-contract=off and nvcc --fmad=false).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/core/hd.hpp"

namespace dpr {

// ---- traits -------------------------------------------------------------------------------------------

template <class V, class = void>
struct lane_traits {
    using scalar = V;
    using mask = bool;
    template <class U>
    using rebind = U;
    static constexpr int width = 1;
};
template <class V>
struct lane_traits<V, std::void_t<typename V::scalar>> {
    using scalar = typename V::scalar;
    using mask = typename V::mask;
    template <class U>
    using rebind = typename V::template rebind<U>;
    static constexpr int width = V::width;
};

/// The element type of lane value V (float for a float pack).
template <class V>
using lane_scalar_t = typename lane_traits<V>::scalar;
/// Lanes of U with the same width as V (uint32 lanes of a float pack, ...).
template <class V, class U>
using lane_rebind_t = typename lane_traits<V>::template rebind<U>;
/// The mask type of V's comparisons (bool for scalars).
template <class V>
using lane_mask_t = typename lane_traits<V>::mask;
template <class V>
inline constexpr int lane_width_v = lane_traits<V>::width;

template <class T>
using enable_if_scalar_t = std::enable_if_t<std::is_arithmetic<T>::value, int>;

// ---- scalar versions (packs provide the same names in their own namespace) -----------------------------

template <class T, enable_if_scalar_t<T> = 0>
DPR_HD DPR_FORCEINLINE T select(bool m, T a, T b) {
    return m ? a : b;
}
DPR_HD DPR_FORCEINLINE bool any(bool m) { return m; }
/// A mask usable with lanes of U (packs convert between element sizes; a scalar's bool is itself).
template <class U>
DPR_HD DPR_FORCEINLINE bool mask_for(bool m) {
    return m;
}
DPR_HD DPR_FORCEINLINE bool all(bool m) { return m; }
/// Lane l of v (a scalar is its own lane 0): for the scalar loops that run one instance of a pack at a time.
template <class T, enable_if_scalar_t<T> = 0>
DPR_HD DPR_FORCEINLINE T lane_of(T v, int) {
    return v;
}
template <class V, std::enable_if_t<!std::is_arithmetic<V>::value, int> = 0>
DPR_HD DPR_FORCEINLINE lane_scalar_t<V> lane_of(const V& v, int l) {
    return v[l];
}

/// min and max with a fixed NaN rule: the result is b only if b is smaller (larger), so a NaN a is kept and a
/// NaN b is ignored; equal values give a. The SIMD versions are the x86 minps/maxps with swapped operands,
/// which are exactly this.
template <class T, enable_if_scalar_t<T> = 0>
DPR_HD DPR_FORCEINLINE T vmin(T a, T b) {
    return b < a ? b : a;
}
template <class T, enable_if_scalar_t<T> = 0>
DPR_HD DPR_FORCEINLINE T vmax(T a, T b) {
    return a < b ? b : a;
}
DPR_HD DPR_FORCEINLINE float vabs(float x) { return std::fabs(x); }
DPR_HD DPR_FORCEINLINE double vabs(double x) { return std::fabs(x); }
/// Fused multiply-add a b + c with one rounding (IEEE 754 fusedMultiplyAdd): the same bits on every backend --
/// the FMA instruction of x86-64-v3/v4 and of every GPU, or the C library's exact software fma elsewhere.
/// Only explicit calls fuse: the build forbids the compiler to contract a * b + c by itself (CMakeLists.txt).
template <class T, std::enable_if_t<std::is_same<T, float>::value || std::is_same<T, double>::value, int> = 0>
DPR_HD DPR_FORCEINLINE T vfma(T a, T b, T c) {
    constexpr bool single = std::is_same<T, float>::value;
#ifdef __CUDA_ARCH__
    if constexpr (single)
        return __fmaf_rn(a, b, c);
    else
        return __fma_rn(a, b, c);
#else
    if constexpr (single)
        return __builtin_fmaf(a, b, c);
    else
        return __builtin_fma(a, b, c);
#endif
}
/// IEEE square root (correctly rounded on every backend).
DPR_HD DPR_FORCEINLINE float vsqrt(float x) { return std::sqrt(x); }
DPR_HD DPR_FORCEINLINE double vsqrt(double x) { return std::sqrt(x); }
DPR_HD DPR_FORCEINLINE bool vfinite(double x) { return std::isfinite(x); }
DPR_HD DPR_FORCEINLINE bool vfinite(float x) { return std::isfinite(x); }

/// Value conversion (like static_cast), lane by lane.
template <class To, class From, enable_if_scalar_t<From> = 0>
DPR_HD DPR_FORCEINLINE To convert(From x) {
    return static_cast<To>(x);
}

/// Bit reinterpretation between same-size scalars.
template <class To, class From, enable_if_scalar_t<From> = 0>
DPR_HD DPR_FORCEINLINE To bit_cast(From x) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
    To r;
    std::memcpy(&r, &x, sizeof r);
    return r;
}

/// a * m as a 64-bit product split in halves: returns the low 32 bits, writes the high 32 bits (Philox).
DPR_HD DPR_FORCEINLINE std::uint32_t mulhilo32(std::uint32_t a, std::uint32_t m, std::uint32_t& hi) {
#if defined(__CUDA_ARCH__)
    hi = __umulhi(a, m);
    return a * m;
#else
    const std::uint64_t p = static_cast<std::uint64_t>(a) * m;
    hi = static_cast<std::uint32_t>(p >> 32);
    return static_cast<std::uint32_t>(p);
#endif
}

/// Lane value of lane count W holding one scalar in every lane.
template <class V, class T>
DPR_HD DPR_FORCEINLINE V splat(T x) {
    return V(static_cast<lane_scalar_t<V>>(x));
}

} // namespace dpr
