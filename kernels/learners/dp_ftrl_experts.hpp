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

#include "kernels/learners/common.hpp"
#include "kernels/learners/softmax.hpp"
#include "kernels/learners/tree_learner.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/noisy_prefix.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace dpr::learners {

struct DpFtrlExperts : Learner<Geometry::Simplex>, As17Ftrl<DpFtrlExperts> {
    using Prefix = PrefixKeys<PrefixLaws::LaplaceGaussian, mech::TreeVariant::Padded, /*Lattice=*/true,
                              /*GaussianLattice=*/true>;
    static constexpr const char* kName = "dp-ftrl-experts";
    /// The paper's calibration gives exactly the requested eps on the experts set (||Y||_1 = 1 is the add/remove
    /// sensitivity and the tree releases ceil(log2 T) levels: docs/spec/as17.md §A1), so it stays the default.
    static constexpr mech::Calibration kDefaultCalibration = mech::Calibration::Paper;
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, "",
         "privacy parameter eps > 0 of the whole output sequence; inf = no noise: then equal to hedge bit "
         "for bit given the same eta (the automatic etas differ: sqrt(ln d/(2T)) here, sqrt(8 ln d/T) for "
         "hedge)",
         true},
        {"delta", KeyType::Real, "0", 0.0, 1.0, "",
         "privacy parameter delta in [0,1); needed by noise = gaussian and discrete-gaussian", false,
         /*max_exclusive=*/true},
        {"eta", KeyType::Real, "auto", 0.0, kInf, "",
         "learning rate; auto = sqrt(ln d / (2T)) (AS17 Cor. 3.2, experts; docs/spec/as17.md §A1)", true},
        Prefix::kMechanism,
        Prefix::kNoise,
        {"calibration", KeyType::Choice, "paper", 0, 1, "paper|strict",
         "paper: lambda = ||Y||_1 ceil(log2 T)/eps; strict: exact replace-one sensitivity and h' (§1.5)"},
        Prefix::kNodeScale,
        Prefix::kBltBuffers,
    };

    /// Experts loss set [0,1]^d (docs/spec/model.md §0.2, §0.4): ||Y||_1 = Delta_1 = d, ||Y||_2 = Delta_2 = sqrt(d).
    static mech::LossSetNorms norms(std::uint32_t d) { return mech::experts_loss_norms(d); }
    static double default_eta(std::uint32_t d, std::uint64_t T) {
        return std::sqrt(std::log(static_cast<double>(d)) / (2.0 * static_cast<double>(T)));
    }

    // Params, resolve() and privacy(): As17Ftrl (tree_learner.hpp).
    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (!check_noise_keys(kv, diag)) return false;
        if (pb.d < 2) return diag.fail("d", "dp-ftrl-experts needs d >= 2 experts (got %u)", pb.d);
        return check_scale(kv, pb, diag) && check_lattice(kv, pb, diag);
    }

    static constexpr bool kInstanceLanes = true;

    /// L (double), the level cache (k + 1 rows, none with the noise off), the scores.
    DPR_HD static WorkspaceSpec workspace(const Params& p) {
        return WorkspaceSpec{}.add_double(1, p.d).add_real(1, p.d).add_real(p.prefix.rows(), p.d);
    }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        init_sum_and_prefix(p.prefix, p.d, team, ws, 1, 0); // L_0 = 0, the state of prefix 0, diagnostics 0
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t t, const Row& row) {
        using R = typename Team::real;
        const auto L = ws.dbl[0];
        const mech::PrefixMechanism::Step st = p.prefix.step(t);
        const bool noisy = p.prefix.on();
        const auto e = softmax_experts(
            team, p.d, p.eta, ws.real[0], row,
            [&](auto i) { // L~_{t-1} = L_{t-1} + Z_{t-1}
                const auto l = team.load(L, i);
                return noisy ? p.prefix.release(team, st, ws.real[1], i, l).value : convert<R>(l);
            },
            L, [&](auto i, auto l, auto loss) { return p.prefix.accumulate(team, st, i, l, loss); });
        return {e, e};
    }
};

} // namespace dpr::learners
