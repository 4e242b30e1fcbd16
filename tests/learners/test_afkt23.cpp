// Asi, Feldman, Koren & Talwar 2023 learners (docs/spec/afkt23.md §C1, §C2, §C4, §C8; docs/spec/checks.md §3.4):
// svt-experts (Algorithm 1), adaptive-svt-experts (Algorithm 2), potential-svt-experts (Algorithm 5) and the
// non-private baseline consistent-expert. Properties a wrong implementation would violate:
//   * the privacy report is the spec's composition (pure: eps/2 + K eta = eps; approx: advanced composition);
//   * the number of switches never exceeds the budget K, and the budget binds when the sparse vector fires often;
//   * eps = inf with no budget is "follow a random consistent expert" bit for bit;
//   * on the halving adversary the consistent expert pays exactly two units per switch (Alg. 1's timing) and
//     switches O(log d) times;
//   * every phase costs at most Lthr + alpha + 2 (sparse-vector accuracy, Thm 3.24 at eps/2) in >= 1 - beta of runs;
//   * the engine's layouts (instance lanes, coordinate lanes, shared instances) equal the serial oracle bit for bit;
//   * Algorithm 5's log potential is the logsumexp of the spec every round, monotone within Lemma C.1's bounds,
//     and the learner switches exactly when the potential has dropped by the threshold 2 alpha / eta;
//   * net-oco (Thm 3) is Algorithm 2 on the experts of a rho-net: every ball point is within rho of the net, and
//     the engine's net-oco plays exactly what adaptive-svt-experts plays on the net's expert losses;
//   * tree-experts (Algorithm 4) draws disjoint sets without replacement (uniform at L = 0, the lowest losses at
//     large eps), pays at most B (tau + 1) per set when its noise is small, and stops drawing once x* is in a set;
//   * bad keys are refused with exit 2 and the key named.
#include <gtest/gtest.h>

#include <cmath>
#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cli/run_cli.hpp"
#include "kernels/adversaries/drifting.hpp"
#include "kernels/adversaries/halving.hpp"
#include "kernels/learners/adaptive_svt_experts.hpp"
#include "kernels/learners/consistent_expert.hpp"
#include "kernels/learners/net_oco.hpp"
#include "kernels/learners/potential_svt_experts.hpp"
#include "kernels/learners/svt_experts.hpp"
#include "kernels/learners/tree_experts.hpp"
#include "kernels/adversaries/realizable.hpp"
#include "learners/emu_team.hpp"
#include "learners/simulate.hpp"
#include "learners/solo.hpp"

