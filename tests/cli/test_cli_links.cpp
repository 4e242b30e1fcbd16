// A shared output directory (docs/OUTPUTS.md "Links and special files in an output directory"), tested as the
// user of a group directory or a shared scratch `runs/` meets it: someone who can create files there puts a
// symbolic link (to a file of the victim's, or to a directory of the victim's) or a FIFO at a name that
// `run`, `run --resume`, `merge` or `audit` creates, opens, renames or removes. Every such name is refused
// with exit 2, naming it, and the link's target is exactly as it was; a store swapped for a link during the
// run is never written through. Results of different kinds never mix in one directory.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/run_cli.hpp"

namespace dpr::test {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

std::vector<std::string> listing(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

const char* kRun = "[run]\ninstances = 4\nrounds = 20\n[adversary]\nkind = \"bernoulli\"\nd = 3\n"
                   "[learner]\nalgorithm = \"hedge\"\n";
const char* kAudit =
    "[run]\ninstances = 1000\nrounds = 2\n[adversary]\nkind = \"bernoulli\"\nd = 2\n[learner]\n"
    "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\n[audit]\nround = 1\n";

/// The victim's file and directory, outside the shared directory; both must be untouched at the end.
struct Victims {
    explicit Victims(const TempDir& t) : file(t.file("thesis.tex")), dir(t.file("home")) {
        t.write("thesis.tex", "my thesis\n");
        fs::create_directory(dir);
        std::ofstream(dir + "/notes.txt") << "notes\n";
    }
    bool intact() const {
        return slurp(file) == "my thesis\n" && listing(dir) == std::vector<std::string>{"notes.txt"} &&
               slurp(dir + "/notes.txt") == "notes\n";
    }
    std::vector<std::string> targets() const { return {file, dir}; }
    std::string file, dir;
};

/// Runs `dpregret <args>` in `dir` as run_cli does, but in a child that first calls plant(pid) with the pid
/// the command will have (the child execs it): how an attacker who guesses the next pid places
/// <name>.tmp.<pid>.
CliResult run_cli_planted(const TempDir& dir, const std::vector<std::string>& args,
                          const std::function<void(pid_t)>& plant) {
    static TempDir capture;
    const std::string out = capture.file("stdout"), err = capture.file("stderr");
    const pid_t pid = ::fork();
    if (pid == 0) {
        plant(::getpid());
        if (::chdir(dir.path().c_str()) != 0) ::_exit(91);
        const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(o, 1);
        ::dup2(e, 2);
        exec_binary(args);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    CliResult r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

/// An unfinished run in `out` (killed while writing its outputs: every piece is in .progress).
void make_unfinished(const TempDir& dir, const std::string& out) {
    std::string seeds;
    for (int s = 0; s < 300; ++s) seeds += (s ? "," : "") + std::to_string(s);
    dir.write("long.toml",
              "[run]\ninstances = 2\nrounds = 1000\ncheckpoints = 16\nseed = [" + seeds +
                  "]\n[adversary]\nkind = \"bernoulli\"\nd = 2\n[learner]\nalgorithm = \"hedge\"\n");
    const BlockedWriter w = run_blocked_in_output(dir, "long.toml", out, {"--piece-instances", "1"});
    ASSERT_GT(w.pid, 0) << "the run never reached its output";
    ::kill(w.pid, SIGKILL);
    ::waitpid(w.pid, nullptr, 0);
    ASSERT_TRUE(fs::exists(dir.file(out + "/.progress/spec.json")));
}

// ---- .lock ------------------------------------------------------------------------------------------------

// The reproducer: `ln -s ~/thesis.tex o/.lock; dpregret run c.toml --out o` truncated thesis.tex and
// wrote "pid N on host H since T" into it. Every command that locks a directory, with the link to a file and
// to a directory.
TEST(CliLinks, ALockFileThatIsALinkIsRefusedByRunMergeAuditAndResume) {
    TempDir dir;
    const Victims v(dir);
    dir.write("c.toml", kRun);
    dir.write("a.toml", kAudit);
    ASSERT_EQ(run_cli(dir, "run c.toml --shard 0/1 --out s0 --quiet").rc, 0);
    make_unfinished(dir, "unfinished");
    for (const std::string& target : v.targets()) {
        for (const std::string& args :
             {std::string("run c.toml --out o --quiet"), std::string("merge s0 --out o --quiet"),
              std::string("audit a.toml --out o --quiet")}) {
            fs::remove_all(dir.file("o"));
            fs::create_directory(dir.file("o"));
            fs::create_symlink(target, dir.file("o/.lock"));
            const CliResult r = run_cli(dir, args);
            EXPECT_EQ(r.rc, 2) << args << ": " << r.err;
            EXPECT_TRUE(contains(r.err, "o/.lock is a symbolic link")) << args << ": " << r.err;
            EXPECT_EQ(listing(dir.file("o")), std::vector<std::string>{".lock"}) << args;
            EXPECT_TRUE(v.intact()) << args;
        }
        fs::remove(dir.file("unfinished/.lock")); // the killed run's stale lock file
        fs::create_symlink(target, dir.file("unfinished/.lock"));
        const CliResult r = run_cli(dir, "run --resume unfinished --quiet");
        EXPECT_EQ(r.rc, 2) << r.err;
        EXPECT_TRUE(contains(r.err, "unfinished/.lock is a symbolic link")) << r.err;
        EXPECT_TRUE(v.intact());
        fs::remove(dir.file("unfinished/.lock"));
    }
    // With the link gone, the same commands run.
    EXPECT_EQ(run_cli(dir, "run --resume unfinished --quiet").rc, 0);
}

// ---- the result files, the store, the probe ---------------------------------------------------------------

// A link at the name of any file a command writes is refused when the directory is opened: before anything is
// simulated, and before anything is written.
TEST(CliLinks, ALinkAtAnyResultNameIsRefusedBeforeSimulating) {
    TempDir dir;
    const Victims v(dir);
    dir.write("c.toml", kRun);
    dir.write("a.toml", kAudit);
    struct Case {
        std::string args, name;
    };
    const std::vector<Case> cases = {
        {"run c.toml --out o --quiet", "summary.csv"},
        {"run c.toml --out o --quiet", "final_regret.csv"},
        {"run c.toml --out o --quiet", "run.json"},
        {"run c.toml --out o --quiet", "points.jsonl"},
        {"run c.toml --out o --quiet", ".progress"},
        {"run c.toml --out o --quiet", ".progress.removed"},
        {"run c.toml --shard 0/2 --out o --quiet", "shard.json"},
        {"run c.toml --shard 0/2 --out o --quiet", "p0.regret.npy"},
        {"run c.toml --shard 0/2 --out o --quiet", "p0.comparator.npy"},
        {"audit a.toml --out o --quiet --save-statistic", "statistic.npy"},
        {"audit a.toml --out o --quiet", "privacy_region.csv"},
        {"audit a.toml --out o --quiet", "audit.json"},
    };
    for (const Case& c : cases)
        for (const std::string& target : v.targets()) {
            fs::remove_all(dir.file("o"));
            fs::create_directory(dir.file("o"));
            fs::create_symlink(target, dir.file("o/" + c.name));
            const CliResult r = run_cli(dir, c.args);
            EXPECT_EQ(r.rc, 2) << c.args << " / " << c.name << ": " << r.err;
            EXPECT_TRUE(contains(r.err, "o/" + c.name + " is a symbolic link")) << c.name << ": " << r.err;
            EXPECT_EQ(listing(dir.file("o")), std::vector<std::string>{c.name}) << c.args << " / " << c.name;
            EXPECT_TRUE(v.intact()) << c.args << " / " << c.name;
        }
}

// The temporary names are predictable (<file>.tmp.<pid>, .dpregret-probe.<pid>): a link placed there by
// someone who guessed the pid used to be opened with O_TRUNC and written through. Each is refused naming it.
TEST(CliLinks, ALinkAtATemporaryNameOfTheCommandsOwnPidIsRefused) {
    TempDir dir;
    const Victims v(dir);
    dir.write("c.toml", kRun);
    dir.write("a.toml", kAudit);
    struct Case {
        std::vector<std::string> args;
        std::string name; ///< + <pid>
    };
    const std::vector<std::string> run = {"run", "c.toml", "--out", "o", "--quiet"};
    const std::vector<std::string> shard = {"run", "c.toml", "--shard", "0/2", "--out", "o", "--quiet"};
    const std::vector<std::string> audit = {"audit", "a.toml", "--out", "o", "--quiet", "--save-statistic"};
    const std::vector<Case> cases = {
        {run, "summary.csv.tmp."},        {run, "final_regret.csv.tmp."}, {run, "run.json.tmp."},
        {run, ".dpregret-probe."},        {shard, "shard.json.tmp."},     {shard, "p0.regret.npy.tmp."},
        {shard, "p0.nonfinite.npy.tmp."}, {audit, "statistic.npy.tmp."},  {audit, "privacy_region.csv.tmp."},
        {audit, "audit.json.tmp."}};
    for (const Case& c : cases)
        for (const std::string& target : v.targets()) {
            fs::remove_all(dir.file("o"));
            fs::create_directory(dir.file("o"));
            std::string planted;
            const CliResult r = run_cli_planted(dir, c.args, [&](pid_t pid) {
                planted = c.name + std::to_string(pid);
                ::symlink(target.c_str(), dir.file("o/" + planted).c_str());
            });
            EXPECT_EQ(r.rc, 2) << c.name << ": " << r.err;
            EXPECT_TRUE(contains(r.err, "o/" + c.name) && contains(r.err, "is a symbolic link"))
                << c.name << ": " << r.err;
            EXPECT_FALSE(fs::exists(dir.file("o/run.json")));
            EXPECT_FALSE(fs::exists(dir.file("o/audit.json")));
            EXPECT_TRUE(v.intact()) << c.name;
        }
}

// A FIFO where dpregret writes is refused too (writing into it would hang the run, or feed a reader).
TEST(CliLinks, AFifoAtAResultNameIsRefusedWithoutHanging) {
    TempDir dir;
    dir.write("c.toml", kRun);
    fs::create_directory(dir.file("o"));
    ASSERT_EQ(::mkfifo(dir.file("o/summary.csv").c_str(), 0644), 0);
    const auto t0 = std::chrono::steady_clock::now();
    const CliResult r = run_cli(dir, "run c.toml --out o --quiet", "timeout -s KILL 60");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "o/summary.csv is a FIFO")) << r.err;
}

// The store swapped for a link while the run is writing pieces into it (the run is stopped once .progress
// exists, .progress is renamed away and replaced by a link to the victim's directory, the run goes on): the
// run keeps writing its pieces into the directory it opened, removes the link at the end (not what it points
// to), and its results are the uninterrupted run's.
TEST(CliLinks, AStoreSwappedForALinkDuringTheRunIsNeverWrittenThrough) {
    TempDir dir;
    const Victims v(dir);
    dir.write("c.toml", "[run]\ninstances = 16\nrounds = 20000\n[adversary]\nkind = \"bernoulli\"\nd = 16\n"
                        "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\n");
    ASSERT_EQ(run_cli(dir, "run c.toml --out full --quiet").rc, 0);
    fs::create_directory(dir.file("out"));
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::chdir(dir.path().c_str()) != 0) ::_exit(91);
        const std::string bin = binary();
        ::execl(bin.c_str(), bin.c_str(), "run", "c.toml", "--out", "out", "--quiet", "--piece-instances",
                "1", static_cast<char*>(nullptr));
        ::_exit(92);
    }
    const std::string spec = dir.file("out/.progress/spec.json");
    bool seen = false;
    for (int i = 0; i < 600000 && !seen; ++i) {
        seen = fs::exists(spec);
        if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    ASSERT_TRUE(seen);
    ::kill(pid, SIGSTOP);
    const std::size_t at_swap = listing(dir.file("out/.progress")).size();
    fs::rename(dir.file("out/.progress"), dir.file("out/moved"));
    fs::create_symlink(v.dir, dir.file("out/.progress"));
    ::kill(pid, SIGCONT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_TRUE(v.intact());
    EXPECT_GT(listing(dir.file("out/moved")).size(), at_swap)
        << "pieces were saved after the swap, where it opened";
    EXPECT_FALSE(fs::exists(fs::symlink_status(dir.file("out/.progress"))));
    EXPECT_EQ(slurp(dir.file("out/summary.csv")), slurp(dir.file("full/summary.csv")));
    EXPECT_EQ(slurp(dir.file("out/final_regret.csv")), slurp(dir.file("full/final_regret.csv")));
}

// Inside an unfinished run's store: a link at spec.json or at a finished piece is refused naming it (resuming
// would read the victim's file as ours); a link at a temporary name is removed itself; .progress as a link is
// refused.
TEST(CliLinks, ResumeRefusesLinksInsideTheStoreAndRemovesTemporaryOnesUnfollowed) {
    TempDir dir;
    const Victims v(dir);
    make_unfinished(dir, "out");
    const std::string store = dir.file("out/.progress");
    std::string piece;
    for (const std::string& n : listing(store))
        if (n != "spec.json" && n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) piece = n;
    ASSERT_FALSE(piece.empty());
    for (const std::string& name :
         {std::string("spec.json"), piece, piece.substr(0, piece.size() - 5) + ".npy"})
        for (const std::string& target : v.targets()) {
            const std::string saved = store + "/" + name + ".saved";
            fs::rename(store + "/" + name, saved);
            fs::create_symlink(target, store + "/" + name);
            const CliResult r = run_cli(dir, "run --resume out --quiet");
            EXPECT_EQ(r.rc, 2) << name << ": " << r.err;
            EXPECT_TRUE(contains(r.err, ".progress/" + name + " is a symbolic link"))
                << name << ": " << r.err;
            EXPECT_TRUE(v.intact()) << name;
            EXPECT_FALSE(fs::exists(dir.file("out/run.json")));
            fs::remove(store + "/" + name);
            fs::rename(saved, store + "/" + name);
        }
    // The store itself as a link to a directory (here: to a copy of the real store): refused.
    fs::rename(store, dir.file("real-store"));
    fs::create_symlink(dir.file("real-store"), store);
    CliResult r = run_cli(dir, "run --resume out --quiet");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "out/.progress is a symbolic link")) << r.err;
    fs::remove(store);
    fs::rename(dir.file("real-store"), store);
    // Links at temporary names in the store are a killed process's debris to dpregret: removed, never
    // followed.
    for (const std::string& target : v.targets())
        fs::create_symlink(target, store + "/p0.b0.npy.tmp." + std::to_string(target.size()));
    r = run_cli(dir, "run --resume out --quiet");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(v.intact());
    EXPECT_TRUE(fs::exists(dir.file("out/run.json")));
}

