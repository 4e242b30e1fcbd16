#pragma once
// kind = "cube-coordinate": one random signed coordinate per round, the AS17 cube workload of
// docs/spec/checks.md §3.2 "single random coordinate +-1 per round" (the sqrt(N T) worst case of OLO over [-1,1]^d).
//
// Law: for every round t independently, i_t ~ Unif[d] and sigma_t ~ Unif{-1, +1}, and
//     l_t = sigma_t e_{i_t}      (exactly one nonzero entry; ||l_t||_1 = ||l_t||_inf = 1).
// Both come from the one stream (kSubLoss, round t, element 0): i_t = uniform_index(src, d) (unbiased),
// then sigma_t = -1 if the next open uniform is < 1/2, else +1. Geometry::Cube (the unit l1 ball).

#include "kernels/adversaries/common.hpp"

namespace dpr::adversaries {

struct CubeCoordinate : Keyless<Geometry::Cube> {
    static constexpr const char* kName = "cube-coordinate";

    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        rng::WordStream src(adversary_stream(ctx, kSubLoss, t, 0));
        const std::uint32_t i = noise::uniform_index(src, p.d);
        const double sign = noise::bernoulli(src, 0.5) ? -1.0 : 1.0;
        for (std::uint32_t k = 0; k < p.d; ++k) out[k] = k == i ? sign : 0.0;
    }
};

} // namespace dpr::adversaries
