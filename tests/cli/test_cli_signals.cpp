// Signals and output channels that must never cost a run or an audit its results (issue 47):
// - a reader of stdout or stderr that has gone away (`dpregret audit a.toml 2>&1 | head -1`, a closed ssh session)
//   no longer kills the process with SIGPIPE: it completes, exits 0 and writes the same files as with a terminal;
// - a second SIGINT to an audit, which ends it at once, removes its lock file and the directory it created, and the
//   first signal's message says what a second one costs instead of inviting it;
// - a tiny [audit] selection is refused at once (its message used to take 150 s to build, or forever), naming the
//   key and values that work;
// - `audit --save-statistic` that cannot fit on the disk is refused before anything is simulated (exit 2).
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/run_cli.hpp"

using dpr::test::CliResult;
using dpr::test::run_cli;
using dpr::test::slurp;
using dpr::test::TempDir;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

/// A run and an audit of well under a second, which print a progress line on stderr and a closing line on stdout.
const char* kRun = "[run]\ninstances = 50\nrounds = 200\n[adversary]\nkind = \"bernoulli\"\nd = 4\n"
                   "[learner]\nalgorithm = \"hedge\"\n";
const char* kAudit = "[run]\ninstances = 1000\nrounds = 2\n[adversary]\nkind = \"bernoulli\"\nd = 2\n[learner]\n"
                     "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\n[audit]\nround = 1\n";

/// A process's end: exit code, or the signal that killed it.
struct Ended {
    bool exited = false;
    int code = -1;
    int signal = 0;
    std::string describe() const {
        return exited ? "exit " + std::to_string(code) : "killed by signal " + std::to_string(signal);
    }
};

Ended ended(int status) {
    Ended e;
    e.exited = WIFEXITED(status);
    if (e.exited) e.code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
    return e;
}

/// Starts `dpregret args...` in `dir` with SIGPIPE at its default action (as a shell starts it, whatever the test
/// runner ignores); its stdout and stderr go to `out_fd` and `err_fd`.
pid_t spawn(const TempDir& dir, const std::vector<std::string>& args, int out_fd, int err_fd) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        ::signal(SIGINT, SIG_DFL);
        if (::chdir(dir.path().c_str()) != 0) ::_exit(91);
        ::dup2(out_fd, 1);
        ::dup2(err_fd, 2);
        std::string bin = dpr::test::binary();
        std::vector<std::string> words = {bin};
        words.insert(words.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (std::string& w : words) argv.push_back(w.data());
        argv.push_back(nullptr);
        ::execv(bin.c_str(), argv.data());
        ::_exit(92);
    }
    return pid;
}

Ended wait_for(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return ended(status);
}

/// Runs the command with stdout and/or stderr into a pipe whose reader has already exited (closed its end).
Ended run_into_closed_pipe(const TempDir& dir, const std::vector<std::string>& args, bool stdout_broken,
                           bool stderr_broken, const std::string& other_file) {
    int p[2];
    if (::pipe(p) != 0) return {};
    ::close(p[0]); // the reader is gone: every write to p[1] fails with EPIPE (or raises SIGPIPE)
    const int file = ::open(other_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const pid_t pid = spawn(dir, args, stdout_broken ? p[1] : file, stderr_broken ? p[1] : file);
    ::close(p[1]);
    ::close(file);
    return wait_for(pid);
}

} // namespace

// ---- SIGPIPE ------------------------------------------------------------------------------------------------------

// Before the fix the first progress write killed the process (signal 13, shell exit 141) and nothing was written.
TEST(BrokenPipe, ARunWhoseStdoutAndStderrReadersExitedCompletesWithItsResults) {
    TempDir dir;
    dir.write("c.toml", kRun);
    ASSERT_EQ(run_cli(dir, "run c.toml --out ref").rc, 0);
    const Ended e = run_into_closed_pipe(dir, {"run", "c.toml", "--out", "piped"}, true, true, dir.file("unused"));
    ASSERT_TRUE(e.exited && e.code == 0) << e.describe();
    for (const char* f : {"summary.csv", "final_regret.csv"})
        EXPECT_EQ(slurp(dir.file(std::string("piped/") + f)), slurp(dir.file(std::string("ref/") + f))) << f;
    const auto ref = nlohmann::json::parse(slurp(dir.file("ref/run.json")));
    const auto piped = nlohmann::json::parse(slurp(dir.file("piped/run.json"))); // complete: it parses
    EXPECT_EQ(piped["config"]["resolved_toml"], ref["config"]["resolved_toml"]);
    EXPECT_EQ(piped["point_count"], ref["point_count"]);
    EXPECT_FALSE(fs::exists(dir.file("piped/.lock")));
}

