#pragma once
// kind = "bernoulli": i.i.d. Bernoulli losses with one better expert — the AS17 experts workload (a) of
// docs/spec/checks.md §3.2 ("i.i.d. Bernoulli losses with one expert better by gap Delta") and the MAB workload
// "Bernoulli arms with gap".
//
// Law: one best expert x* (key `best`, or x* ~ Unif[d] from the stream (kSubHidden, round 0) when
// `best` = "auto"); for every round t and expert i independently
//     l_t(i) ~ Bernoulli(p - gap)  if i = x*,      l_t(i) ~ Bernoulli(p)  otherwise,
// with l_t(i) = 1{U < mean}, U the open 53-bit uniform of (kSubLoss, round t, element floor(i/2))
// (bernoulli_row). Geometry::Simplex (losses in {0, 1}). The expected comparator is (p - gap) T.

#include "kernels/adversaries/common.hpp"

namespace dpr::adversaries {

struct Bernoulli : Adversary<Geometry::Simplex> {
    static constexpr const char* kName = "bernoulli";
    static constexpr std::uint32_t kAutoBest = 0xFFFFFFFFu;
    static constexpr KeySpec kKeys[] = {
        {"p", KeyType::Real, "0.5", 0.0, 1.0, nullptr, "loss probability of every expert but the best"},
        {"gap", KeyType::Real, "0.1", 0.0, 1.0, nullptr,
         "the best expert's loss probability is p - gap (needs gap <= p)"},
        {"best", KeyType::Int, "auto", 0.0, 4294967294.0, nullptr,
         "0-based index of the best expert; auto = uniform on [0, d), drawn once per sequence"},
    };
    static constexpr int kP = key_index(kKeys, "p");
    static constexpr int kGap = key_index(kKeys, "gap");
    static constexpr int kBest = key_index(kKeys, "best");

    struct Params : Dims {
        double p;
        double gap;
        std::uint32_t best; ///< kAutoBest: drawn from the stream
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{dims(pb), kv.get(kP, 0.5), kv.get(kGap, 0.1),
                      kv.given[kBest] ? static_cast<std::uint32_t>(kv.num[kBest]) : kAutoBest};
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        const Params p = resolve(kv, pb);
        if (p.gap > p.p)
            return diag.fail("gap",
                             "gap = %g exceeds p = %g: the best expert's loss probability p - gap "
                             "must be >= 0",
                             p.gap, p.p);
        if (kv.given[kBest] && kv.num[kBest] >= pb.d)
            return diag.fail("best", "best = %g is not an expert index: it must lie in [0, d - 1] = [0, %u]",
                             kv.num[kBest], pb.d - 1);
        return true;
    }

    /// The best expert x* of the sequence `ctx`.
    DPR_HD static std::uint32_t best_expert(const Params& p, const SequenceCtx& ctx) {
        return p.best != kAutoBest ? p.best : hidden_index(ctx, 0, p.d);
    }

    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        bernoulli_row(ctx, t, p.d, best_expert(p, ctx), p.p - p.gap, p.p, out);
    }
};

} // namespace dpr::adversaries
