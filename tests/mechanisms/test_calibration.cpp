// Tree-noise calibration and the reported guarantee (docs/spec/model.md §1.1, §1.2, §1.4, §1.5;
// docs/spec/checks.md §4.5; docs/ARCHITECTURE.md §3). Hand-computed values are written out with their
// arithmetic; the depth h' is checked against a brute-force count of released nodes per leaf.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include <gtest/gtest.h>

#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

using namespace dpr;
using namespace dpr::mech;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
bool same_name(const char* a, const char* b) {
    return std::strcmp(a, b) == 0;
}
} // namespace

TEST(Calibration, LevelsReleasedTable) {
    struct Row {
        std::uint64_t T;
        std::uint32_t without_final, with_final;
    };
    // ceil(log2 T) / floor(log2 T) + 1  (§1.4)
    for (const Row& r : {Row{1, 0, 1}, Row{2, 1, 2}, Row{3, 2, 2}, Row{7, 3, 3}, Row{8, 3, 4},
                         Row{1000, 10, 10}, Row{1024, 10, 11}, Row{1025, 11, 11}}) {
        EXPECT_EQ(levels_released(r.T, false), r.without_final) << "T=" << r.T;
        EXPECT_EQ(levels_released(r.T, true), r.with_final) << "T=" << r.T;
    }
    static_assert(levels_released(1024, true) == 11, "constexpr");
}

TEST(Calibration, LevelsReleasedIsTheMaxNumberOfReleasedNodesOverALeaf) {
    // h' is what the l1/l2 sensitivities multiply (§1.4 "Privacy"): the largest number of released
    // nodes (over L~_1..L~_{T'}, T' = T - 1 or T) that contain one data leaf 0..T-1, counted by
    // brute force over the node sets S_t.
    for (std::uint64_t T = 1; T <= 300; ++T) {
        for (bool final_release : {false, true}) {
            std::set<std::pair<std::uint32_t, std::uint64_t>> released;
            const std::uint64_t last = final_release ? T : T - 1;
            for (std::uint64_t t = 1; t <= last; ++t)
                for (std::uint32_t j = 0; j < 64; ++j)
                    if ((t >> j) & 1u) released.insert({j, prefix_node(t, j)});
            std::uint32_t worst = 0;
            for (std::uint64_t leaf = 0; leaf < T; ++leaf) {
                std::uint32_t c = 0;
                for (const auto& n : released)
                    c += ((n.second << n.first) <= leaf && leaf < ((n.second + 1) << n.first)) ? 1u : 0u;
                worst = std::max(worst, c);
            }
            ASSERT_EQ(worst, levels_released(T, final_release)) << "T=" << T << " final=" << final_release;
        }
    }
}

TEST(Calibration, LaplaceHandValues) {
    const LossSetNorms experts = experts_loss_norms(10); // y1 = delta1 = 10
    EXPECT_EQ(experts.y1, 10.0);
    EXPECT_EQ(experts.delta1, 10.0);
    EXPECT_DOUBLE_EQ(experts.y2, std::sqrt(10.0));
    // Paper: lambda = ||Y||_1 ceil(log2 T)/eps = 10 * 10 / 0.5 = 200 (T = 1000, release_final ignored).
    EXPECT_DOUBLE_EQ(laplace_node_scale(Calibration::Paper, 0.5, experts, 1000, false), 200.0);
    EXPECT_DOUBLE_EQ(laplace_node_scale(Calibration::Paper, 0.5, experts, 1000, true), 200.0);
    // Strict: lambda = Delta_1 h'/eps: T = 1000 -> h' = 10 either way = 200 (experts: paper = strict).
    EXPECT_DOUBLE_EQ(laplace_node_scale(Calibration::Strict, 0.5, experts, 1000, true), 200.0);
    // T = 1024 with L~_T released: h' = 11 -> 10 * 11 / 0.5 = 220; without: 10 levels -> 200.
    EXPECT_DOUBLE_EQ(laplace_node_scale(Calibration::Strict, 0.5, experts, 1024, true), 220.0);
    EXPECT_DOUBLE_EQ(laplace_node_scale(Calibration::Strict, 0.5, experts, 1024, false), 200.0);
    // Sphere N = 4: ||Y||_1 = 2, Delta_1 = 4 (factor 2, §4 item 5). T = 8: paper 2*3/1 = 6, strict
    // 4*3/1 = 12 (4*4 = 16 with the final release).
    const LossSetNorms sphere = sphere_loss_norms(4);
    EXPECT_DOUBLE_EQ(laplace_node_scale(Calibration::Paper, 1.0, sphere, 8, false), 6.0);
    EXPECT_DOUBLE_EQ(laplace_node_scale(Calibration::Strict, 1.0, sphere, 8, false), 12.0);
    EXPECT_DOUBLE_EQ(laplace_node_scale(Calibration::Strict, 1.0, sphere, 8, true), 16.0);
    EXPECT_DOUBLE_EQ(
        node_scale(NodeNoise::Laplace, Calibration::Strict, 1.0, 0.0, cube_loss_norms(), 8, true), 8.0);
    // T = 1: no level carries data unless L~_1 is released.
    EXPECT_EQ(laplace_node_scale(Calibration::Paper, 1.0, experts, 1, true), 0.0);
    EXPECT_EQ(laplace_node_scale(Calibration::Strict, 1.0, experts, 1, false), 0.0);
    EXPECT_DOUBLE_EQ(laplace_node_scale(Calibration::Strict, 1.0, experts, 1, true), 10.0);
    EXPECT_EQ(node_scale(NodeNoise::None, Calibration::Strict, 1.0, 1e-5, experts, 8, true), 0.0);
}

