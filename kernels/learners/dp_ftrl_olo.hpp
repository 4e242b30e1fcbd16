#pragma once
// DP-FTRL for online linear optimisation over the sphere and the cube: Agarwal & Singh 2017
// Algorithm 1 + Algorithm 2 with R(x) = ||x||_2^2 (ALGORITHMS.md A1, Cor. 3.2 table rows "Sphere" and
// "Cube"):
//   L~_{t-1} = L_{t-1} + Z_{t-1}    (tree-aggregated prefix sum; Z = node noise over S_{t-1} + padding)
//   x_t      = argmin_{x in X} eta <x, L~_{t-1}> + ||x||_2^2 = Proj_X(-(eta/2) L~_{t-1})
//     dp-ftrl-sphere  X = Y = unit l2 ball,        eta = 1/sqrt(T),  x_t = y / max(1, ||y||_2)
//     dp-ftrl-cube    X = [-1,1]^d, Y = unit l1 ball, eta = sqrt(d/T), x_t = clip(y, -1, 1)
//   with y = -(eta/2) L~_{t-1}, charged the expected loss <l_t, x_t> (§0.3 item 1; deterministic play
//   given the noise, so realised = expected).
// Node noise Lap^d(lambda) (pure eps-DP, Lemma 3.3) or N(0, sigma^2 I) ((eps, delta)-DP, Thm A.1),
// calibrated by kernels/mechanisms/calibration.hpp with the loss-set norms of the table:
//   sphere ||Y||_1 = sqrt(d), ||Y||_2 = 1;  cube ||Y||_1 = ||Y||_2 = 1                   (calibration paper)
//   both symmetric: replace-one Delta_1 = 2 ||Y||_1, Delta_2 = 2                        (calibration strict)
// so paper Laplace: lambda = sqrt(d) ceil(log2 T)/eps (sphere), ceil(log2 T)/eps (cube). Because of the
// factor-2 caveat (§4 item 5) the paper calibration provides 2 eps, not eps; privacy() reports the
// guarantee the noise actually gives (tree_guarantee), so "paper" points show epsilon = 2 x the key.
// Only L~_0 .. L~_{T-1} are released (FTRL never uses L~_T): h' = ceil(log2 T) (§1.4).
//
// Regret (Thm 3.4 with the table's explicit constants; padded tree, oblivious adversary):
//   Regret_T <= D_R/eta + 2 eta sum_t max_x (||l_t||*)^2 + D_noise,   (||l||*)^2 = ||l||_2^2/2 <= 1/2
//   sphere: 2 sqrt(T) + D_noise, D_noise = 2 E||Z||_2 <= 2 sqrt(2 k d) lambda  (Gaussian: 2 sqrt(k d) sigma)
//   cube:   2 sqrt(dT) + D_noise, D_noise = 2 E||Z||_1 <= 2 d sqrt(2 k) lambda  (Gaussian: 2 d sqrt(k) sigma)
// With noise off (epsilon = inf or noise = "none") every operation equals ftrl-l2-ball / ftrl-l2-cube
// (kernels/learners/ftrl_l2.hpp, LazyL2Step): bitwise identical regret.
//
// Per-instance state (ws): L[d] = L_{t-1} exactly, Z[d] = the tree part of the noise on prefix t-1,
// maintained incrementally (mech::tree_noise_step), then ws[2d] = max_{s <= t-1} ||Z_s||_inf (the
// "max_noise_inf" diagnostic, written by team lane 0 only). Padding draws are fresh each round.
#include <array>
#include <cmath>
#include <cstdint>

#include "kernels/learners/common.hpp"
#include "kernels/learners/tree_learner.hpp"
#include "kernels/learners/ftrl_l2.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace dpr::learners {

