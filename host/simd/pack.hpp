#pragma once
// CPU SIMD lane values for the kernels' lane vocabulary (kernels/core/lanes.hpp): Pack<T, W> is W lanes of
// T, stored as native-width GCC vector-extension chunks (also understood by clang) and lowered by the
// compiler to whatever the translation unit's -march provides -- 512-bit registers under x86-64-v4, 256-bit
// under x86-64-v3, 128-bit for the x86-64 baseline. The width W is a number of LANES, the same for every
// element type (a Pack<double, 16> is two zmm, a Pack<float, 16> one), so float, double and integer lanes
// of one loop line up. Operations run chunk by chunk: GCC lowers conditionals on vectors wider than the
// hardware lane by lane, never on native ones.
//
// Why a thin wrapper over the compiler's vectors rather than a SIMD library: the kernels are written once
// over "lane values" and must compile unchanged for a GPU thread (plain scalars, nvcc); what they need is
// operators, select, conversions and bit casts with exactly IEEE semantics, which the vector extension gives
// for any ISA, and no library math (exp/log are the kernels' own, kernels/core/vmath.hpp, so that every ISA
// and the GPU compute the same bits). Two operations have no good portable lowering and are written with
// intrinsics per ISA: the 32x32->64-bit products of Philox (mulhilo32; the generic 64-bit vector multiply is
// 2x slower on AVX-512 and 8x on AVX2) and sqrt.
//
// Everything is exact or correctly rounded, so a Pack computes lane for lane the bits a scalar would
// (tests/simd/test_simd.cpp checks it for every ISA this machine supports).
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kernels/core/lanes.hpp"

namespace dpr::simd {

/// Bytes of the widest vector register of this translation unit's target.
#if defined(__AVX512F__)
inline constexpr int kNativeBytes = 64;
#elif defined(__AVX__)
inline constexpr int kNativeBytes = 32;
#else
inline constexpr int kNativeBytes = 16;
#endif

template <int Bytes>
struct int_of_bytes;
template <>
struct int_of_bytes<4> {
    using type = std::int32_t;
};
template <>
struct int_of_bytes<8> {
    using type = std::int64_t;
};

/// W lanes of T as N chunks of C lanes (C = lanes of T in a native register, at most W).
template <class T, int W>
struct ChunkLayout {
    static constexpr int C = (kNativeBytes / static_cast<int>(sizeof(T))) < W ? kNativeBytes / static_cast<int>(sizeof(T)) : W;
    static constexpr int N = W / C;
    typedef T chunk __attribute__((vector_size(sizeof(T) * C)));
};

namespace detail {
/// Lanes [first, first + n) of the W-lane array `src` (chunks of its own width) as chunks of width C of the
/// destination: copies through memory, which the compiler turns into register extracts and inserts.
template <class Dst, class Src>
DPR_FORCEINLINE Dst regroup(const Src& s) {
    static_assert(sizeof(Dst) == sizeof(Src), "regroup keeps the bytes");
    Dst d;
    std::memcpy(&d, &s, sizeof d);
    return d;
}
} // namespace detail

template <int Bytes, int W>
struct Mask;
template <class T, int W>
struct Pack;

/// Lanes of integers of `Bytes` bytes, all-ones (true) or zero (false): the result of comparing
/// Pack<T, W> for sizeof(T) == Bytes. Masks of same-size elements are one type (a double comparison selects
/// uint64 lanes).
template <int Bytes, int W>
struct Mask {
    using I = typename int_of_bytes<Bytes>::type;
    using L = ChunkLayout<I, W>;
    typename L::chunk c[L::N];

    template <class F>
    DPR_FORCEINLINE static Mask zip(const Mask& a, const Mask& b, F f) {
        Mask r;
        for (int k = 0; k < L::N; ++k) r.c[k] = f(a.c[k], b.c[k]);
        return r;
    }
    DPR_FORCEINLINE friend Mask operator&(const Mask& a, const Mask& b) {
        return zip(a, b, [](auto x, auto y) { return x & y; });
    }
    DPR_FORCEINLINE friend Mask operator|(const Mask& a, const Mask& b) {
        return zip(a, b, [](auto x, auto y) { return x | y; });
    }
    DPR_FORCEINLINE friend Mask operator^(const Mask& a, const Mask& b) {
        return zip(a, b, [](auto x, auto y) { return x ^ y; });
    }
    DPR_FORCEINLINE friend Mask operator!(const Mask& a) {
        Mask r;
        for (int k = 0; k < L::N; ++k) r.c[k] = ~a.c[k];
        return r;
    }
    DPR_FORCEINLINE bool operator[](int i) const {
        I a[W];
        std::memcpy(a, c, sizeof a);
        return a[i] != 0;
    }

