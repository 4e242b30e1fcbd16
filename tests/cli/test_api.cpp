// The library API (host/api/run.hpp): in-process, its numbers are the CLI's files' numbers, and a
// slice of the instances is exactly those rows of the whole run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "cli/run_cli.hpp"
#include "host/api/pipeline.hpp"
#include "host/api/run.hpp"
#include "host/api/sample.hpp"
#include "host/cli/errors.hpp"
#include "host/io/csv.hpp"
#include "host/results/outputs.hpp"

namespace dpr::test {
namespace {

const char* kConfig = R"([run]
instances = 30
rounds = 80
checkpoints = 5
[adversary]
kind = "bernoulli"
d = 5
per_instance = [false, true]
[learner]
algorithm = ["dp-ftrl-experts", "dp-mab"]
epsilon = 2
)";

TEST(Api, TheResultIsTheCliRunsNumbersAndSlicesAreItsRows) {
    TempDir dir;
    dir.write("c.toml", kConfig);
    ASSERT_EQ(run_cli(dir, "run c.toml --out cli --quiet").rc, 0);
    api::RunSpec spec;
    spec.config_path = dir.file("c.toml");
    spec.threads = 2;
    const api::RunResult all = api::run(spec);
    ASSERT_TRUE(all.completed);
    ASSERT_EQ(all.points.size(), 4u);
    // final_regret.csv: point,instance,regret,realized_regret,... in the CLI's own number format.
    std::ostringstream rebuilt;
    for (std::size_t p = 0; p < all.points.size(); ++p) {
        const api::PointResult& r = all.points[p];
        const std::size_t nck = r.checkpoints.size();
        ASSERT_EQ(r.regret.size(), r.instances * nck);
        for (std::uint64_t k = 0; k < r.instances; ++k)
            rebuilt << p << "," << k << "," << io::format_double(r.regret[k * nck + nck - 1]) << ","
                    << io::format_double(r.realized_regret[k * nck + nck - 1]) << "\n";
        EXPECT_EQ(r.summary.back().t, r.point.problem.T);
        EXPECT_TRUE(std::isfinite(r.privacy.epsilon));
    }
    std::string csv = slurp(dir.file("cli/final_regret.csv"));
    std::string kept; // the first four columns of every data line
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
        std::size_t at = 0;
        for (int c = 0; c < 4; ++c) at = line.find(',', at) + 1;
        kept += line.substr(0, at - 1) + "\n";
    }
    EXPECT_EQ(rebuilt.str(), kept);

    spec.first_instance = 7;
    spec.instance_count = 11;
    const api::RunResult slice = api::run(spec);
    for (std::size_t p = 0; p < 4; ++p) {
        const auto& a = all.points[p];
        const auto& s = slice.points[p];
        const std::size_t nck = a.checkpoints.size();
        ASSERT_EQ(s.instances, 11u);
        EXPECT_EQ(s.first_instance, 7u);
        const std::vector<double> want(a.regret.begin() + 7 * nck, a.regret.begin() + 18 * nck);
        EXPECT_EQ(s.regret, want) << "point " << p;
    }
    spec.first_instance = 25;
    spec.instance_count = 6;
    EXPECT_THROW(api::run(spec), cli::UsageError);
    api::RunSpec bad;
    bad.toml_text = "[run]\nrounds = 0\n";
    EXPECT_THROW(api::run(bad), cli::UsageError);
}

// plan() refuses before anything runs; execute() runs the plan, handing each point to the driver's hook instead of
// condensing it (what `dpregret run` does for shards and MPI ranks), and run() = plan() + execute().
TEST(Api, PlanRefusesBeforeRunningAndExecuteHandsEachPointToTheHook) {
    api::RunSpec spec;
    spec.toml_text = kConfig;
    spec.threads = 2;
    spec.instance_count = 31; // 30 instances
    std::uint64_t progress = 0;
    spec.on_progress = [&](std::uint64_t n) { progress += n; };
    EXPECT_THROW(api::plan(spec), cli::UsageError);
    spec.instance_count = 0;
    api::RunSpec bad_config = spec;
    bad_config.toml_text = std::string(kConfig) + "[run]\n"; // a repeated table: a config error
    EXPECT_THROW(api::plan(bad_config), cli::UsageError);
    EXPECT_EQ(progress, 0u);

    api::Plan plan = api::plan(spec);
    ASSERT_EQ(plan.records.size(), 4u);
    EXPECT_EQ(plan.instance_count, 30u);
    std::vector<std::vector<double>> seen;
    api::ExecuteHooks hooks;
    hooks.after_point = [&](PointRecord& r) {
        EXPECT_TRUE(r.result.summary.empty()); // not condensed: the hook decides
        // The result says what the point is: the same type goes to the hook, the writers and run()'s caller.
        EXPECT_EQ(r.result.point.index, r.point->index);
        EXPECT_EQ(r.result.learner, r.learner.name);
        EXPECT_EQ(r.result.diagnostic_names, r.learner.diagnostic_names);
        EXPECT_EQ(r.result.privacy.epsilon, r.learner.privacy.epsilon);
        seen.push_back(r.result.regret);
    };
    const api::RunResult hooked = api::execute(plan, spec, hooks);
    EXPECT_TRUE(hooked.completed);
    EXPECT_TRUE(hooked.points.empty()); // the hook took them
    EXPECT_EQ(progress, 4u * 30u * 80u);
    const api::RunResult whole = api::run(spec);
    ASSERT_EQ(seen.size(), whole.points.size());
    for (std::size_t p = 0; p < seen.size(); ++p) EXPECT_EQ(seen[p], whole.points[p].regret) << "point " << p;
}

