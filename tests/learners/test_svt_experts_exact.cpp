// svt-experts with the exact samplers (noise = "discrete-laplace", the float default; docs/spec/model.md §1.9,
// §1.10; kernels/learners/svt_experts.hpp): which runs use them and what they report (never more than asked, in both
// variants), the same bits in float and double and on every CPU launch policy (the
// draws are exact, so no summation order can change them), the switching round's recipe (the phase accumulator holds
// the lattice-rounded losses of the documented word, the threshold and the draw come from the documented streams),
// and the regret law against the continuous double run (KS, statistical). The command line around the key:
// tests/learners/test_lattice_learners.cpp (LatticeLearners.SvtExpertsExactSamplersOnTheCommandLine).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/learners/svt_experts.hpp"
#include "learners/phase_recipe.hpp"
#include "learners/simulate.hpp"
#include "noise/stat_tests.hpp"

namespace {

using namespace dpr;
using learners::SvtExperts;
using test::SimOptions;
using test::SimResult;
using test::simulate;

constexpr double kExact = 1; // noise = "discrete-laplace"

using test::in;

SvtExperts::Params resolved(test::KeyList keys, bool float_precision, std::uint32_t d, std::uint64_t T) {
    return test::resolved<SvtExperts>(keys, float_precision, d, T);
}

bool exact(const learners::PrivacyReport& r) { return r.as_run; }

TEST(SvtExpertsExact, FloatDefaultsToTheExactSamplersAndNeverReportsMoreThanAsked) {
    for (double eps : {0.1, 1.0, 10.0})
        for (std::uint32_t d : {4u, 300u})
            for (std::uint64_t T : {64u, 4096u})
                for (double variant : {0.0, 1.0}) {
                    SCOPED_TRACE(testing::Message() << "eps " << eps << " d " << d << " T " << T << " variant " << variant);
                    const test::KeyList keys = {{"epsilon", eps}, {"variant", variant}};
                    const SvtExperts::Params f = resolved(keys, true, d, T);
                    ASSERT_TRUE(f.lattice);
                    const learners::PrivacyReport rf = SvtExperts::privacy(f);
                    EXPECT_TRUE(exact(rf)) << rf.accountant;
                    EXPECT_LE(rf.epsilon, eps);
                    EXPECT_LT(rf.delta, variant == 1.0 ? 1e-6 + 1e-14 : 1e-14);
                    // Each part at most the continuous one: the sparse vectors eps/2, each draw eta.
                    EXPECT_LE(f.lsvt.epsilon, eps / 2);
                    EXPECT_LE(f.xexp.epsilon, f.eta);
                    EXPECT_GE(f.lsvt.threshold_scale, 4.0 / eps);
                    EXPECT_LE(f.lsvt.threshold_scale, 4.0 / eps * (1 + 1e-5)); // exact queries, Delta = 1
                    const SvtExperts::Params dbl = resolved(keys, false, d, T);
                    EXPECT_FALSE(dbl.lattice) << "double keeps the continuous samplers";
                    const learners::PrivacyReport rd = SvtExperts::privacy(dbl);
                    EXPECT_FALSE(exact(rd));
                    EXPECT_LE(rd.epsilon, eps * (1 + 1e-12));
                    // At most the continuous report (each part is), and within a few per mille of it (the exponential
                    // mechanism's fit); "approx" reports about 0.75 eps in both (afkt23.md §C1).
                    EXPECT_LE(rf.epsilon, rd.epsilon);
                    EXPECT_GT(rf.epsilon, 0.995 * rd.epsilon);
                    const SvtExperts::Params asked = resolved({{"epsilon", eps}, {"variant", variant}, {"noise", kExact}}, false, d, T);
                    ASSERT_TRUE(asked.lattice) << "asked for in double";
                    EXPECT_EQ(SvtExperts::privacy(asked).epsilon, rf.epsilon);
                }
    // eps = inf (no noise) and an infinite budget keep the continuous path: nothing to make exact.
    EXPECT_FALSE(resolved({{"epsilon", kInf}}, true, 8, 64).lattice);
}

/// keys that make svt-experts switch within a few hundred rounds on halving (a small budget, so a small threshold).
const test::KeyList kSwitching = {{"epsilon", 20.0}, {"switch_budget", 6.0}};
const test::KeyList kSwitchingExact = {{"epsilon", 20.0}, {"switch_budget", 6.0}, {"noise", kExact}};

TEST(SvtExpertsExact, FloatAndDoubleAndEveryCpuLaunchPolicyGiveTheSameBits) {
    const SimResult ref = simulate("svt-experts", kSwitching, "halving", {}, 64, 400, 37, 1, 3, false, 4, 0,
                                   in(Precision::Float, "instances", "generic"));
    ASSERT_TRUE(exact(ref.privacy));
    double switches = 0;
    for (std::uint32_t k = 0; k < ref.instances; ++k) switches += ref.diagnostic("switches", k);
    EXPECT_GT(switches, 2.0 * ref.instances) << "the runs switch: the draws are exercised";
    for (const char* lanes : {"instances", "coordinates"})
        for (const char* isa : {"generic", "auto"})
            for (Precision prec : {Precision::Float, Precision::Double}) {
                const SimResult r = simulate("svt-experts", kSwitchingExact, "halving", {}, 64, 400, 37, 2, 3, false, 4, 0, in(prec, lanes, isa));
                EXPECT_EQ(r.final_regret, ref.final_regret) << lanes << " " << isa << " " << r.policy;
                EXPECT_EQ(r.diagnostics, ref.diagnostics) << lanes << " " << isa << " " << r.policy;
            }
}

TEST(SvtExpertsExact, ARoundFollowsTheRecipe) {
    // One instance driven by hand (test/solo.hpp's pattern through the engine's one-lane team): after each round the
    // phase accumulator is the sum of the played expert's losses rounded with the documented word, a switch draws
    // the threshold of its round on the lattice and the expert of the exact mechanism.
    const std::uint32_t d = 8;
    const std::uint64_t T = 300;
    const SvtExperts::Params p = resolved(kSwitching, true, d, T);
    ASSERT_TRUE(p.lattice);
    SerialTeam<double> team{RngKey{5, 0}, 9};
    std::vector<double> scal(learners::kPhaseSlots, -7.0);
    learners::contract::SerialWS<double> ws{};
    ws.scalars = StridedView<double>{scal.data(), 1, static_cast<std::uint64_t>(learners::kPhaseSlots)};
    SvtExperts::init(p, team, ws);
    EXPECT_EQ(scal[learners::kPhaseRho], mech::lattice_svt_threshold(team, p.lsvt, p.Lthr, 1, 0u));
    std::vector<double> loss(d), cum(d, 0.0);
    double acc = 0.0;
    int switches_seen = 0;
    for (std::uint64_t t = 1; t <= T; ++t) {
        test::recipe_losses(loss, t);
        const bool pending = scal[learners::kPhasePending] > 0.5;
        const ScalarLossRow<double> row{loss.data(), loss.data(), cum.data()};
        SvtExperts::round(p, team, ws, t, row);
        const auto x = static_cast<std::uint32_t>(scal[learners::kPhaseX]);
        if (pending) {
            ++switches_seen;
            const std::uint32_t want =
                test::recipe_exact_expert(team, p.xexp, d, t, [&](std::uint32_t i) { return std::fmax(cum[i], p.Lstar); });
            ASSERT_EQ(x, want) << "round " << t;
            ASSERT_EQ(scal[learners::kPhaseRho], mech::lattice_svt_threshold(team, p.lsvt, p.Lthr, t, 0u)) << "round " << t;
            acc = 0.0;
        }
        acc += test::recipe_lattice_loss(team, loss[x], p.lsvt.tab.gamma, t);
        ASSERT_EQ(scal[learners::kPhaseAcc], acc) << "round " << t;
        for (std::uint32_t i = 0; i < d; ++i) cum[i] += loss[i];
    }
    EXPECT_GT(switches_seen, 2);
}

TEST(SvtExpertsExact_Stat, TheRegretLawIsTheContinuousDoubleLaw) {
    // Disjoint instances (ids 0 and 3000) over the same halving sequence: the float run with the exact samplers
    // against the double run with the continuous ones. The final regret and the number of switches.
    const SimResult f = simulate("svt-experts", kSwitching, "halving", {}, 64, 400, 3000, 2, 11, false, 4, 0, in(Precision::Float));
    const SimResult d = simulate("svt-experts", kSwitching, "halving", {}, 64, 400, 3000, 2, 11, false, 4, 3000, in(Precision::Double));
    // Power: the continuous run at eps = 26 (a noise 23% smaller) is another law.
    const SimResult e = simulate("svt-experts", {{"epsilon", 26.0}, {"switch_budget", 6.0}}, "halving", {}, 64, 400, 3000,
                                 2, 11, false, 4, 6000, in(Precision::Double));
    test::expect_exact_law_is_continuous(f, d, e, "last_switch_round", "eps 26 against 20");
}

} // namespace
