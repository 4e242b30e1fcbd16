#pragma once
// The convex workloads for ENV21 (docs/spec/checks.md §3.3: "‖x − c_t‖₂ with c_t ∈ D; |⟨a_t, x⟩ − b_t| with
// b_t = ⟨a_t, c⟩") on any decision set of kernels/domains/ (Geometry::Polytope, named by the `set` keys, as for
// bco-linear). The learners see only f_t(x_t) (kernels/learners/private_bandit_fw.hpp, bco_detail::loss_value).
// Both families are 1-Lipschitz with a zero in D, so |f_t| <= D + zeta at the plays: the clip and the
// sensitivity of private-bandit-fw hold for them unchanged.
//
// kind = "bco-absolute"  (LossFamily::Absolute) f_t(x) = |<a_t, x> - b_t|
//   a_t: bco-linear's, draw for draw (the same streams and `spread`);
//   c = (LO(mu) + LO(-mu)) / 2, the midpoint of two vertices of D (in D by convexity), mu bco-linear's mean direction;
//   b_t = <a_t, c>.
//   Comparator: exactly 0 at every t (f_t >= 0 and f_t(c) = 0: realizable).
//
// kind = "bco-distance"  (LossFamily::Distance) f_t(x) = ||x - c_t||_2
//   K fixed centres (key `centres`) c^k = (LO(g_k) + LO(h_k)) / 2, midpoints of two vertices of D picked by
//   directions g_k, h_k ~ N(0, I_n) drawn from a fixed layout (key `layout`), not from the run's seed: the centres
//   are a function of the set, K and `layout` alone, so the comparator can rebuild them;
//   c_t = c^{k_t}, k_t uniform on {0..K-1} per round from the sequence's stream (kSubHidden, round t): oblivious,
//   shared by the instances of a point (or per instance).
//   Row: c_t at 0..n-1, 0 at n (the family's width), then the one-hot e_{k_t} in K more numbers (row_extra), so that
//   the engine's running sum of the rows hands comparator() the counts N_k(t) of each centre.
//   Comparator: min_{x in D} sum_k N_k ||x - c^k||, the weighted Fermat-Weber point of the centres. It lies in
//   conv{c^k}, inside D, so the constraint is inactive. Solved exactly when a centre is optimal (c^j is iff
//   ||sum_{k != j} N_k (c^j - c^k)/||c^j - c^k|| || <= N_j, the subgradient condition; equal centres merged), else
//   by Weiszfeld's iteration with the Vardi-Zhang step at a centre, stopped when the certified gap
//   f(x) - f* <= ||grad f(x)|| diam{c^k} falls below 1e-12 f(x) (or after 20000 iterations); returns f(x), an upper
//   bound of the minimum within that gap (documented in docs/ADVERSARIES.md).
#include <vector>

#include "kernels/adversaries/bco_linear.hpp"
#include "kernels/adversaries/common.hpp"
#include "kernels/domains/build.hpp"
#include "kernels/domains/domain.hpp"
#include "kernels/noise/samplers.hpp"

namespace dpr::adversaries {

/// bco-absolute: bco-linear's a_t, with b_t = <a_t, c> for a point c of D and the absolute value taken.
struct BcoAbsolute : BcoLinear {
    static constexpr const char* kName = "bco-absolute";
    static constexpr LossFamily kLoss = LossFamily::Absolute;

    /// c = (LO(mu) + LO(-mu)) / 2 into c (n doubles).
    static void zero_point(const Params& p, const SequenceCtx& ctx, double* c) {
        const domains::Domain& D = p.domain;
        std::vector<double> m(D.n), v(D.n), scratch(domains::scratch_size(D));
        for (std::uint32_t i = 0; i < D.n; ++i) m[i] = mu(ctx, i);
        domains::lo(D, m.data(), c, scratch.data());
        for (std::uint32_t i = 0; i < D.n; ++i) m[i] = -m[i];
        domains::lo(D, m.data(), v.data(), scratch.data());
        for (std::uint32_t i = 0; i < D.n; ++i) c[i] = 0.5 * (c[i] + v[i]);
    }

