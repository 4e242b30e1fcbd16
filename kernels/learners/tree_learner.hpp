#pragma once
// Pieces shared by learners built on tree-aggregated prefix sums L~_0 .. L~_{T-1} (AS17 Alg. 1 + 2;
// docs/spec/as17.md §A1, §A2): resolving the tree keys into a node law and scale, and the privacy report.
// The guarantee is the tree's (kernels/mechanisms/calibration.hpp tree_guarantee, with L~_T never
// released), whatever the learner does with the sums (post-processing).
#include <cmath>
#include <cstdint>

#include "kernels/learners/common.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace dpr::learners {

/// The node law, tree variant, calibration and node scale of a DP-FTRL learner L whose keys are
/// tree = padded|binary, noise = laplace|gaussian|none, calibration = paper|strict and node_scale
/// (indices L::kTree, L::kNoise, L::kCalibration, L::kNodeScale). epsilon = inf without node_scale
/// turns the noise off (the learner is then its non-private twin). Scale from calibration.hpp with
/// the learner's loss-set norms; only L~_0 .. L~_{T-1} are released.
struct TreeSettings {
    mech::TreeVariant tree;
    mech::NodeNoise noise;
    mech::Calibration calibration;
    double scale; ///< per-node Laplace b or Gaussian sigma (0 when the noise is off)
};

template <class L>
TreeSettings resolve_tree_settings(const KeyValues& kv, double epsilon, double delta, const mech::LossSetNorms& norms,
                                   std::uint64_t T) {
    TreeSettings s{};
    s.tree = static_cast<int>(kv.get(L::kTree, 0)) == 0 ? mech::TreeVariant::Padded : mech::TreeVariant::Binary;
    const int noise = static_cast<int>(kv.get(L::kNoise, 0));
    s.noise = noise == 0 ? mech::NodeNoise::Laplace : noise == 1 ? mech::NodeNoise::Gaussian : mech::NodeNoise::None;
    s.calibration = static_cast<int>(kv.get(L::kCalibration, 0)) == 0 ? mech::Calibration::Paper
                                                                       : mech::Calibration::Strict;
    if (std::isinf(epsilon) && !kv.given[L::kNodeScale]) s.noise = mech::NodeNoise::None;
    if (s.noise == mech::NodeNoise::None) s.scale = 0.0;
    else if (kv.given[L::kNodeScale]) s.scale = kv.num[L::kNodeScale];
    else s.scale = mech::node_scale(s.noise, s.calibration, epsilon, delta, norms, T, /*release_final=*/false);
    return s;
}

/// Refuses a node scale above mech::kMaxNoiseScale (its noise could not be computed in float, and it would make
/// every play random): p.scale of L's resolved Params. `key` is the key that set it (epsilon, delta or
/// node_scale; for FTPL possibly reg_constant), `how` says how it follows from the key.
inline bool check_node_scale(double scale, const char* key, const char* how, Diagnostic& diag) {
    if (scale <= mech::kMaxNoiseScale) return true;
    return diag.fail(key,
                     "gives a node noise scale of %g (%s), above %g, the largest the engine computes with: its draws "
                     "would overflow float arithmetic and every play would be random",
                     scale, how, mech::kMaxNoiseScale);
}

/// `mechanism` describes the noise for run.json; nullptr = the tree variant's name.
inline PrivacyReport tree_privacy_report(mech::NodeNoise noise, mech::TreeVariant tree, mech::Calibration cal,
                                         double scale, double delta, const mech::LossSetNorms& norms,
                                         std::uint64_t T, const char* mechanism = nullptr) {
    PrivacyReport r;
    r.calibration = cal == mech::Calibration::Paper ? "paper" : "strict";
    if (noise == mech::NodeNoise::None) {
        r.mechanism = "none (noise off)";
        return r;
    }
    const mech::Guarantee g = mech::tree_guarantee(noise, scale, delta, norms, T, /*release_final=*/false);
    r.epsilon = g.epsilon;
    r.delta = g.delta;
    r.accountant = g.accountant;
    r.gdp_mu = g.gdp_mu;
    r.mechanism = mechanism ? mechanism
                  : tree == mech::TreeVariant::Padded ? "padded tree aggregation (AS17 Alg. 2)"
                                                      : "binary tree aggregation (DNPR10 / CSS11)";
    r.noise_scale = scale;
    return r;
}

} // namespace dpr::learners
