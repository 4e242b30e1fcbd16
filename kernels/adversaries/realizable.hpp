#pragma once
// kind = "realizable": stochastic realizable experts — AFKT23 workload W4 of docs/spec/checks.md §3.4
// (expert i has Bernoulli(mu_i) losses, mu_{x*} = 0): the setting of AFKT23 (L* = 0).
//
// Law: x* ~ Unif[d] from the stream (kSubHidden, round 0), drawn once per sequence; the means
//     mu_i = p                                    (p_min = auto: every expert but x* alike; W3 with L* = 0)
//     mu_i = p_min + (p - p_min) V_i, V_i ~ U(0,1) (p_min < p: per-expert means, drawn once per sequence,
//                                                  V_i the open 53-bit uniform of (kSubMeans, round 0,
//                                                  element floor(i/2)), one block per pair of experts)
// and for every round t, independently, l_t(x*) = 0 and l_t(i) = 1{U < mu_i} for i != x*, U the open 53-bit
// uniform of (kSubLoss, round t, element floor(i/2)). With p_min = auto the sequence is exactly that of
// earlier versions (the means are not drawn).
// Geometry::Simplex. L* = 0; with p > 0, x* is the only zero-loss expert with probability
// >= 1 - (d - 1)(1 - p)^T.

#include "kernels/adversaries/common.hpp"

namespace dpr::adversaries {

struct Realizable : Adversary<Geometry::Simplex> {
    static constexpr const char* kName = "realizable";
    static constexpr KeySpec kKeys[] = {
        {"p", KeyType::Real, "0.5", 0.0, 1.0, nullptr,
         "loss probability of every expert but x* (x* ~ Unif[d] always has loss 0); with p_min, the largest mean"},
        {"p_min", KeyType::Real, "auto", 0.0, 1.0, nullptr,
         "per-expert means mu_i ~ Unif[p_min, p] (i != x*), drawn once per sequence (W4); auto = p: all alike"},
    };
    static constexpr int kP = key_index(kKeys, "p");
    static constexpr int kPMin = key_index(kKeys, "p_min");

    struct Params : Dims {
        double p;
        double p_min; ///< == p: every expert but x* has mean p
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        const double p = kv.get(kP, 0.5);
        return Params{dims(pb), p, kv.get(kPMin, p)};
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (kv.given[kPMin] && kv.num[kPMin] > kv.get(kP, 0.5))
            return diag.fail("p_min", "p_min = %g exceeds p = %g: the means are drawn from [p_min, p]", kv.num[kPMin],
                             kv.get(kP, 0.5));
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

    /// mu from its uniform V: p_min + (p - p_min) V.
    DPR_HD static double mean_of(const Params& p, double v) { return p.p_min + (p.p - p.p_min) * v; }

    /// mu_i of the sequence (i != x*).
    DPR_HD static double mean(const Params& p, const SequenceCtx& ctx, std::uint32_t i) {
        if (p.p_min == p.p) return p.p;
        rng::WordStream src(adversary_stream(ctx, kSubMeans, 0, i / 2));
        double v = src.next_double();
        if (i % 2) v = src.next_double();
        return mean_of(p, v);
    }

    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        const std::uint32_t star = best_expert(p, ctx);
        if (p.p_min == p.p) return bernoulli_row(ctx, t, p.d, star, 0.0, p.p, out);
        for (std::uint32_t k = 0; 2 * static_cast<std::uint64_t>(k) < p.d; ++k) {
            rng::WordStream means(adversary_stream(ctx, kSubMeans, 0, k));
            rng::WordStream src(adversary_stream(ctx, kSubLoss, t, k));
            for (std::uint32_t i = 2 * k; i < 2 * k + 2 && i < p.d; ++i) {
                const double mu = mean_of(p, means.next_double());
                const bool hit = noise::bernoulli(src, mu); // drawn for x* too: expert 2k+1 always takes uniform 1
                out[i] = i != star && hit ? 1.0 : 0.0;
            }
        }
    }
};

} // namespace dpr::adversaries