// Instance ids past 2^32 (docs/RANDOMNESS.md §2): a run of 2^32 + 5 instances is refused in one
// process (exit 2, naming --shard) and valid in shards. Ids from 2^32 - 1 on run in block 1 under their own stream
// key: their numbers are reproducible slice by slice and differ from block 0's instances with the same counter word.
TEST(Api, InstanceIdsPastTwoToThe32AreValidInShards) {
    TempDir dir;
    const std::string toml = "[run]\ninstances = 4294967301\nrounds = 40\ncheckpoints = 3\n[adversary]\n"
                             "kind = \"bernoulli\"\nd = 4\nper_instance = [false, true]\n[learner]\n"
                             "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\n";
    dir.write("c.toml", toml);
    const CliResult whole = run_cli(dir, "run c.toml --out whole --quiet");
    EXPECT_EQ(whole.rc, 2);
    EXPECT_NE(whole.err.find("--shard"), std::string::npos) << whole.err;
    const CliResult shard = run_cli(dir, "run c.toml --out last --quiet --shard 999999/1000000");
    ASSERT_EQ(shard.rc, 0) << shard.err;
    EXPECT_NE(slurp(dir.file("last/shard.json")).find("\"first_instance\": 4294963006"), std::string::npos);

    api::RunSpec spec;
    spec.toml_text = toml;
    spec.threads = 2;
    const auto slice = [&](std::uint64_t first, std::uint64_t count) {
        spec.first_instance = first;
        spec.instance_count = count;
        return api::run(spec);
    };
    const api::RunResult across = slice(4294967290ull, 11); // words 4294967290..4294967294 of block 0, 0..5 of block 1
    const api::RunResult before = slice(4294967290ull, 5);
    const api::RunResult after = slice(4294967295ull, 6);
    const api::RunResult low = slice(0, 6); // block 0's words 0..5
    for (std::size_t p = 0; p < 2; ++p) {
        const std::size_t nck = across.points[p].checkpoints.size();
        std::vector<double> joined = before.points[p].regret;
        joined.insert(joined.end(), after.points[p].regret.begin(), after.points[p].regret.end());
        EXPECT_EQ(across.points[p].regret, joined) << "point " << p;
        ASSERT_EQ(after.points[p].regret.size(), 6 * nck);
        EXPECT_NE(after.points[p].regret, low.points[p].regret) << "block 1 reuses block 0's randomness, point " << p;
    }
    // Point 0's sequence is shared: block 1 plays against the same losses (the same comparator) as block 0;
    // point 1's are per instance, so block 1's are its own.
    ASSERT_FALSE(across.points[0].point.per_instance);
    EXPECT_EQ(after.points[0].comparator, low.points[0].comparator);
    EXPECT_NE(after.points[1].comparator, low.points[1].comparator);
}

// A library caller's flags are checked against the form's (the command's parser does this for the CLI): a
// flag of another form is refused naming it and the form's flags, not silently ignored; the form's own flags
// are accepted.
TEST(Api, SampleRefusesAFlagThatIsNotTheForms) {
    for (const std::string& form : api::sample_forms()) {
        const std::vector<std::string>& flags = api::sample_flags(form);
        EXPECT_NE(std::find(flags.begin(), flags.end(), "--n"), flags.end()) << form;
        EXPECT_NE(std::find(flags.begin(), flags.end(), "--seed"), flags.end()) << form;
    }
    EXPECT_TRUE(api::sample_flags("laplacian").empty());
    const api::Sampler ok = api::make_sampler({"laplace", {{"--scale", "1"}, {"--n", "3"}, {"--seed", "2"}}});
    EXPECT_EQ(ok.n, 3u);
    try {
        api::make_sampler({"laplace", {{"--scale", "1"}, {"--n", "3"}, {"--T", "5"}}});
        ADD_FAILURE() << "--T was accepted by sample laplace";
    } catch (const UsageError& e) {
        EXPECT_STREQ(e.what(), "--T is not a flag of sample laplace (its flags: --scale, --n, --seed)");
    }
    EXPECT_THROW(api::make_sampler({"expmech", {{"--c", "1"}, {"--d", "4"}, {"--n", "3"}, {"--sclae", "1"}}}),
                 UsageError);
}