TEST(Calibration, GaussianHandValues) {
    LossSetNorms y;
    y.y2 = 2.0;
    y.delta2 = 2.0;
    // Paper: sigma = ||Y||_2 k ln(k/delta)/eps, T = 8 (k = 3), delta = 1e-3, eps = 1:
    //   2 * 3 * ln(3000) = 6 * 8.006367567650246 = 48.03820540590148
    EXPECT_NEAR(gaussian_node_scale(Calibration::Paper, 1.0, 1e-3, y, 8, false), 48.03820540590148, 1e-12);
    // k = 1 (T = 2) follows the formula: ||Y||_2 ln(1/delta)/eps = 1 * ln(1e5)/2 = 5.756462732485114.
    LossSetNorms one;
    one.y2 = 1.0;
    EXPECT_NEAR(gaussian_node_scale(Calibration::Paper, 2.0, 1e-5, one, 2, false), 5.756462732485114, 1e-12);
    // k = 0 (T = 1): no node is released before L~_T; the limit 0 (not NaN).
    EXPECT_EQ(gaussian_node_scale(Calibration::Paper, 1.0, 1e-5, y, 1, true), 0.0);
    // Strict: sigma = sqrt(h') Delta_2 sqrt(2 ln(1.25/delta))/eps, T = 8, h' = 3, delta = 1e-3,
    // eps = 0.5: sqrt(3) * 2 * sqrt(2 ln 1250) / 0.5 = 26.164217697237753.
    EXPECT_NEAR(gaussian_node_scale(Calibration::Strict, 0.5, 1e-3, y, 8, false), 26.164217697237753, 1e-11);
    EXPECT_NEAR(node_scale(NodeNoise::Gaussian, Calibration::Strict, 0.5, 1e-3, y, 8, false),
                26.164217697237753, 1e-11);
    // With the final release at T = 8: h' = 4, sigma grows by sqrt(4/3).
    EXPECT_NEAR(gaussian_node_scale(Calibration::Strict, 0.5, 1e-3, y, 8, true) /
                    gaussian_node_scale(Calibration::Strict, 0.5, 1e-3, y, 8, false),
                std::sqrt(4.0 / 3.0), 1e-14);
}