template <Geometry G>
struct DpFtrlOlo {
    static_assert(G == Geometry::Ball || G == Geometry::Cube, "dp-ftrl-sphere / dp-ftrl-cube");
    static constexpr bool kSphere = G == Geometry::Ball;
    static constexpr const char* kName = kSphere ? "dp-ftrl-sphere" : "dp-ftrl-cube";
    static constexpr Geometry kGeometry = G;
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, "",
         kSphere
             ? "privacy parameter eps > 0 of the whole output sequence; inf = no noise (equals ftrl-l2-ball)"
             : "privacy parameter eps > 0 of the whole output sequence; inf = no noise (equals ftrl-l2-cube)",
         true},
        {"delta", KeyType::Real, "0", 0.0, 1.0, "",
         "privacy parameter delta in [0,1); needed by noise = gaussian"},
        {"eta", KeyType::Real, "auto", 0.0, kInf, "",
         kSphere ? "learning rate; auto = 1/sqrt(T) (ALGORITHMS.md A1 table, sphere row)"
                 : "learning rate; auto = sqrt(d/T) (ALGORITHMS.md A1 table, cube row)",
         true},
        {"tree", KeyType::Choice, "padded", 0, 1, "padded|binary",
         "padded = AS17 Alg. 2 (identically distributed noise, §1.5); binary = standard mechanism (§1.4)"},
        {"noise", KeyType::Choice, "laplace", 0, 2, "laplace|gaussian|none",
         "node noise: Laplace (eps-DP) or Gaussian ((eps,delta)-DP); none = non-private control"},
        {"calibration", KeyType::Choice, "paper", 0, 1, "paper|strict",
         kSphere ? "paper: lambda = sqrt(d) ceil(log2 T)/eps (gives 2 eps); strict: Delta_1 = 2 sqrt(d), h'"
                 : "paper: lambda = ceil(log2 T)/eps (gives 2 eps); strict: Delta_1 = 2, h'"},
        {"node_scale", KeyType::Real, "auto", 0.0, kInf, "",
         "override the node noise scale (Laplace b / Gaussian sigma); the reported eps follows from it",
         true},
    };
    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    static constexpr int kDelta = key_index(kKeys, "delta");
    static constexpr int kEta = key_index(kKeys, "eta");
    static constexpr int kTree = key_index(kKeys, "tree");
    static constexpr int kNoise = key_index(kKeys, "noise");
    static constexpr int kCalibration = key_index(kKeys, "calibration");
    static constexpr int kNodeScale = key_index(kKeys, "node_scale");

    static constexpr std::array<const char*, 1> kDiagnostics = {"max_noise_inf"};

    struct Params {
        std::uint32_t d;
        std::uint64_t T;
        double eta;
        double epsilon, delta;
        mech::TreeVariant tree;
        mech::NodeNoise noise;
        mech::Calibration calibration;
        double scale; ///< per-node Laplace b or Gaussian sigma (0 when noise is off)
    };

    /// Loss-set norms of the A1 table (calibration.hpp): sphere ||Y||_1 = sqrt(d), ||Y||_2 = 1; cube 1, 1;
    /// replace-one sensitivities twice those (symmetric Y).
    static mech::LossSetNorms norms(std::uint32_t d) {
        return kSphere ? mech::sphere_loss_norms(d) : mech::cube_loss_norms();
    }
    static double default_eta(std::uint32_t d, std::uint64_t T) { return l2_default_eta<G>(d, T); }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        p.d = pb.d;
        p.T = pb.T;
        p.eta = kv.get(kEta, default_eta(pb.d, pb.T));
        p.epsilon = kv.num[kEpsilon];
        p.delta = kv.get(kDelta, 0.0);
        const TreeSettings ts = resolve_tree_settings<DpFtrlOlo>(kv, p.epsilon, p.delta, norms(p.d), p.T);
        p.tree = ts.tree;
        p.noise = ts.noise;
        p.calibration = ts.calibration;
        p.scale = ts.scale;
        return p;
    }

    static bool check(const KeyValues& kv, const Problem&, Diagnostic& diag) {
        const bool gaussian = static_cast<int>(kv.get(kNoise, 0)) == 1;
        if (gaussian && !std::isinf(kv.num[kEpsilon]) && !kv.given[kNodeScale] &&
            !(kv.get(kDelta, 0.0) > 0.0))
            return diag.fail("delta", "noise = \"gaussian\" needs delta in (0, 1) (got %g)",
                             kv.get(kDelta, 0.0));
        return true;
    }

    static PrivacyReport privacy(const Params& p) {
        return tree_privacy_report(p.noise, p.tree, p.calibration, p.scale, p.delta, norms(p.d), p.T);
    }

    DPR_HD static std::uint64_t workspace(const Params& p) { return 2 * std::uint64_t{p.d} + 1; } // L, Z, max ||Z||_inf

    DPR_HD static mech::TreeNoise tree_noise(const Params& p, const InstanceCtx& c) {
        return mech::TreeNoise{p.tree, p.noise, p.scale, p.T, c.seed, c.stream, c.instance};
    }

    template <class Team>
    DPR_HD static void init(const Params& p, const InstanceCtx&, Team& team, double* ws) {
        // L_0 = 0, the tree part of Z_0 is empty (no set bits in 0), max ||Z||_inf = 0.
        team.for_each(p.d, [&](std::uint32_t i) { ws[i] = 0.0; ws[p.d + i] = 0.0; });
        if (team.rank() == 0) ws[2 * std::uint64_t{p.d}] = 0.0;
        team.sync();
    }

    /// x_t (call before round(t)): Proj_X(-(eta/2) L~_{t-1}), with the same noise round(t) uses.
    template <class Team>
    DPR_HD static void play(const Params& p, const InstanceCtx& c, Team& team, const double* ws,
                            std::uint64_t t, double* x) {
        const mech::TreeNoise tn = tree_noise(p, c);
        const bool noisy = p.noise != mech::NodeNoise::None;
        const double* L = ws;
        const double* Z = ws + p.d;
        lazy_l2_point<G>(
            team, p.d, 0.5 * p.eta,
            [&](std::uint32_t i) { return noisy ? L[i] + (Z[i] + mech::padding_noise(tn, t - 1, i)) : L[i]; },
            x);
    }

    template <class Team>
    DPR_HD static RoundResult round(const Params& p, const InstanceCtx& c, Team& team, double* ws,
                                    std::uint64_t t, const double* loss) {
        double* L = ws;
        double* Z = ws + p.d;
        const mech::TreeNoise tn = tree_noise(p, c);
        const bool noisy = p.noise != mech::NodeNoise::None;
        const bool advance_tree = noisy && t < p.T; // prefix t is needed only for rounds t+1 <= T
        LazyL2Step<G> step(0.5 * p.eta);
        double zmax = 0.0;
        team.for_each(p.d, [&](std::uint32_t i) {
            const double li = loss[i];
            if (noisy) {
                const double z = Z[i] + mech::padding_noise(tn, t - 1, i); // Z_{t-1}
                zmax = dmax(zmax, std::fabs(z));
                step.push(L[i] + z, li);
                if (advance_tree) Z[i] = mech::tree_noise_step(tn, t, i, Z[i]);
            } else {
                step.push(L[i], li); // exactly ftrl-l2's operations
            }
            L[i] += li;
        });
        const double e = step.finish(team);
        if (noisy) {
            const double m = team.max(zmax);
            if (team.rank() == 0) ws[2 * std::uint64_t{p.d}] = dmax(ws[2 * std::uint64_t{p.d}], m);
        }
        return RoundResult{e, e};
    }

    /// max_{t=1..T} ||Z_{t-1}||_inf, Z_{t-1} = L~_{t-1} - L_{t-1} the noise x_t was computed from
    /// (ALGORITHMS.md A1 "What to record"); 0 with noise off.
    DPR_HD static void diagnostics(const Params& p, const double* ws, double* out) { out[0] = ws[2 * std::uint64_t{p.d}]; }
};

using DpFtrlSphere = DpFtrlOlo<Geometry::Ball>;
using DpFtrlCube = DpFtrlOlo<Geometry::Cube>;

} // namespace dpr::learners
