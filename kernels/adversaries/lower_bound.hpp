#pragma once
// kind = "lower-bound": the mixture adversary of AFKT23 Theorem 5 (docs/spec/afkt23.md §C7; workload W2 of
// docs/spec/checks.md §3.4).
//
// Law. l^0 = 0 and l^j(x) = 0 if x = j, 1 otherwise. j ~ Unif[d] from the stream (kSubHidden,
// round 0), once per sequence, and
//     l_t = l^0  for t = 1 .. T - k,        l_t = l^j  for t = T - k + 1 .. T,
//     k = ceil(ln(d) / (2 epsilon))         (natural log; epsilon = the key below).
// Geometry::Simplex; L* = 0 (expert j). Thm 5: for epsilon <= 1/10, delta <= epsilon / d (and d >= 32
// in the spec's statement), every (epsilon, delta)-DP algorithm has E[regret] >= ln(d) / (32 epsilon)
// on this mixture; every algorithm has regret <= k. The mixture over j is realised by per-instance
// sequences (adversary.per_instance = true); a shared sequence fixes one j for the whole point.

#include "kernels/adversaries/common.hpp"

namespace dpr::adversaries {

struct LowerBound : Adversary<Geometry::Simplex> {
    static constexpr const char* kName = "lower-bound";
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, nullptr,
         "privacy level the Thm 5 bound is built for (> 0); the last k = ceil(ln(d) / (2 epsilon)) rounds "
         "carry l^j",
         /*min_exclusive=*/true},
    };
    static constexpr int kEpsilon = key_index(kKeys, "epsilon");

    struct Params : Dims {
        double epsilon;
        std::uint64_t k; ///< rounds carrying l^j (the last k rounds)
    };

    /// k = ceil(ln(d) / (2 epsilon)) as a double (may exceed T or 2^64; check() reports that).
    static double rounds_k(double d, double epsilon) { return std::ceil(std::log(d) / (2.0 * epsilon)); }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        const double eps = kv.get(kEpsilon, 0.0);
        const double k = eps > 0.0 ? rounds_k(pb.d, eps) : kInf;
        const std::uint64_t kk = k < static_cast<double>(pb.T) ? static_cast<std::uint64_t>(k) : pb.T;
        return Params{dims(pb), eps, kk};
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (!kv.given[kEpsilon])
            return diag.fail("epsilon", "epsilon is required (the eps the bound is built for)");
        const double eps = kv.num[kEpsilon];
        if (!(eps > 0.0) || !std::isfinite(eps))
            return diag.fail("epsilon", "epsilon = %g; it must be finite and > 0", eps);
        if (pb.d < 2) return diag.fail("d", "d = %u; the lower-bound adversary needs d >= 2 experts", pb.d);
        const double k = rounds_k(pb.d, eps);
        if (k > static_cast<double>(pb.T))
            return diag.fail(
                "epsilon",
                "k = ceil(ln(d) / (2 epsilon)) = ceil(ln(%u) / (2 * %g)) = %.0f rounds exceeds T = "
                "%llu; use epsilon >= ln(d) / (2 T) = %g or more rounds",
                pb.d, eps, k, static_cast<unsigned long long>(pb.T),
                std::log(static_cast<double>(pb.d)) / (2.0 * static_cast<double>(pb.T)));
        if (eps > 0.1 || pb.d < 32) {
            diag.fail("epsilon",
                      "Theorem 5's bound ln(d)/(32 epsilon) is proved for epsilon <= 1/10 and d >= 32 "
                      "(here epsilon = %g, d = %u)",
                      eps, pb.d);
            diag.warning_only = true;
        }
        return true;
    }

    /// The index j of the sequence `ctx` (the zero of l^j).
    DPR_HD static std::uint32_t target(const Params& p, const SequenceCtx& ctx) {
        return hidden_index(ctx, 0, p.d);
    }

    /// l^0 up to T - k, l^j after (row_epoch contract, adversaries/common.hpp).
    DPR_HD static std::uint64_t row_epoch(const Params& p, std::uint64_t t) { return t + p.k <= p.T ? 0 : 1; }

    DPR_HD static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        if (t + p.k <= p.T) {
            for (std::uint32_t i = 0; i < p.d; ++i) out[i] = 0.0;
            return;
        }
        const std::uint32_t j = target(p, ctx);
        for (std::uint32_t i = 0; i < p.d; ++i) out[i] = i == j ? 0.0 : 1.0;
    }
};

} // namespace dpr::adversaries
