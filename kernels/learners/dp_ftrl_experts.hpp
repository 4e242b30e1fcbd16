#pragma once
// DP-FTRL for prediction with expert advice: Agarwal & Singh 2017 Algorithm 1 + Algorithm 2 with the
// entropic regulariser (Cor. 3.2, "Experts" row; docs/spec/as17.md §A1):
//   L~_{t-1} = L_{t-1} + Z_{t-1}   (tree-aggregated prefix sum; Z = node noise over S_{t-1} + padding)
//   x_t(i)  = exp(-eta L~_{t-1}(i)) / sum_j exp(-eta L~_{t-1}(j))
// charged the expected loss <l_t, x_t> (§0.3 item 1). Node noise Lap^d(lambda) (pure eps-DP, Lemma 3.3)
// or N(0, sigma^2 I) ((eps, delta)-DP, Thm A.1); lambda / sigma from the calibration of
// kernels/mechanisms/calibration.hpp with the experts loss set Y = [0,1]^d:
//   ||Y||_1 = d, ||Y||_2 = sqrt(d), replace-one Delta_1 = d, Delta_2 = sqrt(d) (§0.4).
// Only L~_0 .. L~_{T-1} are released (FTRL never uses L~_T), so h' = ceil(log2 T) (§1.4).
// With noise off (epsilon = inf or noise = "none") every operation equals Hedge's with the same eta:
// the two produce bitwise identical regret (tests/engine/test_engine.cpp, DpFtrlWithNoiseOffEqualsHedgeExactly).
//
// Per-instance state: L[d] = L_{t-1} exactly (double); the level cache of the tree noise (k + 1 rows of d,
// kernels/mechanisms/noisy_prefix.hpp: the tree part of Z equals the regenerated definition bitwise) and a
// row of scores (the run's precision). Padding draws are fresh each round (one uniform stream per
// coordinate and round carries the node and the padding, stream layout 2).
#include <cmath>
#include <cstdint>

#include "kernels/learners/common.hpp"
#include "kernels/learners/softmax.hpp"
#include "kernels/learners/tree_learner.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/noisy_prefix.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace dpr::learners {