    /// The same lanes as a mask for elements of type U (sign-extending or truncating the all-ones).
    template <class U>
    DPR_FORCEINLINE Mask<static_cast<int>(sizeof(U)), W> as() const;
};

template <class T, int W>
struct Pack {
    static_assert(W >= 1 && (W & (W - 1)) == 0, "a power-of-two number of lanes");
    using scalar = T;
    using mask = Mask<static_cast<int>(sizeof(T)), W>;
    template <class U>
    using rebind = Pack<U, W>;
    static constexpr int width = W;
    using L = ChunkLayout<T, W>;
    using chunk = typename L::chunk;
    static constexpr int N = L::N;

    chunk c[N];

    Pack() = default;
    /// Broadcast (implicit: a scalar operand means all lanes).
    DPR_FORCEINLINE Pack(T s) {
        for (int k = 0; k < N; ++k) c[k] = chunk{} + s;
    }

    DPR_FORCEINLINE static Pack load(const T* p) {
        Pack r;
        std::memcpy(r.c, p, sizeof r.c);
        return r;
    }
    DPR_FORCEINLINE void store(T* p) const { std::memcpy(p, c, sizeof c); }
    /// base, base + 1, ..., base + W - 1.
    DPR_FORCEINLINE static Pack iota(T base = T(0)) {
        T a[W];
        for (int i = 0; i < W; ++i) a[i] = base + static_cast<T>(i);
        return load(a);
    }
    DPR_FORCEINLINE T operator[](int i) const { return c[i / L::C][i % L::C]; }
    DPR_FORCEINLINE void set(int i, T x) { c[i / L::C][i % L::C] = x; }

    template <class F>
    DPR_FORCEINLINE static Pack map(const Pack& a, F f) {
        Pack r;
        for (int k = 0; k < N; ++k) r.c[k] = f(a.c[k]);
        return r;
    }
    template <class F>
    DPR_FORCEINLINE static Pack zip(const Pack& a, const Pack& b, F f) {
        Pack r;
        for (int k = 0; k < N; ++k) r.c[k] = f(a.c[k], b.c[k]);
        return r;
    }
    template <class F>
    DPR_FORCEINLINE static mask compare(const Pack& a, const Pack& b, F f) {
        mask r;
        static_assert(mask::L::N == N, "a mask has the chunks of its pack");
        for (int k = 0; k < N; ++k) r.c[k] = f(a.c[k], b.c[k]);
        return r;
    }

    DPR_FORCEINLINE friend Pack operator+(const Pack& a, const Pack& b) { return zip(a, b, [](chunk x, chunk y) { return x + y; }); }
    DPR_FORCEINLINE friend Pack operator-(const Pack& a, const Pack& b) { return zip(a, b, [](chunk x, chunk y) { return x - y; }); }
    DPR_FORCEINLINE friend Pack operator*(const Pack& a, const Pack& b) { return zip(a, b, [](chunk x, chunk y) { return x * y; }); }
    DPR_FORCEINLINE friend Pack operator/(const Pack& a, const Pack& b) { return zip(a, b, [](chunk x, chunk y) { return x / y; }); }
    DPR_FORCEINLINE friend Pack operator-(const Pack& a) { return map(a, [](chunk x) { return -x; }); }
    DPR_FORCEINLINE Pack& operator+=(const Pack& b) { return *this = *this + b; }
    DPR_FORCEINLINE Pack& operator-=(const Pack& b) { return *this = *this - b; }
    DPR_FORCEINLINE Pack& operator*=(const Pack& b) { return *this = *this * b; }
    DPR_FORCEINLINE Pack& operator/=(const Pack& b) { return *this = *this / b; }

