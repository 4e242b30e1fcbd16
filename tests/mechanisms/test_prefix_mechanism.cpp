// The noisy-prefix seam (kernels/mechanisms/noisy_prefix.hpp PrefixMechanism, kernels/learners/tree_learner.hpp;
// docs/MECHANISMS.md §3.3): every way a learner reaches its noise gives the definition of docs/MECHANISMS.md §2 bit
// for bit, the key block resolves as documented, and the planted bugs of the audit suite change the noise the way
// they claim.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "host/config/component_info.hpp"
#include "kernels/core/team.hpp"
#include "kernels/learners/dp_ftrl_experts.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/learners/tree_learner.hpp"
#include "kernels/mechanisms/noisy_prefix.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"
#include "learners/simulate.hpp"

namespace dpr {
namespace {

using mech::NodeNoise;
using mech::PrefixMechanism;
using mech::TreeVariant;

constexpr std::uint32_t kSeed = 4242, kInstance = 9;

PrefixMechanism mechanism(TreeVariant v, NodeNoise law, double scale, std::uint64_t T) {
    PrefixMechanism m;
    m.tree = v;
    m.noise = law;
    m.scale = scale;
    m.T = T;
    return m;
}

/// Z_{t-1} of coordinates 0..d-1 for t = 1..T through the seam with a one-lane team: init() on a state filled with
/// garbage, then step(t) / next() per coordinate. `peeked` gets peek() of the same rounds, taken before next().
template <class R>
std::vector<R> streamed(const PrefixMechanism& m, std::uint32_t d, std::vector<R>* peeked) {
    std::vector<R> state(std::size_t(m.rows()) * d, R(7)); // init() must clear it
    SerialTeam<R> team;
    team.rng = RngKey{kSeed, 0};
    team.id = kInstance;
    const StridedView<R> S{state.data(), 1, d};
    m.init(team, S, d);
    std::vector<R> z;
    for (std::uint64_t t = 1; t <= m.T; ++t) {
        const PrefixMechanism::Step st = m.step(t);
        for (std::uint32_t i = 0; i < d; ++i) {
            peeked->push_back(m.template peek<R>(team, S, t, i));
            z.push_back(m.next(team, st, S, i));
        }
    }
    return z;
}

template <class R>
void expect_every_accessor_is_the_definition() {
    const std::uint32_t d = 3;
    for (NodeNoise law : {NodeNoise::Laplace, NodeNoise::Gaussian})
        for (int kind : {0, 1, 2, 3}) // padded, binary, binary with Honaker's estimator, BLT (Gaussian only)
            for (std::uint64_t T : {1u, 2u, 3u, 8u, 100u, 1024u, 1025u}) {
                if (kind == 3 && law == NodeNoise::Laplace) continue;
                const TreeVariant v = kind == 0 ? TreeVariant::Padded : TreeVariant::Binary;
                PrefixMechanism m = mechanism(v, law, 1.5, T);
                m.honaker = kind == 2;
                m.blt = kind == 3;
                if (m.blt) m.blt_noise = mech::blt_for_steps(4, T - 1);
                ASSERT_EQ(m.rows(), m.blt ? 5u : (m.honaker ? 2 : 1) * (mech::tree_depth(T) + 1));
                std::vector<R> peeked;
                const std::vector<R> z = streamed<R>(m, d, &peeked);
                const mech::TreeNoise tn{v, law, 1.5, T, kSeed, 0, kInstance};
                for (std::uint64_t t = 1; t <= T; ++t)
                    for (std::uint32_t i = 0; i < d; ++i) {
                        const std::size_t k = (t - 1) * d + i;
                        const R def = m.blt       ? mech::blt_prefix_noise<R>(tn, m.blt_noise, t - 1, i)
                                      : m.honaker ? mech::honaker_prefix_noise<R>(tn, t - 1, i)
                                                  : mech::prefix_noise<R>(tn, t - 1, i);
                        ASSERT_EQ(z[k], def) << "next(), T=" << T << " t=" << t << " i=" << i;
                        ASSERT_EQ(peeked[k], def) << "peek(), T=" << T << " t=" << t << " i=" << i;
                        ASSERT_EQ(m.template regenerate<R>(kSeed, 0, kInstance, t - 1, i), def)
                            << "regenerate(), T=" << T << " t=" << t << " i=" << i;
                    }
            }
}

} // namespace

TEST(PrefixMechanism, EveryAccessorGivesTheDefinitionBitwiseDouble) { expect_every_accessor_is_the_definition<double>(); }
TEST(PrefixMechanism, EveryAccessorGivesTheDefinitionBitwiseFloat) { expect_every_accessor_is_the_definition<float>(); }

TEST(PrefixMechanism, OffKeepsNoStateAndDrawsNothing) {
    const PrefixMechanism m = mechanism(TreeVariant::Padded, NodeNoise::None, 0.0, 64);
    EXPECT_FALSE(m.on());
    EXPECT_EQ(m.rows(), 0u);
    for (std::uint64_t t = 0; t < 64; ++t) EXPECT_EQ(m.regenerate<double>(kSeed, 0, kInstance, t, 0), 0.0);
}

TEST(PrefixMechanism, TheGuaranteeIsTheTreesForTheStepsItReleases) {
    const mech::LossSetNorms y = mech::experts_loss_norms(16);
    for (NodeNoise law : {NodeNoise::Laplace, NodeNoise::Gaussian}) {
        // T = 1024: P~_T would need the root, one level more than P~_0 .. P~_{T-1} (h' of calibration.hpp).
        const PrefixMechanism m = mechanism(TreeVariant::Binary, law, 3.0, 1024);
        const mech::Guarantee g = m.guarantee(1e-6, y);
        const mech::Guarantee want = mech::tree_guarantee(law, 3.0, 1e-6, y, 1024, /*release_final=*/false);
        EXPECT_EQ(g.epsilon, want.epsilon);
        EXPECT_EQ(g.delta, want.delta);
        EXPECT_STREQ(g.accountant, want.accountant);
        const mech::Guarantee with_final = mech::tree_guarantee(law, 3.0, 1e-6, y, 1024, /*release_final=*/true);
        EXPECT_LT(g.epsilon, with_final.epsilon) << "P~_T is never released";
    }
}

// The audit suite's planted bugs (docs/AUDITS.md) act on the mechanism, so every learner that uses the seam can
// carry them; each changes the noise exactly as its name says.
TEST(PrefixMechanism, PlantedBugsChangeTheNoiseAsTheyClaim) {
    const std::uint64_t T = 16;
    const std::uint32_t d = 2;
    const PrefixMechanism clean = mechanism(TreeVariant::Binary, NodeNoise::Gaussian, 2.0, T);
    std::vector<double> ignored;
    const std::vector<double> z = streamed<double>(clean, d, &ignored);

    PrefixMechanism half = clean;
    ASSERT_TRUE(learners::plant_prefix(half, learners::Planted::HalfNoise));
    EXPECT_EQ(half.scale, 1.0);
    const std::vector<double> zh = streamed<double>(half, d, &ignored);
    for (std::size_t k = 0; k < z.size(); ++k) EXPECT_EQ(zh[k], 0.5 * z[k]) << k; // scaling by 1/2 is exact

    PrefixMechanism leaf = clean;
    ASSERT_TRUE(learners::plant_prefix(leaf, learners::Planted::LeafWithoutNoise));
    const std::vector<double> zl = streamed<double>(leaf, d, &ignored);
    // Round t plays prefix t - 1: prefix 1 (round 2) is leaf 0 alone, now without noise; prefix 2 is node (1, 0),
    // a level-1 node, which keeps its noise.
    for (std::uint32_t i = 0; i < d; ++i) {
        EXPECT_NE(z[1 * d + i], 0.0);
        EXPECT_EQ(zl[1 * d + i], 0.0) << "prefix 1 is one leaf";
        EXPECT_EQ(zl[2 * d + i], z[2 * d + i]) << "prefix 2 is one level-1 node";
    }

    PrefixMechanism reused = clean;
    ASSERT_TRUE(learners::plant_prefix(reused, learners::Planted::ReusedNoise));
    const std::vector<double> zr = streamed<double>(reused, d, &ignored);
    // Every node is drawn from round 1's stream: prefix 2 = node (1, 0) then carries the draw of leaf 0 (prefix 1).
    for (std::uint32_t i = 0; i < d; ++i) {
        EXPECT_EQ(zr[2 * d + i], z[1 * d + i]);
        EXPECT_NE(z[2 * d + i], z[1 * d + i]);
    }

    PrefixMechanism off = mechanism(TreeVariant::Binary, NodeNoise::None, 0.0, T);
    EXPECT_FALSE(learners::plant_prefix(off, learners::Planted::HalfNoise)) << "nothing to plant without noise";
    PrefixMechanism other = clean;
    EXPECT_FALSE(learners::plant_prefix(other, learners::Planted::NoThresholdNoise)) << "not a bug of this mechanism";
}

// ---- Honaker's estimator --------------------------------------------------------------------------------------------

// Honaker's estimate of a node is the generalised least-squares estimate of the node's sum from the noisy values of
// every node of its subtree (equal variances): checked against a dense solve of the normal equations, for the
// subtrees of levels 1 to 4 and both noise laws. The observations are the mechanism's own raw node draws.
TEST(Honaker, TheNodeEstimateIsTheLeastSquaresEstimateFromItsSubtree) {
    for (NodeNoise law : {NodeNoise::Laplace, NodeNoise::Gaussian})
        for (std::uint32_t level = 1; level <= 4; ++level)
            for (std::uint64_t m : {0u, 1u, 3u}) {
                const mech::TreeNoise tn{TreeVariant::Binary, law, 0.7, 1024, kSeed, 0, kInstance};
                const std::uint32_t leaves = 1u << level;
                std::vector<std::pair<std::uint32_t, std::uint64_t>> nodes; // (level, index) of the subtree
                for (std::uint32_t j = 0; j <= level; ++j)
                    for (std::uint64_t q = 0; q < (leaves >> j); ++q) nodes.emplace_back(j, (m << (level - j)) + q);
                Eigen::MatrixXd A = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(nodes.size()), leaves);
                Eigen::VectorXd y(static_cast<Eigen::Index>(nodes.size()));
                for (std::size_t r = 0; r < nodes.size(); ++r) {
                    const auto [j, q] = nodes[r];
                    const std::uint64_t first = (q << j) - (m << level); // the node's first leaf within the subtree
                    for (std::uint64_t c = 0; c < (1u << j); ++c) A(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(first + c)) = 1.0;
                    y(static_cast<Eigen::Index>(r)) = mech::full_tree_node_noise<double>(tn, j, q, 2);
                }
                const Eigen::VectorXd x = (A.transpose() * A).ldlt().solve(A.transpose() * y);
                const double gls = x.sum();
                const double e = mech::honaker_node<double>(tn, level, m, 2);
                EXPECT_NEAR(e, gls, 1e-12 * std::max(1.0, std::fabs(gls))) << "level " << level << " node " << m;
            }
}

