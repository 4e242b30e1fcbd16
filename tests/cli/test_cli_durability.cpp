// No lost work, no silent mixing (docs/OUTPUTS.md "Durability, locks and checksums"), tested as a
// cluster user meets it: two processes on one directory, a process killed while it holds the directory, a
// finished piece damaged by a crash or a bad disk, an input file rewritten between a kill and --resume or between
// two shards, a shard's manifest edited, a failure while the outputs are written. In the "two processes" tests the
// first process is held (stopped) inside its output writing (run_blocked_in_output) while the second one starts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "host/api/pipeline.hpp"
#include "host/results/memory_estimate.hpp"
#include "host/results/progress_store.hpp"

namespace dpr::test {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

/// "1, 2, ..., n": a sweep of n seeds, one point each.
std::string seed_list(int n) {
    std::string seeds;
    for (int s = 1; s <= n; ++s) seeds += (s > 1 ? ", " : "") + std::to_string(s);
    return seeds;
}

// Enough checkpoints x seeds that writing summary.csv takes long enough for run_blocked_in_output to stop it there.
std::string blocking_config() {
    return "[run]\ninstances = 2\nrounds = 1000\ncheckpoints = 16\nseed = [" + seed_list(160) +
           "]\n[adversary]\nkind = \"bernoulli\"\nd = 2\n[learner]\nalgorithm = \"hedge\"\n";
}

/// Kills a blocked writer and reaps it; true if it died of the signal.
bool kill_writer(const BlockedWriter& w) {
    ::kill(w.pid, SIGKILL);
    int status = 0;
    ::waitpid(w.pid, &status, 0);
    return WIFSIGNALED(status);
}

/// Flips one bit of byte `offset` of the file.
void flip_bit(const std::string& path, std::streamoff offset) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good()) << path;
    f.seekg(offset);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x01);
    f.seekp(offset);
    f.write(&c, 1);
}