TEST(BrokenPipe, AnAuditWhoseStdoutAndStderrReadersExitedCompletesWithItsResults) {
    TempDir dir;
    dir.write("a.toml", kAudit);
    ASSERT_EQ(run_cli(dir, "audit a.toml --out ref --save-statistic").rc, 0);
    const Ended e = run_into_closed_pipe(dir, {"audit", "a.toml", "--out", "piped", "--save-statistic"}, true, true,
                                         dir.file("unused"));
    ASSERT_TRUE(e.exited && e.code == 0) << e.describe();
    for (const char* f : {"privacy_region.csv", "statistic.npy"})
        EXPECT_EQ(slurp(dir.file(std::string("piped/") + f)), slurp(dir.file(std::string("ref/") + f))) << f;
    const auto ref = nlohmann::json::parse(slurp(dir.file("ref/audit.json")));
    const auto piped = nlohmann::json::parse(slurp(dir.file("piped/audit.json")));
    EXPECT_EQ(piped["verdict"], ref["verdict"]);
    EXPECT_EQ(piped["epsilon_lb"], ref["epsilon_lb"]);
    EXPECT_EQ(piped["event"], ref["event"]);
    EXPECT_FALSE(fs::exists(dir.file("piped/.lock")));
}

// Only stderr is gone: the progress stops, and the verdict still reaches stdout.
TEST(BrokenPipe, AnAuditWithoutStderrStillPrintsItsVerdict) {
    TempDir dir;
    dir.write("a.toml", kAudit);
    const Ended e = run_into_closed_pipe(dir, {"audit", "a.toml", "--out", "piped"}, false, true, dir.file("stdout"));
    ASSERT_TRUE(e.exited && e.code == 0) << e.describe();
    EXPECT_TRUE(fs::exists(dir.file("piped/audit.json")));
    const std::string out = slurp(dir.file("stdout"));
    const auto j = nlohmann::json::parse(slurp(dir.file("piped/audit.json")));
    EXPECT_TRUE(contains(out, j["verdict"].get<std::string>() + ": eps_lb = ")) << out;
}

// ---- a second SIGINT to an audit ----------------------------------------------------------------------------------

namespace {

/// An audit whose chunks take about a second each on 2 cores: it is still simulating when the second signal comes.
const char* kLongAudit = "[run]\ninstances = 200000\nrounds = 4000\n[adversary]\nkind = \"bernoulli\"\nd = 16\n"
                         "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\n[audit]\nround = 1\n";

bool wait_until(const std::function<bool()>& cond, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!cond()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

/// Starts the long audit into `out`, waits until it simulates, sends SIGINT, waits for its message, sends SIGINT
/// again. Returns how it ended; *err gets its stderr.
Ended interrupt_twice(const TempDir& dir, const std::string& out, std::string* err) {
    const std::string err_path = dir.file("stderr-" + out);
    const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_WRONLY);
    const pid_t pid = spawn(dir, {"audit", "long.toml", "--out", out}, null, err_fd);
    ::close(err_fd);
    ::close(null);
    // The lock exists once the plan passed and the directory is opened; the trials start right after it.
    const bool started = wait_until([&] { return fs::exists(dir.file(out + "/.lock")); }, 120);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(pid, SIGINT);
    const bool told = wait_until([&] { return contains(slurp(err_path), "interrupted"); }, 30);
    ::kill(pid, SIGINT);
    const Ended e = wait_for(pid);
    *err = slurp(err_path);
    EXPECT_TRUE(started) << "the audit never opened " << out << ": " << *err;
    EXPECT_TRUE(told) << *err;
    return e;
}

} // namespace

