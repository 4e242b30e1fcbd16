#pragma once
// kind = "switching": Bernoulli losses whose best expert changes abruptly — the AS17 MAB workload of
// docs/spec/checks.md §3.2 "an abruptly switching best arm" (and experts workload (a) with switches).
//
// Law. Switch rounds 1 <= s_1 < s_2 < ... < s_K <= T (key switch_at; auto = 1 + floor(r T / 4),
// r = 1, 2, 3, duplicates and values outside [2, T] dropped) cut the rounds into segments
// 0..K: segment r holds rounds s_r .. s_{r+1} - 1 (s_0 = 1, s_{K+1} = T + 1). Its best expert b_r is
//     b_0 ~ Unif[d]                                from the stream (kSubHidden, round 0),
//     b_r = (b_{r-1} + 1 + U_r) mod d,  U_r ~ Unif[d - 1]   from (kSubHidden, round r),
// i.e. uniform over the d - 1 experts other than b_{r-1}, so the best expert changes at every switch
// round. Within segment r, as kind "bernoulli" with x* = b_r:
//     l_t(b_r) ~ Bernoulli(p - gap),   l_t(i) ~ Bernoulli(p) for i != b_r,   independently,
// l_t(i) = 1{U < mean}, U the open 53-bit uniform of (kSubLoss, round t, element floor(i/2)).
// Geometry::Simplex. Cost per round: one Philox block per pair of experts plus r + 1 blocks for b_r.

#include "kernels/adversaries/common.hpp"

namespace dpr::adversaries {

struct Switching : Adversary<Geometry::Simplex> {
    static constexpr const char* kName = "switching";
    static constexpr std::uint32_t kMaxSwitches = 256;
    static constexpr KeySpec kKeys[] = {
        {"switch_at", KeyType::RealList, "auto", 1.0, 4294967295.0, nullptr,
         "strictly increasing integer rounds in [1, T] at which the best expert changes (at most 256); "
         "auto = 1 + floor(r T / 4), r = 1..3"},
        {"p", KeyType::Real, "0.5", 0.0, 1.0, nullptr,
         "loss probability of every expert but the current best"},
        {"gap", KeyType::Real, "0.1", 0.0, 1.0, nullptr,
         "the current best expert's loss probability is p - gap (needs gap <= p)"},
    };
    static constexpr int kSwitchAt = key_index(kKeys, "switch_at");
    static constexpr int kP = key_index(kKeys, "p");
    static constexpr int kGap = key_index(kKeys, "gap");

    struct Params : Dims {
        double p;
        double gap;
        std::uint32_t switches;                ///< K
        std::uint32_t switch_at[kMaxSwitches]; ///< s_1 < ... < s_K (rounds, 1-indexed)
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        static_cast<Dims&>(p) = dims(pb);
        p.p = kv.get(kP, 0.5);
        p.gap = kv.get(kGap, 0.1);
        if (kv.given[kSwitchAt]) {
            const std::uint64_t n = kv.list_size[kSwitchAt];
            p.switches = n < kMaxSwitches ? static_cast<std::uint32_t>(n) : kMaxSwitches;
            for (std::uint32_t r = 0; r < p.switches; ++r)
                p.switch_at[r] = static_cast<std::uint32_t>(kv.list[kSwitchAt][r]);
        } else {
            for (std::uint64_t r = 1; r <= 3; ++r) {
                const std::uint64_t s = 1 + r * pb.T / 4;
                if (s >= 2 && s <= pb.T && (p.switches == 0 || s > p.switch_at[p.switches - 1]))
                    p.switch_at[p.switches++] = static_cast<std::uint32_t>(s);
            }
        }
        return p;
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        const double p = kv.get(kP, 0.5), gap = kv.get(kGap, 0.1);
        if (gap > p)
            return diag.fail(
                "gap", "gap = %g exceeds p = %g: the best expert's loss probability p - gap must be >= 0",
                gap, p);
        if (!kv.given[kSwitchAt]) return true;
        if (kv.list_size[kSwitchAt] > kMaxSwitches)
            return diag.fail("switch_at", "switch_at has %llu rounds; at most %u are supported",
                             static_cast<unsigned long long>(kv.list_size[kSwitchAt]), kMaxSwitches);
        const std::uint32_t n = static_cast<std::uint32_t>(kv.list_size[kSwitchAt]); // <= kMaxSwitches
        const double* s = kv.list[kSwitchAt];
        if (n > 0 && pb.d < 2)
            return diag.fail("switch_at", "the best expert cannot change with d = %u expert", pb.d);
        for (std::uint32_t r = 0; r < n; ++r) {
            if (!(s[r] >= 1.0 && s[r] <= static_cast<double>(pb.T)) || s[r] != std::floor(s[r]))
                return diag.fail("switch_at",
                                 "switch_at[%u] = %g; switch rounds must be integers in [1, T] = [1, %llu]",
                                 r, s[r], static_cast<unsigned long long>(pb.T));
            if (r > 0 && !(s[r] > s[r - 1]))
                return diag.fail(
                    "switch_at",
                    "switch_at must be strictly increasing: switch_at[%u] = %g follows switch_at[%u] = %g", r,
                    s[r], r - 1, s[r - 1]);
        }
        return true;
    }

    /// The segment of round t: the number of switch rounds <= t (binary search).
    DPR_HD static std::uint32_t segment_of(const Params& p, std::uint64_t t) {
        std::uint32_t lo = 0, hi = p.switches; // answer in [lo, hi]
        while (lo < hi) {
            const std::uint32_t mid = (lo + hi) / 2;
            if (p.switch_at[mid] <= t)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }

    /// The best expert b_r of segment r of the sequence `ctx`.
    DPR_HD static std::uint32_t segment_best(const Params& p, const SequenceCtx& ctx, std::uint32_t r) {
        std::uint32_t b = hidden_index(ctx, 0, p.d);
        if (p.d < 2) return b;
        for (std::uint32_t s = 1; s <= r; ++s) {
            const std::uint32_t step = 1 + hidden_index(ctx, s, p.d - 1); // in [1, d - 1]
            b = static_cast<std::uint32_t>((static_cast<std::uint64_t>(b) + step) % p.d);
        }
        return b;
    }

    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        const std::uint32_t best = segment_best(p, ctx, segment_of(p, t));
        bernoulli_row(ctx, t, p.d, best, p.p - p.gap, p.p, out);
    }
};

} // namespace dpr::adversaries
