// The noisy-prefix seam (kernels/mechanisms/noisy_prefix.hpp PrefixMechanism, kernels/learners/tree_learner.hpp;
// docs/MECHANISMS.md §3.3): every way a learner reaches its noise gives the definition of docs/MECHANISMS.md §2 bit
// for bit, the key block resolves as documented, and the planted bugs of the audit suite change the noise the way
// they claim.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

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
        for (TreeVariant v : {TreeVariant::Padded, TreeVariant::Binary})
            for (std::uint64_t T : {1u, 2u, 3u, 8u, 100u, 1024u, 1025u}) {
                const PrefixMechanism m = mechanism(v, law, 1.5, T);
                ASSERT_EQ(m.rows(), mech::tree_depth(T) + 1);
                std::vector<R> peeked;
                const std::vector<R> z = streamed<R>(m, d, &peeked);
                const mech::TreeNoise tn{v, law, 1.5, T, kSeed, 0, kInstance};
                for (std::uint64_t t = 1; t <= T; ++t)
                    for (std::uint32_t i = 0; i < d; ++i) {
                        const std::size_t k = (t - 1) * d + i;
                        const R def = mech::prefix_noise<R>(tn, t - 1, i);
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

// ---- the key block ----------------------------------------------------------------------------------------------

namespace {

template <class Keys>
struct Block {
    static constexpr KeySpec kKeys[] = {Keys::kTree, Keys::kNoise, Keys::kNodeScale, {"delta", KeyType::Real, "0", 0.0,
                                                                                      1.0, "", "delta"}};
    static constexpr int kTree = key_index(kKeys, "tree"), kNoise = key_index(kKeys, "noise"),
                         kNodeScale = key_index(kKeys, "node_scale"), kDelta = key_index(kKeys, "delta");
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
    PrefixMechanism m = LG::resolve(values({}), BL::kTree, BL::kNoise, BL::kNodeScale, 100, false, scale);
    EXPECT_EQ(m.tree, TreeVariant::Padded);
    EXPECT_EQ(m.noise, NodeNoise::Laplace);
    EXPECT_EQ(m.scale, 5.0);
    EXPECT_EQ(m.T, 100u);
    m = GB::resolve(values({}), BG::kTree, BG::kNoise, BG::kNodeScale, 100, false, scale);
    EXPECT_EQ(m.tree, TreeVariant::Binary) << "a block whose default is the binary tree";
    EXPECT_EQ(m.noise, NodeNoise::Gaussian);
    EXPECT_EQ(m.scale, 6.0);
    // Choices index the block's own lists: tree "padded|binary", noise "laplace|gaussian|none" / "gaussian|none".
    m = GB::resolve(values({{BG::kTree, 0.0}}), BG::kTree, BG::kNoise, BG::kNodeScale, 100, false, scale);
    EXPECT_EQ(m.tree, TreeVariant::Padded);
    m = LG::resolve(values({{BL::kNoise, 1.0}, {BL::kTree, 1.0}}), BL::kTree, BL::kNoise, BL::kNodeScale, 100, false,
                    scale);
    EXPECT_EQ(m.noise, NodeNoise::Gaussian);
    EXPECT_EQ(m.tree, TreeVariant::Binary);
    calls = 0;
    m = GB::resolve(values({{BG::kNoise, 1.0}}), BG::kTree, BG::kNoise, BG::kNodeScale, 100, false, scale);
    EXPECT_EQ(m.noise, NodeNoise::None);
    EXPECT_EQ(m.scale, 0.0);
    EXPECT_EQ(calls, 0) << "no scale is calibrated without noise";
    // node_scale given: taken as is; off: no noise whatever the keys say.
    m = LG::resolve(values({{BL::kNodeScale, 0.25}}), BL::kTree, BL::kNoise, BL::kNodeScale, 100, false, scale);
    EXPECT_EQ(m.scale, 0.25);
    EXPECT_EQ(calls, 0);
    m = LG::resolve(values({{BL::kNodeScale, 0.25}}), BL::kTree, BL::kNoise, BL::kNodeScale, 100, true, scale);
    EXPECT_FALSE(m.on());
    EXPECT_EQ(m.scale, 0.0);
}

TEST(PrefixKeys, TheGaussianLawNeedsADeltaUnlessItsScaleIsGivenOrTheNoiseIsOff) {
    using LG = learners::PrefixKeys<learners::PrefixLaws::LaplaceGaussian>;
    using B = Block<LG>;
    Diagnostic diag;
    EXPECT_FALSE(LG::check_delta(values({{B::kNoise, 1.0}}), B::kNoise, B::kNodeScale, B::kDelta, false, diag));
    EXPECT_STREQ(diag.key, "delta");
    EXPECT_NE(std::string(diag.message).find("needs delta in (0, 1)"), std::string::npos) << diag.message;
    EXPECT_TRUE(LG::check_delta(values({{B::kNoise, 1.0}, {B::kDelta, 1e-6}}), B::kNoise, B::kNodeScale, B::kDelta,
                                false, diag));
    EXPECT_TRUE(LG::check_delta(values({{B::kNoise, 1.0}, {B::kNodeScale, 2.0}}), B::kNoise, B::kNodeScale, B::kDelta,
                                false, diag));
    EXPECT_TRUE(LG::check_delta(values({{B::kNoise, 1.0}}), B::kNoise, B::kNodeScale, B::kDelta, true, diag));
    EXPECT_TRUE(LG::check_delta(values({}), B::kNoise, B::kNodeScale, B::kDelta, false, diag)) << "Laplace: no delta";
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
