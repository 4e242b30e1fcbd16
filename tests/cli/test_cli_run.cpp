// `dpregret run` as a user runs it: sweeps and their columns, determinism across thread counts, the
// contents of run.json, bad input (exit code 2, the key and its range named, nothing complete left
// behind) and interruption.
#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "host/io/csv.hpp"

using dpr::test::CliResult;
using dpr::test::run_cli;
using dpr::test::slurp;
using dpr::test::TempDir;

namespace {

const char* kSweep = R"([run]
seed = 3
instances = 40
rounds = 300
checkpoints = 5

[adversary]
kind = "bernoulli"
d = 6
gap = 0.2

[learner]
algorithm = ["hedge", "dp-ftrl-experts"]
epsilon = [0.5, 2.0, 8.0]
)";

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream is(text);
    for (std::string l; std::getline(is, l);)
        if (!l.empty()) out.push_back(l);
    return out;
}

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> f;
    std::istringstream is(line);
    for (std::string x; std::getline(is, x, ',');) f.push_back(x);
    return f;
}

/// Expects exit code 2, every `needle` in stderr, and no complete output in `out`.
void expect_usage_error(const TempDir& dir, const std::string& toml, const std::vector<std::string>& needles,
                        const std::string& extra = "") {
    dir.write("bad.toml", toml);
    const CliResult r = run_cli(dir, "run bad.toml --out bad_out --quiet " + extra);
    EXPECT_EQ(r.rc, 2) << r.err;
    for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "' in: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("bad_out/run.json")));
    EXPECT_FALSE(std::filesystem::exists(dir.file("bad_out/summary.csv")));
}

} // namespace

TEST(CliRun, SweepYieldsOnePointPerCombinationWithSweptColumns) {
    TempDir dir;
    dir.write("sweep.toml", kSweep);
    const CliResult r = run_cli(dir, "run sweep.toml --out out --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    // hedge declares no epsilon: its three combinations merge into one point -> 1 + 3 points.
    const auto summary = lines(slurp(dir.file("out/summary.csv")));
    const auto header = split(summary.at(0));
    ASSERT_GE(header.size(), 16u);
    const std::vector<std::string> required = {"point", "algorithm", "epsilon", "delta", "d", "T", "t", "instances",
                                               "mean", "std", "sem", "q05", "q25", "q50", "q75", "q95"};
    for (std::size_t i = 0; i < required.size(); ++i) EXPECT_EQ(header[i], required[i]);
    EXPECT_NE(std::find(header.begin(), header.end(), "learner.algorithm"), header.end());
    EXPECT_NE(std::find(header.begin(), header.end(), "learner.epsilon"), header.end());
    std::set<std::string> points;
    std::size_t rows_at_T = 0;
    for (std::size_t i = 1; i < summary.size(); ++i) {
        const auto f = split(summary[i]);
        points.insert(f[0]);
        if (f[6] == "300") ++rows_at_T;
    }
    EXPECT_EQ(points.size(), 4u);
    EXPECT_EQ(rows_at_T, 4u);
    // final_regret.csv: one row per point and instance.
    EXPECT_EQ(lines(slurp(dir.file("out/final_regret.csv"))).size(), 1u + 4u * 40u);
    // run.json: four points, each with its privacy guarantee.
    const auto j = nlohmann::json::parse(slurp(dir.file("out/run.json")));
    ASSERT_EQ(j["points"].size(), 4u);
    EXPECT_EQ(j["points"][0]["algorithm"], "hedge");
    EXPECT_EQ(j["points"][0]["privacy"]["epsilon"], "inf");
    EXPECT_EQ(j["points"][1]["privacy"]["epsilon"], 0.5);
    EXPECT_EQ(j["points"][1]["privacy"]["accountant"], "pure-laplace");
    EXPECT_EQ(j["points"][1]["privacy"]["calibration"], "paper");
    for (const char* k : {"version", "git_commit"}) EXPECT_TRUE(j["dpregret"].contains(k));
    for (const char* k : {"backend", "device", "threads", "wall_seconds", "throughput"}) EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_GT(j["throughput"]["expert_rounds_per_second"].get<double>(), 0.0);
}

TEST(CliRun, SameSeedGivesIdenticalFinalRegretForOneAndTwoThreads) {
    TempDir dir;
    dir.write("sweep.toml", kSweep);
    ASSERT_EQ(run_cli(dir, "run sweep.toml --out a --quiet --threads 1").rc, 0);
    ASSERT_EQ(run_cli(dir, "run sweep.toml --out b --quiet --threads 2").rc, 0);
    EXPECT_EQ(slurp(dir.file("a/final_regret.csv")), slurp(dir.file("b/final_regret.csv")));
    EXPECT_EQ(slurp(dir.file("a/summary.csv")), slurp(dir.file("b/summary.csv")));
    ASSERT_EQ(run_cli(dir, "run sweep.toml --out c --quiet --set run.seed=4").rc, 0);
    EXPECT_NE(slurp(dir.file("a/final_regret.csv")), slurp(dir.file("c/final_regret.csv")));
}

TEST(CliRun, SetOverridesAKeyAndSweepsFromTheCommandLine) {
    TempDir dir;
    dir.write("sweep.toml", kSweep);
    const CliResult r = run_cli(dir, "run sweep.toml --out out --quiet --set 'learner.algorithm=\"dp-ftrl-experts\"' "
                                     "--set 'learner.tree=[\"padded\",\"binary\"]'");
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(dir.file("out/run.json")));
    EXPECT_EQ(j["points"].size(), 6u); // 3 epsilons x 2 trees
}