TEST(Calibration, ReverseHandValues) {
    // Laplace: eps = Delta_1 h'/lambda = 10 * 10 / 200 = 0.5, pure, rho = eps^2/2 = 0.125.
    const LossSetNorms experts = experts_loss_norms(10);
    Guarantee g = tree_guarantee(NodeNoise::Laplace, 200.0, 1e-5, experts, 1000, true);
    EXPECT_DOUBLE_EQ(g.epsilon, 0.5);
    EXPECT_EQ(g.delta, 0.0);
    EXPECT_TRUE(same_name(g.accountant, "pure-laplace"));
    EXPECT_DOUBLE_EQ(g.rho, 0.125);
    // Gaussian, h' = 10 (T = 1000), Delta_2 = 1, delta = 1e-6.
    LossSetNorms y;
    y.delta2 = 1.0;
    // sigma = 10: rho = 10/(2*100) = 0.05; zCDP eps = 0.05 + 2 sqrt(0.05 ln 1e6) = 1.71225813626911;
    // classical eps = sqrt(10) sqrt(2 ln 1.25e6)/10 = 1.6756 >= 1, not valid -> zcdp.
    g = tree_guarantee(NodeNoise::Gaussian, 10.0, 1e-6, y, 1000, false);
    EXPECT_TRUE(same_name(g.accountant, "zcdp"));
    EXPECT_NEAR(g.epsilon, 1.71225813626911, 1e-12);
    EXPECT_EQ(g.delta, 1e-6);
    EXPECT_DOUBLE_EQ(g.rho, 0.05);
    EXPECT_NEAR(gaussian_classical_epsilon(10.0, 1.0, 10, 1e-6), 1.6756284856303012, 1e-12);
    // sigma = 30: classical 0.5585428285434337 (< 1, valid) beats zCDP 0.5596416009785922.
    g = tree_guarantee(NodeNoise::Gaussian, 30.0, 1e-6, y, 1000, false);
    EXPECT_TRUE(same_name(g.accountant, "gaussian-classical"));
    EXPECT_NEAR(g.epsilon, 0.5585428285434337, 1e-12);
    EXPECT_NEAR(zcdp_epsilon(g.rho, 1e-6), 0.5596416009785922, 1e-12);
    EXPECT_NEAR(g.rho, 10.0 / 1800.0, 1e-15);
}

TEST(Calibration, ReverseEdgeCases) {
    const LossSetNorms experts = experts_loss_norms(3);
    // Nothing data-dependent released (T = 1 without L~_1).
    Guarantee g = tree_guarantee(NodeNoise::Laplace, 0.0, 0.0, experts, 1, false);
    EXPECT_EQ(g.epsilon, 0.0);
    EXPECT_TRUE(same_name(g.accountant, "none"));
    // No noise / constant noise / zero scale: not private.
    for (NodeNoise law : {NodeNoise::None, NodeNoise::Constant, NodeNoise::Laplace, NodeNoise::Gaussian}) {
        g = tree_guarantee(law, law == NodeNoise::Constant ? 1.0 : 0.0, 1e-5, experts, 100, true);
        EXPECT_EQ(g.epsilon, kInf);
        EXPECT_TRUE(same_name(g.accountant, "none"));
    }
    // Gaussian needs 0 < delta < 1.
    g = tree_guarantee(NodeNoise::Gaussian, 5.0, 0.0, experts, 100, true);
    EXPECT_EQ(g.epsilon, kInf);
    EXPECT_FALSE(std::isnan(g.rho));
    // The TreeNoise overload reads noise, scale and T.
    TreeNoise tn;
    tn.noise = NodeNoise::Laplace;
    tn.scale = 6.0;
    tn.T = 8;
    EXPECT_DOUBLE_EQ(tree_guarantee(tn, 0.0, experts, true).epsilon, 3.0 * 4 / 6.0);
}