// The raw node draws of the full tree: the node at the lowest set bit of its round is the binary tree's own draw
// (tree_aggregation.hpp node_noise), the right children below it come from other streams, so every node differs.
TEST(Honaker, NodesAtTheRoundsLowestBitAreTheBinaryTreesAndTheOthersAreFresh) {
    const mech::TreeNoise tn{TreeVariant::Binary, NodeNoise::Gaussian, 1.0, 64, kSeed, 0, kInstance};
    for (std::uint32_t j = 0; j < 6; ++j)
        for (std::uint64_t m = 0; m < (64u >> j) - 1; m += 2)
            EXPECT_EQ(mech::full_tree_node_noise<double>(tn, j, m, 0), mech::node_noise<double>(tn, j, m, 0));
    // Round 8 completes nodes (0, 7), (1, 3), (2, 1), (3, 0): four distinct draws.
    const double a = mech::full_tree_node_noise<double>(tn, 0, 7, 0), b = mech::full_tree_node_noise<double>(tn, 1, 3, 0),
                 c = mech::full_tree_node_noise<double>(tn, 2, 1, 0), e = mech::full_tree_node_noise<double>(tn, 3, 0, 0);
    EXPECT_NE(a, b);
    EXPECT_NE(b, c);
    EXPECT_NE(a, c);
    EXPECT_NE(c, e);
}