// Before the fix the audit registered no clean-up: the second signal left DIR/.lock, and so the directory.
TEST(AuditSignals, ASecondSigintRemovesTheLockAndTheDirectoryTheAuditCreated) {
    TempDir dir;
    dir.write("long.toml", kLongAudit);
    std::string err;
    const Ended e = interrupt_twice(dir, "fresh", &err);
    // The second signal ended it at once (had the first already stopped it, this test would show nothing).
    ASSERT_EQ(e.signal, SIGINT) << e.describe() << "\n" << err;
    EXPECT_FALSE(fs::exists(dir.file("fresh/.lock"))) << err;
    EXPECT_FALSE(fs::exists(dir.file("fresh"))) << "the audit created it and left it empty";
    EXPECT_FALSE(fs::exists(dir.file("runs")));
}

TEST(AuditSignals, ASecondSigintKeepsADirectoryTheUserMadeButNotTheLock) {
    TempDir dir;
    dir.write("long.toml", kLongAudit);
    fs::create_directory(dir.file("mine"));
    std::string err;
    const Ended e = interrupt_twice(dir, "mine", &err);
    ASSERT_EQ(e.signal, SIGINT) << e.describe() << "\n" << err;
    EXPECT_TRUE(fs::is_directory(dir.file("mine")));
    EXPECT_TRUE(fs::is_empty(dir.file("mine"))) << "no .lock, no partial file";
}

// The first signal's message used to say "send the signal again to stop at once", which users do.
TEST(AuditSignals, TheFirstSignalsMessageSaysWhatASecondOneCostsWithoutInvitingIt) {
    TempDir dir;
    dir.write("long.toml", kLongAudit);
    std::string err;
    interrupt_twice(dir, "fresh", &err);
    EXPECT_TRUE(contains(err, "interrupted: stopping after the current chunk")) << err;
    EXPECT_FALSE(contains(err, "again")) << err;
    EXPECT_TRUE(contains(err, "second signal")) << err;
    EXPECT_TRUE(contains(err, "at once")) << err;
    EXPECT_TRUE(contains(err, "lose the unfinished work")) << err;
}

// ---- a tiny [audit] selection -------------------------------------------------------------------------------------

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

// The message's fewest-instances figure came from a search upwards from 20: 150 s at 1e-9, endless at 1e-300, and
// deaf to Ctrl-C. Now it is immediate, and the selections it suggests work.
TEST(AuditSelection, ATinySelectionIsRefusedAtOnceNamingTheKeyAndWhatWorks) {
    TempDir dir;
    dir.write("a.toml", kAudit); // 1000 instances per side
    for (const std::string sel : {"1e-9", "1e-300", "5e-324"}) {
        const auto t = std::chrono::steady_clock::now();
        // The old code is killed after 20 s (exit 137), far beyond the bound asserted below.
        const CliResult r = run_cli(dir, "audit a.toml --out x --set audit.selection=" + sel, "timeout -s KILL 20");
        const double took = seconds_since(t);
        EXPECT_EQ(r.rc, 2) << sel << ": " << r.err;
        EXPECT_LT(took, 5.0) << sel;
        EXPECT_TRUE(contains(r.err, "dpregret: error: [audit] selection = ")) << r.err;
        EXPECT_FALSE(fs::exists(dir.file("x"))) << "refused before the directory exists";
        // It names a range of selections that work for these instances: its ends are accepted, and a selection
        // clearly below its lower end is not.
        std::smatch m;
        const std::regex range(R"(with \[run\] instances = 1000, \[audit\] selection in \[([^,\]]+), ([^\]]+)\])");
        ASSERT_TRUE(std::regex_search(r.err, m, range)) << r.err;
        const std::string lo = m[1], hi = m[2];
        EXPECT_LE(std::stod(hi), 0.9) << "within the key's range (0, 0.9]";
        for (const std::string& ok : {lo, hi}) {
            const CliResult a =
                run_cli(dir, "audit a.toml --quiet --out 'ok " + sel + " " + ok + "' --set audit.selection=" + ok);
            EXPECT_EQ(a.rc, 0) << "suggested selection " << ok << ": " << a.err;
        }
        const CliResult below =
            run_cli(dir, "audit a.toml --out below --set audit.selection=" + std::to_string(std::stod(lo) / 1.25));
        EXPECT_EQ(below.rc, 2) << below.err;
    }
}

