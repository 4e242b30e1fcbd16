#pragma once
// kind = "squared-realizable" / "absolute-realizable": realizable convex losses on the unit l2 ball, the OCO
// loss families of AFKT23 Alg. 3 (Thm 4; docs/spec/afkt23.md §C6) and of the ENV21 workloads
// (docs/spec/checks.md §3.3: "|<a_t, x> - b_t| with b_t = <a_t, c>"):
//   squared-realizable    l_t(x) = (<a_t, x> - b_t)^2 / 2     (LossFamily::Squared: L = 2, beta = 1 on the ball)
//   absolute-realizable   l_t(x) = |<a_t, x> - b_t|           (LossFamily::Absolute: L = 1, not smooth)
// with b_t = <a_t, x*>, so both equal a function of <a_t, x - x*> and vanish at x*: L* = 0 (the realizable
// regime of Theorem 4) and the comparator is 0 at every checkpoint (kernels/core/sets.hpp LossFamily).
//
// Law: x* = r theta, theta = Z / ||Z||_2, Z ~ N(0, I_d) drawn once per sequence (Z(i) from the stream
// (kSubDirection, round 0, element i)), r = x_star_norm; a_t = s xi_t / ||xi_t||_2, xi_t ~ N(0, I_d)
// independently per round (xi_t(i) from (kSubLoss, round t, element i)), s = a_norm. So a_t is uniform on the
// sphere of radius s, ||a_t||_2 = s <= 1 and |b_t| <= s r <= 1, as the family contract requires.
// Row of round t: out[0..d) = a_t, out[d] = b_t (loss_row_width = d + 1). One draw per coordinate per round,
// as drifting; the direction theta is re-derived at every call (O(d)), never stored.

#include "kernels/adversaries/common.hpp"

namespace dpr::adversaries {

template <LossFamily F>
struct LinearModel : Adversary<Geometry::Ball> {
    static_assert(F == LossFamily::Squared || F == LossFamily::Absolute, "linear-model losses");
    static constexpr const char* kName = F == LossFamily::Squared ? "squared-realizable" : "absolute-realizable";
    static constexpr LossFamily kLoss = F;
    static constexpr KeySpec kKeys[] = {
        {"x_star_norm", KeyType::Real, "0.5", 0.0, 1.0, nullptr,
         "r = ||x*||_2 of the zero-loss point x* = r theta (theta a random unit vector fixed per sequence)"},
        {"a_norm", KeyType::Real, "1.0", 0.0, 1.0, nullptr,
         "s = ||a_t||_2: a_t uniform on the sphere of radius s, drawn afresh every round; b_t = <a_t, x*>"},
    };
    static constexpr int kXStarNorm = key_index(kKeys, "x_star_norm");
    static constexpr int kANorm = key_index(kKeys, "a_norm");

    struct Params : Dims {
        double x_star_norm;
        double a_norm;
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{dims(pb), kv.get(kXStarNorm, 0.5), kv.get(kANorm, 1.0)};
    }
    /// Rows hold d + 1 numbers, and the engine's row width is 32-bit.
    static constexpr std::uint32_t kMaxD = 0xFFFFFFFEu;

    static bool check(const KeyValues&, const Problem& pb, Diagnostic& diag) {
        if (pb.d > kMaxD)
            return diag.fail("d", "must be at most %u for %s: a row holds a_t and b_t, d + 1 numbers (got %u)", kMaxD,
                             kName, pb.d);
        return true;
    }

    /// x* of the sequence `ctx` into out[0..d).
    DPR_HD static void x_star(const Params& p, const SequenceCtx& ctx, double* out) {
        normalise(out, p.d, gaussian_vector(ctx, kSubDirection, 0, p.d, out));
        for (std::uint32_t i = 0; i < p.d; ++i) out[i] *= p.x_star_norm;
    }

    /// out[0..d) = a_t, out[d] = b_t = <a_t, x*>.
    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        normalise(out, p.d, gaussian_vector(ctx, kSubLoss, t, p.d, out));
        // <a_t, x*> coordinate by coordinate, x*(i) regenerated from its stream (no O(d) scratch needed).
        double zsq = 0.0, dot = 0.0;
        for (std::uint32_t i = 0; i < p.d; ++i) {
            rng::WordStream src(adversary_stream(ctx, kSubDirection, 0, i));
            const double z = noise::gaussian(src, 1.0);
            zsq += z * z;
            out[i] *= p.a_norm;
            dot += out[i] * z;
        }
        // x* = r Z/||Z|| (normalise()'s e_0 fallback for Z = 0, unreachable with open-interval draws, kept).
        out[p.d] = zsq > 0.0 ? p.x_star_norm * dot / std::sqrt(zsq) : p.x_star_norm * out[0];
    }
};

using SquaredRealizable = LinearModel<LossFamily::Squared>;
using AbsoluteRealizable = LinearModel<LossFamily::Absolute>;

} // namespace dpr::adversaries