// The exact per-step variance Var(Z_t) = s^2 sum_{j in bits(t)} 1/(2 - 2^-j) (docs/MECHANISMS.md §3.4) against the
// sample variance of 40000 instances, for both laws, at prefixes with 1 to 6 nodes; a z-test on the variance at
// alpha ~ 1e-6 (|z| < 5), with the binary tree's variance (popcount(t) s^2) as the meta-test that must be rejected
// where it differs.
TEST(Honaker_Stat, PrefixVarianceIsTheExactFormula) {
    const std::uint32_t n = 40000;
    for (NodeNoise law : {NodeNoise::Laplace, NodeNoise::Gaussian})
        for (std::uint64_t t : {1u, 2u, 3u, 12u, 63u}) {
            PrefixMechanism m = mechanism(TreeVariant::Binary, law, 1.25, 64);
            m.honaker = true;
            const double node_var = law == NodeNoise::Laplace ? 2 * 1.25 * 1.25 : 1.25 * 1.25;
            double s1 = 0, s2 = 0;
            for (std::uint32_t k = 0; k < n; ++k) {
                const double z = m.regenerate<double>(kSeed, 0, k, t, 1);
                s1 += z;
                s2 += z * z;
            }
            const double mean = s1 / n, var = (s2 - n * mean * mean) / (n - 1);
            // Var of the sample variance: (mu4 - s^4 (n-3)/(n-1)) / n; Z_t is a sum of independent node terms, so
            // its excess kurtosis is below the Laplace value 3: bound mu4 by 6 s^4.
            const auto z_of = [&](double want) { return (var - want) / (want * std::sqrt(5.0 / n)); };
            const double exact = node_var * m.unit_variance(t);
            EXPECT_LT(std::fabs(z_of(exact)), 5.0) << "t " << t << " law " << int(law) << " var " << var << " exact " << exact;
            const double binary = node_var * static_cast<double>(dpr::popcount64(t));
            if (dpr::popcount64(t) >= 2)
                EXPECT_GT(std::fabs(z_of(binary)), 5.0) << "the binary tree's variance must be rejected, t " << t;
        }
}