    DPR_FORCEINLINE friend mask operator<(const Pack& a, const Pack& b) { return compare(a, b, [](chunk x, chunk y) { return x < y; }); }
    DPR_FORCEINLINE friend mask operator<=(const Pack& a, const Pack& b) { return compare(a, b, [](chunk x, chunk y) { return x <= y; }); }
    DPR_FORCEINLINE friend mask operator>(const Pack& a, const Pack& b) { return compare(a, b, [](chunk x, chunk y) { return x > y; }); }
    DPR_FORCEINLINE friend mask operator>=(const Pack& a, const Pack& b) { return compare(a, b, [](chunk x, chunk y) { return x >= y; }); }
    DPR_FORCEINLINE friend mask operator==(const Pack& a, const Pack& b) { return compare(a, b, [](chunk x, chunk y) { return x == y; }); }
    DPR_FORCEINLINE friend mask operator!=(const Pack& a, const Pack& b) { return compare(a, b, [](chunk x, chunk y) { return x != y; }); }

    // Integer lanes only.
    DPR_FORCEINLINE friend Pack operator&(const Pack& a, const Pack& b) { return zip(a, b, [](chunk x, chunk y) { return x & y; }); }
    DPR_FORCEINLINE friend Pack operator|(const Pack& a, const Pack& b) { return zip(a, b, [](chunk x, chunk y) { return x | y; }); }
    DPR_FORCEINLINE friend Pack operator^(const Pack& a, const Pack& b) { return zip(a, b, [](chunk x, chunk y) { return x ^ y; }); }
    DPR_FORCEINLINE friend Pack operator~(const Pack& a) { return map(a, [](chunk x) { return ~x; }); }
    DPR_FORCEINLINE friend Pack operator<<(const Pack& a, int s) { return map(a, [s](chunk x) { return x << s; }); }
    DPR_FORCEINLINE friend Pack operator>>(const Pack& a, int s) { return map(a, [s](chunk x) { return x >> s; }); }
    DPR_FORCEINLINE Pack& operator^=(const Pack& b) { return *this = *this ^ b; }
    DPR_FORCEINLINE Pack& operator&=(const Pack& b) { return *this = *this & b; }
    DPR_FORCEINLINE Pack& operator|=(const Pack& b) { return *this = *this | b; }
};

namespace detail {
/// Lanes [First, First + M) of a vector, as a vector of M lanes (a register extract, not a trip through memory).
template <class Out, int First, class In, std::size_t... I>
DPR_FORCEINLINE Out lanes_of(const In& v, std::index_sequence<I...>) {
    return __builtin_shufflevector(v, v, static_cast<int>(First + I)...);
}
/// The concatenation of two vectors of M lanes (a register insert).
template <class In, std::size_t... I>
DPR_FORCEINLINE auto concat(const In& a, const In& b, std::index_sequence<I...>) {
    return __builtin_shufflevector(a, b, static_cast<int>(I)...);
}

/// Lane-wise value conversion of W lanes between element types whose chunks have different widths: a source
/// chunk is split into, or two are joined from, register halves (shufflevector), never copied through memory
/// (two half stores read back as one vector cannot be store-forwarded).
template <class To, class From, int W>
DPR_FORCEINLINE Pack<To, W> convert_lanes(const Pack<From, W>& x) {
    using PT = Pack<To, W>;
    using PF = Pack<From, W>;
    constexpr int CT = PT::L::C, CF = PF::L::C;
    PT r;
    if constexpr (CT == CF) {
        for (int k = 0; k < PT::N; ++k) r.c[k] = __builtin_convertvector(x.c[k], typename PT::chunk);
    } else if constexpr (CF > CT) {
        // Each source chunk holds CF / CT destination chunks' worth of lanes.
        static_assert(CF == 2 * CT, "chunks differ by one doubling");
        typedef From half __attribute__((vector_size(sizeof(From) * CT)));
        for (int k = 0; k < PF::N; ++k) {
            const half lo = lanes_of<half, 0>(x.c[k], std::make_index_sequence<CT>{});
            const half hi = lanes_of<half, CT>(x.c[k], std::make_index_sequence<CT>{});
            r.c[2 * k] = __builtin_convertvector(lo, typename PT::chunk);
            r.c[2 * k + 1] = __builtin_convertvector(hi, typename PT::chunk);
        }
    } else {
        static_assert(CT == 2 * CF, "chunks differ by one doubling");
        typedef To half __attribute__((vector_size(sizeof(To) * CF)));
        for (int k = 0; k < PT::N; ++k) {
            const half lo = __builtin_convertvector(x.c[2 * k], half);
            const half hi = __builtin_convertvector(x.c[2 * k + 1], half);
            r.c[k] = concat(lo, hi, std::make_index_sequence<CT>{});
        }
    }
    return r;
}
} // namespace detail

template <int Bytes, int W>
template <class U>
DPR_FORCEINLINE Mask<static_cast<int>(sizeof(U)), W> Mask<Bytes, W>::as() const {
    using MU = Mask<static_cast<int>(sizeof(U)), W>;
    if constexpr (sizeof(U) == Bytes) {
        return MU{*this};
    } else {
        using PI = Pack<typename int_of_bytes<Bytes>::type, W>;
        using PU = Pack<typename int_of_bytes<static_cast<int>(sizeof(U))>::type, W>;
        PI p;
        std::memcpy(p.c, c, sizeof p.c);
        const PU q = detail::convert_lanes<typename PU::scalar>(p); // -1 stays -1, 0 stays 0
        MU r;
        std::memcpy(r.c, q.c, sizeof r.c);
        return r;
    }
}

// ---- the lane vocabulary (kernels/core/lanes.hpp), found by argument-dependent lookup ---------------------

/// A mask usable with lanes of U (generic code: identity for the bool of scalars, kernels/core/lanes.hpp).
template <class U, int Bytes, int W>
DPR_FORCEINLINE Mask<static_cast<int>(sizeof(U)), W> mask_for(const Mask<Bytes, W>& m) {
    return m.template as<U>();
}

template <int B, class T, int W>
DPR_FORCEINLINE Pack<T, W> select(const Mask<B, W>& m, const Pack<T, W>& a, const Pack<T, W>& b) {
    const auto mm = m.template as<T>();
    Pack<T, W> r;
    for (int k = 0; k < Pack<T, W>::N; ++k) r.c[k] = mm.c[k] ? a.c[k] : b.c[k];
    return r;
}
/// A per-instance condition (a plain bool when lanes hold coordinates) choosing between lane values.
template <class T, int W>
DPR_FORCEINLINE Pack<T, W> select(bool m, const Pack<T, W>& a, const Pack<T, W>& b) {
    return m ? a : b;
}
template <int B, int W>
DPR_FORCEINLINE bool any(const Mask<B, W>& m) {
    for (int i = 0; i < W; ++i)
        if (m[i]) return true;
    return false;
}
template <int B, int W>
DPR_FORCEINLINE bool all(const Mask<B, W>& m) {
    for (int i = 0; i < W; ++i)
        if (!m[i]) return false;
    return true;
}

namespace detail {
template <class R, class C>
DPR_FORCEINLINE R as_reg(const C& c);
template <class C, class R>
DPR_FORCEINLINE C from_reg(const R& r);

/// x86 min/max of one native chunk: (v)minps/(v)maxps(y, x) is x < y ? x : y / x > y ? x : y with the second
/// operand returned on NaN and on equality -- with the operands swapped, exactly lanes.hpp's vmin/vmax.
template <bool Max, class C>
DPR_FORCEINLINE C minmax_chunk(const C& a, const C& b) {
    constexpr int bytes = static_cast<int>(sizeof(C));
    using T = std::remove_reference_t<decltype(a[0])>;
#if defined(__AVX512F__)
    if constexpr (bytes == 64) {
        if constexpr (sizeof(T) == 4)
            return from_reg<C>(Max ? _mm512_max_ps(as_reg<__m512>(b), as_reg<__m512>(a))
                                   : _mm512_min_ps(as_reg<__m512>(b), as_reg<__m512>(a)));
        else
            return from_reg<C>(Max ? _mm512_max_pd(as_reg<__m512d>(b), as_reg<__m512d>(a))
                                   : _mm512_min_pd(as_reg<__m512d>(b), as_reg<__m512d>(a)));
    }
#endif
#if defined(__AVX__)
    if constexpr (bytes == 32) {
        if constexpr (sizeof(T) == 4)
            return from_reg<C>(Max ? _mm256_max_ps(as_reg<__m256>(b), as_reg<__m256>(a))
                                   : _mm256_min_ps(as_reg<__m256>(b), as_reg<__m256>(a)));
        else
            return from_reg<C>(Max ? _mm256_max_pd(as_reg<__m256d>(b), as_reg<__m256d>(a))
                                   : _mm256_min_pd(as_reg<__m256d>(b), as_reg<__m256d>(a)));
    }
#endif
#if defined(__SSE2__)
    if constexpr (bytes == 16) {
        if constexpr (sizeof(T) == 4)
            return from_reg<C>(Max ? _mm_max_ps(as_reg<__m128>(b), as_reg<__m128>(a))
                                   : _mm_min_ps(as_reg<__m128>(b), as_reg<__m128>(a)));
        else
            return from_reg<C>(Max ? _mm_max_pd(as_reg<__m128d>(b), as_reg<__m128d>(a))
                                   : _mm_min_pd(as_reg<__m128d>(b), as_reg<__m128d>(a)));
    }
#endif
    return Max ? (a < b ? b : a) : (b < a ? b : a);
}
} // namespace detail

template <class T, int W>
DPR_FORCEINLINE Pack<T, W> vmin(const Pack<T, W>& a, const Pack<T, W>& b) {
    if constexpr (std::is_floating_point<T>::value) {
        Pack<T, W> r;
        for (int k = 0; k < Pack<T, W>::N; ++k) r.c[k] = detail::minmax_chunk<false>(a.c[k], b.c[k]);
        return r;
    } else {
        return select(b < a, b, a);
    }
}
template <class T, int W>
DPR_FORCEINLINE Pack<T, W> vmax(const Pack<T, W>& a, const Pack<T, W>& b) {
    if constexpr (std::is_floating_point<T>::value) {
        Pack<T, W> r;
        for (int k = 0; k < Pack<T, W>::N; ++k) r.c[k] = detail::minmax_chunk<true>(a.c[k], b.c[k]);
        return r;
    } else {
        return select(a < b, b, a);
    }
}

template <class To, class From, int W>
DPR_FORCEINLINE Pack<To, W> convert(const Pack<From, W>& x) {
    if constexpr (std::is_same<To, From>::value)
        return x;
    else
        return detail::convert_lanes<To>(x);
}

template <class To, class From, int W>
DPR_FORCEINLINE Pack<To, W> bit_cast(const Pack<From, W>& x) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast between lanes of different sizes");
    Pack<To, W> r;
    std::memcpy(r.c, x.c, sizeof r.c);
    return r;
}