TEST(CliRun, LossFileRunsAndDMustMatchIt) {
    TempDir dir;
    dir.write("losses.csv", "1,0\n0,1\n1,0\n");
    const std::string base = "[run]\nrounds = 3\ninstances = 2\n[learner]\nalgorithm = \"hedge\"\neta = 0.6931471805599453\n"
                             "[adversary]\nkind = \"file\"\npath = \"losses.csv\"\n";
    dir.write("ok.toml", base);
    const CliResult ok = run_cli(dir, "run ok.toml --out out --quiet");
    ASSERT_EQ(ok.rc, 0) << ok.err;
    // The hand-computed Hedge regret of tests/engine/test_engine.cpp: 2/3 at T = 3.
    const auto fin = lines(slurp(dir.file("out/final_regret.csv")));
    EXPECT_NEAR(std::stod(split(fin.at(1))[2]), 2.0 / 3.0, 1e-12);
    expect_usage_error(dir, base + "d = 3\n", {"d", "3", "2"});
    dir.write("bad_values.csv", "1,0\n0,1.5\n1,0\n");
    expect_usage_error(dir, std::string(base).replace(base.find("losses.csv"), 10, "bad_values.csv"),
                       {"bad_values.csv", "row 2", "column 2", "1.5", "[0, 1]"});
    dir.write("short.csv", "1,0\n0,1\n");
    expect_usage_error(dir, std::string(base).replace(base.find("losses.csv"), 10, "short.csv"), {"short.csv", "rows"});
    expect_usage_error(dir, std::string(base).replace(base.find("losses.csv"), 10, "missing.csv"), {"missing.csv"});
}

TEST(CliRun, BadConfigsStopWithTheKeyAndItsRange) {
    TempDir dir;
    const std::string run = "[run]\nrounds = 100\ninstances = 5\n";
    const std::string adv = "[adversary]\nkind = \"bernoulli\"\nd = 4\n";
    expect_usage_error(dir, run + adv + "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilom = 1\n",
                       {"epsilom", "did you mean", "epsilon"});
    expect_usage_error(dir, run + adv + "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = -1\n",
                       {"epsilon", "-1", "(0, inf]"});
    expect_usage_error(dir, run + adv + "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\nnoise = \"gaussian\"\n",
                       {"delta", "gaussian"});
    expect_usage_error(dir, run + adv + "[learner]\nalgorithm = \"dp-ftrl-expert\"\n",
                       {"algorithm", "dp-ftrl-experts"});
    expect_usage_error(dir, run + adv + "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\nmechanism = \"paded\"\n",
                       {"mechanism", "padded"});
    expect_usage_error(dir, "[run]\nrounds = 0\n" + adv + "[learner]\nalgorithm = \"hedge\"\n", {"rounds", "0"});
    expect_usage_error(dir, run + "[adversary]\nkind = \"bernoulli\"\nd = 4\ngap = 0.7\n[learner]\nalgorithm = \"hedge\"\n",
                       {"gap"});
    expect_usage_error(dir, run + adv + "[learner]\nalgorithm = \"hedge\"\n[runn]\n", {"runn"});
    expect_usage_error(dir, run + adv + "[learner]\nalgorithm = \"hedge\"\n", {"--threads"}, "--threads 0");
    expect_usage_error(dir, "[run\nrounds = 3\n", {"bad.toml"});
}

TEST(CliRun, CudaBackendWithoutAGpuIsAUsageError) {
    TempDir dir;
    dir.write("sweep.toml", kSweep);
    const CliResult r = run_cli(dir, "run sweep.toml --out out --quiet --backend cuda");
    if (r.rc == 0) GTEST_SKIP() << "a GPU is visible here";
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("--backend cuda"), std::string::npos) << r.err;
}

TEST(CliRun, AnExistingCompleteRunIsNotOverwritten) {
    TempDir dir;
    dir.write("sweep.toml", kSweep);
    ASSERT_EQ(run_cli(dir, "run sweep.toml --out out --quiet").rc, 0);
    const std::string before = slurp(dir.file("out/run.json"));
    const CliResult r = run_cli(dir, "run sweep.toml --out out --quiet");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("already"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(dir.file("out/run.json")), before);
}

