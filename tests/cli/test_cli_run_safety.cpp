// `dpregret run` never loses or fakes results: no NaN or infinite statistic is
// written (the run fails naming the point, the instance and the round); a run that cannot fit in memory
// is refused before simulating; an unusable --out is found before simulating; the default --out is
// unique; a signal at any time before run.json is in place leaves no result, exits 128 + signal, and
// never removes a directory the user made; stale temporary files of killed runs are cleaned up; run.json
// stays proportional to what a person reads.
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/run_cli.hpp"
#include "host/cli/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/engine/checkpoints.hpp"
#include "host/results/memory_estimate.hpp"
#include "host/results/outputs.hpp"
#include "host/io/csv.hpp"

using dpr::test::BlockedWriter;
using dpr::test::CliResult;
using dpr::test::run_blocked_in_output;
using dpr::test::run_cli;
using dpr::test::slurp;
using dpr::test::TempDir;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

const char* kSmall = "[run]\ninstances = 4\nrounds = 20\n[adversary]\nkind = \"bernoulli\"\nd = 3\n"
                     "[learner]\nalgorithm = \"hedge\"\n";

/// A run of a few seconds on 2 cores, to be interrupted.
const char* kLong = "[run]\nrounds = 2000000\ninstances = 2000\n[adversary]\nkind = \"bernoulli\"\nd = 64\n"
                    "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\n";

bool no_result_files(const TempDir& dir, const std::string& out) {
    for (const char* f : {"summary.csv", "final_regret.csv", "points.jsonl", "run.json"})
        if (fs::exists(dir.file(out + "/" + f))) return false;
    return true;
}

/// Every numeric field of every data line of summary.csv that must be finite is finite (q50_ci_* may
/// be NaN by definition; std and sem for one instance).
void expect_finite_summary(const std::string& csv) {
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::istringstream fields(line);
        for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
        ASSERT_GE(f.size(), 21u) << line;
        for (std::size_t c : {8u, 11u, 12u, 13u, 14u, 15u, 18u, 20u}) // mean, q05..q95, realized_mean, comparator
            EXPECT_TRUE(std::isfinite(std::stod(f[c]))) << "column " << c << ": " << line;
        if (std::stoul(f[7]) >= 2)
            for (std::size_t c : {9u, 10u, 19u}) EXPECT_TRUE(std::isfinite(std::stod(f[c]))) << "column " << c << ": " << line;
    }
}

} // namespace

// ---- item 3: no silent NaN -----------------------------------------------------------------------------

namespace {

/// A PointRecord as run_point() returns it: 3 instances, checkpoints 1, 2, 4, finite values.
struct FakeRun {
    dpr::config::Config cfg;
    dpr::PointRecord rec;
    FakeRun(std::uint32_t instances = 3) {
        dpr::config::Point p;
        p.index = 7;
        p.learner = "hedge";
        p.adversary = "bernoulli";
        p.problem = dpr::Problem{3, 4, 1};
        p.swept = {{"learner.eta", "inf"}, {"adversary.p", ""}};
        cfg.points.push_back(p);
        rec.point = &cfg.points[0];
        rec.learner.name = "hedge";
        rec.learner.diagnostic_names = {"min_p"};
        rec.adversary.name = "bernoulli";
        dpr::PointResult& o = rec.result;
        o.checkpoints = {1, 2, 4};
        o.instances = instances;
        for (std::uint32_t k = 0; k < instances; ++k) {
            for (int c = 0; c < 3; ++c) {
                o.regret.push_back(0.5 * (c + 1) + k);
                o.realized_regret.push_back(0.25 * (c + 1) + k);
            }
            o.diagnostics.push_back(0.1 * k);
            o.first_nonfinite_round.push_back(0);
        }
        o.comparator = {-1, -2, -3};
    }
    std::string error() {
        try {
            dpr::finish_point(rec);
        } catch (const dpr::NonFiniteResult& e) {
            return e.what();
        }
        return "";
    }
};

} // namespace