namespace dpr {
namespace {

using learners::SvtExperts;

/// Learner L's resolved parameters at (d, T), epsilon = eps and the given keys (index, value).
template <class L>
typename L::Params params_of(std::uint32_t d, std::uint64_t T, double eps, std::initializer_list<std::pair<int, double>> keys = {}) {
    KeyValues kv;
    kv.num[L::kEpsilon] = eps;
    kv.given[L::kEpsilon] = true;
    for (const auto& k : keys) {
        kv.num[k.first] = k.second;
        kv.given[k.first] = true;
    }
    Problem pb;
    pb.d = d;
    pb.T = T;
    return L::resolve(kv, pb);
}

SvtExperts::Params svt_params(std::uint32_t d, std::uint64_t T, double eps, std::initializer_list<std::pair<int, double>> keys = {}) {
    return params_of<SvtExperts>(d, T, eps, keys);
}


TEST(SvtExperts, ParametersAndPrivacyReportAreTheSpecsFormulas) {
    const std::uint32_t d = 1024;
    const std::uint64_t T = 4096;
    const double beta = 0.05;
    const double K = std::ceil(6.0 * 10 + 24.0 * std::log(1.0 / beta));
    const double B = std::log(2.0 * T * T / beta);
    // Pure (Thm 1): eta = eps/(2K), Lthr = L* + 4/eta + 8B/eps; report eps/2 + K eta = eps.
    const auto p = svt_params(d, T, 2.0);
    EXPECT_EQ(p.K, K);
    EXPECT_DOUBLE_EQ(p.B, B);
    EXPECT_DOUBLE_EQ(p.eta, 2.0 / (2 * K));
    EXPECT_DOUBLE_EQ(p.Lthr, 4.0 / p.eta + 8.0 * B / 2.0);
    EXPECT_DOUBLE_EQ(p.svt.threshold, 2.0 / 1.0); // Lap(2 Delta/(eps/2))
    EXPECT_DOUBLE_EQ(p.svt.query, 4.0 / 1.0);
    auto r = SvtExperts::privacy(p);
    EXPECT_NEAR(r.epsilon, 2.0, 1e-12);
    EXPECT_EQ(r.delta, 0.0);
    // strict threshold (§4 item 13): 16B/eps.
    const auto ps = svt_params(d, T, 2.0, {{SvtExperts::kThreshold, 1.0}});
    EXPECT_DOUBLE_EQ(ps.Lthr, 4.0 / ps.eta + 16.0 * B / 2.0);
    EXPECT_STREQ(SvtExperts::privacy(ps).calibration, "strict");
    // Approximate: eta = eps/sqrt(32 K ln(1/delta)); report eps/2 + sqrt(2K ln(1/delta)) eta + K eta(e^eta - 1).
    const double delta = 1e-6;
    const auto pa = svt_params(d, T, 1.0, {{SvtExperts::kVariant, 1.0}, {SvtExperts::kDelta, delta}});
    EXPECT_DOUBLE_EQ(pa.eta, 1.0 / std::sqrt(32.0 * K * std::log(1.0 / delta)));
    r = SvtExperts::privacy(pa);
    const double adv = std::sqrt(2 * K * std::log(1 / delta)) * pa.eta + K * pa.eta * std::expm1(pa.eta);
    EXPECT_NEAR(r.epsilon, 0.5 + adv, 1e-12);
    EXPECT_LT(r.epsilon, 1.0);
    EXPECT_EQ(r.delta, delta);
    // An explicit eta is what is reported: eps/2 + K eta.
    const auto pe = svt_params(d, T, 1.0, {{SvtExperts::kEtaKey, 0.01}});
    EXPECT_NEAR(SvtExperts::privacy(pe).epsilon, 0.5 + K * 0.01, 1e-12);
    // eps = inf: no noise, nothing to report.
    const auto pi = svt_params(d, T, kInf);
    EXPECT_TRUE(std::isinf(pi.eta));
    EXPECT_EQ(pi.Lthr, 0.0);
    EXPECT_TRUE(std::isinf(SvtExperts::privacy(pi).epsilon));
}

TEST(SvtExperts, SwitchesNeverExceedTheBudgetAndTheBudgetBinds) {
    // eps large: the sparse vector fires as soon as a phase loss passes ~Lthr, so a budget of 3 is reached.
    const auto r = test::simulate("svt-experts", {{"epsilon", 200.0}, {"switch_budget", 3.0}}, "halving", {}, 64, 2000, 64);
    int exhausted = 0;
    for (std::uint32_t k = 0; k < r.instances; ++k) {
        EXPECT_LE(r.diagnostic("switches", k), 3.0);
        exhausted += r.diagnostic("budget_exhausted", k) == 1.0;
        EXPECT_EQ(r.diagnostic("budget_exhausted", k), r.diagnostic("switches", k) == 3.0 ? 1.0 : 0.0);
    }
    EXPECT_GT(exhausted, 32);
    // With the default budget K = 6 log2 d + 24 ln(1/beta) = 108 the same runs switch freely (never 108 times).
    const auto f = test::simulate("svt-experts", {{"epsilon", 200.0}}, "halving", {}, 64, 2000, 64);
    for (std::uint32_t k = 0; k < f.instances; ++k) EXPECT_LT(f.diagnostic("switches", k), 108.0);
}

TEST(SvtExperts, EpsilonInfinityWithoutBudgetIsTheConsistentExpertBitForBit) {
    for (const char* adv : {"halving", "realizable"}) {
        const auto a = test::simulate("svt-experts", {{"epsilon", kInf}, {"switch_budget", kInf}}, adv, {}, 200, 500, 40, 2, 7);
        const auto b = test::simulate("consistent-expert", {}, adv, {}, 200, 500, 40, 2, 7);
        EXPECT_EQ(a.regret, b.regret) << adv;
        EXPECT_EQ(a.diagnostics, b.diagnostics) << adv;
    }
}

TEST(ConsistentExpert, PaysTwoUnitsPerSwitchOnHalvingAndSwitchesOLogDTimes) {
    // Alg. 1's timing (as printed, docs/spec/afkt23.md §C1): the query of round t sums the phase losses up to t - 1,
    // the round of a firing query is still played with the old expert, and the switch comes at t + 1. On the halving
    // adversary a killed expert has loss 1 in every later round, so with no noise each switch costs exactly 2: the
    // round the expert dies and the round its query fires. Only an expert killed at round T costs 1 unfired.
    for (std::uint32_t d : {16u, 1024u}) {
        const auto r = test::simulate("consistent-expert", {}, "halving", {}, d, 4000, 200, 2, 3);
        double switches = 0;
        for (std::uint32_t k = 0; k < r.instances; ++k) {
            const double extra = r.final_realized[k] - 2.0 * r.diagnostic("svt_fires", k);
            EXPECT_TRUE(extra == 0.0 || extra == 1.0) << "d = " << d << " instance " << k << ": loss "
                                                      << r.final_realized[k] << ", fires " << r.diagnostic("svt_fires", k);
            switches += r.diagnostic("switches", k);
        }
        // Each halving phase kills the current (uniformly random consistent) expert with probability ~1/2, so
        // the mean is about log2(d)/2 + 1; a learner that does not restrict to consistent experts switches far
        // more often (each random expert is dead with probability -> 1 late in the run).
        EXPECT_LE(switches / r.instances, std::log2(static_cast<double>(d))) << d;
        EXPECT_GE(switches / r.instances, 1.0) << d;
    }
}

TEST(SvtExperts_Stat, EveryPhaseCostsAtMostThresholdPlusSparseVectorAccuracyInOneMinusBetaOfRuns) {
    // Thm 3.24 at eps/2 over T queries at failure probability beta/T: alpha = 16 (ln T + ln(2T/beta)) / eps. While
    // the sparse vector answers BOTTOM the phase loss is <= Lthr + alpha; the query that fires was asked before
    // the round it fires in was paid, and the switch comes one round later: at most 2 more. So
    //     total loss <= (switches + 1) (Lthr + alpha + 2)
    // in >= 1 - beta of the runs. Too much query noise (or a threshold ignored) breaks it.
    const double eps = 4.0, beta = 0.05;
    const std::uint32_t d = 256;
    const std::uint64_t T = 3000;
    const auto p = svt_params(d, T, eps);
    const double alpha = 16.0 * (std::log(double(T)) + std::log(2.0 * T / beta)) / eps;
    const auto r = test::simulate("svt-experts", {{"epsilon", eps}}, "realizable", {{"p", 0.3}}, d, T, 400, 2, 5);
    int bad = 0;
    for (std::uint32_t k = 0; k < r.instances; ++k)
        bad += r.final_realized[k] > (r.diagnostic("switches", k) + 1) * (p.Lthr + alpha + 2.0);
    EXPECT_LE(bad, static_cast<int>(beta * r.instances)) << bad << " of " << r.instances;
    // The bound is not vacuous: phases do end (the sparse vector fires) and the runs pay for them.
    double sw = 0;
    for (std::uint32_t k = 0; k < r.instances; ++k) sw += r.diagnostic("switches", k);
    EXPECT_GT(sw / r.instances, 1.0);
}

TEST(SvtExperts, EveryLayoutEqualsTheSerialOracleBitForBit) {
    const std::uint32_t T = 600, n = 20, seed = 4;
    for (std::uint32_t d : {24u, 300u, 5000u}) {
        const auto lanes_i = test::simulate("svt-experts", {{"epsilon", 30.0}}, "halving", {}, d, T, n, 2, seed, false,
                                            8, 0, test::SimOptions{Precision::Double, "instances"});
        const auto lanes_c = test::simulate("svt-experts", {{"epsilon", 30.0}}, "halving", {}, d, T, n, 2, seed, false,
                                            8, 0, test::SimOptions{Precision::Double, "coordinates"});
        const auto shared = test::simulate("svt-experts", {{"epsilon", 30.0}}, "halving", {}, d, T, 1, 2, seed, false,
                                           8, 0, test::SimOptions{Precision::Double, "coordinates"});
        EXPECT_EQ(lanes_i.regret, lanes_c.regret) << d;
        EXPECT_EQ(shared.final_regret[0], lanes_c.final_regret[0]) << d;
        // From d = 2 kTile on, one instance is shared by both threads (its tiles split between them).
        EXPECT_EQ(shared.policy.find("shared by") != std::string::npos, d >= 4096) << shared.policy;
        // The serial oracle, fed the halving adversary's shared sequence.
        KeyValues akv;
        Problem pb;
        pb.d = d;
        pb.T = T;
        const auto ap = adversaries::Halving::resolve(akv, pb);
        const adversaries::SequenceCtx ctx{seed, 0, adversaries::kSharedSequence};
        const auto p = svt_params(d, T, 30.0);
        std::vector<double> row(d);
        for (std::uint32_t k = 0; k < n; k += 7) {
            test::Solo<SvtExperts> solo(p, seed, k);
            double total = 0;
            for (std::uint64_t t = 1; t <= T; ++t) {
                adversaries::Halving::fill(ap, ctx, t, row.data());
                total += solo.round(t, row.data()).realized;
            }
            EXPECT_EQ(total, lanes_c.final_realized[k]) << "d = " << d << " instance " << k;
            EXPECT_EQ(solo.diagnostics()[0], lanes_c.diagnostic("switches", k));
        }
    }
}

TEST(SvtExperts, PerInstanceSequencesGiveEachInstanceItsOwnCumulativeLossesInEveryLayout) {
    // With adversary.per_instance = true the engine forms each instance's own L_{t-1} (kReadsCumulative); the
    // serial oracle fed instance k's own sequence must agree bit for bit in both lane layouts.
    const std::uint32_t T = 400, n = 20, seed = 6;
    for (const char* lanes : {"instances", "coordinates"}) {
        const std::uint32_t d = 40;
        const auto r = test::simulate("svt-experts", {{"epsilon", 30.0}}, "halving", {}, d, T, n, 2, seed, true, 8, 0,
                                      test::SimOptions{Precision::Double, lanes});
        KeyValues akv;
        Problem pb;
        pb.d = d;
        pb.T = T;
        const auto ap = adversaries::Halving::resolve(akv, pb);
        const auto p = svt_params(d, T, 30.0);
        std::vector<double> row(d);
        for (std::uint32_t k = 0; k < n; k += 3) {
            const adversaries::SequenceCtx ctx{seed, 0, k};
            test::Solo<SvtExperts> solo(p, seed, k);
            double total = 0;
            for (std::uint64_t t = 1; t <= T; ++t) {
                adversaries::Halving::fill(ap, ctx, t, row.data());
                total += solo.round(t, row.data()).realized;
            }
            EXPECT_EQ(total, r.final_realized[k]) << lanes << " instance " << k;
            EXPECT_EQ(solo.diagnostics()[0], r.diagnostic("switches", k)) << lanes << " instance " << k;
        }
    }
}

TEST(SvtExperts, BadKeysAreRefusedWithExitTwoNamingTheKey) {
    test::TempDir dir;
    struct Case {
        std::string adversary, learner, needle;
    } cases[] = {
        {"kind = \"halving\"\nd = 1\n", "algorithm = \"svt-experts\"\nepsilon = 1\n", "svt-experts needs d >= 2"},
        {"kind = \"halving\"\nd = 8\n", "algorithm = \"svt-experts\"\nepsilon = 1\nbeta = 0\n", "[learner] beta = 0"},
        {"kind = \"halving\"\nd = 8\n", "algorithm = \"svt-experts\"\nepsilon = 1\nbeta = 1\n", "[learner] beta = 1"},
        {"kind = \"halving\"\nd = 8\n", "algorithm = \"svt-experts\"\nepsilon = 1\nswitch_budget = 2.5\n",
         "switch_budget = 2.5 must be a whole number"},
        {"kind = \"halving\"\nd = 8\n", "algorithm = \"svt-experts\"\nepsilon = 1\nswitch_budget = 0\n",
         "[learner] switch_budget = 0"},
        {"kind = \"halving\"\nd = 8\n", "algorithm = \"svt-experts\"\nepsilon = 1\nswitch_budget = inf\n",
         "switch_budget = inf composes infinitely many"},
        {"kind = \"halving\"\nd = 8\n", "algorithm = \"svt-experts\"\nepsilon = 0\n", "[learner] epsilon = 0"},
        {"kind = \"halving\"\nd = 8\n", "algorithm = \"svt-experts\"\nepsilon = 1\nvariant = \"approx\"\ndelta = 0\n",
         "[learner] delta = 0"},
        {"kind = \"halving\"\nd = 8\n", "algorithm = \"svt-experts\"\nepsilon = 1\nthreshold = \"loose\"\n",
         "[learner] threshold"},
        {"kind = \"halving\"\nd = 1\n", "algorithm = \"consistent-expert\"\n", "consistent-expert needs d >= 2"},
    };
    for (const Case& c : cases) {
        dir.write("c.toml", "[run]\nrounds = 64\ninstances = 2\n[adversary]\n" + c.adversary + "[learner]\n" + c.learner);
        const test::CliResult r = test::run_cli(dir, "run c.toml --out out --quiet");
        EXPECT_EQ(r.rc, 2) << c.learner << r.err;
        EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.needle << "\n" << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("out"))) << c.learner;
    }
}