TEST(CliRun, InterruptingARunLeavesNoOutputThatLooksComplete) {
    TempDir dir;
    dir.write("long.toml", "[run]\nrounds = 2000000\ninstances = 2000\n[adversary]\nkind = \"bernoulli\"\nd = 64\n"
                           "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\n");
    // SIGINT after 2 s; SIGKILL 30 s later if the run ignored it (then rc = 137 and the test fails).
    const CliResult r = run_cli(dir, "run long.toml --out out", "timeout --foreground --preserve-status -k 30 -s INT 2");
    EXPECT_EQ(r.rc, 130) << r.err;
    EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("out/run.json")));
    EXPECT_FALSE(std::filesystem::exists(dir.file("out/summary.csv")));
    EXPECT_FALSE(std::filesystem::exists(dir.file("out/final_regret.csv")));
}

// [learner] tree is the former name of [learner] mechanism (docs/CONFIG.md): the file below, written with `tree`,
// gives the bytes of final_regret.csv under either name, and without common random numbers its points keep the
// stream keys they had before the rename (measured with the binary of commit 9bd2dab, where the key was `tree`).
TEST(CliRun, TheFormerNameOfTheMechanismKeyGivesTheSameRunAndStreams) {
    TempDir dir;
    const std::string head = "[run]\nseed = 3\ninstances = 8\nrounds = 64\ncommon_random_numbers = false\n"
                             "[adversary]\nkind = \"bernoulli\"\nd = 4\n[learner]\nalgorithm = \"dp-ftrl-experts\"\n"
                             "epsilon = 1\n";
    dir.write("old.toml", head + "tree = [\"padded\", \"binary\"]\n");
    dir.write("new.toml", head + "mechanism = [\"padded\", \"binary\"]\n");
    for (const char* name : {"old", "new"}) {
        const CliResult r = run_cli(dir, std::string("run ") + name + ".toml --out " + name + " --quiet");
        ASSERT_EQ(r.rc, 0) << r.err;
        const auto j = nlohmann::json::parse(slurp(dir.file(std::string(name) + "/run.json")));
        ASSERT_EQ(j["points"].size(), 2u);
        EXPECT_EQ(j["points"][0]["stream"], 3758311787u) << name;
        EXPECT_EQ(j["points"][1]["stream"], 1146697793u) << name;
        EXPECT_EQ(j["points"][1]["settings"]["learner.mechanism"], "binary") << name;
    }
    EXPECT_EQ(slurp(dir.file("old/final_regret.csv")), slurp(dir.file("new/final_regret.csv")));
    EXPECT_EQ(slurp(dir.file("old/summary.csv")), slurp(dir.file("new/summary.csv")));
}

// precision = "float" is not private as reported with a continuous sampler (docs/AUDITS.md "Set events": the float
// lattice leaks); a run of such a learner in float says so on stderr, naming it. Lattice noise (the float default of
// dp-ftrl-*, docs/spec/model.md §1.8), a double run or a learner that claims nothing does not warn.
TEST(CliRun, APrivateLearnerInFloatWarnsThatItsReportIsThatOfExactNoise) {
    TempDir dir;
    dir.write("c.toml", "[run]\ninstances = 4\nrounds = 20\n[adversary]\nkind = \"bernoulli\"\nd = 3\n[learner]\n"
                        "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\n");
    const std::string warning = "[run] precision = \"float\": the privacy reported for dp-ftrl-experts";
    const CliResult f = run_cli(dir, "run c.toml --out f --quiet --set 'run.precision=\"float\"' --set 'learner.noise=\"laplace\"'");
    ASSERT_EQ(f.rc, 0) << f.err;
    EXPECT_NE(f.err.find(warning), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("Mironov"), std::string::npos) << f.err;
    const CliResult l = run_cli(dir, "run c.toml --out l --quiet --set 'run.precision=\"float\"'");
    ASSERT_EQ(l.rc, 0) << l.err;
    EXPECT_EQ(l.err.find("[run] precision = \"float\""), std::string::npos) << "lattice noise: " << l.err;
    const CliResult d = run_cli(dir, "run c.toml --out d --quiet");
    ASSERT_EQ(d.rc, 0) << d.err;
    EXPECT_EQ(d.err.find(warning), std::string::npos) << d.err;
    dir.write("h.toml", "[run]\ninstances = 4\nrounds = 20\nprecision = \"float\"\n[adversary]\nkind = \"bernoulli\"\n"
                        "d = 3\n[learner]\nalgorithm = \"hedge\"\n");
    const CliResult h = run_cli(dir, "run h.toml --out h --quiet");
    ASSERT_EQ(h.rc, 0) << h.err;
    EXPECT_EQ(h.err.find(warning), std::string::npos) << h.err;
}
