#pragma once
// kind = "unit-vectors": i.i.d. uniformly random unit vectors, the AS17 sphere workload of docs/spec/checks.md
// §3.2 "random unit vectors" (OLO over the unit l2 ball).
//
// Law: l_t = Z_t / ||Z_t||_2 with Z_t ~ N(0, I_d), so l_t is uniform on the unit sphere S^{d-1},
// independently over t. Z_t(i) is one Box-Muller normal from the stream (kSubLoss, round t,
// element i). Geometry::Ball; ||l_t||_2 = 1 (to rounding).

#include "kernels/adversaries/common.hpp"

namespace dpr::adversaries {

struct UnitVectors : Keyless<Geometry::Ball> {
    static constexpr const char* kName = "unit-vectors";

    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        normalise(out, p.d, gaussian_vector(ctx, kSubLoss, t, p.d, out));
    }
};

} // namespace dpr::adversaries
