// The exact privacy-loss check of the Laplace tree (docs/spec/checks.md §3.1): for loss sequences that
// differ at one round t0 by a vector Delta with ||Delta||_1 <= Delta_1, the log-density ratio of the released node
// values v (every complete node a released prefix L~_0 .. L~_{T-1} uses) under the two sequences is
//     sum over released nodes containing t0, over coordinates i, of (|v_i - a'_i| - |v_i - a_i|) / lambda,
// a, a' the nodes' exact sums under each sequence, v drawn from the mechanism (a + the node noise of
// mech::node_noise). Evaluated on simulated releases of dp-ftrl-experts' tree at the lambda each calibration gives,
// it never exceeds the eps the learner reports; and a planted tree with half that lambda does exceed it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "host/config/component_info.hpp"
#include "kernels/learners/dp_ftrl_experts.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"
#include "learners/simulate.hpp"

namespace dpr {
namespace {

/// The largest privacy loss over `reps` simulated releases and every t0, for the worst replace-one change of the
/// experts loss set [0,1]^d (Delta = the all-ones vector, ||Delta||_1 = d = Delta_1) with node scale `lambda`.
double max_privacy_loss(std::uint32_t d, std::uint64_t T, double lambda, std::uint32_t reps) {
    const std::uint32_t k = mech::tree_depth(T);
    double worst = 0.0;
    for (std::uint32_t rep = 0; rep < reps; ++rep) {
        const mech::TreeNoise tn{mech::TreeVariant::Binary, mech::NodeNoise::Laplace, lambda, T, 77, 0, rep};
        for (std::uint64_t t0 = 1; t0 <= T; ++t0) {
            double loss = 0.0;
            for (std::uint32_t j = 0; j <= k; ++j) {
                const std::uint64_t m = (t0 - 1) >> j;           // the level-j node holding leaf t0
                if (((m + 1) << j) > T - 1) continue;            // complete within prefix T - 1: released, else not
                for (std::uint32_t i = 0; i < d; ++i) {
                    const double a = 0.0, a2 = 1.0;              // the node's sums differ by Delta_i = 1
                    const double v = a + mech::node_noise<double>(tn, j, m, i);
                    loss += (std::fabs(v - a2) - std::fabs(v - a)) / lambda;
                }
            }
            worst = std::max(worst, loss);
        }
    }
    return worst;
}

TEST(TreePrivacyLoss_Stat, NeverExceedsTheReportedEpsUnderEitherCalibration) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    for (std::uint64_t T : {64u, 100u, 128u})
        for (double calibration : {0.0, 1.0}) { // paper, strict
            const std::uint32_t d = 2;
            Problem pb;
            pb.d = d;
            pb.T = T;
            const auto kv = test::key_values(linfo, "dp-ftrl-experts", {{"epsilon", 1.0}, {"calibration", calibration},
                                                                        {"mechanism", 1.0}});
            const auto p = learners::DpFtrlExperts::resolve(kv, pb);
            const double eps = learners::DpFtrlExperts::privacy(p).epsilon;
            EXPECT_LE(eps, 1.0 + 1e-12);
            const double worst = max_privacy_loss(d, T, p.prefix.scale, 400);
            RecordProperty("T" + std::to_string(T) + (calibration == 0.0 ? "_paper" : "_strict"),
                           std::to_string(worst) + " of " + std::to_string(eps));
            EXPECT_LE(worst, eps * (1 + 1e-12)) << "T = " << T << " calibration " << calibration;
            EXPECT_GT(worst, 0.5 * eps) << "the simulation reaches a good part of the bound (power)";
        }
}

TEST(TreePrivacyLoss_Stat, APlantedTreeWithHalfItsScaleExceedsTheClaim) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    Problem pb;
    pb.d = 2;
    pb.T = 64;
    const auto p = learners::DpFtrlExperts::resolve(
        test::key_values(linfo, "dp-ftrl-experts", {{"epsilon", 1.0}, {"calibration", 1.0}, {"mechanism", 1.0}}), pb);
    const double eps = learners::DpFtrlExperts::privacy(p).epsilon;
    EXPECT_GT(max_privacy_loss(2, 64, 0.5 * p.prefix.scale, 400), eps) << "halved noise must be caught";
}

} // namespace
} // namespace dpr
