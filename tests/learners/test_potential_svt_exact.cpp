// potential-svt-experts with the exact samplers (noise = "discrete-laplace", the float default; docs/spec/afkt23.md §C4
// "Exact samplers", docs/spec/model.md §1.9, §1.10; kernels/learners/potential_svt_experts.hpp): which runs use them
// and what they report (each part at most its continuous counterpart, so never more than the continuous report, and
// never more than asked by default), that the computed log potential stays within the error bound the report's query
// sensitivity is built on, the same bits in float and double and on every CPU launch policy, the round's recipe (the
// log potential, the lattice query and threshold of the documented streams, the exact draw over L_{t-1}), and the
// regret law against the continuous double run (KS, statistical).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/adversaries/halving.hpp"
#include "kernels/learners/potential_svt_experts.hpp"
#include "learners/phase_recipe.hpp"
#include "learners/simulate.hpp"
#include "learners/solo.hpp"
#include "noise/stat_tests.hpp"

namespace {

using namespace dpr;
using learners::PotentialSvtExperts;
using test::in;
using test::SimResult;
using test::simulate;

constexpr double kExact = 1; // noise = "discrete-laplace"

PotentialSvtExperts::Params resolved(test::KeyList keys, bool float_precision, std::uint32_t d, std::uint64_t T) {
    return test::resolved<PotentialSvtExperts>(keys, float_precision, d, T);
}

/// ln phi = -eta min L + ln sum exp(-eta (L - min L)) - ln d in long double (the spec's formula, an independent
/// evaluation).
long double reference_log_potential(const std::vector<double>& cum, double eta) {
    long double m = cum[0];
    for (double c : cum) m = std::min<long double>(m, c);
    long double s = 0;
    for (double c : cum) s += std::exp(-static_cast<long double>(eta) * (c - m));
    return -static_cast<long double>(eta) * m + std::log(s) - std::log(static_cast<long double>(cum.size()));
}

TEST(PotentialSvtExact, FloatDefaultsToTheExactSamplersAndNeverReportsMoreThanAsked) {
    for (double eps : {0.1, 1.0, 10.0})
        for (std::uint32_t d : {4u, 300u})
            for (std::uint64_t T : {64u, 4096u})
                for (double variant : {0.0, 1.0})
                    for (double sens : {1.0, 0.0}) { // conservative (the default), paper
                        SCOPED_TRACE(testing::Message() << "eps " << eps << " d " << d << " T " << T << " variant "
                                                        << variant << " sensitivity " << sens);
                        const test::KeyList keys = {{"epsilon", eps}, {"variant", variant}, {"sensitivity", sens}};
                        const PotentialSvtExperts::Params f = resolved(keys, true, d, T);
                        ASSERT_TRUE(f.lattice);
                        const learners::PrivacyReport rf = PotentialSvtExperts::privacy(f);
                        EXPECT_TRUE(rf.as_run) << rf.accountant;
                        if (sens == 1.0) EXPECT_LE(rf.epsilon, eps);
                        EXPECT_LT(rf.delta, variant == 1.0 ? 1e-6 + 1e-13 : 1e-13);
                        // Each part at most its continuous counterpart: the sparse vector eps_0 (2 eps_0 with the
                        // paper's Delta = 1 noise on 2-sensitive queries), each draw 2 eta.
                        EXPECT_LE(f.lsvt.epsilon, sens == 1.0 ? f.eps0 : 2 * f.eps0);
                        EXPECT_LE(f.xexp.epsilon, 2 * f.eta);
                        const PotentialSvtExperts::Params dbl = resolved(keys, false, d, T);
                        EXPECT_FALSE(dbl.lattice) << "double keeps the continuous samplers";
                        EXPECT_EQ(dbl.eps0, f.eps0);
                        EXPECT_EQ(dbl.eta, f.eta);
                        const learners::PrivacyReport rd = PotentialSvtExperts::privacy(dbl);
                        EXPECT_FALSE(rd.as_run);
                        EXPECT_LE(rf.epsilon, rd.epsilon);
                        // Within a per cent of it: the raise of the sparse vector's scale meets its epsilon, the fit
                        // of the exact draw lowers c by at most 0.1%.
                        EXPECT_GT(rf.epsilon, 0.99 * rd.epsilon);
                        const PotentialSvtExperts::Params asked = resolved(
                            {{"epsilon", eps}, {"variant", variant}, {"sensitivity", sens}, {"noise", kExact}}, false, d, T);
                        ASSERT_TRUE(asked.lattice) << "asked for in double";
                        EXPECT_EQ(PotentialSvtExperts::privacy(asked).epsilon, rf.epsilon);
                    }
}

TEST(PotentialSvtExact, AskedForWhereItCannotApplyIsAnErrorNamingTheKey) {
    static const auto infos = config::describe_all<learners::AllLearners>("learner");
    Problem pb;
    pb.d = 8;
    pb.T = 64;
    // eps = 1e9: the exact draw's per-draw epsilon is too large for its 384-bit weights.
    Diagnostic diag;
    const KeyValues kv = test::key_values(infos, PotentialSvtExperts::kName, {{"epsilon", 1e9}, {"noise", kExact}});
    EXPECT_FALSE(PotentialSvtExperts::check(kv, pb, diag));
    EXPECT_STREQ(diag.key, "noise");
    EXPECT_NE(std::string(diag.message).find("docs/spec/model.md"), std::string::npos) << diag.message;
    // Not asked for (the float default): the continuous samplers, with run.json's float warning.
    EXPECT_FALSE(resolved({{"epsilon", 1e9}}, true, 8, 64).lattice);
    EXPECT_FALSE(PotentialSvtExperts::privacy(resolved({{"epsilon", 1e9}}, true, 8, 64)).as_run);
}

TEST(PotentialSvtExact, TheComputedLogPotentialStaysWithinItsErrorBound) {
    // The report's query sensitivity 2 + 2 err_q rests on log_potential_error bounding |computed - exact| of ln phi.
    // Rows of cumulative losses as the engine computes them (sums of up to T losses in [0, 1], in double) against the
    // long double formula, over eta from 1e-6 to 2, d up to 5000, T up to 1e6; and the bound is small next to the
    // sensitivity (it costs at most one lattice step).
    std::mt19937_64 gen(11);
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    SerialTeam<double> team{RngKey{1, 0}, 0};
    double worst = 0;
    for (int rep = 0; rep < 60; ++rep) {
        const std::uint32_t d = rep % 3 == 0 ? 5000u : rep % 3 == 1 ? 37u : 2u;
        const std::uint64_t T = rep % 4 == 0 ? 1000000u : rep % 4 == 1 ? 4096u : 50u;
        const double eta = std::pow(10.0, -6.0 + 6.3 * unif(gen));
        PotentialSvtExperts::Params p{};
        p.d = d;
        p.eta = eta;
        p.ln_d = std::log(static_cast<double>(d));
        std::vector<double> cum(d);
        const std::uint64_t rounds = rep % 2 ? T - 1 : T / 3;
        for (std::uint32_t i = 0; i < d; ++i) {
            // L(x) = rounds * a fraction (not a sum the engine would make exactly, but within its error of one)
            cum[i] = std::floor(static_cast<double>(rounds) * unif(gen) * (i % 5 == 0 ? 0.01 : 1.0) * 4096.0) / 4096.0;
        }
        const ScalarLossRow<double> row{cum.data(), cum.data(), cum.data()};
        const double got = PotentialSvtExperts::exact_log_potential(p, team, row);
        const long double want = reference_log_potential(cum, eta);
        const double bound = PotentialSvtExperts::log_potential_error(p, T);
        EXPECT_LE(std::fabs(static_cast<long double>(got) - want), bound) << "d " << d << " T " << T << " eta " << eta;
        worst = std::max(worst, static_cast<double>(std::fabs(static_cast<long double>(got) - want) / bound));
        EXPECT_LT(PotentialSvtExperts::query_error(p, T), 2e-3) << "d " << d << " T " << T << " eta " << eta;
    }
    EXPECT_GT(worst, 0.0) << "the comparison sees the rounding";
}

/// keys that make potential-svt-experts switch often on halving (alpha = 1/4: a phase ends after each halving).
const test::KeyList kSwitching = {{"epsilon", 1.0}, {"eta", 0.5}, {"eps0", 50.0}, {"alpha", 0.25}, {"switch_budget", 30.0}};
const test::KeyList kSwitchingExact = {{"epsilon", 1.0},       {"eta", 0.5},           {"eps0", 50.0},
                                       {"alpha", 0.25},        {"switch_budget", 30.0}, {"noise", kExact}};

TEST(PotentialSvtExact, FloatAndDoubleAndEveryCpuLaunchPolicyGiveTheSameBits) {
    for (bool per_instance : {false, true}) // the shared exact table, the scalar draw of an own sequence
        for (std::uint32_t d : {24u, 300u}) {
            SCOPED_TRACE(testing::Message() << "d " << d << " per_instance " << per_instance);
            const SimResult ref = simulate("potential-svt-experts", kSwitching, "halving", {}, d, 400, 37, 1, 3,
                                           per_instance, 4, 0, in(Precision::Float, "instances", "generic"));
            ASSERT_TRUE(ref.privacy.as_run);
            double switches = 0;
            for (std::uint32_t k = 0; k < ref.instances; ++k) switches += ref.diagnostic("switches", k);
            EXPECT_GT(switches, 2.0 * ref.instances) << "the runs switch: the draws are exercised";
            for (const char* lanes : {"instances", "coordinates"})
                for (const char* isa : {"generic", "auto"})
                    for (Precision prec : {Precision::Float, Precision::Double}) {
                        const SimResult r = simulate("potential-svt-experts", kSwitchingExact, "halving", {}, d,
                                                     400, 37, 2, 3, per_instance, 4, 0, in(prec, lanes, isa));
                        EXPECT_EQ(r.final_regret, ref.final_regret) << lanes << " " << isa << " " << r.policy;
                        EXPECT_EQ(r.diagnostics, ref.diagnostics) << lanes << " " << isa << " " << r.policy;
                    }
            // The serial oracle (one lane, no shared values: its own log potential and the scalar exact draw) gives
            // the bits of the engine, which on a shared sequence reads the round's shared log potential and table.
            Problem pb;
            pb.d = d;
            pb.T = 400;
            KeyValues akv;
            const auto ap = adversaries::Halving::resolve(akv, pb);
            const PotentialSvtExperts::Params p = resolved(kSwitching, true, d, 400);
            std::vector<double> row(d);
            for (std::uint32_t k = 0; k < ref.instances; k += 6) {
                const adversaries::SequenceCtx ctx{3, 0, per_instance ? k : adversaries::kSharedSequence};
                test::Solo<PotentialSvtExperts> solo(p, 3, k);
                double total = 0;
                for (std::uint64_t t = 1; t <= 400; ++t) {
                    adversaries::Halving::fill(ap, ctx, t, row.data());
                    total += solo.round(t, row.data()).realized;
                }
                EXPECT_EQ(total, ref.final_realized[k]) << "instance " << k;
                EXPECT_EQ(solo.diagnostics()[0], ref.diagnostic("switches", k)) << "instance " << k;
            }
            // auto takes instance lanes at any d: the log potential is a loop over the instances' lanes.
            const SimResult a = simulate("potential-svt-experts", kSwitching, "halving", {}, d, 400, 37, 2, 3,
                                         per_instance, 4, 0, in(Precision::Float));
            if (!per_instance) EXPECT_NE(a.policy.find("instance lanes"), std::string::npos) << a.policy;
        }
}

TEST(PotentialSvtExact, ARoundFollowsTheRecipe) {
    // One instance driven by hand through the engine's one-lane team (no shared table: the scalar exact draw).
    using P = PotentialSvtExperts;
    const std::uint32_t d = 8;
    const std::uint64_t T = 400;
    const P::Params p = resolved({{"epsilon", 1.0}, {"eta", 0.5}, {"eps0", 50.0}, {"alpha", 0.25}, {"switch_budget", 1000.0}},
                                 true, d, T); // live to the end
    ASSERT_TRUE(p.lattice);
    SerialTeam<double> team{RngKey{5, 0}, 9};
    std::vector<double> scal(P::kScalars, -7.0);
    learners::contract::SerialWS<double> ws{};
    ws.scalars = StridedView<double>{scal.data(), 1, static_cast<std::uint64_t>(P::kScalars)};
    P::init(p, team, ws);
    EXPECT_EQ(scal[learners::kPhaseRho], mech::lattice_svt_threshold(team, p.lsvt, p.threshold, 1, 0u));
    const double bound = P::log_potential_error(p, T);
    std::vector<double> loss(d), cum(d, 0.0);
    int switches = 0, asked = 0, fires = 0;
    for (std::uint64_t t = 1; t <= T; ++t) {
        test::recipe_losses(loss, t);
        const bool pending = scal[learners::kPhasePending] > 0.5;
        const double acc = scal[learners::kPhaseAcc], rho = scal[learners::kPhaseRho];
        const ScalarLossRow<double> row{loss.data(), loss.data(), cum.data()};
        P::round(p, team, ws, t, row);
        const double lnphi = scal[P::kLogPhi];
        ASSERT_EQ(lnphi, P::exact_log_potential(p, team, row)) << "round " << t;
        ASSERT_LE(std::fabs(static_cast<long double>(lnphi) - reference_log_potential(cum, p.eta)), bound) << "round " << t;
        if (pending) {
            ++switches;
            const std::uint32_t want = test::recipe_exact_expert(team, p.xexp, d, t, [&](std::uint32_t i) { return cum[i]; });
            ASSERT_EQ(static_cast<std::uint32_t>(scal[learners::kPhaseX]), want) << "round " << t;
            ASSERT_EQ(scal[learners::kPhaseAcc], lnphi) << "t* = t - 1";
            ASSERT_EQ(scal[learners::kPhaseRho], mech::lattice_svt_threshold(team, p.lsvt, p.threshold, t, 0u)) << "round " << t;
            ASSERT_EQ(scal[learners::kPhasePending], 0.0) << "no query in a phase's first round";
        } else {
            ++asked;
            const double q = (acc - lnphi) / p.eta;
            const double noisy = mech::lattice_svt_noisy_query(team, p.lsvt, q, t, 0u);
            ASSERT_EQ(std::fmod(noisy, p.lsvt.tab.gamma), 0.0) << "a lattice point";
            const bool fire = noisy > rho;
            ASSERT_EQ(scal[learners::kPhasePending] > 0.5, fire) << "round " << t;
            fires += fire;
        }
        for (std::uint32_t i = 0; i < d; ++i) cum[i] += loss[i];
    }
    EXPECT_GT(switches, 10);
    EXPECT_GT(asked, 200);
    EXPECT_EQ(fires, switches + (scal[learners::kPhasePending] > 0.5 ? 1 : 0));
}

TEST(PotentialSvtExact_Stat, TheRegretLawIsTheContinuousDoubleLaw) {
    // Disjoint instances (ids 0 and 3000) over the same halving sequence: the float run with the exact samplers
    // against the double run with the continuous ones. The final regret and the switch counts.
    const SimResult f = simulate("potential-svt-experts", kSwitching, "halving", {}, 64, 400, 3000, 2, 11, false, 4, 0,
                                 in(Precision::Float));
    const SimResult d = simulate("potential-svt-experts", kSwitching, "halving", {}, 64, 400, 3000, 2, 11, false, 4, 3000,
                                 in(Precision::Double));
    // Power: the continuous run at eps0 = 25 (twice the sparse vector's noise) is another law.
    const SimResult e = simulate("potential-svt-experts",
                                 {{"epsilon", 1.0}, {"eta", 0.5}, {"eps0", 25.0}, {"alpha", 0.25}, {"switch_budget", 30.0}},
                                 "halving", {}, 64, 400, 3000, 2, 11, false, 4, 6000, in(Precision::Double));
    test::expect_exact_law_is_continuous(f, d, e, "switches", "eps0 25 against 50");
}

} // namespace