// ---- adaptive-svt-experts (Algorithm 2, C2) ------------------------------------------------------------------

using learners::AdaptiveSvtExperts;

AdaptiveSvtExperts::Params adaptive_params(std::uint32_t d, std::uint64_t T, double eps, double plus = 0.0) {
    return params_of<AdaptiveSvtExperts>(d, T, eps, {{AdaptiveSvtExperts::kDoublingTest, plus}});
}


TEST(AdaptiveSvtExperts, ParametersAndPrivacyReportAreTheSpecsFormulas) {
    const std::uint32_t d = 256;
    const std::uint64_t T = 1000;
    const auto p = adaptive_params(d, T, 2.0);
    const double R = 10 + 1, eps0 = 2.0 / (2 * R), beta0 = 0.05 / T;
    const double K = std::ceil(6.0 * 8 + 24 * std::log(1 / beta0));
    EXPECT_EQ(p.R, R);
    EXPECT_DOUBLE_EQ(p.eps0, eps0);
    EXPECT_EQ(p.K, K);
    EXPECT_DOUBLE_EQ(p.eta, eps0 / (2 * K));
    EXPECT_DOUBLE_EQ(p.B, std::log(2.0 * T * T / beta0));
    EXPECT_DOUBLE_EQ(p.check_scale, K / eps0);
    EXPECT_DOUBLE_EQ(p.check_margin, 5 * K * std::log(1 / beta0) / eps0);
    EXPECT_DOUBLE_EQ(p.svt.query, 4.0 / (eps0 / 2));
    // R runs x (eps_0/2 + K eta + K eps_0/K) = R 2 eps_0 = eps.
    EXPECT_NEAR(AdaptiveSvtExperts::privacy(p).epsilon, 2.0, 1e-12);
    EXPECT_EQ(AdaptiveSvtExperts::privacy(p).delta, 0.0);
}

TEST(AdaptiveSvtExperts, LbarOnlyDoublesAtMostRMinusOneTimesAndThePrintedSignDoublesMore) {
    const std::uint32_t d = 64;
    const std::uint64_t T = 4000;
    const auto p = adaptive_params(d, T, 100.0);
    double printed = 0, plus = 0;
    const auto a = test::simulate("adaptive-svt-experts", {{"epsilon", 100.0}}, "realizable", {{"p", 0.3}}, d, T, 64);
    const auto b = test::simulate("adaptive-svt-experts", {{"epsilon", 100.0}, {"doubling_test", 1.0}}, "realizable",
                                  {{"p", 0.3}}, d, T, 64);
    for (std::uint32_t k = 0; k < a.instances; ++k) {
        const double n = a.diagnostic("doublings", k);
        EXPECT_LE(n, p.R - 1);
        EXPECT_EQ(a.diagnostic("final_lbar", k), std::ldexp(1.0, static_cast<int>(n))); // Lbar* = 2^doublings
        printed += n;
        plus += b.diagnostic("doublings", k);
        EXPECT_LE(b.diagnostic("doublings", k), p.R - 1);
    }
    // Printed sign: the test passes whenever the check exceeds Lbar* - margin, i.e. at almost every switch while
    // Lbar* < margin (docs/spec/checks.md §4.14); with + it needs the best loss to exceed Lbar* + margin.
    EXPECT_GT(printed, 0.0);
    EXPECT_GE(printed, plus);
}

TEST(AdaptiveSvtExperts, EveryLayoutEqualsTheSerialOracleBitForBit) {
    const std::uint32_t T = 800, n = 20, seed = 8;
    for (std::uint32_t d : {24u, 300u}) {
        const auto li = test::simulate("adaptive-svt-experts", {{"epsilon", 200.0}}, "halving", {}, d, T, n, 2, seed, false,
                                       8, 0, test::SimOptions{Precision::Double, "instances"});
        const auto lc = test::simulate("adaptive-svt-experts", {{"epsilon", 200.0}}, "halving", {}, d, T, n, 2, seed, false,
                                       8, 0, test::SimOptions{Precision::Double, "coordinates"});
        EXPECT_EQ(li.regret, lc.regret) << d;
        EXPECT_EQ(li.diagnostics, lc.diagnostics) << d;
        KeyValues akv;
        Problem pb;
        pb.d = d;
        pb.T = T;
        const auto ap = adversaries::Halving::resolve(akv, pb);
        const adversaries::SequenceCtx ctx{seed, 0, adversaries::kSharedSequence};
        const auto p = adaptive_params(d, T, 200.0);
        std::vector<double> row(d);
        double doublings = 0;
        for (std::uint32_t k = 0; k < n; k += 5) {
            test::Solo<AdaptiveSvtExperts> solo(p, seed, k);
            double total = 0;
            for (std::uint64_t t = 1; t <= T; ++t) {
                adversaries::Halving::fill(ap, ctx, t, row.data());
                total += solo.round(t, row.data()).realized;
            }
            EXPECT_EQ(total, lc.final_realized[k]) << "d = " << d << " instance " << k;
            EXPECT_EQ(solo.diagnostics(), std::vector<double>(lc.diagnostics.begin() + k * 4, lc.diagnostics.begin() + k * 4 + 4));
            doublings += solo.diagnostics()[1];
        }
        EXPECT_GT(doublings, 0.0) << "the restart path ran";
    }
}

TEST(AdaptiveSvtExperts, KeepingThePickedExpertAtARestartChangesOnlyTheRunsThatRestart) {
    // restart_expert = "keep" (the ablation of docs/experiments/afkt23.md §5) replaces the uniform restart draw by the
    // expert the exponential mechanism just picked: post-processing, so the same privacy report; an instance that
    // never doubles makes the same draws and plays bit for bit; an instance that doubles plays differently.
    const std::uint32_t d = 300, T = 800, n = 20;
    const auto uni = test::simulate("adaptive-svt-experts", {{"epsilon", 200.0}}, "halving", {}, d, T, n);
    const auto keep = test::simulate("adaptive-svt-experts", {{"epsilon", 200.0}, {"restart_expert", 1.0}}, "halving", {},
                                     d, T, n);
    EXPECT_EQ(uni.privacy.epsilon, keep.privacy.epsilon);
    int restarted = 0, differ = 0;
    for (std::uint32_t k = 0; k < n; ++k) {
        if (uni.diagnostic("doublings", k) == 0) {
            EXPECT_EQ(keep.diagnostic("doublings", k), 0.0) << k;
            EXPECT_EQ(uni.final_realized[k], keep.final_realized[k]) << k;
        } else {
            ++restarted;
            differ += uni.final_realized[k] != keep.final_realized[k];
        }
    }
    EXPECT_GT(restarted, 0);
    EXPECT_GT(differ, 0) << "keep must change the play after a restart";
}

TEST(AdaptiveSvtExperts, BadKeysAreRefusedWithExitTwoNamingTheKey) {
    test::TempDir dir;
    const std::pair<std::string, std::string> cases[] = {
        {"d = 1\n", "epsilon = 1\n"},
        {"d = 8\n", "epsilon = 1\nbeta = 0\n"},
        {"d = 8\n", "epsilon = inf\n"},
        {"d = 8\n", "epsilon = 1\ndoubling_test = \"minus\"\n"},
    };
    const char* needles[] = {"adaptive-svt-experts needs d >= 2", "[learner] beta = 0", "[learner] epsilon = inf",
                             "[learner] doubling_test"};
    static_assert(std::size(cases) == std::size(needles), "one needle per case");
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        dir.write("c.toml", "[run]\nrounds = 64\ninstances = 2\n[adversary]\nkind = \"halving\"\n" + cases[i].first +
                                "[learner]\nalgorithm = \"adaptive-svt-experts\"\n" + cases[i].second);
        const test::CliResult r = test::run_cli(dir, "run c.toml --out out --quiet");
        EXPECT_EQ(r.rc, 2) << cases[i].second << r.err;
        EXPECT_NE(r.err.find(needles[i]), std::string::npos) << needles[i] << "\n" << r.err;
    }
}

// ---- potential-svt-experts (Algorithm 5, C4) -----------------------------------------------------------------

using learners::PotentialSvtExperts;

PotentialSvtExperts::Params potential_params(std::uint32_t d, std::uint64_t T, double eps,
                                             std::initializer_list<std::pair<int, double>> keys = {}) {
    return params_of<PotentialSvtExperts>(d, T, eps, keys);
}