TEST(RunNonFinite, FinishPointNamesThePointTheFirstBadInstanceAndItsRound) {
    {
        FakeRun ok;
        EXPECT_EQ(ok.error(), "");
        ASSERT_EQ(ok.rec.result.summary.size(), 3u);
        EXPECT_DOUBLE_EQ(ok.rec.result.summary[2].regret.mean, 1.5 + 1.0);
        EXPECT_EQ(ok.rec.result.summary[2].t, 4u);
        EXPECT_EQ(ok.rec.final_regret, (std::vector<double>{1.5, 2.5, 3.5}));
        EXPECT_EQ(ok.rec.final_realized, (std::vector<double>{0.75, 1.75, 2.75}));
        EXPECT_TRUE(ok.rec.result.regret.empty()); // released
        EXPECT_EQ(ok.rec.result.diagnostics.size(), 3u);
    }
    {
        FakeRun r;
        r.rec.result.first_nonfinite_round[1] = 17;
        r.rec.result.first_nonfinite_round[2] = 3;
        r.rec.result.regret[1 * 3 + 2] = std::nan("");
        const std::string e = r.error();
        EXPECT_TRUE(contains(e, "point 7 (learner.eta = inf), [learner] algorithm = \"hedge\"")) << e;
        EXPECT_TRUE(contains(e, "instance 1: the loss charged in round 17 is not finite")) << e;
        EXPECT_TRUE(contains(e, "No results were written")) << e;
    }
    {
        FakeRun r; // no charged loss was non-finite, but a regret is: name the checkpoint
        r.rec.result.realized_regret[2 * 3 + 1] = -INFINITY;
        const std::string e = r.error();
        EXPECT_TRUE(contains(e, "instance 2: the realized regret at checkpoint t = 2 is -inf")) << e;
    }
    {
        FakeRun r;
        r.rec.result.diagnostics[0] = std::nan("");
        const std::string e = r.error();
        EXPECT_TRUE(contains(e, "instance 0: the diagnostic min_p is nan")) << e;
    }
    {
        FakeRun r;
        r.rec.result.comparator[1] = INFINITY;
        const std::string e = r.error();
        EXPECT_TRUE(contains(e, "the comparator (the best fixed decision's loss) at checkpoint t = 2 is inf")) << e;
    }
    {
        FakeRun r; // finite values whose summary overflows (+-1.7e308: Welford's x - mean does)
        for (std::size_t i = 0; i < r.rec.result.regret.size(); ++i)
            r.rec.result.regret[i] = i % 2 ? -1.7e308 : 1.7e308;
        const std::string e = r.error();
        EXPECT_TRUE(contains(e, "the mean regret over instances at checkpoint t = 1 is ")) << e;
        EXPECT_TRUE(contains(e, "too large to summarise")) << e;
    }
    {
        FakeRun one(1); // one instance: std and sem are NaN by definition, which is not an error
        EXPECT_EQ(one.error(), "");
        EXPECT_TRUE(std::isnan(one.rec.result.summary[0].regret.stddev));
    }
}

// hedge with eta = inf gave all-NaN regret with exit 0. Whether the learner defines that limit (a
// finite result) or not (the run fails), no NaN may be written.
TEST(RunNonFinite, NoNaNIsEverWrittenWithExitZero) {
    TempDir dir;
    dir.write("c.toml", "[run]\ninstances = 3\nrounds = 6\n[adversary]\nkind = \"bernoulli\"\nd = 3\n"
                        "[learner]\nalgorithm = \"hedge\"\neta = [1, \"inf\"]\n");
    const CliResult r = run_cli(dir, "run c.toml --out out --quiet");
    if (r.rc == 0) {
        expect_finite_summary(slurp(dir.file("out/summary.csv")));
        const std::string fin = slurp(dir.file("out/final_regret.csv"));
        EXPECT_FALSE(contains(fin, "nan") || contains(fin, "inf")) << fin;
        return;
    }
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "point 1 (learner.eta = inf)")) << r.err;
    EXPECT_TRUE(contains(r.err, "instance 0: the loss charged in round 1 is not finite")) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("out"))); // nothing that looks complete, not even the directory
}

