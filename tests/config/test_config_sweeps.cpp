// Experiment files that are valid: values reach the points, sweeps expand in order, algorithm sweeps merge,
// --set overrides, files, and Point's ownership of what its KeyValues point into.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fake_components.hpp"

using namespace dpr;
using namespace dpr::config;
using namespace dpr::config::test;

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::string value_of(const Point& p, const std::string& key) {
    for (const auto& [k, v] : p.settings)
        if (k == key) return v;
    return "(absent)";
}

/// A scratch directory removed at the end of the test.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        path = std::filesystem::temp_directory_path() /
               ("dpr_config_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(path);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(path / name) << text;
        return (path / name).string();
    }
};

} // namespace

TEST(ComponentInfo, DescribeReadsTheComponentContract) {
    const auto learners = describe_all<FakeLearners>("learner");
    ASSERT_EQ(learners.size(), 3u);
    EXPECT_EQ(learners[1].name, "dp-ftrl-experts");
    EXPECT_EQ(learners[1].nkeys, 5);
    EXPECT_EQ(learners[1].keys, FakeDpFtrl::kKeys);
    EXPECT_EQ(learners[1].key_index("tree"), 3);
    EXPECT_EQ(learners[1].key_index("nope"), -1);
    EXPECT_EQ(learners[2].geometry, Geometry::Ball);
    EXPECT_EQ(learners[1].section, "learner");
    EXPECT_FALSE(learners[0].shared_only);
    const auto adversaries = describe_all<FakeAdversaries>("adversary");
    EXPECT_TRUE(adversaries[2].shared_only);
    EXPECT_EQ(adversaries[3].nkeys, 0); // std::array<KeySpec, 0>
    EXPECT_EQ(adversaries[3].keys, nullptr);
    EXPECT_NE(adversaries[0].check, nullptr);
}

TEST(Config, MinimalFileGivesOnePointWithDefaults) {
    const Config c = parse(minimal());
    EXPECT_EQ(c.source, "config.toml");
    EXPECT_EQ(c.run.instances, 1000u);
    EXPECT_EQ(c.run.checkpoints, 16u);
    EXPECT_TRUE(c.run.common_random_numbers);
    EXPECT_TRUE(c.swept_keys.empty());
    ASSERT_EQ(c.points.size(), 1u);
    const Point& p = c.points[0];
    EXPECT_EQ(p.index, 0u);
    EXPECT_EQ(p.stream, 0u);
    EXPECT_EQ(p.learner, "hedge");
    EXPECT_EQ(p.learner_index, 0u);
    EXPECT_EQ(p.adversary, "bernoulli");
    EXPECT_EQ(p.adversary_index, 0u);
    EXPECT_EQ(p.problem.d, 4u);
    EXPECT_EQ(p.problem.T, 100u);
    EXPECT_EQ(p.problem.seed, 1u);
    EXPECT_FALSE(p.per_instance);
    EXPECT_FALSE(p.learner_values.given[0]);
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(p.adversary_values.given[i]);
    EXPECT_TRUE(p.swept.empty());
    EXPECT_TRUE(p.warnings.empty());
    EXPECT_EQ(p.settings, (Pairs{{"run.seed", "1"},
                                 {"run.rounds", "100"},
                                 {"adversary.kind", "bernoulli"},
                                 {"adversary.d", "4"},
                                 {"adversary.per_instance", "false"},
                                 {"adversary.p", "0.5"},
                                 {"adversary.gap", "0.1"},
                                 {"adversary.best", "auto"},
                                 {"learner.algorithm", "hedge"},
                                 {"learner.eta", "auto"}}));
}