TEST(PotentialSvtExperts, ParametersAndPrivacyReportAreTheSpecsFormulas) {
    const std::uint32_t d = 1024;
    const std::uint64_t T = 4096;
    const double lnT = std::log(4096.0), lnd = std::log(1024.0);
    const double K = std::ceil(2 * lnd); // 14
    // Theorem 6 (pure) with the paper's sensitivity: alpha = 1, eps_0 = eps/K, eta = eps_0/(56 ln T); threshold
    // 2 alpha/eta in query units.
    const auto p = potential_params(d, T, 2.0, {{PotentialSvtExperts::kSensitivity, 0.0}});
    EXPECT_EQ(p.K, 14.0);
    EXPECT_DOUBLE_EQ(p.eps0, 2.0 / K);
    EXPECT_DOUBLE_EQ(p.eta, 2.0 / K / (56 * lnT));
    EXPECT_DOUBLE_EQ(p.threshold, 2.0 / p.eta);
    EXPECT_DOUBLE_EQ(p.svt.threshold, 2.0 / p.eps0); // Delta = 1 (paper)
    EXPECT_DOUBLE_EQ(p.svt.query, 4.0 / p.eps0);
    // Reported: K (2 eps_0 + 2 eta): Delta = 1 noise on a 2-sensitive query, a 2 eta-DP exponential mechanism.
    auto r = PotentialSvtExperts::privacy(p);
    EXPECT_NEAR(r.epsilon, K * (2 * p.eps0 + 2 * p.eta), 1e-12);
    EXPECT_EQ(r.delta, 0.0);
    EXPECT_STREQ(r.calibration, "paper");
    // Conservative (§4 item 15) at Theorem 6's eps_0 and eta, given: Delta = 2 noise, K (eps_0 + 2 eta) = eps (1 +
    // 1/(28 ln T)), more than asked.
    const auto pc = potential_params(d, T, 2.0, {{PotentialSvtExperts::kSensitivity, 1.0},
                                                 {PotentialSvtExperts::kEps0, 2.0 / K},
                                                 {PotentialSvtExperts::kEtaKey, 2.0 / K / (56 * lnT)}});
    EXPECT_DOUBLE_EQ(pc.svt.threshold, 4.0 / pc.eps0);
    EXPECT_DOUBLE_EQ(pc.svt.query, 8.0 / pc.eps0);
    EXPECT_NEAR(PotentialSvtExperts::privacy(pc).epsilon, 2.0 * (1 + 1 / (28 * lnT)), 1e-12);
    // The default (conservative, neither given) scales both by s = 1/(1 + 1/(28 ln T)), the pure composition being
    // linear in s: the report is the request, to the bisection's rounding (down).
    const auto pd = potential_params(d, T, 2.0);
    const double s = 1 / (1 + 1 / (28 * lnT));
    EXPECT_NEAR(pd.eps0, s * 2.0 / K, 1e-14);
    EXPECT_NEAR(pd.eta / pd.eps0, 1 / (56 * lnT), 1e-14) << "eps_0 and eta scaled together";
    EXPECT_DOUBLE_EQ(pd.svt.threshold, 4.0 / pd.eps0);
    EXPECT_DOUBLE_EQ(pd.threshold, 2.0 / pd.eta);
    r = PotentialSvtExperts::privacy(pd);
    EXPECT_STREQ(r.calibration, "conservative");
    EXPECT_LE(r.epsilon, 2.0);
    EXPECT_GT(r.epsilon, 2.0 * (1 - 1e-12));
    // Theorem 7 (approx): eps_0 = eps/sqrt(K ln(1/delta)), eta = eps/(112 ln T sqrt(ln d ln(1/delta))), given.
    const double delta = 1e-6, lndel = std::log(1 / delta);
    const double e0 = 0.5 / std::sqrt(K * lndel), eta0 = 0.5 / (112 * lnT * std::sqrt(lnd * lndel));
    const auto pa = potential_params(d, T, 0.5, {{PotentialSvtExperts::kVariant, 1.0},
                                                 {PotentialSvtExperts::kEps0, e0},
                                                 {PotentialSvtExperts::kEtaKey, eta0}});
    EXPECT_DOUBLE_EQ(pa.eps0, e0);
    EXPECT_DOUBLE_EQ(pa.eta, eta0);
    const double e = pa.eps0 + 2 * pa.eta;
    r = PotentialSvtExperts::privacy(pa);
    EXPECT_NEAR(r.epsilon, std::min(K * e, std::sqrt(2 * K * lndel) * e + K * e * std::expm1(e)), 1e-12);
    EXPECT_GT(r.epsilon, 0.5) << "Theorem 7's values give a little more than asked";
    // By default they are scaled down together until the advanced composition is at most the request.
    const auto pad = potential_params(d, T, 0.5, {{PotentialSvtExperts::kVariant, 1.0}});
    EXPECT_LT(pad.eps0, e0);
    EXPECT_NEAR(pad.eta / pad.eps0, eta0 / e0, 1e-12);
    r = PotentialSvtExperts::privacy(pad);
    EXPECT_LE(r.epsilon, 0.5);
    EXPECT_GT(r.epsilon, 0.5 * (1 - 1e-12));
    EXPECT_LE(r.delta, delta); // 0 where the pure composition is the smaller
    // Theorem 6's parameters satisfy Lemma C.2's condition on alpha (8 eta (ln T + ln(2T/beta))/eps_0 < 1).
    EXPECT_LT(PotentialSvtExperts::lemma_c2_alpha(p), 1.0);
}

TEST(PotentialSvtExperts, LogPotentialIsTheSpecsLogsumexpAndMonotoneWithinLemmaC1) {
    // Lemma C.1: phi(t-1) >= phi(t) >= e^-eta phi(t-1) for losses in [0, 1]. The learner's ln phi(t-1) of every
    // round must equal an independent long-double logsumexp of L_{t-1}; reading L_t (a round early), dropping the
    // -ln d or the shift would fail one of the two checks.
    const std::uint32_t d = 200;
    const std::uint64_t T = 600;
    const double eta = 0.3;
    KeyValues akv;
    Problem pb;
    pb.d = d;
    pb.T = T;
    const auto ap = adversaries::Halving::resolve(akv, pb);
    const adversaries::SequenceCtx ctx{3, 0, adversaries::kSharedSequence};
    const auto p = potential_params(d, T, 50.0, {{PotentialSvtExperts::kEtaKey, eta}, {PotentialSvtExperts::kSwitchBudget, 1e6}});
    test::Solo<PotentialSvtExperts> solo(p, 3, 0);
    std::vector<double> row(d), L(d, 0.0);
    double prev = 0.0, biggest_drop = 0.0;
    for (std::uint64_t t = 1; t <= T; ++t) {
        adversaries::Halving::fill(ap, ctx, t, row.data());
        solo.round(t, row.data());
        long double sum = 0;
        for (double l : L) sum += std::exp(-static_cast<long double>(eta) * l);
        const double oracle = static_cast<double>(std::log(sum) - std::log(static_cast<long double>(d)));
        const double got = solo.scalar(PotentialSvtExperts::kLogPhi);
        ASSERT_NEAR(got, oracle, 1e-12 * (1 + std::abs(oracle))) << "round " << t;
        EXPECT_LE(got, prev + 1e-12) << "round " << t;
        EXPECT_GE(got, prev - eta - 1e-12) << "round " << t;
        biggest_drop = std::max(biggest_drop, prev - got);
        prev = got;
        for (std::uint32_t i = 0; i < d; ++i) L[i] += row[i];
    }
    EXPECT_GT(biggest_drop, eta / 4) << "the halving losses moved the potential";
}

TEST(PotentialSvtExperts, FiresExactlyWhenThePotentialHasDroppedByTheThreshold) {
    // With eps_0 large the sparse-vector noise is tiny: the query of round t, (ln phi(t*) - ln phi(t-1)) / eta,
    // fires iff it exceeds 2 alpha / eta (outside a band of a few noise scales), and the switch is at t + 1.
    const std::uint32_t d = 64;
    const std::uint64_t T = 3000;
    KeyValues akv;
    Problem pb;
    pb.d = d;
    pb.T = T;
    const auto ap = adversaries::Halving::resolve(akv, pb);
    const adversaries::SequenceCtx ctx{5, 0, adversaries::kSharedSequence};
    const auto p = potential_params(d, T, 1.0, {{PotentialSvtExperts::kEtaKey, 0.4}, {PotentialSvtExperts::kEps0, 1e4},
                                                {PotentialSvtExperts::kSwitchBudget, 1e6}});
    int fires = 0, checked = 0;
    for (std::uint32_t k = 0; k < 8; ++k) {
        test::Solo<PotentialSvtExperts> solo(p, 5, k);
        std::vector<double> row(d);
        for (std::uint64_t t = 1; t <= T; ++t) {
            const double k_before = solo.scalar(learners::kPhaseK);
            const bool was_pending = solo.scalar(learners::kPhasePending) > 0.5;
            adversaries::Halving::fill(ap, ctx, t, row.data());
            solo.round(t, row.data());
            EXPECT_EQ(solo.scalar(learners::kPhaseK), k_before + (was_pending ? 1 : 0)) << "round " << t;
            if (was_pending) {
                EXPECT_EQ(solo.scalar(learners::kPhasePending), 0.0) << "no query in a phase's first round";
                EXPECT_EQ(solo.scalar(learners::kPhaseAcc), solo.scalar(PotentialSvtExperts::kLogPhi)) << "t* = t - 1";
                continue;
            }
            const double q = (solo.scalar(learners::kPhaseAcc) - solo.scalar(PotentialSvtExperts::kLogPhi)) / p.eta;
            if (std::abs(q - p.threshold) < 40 * p.svt.query) continue;
            ++checked;
            const bool fire = solo.scalar(learners::kPhasePending) > 0.5;
            EXPECT_EQ(fire, q > p.threshold) << "round " << t << " q " << q << " threshold " << p.threshold;
            fires += fire;
        }
        EXPECT_EQ(solo.diagnostics()[3], 0.0) << "no phase ended before ln phi dropped by alpha";
    }
    EXPECT_GT(fires, 8) << "phases ended";
    EXPECT_GT(checked, 8 * 2000);
}

