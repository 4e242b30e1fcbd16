#pragma once
// kind = "realizable": stochastic realizable experts — ALGORITHMS.md §3.4 workload W4 with
// mu_i = p for i != x* (and W3 with L* = 0): the setting of AFKT23 (L* = 0).
//
// Law: x* ~ Unif[d] from the stream (kSubHidden, round 0), drawn once per sequence; for every round t
//     l_t(x*) = 0,      l_t(i) ~ Bernoulli(p) independently for i != x*,
// with l_t(i) = 1{U < p}, U the open 53-bit uniform of (kSubLoss, round t, element floor(i/2)).
// Geometry::Simplex. L* = 0; with p > 0, x* is the only zero-loss expert with probability
// >= 1 - (d - 1)(1 - p)^T.
#include <cstdint>

#include "kernels/adversaries/common.hpp"
#include "kernels/core/hd.hpp"
#include "kernels/core/params.hpp"
#include "kernels/core/sets.hpp"

namespace dpr::adversaries {

struct Realizable {
    static constexpr const char* kName = "realizable";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr bool kSharedOnly = false;
    static constexpr KeySpec kKeys[] = {
        {"p", KeyType::Real, "0.5", 0.0, 1.0, nullptr,
         "loss probability of every expert but x* (x* ~ Unif[d] always has loss 0)"},
    };
    static constexpr int kP = key_index(kKeys, "p");

    struct Params {
        std::uint32_t d;
        std::uint64_t T;
        double p;
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{pb.d, pb.T, kv.get(kP, 0.5)};
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (kv.get(kP, 0.5) == 0.0 && pb.d > 1) {
            diag.fail("p", "p = 0: every expert has zero loss, so x* is not the unique best expert");
            diag.warning_only = true;
        }
        return true;
    }

    /// The zero-loss expert x* of the sequence `ctx`.
    DPR_HD static std::uint32_t best_expert(const Params& p, const SequenceCtx& ctx) {
        return hidden_index(ctx, 0, p.d);
    }

    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        bernoulli_row(ctx, t, p.d, best_expert(p, ctx), 0.0, p.p, out);
    }
};

} // namespace dpr::adversaries
