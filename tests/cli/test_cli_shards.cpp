// `dpregret run --shard I/K` and `dpregret merge` (docs/SCALING.md): sharded and merged equals
// unsharded, byte for byte (summary.csv, final_regret.csv) and in run.json but for timing and host fields; shards
// that do not belong together are refused with exit 2 and the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"

namespace dpr::test {
namespace {

/// run.json without the fields that describe when, where and how fast (docs/SCALING.md lists them).
nlohmann::json comparable(const std::string& path) {
    nlohmann::json j = nlohmann::json::parse(slurp(path));
    for (const char* k : {"wall_seconds", "started_at", "device", "threads", "memory_estimate_bytes", "throughput"}) j.erase(k);
    for (auto& p : j["points"])
        for (const char* k : {"wall_seconds", "instance_rounds_per_second", "expert_rounds_per_second", "launch_policy"})
            p.erase(k);
    return j;
}

// A sweep of 4 points: two learners (one with diagnostics), a shared and a per-instance sequence.
const char* kConfig = R"([run]
instances = 23
rounds = 40
checkpoints = 5
[adversary]
kind = "bernoulli"
d = 6
per_instance = [false, true]
[learner]
algorithm = ["dp-ftrl-experts", "dp-mab"]
epsilon = 2
)";

TEST(CliShards, ShardedAndMergedEqualsTheUnshardedRunByteForByte) {
    TempDir dir;
    dir.write("c.toml", kConfig);
    const CliResult full = run_cli(dir, "run c.toml --out full --quiet");
    ASSERT_EQ(full.rc, 0) << full.err;
    for (int k : {1, 2, 3, 7}) {
        std::string shards;
        for (int i = k - 1; i >= 0; --i) { // merge takes them in any order
            const std::string out = "k" + std::to_string(k) + "s" + std::to_string(i);
            const CliResult r = run_cli(dir, "run c.toml --quiet --shard " + std::to_string(i) + "/" + std::to_string(k) +
                                                 " --threads " + std::to_string(1 + i % 2) + " --out " + out);
            ASSERT_EQ(r.rc, 0) << r.err;
            shards += " " + out;
        }
        // The in-memory merge, and the bounded-memory one reading blocks of 5 instances (several per shard) and
        // selecting the order statistics one checkpoint per batch of passes: the same bytes.
        for (const std::string way : {"", " --bounded-memory --read-rows 5 --select-mib 1"}) {
            const std::string merged = (way.empty() ? "m" : "b") + std::to_string(k), what = "k = " + std::to_string(k) + way;
            const CliResult m = run_cli(dir, "merge" + shards + " --out " + merged + " --quiet" + way);
            ASSERT_EQ(m.rc, 0) << m.err;
            EXPECT_EQ(slurp(dir.file(merged + "/summary.csv")), slurp(dir.file("full/summary.csv"))) << what;
            EXPECT_EQ(slurp(dir.file(merged + "/final_regret.csv")), slurp(dir.file("full/final_regret.csv"))) << what;
            EXPECT_EQ(comparable(dir.file(merged + "/run.json")), comparable(dir.file("full/run.json"))) << what;
        }
    }
}

TEST(CliShards, ShardsThatDoNotBelongTogetherAreRefusedWithTheReason) {
    TempDir dir;
    dir.write("c.toml", kConfig);
    for (int i = 0; i < 3; ++i)
        ASSERT_EQ(run_cli(dir, "run c.toml --quiet --shard " + std::to_string(i) + "/3 --out s" + std::to_string(i)).rc, 0);
    ASSERT_EQ(run_cli(dir, "run c.toml --quiet --shard 2/3 --set run.seed=5 --out seed5").rc, 0);
    ASSERT_EQ(run_cli(dir, "run c.toml --quiet --shard 1/2 --out half").rc, 0);
    std::filesystem::create_directory(dir.file("empty"));
    const std::pair<std::string, std::string> cases[] = {
        {"s0 s1", "shards missing: 2/3"},
        {"s0 s1 s1 s2", "as is s1"},
        {"s0 s1 seed5", "different configuration"},
        {"s0 s1 half", "one of 2 shards"},
        {"s0 s1 nothing", "nothing: no such directory"},
        {"s0 s1 empty", "not a complete shard"},
        {"s0 s1 c.toml", "c.toml: not a directory"},
    };
    for (const auto& [args, needle] : cases) {
        const CliResult r = run_cli(dir, "merge " + args + " --out m");
        EXPECT_EQ(r.rc, 2) << args << ": " << r.err;
        EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("m/run.json"))) << args;
    }
    // A NaN written into a shard's array is named with its file (its checksum no longer matches), not blamed on
    // the learner.
    std::filesystem::copy(dir.file("s1"), dir.file("s1nan"), std::filesystem::copy_options::recursive);
    {
        std::fstream f(dir.file("s1nan/p0.regret.npy"), std::ios::in | std::ios::out | std::ios::binary);
        ASSERT_TRUE(f.good());
        const double nan = std::nan("");
        f.seekp(128 + 8); // the second element after the 128-byte .npy header
        f.write(reinterpret_cast<const char*>(&nan), sizeof nan);
    }
    const CliResult nan = run_cli(dir, "merge s0 s1nan s2 --out m");
    EXPECT_NE(nan.rc, 0);
    EXPECT_EQ(nan.rc, 2);
    EXPECT_NE(nan.err.find("s1nan/p0.regret.npy: checksum"), std::string::npos) << nan.err;
    EXPECT_EQ(nan.err.find("defect of the learner"), std::string::npos) << nan.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("m/run.json")));
    // The config file changed after the shards ran.
    dir.write("c.toml", std::string(kConfig) + "delta = 0\n");
    const CliResult changed = run_cli(dir, "merge s0 s1 s2 --out m");
    EXPECT_EQ(changed.rc, 2);
    EXPECT_NE(changed.err.find("has changed since the shards ran"), std::string::npos) << changed.err;
}