TEST(PotentialSvtExperts, SwitchesNeverExceedTheBudgetAndLayoutsEqualTheSerialOracle) {
    const std::uint32_t T = 800, n = 20, seed = 9;
    for (std::uint32_t d : {24u, 300u}) {
        // alpha = 1/4: a phase ends after each halving (ln phi drops by ~ln 2), so the budget of 3 binds.
        const test::KeyList keys = {{"epsilon", 1.0}, {"eta", 0.5}, {"eps0", 50.0}, {"alpha", 0.25}, {"switch_budget", 3.0}};
        const auto li = test::simulate("potential-svt-experts", keys, "halving", {}, d, T, n, 2, seed, false, 8, 0,
                                       test::SimOptions{Precision::Double, "instances"});
        const auto lc = test::simulate("potential-svt-experts", keys, "halving", {}, d, T, n, 2, seed, false, 8, 0,
                                       test::SimOptions{Precision::Double, "coordinates"});
        // The sums of the logsumexp are ordered differently in the two layouts (last-bit differences); a decision
        // could differ only if a noisy query fell within ~1e-13 of its threshold, which these runs never do.
        EXPECT_EQ(li.final_realized, lc.final_realized) << d;
        EXPECT_EQ(li.diagnostics, lc.diagnostics) << d;
        int exhausted = 0;
        for (std::uint32_t k = 0; k < n; ++k) {
            EXPECT_LE(lc.diagnostic("switches", k), 3.0);
            exhausted += lc.diagnostic("budget_exhausted", k) == 1.0;
        }
        EXPECT_GT(exhausted, 0) << "the budget binds";
        KeyValues akv;
        Problem pb;
        pb.d = d;
        pb.T = T;
        const auto ap = adversaries::Halving::resolve(akv, pb);
        const adversaries::SequenceCtx ctx{seed, 0, adversaries::kSharedSequence};
        const auto p = potential_params(d, T, 1.0, {{PotentialSvtExperts::kEtaKey, 0.5}, {PotentialSvtExperts::kEps0, 50.0},
                                                    {PotentialSvtExperts::kAlpha, 0.25}, {PotentialSvtExperts::kSwitchBudget, 3.0}});
        std::vector<double> row(d);
        for (std::uint32_t k = 0; k < n; k += 5) {
            test::Solo<PotentialSvtExperts> solo(p, seed, k);
            double total = 0;
            for (std::uint64_t t = 1; t <= T; ++t) {
                adversaries::Halving::fill(ap, ctx, t, row.data());
                total += solo.round(t, row.data()).realized;
            }
            EXPECT_EQ(total, lc.final_realized[k]) << "d = " << d << " instance " << k;
            EXPECT_EQ(solo.diagnostics()[0], lc.diagnostic("switches", k));
        }
    }
}

TEST(PotentialSvtExperts, PerInstanceSequencesGiveEachInstanceItsOwnPotentialInEveryLayout) {
    // adversary.per_instance = true: each instance's ln phi is formed from its own L_{t-1}; the serial oracle fed
    // instance k's own halving sequence must agree in both lane layouts (a learner reading another instance's L
    // would diverge: the halving orders differ per sequence).
    const std::uint32_t T = 500, n = 20, seed = 6, d = 40;
    const test::KeyList keys = {{"epsilon", 1.0}, {"eta", 0.5}, {"eps0", 50.0}, {"alpha", 0.25}, {"switch_budget", 30.0}};
    const auto p = potential_params(d, T, 1.0, {{PotentialSvtExperts::kEtaKey, 0.5}, {PotentialSvtExperts::kEps0, 50.0},
                                                {PotentialSvtExperts::kAlpha, 0.25}, {PotentialSvtExperts::kSwitchBudget, 30.0}});
    KeyValues akv;
    Problem pb;
    pb.d = d;
    pb.T = T;
    const auto ap = adversaries::Halving::resolve(akv, pb);
    double switches = 0;
    for (const char* lanes : {"instances", "coordinates"}) {
        const auto r = test::simulate("potential-svt-experts", keys, "halving", {}, d, T, n, 2, seed, true, 8, 0,
                                      test::SimOptions{Precision::Double, lanes});
        std::vector<double> row(d);
        for (std::uint32_t k = 0; k < n; k += 3) {
            const adversaries::SequenceCtx ctx{seed, 0, k};
            test::Solo<PotentialSvtExperts> solo(p, seed, k);
            double total = 0;
            for (std::uint64_t t = 1; t <= T; ++t) {
                adversaries::Halving::fill(ap, ctx, t, row.data());
                total += solo.round(t, row.data()).realized;
            }
            EXPECT_EQ(total, r.final_realized[k]) << lanes << " instance " << k;
            EXPECT_EQ(solo.diagnostics()[0], r.diagnostic("switches", k)) << lanes << " instance " << k;
            switches += solo.diagnostics()[0];
        }
    }
    EXPECT_GT(switches, 14.0) << "phases ended";
}

TEST(PotentialSvtExperts, BadKeysAreRefusedWithExitTwoNamingTheKey) {
    test::TempDir dir;
    const std::pair<std::string, std::string> cases[] = {
        {"d = 1\n", "epsilon = 1\n"},
        {"d = 8\n", "epsilon = 1\nswitch_budget = 2.5\n"},
        {"d = 8\n", "epsilon = 1\nswitch_budget = 0\n"},
        {"d = 8\n", "epsilon = 1\nalpha = 0\n"},
        {"d = 8\n", "epsilon = inf\n"},
        {"d = 8\n", "epsilon = 1\nsensitivity = \"3\"\n"},
        {"d = 8\n", "epsilon = 1\nvariant = \"approx\"\ndelta = 1\n"},
    };
    const char* needles[] = {"potential-svt-experts needs d >= 2", "switch_budget = 2.5 must be a whole number",
                             "[learner] switch_budget = 0", "[learner] alpha = 0", "[learner] epsilon = inf",
                             "[learner] sensitivity", "[learner] delta = 1"};
    static_assert(std::size(cases) == std::size(needles), "one needle per case");
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        dir.write("c.toml", "[run]\nrounds = 64\ninstances = 2\n[adversary]\nkind = \"halving\"\n" + cases[i].first +
                                "[learner]\nalgorithm = \"potential-svt-experts\"\n" + cases[i].second);
        const test::CliResult r = test::run_cli(dir, "run c.toml --out out --quiet");
        EXPECT_EQ(r.rc, 2) << cases[i].second << r.err;
        EXPECT_NE(r.err.find(needles[i]), std::string::npos) << needles[i] << "\n" << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("out"))) << cases[i].second;
    }
}

// ---- net-oco (Theorem 3, C5) ---------------------------------------------------------------------------------

using learners::BallNetExperts;
using learners::NetOco;

NetOco::Params net_params(std::uint32_t dim, std::uint64_t T, double eps, double rho) {
    return params_of<NetOco>(dim, T, eps, {{BallNetExperts::kRho, rho}});
}