TEST(CliDurability, ASecondProcessOnALockedDirectoryIsRefusedNamingTheHolder) {
    TempDir dir;
    dir.write("c.toml", blocking_config());
    ASSERT_EQ(run_cli(dir, "run c.toml --out full --quiet").rc, 0);
    ASSERT_EQ(run_cli(dir, "run c.toml --shard 0/1 --out s0 --quiet").rc, 0);
    const BlockedWriter w = run_blocked_in_output(dir, "c.toml", "out");
    ASSERT_GT(w.pid, 0) << "the run never reached its output (" << w.temp << ")";
    const std::string holder = "pid " + std::to_string(w.pid) + " on host ";
    // The same --out, a --resume of it (the old refusal invited exactly this), a merge into it.
    for (const std::string args : {"run c.toml --out out --quiet", "run --resume out --quiet", "merge s0 --out out --quiet"}) {
        const CliResult r = run_cli(dir, args);
        EXPECT_EQ(r.rc, 2) << args << ": " << r.err;
        EXPECT_TRUE(contains(r.err, "in use by another dpregret process (" + holder)) << args << ": " << r.err;
        EXPECT_FALSE(contains(r.err, "continue it with")) << args << ": " << r.err;
    }
    // Nothing of the holder's was touched: its store and the file it writes are where they were.
    EXPECT_TRUE(fs::exists(dir.file("out/.progress/spec.json")));
    EXPECT_TRUE(fs::exists(w.temp));
    // The holder dies without releasing anything; the kernel drops its lock, and --resume takes the directory over.
    ASSERT_TRUE(kill_writer(w));
    ASSERT_TRUE(fs::exists(dir.file("out/.lock")));
    const CliResult r = run_cli(dir, "run --resume out --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(slurp(dir.file("out/summary.csv")), slurp(dir.file("full/summary.csv")));
    EXPECT_EQ(slurp(dir.file("out/final_regret.csv")), slurp(dir.file("full/final_regret.csv")));
    EXPECT_FALSE(fs::exists(dir.file("out/.lock"))) << "a finished run leaves no lock file";
    EXPECT_FALSE(fs::exists(dir.file("out/.progress")));
}

TEST(CliDurability, ALockHeldByAnotherProcessRefusesRunMergeAndAudit) {
    TempDir dir;
    dir.write("c.toml", "[run]\ninstances = 4\nrounds = 20\n[adversary]\nkind = \"bernoulli\"\nd = 3\n"
                        "[learner]\nalgorithm = \"hedge\"\n");
    ASSERT_EQ(run_cli(dir, "run c.toml --shard 0/1 --out s0 --quiet").rc, 0);
    dir.write("a.toml", "[run]\ninstances = 1000\nrounds = 2\n[adversary]\nkind = \"bernoulli\"\nd = 2\n[learner]\n"
                        "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\n[audit]\nround = 1\n");
    fs::create_directory(dir.file("held"));
    // Another process (a child that takes the lock as dpregret does and waits) holds held/.lock.
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        const int fd = ::open(dir.file("held/.lock").c_str(), O_RDWR | O_CREAT, 0644);
        if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
        const std::string text = "pid " + std::to_string(::getpid()) + " on host test-node since now\n";
        if (::write(fd, text.data(), text.size()) < 0) ::_exit(1);
        if (::write(ready[1], "x", 1) != 1) ::_exit(1);
        ::pause();
        ::_exit(0);
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    for (const std::string args : {"run c.toml --out held --quiet", "merge s0 --out held --quiet",
                                   "audit a.toml --out held --quiet"}) {
        const CliResult r = run_cli(dir, args);
        EXPECT_EQ(r.rc, 2) << args << ": " << r.err;
        EXPECT_TRUE(contains(r.err, "held is in use by another dpregret process (pid " + std::to_string(child) +
                                        " on host test-node")) << args << ": " << r.err;
        EXPECT_FALSE(fs::exists(dir.file("held/run.json"))) << args;
        EXPECT_FALSE(fs::exists(dir.file("held/audit.json"))) << args;
        EXPECT_FALSE(fs::exists(dir.file("held/.progress"))) << args;
    }
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::close(ready[0]);
    ::close(ready[1]);
    // Its lock file stays behind with its text: a stale lock, taken over without a word.
    ASSERT_TRUE(fs::exists(dir.file("held/.lock")));
    const CliResult r = run_cli(dir, "run c.toml --out held --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir.file("held/run.json")));
}

// A finished piece torn by a crash, damaged by a disk or edited is computed again; the other pieces are kept and
// the result is the uninterrupted run's, byte for byte.
TEST(CliDurability, ADamagedPieceIsComputedAgainAndCostsNoOtherPiece) {
    TempDir dir;
    dir.write("c.toml", blocking_config());
    ASSERT_EQ(run_cli(dir, "run c.toml --out full --quiet").rc, 0);
    const BlockedWriter w = run_blocked_in_output(dir, "c.toml", "out", {"--piece-instances", "1"});
    ASSERT_GT(w.pid, 0) << "the run never reached its output (" << w.temp << ")";
    ASSERT_TRUE(kill_writer(w));
    fs::remove(w.temp);
    const std::string p = dir.file("out/.progress/");
    ASSERT_EQ(std::distance(fs::directory_iterator(p), fs::directory_iterator()), 1 + 2 * 320)
        << "spec.json and 320 pieces of one instance (an array and a marker each)";
    // Damage five of the 320 pieces in five ways.
    flip_bit(p + "p3.b0.npy", 128 + 8 * 5 + 2);   // a mantissa bit of one regret
    flip_bit(p + "p7.b1.npy", 128 + 8 * 3 + 7);   // an exponent bit
    fs::resize_file(p + "p11.b0.npy", 100);        // truncated
    {                                              // a torn marker
        const std::string m = slurp(p + "p13.b0.json");
        std::ofstream(p + "p13.b0.json", std::ios::binary) << m.substr(0, m.size() / 2);
    }
    {                                              // an edited size
        std::string m = slurp(p + "p17.b1.json");
        const std::string key = "\"instances\": 1";
        ASSERT_TRUE(contains(m, key)) << m;
        m.replace(m.find(key), key.size(), "\"instances\": 2");
        std::ofstream(p + "p17.b1.json", std::ios::binary) << m;
    }
    const CliResult r = run_cli(dir, "run --resume out --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const char* piece : {"p3.b0.npy: checksum", "p7.b1.npy: checksum", "p11.b0.npy: 100 bytes", "p13.b0.json",
                              "p17.b1.json"})
        EXPECT_TRUE(contains(r.err, "damaged and is computed again: ") && contains(r.err, piece)) << piece << ": " << r.err;
    std::size_t warnings = 0;
    for (std::size_t at = r.err.find("computed again"); at != std::string::npos; at = r.err.find("computed again", at + 1))
        ++warnings;
    EXPECT_EQ(warnings, 5u) << "only the damaged pieces are computed again: " << r.err;
    EXPECT_EQ(slurp(dir.file("out/summary.csv")), slurp(dir.file("full/summary.csv")));
    EXPECT_EQ(slurp(dir.file("out/final_regret.csv")), slurp(dir.file("full/final_regret.csv")));
}

// A sweep of many small points saves groups of whole points: 160 points make one piece of two files, not 960 files.
TEST(CliDurability, ASweepOfSmallPointsIsSavedInGroupsAndADamagedGroupIsComputedAgain) {
    TempDir dir;
    dir.write("c.toml", blocking_config());
    ASSERT_EQ(run_cli(dir, "run c.toml --out full --quiet").rc, 0);
    const BlockedWriter w = run_blocked_in_output(dir, "c.toml", "out");
    ASSERT_GT(w.pid, 0) << "the run never reached its output (" << w.temp << ")";
    ASSERT_TRUE(kill_writer(w));
    fs::remove(w.temp);
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir.file("out/.progress"))) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"g0.json", "g0.npy", "spec.json"}));
    flip_bit(dir.file("out/.progress/g0.npy"), 128 + 8 * 1000 + 3);
    const CliResult r = run_cli(dir, "run --resume out --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "g0.npy: checksum")) << r.err;
    EXPECT_EQ(slurp(dir.file("out/summary.csv")), slurp(dir.file("full/summary.csv")));
    EXPECT_EQ(slurp(dir.file("out/final_regret.csv")), slurp(dir.file("full/final_regret.csv")));
}