    /// out[0..n) = a_t (bco-linear's), out[n] = <a_t, c>. Host code.
    static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        BcoLinear::fill(p, ctx, t, out);
        const std::uint32_t n = p.domain.n;
        std::vector<double> c(n);
        zero_point(p, ctx, c.data());
        out[n] = domains::dot(out, c.data(), n);
    }

    /// min_{x in D} sum_s |<a_s, x> - b_s| = 0, attained at c.
    static double comparator(const Params&, const double*) { return 0.0; }
};

/// bco-distance: f_t(x) = ||x - c_t||, c_t one of K fixed centres of D.
struct BcoDistance : PolytopeAdversary {
    static constexpr const char* kName = "bco-distance";
    static constexpr LossFamily kLoss = LossFamily::Distance;
    static constexpr bool kSharedOnly = false;
    static constexpr std::uint32_t kMaxCentres = 64;
    static constexpr KeySpec kKeys[] = {
        domains::kSetKey,   domains::kKKey,     domains::kRadiusKey, domains::kGraphKey,
        domains::kNodesKey, domains::kEdgesKey, domains::kSourceKey, domains::kTargetKey,
        {"centres", KeyType::Int, "4", 1, kMaxCentres, nullptr,
         "K: c_t is one of K fixed points of D (midpoints of two vertices), chosen uniformly each round; 1 = the "
         "same centre every round (realizable: comparator 0)"},
        {"layout", KeyType::Int, "1", 0, 4294967295.0, nullptr,
         "seed of the centres' directions (not the run's seed: the centres are fixed by the set, K and layout)"},
    };
    static constexpr int kCentres = domains::kDomainKeyCount;
    static constexpr int kLayout = domains::kDomainKeyCount + 1;

    struct Params : Dims { // d = n
        std::uint32_t centres;
        std::uint32_t layout;
        domains::Domain domain;
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        static_cast<Dims&>(p) = dims(pb);
        p.centres = static_cast<std::uint32_t>(kv.get(kCentres, 4.0));
        p.layout = static_cast<std::uint32_t>(kv.get(kLayout, 1.0));
        p.domain = domain_of(kv, pb);
        return p;
    }
    /// The one-hot centre counter after the family's n + 1 numbers.
    static std::uint64_t row_extra(const Params& p) { return p.centres; }

    /// Centre k (0-based) into c (n doubles).
    static void centre(const Params& p, std::uint32_t k, double* c) {
        const domains::Domain& D = p.domain;
        const SequenceCtx layout{p.layout, 0, kSharedSequence};
        std::vector<double> g(D.n), v(D.n), scratch(domains::scratch_size(D));
        gaussian_vector(layout, kSubCentres, 2 * std::uint64_t{k} + 1, D.n, g.data());
        domains::lo(D, g.data(), c, scratch.data());
        gaussian_vector(layout, kSubCentres, 2 * std::uint64_t{k} + 2, D.n, g.data());
        domains::lo(D, g.data(), v.data(), scratch.data());
        for (std::uint32_t i = 0; i < D.n; ++i) c[i] = 0.5 * (c[i] + v[i]);
    }

    /// k_t, uniform on {0..K-1}.
    static std::uint32_t centre_index(const Params& p, const SequenceCtx& ctx, std::uint64_t t) {
        return hidden_index(ctx, t, p.centres);
    }

    /// out[0..n) = c_t, out[n] = 0, out[n + 1 + k] = 1{k = k_t}. Host code.
    static void fill(const Params& p, const SequenceCtx& ctx, std::uint64_t t, double* out) {
        const std::uint32_t n = p.domain.n;
        const std::uint32_t k = centre_index(p, ctx, t);
        centre(p, k, out);
        out[n] = 0.0;
        for (std::uint32_t j = 0; j < p.centres; ++j) out[n + 1 + j] = j == k ? 1.0 : 0.0;
    }