TEST(Config, ValuesAreConvertedInKeyOrder) {
    const Config c =
        parse("[run]\nseed = 7\ninstances = 1e6\nrounds = 4096\ncheckpoints = 8\n"
              "common_random_numbers = false\n"
              "[adversary]\nkind = \"bernoulli\"\nd = 16\nper_instance = true\ngap = 0.25\nbest = 3\n"
              "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = \"inf\"\ntree = \"binary\"\n"
              "noise = \"gaussian\"\ndelta = 1e-6\n");
    EXPECT_EQ(c.run.instances, 1000000u); // a float that is an integer is accepted for an Int key
    EXPECT_EQ(c.run.checkpoints, 8u);
    EXPECT_FALSE(c.run.common_random_numbers);
    ASSERT_EQ(c.points.size(), 1u);
    const Point& p = c.points[0];
    EXPECT_EQ(p.stream, point_stream_key(p, fake_inputs())); // no common random numbers: keyed by the point's settings
    EXPECT_NE(p.stream, 0u);
    EXPECT_EQ(p.problem.seed, 7u);
    EXPECT_EQ(p.problem.T, 4096u);
    EXPECT_EQ(p.problem.d, 16u);
    EXPECT_TRUE(p.per_instance);
    const KeyValues& a = p.adversary_values;
    EXPECT_FALSE(a.given[0]);
    EXPECT_TRUE(a.given[1]);
    EXPECT_EQ(a.num[1], 0.25);
    EXPECT_TRUE(a.given[2]);
    EXPECT_EQ(a.num[2], 3.0);
    const KeyValues& l = p.learner_values;
    EXPECT_TRUE(l.given[FakeDpFtrl::kEpsilon]);
    EXPECT_EQ(l.num[FakeDpFtrl::kEpsilon], kInf);
    EXPECT_EQ(l.num[FakeDpFtrl::kDelta], 1e-6);
    EXPECT_FALSE(l.given[2]);
    EXPECT_EQ(l.num[3], 1.0); // Choice: index into "padded|binary"
    EXPECT_STREQ(l.str[3], "binary");
    EXPECT_EQ(l.num[4], 1.0);
    EXPECT_EQ(value_of(p, "learner.epsilon"), "inf");
    EXPECT_EQ(value_of(p, "learner.delta"), "1e-6");
}

TEST(Config, FloatInfinityIsAcceptedWhereMaxIsInfinite) {
    const Config c = parse(minimal("", "", "epsilon = inf\n", "\"dp-ftrl-experts\""));
    EXPECT_EQ(c.points[0].learner_values.num[FakeDpFtrl::kEpsilon], kInf);
}

TEST(Config, SweepOfTwoByThreeGivesSixPointsInOrder) {
    const Config c =
        parse(minimal("", "p = [0.3, 0.5]\n", "epsilon = [0.1, 1, 10]\n", "\"dp-ftrl-experts\""));
    EXPECT_EQ(c.swept_keys, (std::vector<std::string>{"adversary.p", "learner.epsilon"}));
    ASSERT_EQ(c.points.size(), 6u);
    const char* p[] = {"0.3", "0.3", "0.3", "0.5", "0.5", "0.5"};
    const char* e[] = {"0.1", "1", "10", "0.1", "1", "10"};
    const double pv[] = {0.3, 0.3, 0.3, 0.5, 0.5, 0.5};
    const double ev[] = {0.1, 1, 10, 0.1, 1, 10};
    for (std::size_t i = 0; i < 6; ++i) {
        const Point& pt = c.points[i];
        EXPECT_EQ(pt.index, i);
        EXPECT_EQ(pt.stream, 0u); // common random numbers: all points share stream 0
        EXPECT_EQ(pt.swept, (Pairs{{"adversary.p", p[i]}, {"learner.epsilon", e[i]}}));
        EXPECT_EQ(pt.adversary_values.num[0], pv[i]);
        EXPECT_EQ(pt.learner_values.num[FakeDpFtrl::kEpsilon], ev[i]);
    }
}