TEST(Honaker, KeysChooseItAndItsGuaranteeIsTheBinaryTrees) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    Problem pb;
    pb.d = 8;
    pb.T = 1000;
    const auto hon = learners::DpFtrlExperts::resolve(
        test::key_values(linfo, "dp-ftrl-experts", {{"epsilon", 1.0}, {"mechanism", 2.0}}), pb);
    const auto bin = learners::DpFtrlExperts::resolve(
        test::key_values(linfo, "dp-ftrl-experts", {{"epsilon", 1.0}, {"mechanism", 1.0}}), pb);
    EXPECT_TRUE(hon.prefix.honaker);
    EXPECT_EQ(hon.prefix.tree, TreeVariant::Binary);
    EXPECT_FALSE(bin.prefix.honaker);
    EXPECT_EQ(hon.prefix.scale, bin.prefix.scale);
    const learners::PrivacyReport rh = learners::DpFtrlExperts::privacy(hon), rb = learners::DpFtrlExperts::privacy(bin);
    EXPECT_EQ(rh.epsilon, rb.epsilon);
    EXPECT_LE(rh.epsilon, 1.0 + 1e-12);
    EXPECT_NE(std::string(rh.mechanism).find("Honaker"), std::string::npos) << rh.mechanism;
    // Twice the state rows of the binary tree (the left-child estimates).
    EXPECT_EQ(hon.prefix.rows(), 2 * bin.prefix.rows());
}

// ---- the key block ----------------------------------------------------------------------------------------------

namespace {

template <class Keys>
struct Block {
    static constexpr KeySpec kKeys[] = {Keys::kMechanism, Keys::kNoise, Keys::kNodeScale, Keys::kBltBuffers,
                                        {"delta", KeyType::Real, "0", 0.0, 1.0, "", "delta"}};
    static constexpr int kMechanism = key_index(kKeys, "mechanism"), kNoise = key_index(kKeys, "noise"),
                         kNodeScale = key_index(kKeys, "node_scale"), kDelta = key_index(kKeys, "delta");
    static constexpr typename Keys::Index kIdx{kMechanism, kNoise, kNodeScale, key_index(kKeys, "blt_buffers")};
};

KeyValues values(std::initializer_list<std::pair<int, double>> given) {
    KeyValues kv;
    for (const auto& [i, v] : given) {
        kv.num[i] = v;
        kv.given[i] = true;
    }
    return kv;
}

} // namespace