// A loss file rewritten between a kill and --resume (same shape, other values) would mix two sequences.
TEST(CliDurability, AChangedLossFileIsRefusedOnResumeNamingIt) {
    TempDir dir;
    std::string l1, l2;
    for (int t = 0; t < 50; ++t) {
        l1 += std::to_string((t % 3) / 2.0) + "," + std::to_string(((t + 1) % 2) * 0.5) + "\n";
        l2 += std::to_string(((t + 1) % 3) / 2.0) + "," + std::to_string((t % 2) * 0.5) + "\n";
    }
    dir.write("L.csv", l1);
    dir.write("c.toml", "[run]\ninstances = 2\nrounds = 50\ncheckpoints = 16\nseed = [" + seed_list(160) +
                            "]\n[adversary]\nkind = \"file\"\npath = \"L.csv\"\n[learner]\nalgorithm = \"dp-ftrl-experts\"\n"
                            "epsilon = 1\n");
    ASSERT_EQ(run_cli(dir, "run c.toml --out full --quiet").rc, 0);
    const BlockedWriter w = run_blocked_in_output(dir, "c.toml", "out");
    ASSERT_GT(w.pid, 0) << "the run never reached its output (" << w.temp << ")";
    ASSERT_TRUE(kill_writer(w));
    fs::remove(w.temp);
    dir.write("L.csv", l2);
    const CliResult changed = run_cli(dir, "run --resume out --quiet");
    EXPECT_EQ(changed.rc, 2) << changed.err;
    EXPECT_TRUE(contains(changed.err, "L.csv has changed (")) << changed.err;
    EXPECT_FALSE(fs::exists(dir.file("out/summary.csv")));
    EXPECT_TRUE(fs::exists(dir.file("out/.progress/spec.json"))) << "a refused resume keeps the finished pieces";
    dir.write("L.csv", l1); // restored: the run continues to the uninterrupted bytes
    const CliResult r = run_cli(dir, "run --resume out --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(slurp(dir.file("out/final_regret.csv")), slurp(dir.file("full/final_regret.csv")));

    // Between two shards: refused naming the file.
    ASSERT_EQ(run_cli(dir, "run c.toml --shard 0/2 --out s0 --quiet").rc, 0);
    dir.write("L.csv", l2);
    ASSERT_EQ(run_cli(dir, "run c.toml --shard 1/2 --out s1 --quiet").rc, 0);
    const CliResult m = run_cli(dir, "merge s0 s1 --out m --quiet");
    EXPECT_EQ(m.rc, 2) << m.err;
    EXPECT_TRUE(contains(m.err, "L.csv has changed (")) << m.err;
    EXPECT_FALSE(fs::exists(dir.file("m/run.json")));
}

const char* kShardConfig = R"([run]
instances = 24
rounds = 40
checkpoints = 5
[adversary]
kind = "bernoulli"
d = 6
per_instance = [false, true]
[learner]
algorithm = "dp-ftrl-experts"
epsilon = 2
)";

