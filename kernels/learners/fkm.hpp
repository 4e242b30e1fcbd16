#pragma once
// fkm: Flaxman-Kalai-McMahan bandit gradient descent (docs/spec/afkt23.md §C8 "FKM"), the projection-based reference of
// ENV21's experiments, on the decision sets of kernels/domains/ that have a cheap Euclidean projection (simplex,
// l1 ball, l2 ball, cube, k-subsets; the graph sets are refused: that is what the projection-free learners are for).
// Non-private.
//
//   x_1 = the centre of D (domains::centre)
//   round t:  u_t = the direction of private-bandit-fw (the same stream: Exploration, round t; in the subspace
//             parallel to aff(D)); play x_t + zeta u_t, charged f_t(x_t + zeta u_t)
//             g_t = (n / zeta) f_t(x_t + zeta u_t) u_t            (n = dim aff(D); unbiased for grad f^_t(x_t))
//             x_{t+1} = Proj_D(x_t - eta g_t)
// Tuning (OGD on the smoothed losses f^_t, L-Lipschitz with a zero in D so |f| <= C = L (D + zeta) at the plays):
// ||g_t|| <= G = n C / zeta, eta = D / (G sqrt T) and zeta = D n^{1/2} / T^{1/4}, so that
//   Regret <= (3/2) G D sqrt T + 2 T zeta L = O(n^{1/2} T^{3/4})        (the C8 rate; keys `eta`, `zeta` override).
// Diagnostics: outside_max = max_t dist(x_t + zeta u_t, D) (exact: D has a projection here). `shrink = true`: App. D,
// as in private-bandit-fw -- f_t is queried at c + (1 - zeta/r)(x_t + zeta u_t - c), inside D.

#include "kernels/domains/domain.hpp"
#include "kernels/learners/common.hpp"
#include "kernels/learners/private_bandit_fw.hpp"

namespace dpr::learners {

struct Fkm : SerialLearner<Fkm> {
    static constexpr const char* kName = "fkm";
    static constexpr Geometry kGeometry = Geometry::Polytope;
    static constexpr unsigned kLossFamilies = bco_detail::kFamilies;
    static constexpr bool kInstanceLanes = false;
    static constexpr std::array<KeySpec, 3> kKeys = {
        KeySpec{"eta", KeyType::Real, "auto", 0.0, 1e12, nullptr,
                "step size > 0; auto = D / (G sqrt T), G = n L (D + zeta) / zeta", true},
        bco_detail::kZetaKey,
        bco_detail::kShrinkKey,
    };
    static constexpr std::array<const char*, 1> kDiagnostics = {"outside_max"};
    static constexpr int kEta = 0;
    static constexpr int kZeta = 1;
    static constexpr int kShrink = 2;
    static constexpr double kLipschitz = 1.0;

    struct Params {
        domains::Domain dom;
        std::uint32_t row_d; ///< the loss row's width, n + 1: a_t then b_t (Distance: c_t then 0)
        LossFamily loss;     ///< Affine, Absolute or Distance (bco_detail::loss_value)
        std::uint64_t T;
        std::uint32_t n_eff;
        double eta, zeta;
        double alpha; ///< App. D shrinking zeta / r (`shrink`), 0 = off
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        bco_detail::set_problem(p, pb);
        const double Td = static_cast<double>(p.T), n = static_cast<double>(p.n_eff), D = p.dom.diameter;
        p.zeta = kv.given[kZeta] ? kv.num[kZeta] : D * std::sqrt(n) / std::pow(Td, 0.25);
        const double G = n * kLipschitz * (D + p.zeta) / p.zeta;
        p.eta = kv.given[kEta] ? kv.num[kEta] : D / (G * std::sqrt(Td));
        p.alpha = bco_detail::shrink_alpha(p.dom, kv.get(kShrink, 0.0) != 0.0, p.zeta);
        return p;
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        const domains::Domain D = bco_detail::domain_of(pb);
        if (!D.has_projection())
            return diag.fail(nullptr,
                             "projects onto D every round, and set = \"%s\" has no cheap projection; use "
                             "private-bandit-fw or garber-kretzu (LO oracle only) there",
                             domains::domain_name(D.kind));
        if (!bco_detail::check_domain(D, diag)) return false;
        if (kv.given[kEta] && !(kv.num[kEta] > 0.0)) return diag.fail("eta", "must be > 0 (got %g)", kv.num[kEta]);
        if (kv.given[kZeta] && !(kv.num[kZeta] > 0.0)) return diag.fail("zeta", "must be > 0 (got %g)", kv.num[kZeta]);
        return bco_detail::check_shrink(D, kv.get(kShrink, 0.0) != 0.0, resolve(kv, pb).zeta, diag);
    }

    static PrivacyReport privacy(const Params&) {
        PrivacyReport r;
        r.mechanism = "none (non-private FKM)";
        return r;
    }

    /// One double array: x, u, the played point, scratch (projection output, direction scratch).
    DPR_HD static std::uint64_t state_size(const Params& p) {
        return 4 * static_cast<std::uint64_t>(p.dom.n) + domains::scratch_size(p.dom);
    }
    DPR_HD static WorkspaceSpec workspace(const Params& p) { return WorkspaceSpec{}.add_double(1, state_size(p)).scalars(1); }

    DPR_HD static void init_state(const Params& p, const InstanceCtx&, double* s, double* dg) {
        for (std::uint64_t i = 0; i < state_size(p); ++i) s[i] = 0.0;
        domains::centre(p.dom, s);
        dg[0] = 0.0;
    }

    DPR_HD static double round_lane0(const Params& p, const InstanceCtx& c, double* ws, double* dg, std::uint64_t t,
                                     const double* row) {
        const std::uint32_t n = p.dom.n;
        double* x = ws;
        double* u = ws + n;
        double* played = ws + 2 * static_cast<std::uint64_t>(n);
        double* tmp = ws + 3 * static_cast<std::uint64_t>(n);
        double* scratch = ws + 4 * static_cast<std::uint64_t>(n);
        bco_detail::direction(p.dom, c, t, u, scratch);
        for (std::uint32_t i = 0; i < n; ++i) played[i] = x[i] + p.zeta * u[i];
        if (p.alpha > 0.0) domains::shrink_towards_centre(p.dom, p.alpha, played); // App. D: the query of f'_t
        const double f = bco_detail::loss_value(p.loss, row, played, n);
        const double out = bco_detail::outside(p.dom, played, tmp, 0.0);
        dg[0] = out > dg[0] ? out : dg[0];
        if (t < p.T) {
            const double step = p.eta * static_cast<double>(p.n_eff) / p.zeta * f;
            for (std::uint32_t i = 0; i < n; ++i) tmp[i] = x[i] - step * u[i];
            domains::project(p.dom, tmp, x);
        }
        return f;
    }

    DPR_HD static void diagnostics(const Params&, const double* s, double* out) { out[0] = s[0]; }
};

} // namespace dpr::learners
