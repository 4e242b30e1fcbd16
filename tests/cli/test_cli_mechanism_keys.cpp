// The keys of the prefix-sum mechanism and the privacy reports, as a user meets them through `dpregret run` (issue 47):
//   - blt_buffers = "auto" is what docs/KEYS.md gives as its default, so writing it runs the point that leaving it out
//     runs (it was refused: "must be an integer in [1, 6]");
//   - an error about a value written under the former name `tree` says that `tree` is the former name of `mechanism`
//     (it named `mechanism` only, a key the file does not contain);
//   - dp-ftpl-* at T = 1 report epsilon = 0, delta = 0: the one play x_1 = argmin <x, L~_0> depends on no loss
//     (L_0 = 0, and the tree releases no node before L~_T: AS17 Alg. 2, docs/spec/model.md §1.5 "T = 1"); they
//     reported inf, as if they were not private at all.
#include <cmath>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"

using dpr::test::CliResult;
using dpr::test::run_cli;
using dpr::test::slurp;
using dpr::test::TempDir;

namespace {

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

const std::string kBlt = "[run]\nseed = 5\ninstances = 16\nrounds = 64\ncommon_random_numbers = false\n[adversary]\n"
                         "kind = \"bernoulli\"\nd = 4\n[learner]\nalgorithm = \"dp-ftpl-experts\"\nepsilon = 1\n"
                         "delta = 1e-5\nmechanism = \"blt\"\n";

} // namespace

// "auto" gives the run that leaving the key out gives: the same resolved buffers (run.json's privacy.blt), the same
// stream key (the point's settings hash alike) and the same bytes of final_regret.csv.
TEST(CliMechanismKeys, BltBuffersAutoIsTheKeyLeftOut) {
    TempDir dir;
    dir.write("left_out.toml", kBlt);
    dir.write("auto.toml", kBlt + "blt_buffers = \"auto\"\n");
    for (const char* name : {"left_out", "auto"}) {
        const CliResult r = run_cli(dir, std::string("run ") + name + ".toml --out " + name + " --quiet --threads 1");
        ASSERT_EQ(r.rc, 0) << name << ": " << r.err;
    }
    const auto a = nlohmann::json::parse(slurp(dir.file("left_out/run.json")));
    const auto b = nlohmann::json::parse(slurp(dir.file("auto/run.json")));
    EXPECT_EQ(a["points"][0]["stream"], b["points"][0]["stream"]);
    EXPECT_EQ(a["points"][0]["privacy"], b["points"][0]["privacy"]);
    EXPECT_EQ(b["points"][0]["privacy"]["blt"]["buffers"], 4); // auto = 4 at T <= 2^18 (docs/MECHANISMS.md §3.5)
    EXPECT_EQ(slurp(dir.file("left_out/final_regret.csv")), slurp(dir.file("auto/final_regret.csv")));
    // Any other word is refused naming the key and both kinds of valid value.
    dir.write("bad.toml", kBlt + "blt_buffers = \"many\"\n");
    const CliResult bad = run_cli(dir, "run bad.toml --out bad --quiet");
    EXPECT_EQ(bad.rc, 2);
    EXPECT_TRUE(contains(bad.err, "[learner] blt_buffers = \"many\"")) << bad.err;
    EXPECT_TRUE(contains(bad.err, "must be an integer in [1, 6] or \"auto\"")) << bad.err;
}

TEST(CliMechanismKeys, AnErrorAboutTheFormerNameTreeSaysItIsTheFormerNameOfMechanism) {
    TempDir dir;
    const std::string head = "[run]\nrounds = 64\ninstances = 4\n[adversary]\nkind = \"bernoulli\"\nd = 4\n[learner]\n"
                             "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\n";
    dir.write("typo.toml", head + "tree = \"bianry\"\n");
    // blt needs Gaussian noise: the learner's check() refuses it, about the key written as tree.
    dir.write("laplace.toml", head + "tree = \"blt\"\n");
    for (const char* name : {"typo", "laplace"}) {
        const CliResult r = run_cli(dir, std::string("run ") + name + ".toml --out o --quiet");
        EXPECT_EQ(r.rc, 2) << name;
        EXPECT_TRUE(contains(r.err, "[learner] mechanism = ")) << r.err;
        EXPECT_TRUE(contains(r.err, "tree is the former name of mechanism")) << name << ": " << r.err;
    }
    const CliResult set = run_cli(dir, "run typo.toml --out o --quiet --set learner.tree=bianry");
    EXPECT_EQ(set.rc, 2);
    EXPECT_TRUE(contains(set.err, "(--set learner.tree=bianry; tree is the former name of mechanism)")) << set.err;
}

// AS17 Alg. 2 releases L~_0 .. L~_{T-1}; at T = 1 that is L~_0 alone, which carries no loss (L_0 = 0) and no node
// (k = ceil(log2 1) = 0): nothing the learner releases depends on the losses, so it is (0, 0)-DP whatever its noise
// (docs/spec/as17.md §A2). At T = 2 the same learners report a finite epsilon > 0: the fix is not "report 0".
TEST(CliMechanismKeys, DpFtplAtOneRoundReportsTheGuaranteeOfReleasingNothing) {
    TempDir dir;
    for (const char* algorithm : {"dp-ftpl-experts", "dp-ftpl-ball", "dp-ftpl-cube"}) {
        const std::string adversary = std::string(algorithm) == "dp-ftpl-experts" ? "bernoulli"
                                      : std::string(algorithm) == "dp-ftpl-ball"  ? "drifting"
                                                                                   : "cube-coordinate";
        dir.write("c.toml", "[run]\nrounds = [1, 2]\ninstances = 4\n[adversary]\nkind = \"" + adversary +
                                "\"\nd = 4\n[learner]\nalgorithm = \"" + algorithm + "\"\nepsilon = 1\ndelta = 1e-5\n");
        const std::string out = std::string("o_") + algorithm;
        const CliResult r = run_cli(dir, "run c.toml --out " + out + " --quiet --threads 1");
        ASSERT_EQ(r.rc, 0) << algorithm << ": " << r.err;
        const auto j = nlohmann::json::parse(slurp(dir.file(out + "/run.json")));
        ASSERT_EQ(j["points"].size(), 2u);
        const auto& one = j["points"][0]["privacy"];
        EXPECT_EQ(one["epsilon"], 0.0) << algorithm << ": " << one.dump();
        EXPECT_EQ(one["delta"], 0.0) << algorithm << ": " << one.dump();
        const auto& two = j["points"][1]["privacy"];
        ASSERT_TRUE(two["epsilon"].is_number()) << two.dump();
        EXPECT_GT(two["epsilon"].get<double>(), 0.0) << algorithm;
        EXPECT_TRUE(std::isfinite(two["epsilon"].get<double>())) << algorithm;
    }
}