template <class T, int W>
DPR_FORCEINLINE Pack<T, W> vabs(const Pack<T, W>& x) {
    static_assert(std::is_floating_point<T>::value, "vabs of float or double lanes");
    using I = typename int_of_bytes<static_cast<int>(sizeof(T))>::type;
    const I mag = std::numeric_limits<I>::max(); // all bits but the sign
    return bit_cast<T>(bit_cast<I>(x) & Pack<I, W>(mag));
}

template <class T, int W>
DPR_FORCEINLINE typename Pack<T, W>::mask vfinite(const Pack<T, W>& x) {
    return vabs(x) <= Pack<T, W>(std::numeric_limits<T>::max()); // false for inf and NaN
}

namespace detail {
/// Reinterprets a chunk as the native register type R of the same size (or returns false).
template <class R, class C>
DPR_FORCEINLINE R as_reg(const C& c) {
    static_assert(sizeof(R) == sizeof(C), "a native register");
    R r;
    std::memcpy(&r, &c, sizeof r);
    return r;
}
template <class C, class R>
DPR_FORCEINLINE C from_reg(const R& r) {
    C c;
    std::memcpy(&c, &r, sizeof c);
    return c;
}
} // namespace detail

template <class T, int W>
DPR_FORCEINLINE Pack<T, W> vsqrt(const Pack<T, W>& x) {
    static_assert(std::is_floating_point<T>::value, "vsqrt of float or double lanes");
    using P = Pack<T, W>;
    using C = typename P::chunk;
    constexpr int bytes = static_cast<int>(sizeof(C));
    P r;
    for (int k = 0; k < P::N; ++k) {
#if defined(__AVX512F__)
        if constexpr (bytes == 64) {
            if constexpr (sizeof(T) == 4)
                r.c[k] = detail::from_reg<C>(_mm512_sqrt_ps(detail::as_reg<__m512>(x.c[k])));
            else
                r.c[k] = detail::from_reg<C>(_mm512_sqrt_pd(detail::as_reg<__m512d>(x.c[k])));
            continue;
        }
#endif
#if defined(__AVX__)
        if constexpr (bytes == 32) {
            if constexpr (sizeof(T) == 4)
                r.c[k] = detail::from_reg<C>(_mm256_sqrt_ps(detail::as_reg<__m256>(x.c[k])));
            else
                r.c[k] = detail::from_reg<C>(_mm256_sqrt_pd(detail::as_reg<__m256d>(x.c[k])));
            continue;
        }
#endif
#if defined(__SSE2__)
        if constexpr (bytes == 16) {
            if constexpr (sizeof(T) == 4)
                r.c[k] = detail::from_reg<C>(_mm_sqrt_ps(detail::as_reg<__m128>(x.c[k])));
            else
                r.c[k] = detail::from_reg<C>(_mm_sqrt_pd(detail::as_reg<__m128d>(x.c[k])));
            continue;
        }
#endif
        for (int i = 0; i < P::L::C; ++i) r.c[k][i] = sizeof(T) == 4 ? __builtin_sqrtf(x.c[k][i]) : __builtin_sqrt(x.c[k][i]);
    }
    return r;
}