TEST(PrefixKeys, ResolveTakesTheDefaultsTheLawAndTheGivenScale) {
    using LG = learners::PrefixKeys<learners::PrefixLaws::LaplaceGaussian>;
    using GB = learners::PrefixKeys<learners::PrefixLaws::Gaussian, TreeVariant::Binary>;
    using BL = Block<LG>;
    using BG = Block<GB>;
    int calls = 0;
    auto scale = [&](NodeNoise law) {
        ++calls;
        return law == NodeNoise::Laplace ? 5.0 : 6.0;
    };
    // Nothing given: the block's default tree and first law, the learner's scale.
    PrefixMechanism m = LG::resolve(values({}), BL::kIdx, 100, false, scale);
    EXPECT_EQ(m.tree, TreeVariant::Padded);
    EXPECT_EQ(m.noise, NodeNoise::Laplace);
    EXPECT_EQ(m.scale, 5.0);
    EXPECT_EQ(m.T, 100u);
    m = GB::resolve(values({}), BG::kIdx, 100, false, scale);
    EXPECT_EQ(m.tree, TreeVariant::Binary) << "a block whose default is the binary tree";
    EXPECT_EQ(m.noise, NodeNoise::Gaussian);
    EXPECT_EQ(m.scale, 6.0);
    // Choices index the block's own lists: tree "padded|binary", noise "laplace|gaussian|none" / "gaussian|none".
    m = GB::resolve(values({{BG::kMechanism, 0.0}}), BG::kIdx, 100, false, scale);
    EXPECT_EQ(m.tree, TreeVariant::Padded);
    m = LG::resolve(values({{BL::kNoise, 1.0}, {BL::kMechanism, 1.0}}), BL::kIdx, 100, false,
                    scale);
    EXPECT_EQ(m.noise, NodeNoise::Gaussian);
    EXPECT_EQ(m.tree, TreeVariant::Binary);
    calls = 0;
    m = GB::resolve(values({{BG::kNoise, 1.0}}), BG::kIdx, 100, false, scale);
    EXPECT_EQ(m.noise, NodeNoise::None);
    EXPECT_EQ(m.scale, 0.0);
    EXPECT_EQ(calls, 0) << "no scale is calibrated without noise";
    // node_scale given: taken as is; off: no noise whatever the keys say.
    m = LG::resolve(values({{BL::kNodeScale, 0.25}}), BL::kIdx, 100, false, scale);
    EXPECT_EQ(m.scale, 0.25);
    EXPECT_EQ(calls, 0);
    m = LG::resolve(values({{BL::kNodeScale, 0.25}}), BL::kIdx, 100, true, scale);
    EXPECT_FALSE(m.on());
    EXPECT_EQ(m.scale, 0.0);
}

TEST(PrefixKeys, TheGaussianLawNeedsADeltaUnlessItsScaleIsGivenOrTheNoiseIsOff) {
    using LG = learners::PrefixKeys<learners::PrefixLaws::LaplaceGaussian>;
    using B = Block<LG>;
    Diagnostic diag;
    EXPECT_FALSE(LG::check(values({{B::kNoise, 1.0}}), B::kIdx, B::kDelta, false, diag));
    EXPECT_STREQ(diag.key, "delta");
    EXPECT_NE(std::string(diag.message).find("needs delta in (0, 1)"), std::string::npos) << diag.message;
    EXPECT_TRUE(LG::check(values({{B::kNoise, 1.0}, {B::kDelta, 1e-6}}), B::kIdx, B::kDelta,
                                false, diag));
    EXPECT_TRUE(LG::check(values({{B::kNoise, 1.0}, {B::kNodeScale, 2.0}}), B::kIdx, B::kDelta,
                                false, diag));
    EXPECT_TRUE(LG::check(values({{B::kNoise, 1.0}}), B::kIdx, B::kDelta, true, diag));
    EXPECT_TRUE(LG::check(values({}), B::kIdx, B::kDelta, false, diag)) << "Laplace: no delta";
}

