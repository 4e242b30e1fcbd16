#pragma once
// kind = "cube-drift": one random signed coordinate per round, biased toward a hidden best corner, so
// that a cube learner has something to learn (OLO over [-1,1]^d, losses in the unit l1 ball).
//
// cube-coordinate's losses are mean-zero: E <l_t, x_t> = 0 for every x_t chosen before l_t, so every
// learner's expected regret is E||L_T||_1 whatever it does, and the price of privacy is invisible in
// the mean. Here the signs lean toward a corner:
//
// Law: c* in {-1,+1}^d, c*_i = -1 if U_i < 1/2 else +1 with U_i an open uniform from the stream
// (kSubDirection, round 0, element i), fixed for the whole sequence (uniform over the 2^d corners).
// For every round t independently, i_t ~ Unif[d] and
//     l_t = sigma_t e_{i_t},   sigma_t = -c*_{i_t} with probability (1 + drift)/2, +c*_{i_t} otherwise,
// both from the one stream (kSubLoss, round t, element 0): i_t = uniform_index(src, d) (unbiased),
// then sigma_t = -c*_{i_t} if the next open uniform is < (1 + drift)/2. So ||l_t||_1 = 1 and
//     E l_t = -(drift/d) c*,   E L_T = -(drift T/d) c*:
// the best corner x* = -sign(L_T) is c* once T >> d/drift^2, and E[-||L_T||_1] -> -drift T. A learner
// that plays c* has expected regret o(T); one that does not learn, e.g. x_t = 0, has ~ drift T.
// drift = 0 is cube-coordinate's law (up to the sign convention). Geometry::Cube.

#include "kernels/adversaries/common.hpp"

namespace dpr::adversaries {

struct CubeDrift : Adversary<Geometry::Cube> {
    static constexpr const char* kName = "cube-drift";
    static constexpr KeySpec kKeys[] = {
        {"drift", KeyType::Real, "0.5", 0.0, 1.0, nullptr,
         "bias toward a hidden corner c*: l_t = sigma e_i, i uniform, P[sigma = -c*_i] = (1 + drift)/2, so "
         "E l_t = -(drift/d) c* and the best corner is c*"},
    };
    static constexpr int kDrift = key_index(kKeys, "drift");

    struct Params : Dims {
        double drift;
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) { return Params{dims(pb), kv.get(kDrift, 0.5)}; }
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }

    /// Coordinate i of the hidden best corner c* of the sequence `ctx`: -1 or +1.
    DPR_HD static double corner(const Params&, const SequenceCtx& ctx, std::uint32_t i) {
        rng::WordStream src(adversary_stream(ctx, kSubDirection, 0, i));
        return noise::bernoulli(src, 0.5) ? -1.0 : 1.0;
    }

    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        rng::WordStream src(adversary_stream(ctx, kSubLoss, t, 0));
        const std::uint32_t i = noise::uniform_index(src, p.d);
        const bool toward = noise::bernoulli(src, 0.5 * (1.0 + p.drift));
        const double c = corner(p, ctx, i);
        for (std::uint32_t k = 0; k < p.d; ++k) out[k] = 0.0;
        out[i] = toward ? -c : c;
    }
};

} // namespace dpr::adversaries