TEST(Calibration, RoundTripScaleToGuaranteeGivesTheSameEpsilon) {
    const LossSetNorms sets[] = {experts_loss_norms(7), sphere_loss_norms(5), cube_loss_norms()};
    for (const LossSetNorms& y : sets) {
        for (std::uint64_t T : {2ull, 3ull, 8ull, 1000ull, 1024ull, 1025ull, (1ull << 31) + 5}) {
            for (bool fin : {false, true}) {
                for (double eps : {0.01, 0.3, 0.9, 2.0, 8.0}) {
                    // Laplace strict: eps = Delta_1 h'/lambda exactly.
                    const double lambda =
                        node_scale(NodeNoise::Laplace, Calibration::Strict, eps, 0.0, y, T, fin);
                    const Guarantee gl = tree_guarantee(NodeNoise::Laplace, lambda, 0.0, y, T, fin);
                    EXPECT_NEAR(gl.epsilon, eps, 1e-13 * eps);
                    EXPECT_TRUE(same_name(gl.accountant, "pure-laplace"));
                    for (double delta : {1e-3, 1e-6, 1e-10}) {
                        // Gaussian strict below eps = 1: the classical epsilon comes back exactly; the reported one
                        // is the smaller valid one, so never above eps, and classical whenever it is not beaten by
                        // zCDP. From eps = 1 on (where the classical theorem does not hold) strict is the
                        // zCDP-inverted scale, whose zCDP epsilon comes back exactly.
                        const double sigma =
                            node_scale(NodeNoise::Gaussian, Calibration::Strict, eps, delta, y, T, fin);
                        const std::uint32_t hp = levels_released(T, fin);
                        const double sz = gaussian_node_scale_zcdp(eps, delta, y, T, fin);
                        const Guarantee gz = tree_guarantee(NodeNoise::Gaussian, sz, delta, y, T, fin);
                        EXPECT_NEAR(zcdp_epsilon(gz.rho, delta), eps, 1e-12 * eps);
                        EXPECT_LE(gz.epsilon, eps * (1 + 1e-12));
                        const Guarantee gg = tree_guarantee(NodeNoise::Gaussian, sigma, delta, y, T, fin);
                        const double eps_z = zcdp_epsilon(gg.rho, delta);
                        if (eps < 1.0) {
                            EXPECT_NEAR(gaussian_classical_epsilon(sigma, y.delta2, hp, delta), eps, 1e-13 * eps);
                            // rho = h' Delta_2^2/(2 sigma^2) = eps^2/(4 ln(1.25/delta)).
                            EXPECT_NEAR(zcdp_rho(sigma, y.delta2, hp), eps * eps / (4 * std::log(1.25 / delta)),
                                        1e-13 * eps * eps);
                            EXPECT_LE(gg.epsilon, eps * (1 + 1e-13));
                            EXPECT_NEAR(gg.epsilon, std::min(eps, eps_z), 1e-13 * eps);
                        } else {
                            EXPECT_EQ(sigma, sz);
                            EXPECT_TRUE(same_name(gg.accountant, "zcdp"));
                            EXPECT_NEAR(gg.epsilon, eps, 1e-12 * eps);
                            EXPECT_DOUBLE_EQ(gg.epsilon, eps_z);
                        }
                    }
                }
            }
        }
    }
}

TEST(Calibration, StrictVersusPaper) {
    // Experts, T = 2^h with L~_T released: strict counts h' = k + 1 levels, the paper k (§1.4, §4 item
    // 5): strict lambda = paper lambda (k+1)/k, and the paper's lambda really provides eps (k+1)/k.
    const LossSetNorms experts = experts_loss_norms(16);
    for (std::uint32_t h = 1; h <= 20; ++h) {
        const std::uint64_t T = std::uint64_t{1} << h;
        const double k = h, eps = 0.7;
        const double paper = laplace_node_scale(Calibration::Paper, eps, experts, T, true);
        const double strict = laplace_node_scale(Calibration::Strict, eps, experts, T, true);
        EXPECT_NEAR(strict / paper, (k + 1) / k, 1e-14);
        EXPECT_NEAR(tree_guarantee(NodeNoise::Laplace, paper, 0.0, experts, T, true).epsilon,
                    eps * (k + 1) / k, 1e-13);
        // Without the final release they agree, and the paper's scale gives exactly eps.
        EXPECT_DOUBLE_EQ(laplace_node_scale(Calibration::Strict, eps, experts, T, false), paper);
        EXPECT_NEAR(tree_guarantee(NodeNoise::Laplace, paper, 0.0, experts, T, false).epsilon, eps, 1e-13);
        // Symmetric Y (cube): the factor 2 of replace-one sensitivity on top.
        const LossSetNorms cube = cube_loss_norms();
        EXPECT_NEAR(laplace_node_scale(Calibration::Strict, eps, cube, T, true) /
                        laplace_node_scale(Calibration::Paper, eps, cube, T, true),
                    2 * (k + 1) / k, 1e-14);
    }
    // Gaussian: the paper's sigma is conservative for eps < 1 (§1.5 caveat). Experts N = 16, T = 1000,
    // eps = 0.5, delta = 1e-5: sigma = 4 * 10 * ln(1e6)/0.5 = 1105.24; the guarantee it provides is
    // rho = 10 * 16/(2 sigma^2), zCDP eps = 0.05498300925442855 (classical 0.05545).
    const double sp = gaussian_node_scale(Calibration::Paper, 0.5, 1e-5, experts, 1000, false);
    EXPECT_NEAR(sp, 1105.240844637142, 1e-9);
    const Guarantee g = tree_guarantee(NodeNoise::Gaussian, sp, 1e-5, experts, 1000, false);
    EXPECT_TRUE(same_name(g.accountant, "zcdp"));
    EXPECT_NEAR(g.epsilon, 0.05498300925442855, 1e-13);
    EXPECT_LT(gaussian_node_scale(Calibration::Strict, 0.5, 1e-5, experts, 1000, false), sp);
}