struct DpFtrlExperts {
    static constexpr const char* kName = "dp-ftrl-experts";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, "",
         "privacy parameter eps > 0 of the whole output sequence; inf = no noise: then equal to hedge bit for bit "
         "given the same eta (the automatic etas differ: sqrt(ln d/(2T)) here, sqrt(8 ln d/T) for hedge)",
         true},
        {"delta", KeyType::Real, "0", 0.0, 1.0, "",
         "privacy parameter delta in [0,1); needed by noise = gaussian", false, /*max_exclusive=*/true},
        {"eta", KeyType::Real, "auto", 0.0, kInf, "",
         "learning rate; auto = sqrt(ln d / (2T)) (AS17 Cor. 3.2, experts; docs/spec/as17.md §A1)", true},
        {"tree", KeyType::Choice, "padded", 0, 1, "padded|binary",
         "padded = AS17 Alg. 2 (identically distributed noise, §1.5); binary = standard mechanism (§1.4)"},
        {"noise", KeyType::Choice, "laplace", 0, 2, "laplace|gaussian|none",
         "node noise: Laplace (eps-DP) or Gaussian ((eps,delta)-DP); none = non-private control"},
        {"calibration", KeyType::Choice, "paper", 0, 1, "paper|strict",
         "paper: lambda = ||Y||_1 ceil(log2 T)/eps; strict: exact replace-one sensitivity and h' (§1.5)"},
        {"node_scale", KeyType::Real, "auto", 0.0, mech::kMaxNoiseScale, "",
         "override the node noise scale (Laplace b / Gaussian sigma); the reported eps is then computed from it",
         true},
    };
    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    static constexpr int kDelta = key_index(kKeys, "delta");
    static constexpr int kEta = key_index(kKeys, "eta");
    static constexpr int kTree = key_index(kKeys, "tree");
    static constexpr int kNoise = key_index(kKeys, "noise");
    static constexpr int kCalibration = key_index(kKeys, "calibration");
    static constexpr int kNodeScale = key_index(kKeys, "node_scale");

    struct Params {
        std::uint32_t d;
        std::uint64_t T;
        double eta;
        double epsilon, delta;
        mech::TreeVariant tree;
        mech::NodeNoise noise;
        mech::Calibration calibration;
        double scale; ///< per-node Laplace b or Gaussian sigma (0 when noise is off)
        std::uint8_t planted; ///< 0; a planted bug of the audit suite otherwise (plant() below)
    };

    /// Experts loss set [0,1]^d (docs/spec/model.md §0.2, §0.4): ||Y||_1 = Delta_1 = d, ||Y||_2 = Delta_2 = sqrt(d).
    static mech::LossSetNorms norms(std::uint32_t d) { return mech::experts_loss_norms(d); }
    static double default_eta(std::uint32_t d, std::uint64_t T) {
        return std::sqrt(std::log(static_cast<double>(d)) / (2.0 * static_cast<double>(T)));
    }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        p.d = pb.d;
        p.T = pb.T;
        p.eta = kv.get(kEta, default_eta(pb.d, pb.T));
        p.epsilon = kv.num[kEpsilon];
        p.delta = kv.get(kDelta, 0.0);
        const TreeSettings ts = resolve_tree_settings<DpFtrlExperts>(kv, p.epsilon, p.delta, norms(p.d), p.T);
        p.tree = ts.tree;
        p.noise = ts.noise;
        p.calibration = ts.calibration;
        p.scale = ts.scale;
        return p;
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        const bool gaussian = static_cast<int>(kv.get(kNoise, 0)) == 1;
        if (gaussian && !std::isinf(kv.num[kEpsilon]) && !(kv.get(kDelta, 0.0) > 0.0))
            return diag.fail("delta", "noise = \"gaussian\" needs delta in (0, 1) (got %g)", kv.get(kDelta, 0.0));
        if (pb.d < 2) return diag.fail("d", "dp-ftrl-experts needs d >= 2 experts (got %u)", pb.d);
        return check_node_scale(resolve(kv, pb).scale, kv.given[kNodeScale] ? "node_scale" : "epsilon",
                                "lambda = ||Y||_1 ceil(log2 T) / eps, or the Gaussian calibration", diag);
    }

    static PrivacyReport privacy(const Params& p) {
        return tree_privacy_report(p.noise, p.tree, p.calibration, p.scale, p.delta, norms(p.d), p.T);
    }

    static constexpr bool kInstanceLanes = true;

    /// The planted bugs of the audit suite (common.hpp Planted; docs/AUDITS.md): the tree's three.
    static bool plant(Params& p, Planted bug) {
        if (p.noise == mech::NodeNoise::None) return false;
        switch (bug) {
        case Planted::HalfNoise: p.scale /= 2.0; return true;
        case Planted::LeafWithoutNoise: p.planted = mech::kPlantLeafWithoutNoise; return true;
        case Planted::ReusedNoise: p.planted = mech::kPlantReusedNoise; return true;
        default: return false;
        }
    }

    DPR_HD static mech::TreeNoise tree_noise(const Params& p, std::uint32_t seed = 0, std::uint32_t stream = 0,
                                             std::uint32_t instance = 0) {
        return mech::TreeNoise{p.tree, p.noise, p.scale, p.T, seed, stream, instance, p.planted};
    }

    /// L (double), the level cache (k + 1 rows, none with the noise off), the scores.
    DPR_HD static WorkspaceSpec workspace(const Params& p) {
        return WorkspaceSpec{}.add_double(1, p.d).add_real(1, p.d).add_real(mech::level_rows(tree_noise(p)), p.d);
    }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        // L_0 = 0 and the tree part of Z_0 is empty (no set bits in 0): all rows zero.
        using D = typename Team::template lanes<double>;
        using V = typename Team::template lanes<typename Team::real>;
        const std::uint32_t rows = mech::level_rows(tree_noise(p));
        team.for_each(p.d, [&](auto i) {
            team.store(ws.dbl[0], i, D(0.0));
            for (std::uint32_t j = 0; j < rows; ++j) team.store(ws.real[1].row(j), i, V(0));
        });
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t t, const Row& row) {
        using R = typename Team::real;
        const auto L = ws.dbl[0];
        const mech::TreeNoise tn = tree_noise(p);
        const mech::TreeRound tr = mech::tree_round(tn, t);
        const bool noisy = p.noise != mech::NodeNoise::None;
        const auto e = softmax_experts(team, p.d, p.eta, ws.real[0], row, [&](auto i) {
            const auto l = convert<R>(team.load(L, i));
            return noisy ? l + mech::noisy_prefix(team, tn, tr, ws.real[1], i) : l; // L~_{t-1} = L_{t-1} + Z_{t-1}
        }, L);
        return {e, e};
    }
};

} // namespace dpr::learners
