#pragma once
// The learners' noise laws on lane values (kernels/core/lanes.hpp), in float or double, from the
// uniform streams of kernels/rng/lanes.hpp. Each transform is exact in law for the open uniforms it is
// given (docs/ARCHITECTURE.md §2: the grids of 24- and 53-bit uniforms bound the tails, docs/RANDOMNESS.md):
//
//   laplace_from_u(u, b)       inverse CDF of Laplace(0, b): b ln(2u) for u < 1/2, -b ln(2(1-u)) else
//   normal_from_u(u1, u2)      Box-Muller, cosine branch: sqrt(-2 ln u1) cos(2 pi u2)
//   laplace_sum(u, r, b)       the sum of r iid Laplace(b) draws in one shot (the AS17 padding of
//                              docs/ARCHITECTURE.md §5; valid because a padding draw is used at one prefix
//                              only):
//                                r <= 3: b ln(prod v_j / prod u_j), u, v the first 2r uniforms
//                                        (Laplace = E1 - E2; a sum of r unit exponentials is
//                                        -ln of a product of r uniforms)            2r uniforms, 1 log
//                                r >= 4: b sqrt(2G) Z with G ~ Gamma(r, 1) = -ln(prod of r uniforms)
//                                        and Z ~ N(0, 1) (the normal variance mixture: a Laplace(b) is
//                                        N(0, 2 b^2 E), E ~ Exp(1), so a sum of r is N(0, 2 b^2 G));
//                                        computed as 2 b sqrt(G E') cos(2 pi u), E' = -ln u'
//                                                                   r + 2 uniforms, ceil(r/c) + 1 logs
//                              The product is split in chunks of c = 5 (float) / 19 (double) factors so
//                              that it never leaves the normal range (u >= 2^-24, 2^-53).
//   gaussian_sum(u, r, s)      N(0, r s^2): one Box-Muller normal                         2 uniforms
// The numbers of uniforms are functions of r only, never of the values drawn (no rejection), so lanes
// stay in step and every lane's draw is the same function of its own stream. The samplers read their
// uniforms from an array (uniform j of the stream at u[j]), filled a whole Philox block at a time by the
// caller (rng::uniforms4): straight-line code, no refill branch between two uniforms.
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/core/vmath.hpp"
#include "kernels/rng/lanes.hpp"

namespace dpr::noise {

template <class V>
DPR_HD DPR_FORCEINLINE V laplace_from_u(V u, V b) {
    using T = lane_scalar_t<V>;
    const auto lower = u < V(T(0.5));
    const V l = vlog_pos(select(lower, u + u, (V(T(1)) - u) * V(T(2))));
    return select(lower, b * l, -(b * l));
}

template <class V>
DPR_HD DPR_FORCEINLINE V normal_from_u(V u1, V u2) {
    using T = lane_scalar_t<V>;
    return vsqrt(V(T(-2)) * vlog_pos(u1)) * vcos2pi(u2);
}

/// Uniforms a laplace_sum of r draws takes.
DPR_HD constexpr inline std::uint32_t laplace_sum_uniforms(std::uint32_t r) {
    return r == 0 ? 0u : (r <= 3 ? 2 * r : r + 2);
}
/// Largest number of uniform factors whose product stays normal in precision R.
template <class R>
DPR_HD constexpr inline std::uint32_t product_chunk() {
    return sizeof(R) == 4 ? 5u : 19u;
}

/// The sum of r Laplace(b) draws from the uniforms u[0 .. laplace_sum_uniforms(r)) (see the header).
template <class V>
DPR_HD DPR_FORCEINLINE V laplace_sum(const V* u, std::uint32_t r, V b) {
    using R = lane_scalar_t<V>;
    if (r == 0) return V(R(0));
    if (r <= 3) {
        V pu = u[0], pv = u[r];
        for (std::uint32_t j = 1; j < r; ++j) {
            pu = pu * u[j];
            pv = pv * u[r + j];
        }
        return b * vlog_pos(pv / pu);
    }
    constexpr std::uint32_t c = product_chunk<R>();
    V g = V(R(0));
    for (std::uint32_t j = 0; j < r;) {
        V p = u[j];
        const std::uint32_t end = j + c < r ? j + c : r;
        for (++j; j < end; ++j) p = p * u[j];
        g = g - vlog_pos(p);
    }
    const V e = -vlog_pos(u[r]);
    const V cs = vcos2pi(u[r + 1]);
    return V(R(2)) * b * vsqrt(g * e) * cs;
}

/// N(0, r s^2) from the uniforms u[0], u[1].
template <class V>
DPR_HD DPR_FORCEINLINE V gaussian_sum(const V* u, std::uint32_t r, V sigma) {
    using R = lane_scalar_t<V>;
    if (r == 0) return V(R(0));
    return sigma * vsqrt(V(static_cast<R>(r))) * normal_from_u(u[0], u[1]);
}

} // namespace dpr::noise