/// a b + c with one rounding, lane by lane (lanes.hpp's vfma): the FMA instructions where the ISA has them
/// (x86-64-v3 and v4), else the C library's fma per lane (exact, slow: the generic ISA is a fallback).
template <class T, int W>
DPR_FORCEINLINE Pack<T, W> vfma(const Pack<T, W>& a, const Pack<T, W>& b, const Pack<T, W>& c) {
    static_assert(std::is_floating_point<T>::value, "vfma of float or double lanes");
    using P = Pack<T, W>;
    using C = typename P::chunk;
    [[maybe_unused]] constexpr int bytes = static_cast<int>(sizeof(C));
    P r;
    for (int k = 0; k < P::N; ++k) {
#if defined(__AVX512F__)
        if constexpr (bytes == 64) {
            if constexpr (sizeof(T) == 4)
                r.c[k] = detail::from_reg<C>(_mm512_fmadd_ps(detail::as_reg<__m512>(a.c[k]), detail::as_reg<__m512>(b.c[k]),
                                                             detail::as_reg<__m512>(c.c[k])));
            else
                r.c[k] = detail::from_reg<C>(_mm512_fmadd_pd(detail::as_reg<__m512d>(a.c[k]),
                                                             detail::as_reg<__m512d>(b.c[k]), detail::as_reg<__m512d>(c.c[k])));
            continue;
        }
#endif
#if defined(__FMA__)
        if constexpr (bytes == 32) {
            if constexpr (sizeof(T) == 4)
                r.c[k] = detail::from_reg<C>(_mm256_fmadd_ps(detail::as_reg<__m256>(a.c[k]), detail::as_reg<__m256>(b.c[k]),
                                                             detail::as_reg<__m256>(c.c[k])));
            else
                r.c[k] = detail::from_reg<C>(_mm256_fmadd_pd(detail::as_reg<__m256d>(a.c[k]),
                                                             detail::as_reg<__m256d>(b.c[k]), detail::as_reg<__m256d>(c.c[k])));
            continue;
        }
        if constexpr (bytes == 16) {
            if constexpr (sizeof(T) == 4)
                r.c[k] = detail::from_reg<C>(_mm_fmadd_ps(detail::as_reg<__m128>(a.c[k]), detail::as_reg<__m128>(b.c[k]),
                                                          detail::as_reg<__m128>(c.c[k])));
            else
                r.c[k] = detail::from_reg<C>(_mm_fmadd_pd(detail::as_reg<__m128d>(a.c[k]), detail::as_reg<__m128d>(b.c[k]),
                                                          detail::as_reg<__m128d>(c.c[k])));
            continue;
        }
#endif
        for (int i = 0; i < P::L::C; ++i)
            r.c[k][i] = sizeof(T) == 4 ? __builtin_fmaf(a.c[k][i], b.c[k][i], c.c[k][i])
                                       : __builtin_fma(a.c[k][i], b.c[k][i], c.c[k][i]);
    }
    return r;
}

