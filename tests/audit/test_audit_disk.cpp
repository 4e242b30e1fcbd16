// The disk an audit needs (host/api/audit.hpp estimate_audit_disk), which `dpregret audit` and the Python package
// check before simulating: it must cover every byte write_audit_files writes (else a disk that is almost big enough
// still fails at the end, after the whole audit) and stay close to it (else an audit that fits is refused). Held
// against the files of completed audits, with and without the statistic, with long texts in audit.json.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "host/api/audit.hpp"

namespace dpr {
namespace {

using test::TempDir;
namespace fs = std::filesystem;

struct Written {
    api::AuditDiskEstimate estimate;
    std::uint64_t statistic = 0, region = 0, json = 0;
    std::uint64_t total() const { return statistic + region + json; }
};

std::uint64_t size_or_zero(const std::string& path) { return fs::exists(path) ? fs::file_size(path) : 0; }

/// Plans the audit of `config_name` in `dir`, estimates its disk, runs it and writes its files into dir/out.
Written audit_and_measure(const TempDir& dir, const std::string& config_name, bool keep_statistic,
                          const std::vector<std::string>& overrides = {}) {
    api::AuditSpec spec;
    spec.config_path = dir.file(config_name);
    spec.overrides = overrides;
    spec.backend = Backend::Cpu;
    spec.threads = 2;
    spec.keep_statistic = keep_statistic;
    api::AuditPlan plan = api::plan_audit(spec);
    Written w;
    w.estimate = api::estimate_audit_disk(plan, spec);
    const audit::AuditOutcome a = api::execute_audit(plan, spec);
    EXPECT_TRUE(a.completed);
    const std::string out = dir.file("out-" + std::to_string(keep_statistic) + "-" + std::to_string(overrides.size()));
    fs::create_directories(out);
    api::write_audit_files(io::Dir::open(out, "--out"), a,
                           api::audit_json(plan, a, spec, spec.config_path, "2024-01-01T00:00:00Z", 12345.678901234));
    w.statistic = size_or_zero(out + "/statistic.npy");
    w.region = size_or_zero(out + "/privacy_region.csv");
    w.json = size_or_zero(out + "/audit.json");
    return w;
}

const char* kPair = "[run]\ninstances = 20000\nrounds = 3\n[adversary]\nkind = \"bernoulli\"\nd = 2\n[learner]\n"
                    "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\n[audit]\nround = 1\n";

/// What the estimate may exceed the files by whatever the audit: the worst case of the region's 200 rows against
/// short numbers (about 13 KiB), the JSON skeleton's margin (about 2 KiB), the repeated settings and the rounding of
/// each of the three files to whole 4 KiB blocks (12 KiB).
constexpr std::uint64_t kSlack = 40 * 1024;

std::string sizes(const Written& w) {
    return "estimate " + std::to_string(w.estimate.statistic) + " + " + std::to_string(w.estimate.region) + " + " +
           std::to_string(w.estimate.json) + ", written " + std::to_string(w.statistic) + " + " +
           std::to_string(w.region) + " + " + std::to_string(w.json);
}

void expect_covers(const Written& w) {
    EXPECT_GE(w.estimate.statistic, w.statistic) << sizes(w);
    EXPECT_GE(w.estimate.region, w.region) << sizes(w);
    EXPECT_GE(w.estimate.json, w.json) << sizes(w);
    EXPECT_EQ(w.estimate.total(), w.estimate.statistic + w.estimate.region + w.estimate.json);
    EXPECT_GT(w.region, 0u);
    EXPECT_GT(w.json, 0u);
    EXPECT_LE(w.estimate.total(), w.total() + kSlack) << sizes(w);
}

TEST(AuditDiskEstimate, CoversTheStatisticAndIsWithinItsLastBlock) {
    TempDir dir;
    dir.write("a.toml", kPair);
    const Written w = audit_and_measure(dir, "a.toml", true, {"run.instances=100000"});
    expect_covers(w);
    EXPECT_EQ(w.statistic, 128u + 2u * 100000u * 8u) << "the 2 x trials float64 array and its header";
    EXPECT_LT(w.estimate.statistic, w.statistic + 4096) << "at most one block more than the file";
    // The statistic dominates: the whole estimate is within a few percent of what was written.
    EXPECT_LE(static_cast<double>(w.estimate.total()), 1.05 * static_cast<double>(w.total())) << sizes(w);
}

TEST(AuditDiskEstimate, WithoutTheStatisticItCountsNone) {
    TempDir dir;
    dir.write("a.toml", kPair);
    const Written w = audit_and_measure(dir, "a.toml", false);
    expect_covers(w);
    EXPECT_EQ(w.statistic, 0u);
    EXPECT_EQ(w.estimate.statistic, 0u);
}

// audit.json repeats the texts of the input: the config's path, its overrides, the resolved TOML and every
// setting. Long ones (a long file name, many overrides, quotes and backslashes that JSON escapes) must still be
// covered, and the estimate must grow with them rather than by a fixed margin that they exceed.
TEST(AuditDiskEstimate, CoversAnAuditJsonWithLongTexts) {
    TempDir dir;
    const std::string name = std::string(200, 'n') + "\"quoted\\back\".toml";
    dir.write(name, kPair);
    std::vector<std::string> overrides;
    for (int i = 0; i < 100; ++i) overrides.push_back("run.seed=" + std::to_string(1000000 + i));
    const Written w = audit_and_measure(dir, name, false, overrides);
    expect_covers(w);
    EXPECT_GT(w.json, 4096u) << "the texts alone exceed the skeleton's allowance";
}

} // namespace
} // namespace dpr