TEST(Config, WithoutCommonRandomNumbersEveryPointHasItsOwnStreamKeyedByWhatItIs) {
    const Config c = parse(minimal("common_random_numbers = false\n", "p = [0.3, 0.4, 0.5]\n"));
    ASSERT_EQ(c.points.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NE(c.points[i].stream, 0u);
    EXPECT_NE(c.points[0].stream, c.points[1].stream);
    EXPECT_NE(c.points[1].stream, c.points[2].stream);
    EXPECT_NE(c.points[0].stream, c.points[2].stream);
    // Reordered, shortened or extended sweeps give each value the stream it had.
    const Config r = parse(minimal("common_random_numbers = false\n", "p = [0.5, 0.3, 0.7]\n"));
    EXPECT_EQ(r.points[0].stream, c.points[2].stream);
    EXPECT_EQ(r.points[1].stream, c.points[0].stream);
    EXPECT_NE(r.points[2].stream, c.points[1].stream);
    // With common random numbers every point shares key 0.
    for (const Point& p : parse(minimal("", "p = [0.3, 0.4]\n")).points) EXPECT_EQ(p.stream, 0u);
}

TEST(Config, AlgorithmSweepDropsUndeclaredKeysAndMergesPoints) {
    const Config c = parse(minimal("", "", "epsilon = [0.1, 1, 10]\n", "[\"hedge\", \"dp-ftrl-experts\"]"));
    EXPECT_EQ(c.swept_keys, (std::vector<std::string>{"learner.algorithm", "learner.epsilon"}));
    ASSERT_EQ(c.points.size(), 4u); // 1 hedge + 3 dp-ftrl-experts
    EXPECT_EQ(c.points[0].learner, "hedge");
    EXPECT_EQ(c.points[0].swept, (Pairs{{"learner.algorithm", "hedge"}, {"learner.epsilon", ""}}));
    EXPECT_EQ(value_of(c.points[0], "learner.epsilon"), "(absent)");
    const char* e[] = {"0.1", "1", "10"};
    for (std::size_t i = 1; i < 4; ++i) {
        EXPECT_EQ(c.points[i].index, i);
        EXPECT_EQ(c.points[i].learner, "dp-ftrl-experts");
        EXPECT_EQ(c.points[i].learner_index, 1u);
        EXPECT_EQ(c.points[i].swept,
                  (Pairs{{"learner.algorithm", "dp-ftrl-experts"}, {"learner.epsilon", e[i - 1]}}));
    }
}

TEST(Config, KeysSharedBySweptAlgorithmsStaySwept) {
    // eta is declared by both: 2 hedge points (eta) + 2 x 2 dp-ftrl points (eta x epsilon).
    const Config c =
        parse(minimal("", "", "eta = [0.1, 0.2]\nepsilon = [1, 2]\n", "[\"hedge\", \"dp-ftrl-experts\"]"));
    ASSERT_EQ(c.points.size(), 6u);
    // Key order: the swept components' keys in declaration order, hedge's (eta) first.
    EXPECT_EQ(c.swept_keys,
              (std::vector<std::string>{"learner.algorithm", "learner.eta", "learner.epsilon"}));
    EXPECT_EQ(c.points[0].swept,
              (Pairs{{"learner.algorithm", "hedge"}, {"learner.eta", "0.1"}, {"learner.epsilon", ""}}));
    EXPECT_EQ(c.points[1].swept,
              (Pairs{{"learner.algorithm", "hedge"}, {"learner.eta", "0.2"}, {"learner.epsilon", ""}}));
    EXPECT_EQ(
        c.points[2].swept,
        (Pairs{{"learner.algorithm", "dp-ftrl-experts"}, {"learner.eta", "0.1"}, {"learner.epsilon", "1"}}));
    EXPECT_EQ(
        c.points[3].swept,
        (Pairs{{"learner.algorithm", "dp-ftrl-experts"}, {"learner.eta", "0.1"}, {"learner.epsilon", "2"}}));
    EXPECT_EQ(
        c.points[5].swept,
        (Pairs{{"learner.algorithm", "dp-ftrl-experts"}, {"learner.eta", "0.2"}, {"learner.epsilon", "2"}}));
    EXPECT_EQ(c.points[0].learner_values.num[0], 0.1); // hedge's eta is its key 0
    EXPECT_EQ(c.points[2].learner_values.num[2], 0.1); // dp-ftrl's eta is its key 2
}

TEST(Config, KindSweepMergesAdversaryKeysTheSameWay) {
    const Config c =
        parse(minimal("", "gap = [0.05, 0.1]\n", "", "\"hedge\"", "[\"switching\", \"bernoulli\"]"));
    ASSERT_EQ(c.points.size(), 3u);
    EXPECT_EQ(c.points[0].adversary, "switching");
    EXPECT_EQ(c.points[0].swept, (Pairs{{"adversary.kind", "switching"}, {"adversary.gap", ""}}));
    EXPECT_EQ(c.points[2].swept, (Pairs{{"adversary.kind", "bernoulli"}, {"adversary.gap", "0.1"}}));
}

TEST(Config, EqualValuesOfASweepAreOnePoint) {
    const Config c = parse(minimal("", "p = [0.5, 0.50, 5e-1]\n"));
    EXPECT_EQ(c.points.size(), 1u);
}

TEST(Config, RealListValueIsOnePointAndAListOfListsIsASweep) {
    const Config one = parse(minimal("", "switch_at = [10, 20.5, 30]\n", "", "\"hedge\"", "\"switching\""));
    EXPECT_TRUE(one.swept_keys.empty());
    ASSERT_EQ(one.points.size(), 1u);
    const KeyValues& kv = one.points[0].adversary_values;
    ASSERT_TRUE(kv.given[0]);
    ASSERT_EQ(kv.list_size[0], 3u);
    EXPECT_EQ(kv.list[0][0], 10.0);
    EXPECT_EQ(kv.list[0][1], 20.5);
    EXPECT_EQ(kv.list[0][2], 30.0);

    const Config two = parse(minimal("", "switch_at = [[10], [10, 20]]\n", "", "\"hedge\"", "\"switching\""));
    EXPECT_EQ(two.swept_keys, (std::vector<std::string>{"adversary.switch_at"}));
    ASSERT_EQ(two.points.size(), 2u);
    EXPECT_EQ(two.points[0].adversary_values.list_size[0], 1u);
    EXPECT_EQ(two.points[1].adversary_values.list_size[0], 2u);
    EXPECT_EQ(two.points[1].adversary_values.list[0][1], 20.0);
    EXPECT_EQ(two.points[1].swept, (Pairs{{"adversary.switch_at", "[10, 20]"}}));

    const Config empty = parse(minimal("", "switch_at = []\n", "", "\"hedge\"", "\"switching\""));
    ASSERT_EQ(empty.points.size(), 1u);
    EXPECT_TRUE(empty.points[0].adversary_values.given[0]);
    EXPECT_EQ(empty.points[0].adversary_values.list_size[0], 0u);
}

TEST(Config, SeedAndRoundsMayBeSwept) {
    const Config c =
        parse("[run]\nseed = [1, 2]\nrounds = [10, 1000]\n[adversary]\nkind = \"bernoulli\"\nd = 2\n"
              "[learner]\nalgorithm = \"hedge\"\n");
    ASSERT_EQ(c.points.size(), 4u);
    EXPECT_EQ(c.swept_keys, (std::vector<std::string>{"run.seed", "run.rounds"}));
    EXPECT_EQ(c.points[1].problem.seed, 1u);
    EXPECT_EQ(c.points[1].problem.T, 1000u);
    EXPECT_EQ(c.points[2].problem.seed, 2u);
    EXPECT_EQ(c.points[2].problem.T, 10u);
}

TEST(Config, PointsOwnTheirStringsAndLists) {
    std::vector<Point> copies;
    {
        const Config c = parse(minimal("", "switch_at = [[3, 4], [5]]\n", "tree = \"binary\"\nepsilon = 1\n",
                                       "\"dp-ftrl-experts\"", "\"switching\""));
        copies = c.points;                   // copy ...
        std::vector<Point> moved = c.points; // ... and move
        copies.push_back(std::move(moved[1]));
    } // the Config and everything else is gone
    ASSERT_EQ(copies.size(), 3u);
    for (const Point* p : {&copies[1], &copies[2]}) {
        ASSERT_EQ(p->adversary_values.list_size[0], 1u);
        EXPECT_EQ(p->adversary_values.list[0][0], 5.0);
        EXPECT_STREQ(p->learner_values.str[3], "binary");
    }
    EXPECT_EQ(copies[0].adversary_values.list[0][1], 4.0);
}

TEST(Config, SetOverridesAndAddsKeys) {
    const Config c = parse(minimal(), {"learner.epsilon=[0.1,1]", "learner.algorithm=\"dp-ftrl-experts\"",
                                       "run.rounds = 50", "adversary.kind=bernoulli", "adversary.gap=0.2"});
    ASSERT_EQ(c.points.size(), 2u);
    EXPECT_EQ(c.points[0].learner, "dp-ftrl-experts");
    EXPECT_EQ(c.points[0].problem.T, 50u);
    EXPECT_EQ(c.points[1].learner_values.num[FakeDpFtrl::kEpsilon], 1.0);
    EXPECT_EQ(c.points[1].adversary_values.num[1], 0.2);
    // File order, overridden keys in place, added keys after them in --set order.
    EXPECT_EQ(c.resolved_toml, "[run]\nrounds = 50\n\n[adversary]\nkind = \"bernoulli\"\nd = 4\ngap = 0.2\n\n"
                               "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = [0.1, 1]\n");
    const Config added =
        parse(minimal(), {"learner.eta=2", "adversary.p=0.3", "adversary.best=1", "learner.eta=3"});
    EXPECT_EQ(added.resolved_toml,
              "[run]\nrounds = 100\n\n[adversary]\nkind = \"bernoulli\"\nd = 4\np = 0.3\nbest = 1\n\n"
              "[learner]\nalgorithm = \"hedge\"\neta = 3\n");
    // The resolved document reads back to the same points.
    const Config again = parse(c.resolved_toml);
    ASSERT_EQ(again.points.size(), 2u);
    EXPECT_EQ(again.points[1].settings, c.points[1].settings);
}

TEST(Config, SetCreatesMissingSections) {
    const Config c = parse("[adversary]\nkind = \"bernoulli\"\nd = 3\n",
                           {"run.rounds=10", "learner.algorithm=hedge", "learner.eta=0.5"});
    ASSERT_EQ(c.points.size(), 1u);
    EXPECT_EQ(c.points[0].problem.T, 10u);
    EXPECT_EQ(c.points[0].learner_values.num[0], 0.5);
}

TEST(Config, WarningsFromCheckAreKept) {
    const Config c = parse(minimal("", "", "epsilon = [1, 1000]\n", "\"dp-ftrl-experts\""));
    ASSERT_EQ(c.points.size(), 2u);
    EXPECT_TRUE(c.points[0].warnings.empty());
    ASSERT_EQ(c.points[1].warnings.size(), 1u);
    EXPECT_EQ(c.points[1].warnings[0],
              "[learner] epsilon = 1000 (config.toml:8:15): epsilon = 1000 gives almost no "
              "privacy (sweep point: learner.epsilon = 1000)");
}

TEST(Config, PathIsResolvedAgainstTheFileAndDimensionComesFromIt) {
    TempDir dir;
    const std::string data = dir.write("losses.csv", "0,1\n1,0\n");
    const std::string cfg = dir.write("exp.toml", "[run]\nrounds = 2\n[adversary]\nkind = \"file\"\npath = "
                                                  "\"losses.csv\"\n[learner]\nalgorithm = \"hedge\"\n");
    ConfigInputs in = fake_inputs();
    int dimension_calls = 0, value_calls = 0;
    in.file_dimension = [&](const std::string& path) {
        EXPECT_EQ(path, std::filesystem::path(data).lexically_normal().string());
        ++dimension_calls;
        return 2u;
    };
    in.file_values = [&](const std::string&, const Problem& pb, Geometry) {
        ++value_calls;
        EXPECT_EQ(pb.d, 2u);
        EXPECT_EQ(pb.T, 2u);
        const auto v = std::make_shared<const std::vector<double>>(std::vector<double>{0, 1, 1, 0});
        return LossValues{v, v->data(), v->size()};
    };
    const Config c = load_config(cfg, {"learner.eta=[1, 2]"}, in);
    ASSERT_EQ(c.points.size(), 2u);
    EXPECT_EQ(dimension_calls, 1); // cached per path
    EXPECT_EQ(value_calls, 1);
    for (const Point& p : c.points) {
        EXPECT_EQ(p.problem.d, 2u);
        EXPECT_STREQ(p.adversary_values.str[0], std::filesystem::path(data).lexically_normal().c_str());
        ASSERT_EQ(p.adversary_values.list_size[0], 4u);
        EXPECT_EQ(p.adversary_values.list[0][1], 1.0);
        EXPECT_EQ(value_of(p, "adversary.path"), "losses.csv");
        EXPECT_EQ(value_of(p, "adversary.d"), "2");
    }
}

TEST(Config, WithoutAFileHookDIsWhatIsGivenOrZero) {
    TempDir dir;
    dir.write("losses.csv", "0\n");
    const std::string cfg = dir.write(
        "exp.toml", "[run]\nrounds = 1\n[adversary]\nkind = \"file\"\npath = \"losses.csv\"\n[learner]\n"
                    "algorithm = \"hedge\"\n");
    EXPECT_EQ(load_config(cfg, {}, fake_inputs()).points[0].problem.d, 0u);
    EXPECT_EQ(load_config(cfg, {"adversary.d=5"}, fake_inputs()).points[0].problem.d, 5u);
}

TEST(Config, DescribeKeysListsEveryKey) {
    const auto learners = describe_all<FakeLearners>("learner");
    const std::string text = describe_keys(learners[1]);
    EXPECT_EQ(text.rfind("[learner] algorithm = \"dp-ftrl-experts\"  (decision set: simplex", 0), 0u) << text;
    EXPECT_NE(text.find("  epsilon  real    required  (0, inf]               privacy parameter"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  tree     choice  padded    padded|binary"), std::string::npos) << text;
    const auto adversaries = describe_all<FakeAdversaries>("adversary");
    EXPECT_NE(describe_keys(adversaries[3]).find("(no keys of its own)"), std::string::npos);
    EXPECT_NE(describe_keys(adversaries[2]).find("per_instance = false only"), std::string::npos);
    const std::string run = describe_run_keys();
    EXPECT_NE(run.find("rounds"), std::string::npos);
    EXPECT_NE(run.find("[1, 4294967295]"), std::string::npos) << run;
}

TEST(Config, RangeText) {
    EXPECT_EQ(range_text(FakeDpFtrl::kKeys[0]), "a number in (0, inf]");
    EXPECT_EQ(range_text(FakeDpFtrl::kKeys[1]), "a number in [0, 1)"); // max_exclusive
    EXPECT_EQ(range_text(FakeDpFtrl::kKeys[3]), "one of \"padded\", \"binary\"");
    EXPECT_EQ(range_text(FakeBernoulli::kKeys[2]), "an integer in [0, 4294967294]");
    EXPECT_EQ(range_text(FakeSwitching::kKeys[0]), "a list of numbers in [1, 4294967295]");
    EXPECT_EQ(range_text(run_keys()[4]), "true or false");
    const KeySpec any{"x", KeyType::Real, "0", -kInf, kInf, nullptr, ""};
    const KeySpec open{"x", KeyType::Real, "0", 0.0, 1.0, nullptr, "", true, true};
    EXPECT_EQ(range_text(open), "a number in (0, 1)");
    EXPECT_EQ(range_text(any), "a number in (-inf, inf]");
}

TEST(Suggest, LevenshteinAndDidYouMean) {
    EXPECT_EQ(levenshtein("", ""), 0u);
    EXPECT_EQ(levenshtein("kitten", "sitting"), 3u);
    EXPECT_EQ(levenshtein("flaw", "lawn"), 2u);
    EXPECT_EQ(levenshtein("abc", ""), 3u);
    const std::vector<std::string> keys = {"epsilon", "delta", "eta", "tree"};
    EXPECT_EQ(did_you_mean("epsilonn", keys), "epsilon");
    EXPECT_EQ(did_you_mean("Epsilon", keys), "epsilon");
    EXPECT_EQ(did_you_mean("detla", keys), "delta");
    EXPECT_EQ(did_you_mean("zzzzzzzz", keys), "");
    EXPECT_EQ(did_you_mean("xy", keys), ""); // every candidate is as far as rewriting the word
}
