#pragma once
// Decision sets and loss sets (ALGORITHMS.md §0.2). A learner declares the decision set it plays in;
// an adversary declares the loss set its losses come from; the host refuses a pairing whose sets do
// not match (naming both keys), and the engine computes the comparator in closed form (§0.3).
#include <cstdint>

namespace dpr {

enum class Geometry : std::uint8_t {
    Simplex, ///< experts / MAB: X = simplex (or its vertices), Y = [0,1]^d; comparator min_i L_T(i)
    Ball,    ///< OLO over the unit l2 ball: Y = unit l2 ball;             comparator -||L_T||_2
    Cube,    ///< OLO over [-1,1]^d: Y = unit l1 ball;                       comparator -||L_T||_1
};

inline constexpr const char* geometry_name(Geometry g) {
    return g == Geometry::Simplex ? "simplex (experts, losses in [0,1]^d)"
           : g == Geometry::Ball  ? "unit l2 ball (losses with ||l||_2 <= 1)"
                                  : "cube [-1,1]^d (losses with ||l||_1 <= 1)";
}

} // namespace dpr