    /// min_{x in D} sum_k N_k ||x - c^k|| for the summed rows L (N_k = L[n + 1 + k]); see the header.
    static double comparator(const Params& p, const double* L) {
        const std::uint32_t n = p.domain.n;
        std::vector<std::vector<double>> c;
        std::vector<double> w;
        std::vector<double> ck(n);
        for (std::uint32_t k = 0; k < p.centres; ++k) {
            const double N = L[n + 1 + k];
            if (!(N > 0.0)) continue;
            centre(p, k, ck.data());
            bool merged = false;
            for (std::size_t j = 0; j < c.size() && !merged; ++j)
                if (c[j] == ck) w[j] += N, merged = true;
            if (!merged) c.push_back(ck), w.push_back(N);
        }
        return fermat_weber(c, w, n);
    }

    /// min_x sum_k w_k ||x - c_k|| over R^n (distinct c_k, w_k > 0): exact at an optimal centre, else Weiszfeld with
    /// the Vardi-Zhang step, to a certified relative gap of 1e-12 (or 20000 iterations).
    static double fermat_weber(const std::vector<std::vector<double>>& c, const std::vector<double>& w,
                               std::uint32_t n) {
        const std::size_t K = c.size();
        if (K == 0) return 0.0;
        const auto dist = [&](const double* x, std::size_t k) {
            double s = 0.0;
            for (std::uint32_t i = 0; i < n; ++i) s += (x[i] - c[k][i]) * (x[i] - c[k][i]);
            return std::sqrt(s);
        };
        const auto value = [&](const double* x) {
            double f = 0.0;
            for (std::size_t k = 0; k < K; ++k) f += w[k] * dist(x, k);
            return f;
        };
        // A centre is optimal iff the pull of the others, ||sum_{k != j} w_k (c_j - c_k)/||c_j - c_k|| ||, is <= w_j.
        std::vector<double> r(n);
        for (std::size_t j = 0; j < K; ++j) {
            std::fill(r.begin(), r.end(), 0.0);
            for (std::size_t k = 0; k < K; ++k) {
                if (k == j) continue;
                const double dk = dist(c[j].data(), k);
                for (std::uint32_t i = 0; i < n; ++i) r[i] += w[k] * (c[j][i] - c[k][i]) / dk;
            }
            double rn = 0.0;
            for (double v : r) rn += v * v;
            if (std::sqrt(rn) <= w[j] * (1.0 + 1e-12)) return value(c[j].data()); // optimal up to rounding
        }
        double diam = 0.0;
        for (std::size_t j = 0; j < K; ++j)
            for (std::size_t k = j + 1; k < K; ++k) diam = std::fmax(diam, dist(c[j].data(), k));
        // Weiszfeld from the weighted mean (inside conv{c_k}).
        std::vector<double> x(n, 0.0), num(n), g(n);
        double W = 0.0;
        for (std::size_t k = 0; k < K; ++k) {
            W += w[k];
            for (std::uint32_t i = 0; i < n; ++i) x[i] += w[k] * c[k][i];
        }
        for (double& v : x) v /= W;
        for (int it = 0; it < 20000; ++it) {
            std::fill(num.begin(), num.end(), 0.0);
            std::fill(g.begin(), g.end(), 0.0);
            double den = 0.0, eta = 0.0, f = 0.0; // eta: the weight of a centre x sits on (Vardi-Zhang); f = f(x)
            for (std::size_t k = 0; k < K; ++k) {
                const double dk = dist(x.data(), k);
                f += w[k] * dk;
                if (dk == 0.0) {
                    eta = w[k];
                    continue;
                }
                den += w[k] / dk;
                for (std::uint32_t i = 0; i < n; ++i) {
                    num[i] += w[k] / dk * c[k][i];
                    g[i] += w[k] * (x[i] - c[k][i]) / dk;
                }
            }
            double gn = 0.0;
            for (double v : g) gn += v * v;
            gn = std::sqrt(gn);
            if (eta == 0.0 && gn * diam <= 1e-12 * f) return f; // f(x) - f* <= ||grad|| ||x - x*|| <= ||grad|| diam
            // T(x) = num / den; at a centre, x <- (1 - eta/gn)^+ T(x) + min(1, eta/gn) x (gn = the others' pull).
            const double lam = eta > 0.0 ? std::fmin(1.0, eta / gn) : 0.0;
            for (std::uint32_t i = 0; i < n; ++i) x[i] = (1.0 - lam) * num[i] / den + lam * x[i];
        }
        return value(x.data());
    }
};

} // namespace dpr::adversaries