TEST(CliShards, BadShardArgumentsExitTwo) {
    TempDir dir;
    dir.write("c.toml", kConfig);
    for (const char* bad : {"3/3", "a/b", "1", "-1/2", "0/0", "1/2/3"}) {
        const CliResult r = run_cli(dir, std::string("run c.toml --quiet --out o --shard ") + bad);
        EXPECT_EQ(r.rc, 2) << bad;
        EXPECT_NE(r.err.find("--shard"), std::string::npos) << bad << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("o"))) << bad;
    }
    const CliResult tuning = run_cli(dir, "merge s0 --out m --read-rows 5"); // a --bounded-memory option alone
    EXPECT_EQ(tuning.rc, 2);
    EXPECT_NE(tuning.err.find("--bounded-memory"), std::string::npos) << tuning.err;
    const CliResult many = run_cli(dir, "run c.toml --quiet --out o --shard 0/24");
    EXPECT_EQ(many.rc, 2);
    EXPECT_NE(many.err.find("at most 23 shards"), std::string::npos) << many.err;
    ASSERT_EQ(run_cli(dir, "run c.toml --quiet --shard 0/2 --out s").rc, 0);
    const CliResult again = run_cli(dir, "run c.toml --quiet --shard 0/2 --out s");
    EXPECT_EQ(again.rc, 2);
    EXPECT_NE(again.err.find("already holds a complete shard"), std::string::npos) << again.err;
}

/// final_regret.csv rows of the point whose swept epsilon is `eps`, without the point column.
std::vector<std::string> rows_of(const std::string& final_csv, const std::string& summary_csv, const std::string& eps) {
    // summary.csv: point,algorithm,epsilon,... -> the point index of that epsilon.
    std::string point;
    std::istringstream s(summary_csv);
    std::string line;
    std::getline(s, line);
    while (std::getline(s, line)) {
        const auto c1 = line.find(','), c2 = line.find(',', c1 + 1), c3 = line.find(',', c2 + 1);
        if (line.substr(c2 + 1, c3 - c2 - 1) == eps) point = line.substr(0, c1);
    }
    std::vector<std::string> out;
    std::istringstream f(final_csv);
    std::getline(f, line);
    while (std::getline(f, line))
        if (line.substr(0, line.find(',')) == point) out.push_back(line.substr(line.find(',')));
    return out;
}

// Reproducibility contract v2: without common random numbers a point's streams are keyed by its
// resolved settings, so adding, removing or reordering sweep values leaves every other point's numbers unchanged.
TEST(ReproducibilityV2, ReorderingOrExtendingASweepLeavesEveryPointsNumbers) {
    TempDir dir;
    const std::string base = "[run]\ninstances = 40\nrounds = 50\ncommon_random_numbers = false\n[adversary]\n"
                             "kind = \"bernoulli\"\nd = 4\n[learner]\nalgorithm = \"dp-ftrl-experts\"\n";
    dir.write("a.toml", base + "epsilon = [1, 2, 4]\n");
    dir.write("b.toml", base + "epsilon = [4, 8, 1]\n");
    ASSERT_EQ(run_cli(dir, "run a.toml --out a --quiet").rc, 0);
    ASSERT_EQ(run_cli(dir, "run b.toml --out b --quiet").rc, 0);
    const std::string fa = slurp(dir.file("a/final_regret.csv")), sa = slurp(dir.file("a/summary.csv"));
    const std::string fb = slurp(dir.file("b/final_regret.csv")), sb = slurp(dir.file("b/summary.csv"));
    for (const char* eps : {"1", "4"}) {
        const auto ra = rows_of(fa, sa, eps), rb = rows_of(fb, sb, eps);
        ASSERT_EQ(ra.size(), 40u) << eps;
        EXPECT_EQ(ra, rb) << "epsilon = " << eps << " changed with its place in the sweep";
    }
    EXPECT_NE(rows_of(fa, sa, "1"), rows_of(fa, sa, "2")); // and the points do have streams of their own
    EXPECT_NE(slurp(dir.file("a/run.json")).find("\"point_stream_keys\": 2"), std::string::npos);
}

} // namespace
} // namespace dpr::test
