#pragma once
// kind = "halving": random halving, AFKT23 workload W1 of docs/spec/checks.md §3.4 (oblivious, realizable), the
// workload on which AFKT23 Alg. 1's switch count and log^2 d / eps (log^1.5 d / eps) regret are
// measured.
//
// Law. x* ~ Unif[d] from the stream (kSubHidden, round 0). The other d - 1 experts get a random order:
// expert i != x* has rank pi(j), j = i - 1{i > x*}, where pi is the keyed Feistel bijection of
// [0, d - 1) (kernels/rng/permutation.hpp) keyed by the stream (kSubOrder, round 0). There are
// P = ceil(log2 d) phases of m rounds (key phase_length; auto = max(1, floor(T / P))); phase q covers
// rounds (q - 1) m + 1 .. q m. Let
//     n_q = floor((d - 1) / 2^q) = ceil(d / 2^q) - 1,   q = 0..P   (n_0 = d - 1, n_P = 0),
// the number of non-star survivors after q phases: the survivors together with x* are
// ceil(d / 2^q), i.e. each phase kills floor(s/2) of the s surviving experts, never x*. At a round
// t of phase q = min(P, ceil(t / m)):
//     l_t(x*) = 0,      l_t(i) = 1{rank(i) >= n_q}  for i != x*.
// So the experts ranked in [n_q, n_{q-1}) receive loss 1 every round of phase q from then on; they
// are a uniformly random half of the survivors ("fresh random half": under a uniform order, the
// order among the survivors is uniform given the past). Experts once killed keep loss 1 in every
// later round, and after the last phase (t > P m) every expert but x* has loss 1 at every round.
// Geometry::Simplex; L* = 0 (x* always has loss 0). If P m > T, the run ends during phase
// ceil(T / m) and several experts still have zero loss (check() warns).
//
// (Spec note: the brief's "ceil((d - 1) / 2^p) survivors" never reaches 0, contradicting "after the
// last phase only x* survives"; floor((d - 1) / 2^p) = ceil(d / 2^p) - 1 is the count that does.)

#include "kernels/adversaries/common.hpp"
#include "kernels/core/math.hpp"
#include "kernels/rng/permutation.hpp"

namespace dpr::adversaries {

struct Halving : Adversary<Geometry::Simplex> {
    static constexpr const char* kName = "halving";
    static constexpr KeySpec kKeys[] = {
        {"phase_length", KeyType::Int, "auto", 1.0, 4294967295.0, nullptr,
         "rounds per halving phase m; auto = max(1, floor(T / ceil(log2 d)))"},
    };
    static constexpr int kPhaseLength = key_index(kKeys, "phase_length");

    struct Params : Dims {
        std::uint64_t m;      ///< phase length
        std::uint32_t phases; ///< P = ceil(log2 d)
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        const std::uint32_t phases = ceil_log2(pb.d > 0 ? pb.d : 1);
        std::uint64_t m = phases > 0 ? pb.T / phases : pb.T;
        if (kv.given[kPhaseLength]) m = static_cast<std::uint64_t>(kv.num[kPhaseLength]);
        return Params{dims(pb), m > 0 ? m : 1, phases};
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        const Params p = resolve(kv, pb);
        const std::uint64_t need = p.m * p.phases;
        if (need > pb.T) {
            diag.fail("phase_length",
                      "phase_length * ceil(log2 d) = %llu * %u = %llu exceeds T = %llu: only %llu of the %u "
                      "phases happen, so x* is not the only zero-loss expert",
                      static_cast<unsigned long long>(p.m), p.phases, static_cast<unsigned long long>(need),
                      static_cast<unsigned long long>(pb.T),
                      static_cast<unsigned long long>((pb.T + p.m - 1) / p.m), p.phases);
            diag.warning_only = true;
        }
        return true;
    }

    /// The zero-loss expert x* of the sequence `ctx`.
    DPR_HD static std::uint32_t best_expert(const Params& p, const SequenceCtx& ctx) {
        return hidden_index(ctx, 0, p.d);
    }

    /// The random order of the d - 1 other experts (a bijection of [0, d - 1)); requires d >= 2.
    DPR_HD static rng::FeistelPermutation order(const Params& p, const SequenceCtx& ctx) {
        return rng::FeistelPermutation(p.d - 1, adversary_stream(ctx, kSubOrder, 0, 0));
    }

    /// n_q = floor((d - 1) / 2^q): non-star experts with zero loss after q complete phases.
    DPR_HD static std::uint32_t survivors_after(const Params& p, std::uint32_t q) {
        return q >= 32 ? 0u : static_cast<std::uint32_t>((static_cast<std::uint64_t>(p.d) - 1) >> q);
    }

    /// The phase of round t, capped at P (rounds after the last phase behave like its last round).
    DPR_HD static std::uint32_t phase_of(const Params& p, std::uint64_t t) {
        const std::uint64_t q = (t - 1) / p.m + 1;
        return q < p.phases ? static_cast<std::uint32_t>(q) : p.phases;
    }

    /// Rows depend on t only through its phase (row_epoch contract, adversaries/common.hpp): the 12-round
    /// Feistel rank of every expert is computed once per phase, not once per round.
    DPR_HD static std::uint64_t row_epoch(const Params& p, std::uint64_t t) { return phase_of(p, t); }

    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        const std::uint32_t star = best_expert(p, ctx);
        if (p.d < 2) {
            out[0] = 0.0;
            return;
        }
        const rng::FeistelPermutation pi = order(p, ctx);
        const std::uint32_t alive = survivors_after(p, phase_of(p, t));
        for (std::uint32_t i = 0; i < p.d; ++i) {
            if (i == star) {
                out[i] = 0.0;
                continue;
            }
            const std::uint32_t rank = pi(i < star ? i : i - 1);
            out[i] = rank >= alive ? 1.0 : 0.0;
        }
    }
};

} // namespace dpr::adversaries
