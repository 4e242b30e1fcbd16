// `mpirun -n R dpregret run` (docs/SCALING.md): R ranks split every point's instances as shards
// do, rank 0 gathers them exactly and writes summary.csv and final_regret.csv byte-identical to one process.
// Skipped when this build has no MPI or mpirun is not installed (scripts/deps.sh installs OpenMPI).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Ctrl-C in a terminal signals mpirun and every rank. The ranks keep no progress and mpirun kills them soon after,
// so they stop at once: rank 0 removes the --out directory it created (and its lock file) and every rank exits with
// 130. (What mpirun itself then returns is Open MPI's choice: 1 for 4.1.)
TEST(CliMpi, CtrlCLeavesNoEmptyOutputDirectory) {
    if (!mpi::built_with_mpi() || !have_mpirun()) GTEST_SKIP() << "built without MPI, or no mpirun";
    TempDir dir;
    dir.write("long.toml", "[run]\ninstances = 2000\nrounds = 2000000\n[adversary]\nkind = \"bernoulli\"\nd = 64\n"
                           "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\n");
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::setpgid(0, 0); // a process group of its own, as a terminal's foreground job
        if (::chdir(dir.path().c_str()) != 0) ::_exit(91);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        const std::string bin = binary();
        ::execlp("mpirun", "mpirun", "--oversubscribe", "--allow-run-as-root", "-n", "2", bin.c_str(), "run",
                 "long.toml", "--out", "out", "--quiet", "--memory-limit", "none", static_cast<char*>(nullptr));
        ::_exit(92);
    }
    ::setpgid(pid, pid);
    bool locked = false; // rank 0 holds out/.lock: the directory exists and the ranks are simulating
    for (int i = 0; i < 3000 && !locked; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        locked = std::filesystem::exists(dir.file("out/.lock"));
    }
    ::kill(-pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(locked) << "the ranked run never got going";
    EXPECT_FALSE(std::filesystem::exists(dir.file("out"))) << "an interrupted ranked run leaves no directory";
}

} // namespace
} // namespace dpr::test
