#pragma once
// The privacy report of a learner whose whole output sequence is a post-processing of tree-aggregated
// prefix sums L~_0 .. L~_{T-1} (AS17 Lemma 3.3 / Thm A.1; ALGORITHMS.md A1, A2): the guarantee is the
// tree's (kernels/mechanisms/calibration.hpp tree_guarantee, with L~_T never released), whatever the
// learner does with the sums. Shared by dp-ftrl-experts, dp-ftrl-sphere/-cube and dp-ftpl-*.
#include <cstdint>

#include "kernels/learners/common.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace dpr::learners {

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
    r.mechanism = mechanism ? mechanism
                  : tree == mech::TreeVariant::Padded ? "padded tree aggregation (AS17 Alg. 2)"
                                                      : "binary tree aggregation (DNPR10 / CSS11)";
    r.noise_scale = scale;
    return r;
}

} // namespace dpr::learners