/// Philox's 32 x 32 -> 64-bit products, lane by lane: returns the low words, writes the high words.
template <int W>
DPR_FORCEINLINE Pack<std::uint32_t, W> mulhilo32(const Pack<std::uint32_t, W>& a, std::uint32_t m,
                                                 Pack<std::uint32_t, W>& hi) {
    using P = Pack<std::uint32_t, W>;
    using C = typename P::chunk;
    constexpr int bytes = static_cast<int>(sizeof(C));
    P lo;
    for (int k = 0; k < P::N; ++k) {
#if defined(__AVX512F__)
        if constexpr (bytes == 64) {
            // Even lanes: vpmuludq gives the full products in place; odd lanes: shift them down first. Then
            // pick the high (low) halves of both into the 32-bit lanes with masked shuffles.
            const __m512i x = detail::as_reg<__m512i>(a.c[k]);
            const __m512i mm = _mm512_set1_epi64(m);
            const __m512i pe = _mm512_mul_epu32(x, mm);
            const __m512i po = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), mm);
            hi.c[k] = detail::from_reg<C>(_mm512_mask_shuffle_epi32(po, 0x5555, pe, _MM_PERM_CDAB));
            lo.c[k] = detail::from_reg<C>(_mm512_mask_shuffle_epi32(pe, 0xAAAA, po, _MM_PERM_CDAB));
            continue;
        }
