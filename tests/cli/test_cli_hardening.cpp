// `dpregret run` at the limits the docs state (issue 12): every accepted value either runs or is
// refused with exit code 2 naming the key; nothing is truncated, nothing that looks complete is left
// behind after a failure.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/run_cli.hpp"
#include "host/cli/errors.hpp"
#include "host/cli/run_pipeline.hpp"
#include "host/io/npy.hpp"

using dpr::test::CliResult;
using dpr::test::run_cli;
using dpr::test::slurp;
using dpr::test::TempDir;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

/// A small valid run; `extra` lines are appended to [run].
std::string small_run(const std::string& run_extra, const std::string& adversary = "kind = \"bernoulli\"\nd = 2\n",
                      const std::string& learner = "algorithm = \"hedge\"\n") {
    return "[run]\nrounds = 2\n" + run_extra + "\n[adversary]\n" + adversary + "[learner]\n" + learner;
}

} // namespace

// Item 2: the documented maximum used to run 0 instances (a narrowing cast) and exit 0 with a NaN
// summary. Item 14: instance ids must never reach the shared-sequence id 0xFFFFFFFF.
TEST(CliRunLimits, TooManyInstancesAreRefusedNotTruncated) {
    TempDir dir;
    for (const std::string per_instance : {"false", "true"}) {
        dir.write("big.toml", small_run("instances = 4294967296",
                                        "kind = \"bernoulli\"\nd = 2\nper_instance = " + per_instance + "\n"));
        const CliResult r = run_cli(dir, "run big.toml --out out --quiet");
        EXPECT_EQ(r.rc, 2) << r.err;
        EXPECT_TRUE(contains(r.err, "[run] instances = 4294967296")) << r.err;
        EXPECT_TRUE(contains(r.err, "[1, 4294967295]")) << r.err;
        EXPECT_FALSE(fs::exists(dir.file("out/summary.csv")));
        EXPECT_FALSE(fs::exists(dir.file("out/run.json")));
    }
}

TEST(CliRunLimits, InstanceIdsNeverReachTheSharedSequenceId) {
    using dpr::cli::check_instance_ids;
    EXPECT_NO_THROW(check_instance_ids(0, 1));
    EXPECT_NO_THROW(check_instance_ids(0, 4294967295ull));        // ids 0 .. 0xFFFFFFFE
    EXPECT_NO_THROW(check_instance_ids(4294967294ull, 1));        // the last usable id
    EXPECT_THROW(check_instance_ids(0, 4294967296ull), dpr::cli::UsageError);
    EXPECT_THROW(check_instance_ids(1, 4294967295ull), dpr::cli::UsageError); // would use 0xFFFFFFFF
    EXPECT_THROW(check_instance_ids(4294967295ull, 1), dpr::cli::UsageError);
    EXPECT_THROW(check_instance_ids(0, 0), dpr::cli::UsageError);
    try {
        check_instance_ids(1, 4294967295ull);
    } catch (const dpr::cli::UsageError& e) {
        EXPECT_TRUE(contains(e.what(), "[run] instances")) << e.what();
        EXPECT_TRUE(contains(e.what(), "0xFFFFFFFF")) << e.what();
    }
}

// Item 10: messages that say what is wrong.
namespace {
const std::string kFileRun = "[run]\nrounds = 3\ninstances = 2\n[learner]\nalgorithm = \"hedge\"\n"
                             "[adversary]\nkind = \"file\"\npath = \"PATH\"\n";

std::string with_path(const std::string& path) {
    std::string s = kFileRun;
    return s.replace(s.find("PATH"), 4, path);
}
} // namespace

TEST(CliRunMessages, ALossJustAboveOneIsPrintedWithEnoughDigits) {
    TempDir dir;
    dir.write("l.csv", "1,0\n0,1.0000001\n1,0\n");
    dir.write("c.toml", with_path("l.csv"));
    const CliResult r = run_cli(dir, "run c.toml --out out --quiet");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(contains(r.err, "row 2, column 2: loss 1.0000001 is outside [0, 1]")) << r.err;
}

TEST(CliRunMessages, ADirectoryIsNotALossFileNorAConfig) {
    TempDir dir;
    fs::create_directory(dir.file("losses.csv"));
    dir.write("c.toml", with_path("losses.csv"));
    CliResult r = run_cli(dir, "run c.toml --out out --quiet");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(contains(r.err, "[adversary] path = \"losses.csv\"")) << r.err;
    EXPECT_TRUE(contains(r.err, "is a directory, not a file")) << r.err;
    EXPECT_FALSE(contains(r.err, "no such file")) << r.err;

    fs::create_directory(dir.file("exp.toml"));
    r = run_cli(dir, "run exp.toml --out out --quiet");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(contains(r.err, "cannot read config file exp.toml: it is a directory")) << r.err;
    EXPECT_FALSE(contains(r.err, "missing")) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("out")));
}

TEST(CliRunMessages, ANpyLossFileWithoutColumnsSaysSo) {
    TempDir dir;
    dpr::io::write_npy(dir.file("empty.npy"), {3, 0}, nullptr);
    dir.write("c.toml", with_path("empty.npy"));
    const CliResult r = run_cli(dir, "run c.toml --out out --quiet");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(contains(r.err, "has shape (3, 0): a loss file needs d >= 1 columns")) << r.err;
    EXPECT_FALSE(contains(r.err, "not loaded")) << r.err;
}

TEST(CliRunMessages, LossFilesWithUnderflowOrAByteOrderMarkRun) {
    TempDir dir;
    dir.write("l.csv", "\xEF\xBB\xBF" "1,1e-400\n0,1\n1,0\n");
    dir.write("c.toml", with_path("l.csv"));
    const CliResult r = run_cli(dir, "run c.toml --out out --quiet");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir.file("out/run.json")));
}

TEST(CliRunMessages, ABinaryLossFileIsRefusedAtOnce) {
    TempDir dir;
    {
        std::ofstream f(dir.file("zeros.csv"), std::ios::binary);
    }
    fs::resize_file(dir.file("zeros.csv"), std::uintmax_t{1} << 28); // 256 MiB of NUL bytes (sparse)
    dir.write("c.toml", with_path("zeros.csv"));
    const CliResult r = run_cli(dir, "run c.toml --out out --quiet");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(contains(r.err, "is not a text (CSV) file: byte 1 is NUL")) << r.err;
}