// ---- item 4: memory before simulating ------------------------------------------------------------------

TEST(RunMemory, ARunThatCannotFitIsRefusedBeforeSimulatingWithTheEstimate) {
    TempDir dir;
    // scrible-cube at d = 858993460 (inside the documented range) crashed; 1000 instances of it need
    // ~32 TiB of learner state, which no machine has.
    dir.write("big.toml", "[run]\ninstances = 1000\nrounds = 2\n[adversary]\nkind = \"cube-coordinate\"\n"
                          "d = 858993460\n[learner]\nalgorithm = \"scrible-cube\"\n");
    const CliResult r = run_cli(dir, "run big.toml --out out --quiet");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "this run needs about")) << r.err;
    EXPECT_TRUE(contains(r.err, "TiB of memory")) << r.err;
    EXPECT_TRUE(contains(r.err, "learner state of point 0")) << r.err;
    EXPECT_TRUE(contains(r.err, "[adversary] d = 858993460")) << r.err;
    EXPECT_TRUE(contains(r.err, "[run] instances = 1000")) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("out")));
}

TEST(RunMemory, TheLimitCanBeSetAndLiftedAndBadLimitsAreUsageErrors) {
    TempDir dir;
    dir.write("c.toml", kSmall);
    CliResult r = run_cli(dir, "run c.toml --out a --quiet --memory-limit 1K");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "is available (--memory-limit 1K)")) << r.err;
    EXPECT_TRUE(contains(r.err, "--memory-limit none runs it anyway")) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("a")));
    r = run_cli(dir, "run c.toml --out b --quiet --memory-limit none");
    EXPECT_EQ(r.rc, 0) << r.err;
    r = run_cli(dir, "run c.toml --out c --quiet --memory-limit 2G");
    EXPECT_EQ(r.rc, 0) << r.err;
    for (const char* bad : {"lots", "-1", "0", "1X", "1e30"}) {
        r = run_cli(dir, std::string("run c.toml --out d --quiet --memory-limit ") + bad);
        EXPECT_EQ(r.rc, 2) << bad;
        EXPECT_TRUE(contains(r.err, "--memory-limit must be auto, none or a size")) << r.err;
    }
}

TEST(RunMemory, EstimatesSaturateInsteadOfWrapping) {
    using dpr::sat_add;
    using dpr::sat_mul;
    constexpr std::uint64_t kMax = ~std::uint64_t{0};
    EXPECT_EQ(sat_mul(std::uint64_t{1} << 32, std::uint64_t{1} << 32), kMax);
    EXPECT_EQ(sat_mul(4294967295ull, 8ull << 31), kMax);
    EXPECT_EQ(sat_mul(3, 5), 15u);
    EXPECT_EQ(sat_add(kMax - 1, 2), kMax);
    EXPECT_EQ(dpr::human_bytes(kMax), "more than 16 EiB");
    EXPECT_EQ(dpr::human_bytes(1536), "1.5 KiB");
    const dpr::api::MemoryLimit m = dpr::api::parse_memory_limit("1.5G");
    EXPECT_EQ(m.bytes, 1610612736u);
}

// The Python package keeps every point's per-instance arrays after it ran (Result.regret(p)), the CLI releases them:
// the package's estimate counts them, at least I x ((2 + per_instance) x C + 1) doubles more per point (regret and
// realised regret at each of its C checkpoints, the comparator when per instance, the first non-finite round).
TEST(RunMemory, KeepingEveryInstancesArraysIsCounted) {
    using namespace dpr;
    const std::string toml = "[run]\ninstances = 1000\nrounds = 100\ncheckpoints = 5\n[adversary]\n"
                             "kind = \"bernoulli\"\nd = 4\nper_instance = [false, true]\n[learner]\n"
                             "algorithm = \"hedge\"\n";
    const config::Config cfg = config::parse_config(toml, "c.toml", {}, api::run_config_inputs());
    const std::vector<PointRecord> recs = api::resolve_points(cfg);
    ASSERT_EQ(recs.size(), 2u);
    const auto kept = [&](bool keep) {
        const MemoryEstimate e = estimate_run_memory(cfg, recs, 1, PointJob{}.chunk_bytes, false, 0, keep);
        for (const MemoryTerm& t : e.terms)
            if (t.what.rfind("results kept", 0) == 0) return t.bytes;
        ADD_FAILURE() << "no term for the results kept";
        return std::uint64_t{0};
    };
    std::uint64_t arrays = 0;
    for (const config::Point& p : cfg.points)
        arrays += 1000 * ((2 + p.per_instance) * log_checkpoints(p.problem.T, 5).size() + 1) * sizeof(double);
    const std::uint64_t without = kept(false), with = kept(true);
    EXPECT_GE(with - without, arrays) << "kept " << without << " -> " << with;
    EXPECT_LE(with - without, 2 * arrays) << "kept " << without << " -> " << with;
}