#endif
#if defined(__AVX2__)
        if constexpr (bytes == 32) {
            const __m256i x = detail::as_reg<__m256i>(a.c[k]);
            const __m256i mm = _mm256_set1_epi64x(m);
            const __m256i pe = _mm256_mul_epu32(x, mm);
            const __m256i po = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), mm);
            // hi: the high halves of pe moved down | the high halves of po in place; lo: the converse.
            hi.c[k] = detail::from_reg<C>(_mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA));
            lo.c[k] = detail::from_reg<C>(_mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA));
            continue;
        }
#endif
#if defined(__SSE2__)
        if constexpr (bytes == 16) {
            const __m128i x = detail::as_reg<__m128i>(a.c[k]);
            const __m128i mm = _mm_set1_epi64x(m);
            const __m128i low32 = _mm_set1_epi64x(0xFFFFFFFFll);
            const __m128i pe = _mm_mul_epu32(x, mm);
            const __m128i po = _mm_mul_epu32(_mm_srli_epi64(x, 32), mm);
            hi.c[k] = detail::from_reg<C>(_mm_or_si128(_mm_srli_epi64(pe, 32), _mm_andnot_si128(low32, po)));
            lo.c[k] = detail::from_reg<C>(_mm_or_si128(_mm_and_si128(pe, low32), _mm_slli_epi64(po, 32)));
            continue;
        }
#endif
        for (int i = 0; i < P::L::C; ++i) {
            const std::uint64_t p = static_cast<std::uint64_t>(a.c[k][i]) * m;
            hi.c[k][i] = static_cast<std::uint32_t>(p >> 32);
            lo.c[k][i] = static_cast<std::uint32_t>(p);
        }
    }
    return lo;
}

// ---- horizontal reductions in a fixed order -----------------------------------------------------------------

/// Sum of the lanes by halving: lanes [0, W/2) + [W/2, W), then again, down to one lane. The order is part
/// of the reproducibility contract (docs/RANDOMNESS.md): the same on every ISA.
template <class T, int W>
DPR_FORCEINLINE T reduce_sum(const Pack<T, W>& x) {
    T a[W];
    std::memcpy(a, x.c, sizeof a);
    for (int h = W / 2; h >= 1; h /= 2)
        for (int i = 0; i < h; ++i) a[i] = a[i] + a[i + h];
    return a[0];
}
template <class T, int W>
DPR_FORCEINLINE T reduce_max(const Pack<T, W>& x) {
    T a[W];
    std::memcpy(a, x.c, sizeof a);
    for (int h = W / 2; h >= 1; h /= 2)
        for (int i = 0; i < h; ++i) a[i] = a[i] < a[i + h] ? a[i + h] : a[i];
    return a[0];
}

} // namespace dpr::simd