// Damage that keeps every array's shape (a flipped bit, zeroed bytes, two equal-shaped shards' arrays swapped) and
// an edited instance range are refused by merge, naming the file; the same config spelled otherwise merges.
TEST(CliDurability, MergeRefusesDamagedSwappedOrRetiledShardsAndAcceptsAnySpelling) {
    TempDir dir;
    dir.write("c.toml", kShardConfig);
    ASSERT_EQ(run_cli(dir, "run c.toml --out full --quiet --set learner.epsilon=2").rc, 0);
    // Four shards of 6 instances each: equal shapes. Overrides spelled differently, resolving to the same TOML.
    const char* sets[] = {"--set learner.epsilon=2", "--set 'learner.epsilon = 2.0'", "--set learner.epsilon=2e0",
                          "--set learner.epsilon=2 --set run.checkpoints=5"};
    for (int i = 0; i < 4; ++i)
        ASSERT_EQ(run_cli(dir, "run c.toml --quiet --shard " + std::to_string(i) + "/4 --out s" + std::to_string(i) + " " +
                                   sets[i]).rc, 0);
    const CliResult ok = run_cli(dir, "merge s0 s1 s2 s3 --out m --quiet");
    ASSERT_EQ(ok.rc, 0) << ok.err;
    EXPECT_EQ(slurp(dir.file("m/final_regret.csv")), slurp(dir.file("full/final_regret.csv")));
    EXPECT_EQ(slurp(dir.file("m/summary.csv")), slurp(dir.file("full/summary.csv")));

    const auto copy = [&](const std::string& from, const std::string& to) {
        fs::remove_all(dir.file(to));
        fs::copy(dir.file(from), dir.file(to), fs::copy_options::recursive);
    };
    const auto refused = [&](const std::string& shards, const std::string& needle) {
        fs::remove_all(dir.file("bad"));
        const CliResult r = run_cli(dir, "merge " + shards + " --out bad --quiet");
        EXPECT_EQ(r.rc, 2) << shards << ": " << r.err;
        EXPECT_TRUE(contains(r.err, needle)) << shards << ": " << r.err;
        EXPECT_FALSE(fs::exists(dir.file("bad/run.json"))) << shards;
    };
    copy("s1", "flip");
    flip_bit(dir.file("flip/p0.regret.npy"), 128 + 8 * 4 + 1);
    refused("s0 flip s2 s3", "flip/p0.regret.npy: checksum crc32:");
    copy("s1", "zero");
    {
        std::fstream f(dir.file("zero/p1.realized.npy"), std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(128);
        const std::string zeros(16, '\0');
        f.write(zeros.data(), 16);
    }
    refused("s0 zero s2 s3", "zero/p1.realized.npy: checksum");
    // Shards 1 and 2 with their arrays swapped: every shape fits, the instances would be in the wrong order.
    copy("s1", "x1");
    copy("s2", "x2");
    for (const char* f : {"p0.regret.npy", "p0.realized.npy", "p0.diagnostics.npy", "p0.nonfinite.npy"}) {
        fs::rename(dir.file(std::string("x1/") + f), dir.file("tmp.npy"));
        fs::rename(dir.file(std::string("x2/") + f), dir.file(std::string("x1/") + f));
        fs::rename(dir.file("tmp.npy"), dir.file(std::string("x2/") + f));
    }
    refused("s0 x1 x2 s3", "x1/p0.regret.npy: checksum");
    // An edited instance range.
    copy("s2", "moved");
    {
        nlohmann::json j = nlohmann::json::parse(slurp(dir.file("moved/shard.json")));
        j["shard"]["first_instance"] = 11;
        std::ofstream(dir.file("moved/shard.json")) << j.dump(2);
    }
    refused("s0 s1 moved s3", "would not tile the run's instances exactly");
}

// A completed run removes .progress in one step: a kill during the removal (seen in CI: SIGKILL after run.json,
// while the store's files were deleted) must not leave a .progress without spec.json, which could neither be
// resumed nor reused. Watched with inotify: the first thing that happens to the store is that it leaves the output
// directory (a rename); only then are its files deleted. A leftover of a kill in between is removed by the next
// store created there.
TEST(CliDurability, TheProgressStoreLeavesTheOutputDirectoryInOneStep) {
    TempDir dir;
    const std::string out = dir.file("out");
    fs::create_directory(out);
    const io::Dir out_dir = io::Dir::open(out, "--out");
    const ProgressStore store = ProgressStore::create(out_dir, ProgressSpec{});
    const fs::path progress = fs::path(out) / ProgressStore::kDirName;
    for (int i = 0; i < 50; ++i) std::ofstream(progress / ("p0.b" + std::to_string(i) + ".npy")) << i;
    const int fd = ::inotify_init1(IN_NONBLOCK);
    ASSERT_GE(fd, 0);
    const int w_out = ::inotify_add_watch(fd, out.c_str(), IN_MOVED_FROM | IN_DELETE);
    const int w_store = ::inotify_add_watch(fd, progress.c_str(), IN_DELETE);
    ASSERT_GE(w_out, 0);
    ASSERT_GE(w_store, 0);
    store.remove();
    alignas(inotify_event) char buf[1 << 16];
    std::vector<std::string> events; // "out: MOVED .progress", "store: DELETE spec.json", ...
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
        for (char* p = buf; p < buf + n;) {
            const auto* e = reinterpret_cast<const inotify_event*>(p);
            const std::string where = e->wd == w_out ? "out" : e->wd == w_store ? "store" : "?";
            const std::string what = (e->mask & IN_MOVED_FROM) ? "MOVED" : (e->mask & IN_DELETE) ? "DELETE" : "OTHER";
            events.push_back(where + ": " + what + " " + (e->len ? e->name : ""));
            p += sizeof(inotify_event) + e->len;
        }
    ::close(fd);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.front(), std::string("out: MOVED ") + ProgressStore::kDirName)
        << "the store's files were deleted while it was still " << progress;
    EXPECT_FALSE(fs::exists(progress));
    EXPECT_FALSE(fs::exists(fs::path(out) / ProgressStore::kRemovedName));

    // A kill between the rename and the deletion leaves .progress.removed; the next store created there removes it.
    fs::create_directory(fs::path(out) / ProgressStore::kRemovedName);
    std::ofstream(fs::path(out) / ProgressStore::kRemovedName / "spec.json") << "{}";
    const ProgressStore again = ProgressStore::create(out_dir, ProgressSpec{});
    EXPECT_FALSE(fs::exists(fs::path(out) / ProgressStore::kRemovedName));
    EXPECT_TRUE(fs::exists(progress / "spec.json"));
}