TEST(NetOco, TheNetCoversTheBallWithinRhoAndLiesInIt) {
    std::mt19937_64 gen(5);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::uint32_t dim : {1u, 2u}) {
        for (double rho : {0.3, 0.05}) {
            const auto v = net_params(dim, 1000, 1.0, rho).view;
            EXPECT_EQ(v.n, dim == 1 ? std::ceil(1 / rho) + 1 : std::pow(std::ceil(std::sqrt(2.0) / rho) + 1, 2));
            std::vector<std::array<double, 2>> pts(v.n);
            for (std::uint32_t i = 0; i < v.n; ++i) {
                BallNetExperts::point(v, static_cast<double>(i), pts[i][0], pts[i][1]);
                EXPECT_LE(std::hypot(pts[i][0], pts[i][1]), 1.0 + 1e-15);
                if (dim == 1) EXPECT_EQ(pts[i][1], 0.0);
            }
            double worst = 0;
            for (int k = 0; k < 3000; ++k) {
                double a = u(gen), b = dim == 2 ? u(gen) : 0.0;
                const double r = std::hypot(a, b);
                if (r > 1) a /= r, b /= r; // a point of the ball (its boundary included)
                double best = 1e9;
                for (const auto& p : pts) best = std::min(best, std::hypot(a - p[0], b - p[1]));
                worst = std::max(worst, best);
            }
            EXPECT_LE(worst, rho) << "d = " << dim << " rho = " << rho;
            EXPECT_GT(worst, rho / 4) << "not a much finer net than asked";
        }
    }
}

TEST(NetOco, PlaysExactlyWhatAdaptiveSvtExpertsPlaysOnTheNetsExpertLosses) {
    // The engine's net-oco on a drifting Ball sequence (shared by the instances) against the serial oracle of
    // adaptive-svt-experts fed the net's expert losses f_t(i) = (1 + <g_t, x^i>)/2 as rows: the same randomness
    // addresses, so the same experts are played; net-oco is charged <g_t, x_t> = 2 f_t - 1. The cumulative losses
    // are formed differently (<G, x> / 2 against sums of f), so scores differ in the last bits; a play could
    // differ only if two Gumbel keys or a check fell within ~1e-12 of each other.
    const std::uint32_t T = 600, n = 12, seed = 2;
    for (std::uint32_t dim : {1u, 2u}) {
        const double rho = dim == 1 ? 0.1 : 0.25, eps = 3000.0;
        for (const char* lanes : {"instances", "coordinates"}) {
            const auto r = test::simulate("net-oco", {{"epsilon", eps}, {"rho", rho}}, "drifting", {{"noise_scale", 0.7}},
                                          dim, T, n, 2, seed, false, 8, 0, test::SimOptions{Precision::Double, lanes});
            KeyValues akv;
            akv.num[adversaries::Drifting::kNoiseScale] = 0.7;
            akv.given[adversaries::Drifting::kNoiseScale] = true;
            Problem pb;
            pb.d = dim;
            pb.T = T;
            const auto ap = adversaries::Drifting::resolve(akv, pb);
            const adversaries::SequenceCtx ctx{seed, 0, adversaries::kSharedSequence};
            const auto np = net_params(dim, T, eps, rho);
            const auto ep = adaptive_params(np.d, T, eps);
            std::vector<double> g(dim), f(np.d);
            double switches = 0;
            for (std::uint32_t k = 0; k < n; k += 3) {
                test::Solo<AdaptiveSvtExperts> solo(ep, seed, k);
                double charged = 0;
                std::vector<double> G(dim, 0.0);
                for (std::uint64_t t = 1; t <= T; ++t) {
                    adversaries::Drifting::fill(ap, ctx, t, g.data());
                    for (std::uint32_t j = 0; j < dim; ++j) G[j] += g[j];
                    for (std::uint32_t i = 0; i < np.d; ++i) {
                        double x0, x1;
                        BallNetExperts::point(np.view, static_cast<double>(i), x0, x1);
                        f[i] = (1.0 + g[0] * x0 + (dim == 2 ? g[1] * x1 : 0.0)) / 2.0;
                    }
                    charged += 2.0 * solo.round(t, f.data()).realized - 1.0;
                }
                // The engine's realised regret: sum <g_t, x_t> minus the comparator min_{||x|| <= 1} <G_T, x> = -||G_T||.
                const double norm = dim == 1 ? std::abs(G[0]) : std::hypot(G[0], G[1]);
                EXPECT_NEAR(charged + norm, r.final_realized[k], 1e-9)
                    << lanes << " d = " << dim << " instance " << k;
                EXPECT_EQ(solo.diagnostics(), std::vector<double>(r.diagnostics.begin() + k * 4, r.diagnostics.begin() + k * 4 + 4));
                switches += solo.diagnostics()[0];
            }
            EXPECT_GT(switches, 0.0) << "the switch path ran";
        }
    }
}

TEST(NetOco, RealizableDriftingWithLittleNoiseFindsTheBestNetPoint) {
    // drifting with noise_scale = 0: g_t = theta every round, so expert i loses the constant c_i = (1 + <theta, x^i>)/2
    // each round, and the engine's regret (against -||G_T|| = -T) is sum_t <theta, x_t> + T = 2 sum_t c_{x_t}: twice
    // the experts' loss paid. Random play pays c ~ 1/2 per round (regret ~ T). At eps = 1e5 Algorithm 2 is nearly
    // noiseless (eta = 6.6, Lthr = Lbar* + 0.6): it leaves an expert once its phase loss passes Lbar* + 0.6 and
    // samples among the experts whose loss so far is below Lbar* (Lbar* doubles at each switch with the printed
    // test), so it settles on a near-optimal point after a few switches.
    const std::uint64_t T = 2000;
    const auto r = test::simulate("net-oco", {{"epsilon", 1e5}, {"rho", 0.05}}, "drifting", {{"noise_scale", 0.0}}, 2, T, 20);
    for (std::uint32_t k = 0; k < r.instances; ++k) {
        EXPECT_LT(r.final_regret[k], 0.25 * T) << k;
    }
    // The same runs at eps = 0.1 play at random (Lthr ~ 1e6 > T): the gap is what the private learner pays.
    const auto q = test::simulate("net-oco", {{"epsilon", 0.1}, {"rho", 0.05}}, "drifting", {{"noise_scale", 0.0}}, 2, T, 20);
    EXPECT_GT(q.mean_regret(), 4 * r.mean_regret());
}

TEST(NetOco, ANetTooLargeToRunQuicklyIsAWarningWithItsSizeAndARhoThatIsFaster) {
    // The smallest accepted rho ran for minutes without a word. check() accepts it and warns with the
    // net's size; the rho it suggests gives a net under the warning's size, and a net below that size is silent.
    KeyValues kv;
    kv.num[BallNetExperts::kRho] = 1e-4;
    kv.given[BallNetExperts::kRho] = true;
    Problem pb;
    pb.d = 2;
    pb.T = 64;
    Diagnostic diag;
    EXPECT_TRUE(BallNetExperts::check(kv, pb, diag));
    ASSERT_NE(diag.key, nullptr);
    EXPECT_STREQ(diag.key, "rho");
    EXPECT_TRUE(diag.warning_only);
    const std::string msg = diag.message;
    EXPECT_NE(msg.find("net of 2e+08 points at d = 2"), std::string::npos) << msg;
    for (std::uint32_t dim : {1u, 2u}) {
        pb.d = dim;
        kv.num[BallNetExperts::kRho] = dim == 1 ? 1e-8 : 1e-4;
        Diagnostic big;
        EXPECT_TRUE(BallNetExperts::check(kv, pb, big));
        ASSERT_TRUE(big.warning_only) << dim;
        const std::string text = big.message;
        const std::size_t at = text.find("rho >= ");
        ASSERT_NE(at, std::string::npos) << text;
        kv.num[BallNetExperts::kRho] = std::stod(text.substr(at + 7)); // the suggested rho
        const double n = BallNetExperts::resolve(kv, pb).n;
        EXPECT_LE(n, BallNetExperts::kLargeNet) << dim;
        EXPECT_GT(n, 0.5 * BallNetExperts::kLargeNet) << dim << ": the suggestion is not far from the bound";
        Diagnostic quiet;
        EXPECT_TRUE(BallNetExperts::check(kv, pb, quiet));
        EXPECT_EQ(quiet.key, nullptr) << dim << ": " << quiet.message;
    }
}

TEST(NetOco, BadKeysAreRefusedWithExitTwoNamingTheKey) {
    test::TempDir dir;
    const std::pair<std::string, std::string> cases[] = {
        {"d = 3\n", "epsilon = 1\n"},
        {"d = 2\n", "epsilon = 1\nrho = 1e-6\n"},
        {"d = 2\n", "epsilon = 1\nrho = 0\n"},
        {"d = 1\n", "epsilon = 0\n"},
    };
    const char* needles[] = {"net-oco needs d in {1, 2}", "rho = 1e-06 gives a net of", "[learner] rho = 0",
                             "[learner] epsilon = 0"};
    static_assert(std::size(cases) == std::size(needles), "one needle per case");
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        dir.write("c.toml", "[run]\nrounds = 64\ninstances = 2\n[adversary]\nkind = \"unit-vectors\"\n" + cases[i].first +
                                "[learner]\nalgorithm = \"net-oco\"\n" + cases[i].second);
        const test::CliResult r = test::run_cli(dir, "run c.toml --out out --quiet");
        EXPECT_EQ(r.rc, 2) << cases[i].second << r.err;
        EXPECT_NE(r.err.find(needles[i]), std::string::npos) << needles[i] << "\n" << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("out"))) << cases[i].second;
    }
}

