// `dpregret run` at the limits the docs state (issue 12): every accepted value either runs or is
// refused with exit code 2 naming the key; nothing is truncated, nothing that looks complete is left
// behind after a failure.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/run_cli.hpp"
#include "host/cli/errors.hpp"
#include "host/cli/run_pipeline.hpp"

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