// A failure while the outputs are written keeps every finished piece; once the cause is gone, --resume finishes
// with the uninterrupted bytes. Here the run is stopped while it writes summary.csv and its temporary file is
// removed under it, so that the rename fails. (A directory in summary.csv's place, used before, is now refused
// before anything is simulated: docs/OUTPUTS.md "Links and special files".)
TEST(CliDurability, AFailureWhileWritingTheOutputsKeepsTheFinishedPieces) {
    TempDir dir;
    dir.write("c.toml", blocking_config());
    ASSERT_EQ(run_cli(dir, "run c.toml --out full --quiet").rc, 0);
    const BlockedWriter w = run_blocked_in_output(dir, "c.toml", "out");
    ASSERT_GT(w.pid, 0) << "the run never reached its output (" << w.temp << ")";
    std::size_t pieces = 0;
    for (const auto& e : fs::directory_iterator(dir.file("out/.progress"))) {
        const std::string n = e.path().filename().string();
        pieces += n != "spec.json" && n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0;
    }
    ASSERT_GT(pieces, 0u);
    fs::remove(w.temp);
    ::kill(w.pid, SIGCONT);
    int status = 0;
    ::waitpid(w.pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    const std::string err = slurp(w.err);
    EXPECT_EQ(WEXITSTATUS(status), 1) << err;
    EXPECT_TRUE(contains(err, "summary.csv")) << err;
    EXPECT_TRUE(contains(err, "the " + std::to_string(pieces) + " finished piece(s) are kept in out/.progress")) << err;
    EXPECT_TRUE(contains(err, "dpregret run --resume out")) << err;
    EXPECT_FALSE(fs::exists(dir.file("out/run.json")));
    EXPECT_FALSE(fs::exists(dir.file("out/summary.csv")));
    EXPECT_FALSE(fs::exists(dir.file("out/.lock")));
    const CliResult r = run_cli(dir, "run --resume out --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(slurp(dir.file("out/final_regret.csv")), slurp(dir.file("full/final_regret.csv")));
    EXPECT_EQ(slurp(dir.file("out/summary.csv")), slurp(dir.file("full/summary.csv")));
}

TEST(CliDurability, AMergeThatWouldNotFitInMemoryPointsToBoundedMemory) {
    TempDir dir;
    dir.write("c.toml", kShardConfig);
    ASSERT_EQ(run_cli(dir, "run c.toml --out full --quiet").rc, 0);
    for (int i = 0; i < 2; ++i)
        ASSERT_EQ(run_cli(dir, "run c.toml --quiet --shard " + std::to_string(i) + "/2 --out s" + std::to_string(i)).rc, 0);
    const CliResult r = run_cli(dir, "merge s0 s1 --out m --quiet --memory-limit 2K");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "this merge needs about")) << r.err;
    EXPECT_TRUE(contains(r.err, "every instance's values of point")) << r.err;
    EXPECT_TRUE(contains(r.err, "dpregret merge --bounded-memory")) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("m")));
    const CliResult b = run_cli(dir, "merge s0 s1 --out m --quiet --memory-limit 2K --bounded-memory");
    ASSERT_EQ(b.rc, 0) << b.err;
    EXPECT_EQ(slurp(dir.file("m/final_regret.csv")), slurp(dir.file("full/final_regret.csv")));
}