// Through the seam, dp-ftrl-experts treats a given Gaussian node scale as its sibling learners do: the scale is the
// user's, so no delta is needed to calibrate it, and the report says what that scale provides at delta = 0: no
// finite eps (the CLI then warns that the guarantee exceeds the request). Before the seam dp-ftrl-experts alone
// refused the run.
TEST(PrefixKeys, DpFtrlExpertsTakesAGivenGaussianScaleWithoutDelta) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    Problem pb;
    pb.d = 8;
    pb.T = 256;
    const KeyValues kv = test::key_values(linfo, "dp-ftrl-experts", {{"epsilon", 1.0}, {"noise", 1.0}, {"node_scale", 40.0}});
    Diagnostic diag;
    EXPECT_TRUE(learners::DpFtrlExperts::check(kv, pb, diag)) << diag.key << ": " << diag.message;
    const auto p = learners::DpFtrlExperts::resolve(kv, pb);
    EXPECT_EQ(p.prefix.noise, NodeNoise::Gaussian);
    EXPECT_EQ(p.prefix.scale, 40.0);
    const learners::PrivacyReport r = learners::DpFtrlExperts::privacy(p);
    EXPECT_EQ(r.noise_scale, 40.0);
    EXPECT_TRUE(std::isinf(r.epsilon)) << r.epsilon;
    const KeyValues no_scale = test::key_values(linfo, "dp-ftrl-experts", {{"epsilon", 1.0}, {"noise", 1.0}});
    EXPECT_FALSE(learners::DpFtrlExperts::check(no_scale, pb, diag));
    EXPECT_STREQ(diag.key, "delta");
}

} // namespace dpr

// ---- lattice noise (docs/spec/model.md §1.8, §1.11: discrete Laplace and discrete Gaussian nodes) -------------------

namespace dpr {
namespace {

PrefixMechanism lattice_mechanism(TreeVariant v, double scale, std::uint64_t T, std::uint32_t d,
                                  NodeNoise law = NodeNoise::Laplace) {
    PrefixMechanism m = mechanism(v, law, scale, T);
    return learners::lattice_version(m, /*scale_given=*/true, mech::cube_loss_norms(), d, 1e-5);
}

/// The releases of T rounds through release() / accumulate() with a one-lane team, from losses `loss(t, i)`; the
/// learner's exact sums in `sums` (after each round).
template <class R, class F>
std::vector<R> lattice_releases(const PrefixMechanism& m, std::uint32_t d, F loss, std::vector<double>* sums) {
    std::vector<R> state(std::size_t(m.rows()) * d, R(7));
    SerialTeam<R> team;
    team.rng = RngKey{kSeed, 0};
    team.id = kInstance;
    const StridedView<R> S{state.data(), 1, d};
    m.init(team, S, d);
    std::vector<double> L(d, 0.0);
    std::vector<R> out;
    for (std::uint64_t t = 1; t <= m.T; ++t) {
        const PrefixMechanism::Step st = m.step(t);
        for (std::uint32_t i = 0; i < d; ++i) {
            const R peeked = m.template peek_release<R>(team, S, t, i, L[i]);
            const auto rel = m.release(team, st, S, i, L[i]);
            EXPECT_EQ(rel.value, peeked) << "peek_release() of t=" << t;
            out.push_back(rel.value);
            L[i] = m.accumulate(team, st, i, L[i], loss(t, i));
        }
        sums->insert(sums->end(), L.begin(), L.end());
    }
    return out;
}

double test_loss(std::uint64_t t, std::uint32_t i) { return std::sin(0.7 * static_cast<double>(t) + 1.3 * i); }

} // namespace
} // namespace dpr

using namespace dpr;

