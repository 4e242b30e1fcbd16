// `dpregret run` with the fast path's [run] keys: precision, lanes, isa, team_threads. The policy a point ran
// with is printed into run.json (launch_policy), the request into run.json's "run" section; bad values stop with
// exit code 2 and the key and its valid values named; forcing the generic ISA (the fallback a CPU without
// AVX-512 takes) gives the same CSVs as the best ISA.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "host/cpu/cpu_isa.hpp"

using dpr::test::run_cli;
using dpr::test::slurp;
using dpr::test::TempDir;

namespace {

const char* kConfig = R"([run]
seed = 2
instances = 20
rounds = 200
checkpoints = 4

[adversary]
kind = "bernoulli"
d = 40

[learner]
algorithm = "dp-ftrl-experts"
epsilon = 1.0
)";

nlohmann::json run_json(const TempDir& dir, const std::string& out) {
    return nlohmann::json::parse(slurp(dir.file(out + "/run.json")));
}

} // namespace

TEST(CliLaunch, PrecisionAndLanesAreRecordedWithThePolicyThatRan) {
    TempDir dir;
    dir.write("c.toml", kConfig);
    auto r = run_cli(dir, "run c.toml --out f --quiet --set run.precision='\"float\"' --set run.lanes='\"instances\"'");
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto j = run_json(dir, "f");
    EXPECT_EQ(j["run"]["precision"], "float");
    EXPECT_EQ(j["run"]["lanes"], "instances");
    const std::string policy = j["points"][0]["launch_policy"];
    EXPECT_NE(policy.find("float"), std::string::npos) << policy;
    EXPECT_NE(policy.find("instance lanes"), std::string::npos) << policy;
    EXPECT_EQ(j["rng_stream_layout"], 2);
    r = run_cli(dir, "run c.toml --out d --quiet --set run.lanes='\"coordinates\"'");
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string pd = run_json(dir, "d")["points"][0]["launch_policy"];
    EXPECT_NE(pd.find("double"), std::string::npos) << pd;
    EXPECT_NE(pd.find("coordinate lanes"), std::string::npos) << pd;
}

TEST(CliLaunch, TheGenericFallbackGivesTheSameResults) {
    if (!dpr::cpu::isa_supported(dpr::cpu::Isa::Generic))
        GTEST_SKIP() << "this build has no generic kernels (built: " << dpr::cpu::built_isas()
                     << "; DPREGRET_CPU_ISAS=native builds only this CPU's)";
    TempDir dir;
    dir.write("c.toml", kConfig);
    ASSERT_EQ(run_cli(dir, "run c.toml --out best --quiet").rc, 0);
    const auto r = run_cli(dir, "run c.toml --out generic --quiet --set run.isa='\"generic\"'");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(slurp(dir.file("best/summary.csv")), slurp(dir.file("generic/summary.csv")));
    EXPECT_EQ(slurp(dir.file("best/final_regret.csv")), slurp(dir.file("generic/final_regret.csv")));
    const std::string policy = run_json(dir, "generic")["points"][0]["launch_policy"];
    EXPECT_NE(policy.find("cpu generic"), std::string::npos) << policy;
}

TEST(CliLaunch, BadValuesNameTheKeyAndTheChoices) {
    TempDir dir;
    dir.write("c.toml", kConfig);
    auto r = run_cli(dir, "run c.toml --out x --quiet --set run.precision='\"half\"'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("precision"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\"float\""), std::string::npos) << r.err;
    r = run_cli(dir, "run c.toml --out x --quiet --set run.lanes='\"warps\"'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("lanes"), std::string::npos) << r.err;
    r = run_cli(dir, "run c.toml --out x --quiet --set run.precision='[\"float\", \"double\"]'");
    EXPECT_EQ(r.rc, 2) << "precision cannot be swept";
    EXPECT_NE(r.err.find("precision"), std::string::npos) << r.err;
    r = run_cli(dir, "run c.toml --out x --quiet --set run.team_threads=100");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("team_threads"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("256"), std::string::npos) << r.err;
    r = run_cli(dir, "run c.toml --out x --quiet --set run.gpu_state='\"sharde\"'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("gpu_state"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("did you mean \"shared\""), std::string::npos) << r.err;
    r = run_cli(dir, "run c.toml --out x --quiet --set run.gpu_state='[\"global\", \"shared\"]'");
    EXPECT_EQ(r.rc, 2) << "gpu_state cannot be swept";
    EXPECT_FALSE(std::filesystem::exists(dir.file("x/run.json")));
}

// [run] gpu_state is recorded in run.json's run section; the CPU backend ignores it (the same bytes).
TEST(CliLaunch, GpuStateIsRecordedAndLeavesCpuResultsAlone) {
    TempDir dir;
    dir.write("c.toml", kConfig);
    auto r = run_cli(dir, "run c.toml --out a --quiet --backend cpu");
    ASSERT_EQ(r.rc, 0) << r.err;
    r = run_cli(dir, "run c.toml --out b --quiet --backend cpu --set run.gpu_state='\"shared\"'");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(run_json(dir, "a")["run"]["gpu_state"], "auto");
    EXPECT_EQ(run_json(dir, "b")["run"]["gpu_state"], "shared");
    EXPECT_EQ(slurp(dir.file("a/final_regret.csv")), slurp(dir.file("b/final_regret.csv")));
    r = run_cli(dir, "run c.toml --out c --quiet --backend cpu --set run.gpu_state='\"registers\"'");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(run_json(dir, "c")["run"]["gpu_state"], "registers");
    EXPECT_EQ(slurp(dir.file("a/final_regret.csv")), slurp(dir.file("c/final_regret.csv")));
}

// A learner without a lane-parallel round (tree-experts: scalar code per instance) cannot put
// instances in the lanes: lanes = "instances" is not silently replaced -- the point says so on stderr and in
// run.json, and launch_policy records the coordinate lanes that ran. A lane-parallel learner in the same
// sweep gets no warning.
TEST(CliLaunch, LanesInstancesForALearnerWithoutLaneCodeIsAWarningNotASilentFallback) {
    TempDir dir;
    dir.write("s.toml", R"([run]
seed = 2
instances = 4
rounds = 50
lanes = "instances"

[adversary]
kind = "bernoulli"
d = 3

[learner]
algorithm = ["tree-experts", "dp-ftrl-experts"]
epsilon = 1
)");
    const auto r = run_cli(dir, "run s.toml --out o --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(
        r.err.find(
            "warning: point 0: [run] lanes = \"instances\": tree-experts runs scalar code per instance"),
        std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("point 1: [run] lanes"), std::string::npos) << r.err;
    const auto j = run_json(dir, "o");
    ASSERT_EQ(j["points"].size(), 2u);
    EXPECT_NE(j["points"][0]["settings"].dump().find("\"tree-experts\""), std::string::npos)
        << j["points"][0].dump();
    const std::string w = j["points"][0]["warnings"].dump();
    EXPECT_NE(w.find("coordinate lanes"), std::string::npos) << w;
    const std::string p0 = j["points"][0]["launch_policy"], p1 = j["points"][1]["launch_policy"];
    EXPECT_NE(p0.find("coordinate lanes"), std::string::npos) << p0;
    EXPECT_NE(p1.find("instance lanes"), std::string::npos) << p1;
    EXPECT_TRUE(j["points"][1]["warnings"].empty()) << j["points"][1]["warnings"].dump();
}