// A run whose pieces and results cannot fit in the free space of its directory is refused before it simulates
// anything (here 64 points x 2^32 - 1 instances x 1024 checkpoints: petabytes), and leaves no directory behind.
TEST(CliDurability, ARunThatCannotFitOnTheDiskIsRefusedBeforeItStarts) {
    TempDir dir;
    dir.write("c.toml", "[run]\ninstances = 4294967295\nrounds = 2000\ncheckpoints = 1024\nseed = [" + seed_list(64) +
                            "]\n[adversary]\nkind = \"bernoulli\"\nd = 2\n[learner]\nalgorithm = \"hedge\"\n");
    const CliResult r = run_cli(dir, "run c.toml --out big/run --quiet --memory-limit none");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "of disk in big/run")) << r.err;
    EXPECT_TRUE(contains(r.err, "is free there")) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("big"))) << "the directories the refused run created are removed";
}

// Rank 0 of an MPI run writes no pieces but the result files of every rank. Its estimate was its own
// share's pieces and results (too high by the pieces, too low by the other ranks' results). Now: at least the
// result files the whole run writes (at most 3x them: the estimate takes 24 bytes per CSV number, Hedge's print
// in about 12), and exactly a one-process run's estimate less its pieces (8 x I x (2C + nd + 1) + 8C + 4096 bytes
// per point, docs/OUTPUTS.md).
TEST(CliDurability, MpiRankZerosDiskEstimateIsTheResultFilesOfEveryRank) {
    TempDir dir;
    const std::string toml = "[run]\ninstances = 4000\nrounds = 64\ncheckpoints = 16\nseed = [1, 2, 3]\n"
                             "[adversary]\nkind = \"bernoulli\"\nd = 4\n[learner]\nalgorithm = \"hedge\"\n";
    dir.write("c.toml", toml);
    const CliResult r = run_cli(dir, "run c.toml --out o --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    std::uint64_t written = 0;
    for (const auto& e : fs::directory_iterator(dir.file("o")))
        if (e.is_regular_file()) written += e.file_size();
    const config::Config cfg = config::parse_config(toml, "c.toml", {}, api::run_config_inputs());
    const std::vector<PointRecord> recs = api::resolve_points(cfg);
    const std::uint64_t share = 1000; // rank 0 of 4
    const std::uint64_t root = estimate_run_disk(cfg, recs, share, DiskRole::MpiRoot);
    EXPECT_GE(root, written);
    EXPECT_LE(root, 3 * written);
    std::uint64_t pieces = 0;
    for (const PointRecord& r : recs) pieces += 8 * 4000 * (2 * 16 + r.learner.diagnostic_names.size() + 1) + 8 * 16 + 4096;
    EXPECT_EQ(estimate_run_disk(cfg, recs, 0, DiskRole::Run), root + pieces);
}

} // namespace
} // namespace dpr::test
