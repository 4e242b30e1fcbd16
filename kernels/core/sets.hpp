#pragma once
// Decision sets and loss sets (AS17 §2; docs/spec/model.md §0.2). A learner declares the decision set it plays in;
// an adversary declares the loss set its losses come from; the host refuses a pairing whose sets do
// not match (naming both keys), and the engine computes the comparator in closed form (§0.3).
#include <cstdint>
#include <type_traits>

#include "kernels/core/detect.hpp"

namespace dpr {

enum class Geometry : std::uint8_t {
    Simplex, ///< experts / MAB: X = simplex (or its vertices), Y = [0,1]^d; comparator min_i L_T(i)
    Ball,    ///< OLO over the unit l2 ball: Y = unit l2 ball;             comparator -||L_T||_2
    Cube,    ///< OLO over [-1,1]^d: Y = unit l1 ball;                       comparator -||L_T||_1
    Polytope, ///< bandit convex optimisation (ENV21) over a set given by an LO oracle, named by the adversary's
              ///< `set` keys (kernels/domains/); the adversary computes the comparator (its comparator())
};

inline constexpr const char* geometry_name(Geometry g) {
    return g == Geometry::Simplex ? "simplex (experts, losses in [0,1]^d)"
           : g == Geometry::Ball  ? "unit l2 ball (losses with ||l||_2 <= 1)"
           : g == Geometry::Cube  ? "cube [-1,1]^d (losses with ||l||_1 <= 1)"
                                  : "decision set of the adversary's `set` key (LO oracle; 1-Lipschitz losses with a zero in it)";
}

/// The form of the losses an adversary draws (its row layout) and a learner can be charged on. Linear losses are
/// the engine's default: row = l_t (d numbers), charge <l_t, x_t>, comparator of §0.3 from L_T. The other
/// families are the convex "linear-model" losses of AFKT23 Alg. 3 (docs/spec/afkt23.md §C6) and ENV21
/// §3.3, given by a row of d + 1 numbers: a_t (d coordinates, ||a_t||_2 <= 1) and b_t (|b_t| <= 1):
///   Squared   l_t(x) = (<a_t, x> - b_t)^2 / 2     convex, 2-Lipschitz and 1-smooth on the unit ball
///   Absolute  l_t(x) = |<a_t, x> - b_t|           convex, 1-Lipschitz, not smooth
/// Adversaries of these families are realizable by contract: they draw b_t = <a_t, x*> for one fixed x* in X,
/// so min_{x in X} sum_{s<=t} l_s(x) = 0 at every t and the comparator is 0 (kernels/sim/comparator.hpp).
///   Affine    l_t(x) = <a_t, x> - b_t                  the ENV21 workloads' linear losses shifted to vanish at a point of
///                                                      D (b_t = <a_t, x_0>, x_0 in D); not realizable: the
///                                                      comparator is min_{x in D} <A_t, x> - B_t, one LO call
///                                                      (the adversary's comparator(), Geometry::Polytope)
///   Distance  l_t(x) = ||x - c_t||_2                   the ENV21 workloads' distance losses, c_t in D: convex,
///                                                      1-Lipschitz, zero at c_t; row = c_t at 0..d-1, then 0 (the
///                                                      width of the other families); not realizable when c_t
///                                                      moves: the adversary's comparator() solves the weighted
///                                                      Fermat-Weber problem of its centres (Geometry::Polytope)
/// An adversary declares `static constexpr LossFamily kLoss` (default Linear); a learner declares the families
/// it accepts as a bit mask `static constexpr unsigned kLossFamilies` (default: Linear only); the host refuses a
/// pairing whose family the learner does not accept, naming both.
enum class LossFamily : std::uint8_t {
    Linear = 0,
    Squared = 1,
    Absolute = 2,
    Affine = 3,
    Distance = 4,
};

inline constexpr unsigned loss_bit(LossFamily f) { return 1u << static_cast<unsigned>(f); }

inline constexpr const char* loss_family_name(LossFamily f) {
    return f == LossFamily::Linear    ? "linear losses <l_t, x>"
           : f == LossFamily::Squared ? "squared losses (<a_t, x> - b_t)^2 / 2"
           : f == LossFamily::Absolute ? "absolute losses |<a_t, x> - b_t|"
           : f == LossFamily::Affine   ? "affine losses <a_t, x> - b_t"
                                       : "distance losses ||x - c_t||_2";
}

/// Numbers per loss row of the family: d for linear losses, d + 1 (a_t, then b_t; c_t, then 0) for the others. An
/// adversary may append numbers that only its comparator reads (A::row_extra, host/engine/registry.cpp).
inline constexpr std::uint64_t loss_row_width(LossFamily f, std::uint32_t d) {
    return static_cast<std::uint64_t>(d) + (f == LossFamily::Linear ? 0u : 1u);
}

/// A::kLoss, or Linear when the adversary does not declare it.
template <class A>
using LossFamilyOp = std::integral_constant<LossFamily, A::kLoss>;
template <class A>
using LossFamilyOf = detected_or_t<std::integral_constant<LossFamily, LossFamily::Linear>, LossFamilyOp, A>;

/// L::kLossFamilies, or Linear only when the learner does not declare it.
template <class L>
using LossFamiliesOp = std::integral_constant<unsigned, L::kLossFamilies>;
template <class L>
using LossFamiliesOf =
    detected_or_t<std::integral_constant<unsigned, loss_bit(LossFamily::Linear)>, LossFamiliesOp, L>;

} // namespace dpr