// A loss matrix in memory (RunSpec::arrays, the Python package's arrays) is read where it is: the adversary's values
// point into it, nothing is copied; its results are those of the same matrix in a loss file; it is checked as a file
// is, the messages naming it; a path that names no array is still a file that must exist.
TEST(Api, ALossArrayInMemoryIsReadInPlaceAndEqualsTheSameLossFile) {
    TempDir dir;
    const std::uint64_t T = 60;
    const std::uint32_t d = 3;
    std::vector<double> losses(T * d);
    for (std::size_t k = 0; k < losses.size(); ++k) losses[k] = static_cast<double>((k * 37) % 101) / 100.0;
    std::ostringstream csv;
    for (std::uint64_t t = 0; t < T; ++t)
        csv << losses[t * d] << ',' << losses[t * d + 1] << ',' << losses[t * d + 2] << '\n';
    dir.write("l.csv", csv.str());
    const std::string head = "[run]\ninstances = 7\nrounds = 60\ncheckpoints = 4\n[learner]\n"
                             "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\n[adversary]\nkind = \"file\"\n";
    api::RunSpec mem;
    mem.toml_text = head + "path = \"<losses>\"\n";
    mem.threads = 2;
    mem.arrays["<losses>"] = LossArray{losses.data(), T, d};
    const api::Plan plan = api::plan(mem);
    EXPECT_EQ(plan.config.points[0].problem.d, d); // from the array's shape, as from a file's
    EXPECT_EQ(plan.config.points[0].adversary_values.list[0], losses.data()) << "the array was copied";

    api::RunSpec filed = mem;
    filed.arrays.clear();
    filed.toml_text = head + "path = \"" + dir.file("l.csv") + "\"\n";
    const api::RunResult a = api::run(mem), b = api::run(filed);
    ASSERT_EQ(a.points.size(), 1u);
    EXPECT_EQ(a.points[0].regret, b.points[0].regret);

    losses[2 * d + 1] = 1.5;
    try {
        api::plan(mem);
        ADD_FAILURE() << "a loss of 1.5 was accepted";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("<losses>: row 3, column 2: loss 1.5 is outside [0, 1]"),
                  std::string::npos)
            << e.what();
    }
    losses[2 * d + 1] = 0.5;
    mem.arrays["<losses>"].rows = T - 1;
    EXPECT_THROW(api::plan(mem), UsageError); // 59 rows for T = 60
    mem.arrays.clear();
    try {
        api::plan(mem);
        ADD_FAILURE() << "a path naming no array and no file was accepted";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos) << e.what();
    }
}

// A resumable run's pieces each repeat the point's shared work (its loss rows and their sums, O(T x d)).
// Pieces of a learner that does O(d) work per instance-round are sized by T x d (2^33 / (2048 x 2^16) = 64
// instances); a learner that reads L_{t-1} from the engine does O(1) per round and an O(d) pass per switch,
// so a run of 100 such instances is one piece, not two that make the shared rows twice (the svt-experts
// slowdown of docs/BENCHMARKS.md).
TEST(Api, PiecesOfALearnerThatReadsTheRunningSumsAreNotSizedByTTimesD) {
    const auto piece = [](const std::string& algorithm, std::uint64_t instances) {
        const std::string toml = "[run]\ninstances = " + std::to_string(instances) +
                                 "\nrounds = 2048\n[adversary]\nkind = \"halving\"\nd = 65536\n[learner]\n"
                                 "algorithm = \"" +
                                 algorithm + "\"\nepsilon = 10\n";
        const config::Config cfg = config::parse_config(toml, "c.toml", {}, api::run_config_inputs());
        return api::auto_piece_instances(cfg, api::resolve_points(cfg), /*cuda=*/false);
    };
    EXPECT_EQ(piece("dp-ftrl-experts", 100), 64u);
    EXPECT_EQ(piece("svt-experts", 100), 100u);
    // Still pieces when there are many: 2^33 / (2048 + 16 x 2^16) instances, rounded down to a multiple
    // of 16.
    EXPECT_EQ(piece("svt-experts", 1000000), 8176u);
}

} // namespace
} // namespace dpr::test
