// `mpirun -n R dpregret run` (issue 11 item 5; docs/SCALING.md): R ranks split every point's instances as shards
// do, rank 0 gathers them exactly and writes summary.csv and final_regret.csv byte-identical to one process.
// Skipped when this build has no MPI or mpirun is not installed (scripts/deps.sh installs OpenMPI).
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/run_cli.hpp"
#include "host/mpi/world.hpp"

namespace dpr::test {
namespace {

const char* kConfig = R"([run]
instances = 37
rounds = 60
checkpoints = 5
[adversary]
kind = "bernoulli"
d = 6
per_instance = [false, true]
[learner]
algorithm = ["dp-ftrl-experts", "dp-mab"]
epsilon = 2
)";

bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

std::string mpirun(int ranks) {
    return "mpirun --oversubscribe --allow-run-as-root -n " + std::to_string(ranks);
}

TEST(CliMpi, RanksGiveTheBytesOfOneProcess) {
    if (!mpi::built_with_mpi() || !have_mpirun()) GTEST_SKIP() << "built without MPI, or no mpirun";
    TempDir dir;
    dir.write("c.toml", kConfig);
    ASSERT_EQ(run_cli(dir, "run c.toml --out one --quiet").rc, 0);
    for (int ranks : {2, 3}) {
        const std::string out = "r" + std::to_string(ranks);
        const CliResult r = run_cli(dir, "run c.toml --out " + out + " --quiet", mpirun(ranks));
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(slurp(dir.file(out + "/summary.csv")), slurp(dir.file("one/summary.csv"))) << ranks << " ranks";
        EXPECT_EQ(slurp(dir.file(out + "/final_regret.csv")), slurp(dir.file("one/final_regret.csv"))) << ranks << " ranks";
        EXPECT_NE(slurp(dir.file(out + "/run.json")).find(std::to_string(ranks) + " MPI ranks"), std::string::npos);
    }
}

TEST(CliMpi, BadRankedRunsExitTwoWithTheReason) {
    if (!mpi::built_with_mpi() || !have_mpirun()) GTEST_SKIP() << "built without MPI, or no mpirun";
    TempDir dir;
    dir.write("c.toml", kConfig);
    CliResult r = run_cli(dir, "run c.toml --out o --quiet --set run.instances=1", mpirun(2));
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("would leave some idle"), std::string::npos) << r.err;
    r = run_cli(dir, "run c.toml --out o --quiet --shard 0/2", mpirun(2));
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("single-process runs"), std::string::npos) << r.err;
    ASSERT_EQ(run_cli(dir, "run c.toml --out done --quiet").rc, 0);
    r = run_cli(dir, "run c.toml --out done --quiet", mpirun(2)); // only rank 0 finds it; the others must not hang
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("already holds a complete run"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("o")));
}

} // namespace
} // namespace dpr::test