// ---- tree-experts (Algorithm 4, C3) -----------------------------------------------------------------------------

using learners::TreeExperts;

TreeExperts::Params tree_params(std::uint32_t d, std::uint64_t T, double eps, std::initializer_list<std::pair<int, double>> keys = {}) {
    return params_of<TreeExperts>(d, T, eps, keys);
}


TEST(TreeExperts, ParametersAndPrivacyReportAreTheSpecsSplit) {
    const auto p = tree_params(1024, 4096, 2.0);
    EXPECT_EQ(p.B, 484u); // ceil(log2(2^22))^2
    EXPECT_EQ(p.K, 2u);   // floor(1024 / 484)
    // ceil(log2 4096) = 12 released levels: a phase's prefix holds at most 4095 leaves, so the level of 4096 is
    // never released (docs/spec/afkt23.md §C3; counting it, 13, gave eps/2 x 12/13 for the trees).
    EXPECT_EQ(p.h, 12u);
    EXPECT_DOUBLE_EQ(p.b, 2.0 * 484 * 12 / 2.0);
    EXPECT_DOUBLE_EQ(p.tau, 12 * p.b * std::log(2.0 * 484 * 4096 / 0.05));
    EXPECT_DOUBLE_EQ(p.eps_sel, 2.0 / (2 * 2 * 484));
    const auto r = TreeExperts::privacy(p);
    EXPECT_NEAR(r.epsilon, 2.0, 1e-12); // eps/2 (trees) + K B eps_sel (selections)
    EXPECT_EQ(r.delta, 0.0);
    EXPECT_EQ(tree_params(16, 100, 1.0).B, 16u); // capped at d
}

TEST(TreeExperts_Stat, TheFirstSetIsAUniformSubsetWithoutRepeats) {
    // At round 1 every L is 0: the B draws without replacement are a uniform B-subset. Over 4000 instances each
    // expert's inclusion count is Binomial(4000, B/d): chi-square against B/d, and no set repeats an expert.
    const std::uint32_t d = 20, B = 5, n = 4000;
    const auto p = tree_params(d, 10, 1.0, {{TreeExperts::kSetSize, B}, {TreeExperts::kMaxSets, 4}});
    std::vector<double> row(d, 0.0);
    std::vector<long> counts(d, 0);
    for (std::uint32_t k = 0; k < n; ++k) {
        test::Solo<TreeExperts> solo(p, 11, k);
        solo.round(1, row.data());
        std::set<double> seen(solo.dbl(TreeExperts::kMembers), solo.dbl(TreeExperts::kMembers) + B);
        ASSERT_EQ(seen.size(), B) << "instance " << k;
        for (double m : seen) ++counts[static_cast<std::uint32_t>(m)];
    }
    double chi = 0, e = double(n) * B / d;
    for (long c : counts) chi += (c - e) * (c - e) / (e * (1 - double(B) / d));
    // 19 degrees of freedom: P(chi2 > 60) ~ 3e-6.
    EXPECT_LT(chi, 60.0);
    EXPECT_GT(chi, 2.0) << "not suspiciously uniform";
}

TEST(TreeExperts, SetsAreDisjointTheLowestLossExpertsAtLargeEpsAndStopAtXStar) {
    // Realizable losses (x* never loses, others w.p. 1/2). eps = 1e7: node noise b = 2Bh/eps ~ 1e-5 and the
    // selection is by the lowest L_{t-1} (Gumbels are O(1), c ~ 1e5). With tau = 20 the first phase lasts > 20
    // rounds, after which x* is the only zero-loss expert (w.p. 1 - 63 2^-21): it is in the second set, and that
    // set is never abandoned. Each set costs at most B (tau + 1): the played member is the one with the smallest
    // phase loss, and a member absorbs at most floor(tau) + 1 paid losses before its count passes tau.
    const std::uint32_t d = 64, B = 4, T = 600;
    const double tau = 20;
    const auto p = tree_params(d, T, 1e7, {{TreeExperts::kSetSize, B}, {TreeExperts::kMaxSets, 16}, {TreeExperts::kThresholdKey, tau}});
    KeyValues akv;
    Problem pb;
    pb.d = d;
    pb.T = T;
    const auto ap = adversaries::Realizable::resolve(akv, pb);
    for (std::uint32_t k = 0; k < 20; ++k) {
        const adversaries::SequenceCtx ctx{7, 0, k};
        const std::uint32_t star = adversaries::Realizable::best_expert(ap, ctx);
        test::Solo<TreeExperts> solo(p, 7, k);
        std::vector<double> row(d), L(d, 0.0);
        std::set<std::uint32_t> used;
        double sets = 0, paid = 0;
        for (std::uint64_t t = 1; t <= T; ++t) {
            adversaries::Realizable::fill(ap, ctx, t, row.data());
            paid += solo.round(t, row.data()).realized;
            if (solo.scalar(TreeExperts::kSets) > sets) { // a set was drawn at round t from L_{t-1}
                sets = solo.scalar(TreeExperts::kSets);
                std::vector<std::uint32_t> m;
                for (std::uint32_t b = 0; b < B; ++b) m.push_back(static_cast<std::uint32_t>(solo.dbl(TreeExperts::kMembers)[b]));
                double worst_in = 0;
                for (std::uint32_t y : m) {
                    EXPECT_TRUE(used.insert(y).second) << "expert " << y << " drawn twice (instance " << k << ")";
                    worst_in = std::max(worst_in, L[y]);
                }
                if (sets > 1)
                    for (std::uint32_t y = 0; y < d; ++y)
                        if (!used.count(y)) EXPECT_GE(L[y], worst_in) << "a lower-loss expert was left out at round " << t;
            }
            for (std::uint32_t i = 0; i < d; ++i) L[i] += row[i];
        }
        EXPECT_LE(sets, 2.0) << "instance " << k;
        EXPECT_TRUE(used.count(star)) << "instance " << k;
        EXPECT_LE(paid, sets * B * (std::floor(tau) + 1)) << "instance " << k;
    }
}

TEST(TreeExperts, EveryLayoutEqualsTheSerialOracleBitForBit) {
    const std::uint32_t T = 300, n = 8, seed = 4;
    for (std::uint32_t d : {24u, 300u, 5000u}) {
        const test::KeyList keys = {{"epsilon", 5e3}, {"set_size", 4.0}, {"max_sets", 5.0}, {"threshold", 6.0}};
        const auto r = test::simulate("tree-experts", keys, "realizable", {{"p", 0.3}}, d, T, n, 2, seed);
        const auto one = test::simulate("tree-experts", keys, "realizable", {{"p", 0.3}}, d, T, n, 1, seed);
        EXPECT_EQ(r.regret, one.regret) << d;
        KeyValues akv;
        akv.num[adversaries::Realizable::kP] = 0.3;
        akv.given[adversaries::Realizable::kP] = true;
        Problem pb;
        pb.d = d;
        pb.T = T;
        const auto ap = adversaries::Realizable::resolve(akv, pb);
        const adversaries::SequenceCtx ctx{seed, 0, adversaries::kSharedSequence};
        const auto p = tree_params(d, T, 5e3, {{TreeExperts::kSetSize, 4}, {TreeExperts::kMaxSets, 5}, {TreeExperts::kThresholdKey, 6}});
        double sets = 0;
        for (std::uint32_t k = 0; k < n; k += 3) {
            test::Solo<TreeExperts> solo(p, seed, k);
            const double total = solo.run(T, [&](std::uint64_t t, double* r) { adversaries::Realizable::fill(ap, ctx, t, r); });
            EXPECT_EQ(total, r.final_realized[k]) << "d = " << d << " instance " << k;
            EXPECT_EQ(solo.diagnostics()[0], r.diagnostic("sets", k));
            sets += solo.diagnostics()[0];
        }
        EXPECT_GT(sets, 3.0) << "sets were abandoned and redrawn"; // 3 instances checked, > 1 set each on average
    }
}