// The binary tree (no padding) releases R(L + Z_nodes): L a sum of lattice points, Z the nodes' discrete Laplace (or
// discrete Gaussian) draws of the definition, and the sum exact -- so the float release is the rounding of an exactly
// computed value, never of a float sum whose rounding depends on L.
TEST(LatticeNoise, TheReleaseIsTheRoundingOfTheExactNodeSumInBothPrecisions) {
    const std::uint32_t d = 3;
    for (NodeNoise law : {NodeNoise::Laplace, NodeNoise::Gaussian})
    for (std::uint64_t T : {2u, 7u, 64u, 100u}) {
        const PrefixMechanism m = lattice_mechanism(TreeVariant::Binary, 0.37, T, d, law);
        ASSERT_TRUE(m.lattice);
        const double g = m.dlap.gamma;
        std::vector<double> sums_f, sums_d;
        const std::vector<float> rf = lattice_releases<float>(m, d, test_loss, &sums_f);
        const std::vector<double> rd = lattice_releases<double>(m, d, test_loss, &sums_d);
        EXPECT_EQ(sums_f, sums_d) << "the exact sums do not depend on the precision";
        const mech::TreeNoise tn = m.tree_noise(kSeed, 0, kInstance);
        for (std::uint64_t t = 1; t <= T; ++t)
            for (std::uint32_t i = 0; i < d; ++i) {
                const std::size_t k = (t - 1) * d + i;
                const double L = t == 1 ? 0.0 : sums_d[(t - 2) * d + i];
                ASSERT_EQ(L / g, std::rint(L / g)) << "the sum is a lattice point";
                const double zf = mech::tree_part<float>(tn, t - 1, i), zd = mech::tree_part<double>(tn, t - 1, i);
                ASSERT_EQ(static_cast<double>(zf), zd) << "lattice nodes are the same in float and double";
                ASSERT_EQ(zd / g, std::rint(zd / g));
                // long double holds L + Z exactly: the release is its rounding.
                const long double exact = static_cast<long double>(L) + zd;
                ASSERT_EQ(static_cast<double>(exact), L + zd);
                ASSERT_EQ(rd[k], static_cast<double>(exact)) << "t=" << t;
                ASSERT_EQ(rf[k], static_cast<float>(L + zd)) << "t=" << t;
                // Randomised rounding keeps the sum within one lattice step per round of the true sum.
                double truth = 0.0;
                for (std::uint64_t s = 1; s < t; ++s) truth += test_loss(s, i);
                ASSERT_LE(std::fabs(L - truth), static_cast<double>(t) * g);
            }
    }
}

// The padded tree adds its padding (fresh continuous noise, post-processing) after the exact node sum.
TEST(LatticeNoise, ThePaddedTreeAddsThePaddingAfterTheExactNodeSum) {
    const std::uint32_t d = 2;
    const std::uint64_t T = 50;
    for (NodeNoise law : {NodeNoise::Laplace, NodeNoise::Gaussian}) {
    const PrefixMechanism m = lattice_mechanism(TreeVariant::Padded, 2.5, T, d, law);
    std::vector<double> sums;
    const std::vector<double> r = lattice_releases<double>(m, d, test_loss, &sums);
    const mech::TreeNoise tn = m.tree_noise(kSeed, 0, kInstance);
    for (std::uint64_t t = 1; t <= T; ++t)
        for (std::uint32_t i = 0; i < d; ++i) {
            const double L = t == 1 ? 0.0 : sums[(t - 2) * d + i];
            const double want = (L + mech::tree_part<double>(tn, t - 1, i)) + mech::padding_noise<double>(tn, t - 1, i);
            ASSERT_EQ(r[(t - 1) * d + i], want) << "t=" << t;
            // The definition: prefix_noise = the lattice nodes and the padding.
            ASSERT_EQ(mech::prefix_noise<double>(tn, t - 1, i),
                      mech::tree_part<double>(tn, t - 1, i) + mech::padding_noise<double>(tn, t - 1, i));
        }
    }
}

// A discrete Gaussian node is the sampler's draw from the Lattice stream (sub 0) of the round that completes it, in
// both precisions: the address RANDOMNESS.md documents.
TEST(LatticeNoise, DiscreteGaussianNodesComeFromTheDocumentedStream) {
    const PrefixMechanism m = lattice_mechanism(TreeVariant::Binary, 0.37, 64, 3, NodeNoise::Gaussian);
    const mech::TreeNoise tn = m.tree_noise(kSeed, 0, kInstance);
    for (std::uint64_t t : {1u, 2u, 3u, 8u, 40u})
        for (std::uint32_t i = 0; i < 3; ++i) {
            const rng::LaneStream<std::uint32_t> s{kSeed, 0u, kInstance, rng::Purpose::Lattice, 0u,
                                                   static_cast<std::uint32_t>(t - 1), i};
            const double want = noise::dgauss_draw<double>(s, m.dlap, m.dgauss);
            const std::uint32_t j = ctz64(t);
            EXPECT_EQ(mech::node_noise<double>(tn, j, (t >> j) - 1, i), want) << "t=" << t;
            EXPECT_EQ(static_cast<double>(mech::node_noise<float>(tn, j, (t >> j) - 1, i)), want) << "t=" << t;
        }
}

