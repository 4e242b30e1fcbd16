#pragma once
// DP bandit linear optimisation: AS17 Algorithm 4 (Laplace noise <Z_t, y_t> on the observed loss,
// Z_t ~ Lap^d(lambda), lambda = ||Y||_1/eps by Lemma 4.2 with B = ||Y||_1) + SCRiBLe with the step of
// Thm 4.5 (AS17 §4.2; docs/spec/as17.md §A3, §A5). The algorithm, its keys, privacy report and diagnostics are
// documented in kernels/learners/scrible.hpp (one template serves both; epsilon = inf equals scrible-<set>
// bitwise).
#include "kernels/learners/scrible.hpp"
#include "kernels/learners/scrible_lanes.hpp"

namespace dpr::learners {

// The aliases DpScribleBall, DpScribleCube and DpScribleSimplex (on lanes) are in kernels/learners/scrible_lanes.hpp.

} // namespace dpr::learners