// merge reads its shards by descriptor: a shard file that is a link is refused even when it points at the
// right bytes (a copy), and a FIFO at shard.json is refused without hanging.
TEST(CliLinks, MergeRefusesShardFilesThatAreLinksOrFifos) {
    TempDir dir;
    dir.write("c.toml", kRun);
    ASSERT_EQ(run_cli(dir, "run c.toml --shard 0/2 --out s0 --quiet").rc, 0);
    ASSERT_EQ(run_cli(dir, "run c.toml --shard 1/2 --out s1 --quiet").rc, 0);
    for (const std::string& name : {std::string("p0.regret.npy"), std::string("shard.json")}) {
        fs::copy_file(dir.file("s1/" + name), dir.file("copy"));
        fs::remove(dir.file("s1/" + name));
        fs::create_symlink(dir.file("copy"), dir.file("s1/" + name));
        const CliResult r = run_cli(dir, "merge s0 s1 --out m --quiet");
        EXPECT_EQ(r.rc, 2) << name << ": " << r.err;
        EXPECT_TRUE(contains(r.err, "s1/" + name + " is a symbolic link")) << name << ": " << r.err;
        EXPECT_FALSE(fs::exists(dir.file("m/run.json")));
        fs::remove(dir.file("s1/" + name));
        fs::rename(dir.file("copy"), dir.file("s1/" + name));
    }
    fs::rename(dir.file("s1/shard.json"), dir.file("saved.json"));
    ASSERT_EQ(::mkfifo(dir.file("s1/shard.json").c_str(), 0644), 0);
    const CliResult r = run_cli(dir, "merge s0 s1 --out m --quiet", "timeout -s KILL 60");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "s1/shard.json is a FIFO")) << r.err;
    fs::remove(dir.file("s1/shard.json"));
    fs::rename(dir.file("saved.json"), dir.file("s1/shard.json"));
    EXPECT_EQ(run_cli(dir, "merge s0 s1 --out m --quiet").rc, 0);
}

