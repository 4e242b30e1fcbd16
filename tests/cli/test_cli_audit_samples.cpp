// `dpregret audit-samples` (issue 50, item 2; docs/AUDITS.md "Audits of anyone's samples"): the auditor on two
// user-supplied samples of a statistic. What a wrong implementation would violate:
// - a Gaussian shift of 1 (N(1, 1) against N(0, 1), 1e6 values each) is mu-GDP with mu = 1 exactly: mu_lb must
//   come within 0.02 of 1 and not above it (consistent with the claim mu = 1), a claim of 0.9 must be a VIOLATION,
//   and eps_lb is the eps of mu_lb-GDP at delta, so at most that of mu = 1;
// - the same sample twice gives eps_lb = 0 exactly (no event separates a sample from itself);
// - on the statistic.npy that `dpregret audit --save-statistic` wrote, with the learner's claim, it reproduces that
//   audit's event, counts and bound exactly (both bounds);
// - samples on different subsets of a grid (a lattice leak) are a VIOLATION through a set event;
// - bad input exits 2 naming the file, flag or value position and writes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "host/audit/epsilon_bound.hpp"
#include "host/io/npy.hpp"
#include "noise/stat_tests.hpp"

namespace dpr::test {
namespace {

void save(const TempDir& dir, const std::string& name, const std::vector<double>& v) {
    io::write_npy(dir.file(name), {v.size()}, v.data());
}

nlohmann::json audit_json(const TempDir& dir, const std::string& out) {
    return nlohmann::json::parse(slurp(dir.file(out + "/audit.json")));
}

TEST(AuditSamples_Stat, AGaussianShiftOfOneIsOneGaussianDp) {
    TempDir dir;
    save(dir, "a.npy", normal_sample(1.0, 1000000, 1));
    save(dir, "b.npy", normal_sample(0.0, 1000000, 2));
    const CliResult r = run_cli(dir, "audit-samples a.npy b.npy --mu 1 --delta 1e-5 --out o --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json j = audit_json(dir, "o");
    EXPECT_EQ(j.at("verdict"), "consistent") << r.out;
    const double mu_lb = j.at("mu_lb").get<double>();
    EXPECT_GT(mu_lb, 0.98);
    EXPECT_LE(mu_lb, 1.0);
    EXPECT_EQ(j.at("bound").at("kind"), "gdp");
    EXPECT_NEAR(j.at("epsilon_lb").get<double>(), audit::gdp_epsilon(mu_lb, 1e-5), 1e-9);
    EXPECT_LE(j.at("epsilon_lb").get<double>(), audit::gdp_epsilon(1.0, 1e-5));
    EXPECT_EQ(j.at("event").at("n_numerator").get<std::uint64_t>() + 200000, 1000000u);
    // The claim too small by 10% is caught.
    const CliResult v = run_cli(dir, "audit-samples a.npy b.npy --mu 0.9 --out o2 --quiet");
    ASSERT_EQ(v.rc, 0) << v.err;
    EXPECT_EQ(audit_json(dir, "o2").at("verdict"), "VIOLATION") << v.out;
    EXPECT_EQ(v.out.rfind("VIOLATION: mu_lb = ", 0), 0u) << v.out;
}

TEST(AuditSamples, TheSameSampleTwiceGivesZero) {
    TempDir dir;
    save(dir, "a.npy", normal_sample(0.0, 20000, 3));
    const CliResult r = run_cli(dir, "audit-samples a.npy a.npy --epsilon 1 --out o --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json j = audit_json(dir, "o");
    EXPECT_EQ(j.at("epsilon_lb").get<double>(), 0.0);
    EXPECT_EQ(j.at("verdict"), "consistent");
    EXPECT_EQ(j.at("event").at("k_numerator"), j.at("event").at("k_denominator"));
    EXPECT_EQ(j.at("samples").at("a").at("values"), 20000);
    // privacy_region.csv: both sides' tail frequencies identical on every row.
    const std::string csv = slurp(dir.file("o/privacy_region.csv"));
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "threshold,base_ge,neighbour_ge,base_le,neighbour_le,f_base_ge,f_neighbour_ge,f_base_le,f_neighbour_le");
    int rows = 0;
    while (std::getline(in, line)) {
        double x, bge, nge, ble, nle;
        char c;
        std::istringstream ls(line);
        ls >> x >> c >> bge >> c >> nge >> c >> ble >> c >> nle;
        EXPECT_EQ(bge, nge) << line;
        EXPECT_EQ(ble, nle) << line;
        ++rows;
    }
    EXPECT_GT(rows, 100);
}

// The learner audit's statistic.npy, audited again as samples with the learner's claim: the same event, counts and
// bound, bit for bit (eps-delta on a Laplace learner, gdp on a Gaussian one).
TEST(AuditSamples, TheSavedStatisticOfAnAuditGivesThatAuditsNumbers) {
    TempDir dir;
    const std::string root = DPREGRET_SOURCE_DIR "/experiments/audits/";
    struct Case {
        std::string file, claim;
    };
    for (const Case& c : {Case{"dp_ftrl_experts_tight.toml", "eps"}, Case{"dp_ftpl_experts.toml", "gdp"}}) {
        SCOPED_TRACE(c.file);
        const CliResult a = run_cli(dir, "audit " + root + c.file + " --set run.instances=20000 --save-statistic --out a_" +
                                             c.claim + " --quiet");
        ASSERT_EQ(a.rc, 0) << a.err;
        const nlohmann::json ja = audit_json(dir, "a_" + c.claim);
        ASSERT_EQ(ja.at("bound").at("kind"), c.claim == "eps" ? "eps-delta" : "gdp");
        std::ostringstream claim;
        claim.precision(17);
        if (c.claim == "eps")
            claim << "--epsilon " << ja.at("claimed").at("epsilon").get<double>() << " --delta "
                  << ja.at("claimed").at("delta").get<double>();
        else
            claim << "--mu " << ja.at("claimed").at("gdp_mu").get<double>() << " --delta "
                  << ja.at("claimed").at("delta").get<double>();
        const CliResult s = run_cli(dir, "audit-samples a_" + c.claim + "/statistic.npy " + claim.str() + " --out s_" +
                                             c.claim + " --quiet");
        ASSERT_EQ(s.rc, 0) << s.err;
        const nlohmann::json js = audit_json(dir, "s_" + c.claim);
        EXPECT_EQ(js.at("verdict"), ja.at("verdict"));
        EXPECT_EQ(js.at("epsilon_lb"), ja.at("epsilon_lb"));
        if (c.claim == "gdp") EXPECT_EQ(js.at("mu_lb"), ja.at("mu_lb"));
        for (const char* k : {"kind", "describe", "threshold", "k_numerator", "n_numerator", "k_denominator",
                              "n_denominator", "selection_score"})
            EXPECT_EQ(js.at("event").at(k), ja.at("event").at(k)) << k;
        // The region's fractions are the same; so is the claimed curve where both know the same one (G_mu). With a
        // pure eps claim the learner audit knows its noise's own curve (two Laplace components, tradeoff.hpp), which
        // lies above the f_(eps, delta) that audit-samples is told: never below it, and above it somewhere.
        const auto rows = [&](const std::string& d) {
            std::istringstream in(slurp(dir.file(d + "/privacy_region.csv")));
            std::string line;
            std::getline(in, line);
            std::vector<std::vector<double>> r;
            while (std::getline(in, line)) {
                std::vector<double> v;
                std::istringstream ls(line);
                for (std::string cell; std::getline(ls, cell, ',');) v.push_back(std::stod(cell));
                r.push_back(v);
            }
            return r;
        };
        const auto rs = rows("s_" + c.claim), ra = rows("a_" + c.claim);
        ASSERT_EQ(rs.size(), ra.size());
        bool above_somewhere = false;
        for (std::size_t i = 0; i < rs.size(); ++i) {
            ASSERT_EQ(rs[i].size(), 9u);
            for (int k = 0; k < 5; ++k) EXPECT_EQ(rs[i][k], ra[i][k]) << "row " << i << " column " << k;
            for (int k = 5; k < 9; ++k) {
                if (c.claim == "gdp") EXPECT_EQ(rs[i][k], ra[i][k]) << "row " << i << " column " << k;
                else EXPECT_GE(ra[i][k], rs[i][k] - 1e-12) << "row " << i << " column " << k;
                above_somewhere |= ra[i][k] > rs[i][k] + 0.01;
            }
        }
        EXPECT_EQ(above_somewhere, c.claim == "eps");
        EXPECT_EQ(js.at("samples").at("a").at("source"), "a_" + c.claim + "/statistic.npy row 0");
    }
}

TEST(AuditSamples, ALatticeLeakIsAViolationThroughASetEvent) {
    // A on the even integers, B on the odd ones, the same spread: no threshold separates them, a set does.
    TempDir dir;
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<int> k(0, 500);
    std::vector<double> a(50000), b(50000);
    for (double& x : a) x = 2.0 * k(rng);
    for (double& x : b) x = 2.0 * k(rng) + 1.0;
    save(dir, "a.npy", a);
    save(dir, "b.npy", b);
    const CliResult r = run_cli(dir, "audit-samples a.npy b.npy --epsilon 1 --out o --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json j = audit_json(dir, "o");
    EXPECT_EQ(j.at("verdict"), "VIOLATION");
    EXPECT_EQ(j.at("event").at("kind"), "set");
    EXPECT_GT(j.at("epsilon_lb").get<double>(), 5.0);
}

TEST(AuditSamples, BadInputExitsTwoNamingItAndWritesNothing) {
    TempDir dir;
    save(dir, "a.npy", normal_sample(0.0, 100, 1));
    std::vector<double> nan_at_7 = normal_sample(0.0, 100, 2);
    nan_at_7[7] = std::nan("");
    save(dir, "nan.npy", nan_at_7);
    save(dir, "three.npy", {1.0, 2.0, 3.0});
    const std::vector<double> m(12, 1.0);
    io::write_npy(dir.file("m.npy"), {3, 4}, m.data());
    dir.write("text.npy", "not an array\n");
    std::vector<double> sorted = normal_sample(0.0, 100, 3);
    std::sort(sorted.begin(), sorted.end());
    save(dir, "sorted.npy", sorted);
    std::vector<double> ties(100, 0.0);  // a discrete statistic in trial order: few distinct values, not refused
    for (std::size_t i = 0; i < ties.size(); ++i) ties[i] = i >= 95 ? double(i - 94) : 0.0;
    struct Bad {
        std::string args, names;
    };
    for (const Bad& c : {Bad{"a.npy missing.npy --epsilon 1", "missing.npy"},
                         Bad{"a.npy nan.npy --epsilon 1", "sample B value 7 (0-based) is nan"},
                         Bad{"a.npy three.npy --epsilon 1", "sample B has 3 values"},
                         Bad{"a.npy m.npy --epsilon 1", "m.npy has shape (3, 4)"},
                         Bad{"m.npy --epsilon 1", "(2, n)"},
                         Bad{"a.npy text.npy --epsilon 1", "text.npy"},
                         Bad{"a.npy a.npy", "--epsilon"},
                         Bad{"a.npy a.npy --epsilon 0", "--epsilon must be > 0"},
                         Bad{"a.npy a.npy --epsilon 1 --delta 1", "--delta"},
                         Bad{"a.npy a.npy --mu 1 --delta 0", "--delta must be in (0, 1) with --mu"},
                         Bad{"a.npy a.npy --epsilon 1 --selection 1.5", "selection = 1.5"},
                         Bad{"a.npy a.npy --epsilon 1 --alpha 0", "alpha"},
                         Bad{"a.npy a.npy a.npy --epsilon 1", "files"},
                         Bad{"a.npy sorted.npy --epsilon 1", "sample B is sorted (its values ascend)"}}) {
        const CliResult r = run_cli(dir, "audit-samples " + c.args + " --out o");
        EXPECT_EQ(r.rc, 2) << c.args << ": " << r.err;
        EXPECT_NE(r.err.find(c.names), std::string::npos) << c.args << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("o"))) << c.args;
        EXPECT_FALSE(std::filesystem::exists(dir.file("runs"))) << c.args;
    }
    // Five distinct values ascending at the end are what a rare-valued statistic can do by chance: audited.
    save(dir, "ties.npy", ties);
    EXPECT_EQ(run_cli(dir, "audit-samples a.npy ties.npy --epsilon 1 --out t --quiet").rc, 0);
}

// The output directory is held as every command's is (host/io/dir.hpp): a link planted at .lock or at a result name
// is refused, exit 2, and the file it points at is untouched; a directory holding an audit is refused.
TEST(AuditSamples, ALinkPlantedInTheOutputDirectoryIsRefusedAndItsTargetUntouched) {
    TempDir dir;
    save(dir, "a.npy", normal_sample(0.0, 1000, 1));
    dir.write("victim.txt", "mine\n");
    for (const std::string name : {".lock", "audit.json", "privacy_region.csv"}) {
        std::filesystem::remove_all(dir.file("o"));
        std::filesystem::create_directory(dir.file("o"));
        std::filesystem::create_symlink(dir.file("victim.txt"), dir.file("o/" + name));
        const CliResult r = run_cli(dir, "audit-samples a.npy a.npy --epsilon 1 --out o --quiet");
        EXPECT_EQ(r.rc, 2) << name << ": " << r.err;
        EXPECT_NE(r.err.find("o/" + name + " is a symbolic link"), std::string::npos) << r.err;
        EXPECT_EQ(slurp(dir.file("victim.txt")), "mine\n") << name;
    }
    std::filesystem::remove_all(dir.file("o"));
    ASSERT_EQ(run_cli(dir, "audit-samples a.npy a.npy --epsilon 1 --out o --quiet").rc, 0);
    const CliResult again = run_cli(dir, "audit-samples a.npy a.npy --epsilon 1 --out o --quiet");
    EXPECT_EQ(again.rc, 2) << again.err;
    EXPECT_NE(again.err.find("already holds"), std::string::npos) << again.err;
}

// Memory is checked from the files' headers before their values are read: a sample that cannot fit is refused with
// exit 2 naming the parts, not ended by std::bad_alloc after a long read.
TEST(AuditSamples, SamplesThatCannotFitAreRefusedBeforeTheyAreRead) {
    TempDir dir;
    save(dir, "a.npy", normal_sample(0.0, 1000000, 1));
    const CliResult r = run_cli(dir, "audit-samples a.npy a.npy --epsilon 1 --memory-limit 4M --out o");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("this samples audit needs about"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the two samples: 1000000 + 1000000 values x 8 bytes"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("o")));
    EXPECT_EQ(run_cli(dir, "audit-samples a.npy a.npy --epsilon 1 --memory-limit none --out o --quiet").rc, 0);
}

} // namespace
} // namespace dpr::test
