#pragma once
// Closed-form comparators for linear losses (docs/spec/model.md §0.3): the loss of the best fixed decision
// in hindsight given the cumulative loss vector L = sum_{s<=t} l_s; 0 for the realizable linear-model
// families (kernels/core/sets.hpp LossFamily).
#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/sets.hpp"

namespace dpr::sim {

DPR_HD inline double comparator(Geometry g, const double* L, std::uint32_t d) {
    if (g == Geometry::Simplex) { // min_i L(i)
        double m = L[0];
        for (std::uint32_t i = 1; i < d; ++i) m = L[i] < m ? L[i] : m;
        return m;
    }
    double acc = 0.0;
    if (g == Geometry::Ball) { // min_{||x||_2 <= 1} <L, x> = -||L||_2
        for (std::uint32_t i = 0; i < d; ++i) acc += L[i] * L[i];
        return -std::sqrt(acc);
    }
    for (std::uint32_t i = 0; i < d; ++i) acc += std::fabs(L[i]); // cube [-1,1]^d: -||L||_1
    return -acc;
}

/// The comparator of a sequence of the family f whose rows (width loss_row_width(f, d)) sum to L: the linear
/// comparator above for Linear; 0 for the linear-model families, whose adversaries draw b_t = <a_t, x*> for
/// a fixed x* in X (the family contract in kernels/core/sets.hpp), so every prefix has total loss 0 at x*.
/// Geometry::Polytope (or the Affine and Distance families) has no closed form here: its adversary's comparator() computes it from
/// the decision set (host/backend/adversary_runtime.hpp); this returns NaN, which the host refuses to summarise.
DPR_HD inline double comparator(Geometry g, LossFamily f, const double* L, std::uint32_t d) {
    if (g == Geometry::Polytope || f == LossFamily::Affine || f == LossFamily::Distance) return NAN;
    return f == LossFamily::Linear ? comparator(g, L, d) : 0.0;
}

} // namespace dpr::sim