// A full file system has 0 bytes free, which is not "unknown": the disk checks of `run` and `sample` used to take
// 0 for "could not read" and let a run start on a full disk (to fail at its end). Unknown free space (statvfs
// fails) is still assumed to fit: every write checks its errors.
TEST(RunDisk, AFullFileSystemFitsNothingAndUnknownFreeSpaceIsNotZero) {
    EXPECT_FALSE(dpr::fits_on_disk(1, std::uint64_t{0}));
    EXPECT_TRUE(dpr::fits_on_disk(0, std::uint64_t{0}));
    EXPECT_FALSE(dpr::fits_on_disk(4097, std::uint64_t{4096}));
    EXPECT_TRUE(dpr::fits_on_disk(4096, std::uint64_t{4096}));
    EXPECT_TRUE(dpr::fits_on_disk(~std::uint64_t{0}, std::nullopt));
    EXPECT_EQ(dpr::available_disk_bytes("/no/such/directory/here"), std::nullopt);
    const std::optional<std::uint64_t> here = dpr::available_disk_bytes(".");
    ASSERT_TRUE(here.has_value()) << "statvfs of the working directory";
}

/// Peak RSS in bytes of `dpregret run CONFIG --out OUT --quiet --threads 1` in `dir` (measured in a child process of
/// its own, so that no other child's peak counts), -1 if the run failed.
static long peak_rss_of_run(const TempDir& dir, const std::string& config, const std::string& out) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        const std::string cmd = "cd '" + dir.path().string() + "' && '" + dpr::test::binary() + "' run " + config +
                                " --out " + out + " --quiet --threads 1";
        const int rc = std::system(cmd.c_str());
        rusage ru{};
        ::getrusage(RUSAGE_CHILDREN, &ru);
        std::ofstream(dir.file(out + ".rss")) << (rc == 0 ? ru.ru_maxrss : -1);
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    const long kib = std::stol(slurp(dir.file(out + ".rss")));
    return kib < 0 ? -1 : kib * 1024L;
}

// The estimate bounds the memory a run really takes (so that a refusal is never needed after the
// fact): peak RSS of a 20000-instance run minus that of a 1-instance run, against run.json's estimate.
TEST(RunMemory, TheEstimateIsAnUpperBoundOfWhatTheRunTakes) {
    TempDir dir;
    const auto peak = [&](const std::string& name, int instances) {
        dir.write(name + ".toml", "[run]\ninstances = " + std::to_string(instances) +
                                      "\nrounds = 10\ncheckpoints = 10\n[adversary]\nkind = \"bernoulli\"\nd = 128\n"
                                      "[learner]\nalgorithm = \"hedge\"\n");
        return peak_rss_of_run(dir, name + ".toml", name);
    };
    const long base = peak("one", 1);
    const long big = peak("many", 20000);
    ASSERT_GT(base, 0);
    ASSERT_GT(big, 0);
    const auto j = nlohmann::json::parse(slurp(dir.file("many/run.json")));
    const double estimate = j["memory_estimate_bytes"].get<double>();
    EXPECT_GE(estimate, static_cast<double>(big - base)) << "RSS grew by " << big - base;
    EXPECT_LE(estimate, 4.0 * static_cast<double>(big - base) + (16 << 20)) << "the estimate is not even close";
}