// ---- results of different kinds ---------------------------------------------------------------------------

// run --out accepted a completed audit's or a shard's directory, and merge --out one of its own input shards:
// the files of two results then lay side by side (a merge wrote summary.csv into s0). Each is refused, naming
// what is there, and the directory is left as it was.
TEST(CliOutputKinds, ADirectoryOfAnotherResultIsRefusedNamingIt) {
    TempDir dir;
    dir.write("c.toml", kRun);
    dir.write("a.toml", kAudit);
    ASSERT_EQ(run_cli(dir, "run c.toml --out r --quiet").rc, 0);
    ASSERT_EQ(run_cli(dir, "audit a.toml --out a --quiet").rc, 0);
    ASSERT_EQ(run_cli(dir, "run c.toml --shard 0/2 --out s0 --quiet").rc, 0);
    ASSERT_EQ(run_cli(dir, "run c.toml --shard 1/2 --out s1 --quiet").rc, 0);
    struct Case {
        std::string args, dir, what;
    };
    const std::vector<Case> cases = {
        {"run c.toml --out a --quiet", "a", "a complete audit (audit.json)"},
        {"run c.toml --out s0 --quiet", "s0", "a complete shard (shard.json)"},
        {"run c.toml --shard 0/2 --out r --quiet", "r", "a complete run (run.json)"},
        {"run c.toml --shard 1/2 --out a --quiet", "a", "a complete audit (audit.json)"},
        {"audit a.toml --out r --quiet", "r", "a complete run (run.json)"},
        {"audit a.toml --out s1 --quiet", "s1", "a complete shard (shard.json)"},
        {"merge s0 s1 --out s0 --quiet", "s0", "a complete shard (shard.json)"},
        {"merge s0 s1 --out a --quiet", "a", "a complete audit (audit.json)"},
    };
    for (const Case& c : cases) {
        const std::vector<std::string> before = listing(dir.file(c.dir));
        const CliResult r = run_cli(dir, c.args);
        EXPECT_EQ(r.rc, 2) << c.args << ": " << r.err;
        EXPECT_TRUE(contains(r.err, "--out " + c.dir + " already holds " + c.what))
            << c.args << ": " << r.err;
        EXPECT_EQ(listing(dir.file(c.dir)), before) << c.args;
    }
    EXPECT_EQ(run_cli(dir, "merge s0 s1 --out m --quiet").rc, 0);
}

} // namespace
} // namespace dpr::test
