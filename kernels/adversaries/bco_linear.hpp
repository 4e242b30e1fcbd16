#pragma once
// kind = "bco-linear": the first ENV21 workload (docs/spec/checks.md §3.3 "linear losses f_t(x) =
// <l_t, x - x_0>, shifted so that f_t has a zero in D") on any decision set of kernels/domains/
// (Geometry::Polytope, named by this adversary's `set` keys, kernels/domains/build.hpp). LossFamily::Affine:
// f_t(x) = <a_t, x> - b_t.
//
// Law, for a set D in R^n (n = d, or the number of edges of a graph set):
//   mu_i ~ U(-1, 1)                     fixed per sequence: the open uniform of (kSubMeans, round 0, element i),
//                                       mapped to 2u - 1
//   U_{t,i} ~ U(-1, 1)                  per round: (kSubLoss, round t, element i)
//   a_t(i) = (mu_i + s U_{t,i}) / ((1 + s) sqrt n)        s = spread >= 0; |a_t(i)| < 1/sqrt n, so ||a_t||_2 < 1
//   x_0 = LO(mu)                        the vertex that is best for the mean loss E a_t = mu / ((1 + s) sqrt n)
//   b_t = <a_t, x_0>                    so f_t(x_0) = 0: a zero in D, and f_t is 1-Lipschitz (L = 1 of ENV21)
// The losses are oblivious and shared by the instances of a point (or per instance). Row of round t: a_t at
// 0..n-1, b_t at n (loss_row_width = n + 1).
//
// Comparator (ENV21 Alg. 1; docs/spec/env21.md §B2, what to record: a closed form for linear f_t, one LO call):
// with A_t = sum_{s<=t} a_s and B_t = sum_{s<=t} b_s (the running sum of the rows the engine keeps),
// min_{x in D} sum_s f_s(x) = <A_t, LO(A_t)> - B_t, exact up to the oracle's tie-break. The engine calls
// comparator() at every checkpoint.
#include <vector>

#include "kernels/adversaries/common.hpp"
#include "kernels/domains/build.hpp"
#include "kernels/domains/domain.hpp"

namespace dpr::adversaries {

/// What every adversary on a decision set (Geometry::Polytope) shares: the check of the set keys, the dimension they
/// imply and the Domain they build (kernels/domains/build.hpp).
struct PolytopeAdversary : Adversary<Geometry::Polytope> {

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        domains::Domain D;
        return domains::build_domain(kv, pb.d, D, diag);
    }
    /// The dimension the keys imply (the edges of a graph set), 0 when d is the user's (config layer).
    static std::uint32_t dimension(const KeyValues& kv) { return domains::domain_dimension(kv); }
    /// The decision set the keys name, for the learner (Problem::domain).
    static bool domain(const KeyValues& kv, std::uint32_t d, domains::Domain& D, Diagnostic& diag) {
        return domains::build_domain(kv, d, D, diag);
    }
    /// The problem's set, else the one the keys name (resolve() runs on checked keys; check() reports errors).
    static domains::Domain domain_of(const KeyValues& kv, const Problem& pb) {
        if (pb.domain) return *pb.domain;
        domains::Domain D;
        Diagnostic ignore;
        domains::build_domain(kv, pb.d, D, ignore);
        return D;
    }
};

struct BcoLinear : PolytopeAdversary {
    static constexpr const char* kName = "bco-linear";
    static constexpr LossFamily kLoss = LossFamily::Affine;
    static constexpr KeySpec kKeys[] = {
        domains::kSetKey,   domains::kKKey,     domains::kRadiusKey, domains::kGraphKey,
        domains::kNodesKey, domains::kEdgesKey, domains::kSourceKey, domains::kTargetKey,
        {"spread", KeyType::Real, "1", 0.0, 1e6, nullptr,
         "s: a_t(i) = (mu_i + s U_t(i)) / ((1 + s) sqrt n), mu_i ~ U(-1,1) fixed per sequence, U_t(i) ~ U(-1,1) "
         "per round; 0 = the same loss every round"},
    };
    static constexpr int kSpread = domains::kDomainKeyCount;

    struct Params : Dims { // d = n, the row's a_t part
        double spread;
        domains::Domain domain;
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        static_cast<Dims&>(p) = dims(pb);
        p.spread = kv.get(kSpread, 1.0);
        p.domain = domain_of(kv, pb);
        return p;
    }

    /// mu_i (the sequence's mean direction, before scaling).
    DPR_HD static double mu(const SequenceCtx& ctx, std::uint32_t i) {
        rng::WordStream src(adversary_stream(ctx, kSubMeans, 0, i));
        return 2.0 * src.next_double() - 1.0;
    }

    /// out[0..n) = a_t, out[n] = b_t = <a_t, x_0>. Host code (a stack scratch for the oracle).
    static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        const domains::Domain& D = p.domain;
        const std::uint32_t n = D.n < domains::Domain::kMaxDim ? D.n : domains::Domain::kMaxDim; // (build.hpp caps it)
        double m[domains::Domain::kMaxDim] = {}, x0[domains::Domain::kMaxDim];
        double scratch[domains::Domain::kMaxDim + 4 * domains::Domain::kMaxNodes + 4];
        for (std::uint32_t i = 0; i < n; ++i) m[i] = mu(ctx, i);
        domains::lo(D, m, x0, scratch);
        const double scale = 1.0 / ((1.0 + p.spread) * std::sqrt(static_cast<double>(n)));
        double b = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            rng::WordStream src(adversary_stream(ctx, kSubLoss, t, i));
            const double u = 2.0 * src.next_double() - 1.0;
            out[i] = (m[i] + p.spread * u) * scale;
            b += out[i] * x0[i];
        }
        out[n] = b;
    }

    /// min_{x in D} <A, x> - B for the summed rows L = (A, B): one LO call.
    static double comparator(const Params& p, const double* L) {
        const domains::Domain& D = p.domain;
        std::vector<double> x(D.n), scratch(domains::scratch_size(D));
        domains::lo(D, L, x.data(), scratch.data());
        return domains::dot(L, x.data(), D.n) - L[D.n];
    }
};

} // namespace dpr::adversaries
