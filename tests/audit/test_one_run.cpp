// One-run audits (host/audit/one_run.hpp, docs/AUDITS.md "One-run audits"): the bound is the one of Steinke, Nasr &
// Jagielski's Theorem 3 (against their published formula, evaluated independently in SciPy), never exceeds the eps of
// an exactly eps-DP randomized response more often than alpha allows, and gives nothing for guesses at chance; the
// canaries sit where the plan says and change exactly their rounds by their trial's own fair coins; and whole audits:
// a planted bug is a VIOLATION and correct learners are consistent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_refusals.hpp"
#include "cli/run_cli.hpp"
#include "host/api/pipeline.hpp"
#include "host/audit/one_run.hpp"

namespace dpr {
namespace {

using test::TempDir;

// ---- the bound --------------------------------------------------------------------------------------------------

// Reference values: the p-value as SNJ23's appendix evaluates it, with SciPy's binomial, bisected 60 times, at
// alpha = 0.05: tests/audit/one_run_reference.py (run with /usr/bin/python3), which prints these rows.
TEST(OneRunBound, MatchesTheAuthorsFormula) {
    struct Case {
        std::uint64_t m, r, v;
        double delta, eps_lb, p_at_1;
    };
    const Case cases[] = {
        {1000, 600, 600, 1e-5, 5.270399463514697, 0.00010692857674655734},
        {1000, 100, 100, 0.0, 3.4929654311522937, 2.4843785557240162e-14},
        {100000, 2000, 1500, 0.0, 1.0127489041953903, 0.029010562409780602},
        {100000, 2000, 1500, 1e-6, 1.01121061559247, 0.03186350608395109},
        {1000000, 10000, 6000, 1e-7, 0.3714613547463719, 1.0},
        {5000, 5000, 2600, 0.0, 0.033090985808468636, 1.0},
        // delta's term: 2 m delta = 2 here, yet weighed by the binomial's mass just below v
        {1000000, 1000, 1000, 1e-6, 3.4889947269915673, 0.006588622306865132},
        {1000000, 1000, 900, 1e-6, 1.9276555870700984, 0.009948649704168283},
        {1000000, 1000, 900, 0.0, 2.021233233548991, 3.0406300337845737e-40},
    };
    for (const Case& c : cases) {
        EXPECT_NEAR(audit::one_run_epsilon_lb(c.m, c.r, c.v, c.delta, 0.05), c.eps_lb, 1e-6 * c.eps_lb)
            << c.m << " " << c.r << " " << c.v << " " << c.delta;
        EXPECT_NEAR(audit::one_run_p_value(c.m, c.r, c.v, 1.0, c.delta), c.p_at_1, 1e-9 + 1e-6 * c.p_at_1)
            << c.m << " " << c.r << " " << c.v << " " << c.delta;
    }
}

TEST(OneRunBound, GuessesAtChanceGiveNothingAndMoreRightGuessesNeverLess) {
    EXPECT_EQ(audit::one_run_epsilon_lb(10000, 1000, 500, 0.0, 0.05), 0.0);
    EXPECT_EQ(audit::one_run_epsilon_lb(10000, 1000, 400, 0.0, 0.05), 0.0);
    EXPECT_EQ(audit::one_run_epsilon_lb(10000, 0, 0, 0.0, 0.05), 0.0);
    double last = 0.0;
    for (std::uint64_t v = 500; v <= 1000; v += 25) {
        const double lb = audit::one_run_epsilon_lb(10000, 1000, v, 1e-6, 0.05);
        EXPECT_GE(lb, last) << v;
        last = lb;
    }
    EXPECT_GT(last, 5.0); // all 1000 right
    // A delta only lowers the bound.
    EXPECT_LT(audit::one_run_epsilon_lb(1000000, 1000, 900, 1e-6, 0.05), audit::one_run_epsilon_lb(1000000, 1000, 900, 0.0, 0.05));
    EXPECT_THROW(audit::one_run_p_value(10, 20, 5, 1.0, 0.0), std::invalid_argument);
}

// Randomized response is exactly eps-DP in each bit and its right guesses are Bin(r, e^eps / (1 + e^eps)): the
// extreme case of the theorem. 1000 audits of r = 2000 guesses at eps = 1: eps_lb > 1 in at most alpha of them
// (in expectation; here at most 5% + 3 binomial SDs).
TEST(OneRunBound_Stat, RandomizedResponseExceedsItsEpsNoMoreOftenThanAlpha) {
    std::mt19937_64 gen(20261208);
    const double eps = 1.0, q = std::exp(eps) / (1 + std::exp(eps));
    std::binomial_distribution<std::uint64_t> right(2000, q);
    int over = 0;
    for (int k = 0; k < 1000; ++k)
        if (audit::one_run_epsilon_lb(2000, 2000, right(gen), 0.0, 0.05) > eps) ++over;
    EXPECT_LE(over, 50 + 3 * 7) << over << " of 1000";
    // And randomized response at eps = 2 is caught by the same test in most audits.
    std::binomial_distribution<std::uint64_t> right2(2000, std::exp(2.0) / (1 + std::exp(2.0)));
    int caught = 0;
    for (int k = 0; k < 100; ++k)
        if (audit::one_run_epsilon_lb(2000, 2000, right2(gen), 0.0, 0.05) > eps) ++caught;
    EXPECT_GE(caught, 99);
}

// ---- the canaries -----------------------------------------------------------------------------------------------

TEST(CanaryPlan, PlacesEvenlySpacedCanariesAndRefusesWhatDoesNotFit) {
    const auto plan = [](std::uint64_t T, std::uint64_t m, std::uint64_t w, bool fitted = false) {
        return audit::canary_plan(T, audit::OneRunRequest{m, w, fitted});
    };
    const audit::CanaryPlan p = plan(10000, 1000, 0);
    EXPECT_EQ(p.spacing, 9u);
    EXPECT_EQ(p.window, 8u);
    EXPECT_EQ(p.round(0), 9u);
    EXPECT_EQ(p.round(999), 9000u);
    EXPECT_EQ(p.rounds_run, 9008u);
    EXPECT_EQ(plan(10000, 1000, 3).window, 3u);
    EXPECT_EQ(plan(100000, 1000, 0, true).window, 8u); // fitted: at most 8 unless asked
    EXPECT_EQ(plan(100000, 1000, 32, true).window, 32u);
    EXPECT_EQ(plan(4, 1, 0).rounds_run, 3u); // round 2 is the canary, rounds 1 and 3 see it
    const auto message = [&](std::uint64_t T, std::uint64_t m, std::uint64_t w, bool fitted = false) {
        try {
            plan(T, m, w, fitted);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(message(10000, 5000, 0).find("--canaries 5000: [run] rounds = 10000 holds at most 4999"), std::string::npos)
        << message(10000, 5000, 0);
    EXPECT_NE(message(10000, 0, 0).find("--canaries 0"), std::string::npos);
    EXPECT_NE(message(3, 1, 0).find("at most 0"), std::string::npos) << message(3, 1, 0);
    EXPECT_NE(message(10000, 1000, 9).find("--window 9: the canaries are 9 rounds apart"), std::string::npos)
        << message(10000, 1000, 9);
    EXPECT_NE(message(10000, 1000, 9).find("[1, 8]"), std::string::npos);
    EXPECT_NE(message(100000, 1000, 33, true).find("--window 33: a fitted score weighs at most 2 x 32 charges"),
              std::string::npos)
        << message(100000, 1000, 33, true);
    // Four checkpoints per canary, shared where the windows meet: t_i - 1 and t_i per canary, and the ends.
    EXPECT_EQ(audit::one_run_checkpoints(p).size(), 2u * 1000 + 1);
    EXPECT_EQ(audit::one_run_checkpoints(plan(10000, 1000, 2)).size(), 4u * 1000);
    // Fitted: every round from t_i - w - 1 to t_i + w.
    EXPECT_EQ(audit::one_run_checkpoints(plan(10000, 1000, 2, true)).size(), 6u * 1000);
    EXPECT_EQ(audit::one_run_checkpoints(plan(10000, 1000, 0, true)).size(), 9008u);
}

config::ConfigInputs inputs() {
    config::ConfigInputs in = api::run_config_inputs();
    in.extra_sections.push_back(audit::audit_section());
    return in;
}

/// A cube adversary whose round t loses t / 100 on its one coordinate, so that every row is different.
std::string ramp_csv(std::uint64_t T) {
    std::string s;
    for (std::uint64_t t = 1; t <= T; ++t) s += std::to_string(static_cast<double>(t) / 1000.0) + "\n";
    return s;
}

TEST(CanaryAdversary, ChangesExactlyTheCanaryRoundsByEachTrialsOwnFairCoins) {
    TempDir dir;
    const std::uint64_t T = 500;
    dir.write("ramp.csv", ramp_csv(T));
    dir.write("a.toml", "[run]\ninstances = 100\nrounds = 500\n[adversary]\nkind = \"file-cube\"\npath = \"ramp.csv\"\n"
                        "[learner]\nalgorithm = \"dp-ftrl-cube\"\nepsilon = 1\n[audit]\n");
    const config::Config cfg = config::load_config(dir.file("a.toml"), {}, inputs());
    const std::vector<PointRecord> recs = api::resolve_points(cfg);
    const AdversaryRuntime& base = recs.at(0).adversary;
    const audit::CanaryPlan plan = audit::canary_plan(T, audit::OneRunRequest{60, 0, false});
    audit::NeighbourSpec rule;
    rule.rule = audit::NeighbourRule::Negate;
    const audit::CanaryAdversary canaries(base, 1, rule, plan);
    const std::uint32_t seed = 11, stream = 3;
    const adversaries::SequenceCtx shared{seed, stream, adversaries::kSharedSequence};
    std::uint64_t kept = 0, total = 0;
    std::vector<int> first_trial;
    for (std::uint32_t k = 0; k < 400; ++k) {
        std::vector<int> coins;
        for (std::uint64_t t = 1; t <= plan.rounds_run; ++t) {
            double b = 0, c = 0;
            base.fill(shared, t, &b);
            canaries.runtime().fill(adversaries::SequenceCtx{seed, stream, k}, t, &c);
            const bool canary = t % plan.spacing == 0;
            if (!canary) {
                ASSERT_EQ(c, b) << "trial " << k << " round " << t;
                continue;
            }
            const std::uint64_t i = t / plan.spacing - 1;
            const bool keeps = audit::canary_keeps_base(seed, stream, k, i);
            ASSERT_EQ(c, keeps ? b : -b) << "trial " << k << " canary " << i;
            coins.push_back(keeps);
            kept += keeps;
            ++total;
        }
        ASSERT_EQ(coins.size(), plan.canaries);
        if (k == 0) first_trial = coins;
        else if (k == 1) EXPECT_NE(coins, first_trial) << "two trials with the same coins";
    }
    // Fair: within 5 binomial SDs of half (24000 coins: SD 77).
    EXPECT_NEAR(static_cast<double>(kept), total / 2.0, 5 * std::sqrt(total / 4.0)) << kept << " of " << total;
    double l1 = 0, l2 = 0;
    canaries.distance(seed, stream, &l1, &l2);
    EXPECT_DOUBLE_EQ(l1, 2 * 480 / 1000.0); // the largest canary round, 480, negated
    EXPECT_DOUBLE_EQ(l2, l1);
}


// ---- whole audits -----------------------------------------------------------------------------------------------

/// dp-ftrl-cube on d = 1 under the constant loss -c* (cube-drift, drift 1), T = 8008 rounds with m = 1000 canaries,
/// so that every canary sits at a multiple of 8 (the same place in the binary tree) and the windows (w = 7) hold no
/// canary; eta so small that the plays -(eta/2) L~_{t-1} never reach the cube's faces. Each canary negated or not.
const char* kCube = "[run]\ninstances = 100\nrounds = 8008\n[adversary]\nkind = \"cube-drift\"\nd = 1\ndrift = 1\n"
                    "[learner]\nalgorithm = \"dp-ftrl-cube\"\nepsilon = 1\nmechanism = \"binary\"\n"
                    "calibration = \"strict\"\neta = 1e-6\n[audit]\nneighbour = \"negate\"\n";
/// The same learner with BLT noise (Gaussian, delta 1e-6): claim eps 0.99.
const std::vector<std::string> kBlt = {"learner.mechanism=\"blt\"", "learner.noise=\"gaussian\"", "learner.delta=1e-6"};

audit::OneRunOutcome one_run(const TempDir& dir, const std::string& toml, std::vector<std::string> sets,
                             const audit::OneRunRequest& request, bool allow_planted = false, unsigned threads = 2) {
    dir.write("a.toml", toml);
    const config::Config cfg = config::load_config(dir.file("a.toml"), sets, inputs());
    const std::vector<PointRecord> recs = api::resolve_points(cfg);
    audit::AuditJob job;
    job.cfg = &cfg;
    job.learner = recs.at(0).learner;
    job.adversary = recs.at(0).adversary;
    job.threads = threads;
    job.allow_planted = allow_planted;
    return audit::run_one_run_audit(job, request);
}

// BLT steps that draw nothing (planted leaf-without-noise: the odd steps) leave combinations of the plays around a
// canary without noise: every guess is right, at 100 trials (0.07 s). The correct BLT learner on the same canaries
// gives next to nothing.
TEST(OneRunAudit_Stat, BltStepsWithoutTheirDrawAreAViolationInOneRunOf100Trials) {
    TempDir dir;
    std::vector<std::string> bad = kBlt;
    bad.push_back("audit.planted=\"leaf-without-noise\"");
    const audit::OneRunOutcome b = one_run(dir, kCube, bad, {1000, 7, true}, true);
    ASSERT_TRUE(b.completed);
    EXPECT_STREQ(audit::verdict(b), "VIOLATION") << b.epsilon_lb << " (" << b.correct << " of " << b.guesses << ")";
    EXPECT_GT(b.epsilon_lb, 5.0);
    EXPECT_EQ(b.correct, b.guesses);
    EXPECT_LT(b.p_value_at_claim, 0.05);
    const audit::OneRunOutcome g = one_run(dir, kCube, kBlt, {1000, 7, true});
    EXPECT_STREQ(audit::verdict(g), "consistent") << g.epsilon_lb;
    EXPECT_LT(g.epsilon_lb, 0.3);
    EXPECT_EQ(g.learner.privacy.epsilon, b.learner.privacy.epsilon) << "a planted learner claims the correct eps";
    EXPECT_EQ(b.evaluation_canaries, 80u * 1000); // 20 of the 100 trials choose the rule
}

// Correct learners are never flagged: 100 one-run audits each (seeds 1..100) of the Laplace tree and of BLT, both
// scores, 100 trials of 1000 canaries each. With alpha = 0.05 a sound bound may flag about 5 of 100 in the worst case
// (a learner whose claim is exactly tight in every canary); these learners are far from that (the largest eps_lb over
// the 100 seeds: 0.14 and 0.07 for the tree, 0.29 and 0.33 for BLT, against claims of 1 and 0.99), so a flag means a
// score that reads a canary's own round, or coins that are not the trial's own.
TEST(OneRunAudit_Stat, CorrectLearnersAreConsistentInEachOf100OneRunAudits) {
    TempDir dir;
    for (bool blt : {false, true})
        for (bool fitted : {true, false}) {
            int flagged = 0;
            double most = 0.0;
            for (int seed = 1; seed <= 100; ++seed) {
                std::vector<std::string> sets = blt ? kBlt : std::vector<std::string>{};
                sets.push_back("run.seed=" + std::to_string(seed));
                const audit::OneRunOutcome o = one_run(dir, kCube, sets, {1000, 7, fitted});
                ASSERT_TRUE(o.completed);
                flagged += std::string(audit::verdict(o)) == "VIOLATION";
                most = std::max(most, o.epsilon_lb);
            }
            ::testing::Test::RecordProperty(std::string(blt ? "blt" : "tree") + (fitted ? "_fitted" : "_difference") +
                                                "_max_eps_lb",
                                            std::to_string(most));
            EXPECT_EQ(flagged, 0) << (blt ? "BLT" : "tree") << (fitted ? ", fitted" : ", difference");
            EXPECT_LT(most, 0.5) << (blt ? "BLT" : "tree") << (fitted ? ", fitted" : ", difference");
        }
}

// A canary's own charge is in no recorded sum. Here the plays carry nothing (eta = 1e-300: dp-ftrl-experts plays the
// uniform point whatever the losses), and the charges are not multiples of 1/2, so a sum that held a canary's charge
// (0.4 kept or 0.6 flipped) would carry its coin in the rounding of every later checkpoint. Before the canary rounds
// were left out, the fitted score read that rounding: VIOLATION, eps_lb 1.36 against a claim of 1, on a learner whose
// plays are independent of every coin. Now every score is the same number, the ranking is by position and the guesses
// are at chance, in each of 20 seeds.
TEST(OneRunAudit_Stat, ACanarysOwnChargeIsInNoRecordedSum) {
    TempDir dir;
    std::string rows;
    for (int t = 0; t < 2000; ++t) rows += "0.1,0.7\n";
    dir.write("frac.csv", rows);
    const std::string toml = "[run]\ninstances = 200\nrounds = 2000\n[adversary]\nkind = \"file\"\npath = "
                             "\"frac.csv\"\n[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\neta = 1e-300\n"
                             "[audit]\nneighbour = \"flip\"\n";
    for (bool fitted : {true, false})
        for (int seed = 1; seed <= 20; ++seed) {
            const audit::OneRunOutcome o = one_run(dir, toml, {"run.seed=" + std::to_string(seed)}, {100, 0, fitted});
            EXPECT_STREQ(audit::verdict(o), "consistent") << seed << (fitted ? " fitted" : " difference");
            EXPECT_LT(o.epsilon_lb, 0.5) << seed << (fitted ? " fitted" : " difference") << ": " << o.correct << " of "
                                         << o.guesses;
        }
}

// The same trials give the same audit: the scores depend on (config, trial id), not on threads or batches.
TEST(OneRunAudit, TheAuditDependsOnlyOnTheTrialsNotOnThreadsOrBatches) {
    TempDir dir;
    const audit::OneRunOutcome a = one_run(dir, kCube, {}, {1000, 7, true});
    const audit::OneRunOutcome b = one_run(dir, kCube, {"audit.batch=7"}, {1000, 7, true}, false, 1);
    EXPECT_EQ(a.weights, b.weights);
    EXPECT_EQ(a.correct, b.correct);
    EXPECT_EQ(a.guesses, b.guesses);
    EXPECT_EQ(a.epsilon_lb, b.epsilon_lb);
    EXPECT_EQ(a.weights.size(), 14u);
}

// ---- the command ------------------------------------------------------------------------------------------------

// docs/CLI.md's example, experiments/audits/one_run/dp_ftrl_cube.toml (kCube at 1000 trials), line for line up to
// its timing.
TEST(OneRunCli, WritesAuditJsonWithTheCanariesAndTheGuessesAndExitsZero) {
    TempDir dir;
    dir.write("a.toml", kCube);
    const test::CliResult r = test::run_cli(dir, "audit '" + std::string(DPREGRET_SOURCE_DIR) +
                                                     "/experiments/audits/one_run/dp_ftrl_cube.toml' --one-run "
                                                     "--canaries 1000 --window 7 --out doc --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find(" trials in ")),
              "consistent: eps_lb = 0.0373942 at 95% confidence, claimed eps = 1, delta = 0 (dp-ftrl-cube; one run, "
              "1000 canaries per trial: 81825 of 160000 guesses right among 800000 canaries; 1000");
    const test::CliResult small = test::run_cli(dir, "audit a.toml --one-run --canaries 1000 --window 7 --out o --quiet");
    ASSERT_EQ(small.rc, 0) << small.err;
    const nlohmann::json j = nlohmann::json::parse(test::slurp(dir.file("o/audit.json")));
    EXPECT_EQ(j["verdict"], "consistent");
    EXPECT_EQ(j["mode"], "one-run");
    EXPECT_EQ(j["canaries"]["per_trial"], 1000);
    EXPECT_EQ(j["canaries"]["rounds"]["spacing"], 8);
    EXPECT_EQ(j["canaries"]["window"], 7);
    EXPECT_EQ(j["canaries"]["l1_distance_max"], 2.0);
    EXPECT_EQ(j["guesses"]["canaries"], 80000);
    EXPECT_EQ(j["statistic"]["score"], "fitted");
    EXPECT_EQ(j["statistic"]["weights"].size(), 14u);
    EXPECT_LE(j["guesses"]["correct"].get<std::uint64_t>(), j["guesses"]["guessed"].get<std::uint64_t>());
    EXPECT_FALSE(std::filesystem::exists(dir.file("o/privacy_region.csv")));
    // The planted BLT bug through the command.
    const test::CliResult b = test::run_cli(
        dir, "audit a.toml --one-run --window 7 --out b --quiet --allow-planted --set learner.mechanism='\"blt\"' "
             "--set learner.noise='\"gaussian\"' --set learner.delta=1e-6 --set audit.planted='\"leaf-without-noise\"'");
    ASSERT_EQ(b.rc, 0) << b.err;
    EXPECT_EQ(b.out.rfind("VIOLATION: eps_lb = ", 0), 0u) << b.out;
    // A complete audit is never overwritten.
    const test::CliResult again = test::run_cli(dir, "audit a.toml --one-run --out o --quiet");
    EXPECT_EQ(again.rc, 2);
}

TEST(OneRunCli, BadInputExitsTwoNamingTheOptionOrKeyAndLeavesNoDirectory) {
    TempDir dir;
    dir.write("a.toml", kCube);
    const std::pair<const char*, const char*> cases[] = {
        {"--one-run --canaries 5000", "--canaries 5000: [run] rounds = 8008 holds at most 4003"},
        {"--one-run --window 8", "--window 8: the canaries are 8 rounds apart"},
        {"--one-run --window 40 --canaries 100", "--window 40: a fitted score weighs at most 2 x 32"},
        {"--canaries 10", "--canaries: only a one-run audit"},
        {"--window 3", "--window: only a one-run audit"},
        {"--window 0", "--window: only a one-run audit"},
        {"--score difference", "--score: only a one-run audit"},
        {"--one-run --search", "--search"},
        {"--one-run --save-statistic", "--save-statistic"},
        {"--one-run --backend cuda", "--backend cuda"},
        {"--one-run --set audit.round=3", "[audit] round: a two-sample audit's key"},
        {"--one-run --set audit.rounds=[3]", "[audit] rounds"},
        {"--one-run --set audit.weights='\"fitted\"'", "[audit] weights"},
        {"--one-run --set audit.bound='\"gdp\"'", "[audit] bound"},
        {"--one-run --set audit.planted='\"half-noise\"'", "--allow-planted"},
        {"--one-run --set adversary.per_instance=true", "[adversary] per_instance = true"},
        {"--one-run --memory-limit 1K", "needs about"},
    };
    test::expect_audit_refusals(dir, cases);
}

}  // namespace
}  // namespace dpr