// A sweep of many small points: the estimate is of the process's peak (what it holds already -- the config and the
// resolved points, several KiB each -- plus what it will allocate), within 1.5x either way. It was 2x low at 1e4
// points and 5-6x low at 1e5 when the points already held were left out.
TEST(RunMemory, ASweepsEstimateIsWithinOneAndAHalfOfItsPeak) {
    TempDir dir;
    std::string seeds;
    for (int s = 1; s <= 10000; ++s) seeds += (s > 1 ? "," : "") + std::to_string(s);
    dir.write("c.toml", "[run]\ninstances = 2\nrounds = 10\nseed = [" + seeds +
                            "]\n[adversary]\nkind = \"bernoulli\"\nd = 2\n[learner]\nalgorithm = \"hedge\"\n");
    const double peak = static_cast<double>(peak_rss_of_run(dir, "c.toml", "out"));
    ASSERT_GT(peak, 0);
    const double estimate = nlohmann::json::parse(slurp(dir.file("out/run.json")))["memory_estimate_bytes"].get<double>();
    EXPECT_LE(estimate, 1.5 * peak) << "estimate " << estimate << ", peak " << peak;
    EXPECT_GE(estimate, peak / 1.5) << "estimate " << estimate << ", peak " << peak;
}

// A run that dies of std::bad_alloc (the check lifted) says so and leaves no directory behind.
TEST(RunMemory, OutOfMemoryWhileRunningLeavesNoDirectory) {
    TempDir dir;
    dir.write("c.toml", "[run]\ninstances = 2000000\nrounds = 2\ncheckpoints = 2\n[adversary]\nkind = \"bernoulli\"\n"
                        "d = 64\n[learner]\nalgorithm = \"hedge\"\n");
    const CliResult r = run_cli(dir, "run c.toml --out out --quiet --threads 1 --backend cpu --memory-limit none", "ulimit -v 600000;");
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "out of memory while running")) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("out")));
}

// ---- item 5: an unusable --out is found before simulating; any path is written safely ------------------

TEST(RunOutput, AnUnwritableOutIsAUsageErrorBeforeSimulating) {
    TempDir dir;
    dir.write("long.toml", kLong);
    std::string out;
    if (::geteuid() != 0) {
        fs::create_directory(dir.file("ro"));
        fs::permissions(dir.file("ro"), fs::perms::owner_read | fs::perms::owner_exec);
        out = dir.file("ro");
    } else {
        out = "/sys/kernel"; // no new files there, for root too (sysfs)
        const std::string probe = out + "/dpregret-test-probe";
        const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            ::close(fd);
            ::unlink(probe.c_str());
            GTEST_SKIP() << "no unwritable directory here";
        }
        if (!fs::is_directory(out)) GTEST_SKIP() << "no /sys/kernel here";
    }
    const CliResult r = run_cli(dir, "run long.toml --quiet --out " + out);
    EXPECT_EQ(r.rc, 2) << r.err; // the simulation (minutes) never starts; main's writer failed after it (exit 1)
    EXPECT_TRUE(contains(r.err, "--out " + out + ": cannot create files in the directory")) << r.err;
    if (::geteuid() != 0) fs::permissions(dir.file("ro"), fs::perms::owner_all);
}

TEST(RunOutput, AConfigPathThatIsNotUtf8IsWrittenEscaped) {
    TempDir dir;
    const std::string name = "exp\xff\xfe.toml";
    dir.write(name, kSmall);
    const CliResult r = run_cli(dir, "run '" + name + "' --out out --quiet --set run.seed=2");
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(dir.file("out/run.json"))); // valid JSON (UTF-8)
    EXPECT_EQ(j["config"]["path"], "exp\\xFF\\xFE.toml");
    EXPECT_EQ(dpr::utf8_or_escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    EXPECT_EQ(dpr::utf8_or_escaped("a\xc3(b\xed\xa0\x80"), "a\\xC3(b\\xED\\xA0\\x80"); // truncated; a surrogate
}

// ---- item 6: the default --out is unique ---------------------------------------------------------------

