#pragma once
// kind = "drifting": noisy losses around a fixed direction, the AS17 sphere workload of docs/spec/checks.md
// §3.2 "drifting l_t = theta + xi_t normalised" (OLO over the unit l2 ball).
//
// Law: theta = Z / ||Z||_2, Z ~ N(0, I_d) drawn once per sequence (Z(i) from the stream
// (kSubDirection, round 0, element i)), so theta is uniform on the unit sphere; for every round t
//     l_t = (theta + s xi_t) / ||theta + s xi_t||_2,    xi_t ~ N(0, I_d) independently,
// s = noise_scale, xi_t(i) from (kSubLoss, round t, element i). Geometry::Ball; ||l_t||_2 = 1. By the
// symmetry of xi_t about the line through theta, E[l_t] = c theta with c in (0, 1] (c = 1 for s = 0):
// the sum L_T grows along theta, so the comparator -||L_T||_2 is ~ -c T.

#include "kernels/adversaries/common.hpp"

namespace dpr::adversaries {

struct Drifting : Adversary<Geometry::Ball> {
    static constexpr const char* kName = "drifting";
    static constexpr KeySpec kKeys[] = {
        {"noise_scale", KeyType::Real, "1.0", 0.0, 1e6, nullptr,
         "s: l_t = normalise(theta + s xi_t), xi_t standard normal in R^d, theta a fixed random unit vector"},
    };
    static constexpr int kNoiseScale = key_index(kKeys, "noise_scale");

    struct Params : Dims {
        double noise_scale;
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{dims(pb), kv.get(kNoiseScale, 1.0)};
    }
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }

    /// The fixed direction theta of the sequence `ctx` into out[0..d).
    DPR_HD static void direction(const Params& p, const SequenceCtx& ctx, double* out) {
        normalise(out, p.d, gaussian_vector(ctx, kSubDirection, 0, p.d, out));
    }

    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        direction(p, ctx, out);
        double sq = 0.0;
        for (std::uint32_t i = 0; i < p.d; ++i) {
            rng::WordStream src(adversary_stream(ctx, kSubLoss, t, i));
            out[i] += noise::gaussian(src, p.noise_scale);
            sq += out[i] * out[i];
        }
        normalise(out, p.d, sq);
    }
};

} // namespace dpr::adversaries