TEST(TreeExperts, PerInstanceSequencesGiveEachInstanceItsOwnCumulativeLosses) {
    // adversary.per_instance = true: each instance's sets and counts come from its own L_{t-1}.
    const std::uint32_t T = 300, n = 10, seed = 5, d = 64;
    const test::KeyList keys = {{"epsilon", 5e3}, {"set_size", 4.0}, {"max_sets", 8.0}, {"threshold", 6.0}};
    const auto r = test::simulate("tree-experts", keys, "realizable", {{"p", 0.3}}, d, T, n, 2, seed, true);
    KeyValues akv;
    akv.num[adversaries::Realizable::kP] = 0.3;
    akv.given[adversaries::Realizable::kP] = true;
    Problem pb;
    pb.d = d;
    pb.T = T;
    const auto ap = adversaries::Realizable::resolve(akv, pb);
    const auto p = tree_params(d, T, 5e3, {{TreeExperts::kSetSize, 4}, {TreeExperts::kMaxSets, 8}, {TreeExperts::kThresholdKey, 6}});
    double sets = 0;
    for (std::uint32_t k = 0; k < n; k += 2) {
        const adversaries::SequenceCtx ctx{seed, 0, k};
        test::Solo<TreeExperts> solo(p, seed, k);
        const double total = solo.run(T, [&](std::uint64_t t, double* r) { adversaries::Realizable::fill(ap, ctx, t, r); });
        EXPECT_EQ(total, r.final_realized[k]) << "instance " << k;
        EXPECT_EQ(solo.diagnostics()[0], r.diagnostic("sets", k)) << "instance " << k;
        sets += solo.diagnostics()[0];
    }
    EXPECT_GT(sets, 5.0) << "sets were redrawn";
}

TEST(TreeExperts, BadKeysAreRefusedWithExitTwoNamingTheKey) {
    test::TempDir dir;
    const std::pair<std::string, std::string> cases[] = {
        {"d = 1\n", "epsilon = 1\n"},
        {"d = 8\n", "epsilon = 1\nset_size = 2.5\n"},
        {"d = 8\n", "epsilon = 1\nset_size = 9\n"},
        {"d = 8\n", "epsilon = 1\nset_size = 3\nmax_sets = 3\n"},
        {"d = 8\n", "epsilon = 0\n"},
        {"d = 8\n", "epsilon = 1\nthreshold = -1\n"},
    };
    const char* needles[] = {"tree-experts needs d >= 2", "set_size = 2.5 must be a whole number", "set_size = 9 exceeds d = 8",
                             "max_sets = 3 sets of set_size = 3 experts exceed d = 8", "[learner] epsilon = 0",
                             "[learner] threshold = -1"};
    static_assert(std::size(cases) == std::size(needles), "one needle per case");
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        dir.write("c.toml", "[run]\nrounds = 64\ninstances = 2\n[adversary]\nkind = \"realizable\"\n" + cases[i].first +
                                "[learner]\nalgorithm = \"tree-experts\"\n" + cases[i].second);
        const test::CliResult r = test::run_cli(dir, "run c.toml --out out --quiet");
        EXPECT_EQ(r.rc, 2) << cases[i].second << r.err;
        EXPECT_NE(r.err.find(needles[i]), std::string::npos) << needles[i] << "\n" << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("out"))) << cases[i].second;
    }
}

// ---- the switch paths on a multi-member team ------------------------------------------------------------------

/// Learner L on the 32-thread lockstep emulation of a GPU warp (tests/learners/emu_team.hpp: strided loops,
/// reductions through shared slots, rank-0 writes, barriers) against the serial oracle, round by round, on the
/// shared sequence `fill` of width `width`: the same charges in every lane. Returns the oracle's first diagnostic
/// (switches or sets) so the caller can check that the switch path ran.
template <class L, class Fill>
double emulated_warp_equals_oracle(const typename L::Params& p, std::uint32_t width, std::uint64_t T, Fill&& fill) {
    std::vector<std::vector<double>> rows(T + 1, std::vector<double>(width)), cum(T + 1, std::vector<double>(width, 0.0));
    for (std::uint64_t t = 1; t <= T; ++t) {
        fill(t, rows[t].data());
        if (t > 1)
            for (std::uint32_t j = 0; j < width; ++j) cum[t][j] = cum[t - 1][j] + rows[t - 1][j];
    }
    test::Solo<L> solo(p, 3, 4);
    std::vector<double> serial;
    for (std::uint64_t t = 1; t <= T; ++t) serial.push_back(solo.round(t, rows[t].data()).realized);
    const auto lanes = test::run_emulated<L, double, std::vector<double>>(p, 32, 3, 4, [&](auto& team, auto& ws) {
        L::init(p, team, ws);
        std::vector<double> out;
        for (std::uint64_t t = 1; t <= T; ++t)
            out.push_back(L::round(p, team, ws, t, ScalarLossRow<double>{rows[t].data(), rows[t].data(), cum[t].data()}).realized);
        return out;
    });
    for (std::uint32_t lane = 0; lane < 32; ++lane)
        for (std::uint64_t t = 0; t < T; ++t)
            EXPECT_NEAR(lanes[lane][t], serial[t], 1e-12 * (1 + std::fabs(serial[t]))) << L::kName << " lane " << lane << " round " << t + 1;
    return solo.diagnostics()[0];
}

TEST(AFKT23_EmulatedWarp, SwitchPathsOfTheNewLearnersEqualTheSerialOracle) {
    // Keys at which phases end, sets are redrawn and the net is left (the all-learner warp test runs them at
    // their defaults, where none of that happens within its T).
    const std::uint64_t T = 300;
    Problem pb;
    pb.d = 70;
    pb.T = T;
    const adversaries::SequenceCtx ctx{3, 0, adversaries::kSharedSequence};
    KeyValues none;
    const auto halving = adversaries::Halving::resolve(none, pb);
    const auto potential = potential_params(70, T, 1.0, {{PotentialSvtExperts::kEtaKey, 0.5}, {PotentialSvtExperts::kEps0, 50.0},
                                                         {PotentialSvtExperts::kAlpha, 0.25}, {PotentialSvtExperts::kSwitchBudget, 30.0}});
    EXPECT_GT(emulated_warp_equals_oracle<PotentialSvtExperts>(potential, 70, T, [&](std::uint64_t t, double* out) {
                  adversaries::Halving::fill(halving, ctx, t, out);
              }), 2.0);
    // The exact samplers (afkt23.md §C4 "Exact samplers"): each member forms the double log potential and the exact
    // draw of its instance, rank 0 stores them.
    const auto exact = potential_params(70, T, 1.0, {{PotentialSvtExperts::kEtaKey, 0.5}, {PotentialSvtExperts::kEps0, 50.0},
                                                     {PotentialSvtExperts::kAlpha, 0.25}, {PotentialSvtExperts::kSwitchBudget, 30.0},
                                                     {PotentialSvtExperts::kNoise, 1.0}});
    ASSERT_TRUE(exact.lattice);
    EXPECT_GT(emulated_warp_equals_oracle<PotentialSvtExperts>(exact, 70, T, [&](std::uint64_t t, double* out) {
                  adversaries::Halving::fill(halving, ctx, t, out);
              }), 2.0);
    KeyValues akv;
    akv.num[adversaries::Realizable::kP] = 0.3;
    akv.given[adversaries::Realizable::kP] = true;
    const auto realizable = adversaries::Realizable::resolve(akv, pb);
    const auto tree = tree_params(70, T, 5e3, {{TreeExperts::kSetSize, 4}, {TreeExperts::kMaxSets, 8}, {TreeExperts::kThresholdKey, 6}});
    EXPECT_GT(emulated_warp_equals_oracle<TreeExperts>(tree, 70, T, [&](std::uint64_t t, double* out) {
                  adversaries::Realizable::fill(realizable, ctx, t, out);
              }), 1.0);
    // tree-experts' exact samplers (afkt23.md §C3 "Exact samplers"): every member makes the B exact draws, rank 0
    // stores the members and the lattice sums. eps = 400 (within the lattice's limits); fractional losses, so that
    // the lattice rounding's words matter.
    const auto tree_exact = tree_params(70, T, 400.0, {{TreeExperts::kSetSize, 4}, {TreeExperts::kMaxSets, 8},
                                                       {TreeExperts::kThresholdKey, 6}, {TreeExperts::kNoise, 1.0}});
    ASSERT_TRUE(tree_exact.lattice);
    EXPECT_GT(emulated_warp_equals_oracle<TreeExperts>(tree_exact, 70, T, [&](std::uint64_t t, double* out) {
                  adversaries::Realizable::fill(realizable, ctx, t, out);
                  for (std::uint32_t i = 0; i < 70; ++i) out[i] *= 0.3 + 0.6 * static_cast<double>((7 * i + 3 * t) % 11) / 11.0;
              }), 1.0);
    Problem pb2 = pb;
    pb2.d = 2;
    KeyValues dkv;
    dkv.num[adversaries::Drifting::kNoiseScale] = 0.7;
    dkv.given[adversaries::Drifting::kNoiseScale] = true;
    const auto drifting = adversaries::Drifting::resolve(dkv, pb2);
    const auto net = net_params(2, T, 3000.0, 0.1);
    EXPECT_GT(emulated_warp_equals_oracle<NetOco>(net, 2, T, [&](std::uint64_t t, double* out) {
                  adversaries::Drifting::fill(drifting, ctx, t, out);
              }), 0.0);
}

} // namespace
} // namespace dpr