namespace {
std::string utc_stamp(std::time_t t) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    return buf;
}
} // namespace

TEST(RunOutput, TheDefaultOutNeverReusesAnotherRunsDirectory) {
    TempDir dir;
    dir.write("c.toml", kSmall);
    // Earlier runs (complete, or still running: no run.json yet) hold the directories of this second
    // and the next ones; the new run gets a directory of its own.
    const std::time_t now = std::time(nullptr);
    std::set<std::string> before;
    for (int s = -1; s < 6; ++s) {
        const std::string d = "runs/" + utc_stamp(now + s);
        fs::create_directories(dir.file(d));
        if (s % 2 == 0) dir.write(d + "/run.json", "{}");
        before.insert(d);
    }
    const CliResult r = run_cli(dir, "run c.toml --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    std::vector<std::string> made;
    for (const auto& e : fs::directory_iterator(dir.file("runs")))
        if (!before.count("runs/" + e.path().filename().string())) made.push_back(e.path().filename().string());
    ASSERT_EQ(made.size(), 1u);
    EXPECT_TRUE(fs::exists(dir.file("runs/" + made[0] + "/run.json")));
    EXPECT_NE(made[0].find('-', 9), std::string::npos) << made[0]; // <stamp>-N
    for (const std::string& d : before) // nobody else's directory was touched
        EXPECT_EQ(fs::exists(dir.file(d + "/summary.csv")), false) << d;
}

TEST(RunOutput, RunsStartedTogetherGetOneDirectoryEach) {
    TempDir dir;
    dir.write("c.toml", kSmall);
    const std::string run = "'" + dpr::test::binary() + "' run c.toml --quiet";
    const std::string cmd = "cd '" + dir.path().string() + "' && { " + run + " & " + run + " & " + run + " & " + run +
                            " & wait; } 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::size_t complete = 0, dirs = 0;
    for (const auto& e : fs::directory_iterator(dir.file("runs"))) {
        ++dirs;
        complete += fs::exists(e.path() / "run.json");
    }
    EXPECT_EQ(dirs, 4u);
    EXPECT_EQ(complete, 4u);
}

// ---- item 7: signals -----------------------------------------------------------------------------------

/// The names in directory `path`.
std::vector<std::string> entries(const std::string& path) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    return out;
}

// SIGTERM (a scheduler's pre-emption) and SIGINT stop a run with no result file; what it finished stays in
// .progress for `dpregret run --resume` (docs/OUTPUTS.md "Resume"), and nothing else is left.
TEST(RunSignals, SigtermExits143AndSigintKeepsADirectoryTheUserMade) {
    TempDir dir;
    dir.write("long.toml", kLong);
    CliResult r = run_cli(dir, "run long.toml --out a", "timeout --foreground --preserve-status -k 30 -s TERM 2");
    EXPECT_EQ(r.rc, 143) << r.err;
    EXPECT_TRUE(contains(r.err, "interrupted")) << r.err;
    EXPECT_TRUE(contains(r.err, "dpregret run --resume a")) << r.err;
    EXPECT_TRUE(no_result_files(dir, "a"));
    EXPECT_EQ(entries(dir.file("a")), std::vector<std::string>{".progress"});
    fs::create_directory(dir.file("mine"));
    r = run_cli(dir, "run long.toml --out mine", "timeout --foreground --preserve-status -k 30 -s INT 2");
    EXPECT_EQ(r.rc, 130) << r.err;
    EXPECT_TRUE(fs::is_directory(dir.file("mine"))); // the user's: kept
    EXPECT_EQ(entries(dir.file("mine")), std::vector<std::string>{".progress"});
}

