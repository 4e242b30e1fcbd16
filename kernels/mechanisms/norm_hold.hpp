#pragma once
// Holding a step vector to its norm bound as run, before it is rounded onto a lattice (docs/spec/model.md §1.8
// "Batch estimates", §1.11 "Computed step vectors"). The lattice theorems (§1.8, §1.11) need the replace-one
// distance between two neighbours' step vectors bounded as exact reals. A learner whose step vector is computed
// (a clipped gradient, a one-point estimate) bounds it only up to its arithmetic's rounding, O(n u) relative. These
// factors c in (0, 1] make the doubles fl(v_i c) meet the bound exactly, whatever order the team summed in: c is 1
// unless the computed norm comes within the rounding's margin of the bound, and then c = 1 - O(n u).
//
// Both take what the team computed in the run's precision (unit roundoff u: 2^-24 float, 2^-53 double; n u <= 1/4)
// and return doubles (UD: a double, or a pack of doubles, one per instance). The product fl(v_i c) is in double.
// Preconditions of the proofs: finite v_i, and a bound in [2^-900, 2^500] (so that bound^2 is finite and the
// products and quotients are normal doubles, each rounded to within 2^-53 relative); the learners' bounds (L <= 2,
// (n / zeta) C with zeta >= 1e-9) are far inside.
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"

namespace dpr::mech {

/// The factor c that keeps a vector within the l1 bound `half`: `ahat` is sum_i |v_i| over the n coordinates as
/// the team summed it. For any summation order the exact sum a <= ahat / (1 - gamma_{n-1}) <= ahat (1 + 2 n u)
/// (Higham 2002, §4.2), so with k = 1 + 2 n u + 2^-48 and m = fl(ahat k): if m <= half then a <= half; otherwise
/// c = fl(half / m) and the doubles fl(v_i c) have sum_i |fl(v_i c)| <= (1 + 2^-53)^2 half a / (ahat k (1 - 2^-53))
/// <= half. A NaN ahat gives 0 (the caller keeps NaN out of v).
template <class UD>
DPR_HD DPR_FORCEINLINE UD l1_clip_factor(UD ahat, double half, std::uint32_t n, double u) {
    const double k = 1.0 + 2.0 * static_cast<double>(n) * u + 0x1.0p-48;
    const UD m = ahat * UD(k);
    return select(m <= UD(half), UD(1.0), select(m == m, UD(half) / m, UD(0.0)));
}

/// The factor c that keeps a vector within the l2 bound `bound`: `shat` is sum_i v_i^2 over the n coordinates as
/// the team computed it (each square rounded, then summed in any order). Each square is fl(v^2) = v^2 (1 + e) + f
/// with |e| <= u and |f| <= 2^-149 (float's underflow; double's is smaller), so the exact
///     s = sum v_i^2 <= (shat / (1 - gamma_{n-1}) + n 2^-149) / (1 - u) <= shat (1 + 2 n u) + n 2^-148
/// (1 / ((1 - u)(1 - gamma_{n-1})) <= 1 / (1 - gamma_n) <= 1 + 2 n u for n u <= 1/4). With k = 1 + 2 n u + 2^-44
/// and m = fl(fl(shat k) + n 2^-140) >= (1 + 2^-45) s (1 - 2^-53)^2:
///   * if m <= fl(bound^2), then s <= bound^2 (1 + 2^-53) / ((1 + 2^-45)(1 - 2^-53)^2) <= bound^2: c = 1;
///   * otherwise c = fl(bound / fl(sqrt m)) and sum_i fl(v_i c)^2 <= c^2 (1 + 2^-53)^2 s
///     <= bound^2 (1 + 2^-53)^4 / ((1 - 2^-53)^4 (1 + 2^-45)) <= bound^2.
/// Either way the doubles fl(v_i c) have l2 norm at most `bound` as exact reals. A NaN shat gives 0.
template <class UD>
DPR_HD DPR_FORCEINLINE UD l2_clip_factor(UD shat, double bound, std::uint32_t n, double u) {
    const double k = 1.0 + 2.0 * static_cast<double>(n) * u + 0x1.0p-44;
    const UD m = shat * UD(k) + UD(static_cast<double>(n) * 0x1.0p-140);
    return select(m <= UD(bound * bound), UD(1.0), select(m == m, UD(bound) / vsqrt(m), UD(0.0)));
}

} // namespace dpr::mech