// A selection that some instance count serves still names that count, and it is exact.
TEST(AuditSelection, TheFewestInstancesItNamesAreEnoughAndOneFewerIsNot) {
    TempDir dir;
    dir.write("a.toml", kAudit);
    const CliResult r = run_cli(dir, "audit a.toml --out x --set audit.selection=2e-4");
    ASSERT_EQ(r.rc, 2) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(takes instances >= ([0-9]+))"))) << r.err;
    const std::string n = m[1];
    EXPECT_TRUE(contains(r.err, "[audit] selection")) << r.err;
    EXPECT_EQ(run_cli(dir, "audit a.toml --quiet --out enough --set audit.selection=2e-4 --set run.instances=" + n).rc,
              0);
    const CliResult fewer = run_cli(dir, "audit a.toml --out fewer --set audit.selection=2e-4 --set run.instances=" +
                                             std::to_string(std::stoull(n) - 1));
    EXPECT_EQ(fewer.rc, 2) << fewer.err;
}

// ---- disk -----------------------------------------------------------------------------------------------------------

namespace {

/// Runs `dpregret args` in `dir` inside a new user and mount namespace with a tmpfs of `size` mounted on
/// dir/small (no root needed where unprivileged user namespaces are allowed). Writes the exit code to dir/rc and
/// what dir/small holds afterwards to dir/listing. False when such a file system cannot be made here.
bool run_on_small_fs(const TempDir& dir, const std::string& size, const std::string& args, CliResult* r) {
    fs::create_directory(dir.file("small"));
    // Inside the double quotes of the outer shell: \$? is the inner shell's status, not the outer one's.
    const std::string inner = "mount -t tmpfs -o size=" + size + " tmpfs small || exit 77; '" + dpr::test::binary() +
                              "' " + args + " >stdout 2>stderr; echo \\$? >rc; ls -A small >listing";
    const std::string cmd = "cd '" + dir.path().string() +
                            "' && unshare --user --map-root-user --mount sh -c \"" + inner + "\" 2>/dev/null";
    const int status = std::system(cmd.c_str());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fs::exists(dir.file("rc"))) return false;
    r->rc = std::stoi(slurp(dir.file("rc")));
    r->out = slurp(dir.file("stdout"));
    r->err = slurp(dir.file("stderr"));
    fs::remove(dir.file("rc"));
    return true;
}

} // namespace

// It used to simulate every trial and then fail writing statistic.npy (exit 1).
TEST(AuditDisk, SaveStatisticThatCannotFitIsRefusedBeforeSimulating) {
    TempDir dir;
    // 100000 trials per side: statistic.npy is 1.6 MB, the rest a few dozen KiB.
    dir.write("a.toml", "[run]\ninstances = 100000\nrounds = 2\n[adversary]\nkind = \"bernoulli\"\nd = 2\n"
                        "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\n[audit]\nround = 1\n");
    CliResult r;
    if (!run_on_small_fs(dir, "1m", "audit a.toml --out small/a --save-statistic", &r))
        GTEST_SKIP() << "cannot mount a small tmpfs here (no unprivileged user namespaces)";
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "--save-statistic")) << r.err;
    EXPECT_TRUE(contains(r.err, "statistic.npy")) << r.err;
    EXPECT_TRUE(contains(r.err, "2 x 100000 trials x 8 bytes")) << r.err;
    EXPECT_TRUE(contains(r.err, "is free there")) << r.err;
    EXPECT_FALSE(contains(r.err, "audit: ")) << "no progress: nothing was simulated\n" << r.err;
    EXPECT_EQ(slurp(dir.file("listing")), "") << "the directory it created is gone";
    // Without the statistic the same audit fits and runs.
    ASSERT_TRUE(run_on_small_fs(dir, "1m", "audit a.toml --out small/a --quiet", &r));
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(slurp(dir.file("listing")), "a\n");
}
