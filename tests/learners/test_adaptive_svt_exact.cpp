// adaptive-svt-experts with the exact samplers (noise = "discrete-laplace", the float default; docs/spec/model.md
// §1.8-§1.10, docs/spec/afkt23.md §C2; kernels/learners/adaptive_svt_experts.hpp): which runs use them and what they
// report (each part at most its continuous counterpart, so never more than asked), the same bits in float and double
// and on every CPU launch policy, the round's recipe (the phase accumulator holds the lattice-rounded losses of the
// documented word; a switch draws the expert of the exact mechanism over max(L_{t-1}, Lbar*), checks it with the
// documented lattice release and doubles Lbar* exactly when that release passes the bar), and the regret law against
// the continuous double run (KS, statistical). net-oco, Algorithm 2 on the points of a rho-net (afkt23.md §C5 "Exact
// samplers"): the same, and its view's bounds on the computed net points and scores. svt-experts' own:
// test_svt_experts_exact.cpp.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/adversaries/file.hpp"
#include "kernels/learners/adaptive_svt_experts.hpp"
#include "kernels/learners/net_oco.hpp"
#include "learners/phase_recipe.hpp"
#include "learners/simulate.hpp"
#include "noise/stat_tests.hpp"

namespace {

using namespace dpr;
using learners::AdaptiveSvtExperts;
using learners::BallNetExperts;
using learners::NetOco;
using test::in;
using test::SimResult;
using test::simulate;

constexpr double kExact = 1; // noise = "discrete-laplace"

AdaptiveSvtExperts::Params resolved(test::KeyList keys, bool float_precision, std::uint32_t d, std::uint64_t T) {
    return test::resolved<AdaptiveSvtExperts>(keys, float_precision, d, T);
}

TEST(AdaptiveSvtExact, FloatDefaultsToTheExactSamplersAndNeverReportsMoreThanAsked) {
    for (double eps : {0.1, 1.0, 10.0, 100.0})
        for (std::uint32_t d : {4u, 300u})
            for (std::uint64_t T : {64u, 4096u}) {
                SCOPED_TRACE(testing::Message() << "eps " << eps << " d " << d << " T " << T);
                const AdaptiveSvtExperts::Params f = resolved({{"epsilon", eps}}, true, d, T);
                ASSERT_TRUE(f.lattice);
                const learners::PrivacyReport rf = AdaptiveSvtExperts::privacy(f);
                EXPECT_TRUE(rf.as_run);
                EXPECT_LE(rf.epsilon, eps);
                EXPECT_LT(rf.delta, 1e-14);
                // Each part at most its continuous counterpart: a run's sparse vectors eps_0/2, each draw eta, each
                // check eps_0/K.
                EXPECT_LE(f.lsvt.epsilon, f.eps0 / 2);
                EXPECT_LE(f.xexp.epsilon, f.eta);
                EXPECT_LE(f.chk_g.epsilon, f.eps0 / f.K);
                EXPECT_GE(f.chk.scale, f.K / f.eps0);
                const AdaptiveSvtExperts::Params dbl = resolved({{"epsilon", eps}}, false, d, T);
                EXPECT_FALSE(dbl.lattice) << "double keeps the continuous samplers";
                const learners::PrivacyReport rd = AdaptiveSvtExperts::privacy(dbl);
                EXPECT_FALSE(rd.as_run);
                EXPECT_LE(rd.epsilon, eps * (1 + 1e-12));
                // Within a few per mille of the continuous report (the exponential mechanism's fit, the raises).
                EXPECT_LE(rf.epsilon, rd.epsilon);
                EXPECT_GT(rf.epsilon, 0.995 * rd.epsilon);
                const AdaptiveSvtExperts::Params asked = resolved({{"epsilon", eps}, {"noise", kExact}}, false, d, T);
                ASSERT_TRUE(asked.lattice) << "asked for in double";
                EXPECT_EQ(AdaptiveSvtExperts::privacy(asked).epsilon, rf.epsilon);
            }
}

TEST(AdaptiveSvtExact, AskedForWhereItCannotApplyIsAnErrorNamingTheKey) {
    // eps = 1e5: the sparse vector's lattice step is so fine against the sensitivity that its truncation shows.
    static const auto infos = config::describe_all<learners::AllLearners>("learner");
    Diagnostic diag;
    const KeyValues kv = test::key_values(infos, AdaptiveSvtExperts::kName, {{"epsilon", 1e5}, {"noise", kExact}});
    Problem pb;
    pb.d = 8;
    pb.T = 64;
    EXPECT_FALSE(AdaptiveSvtExperts::check(kv, pb, diag));
    EXPECT_STREQ(diag.key, "noise");
    EXPECT_NE(std::string(diag.message).find("delta above 1e-15"), std::string::npos) << diag.message;
    // Not asked for (the float default): the continuous samplers, with run.json's float warning.
    EXPECT_FALSE(resolved({{"epsilon", 1e5}}, true, 8, 64).lattice);
    // eps = 1000 at T = 4096 with two experts: the check's lattice step 2^-8 is too fine to round L_{t-1} <= T exactly.
    const KeyValues kc = test::key_values(infos, AdaptiveSvtExperts::kName, {{"epsilon", 1000.0}, {"noise", kExact}});
    pb.d = 2;
    pb.T = 4096;
    EXPECT_FALSE(AdaptiveSvtExperts::check(kc, pb, diag));
    EXPECT_STREQ(diag.key, "noise");
    EXPECT_NE(std::string(diag.message).find("the lattice check of Algorithm 2 needs a lattice step above (T + 1) / 2^20"),
              std::string::npos)
        << diag.message;
}

/// keys that make adaptive-svt-experts switch (and double Lbar*) within a few hundred rounds on halving: eps_0 = 50
/// at T = 400 (R = 10), so eta ~ 0.1 and Lthr ~ Lbar* + 44.
const test::KeyList kSwitching = {{"epsilon", 1000.0}};
const test::KeyList kSwitchingExact = {{"epsilon", 1000.0}, {"noise", kExact}};

TEST(AdaptiveSvtExact, FloatAndDoubleAndEveryCpuLaunchPolicyGiveTheSameBits) {
    const SimResult ref = simulate("adaptive-svt-experts", kSwitching, "halving", {}, 64, 400, 37, 1, 3, false, 4, 0,
                                   in(Precision::Float, "instances", "generic"));
    ASSERT_TRUE(ref.privacy.as_run);
    double switches = 0, doublings = 0;
    for (std::uint32_t k = 0; k < ref.instances; ++k) {
        switches += ref.diagnostic("switches", k);
        doublings += ref.diagnostic("doublings", k);
    }
    EXPECT_GT(switches, 2.0 * ref.instances) << "the runs switch: the draws are exercised";
    EXPECT_GT(doublings, 1.0 * ref.instances) << "the checks pass: Lbar* doubles";
    for (const char* lanes : {"instances", "coordinates"})
        for (const char* isa : {"generic", "auto"})
            for (Precision prec : {Precision::Float, Precision::Double}) {
                const SimResult r = simulate("adaptive-svt-experts", kSwitchingExact, "halving", {}, 64, 400, 37, 2, 3,
                                             false, 4, 0, in(prec, lanes, isa));
                EXPECT_EQ(r.final_regret, ref.final_regret) << lanes << " " << isa << " " << r.policy;
                EXPECT_EQ(r.diagnostics, ref.diagnostics) << lanes << " " << isa << " " << r.policy;
            }
}

TEST(AdaptiveSvtExact, ARoundFollowsTheRecipe) {
    // One instance driven by hand through the engine's one-lane team, restart_expert = "keep" so that the expert
    // after a switch is the exact mechanism's pick even when Lbar* doubles.
    using A = AdaptiveSvtExperts;
    const std::uint32_t d = 8;
    const std::uint64_t T = 400;
    const A::Params p = resolved({{"epsilon", 1000.0}, {"restart_expert", 1.0}}, true, d, T);
    ASSERT_TRUE(p.lattice);
    SerialTeam<double> team{RngKey{5, 0}, 9};
    std::vector<double> scal(A::kScalars, -7.0);
    learners::contract::SerialWS<double> ws{};
    ws.scalars = StridedView<double>{scal.data(), 1, static_cast<std::uint64_t>(A::kScalars)};
    A::init(p, team, ws);
    EXPECT_EQ(scal[learners::kPhaseRho], mech::lattice_svt_threshold(team, p.lsvt, A::threshold<SerialTeam<double>>(p, 1.0), 1, 0u));
    std::vector<double> loss(d), cum(d, 0.0);
    double acc = 0.0;
    int switches_seen = 0, doublings_seen = 0;
    for (std::uint64_t t = 1; t <= T; ++t) {
        test::recipe_losses(loss, t);
        const bool pending = scal[learners::kPhasePending] > 0.5;
        const double lbar = scal[A::kLbar], runs = scal[A::kRuns];
        const ScalarLossRow<double> row{loss.data(), loss.data(), cum.data()};
        A::round(p, team, ws, t, row);
        const auto x = static_cast<std::uint32_t>(scal[learners::kPhaseX]);
        if (pending) {
            ++switches_seen;
            const std::uint32_t want =
                test::recipe_exact_expert(team, p.xexp, d, t, [&](std::uint32_t i) { return std::fmax(cum[i], lbar); });
            ASSERT_EQ(x, want) << "round " << t;
            const std::uint32_t w = rng::instance_stream(team, rng::Purpose::Lattice, 2u, t, 0u).block(0).w[0];
            const double check = noise::lattice_release(
                cum[want], rng::instance_stream(team, rng::Purpose::SparseVector, mech::kSvtCheck, t, 0u), w, p.chk.dlap);
            ASSERT_EQ(std::fmod(check, p.chk.dlap.gamma), 0.0);
            const bool dbl = check > lbar - p.check_margin && runs < p.R;
            ASSERT_EQ(scal[A::kLbar], dbl ? 2 * lbar : lbar) << "round " << t;
            doublings_seen += dbl;
            ASSERT_EQ(scal[learners::kPhaseRho],
                      mech::lattice_svt_threshold(team, p.lsvt, A::threshold<SerialTeam<double>>(p, scal[A::kLbar]), t, 0u))
                << "round " << t;
            acc = 0.0;
        }
        acc += test::recipe_lattice_loss(team, loss[x], p.lsvt.tab.gamma, t);
        ASSERT_EQ(scal[learners::kPhaseAcc], acc) << "round " << t;
        for (std::uint32_t i = 0; i < d; ++i) cum[i] += loss[i];
    }
    EXPECT_GT(switches_seen, 2);
    EXPECT_GT(doublings_seen, 0);
    EXPECT_EQ(scal[A::kRuns], 1.0 + doublings_seen);
}

TEST(AdaptiveSvtExact_Stat, TheRegretLawIsTheContinuousDoubleLaw) {
    // Disjoint instances (ids 0 and 3000) over the same halving sequence: the float run with the exact samplers
    // against the double run with the continuous ones. The final regret and the round of the last switch.
    const SimResult f = simulate("adaptive-svt-experts", kSwitching, "halving", {}, 64, 400, 3000, 2, 11, false, 4, 0,
                                 in(Precision::Float));
    const SimResult d = simulate("adaptive-svt-experts", kSwitching, "halving", {}, 64, 400, 3000, 2, 11, false, 4, 3000,
                                 in(Precision::Double));
    // Power: the continuous run at eps = 1300 (a noise 23% smaller) is another law.
    const SimResult e = simulate("adaptive-svt-experts", {{"epsilon", 1300.0}}, "halving", {}, 64, 400, 3000, 2, 11, false,
                                 4, 6000, in(Precision::Double));
    test::expect_exact_law_is_continuous(f, d, e, "switches", "eps 1300 against 1000");
}

// ---- net-oco: Algorithm 2 on the points of a rho-net (afkt23.md §C5 "Exact samplers") ----------------------------

TEST(NetOcoExact, FloatDefaultsToTheExactSamplersAndNeverReportsMoreThanAsked) {
    for (double eps : {0.1, 1.0, 10.0, 100.0})
        for (std::uint32_t dim : {1u, 2u})
            for (std::uint64_t T : {64u, 1024u}) {
                SCOPED_TRACE(testing::Message() << "eps " << eps << " dim " << dim << " T " << T);
                const NetOco::Params f = test::resolved<NetOco>({{"epsilon", eps}}, true, dim, T);
                ASSERT_TRUE(f.lattice);
                const learners::PrivacyReport rf = NetOco::privacy(f);
                EXPECT_TRUE(rf.as_run);
                EXPECT_LE(rf.epsilon, eps);
                EXPECT_LT(rf.delta, 1e-14);
                EXPECT_LE(f.lsvt.epsilon, f.eps0 / 2);
                EXPECT_LE(f.xexp.epsilon, f.eta);
                EXPECT_LE(f.chk_g.epsilon, f.eps0 / f.K);
                // The draw is planned for the net's score sensitivity nu > 1 (one more grid step than Delta = 1).
                EXPECT_EQ(f.xexp.K, std::ceil((BallNetExperts::score_sensitivity(f.view) +
                                               2 * BallNetExperts::score_error(f.view, static_cast<double>(T))) /
                                              f.xexp.g));
                const NetOco::Params dbl = test::resolved<NetOco>({{"epsilon", eps}}, false, dim, T);
                EXPECT_FALSE(dbl.lattice) << "double keeps the continuous samplers";
                const learners::PrivacyReport rd = NetOco::privacy(dbl);
                EXPECT_FALSE(rd.as_run);
                EXPECT_LE(rf.epsilon, rd.epsilon);
                EXPECT_GT(rf.epsilon, 0.995 * rd.epsilon);
                const NetOco::Params asked = test::resolved<NetOco>({{"epsilon", eps}, {"noise", kExact}}, false, dim, T);
                ASSERT_TRUE(asked.lattice) << "asked for in double";
                EXPECT_EQ(NetOco::privacy(asked).epsilon, rf.epsilon);
            }
}

TEST(NetOcoExact, TheComputedNetPointsAndScoresStayWithinTheirBounds) {
    // The report rests on two bounds of the view: every computed net point, times the largest norm of a Ball row the
    // engine accepts (1 + kNormSlack), is at most score_sensitivity (so the exact F_{t-1}(i) of that point moves by at
    // most it between neighbours), and the computed F_{t-1}(i) is within
    // score_error(T) of the exact value (long double sums of the same g_t, the same computed point).
    std::mt19937_64 gen(3);
    std::uniform_real_distribution<double> unif(-1.0, 1.0);
    SerialTeam<double> team{RngKey{1, 0}, 0};
    for (std::uint32_t dim : {1u, 2u})
        for (double rho : {0.3, 0.01, 0.0007}) {
            const std::uint64_t T = 20000;
            const NetOco::Params p = test::resolved<NetOco>({{"epsilon", 1.0}, {"rho", rho}}, true, dim, T);
            const double nu = BallNetExperts::score_sensitivity(p.view), bound = BallNetExperts::score_error(p.view, T);
            double biggest = 0;
            for (std::uint32_t i = 0; i < p.view.n; ++i) {
                double x0, x1;
                BallNetExperts::point(p.view, static_cast<double>(i), x0, x1);
                biggest = std::max(biggest, static_cast<double>(std::sqrt(static_cast<long double>(x0) * x0 +
                                                                            static_cast<long double>(x1) * x1)));
            }
            EXPECT_LE(biggest * (1 + adversaries::kNormSlack), nu) << "dim " << dim << " rho " << rho;
            EXPECT_GT(biggest, 1.0 - 1e-12) << "the net reaches the sphere";
            // A sequence of g_t with ||g_t|| <= 1 (a third of them unit vectors), summed as the engine does (double,
            // in order) and in long double.
            double G[2] = {0, 0};
            long double Gx[2] = {0, 0};
            double worst = 0;
            for (std::uint64_t t = 1; t <= T; ++t) {
                double g[2] = {unif(gen), dim == 2 ? unif(gen) : 0.0};
                const double n = std::hypot(g[0], g[1]);
                if (n > 1 || t % 3 == 0) g[0] /= n, g[1] /= n;
                if (std::hypot(g[0], g[1]) > 1) continue; // rounding above 1: not a Ball loss
                for (int c = 0; c < 2; ++c) G[c] += g[c], Gx[c] += g[c];
                if (t % 997 == 0 || t == T) {
                    // Round t + 1 reads F_t from G = g_1 + ... + g_t.
                    const ScalarLossRow<double> row{G, G, G};
                    for (std::uint32_t i = 0; i < p.view.n; i += 1 + p.view.n / 500) {
                        const double got = BallNetExperts::cum_at(p.view, team, row, t + 1, i);
                        double x0, x1;
                        BallNetExperts::point(p.view, static_cast<double>(i), x0, x1);
                        const long double want = (static_cast<long double>(t) + Gx[0] * x0 + Gx[1] * x1) / 2;
                        const long double e = std::fabs(static_cast<long double>(got) - want);
                        ASSERT_LE(e, bound) << "dim " << dim << " rho " << rho << " t " << t << " i " << i;
                        worst = std::max(worst, static_cast<double>(e / bound));
                    }
                }
            }
            EXPECT_GT(worst, 0.0) << "the comparison sees the rounding";
        }
}

/// net-oco switches about 3 times per instance at eps = 1000 on drifting (T = 600); at eps = 3000 the lattice sparse
/// vector's truncation would show (it is refused).
const test::KeyList kNetSwitching = {{"epsilon", 1000.0}, {"rho", 0.1}};

TEST(NetOcoExact, FloatAndDoubleAndEveryCpuLaunchPolicyGiveTheSameBits) {
    for (std::uint32_t dim : {1u, 2u}) {
        const double rho = dim == 1 ? 0.1 : 0.25;
        const test::KeyList keys = {{"epsilon", 1000.0}, {"rho", rho}};
        const test::KeyList exact = {{"epsilon", 1000.0}, {"rho", rho}, {"noise", kExact}};
        const SimResult ref = simulate("net-oco", keys, "drifting", {{"noise_scale", 0.7}}, dim, 600, 12, 1, 2, false, 4, 0,
                                       in(Precision::Float, "instances", "generic"));
        ASSERT_TRUE(ref.privacy.as_run);
        double switches = 0;
        for (std::uint32_t k = 0; k < ref.instances; ++k) switches += ref.diagnostic("switches", k);
        EXPECT_GT(switches, 1.0 * ref.instances) << "the runs switch: the draws are exercised";
        for (const char* lanes : {"instances", "coordinates"})
            for (const char* isa : {"generic", "auto"})
                for (Precision prec : {Precision::Float, Precision::Double}) {
                    const SimResult r = simulate("net-oco", exact, "drifting", {{"noise_scale", 0.7}}, dim, 600, 12, 2, 2,
                                                 false, 4, 0, in(prec, lanes, isa));
                    EXPECT_EQ(r.final_regret, ref.final_regret) << dim << " " << lanes << " " << isa << " " << r.policy;
                    EXPECT_EQ(r.diagnostics, ref.diagnostics) << dim << " " << lanes << " " << isa << " " << r.policy;
                }
    }
}

TEST(NetOcoExact_Stat, TheRegretLawIsTheContinuousDoubleLaw) {
    // Disjoint instances over the same drifting sequence: the float run with the exact samplers against the double
    // run with the continuous ones; then power: eps = 700 (about 1.4 times the noise) is seen as another law.
    const test::KeyList drift = {{"noise_scale", 0.7}};
    const SimResult f = simulate("net-oco", kNetSwitching, "drifting", drift, 1, 600, 2000, 2, 7, false, 4, 0,
                                 in(Precision::Float));
    const SimResult d = simulate("net-oco", kNetSwitching, "drifting", drift, 1, 600, 2000, 2, 7, false, 4, 2000,
                                 in(Precision::Double));
    const SimResult e = simulate("net-oco", {{"epsilon", 700.0}, {"rho", 0.1}}, "drifting", drift, 1, 600, 2000, 2, 7,
                                 false, 4, 4000, in(Precision::Double));
    test::expect_exact_law_is_continuous(f, d, e, "switches", "eps 700 against 1000");
}

} // namespace
