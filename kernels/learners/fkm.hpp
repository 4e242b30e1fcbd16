#pragma once
// fkm: Flaxman-Kalai-McMahan bandit gradient descent (docs/spec/afkt23.md §C8 "FKM"), the projection-based
// reference of ENV21's experiments, on the decision sets of kernels/domains/ that have a cheap Euclidean
// projection (simplex, l1 ball, l2 ball, cube, k-subsets; the graph sets are refused: that is what the
// projection-free learners are for). Non-private.
//
//   x_1 = the centre of D (domains::centre)
//   round t:  u_t = the direction of private-bandit-fw (the same stream: Exploration, round t; in the
//   subspace
//             parallel to aff(D)); play x_t + zeta u_t, charged f_t(x_t + zeta u_t)
//             g_t = (n / zeta) f_t(x_t + zeta u_t) u_t            (n = dim aff(D); unbiased for grad
//             f^_t(x_t)) x_{t+1} = Proj_D(x_t - eta g_t)
// Tuning (OGD on the smoothed losses f^_t, L-Lipschitz with a zero in D so |f| <= C = L (D + zeta) at the
// plays):
// ||g_t|| <= G = n C / zeta, eta = D / (G sqrt T) and zeta = D n^{1/2} / T^{1/4}, so that
//   Regret <= (3/2) G D sqrt T + 2 T zeta L = O(n^{1/2} T^{3/4})        (the C8 rate; keys `eta`, `zeta`
//   override).
// Diagnostics: outside_max = max_t dist(x_t + zeta u_t, D) (exact: D has a projection here). `shrink = true`:
// App. D, as in private-bandit-fw -- f_t is queried at c + (1 - zeta/r)(x_t + zeta u_t - c), inside D.
//
// Written over a team (kInstanceLanes = true): instance lanes run 16 instances per SIMD step, coordinate
// lanes split n over the lanes, a GPU thread or warp runs an instance. The direction's normals are those of
// private-bandit-fw's scalar draw (one Philox block per coordinate, Box-Muller on its two 53-bit uniforms; in
// float runs the two 24-bit uniforms of words 0 and 2), the projections those of
// kernels/domains/team_ops.hpp, and the state is in the run's precision: in double a one-lane team gives the
// bits of the scalar algorithm above, step for step (tests/learners/test_env21.cpp).

#include "kernels/domains/domain.hpp"
#include "kernels/domains/team_ops.hpp"
#include "kernels/learners/common.hpp"
#include "kernels/learners/private_bandit_fw.hpp"

namespace dpr::learners {

struct Fkm : Learner<Geometry::Polytope> {
    static constexpr const char* kName = "fkm";
    static constexpr unsigned kLossFamilies = bco_detail::kFamilies;
    static constexpr bool kInstanceLanes = true;
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

    /// The rows of the state array (precision R, n each): x, u, the played point, the projection's output.
    enum StateRow : int { kX = 0, kU = 1, kPlayed = 2, kProj = 3, kRows = 4 };
    DPR_HD static WorkspaceSpec workspace(const Params& p) {
        return WorkspaceSpec{}.add_real(kRows, p.dom.n).scalars(1);
    }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        const V c(static_cast<R>(
            domains::centre_value(p.dom))); // x_1 = the centre (the sets FKM runs on are not graphs)
        team.for_each(p.dom.n, [&](auto i) {
            team.store(ws.real[0].row(kX), i, c);
            for (int r = kU; r < kRows; ++r) team.store(ws.real[0].row(r), i, V(R(0)));
        });
        if (team.rank() == 0) team.put(ws.scalars, 0, typename Team::template uni<double>(0.0));
        team.sync();
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>>
    round(const Params& p, const Team& team, const WS& ws, std::uint64_t t, const Row& row) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using UR = typename Team::template uni<R>;
        using UD = typename Team::template uni<double>;
        const std::uint32_t n = p.dom.n;
        const auto X = ws.real[0].row(kX), U = ws.real[0].row(kU), P = ws.real[0].row(kPlayed),
                   Q = ws.real[0].row(kProj);
        // u_t = P z / ||P z|| (private-bandit-fw's draw), the played point x_t + zeta u_t (App. D: shrunk
        // towards the centre) and f_t there.
        const UR inv =
            bco_detail::team_direction<false>(team, p.dom, t, U, nullptr); // no graph sets, no scratch
        const V c0(static_cast<R>(domains::centre_value(p.dom)));
        const UR f = bco_detail::play_and_query(
            team, p.dom, p.loss, p.zeta, p.alpha, inv, U, X, P, [&](auto) { return c0; }, row);
        const UR out = vsqrt(domains::project_team(team, p.dom, P, Q)); // dist(x_t + zeta u_t, D)
        if (team.rank() == 0) team.put(ws.scalars, 0, vmax(team.get(ws.scalars, 0), convert<double>(out)));
        if (t < p.T) {
            // x_{t+1} = Proj_D(x_t - eta g_t), g_t = (n / zeta) f u_t.
            const UR step = UR(static_cast<R>(p.eta * static_cast<double>(p.n_eff) / p.zeta)) * f;
            team.for_each(n, [&](auto i) { team.store(Q, i, team.load(X, i) - V(step) * team.load(U, i)); });
            domains::project_team(team, p.dom, Q, X);
        }
        team.sync();
        const UD charged = convert<double>(f);
        return {charged, charged};
    }

    DPR_HD static void diagnostics(const Params&, const double* s, double* out) { out[0] = s[0]; }
};

} // namespace dpr::learners