TEST(RunSignals, StaleTemporaryFilesOfKilledRunsAreRemovedAndLiveOnesKept) {
    TempDir dir;
    dir.write("c.toml", kSmall);
    fs::create_directory(dir.file("out"));
    const std::string live = "summary.csv.tmp." + std::to_string(::getpid()); // this process: alive
    for (const std::string& f : {std::string("summary.csv.tmp.2147483000"), std::string("run.json.tmp.2147483001"),
                                 live, std::string("notes.txt"), std::string("run.json.tmp.x")})
        dir.write("out/" + f, "partial");
    const CliResult r = run_cli(dir, "run c.toml --out out --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "removed summary.csv.tmp.2147483000")) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("out/summary.csv.tmp.2147483000")));
    EXPECT_FALSE(fs::exists(dir.file("out/run.json.tmp.2147483001")));
    EXPECT_TRUE(fs::exists(dir.file("out/" + live)));
    EXPECT_TRUE(fs::exists(dir.file("out/notes.txt")));
    EXPECT_TRUE(fs::exists(dir.file("out/run.json.tmp.x")));
    EXPECT_TRUE(fs::exists(dir.file("out/run.json")));
}

// A signal that arrives while the results are being written (here: the run is stopped while it writes summary.csv,
// sent SIGTERM and then let go on) stops the run: exit 143, no result file. It used to print "stopping", finish
// writing and exit 0.
TEST(RunSignals, ASignalDuringOutputWritingLeavesNoResults) {
    TempDir dir;
    // 600 points x 16 checkpoints: a summary.csv of ~1.9 MB, far more than a pipe holds.
    std::string seeds;
    for (int s = 0; s < 600; ++s) seeds += (s ? "," : "") + std::to_string(s);
    dir.write("c.toml", "[run]\ninstances = 2\nrounds = 1000\ncheckpoints = 16\nseed = [" + seeds +
                            "]\n[adversary]\nkind = \"bernoulli\"\nd = 2\n[learner]\nalgorithm = \"hedge\"\n");
    const std::string out = dir.file("out");
    const BlockedWriter w = run_blocked_in_output(dir, "c.toml", "out");
    ASSERT_GT(w.pid, 0) << "the run never reached its output (" << w.temp << ")";
    const pid_t pid = w.pid;
    ::kill(pid, SIGTERM); // pending while it is stopped
    ::kill(pid, SIGCONT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 143);
    EXPECT_TRUE(no_result_files(dir, "out"));
    // No temporary file left behind; the finished work stays for --resume.
    EXPECT_EQ(entries(out), std::vector<std::string>{".progress"});
}

// ---- run.json proportional to what a person reads -----------------------------------------------------

TEST(RunOutput, LargeSweepsPutTheirPerPointDetailInPointsJsonl) {
    TempDir dir;
    const auto sweep = [&](int n) {
        std::string etas;
        for (int i = 0; i < n; ++i) etas += (i ? "," : "") + std::to_string(1 + i);
        return "[run]\ninstances = 1\nrounds = 1\n[adversary]\nkind = \"bernoulli\"\nd = 2\n[learner]\n"
               "algorithm = \"hedge\"\neta = [" + etas + "]\n";
    };
    dir.write("small.toml", sweep(1000));
    dir.write("large.toml", sweep(1001));
    ASSERT_EQ(run_cli(dir, "run small.toml --out small --quiet").rc, 0);
    ASSERT_EQ(run_cli(dir, "run large.toml --out large --quiet").rc, 0);
    const auto s = nlohmann::json::parse(slurp(dir.file("small/run.json")));
    EXPECT_EQ(s["points"].size(), 1000u);
    EXPECT_EQ(s["point_count"], 1000);
    EXPECT_FALSE(fs::exists(dir.file("small/points.jsonl")));
    const std::string large = slurp(dir.file("large/run.json"));
    EXPECT_LT(large.size(), 32u * 1024u);
    const auto l = nlohmann::json::parse(large);
    EXPECT_FALSE(l.contains("points"));
    EXPECT_EQ(l["point_count"], 1001);
    EXPECT_EQ(l["points_file"], "points.jsonl");
    std::istringstream lines(slurp(dir.file("large/points.jsonl")));
    std::size_t n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
        const auto p = nlohmann::json::parse(line);
        EXPECT_EQ(p["point"], n);
        EXPECT_EQ(p["swept"]["learner.eta"], std::to_string(1 + n));
    }
    EXPECT_EQ(n, 1001u);
}
