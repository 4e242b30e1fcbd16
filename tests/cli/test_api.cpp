// The library API (host/api/run.hpp; issue 11 item 1): in-process, its numbers are the CLI's files' numbers, and a
// slice of the instances is exactly those rows of the whole run.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "cli/run_cli.hpp"
#include "host/api/run.hpp"
#include "host/cli/errors.hpp"
#include "host/io/csv.hpp"

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

} // namespace
} // namespace dpr::test