TEST(LatticeNoise, TheGuaranteeIsTheLatticeAccountingAndThePlantedBugRemovesIt) {
    const mech::LossSetNorms y = mech::cube_loss_norms();
    PrefixMechanism cont = mechanism(TreeVariant::Padded, NodeNoise::Laplace, 12.0, 1024);
    const PrefixMechanism lat = learners::lattice_version(cont, /*scale_given=*/false, y, 8);
    EXPECT_GT(lat.scale, cont.scale);
    const mech::Guarantee g = lat.guarantee(0.0, y), gc = cont.guarantee(0.0, y);
    EXPECT_STREQ(g.accountant, "lattice-laplace");
    EXPECT_LE(g.epsilon, gc.epsilon) << "the lattice scale is raised to keep the continuous epsilon";
    EXPECT_GT(g.epsilon, 0.99 * gc.epsilon);
    EXPECT_LT(g.delta, 1e-15);
    EXPECT_EQ(learners::lattice_obstacle(lat, y), nullptr);
    PrefixMechanism honaker = lat;
    honaker.honaker = true;
    EXPECT_NE(learners::lattice_obstacle(honaker, y), nullptr);
    PrefixMechanism planted = lat;
    ASSERT_TRUE(learners::plant_prefix(planted, learners::Planted::FloatLattice));
    EXPECT_FALSE(planted.lattice);
    EXPECT_STREQ(planted.guarantee(0.0, y).accountant, "pure-laplace");
    EXPECT_FALSE(learners::plant_prefix(cont, learners::Planted::FloatLattice)) << "nothing to plant without a lattice";
}

TEST(LatticeNoise, DiscreteGaussianGuaranteeIsAtMostTheContinuousOneAtTheSameScale) {
    // The discrete Gaussian's accounting (docs/spec/model.md §1.11) states at most what the continuous Gaussian's
    // report does at the same sigma, so lattice_version keeps the calibration's sigma; the planted bug removes the
    // lattice; Honaker's estimator has no exact release.
    const double delta = 1e-5;
    for (const mech::LossSetNorms& y : {mech::cube_loss_norms(), mech::experts_loss_norms(64), mech::sphere_loss_norms(64)})
        for (double eps : {0.1, 1.0, 10.0}) {
            const double sigma = mech::gaussian_node_scale_zcdp(eps, delta, y, 1024, false);
            const PrefixMechanism cont = mechanism(TreeVariant::Padded, NodeNoise::Gaussian, sigma, 1024);
            const PrefixMechanism lat = learners::lattice_version(cont, /*scale_given=*/false, y, 64, delta);
            EXPECT_EQ(lat.scale, cont.scale) << "eps " << eps;
            const mech::Guarantee g = lat.guarantee(delta, y), gc = cont.guarantee(delta, y);
            EXPECT_STREQ(g.accountant, "lattice-gaussian");
            EXPECT_TRUE(g.as_run);
            EXPECT_EQ(g.delta, delta);
            EXPECT_LE(g.epsilon, gc.epsilon) << "eps " << eps;
            EXPECT_GT(g.epsilon, 0.6 * gc.epsilon) << "eps " << eps;
            EXPECT_EQ(learners::lattice_obstacle(lat, y, 1.0, delta), nullptr);
            EXPECT_NE(learners::lattice_obstacle(lat, y, 1.0, 1e-300), nullptr) << "a delta the tails cannot fit";
            PrefixMechanism honaker = lat;
            honaker.honaker = true;
            EXPECT_NE(learners::lattice_obstacle(honaker, y, 1.0, delta), nullptr);
            PrefixMechanism planted = lat;
            ASSERT_TRUE(learners::plant_prefix(planted, learners::Planted::FloatLattice));
            EXPECT_EQ(planted.guarantee(delta, y).epsilon, gc.epsilon);
        }
}
