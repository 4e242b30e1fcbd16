#pragma once
// Every oblivious adversary, one line each (kernels/core/type_list.hpp). Adding one = its header, its
// line here, its tests; both backends and the config layer instantiate from this list.
#include "kernels/adversaries/bco_convex.hpp"
#include "kernels/adversaries/bco_linear.hpp"
#include "kernels/adversaries/bernoulli.hpp"
#include "kernels/adversaries/cube_coordinate.hpp"
#include "kernels/adversaries/cube_drift.hpp"
#include "kernels/adversaries/drifting.hpp"
#include "kernels/adversaries/file.hpp"
#include "kernels/adversaries/halving.hpp"
#include "kernels/adversaries/linear_model.hpp"
#include "kernels/adversaries/lower_bound.hpp"
#include "kernels/adversaries/realizable.hpp"
#include "kernels/adversaries/switching.hpp"
#include "kernels/adversaries/unit_vectors.hpp"
#include "kernels/core/type_list.hpp"

namespace dpr::adversaries {

// clang-format off
using AllAdversaries = TypeList<
    File,
    Bernoulli,
    Realizable,
    Halving,
    LowerBound,
    Switching,
    UnitVectors,
    Drifting,
    FileBall,
    SquaredRealizable,
    AbsoluteRealizable,
    CubeCoordinate,
    CubeDrift,
    FileCube,
    BcoLinear,
    BcoAbsolute,
    BcoDistance>;
// clang-format on

} // namespace dpr::adversaries
