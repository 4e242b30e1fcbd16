// Every kind of bad input stops with the exact message: the key, the value, where it was given and the
// valid range (docs/CONFIG.md "Errors"; docs/ARCHITECTURE.md §6).
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fake_components.hpp"

using namespace dpr;
using namespace dpr::config;
using namespace dpr::config::test;

namespace {

/// A valid config whose lines can be replaced by number:
///   1 [run]   2 rounds = 100   3 #
///   4 [adversary]   5 kind = "bernoulli"   6 d = 4   7 #
///   8 [learner]   9 algorithm = "dp-ftrl-experts"   10 epsilon = 1   11 #
std::string cfg(const std::map<int, std::string>& replace = {}) {
    std::vector<std::string> lines = {"[run]",
                                      "rounds = 100",
                                      "#",
                                      "[adversary]",
                                      "kind = \"bernoulli\"",
                                      "d = 4",
                                      "#",
                                      "[learner]",
                                      "algorithm = \"dp-ftrl-experts\"",
                                      "epsilon = 1",
                                      "#"};
    for (const auto& [n, text] : replace) lines.at(static_cast<std::size_t>(n - 1)) = text;
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

const std::string kKinds = "one of \"bernoulli\", \"switching\", \"file\", \"ball-adv\"";
const std::string kAlgorithms = "one of \"hedge\", \"dp-ftrl-experts\", \"ogd-ball\"";

} // namespace

TEST(ConfigErrors, TheBaseConfigIsValid) {
    EXPECT_EQ(error_of(cfg()), "(no error)");
}

TEST(ConfigErrors, InvalidToml) {
    EXPECT_EQ(error_of("[run]\nrounds = = 1\n"),
              "config.toml:2:10: invalid TOML: Error while parsing value: could not determine value type");
}

TEST(ConfigErrors, UnknownSection) {
    EXPECT_EQ(error_of(cfg() + "[lerner]\nx = 1\n"), "[lerner] (config.toml:12:2): unknown section; did you "
                                                     "mean [learner]? (sections: [run], [adversary], "
                                                     "[learner])");
    EXPECT_EQ(error_of(cfg() + "[plot]\nx = 1\n"),
              "[plot] (config.toml:12:2): unknown section (sections: [run], [adversary], [learner])");
    EXPECT_EQ(
        error_of("rounds = 100\n" + cfg({{2, "#"}})),
        "rounds (config.toml:1:1): keys belong in a section ([run], [adversary] or [learner]); did you mean "
        "[run] rounds?");
    EXPECT_EQ(error_of("run = 5\n"),
              "[run] (config.toml:1:1): must be a table (a [run] section header followed by its keys)");
}

TEST(ConfigErrors, UnknownKeyWithSuggestion) {
    EXPECT_EQ(error_of(cfg({{11, "epsilonn = 1"}})),
              "[learner] epsilonn (config.toml:11:1): unknown key; did you mean epsilon?");
    EXPECT_EQ(error_of(cfg({{3, "sed = 1"}})),
              "[run] sed (config.toml:3:1): unknown key; did you mean seed?");
    EXPECT_EQ(error_of(cfg({{7, "gapp = 0.1"}})),
              "[adversary] gapp (config.toml:7:1): unknown key; did you mean gap?");
    EXPECT_EQ(error_of(cfg({{11, "zzzzzz = 1"}})), "[learner] zzzzzz (config.toml:11:1): unknown key; valid "
                                                   "keys are algorithm, epsilon, delta, eta, tree, "
                                                   "noise");
}

TEST(ConfigErrors, UnknownKeyThatBelongsElsewhere) {
    // A key of an algorithm that is not in the sweep.
    EXPECT_EQ(error_of(cfg({{9, "algorithm = \"hedge\""}})),
              "[learner] epsilon (config.toml:10:1): not a key of algorithm \"hedge\" (it is a key of "
              "\"dp-ftrl-experts\")");
    // A key of another section.
    EXPECT_EQ(error_of(cfg({{11, "rounds = 5"}})),
              "[learner] rounds (config.toml:11:1): unknown key in [learner]; did you mean [run] rounds?");
    EXPECT_EQ(ConfigError("learner.rounds", "x").key(), "learner.rounds");
    try {
        parse(cfg({{11, "rounds = 5"}}));
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "learner.rounds");
    }
}

TEST(ConfigErrors, WrongType) {
    EXPECT_EQ(error_of(cfg({{10, "epsilon = \"abc\""}})),
              "[learner] epsilon = \"abc\" (config.toml:10:11): must be a number in (0, inf]");
    EXPECT_EQ(error_of(cfg({{2, "rounds = 1.5"}})),
              "[run] rounds = 1.5 (config.toml:2:10): must be an integer in [1, 4294967295]");
    EXPECT_EQ(error_of(cfg({{2, "rounds = \"100\""}})),
              "[run] rounds = \"100\" (config.toml:2:10): must be an integer in [1, 4294967295]");
    EXPECT_EQ(error_of(cfg({{3, "common_random_numbers = 1"}})),
              "[run] common_random_numbers = 1 (config.toml:3:25): must be true or false");
    EXPECT_EQ(error_of(cfg({{7, "per_instance = \"yes\""}})),
              "[adversary] per_instance = \"yes\" (config.toml:7:16): must be true or false");
    EXPECT_EQ(error_of(cfg({{6, "d = \"four\""}})),
              "[adversary] d = \"four\" (config.toml:6:5): must be an integer in [1, 2147483648]");
    EXPECT_EQ(error_of(cfg({{11, "tree = 3"}})),
              "[learner] tree = 3 (config.toml:11:8): must be one of \"padded\", \"binary\"");
    EXPECT_EQ(error_of(cfg({{5, "kind = 1"}})), "[adversary] kind = 1 (config.toml:5:8): must be " + kKinds);
    EXPECT_EQ(error_of(cfg({{11, "eta = {a = 1}"}})),
              "[learner] eta = {a = 1} (config.toml:11:7): must be a number in (0, inf]");
    EXPECT_EQ(error_of(cfg({{11, "eta = 2026-01-01"}})),
              "[learner] eta = 2026-01-01 (config.toml:11:7): must be a number in (0, inf]");
    EXPECT_EQ(
        error_of(cfg({{5, "kind = \"switching\""}, {7, "switch_at = \"x\""}})),
        "[adversary] switch_at = \"x\" (config.toml:7:13): must be a list of numbers in [1, 4294967295] or "
        "\"auto\"");
    EXPECT_EQ(
        error_of(cfg({{5, "kind = \"switching\""}, {7, "switch_at = [[1], [\"a\"]]"}})),
        "[adversary] switch_at = [\"a\"] (config.toml:7:19): must be a list of numbers in [1, 4294967295] "
        "(element 1 is \"a\")");
}

TEST(ConfigErrors, OutOfRangeReals) {
    const std::string eps = " (config.toml:10:11): must be a number in (0, inf]";
    EXPECT_EQ(error_of(cfg({{10, "epsilon = -1"}})), "[learner] epsilon = -1" + eps);
    EXPECT_EQ(error_of(cfg({{10, "epsilon = 0"}})), "[learner] epsilon = 0" + eps);
    EXPECT_EQ(error_of(cfg({{10, "epsilon = 0.0"}})), "[learner] epsilon = 0" + eps);
    EXPECT_EQ(error_of(cfg({{10, "epsilon = nan"}})), "[learner] epsilon = nan" + eps);
    EXPECT_EQ(error_of(cfg({{10, "epsilon = -inf"}})), "[learner] epsilon = -inf" + eps);
    EXPECT_EQ(error_of(cfg({{10, "epsilon = \"-inf\""}})), "[learner] epsilon = \"-inf\"" + eps);
    // delta = 1 is no guarantee at all, so the range is half-open (KeySpec::max_exclusive).
    const std::string delta = " (config.toml:11:9): must be a number in [0, 1)";
    EXPECT_EQ(error_of(cfg({{11, "delta = inf"}})), "[learner] delta = inf" + delta);
    EXPECT_EQ(error_of(cfg({{11, "delta = \"inf\""}})), "[learner] delta = \"inf\"" + delta);
    EXPECT_EQ(error_of(cfg({{11, "delta = -1e-9"}})), "[learner] delta = -1e-9" + delta);
    EXPECT_EQ(error_of(cfg({{11, "delta = 1.5"}})), "[learner] delta = 1.5" + delta);
    EXPECT_EQ(error_of(cfg({{11, "delta = 1"}})), "[learner] delta = 1" + delta);
    EXPECT_EQ(error_of(cfg({{11, "delta = 0.999999"}})), "(no error)");
    EXPECT_EQ(error_of(cfg({{11, "delta = nan"}})), "[learner] delta = nan" + delta);
    EXPECT_EQ(error_of(cfg({{7, "p = 1.0000001"}})),
              "[adversary] p = 1.0000001 (config.toml:7:5): must be a number in [0, 1]");
    EXPECT_EQ(
        error_of(cfg({{5, "kind = \"switching\""}, {7, "switch_at = [5, 0]"}})),
        "[adversary] switch_at = [5, 0] (config.toml:7:13): must be a list of numbers in [1, 4294967295] "
        "(element 2 is 0)");
}

TEST(ConfigErrors, OutOfRangeIntegers) {
    EXPECT_EQ(error_of(cfg({{2, "rounds = 0"}})),
              "[run] rounds = 0 (config.toml:2:10): must be an integer in [1, 4294967295]");
    EXPECT_EQ(error_of(cfg({{2, "rounds = 4294967296"}})),
              "[run] rounds = 4294967296 (config.toml:2:10): must be an integer in [1, 4294967295]");
    EXPECT_EQ(error_of(cfg({{2, "rounds = inf"}})),
              "[run] rounds = inf (config.toml:2:10): must be an integer in [1, 4294967295]");
    EXPECT_EQ(error_of(cfg({{2, "rounds = nan"}})),
              "[run] rounds = nan (config.toml:2:10): must be an integer in [1, 4294967295]");
    EXPECT_EQ(error_of(cfg({{3, "seed = -1"}})),
              "[run] seed = -1 (config.toml:3:8): must be an integer in [0, 4294967295]");
    EXPECT_EQ(error_of(cfg({{3, "seed = 4294967296"}})),
              "[run] seed = 4294967296 (config.toml:3:8): must be an integer in [0, 4294967295]");
    EXPECT_EQ(error_of(cfg({{3, "instances = 0"}})),
              "[run] instances = 0 (config.toml:3:13): must be an integer in [1, 4503599627370496]");
    EXPECT_EQ(error_of(cfg({{3, "instances = 1e16"}})),
              "[run] instances = 1e16 (config.toml:3:13): must be an integer in [1, 4503599627370496]");
    EXPECT_EQ(error_of(cfg({{3, "checkpoints = 0"}})),
              "[run] checkpoints = 0 (config.toml:3:15): must be an integer in [1, 1024]");
    EXPECT_EQ(error_of(cfg({{3, "checkpoints = 1025"}})),
              "[run] checkpoints = 1025 (config.toml:3:15): must be an integer in [1, 1024]");
    EXPECT_EQ(error_of(cfg({{6, "d = 0"}})),
              "[adversary] d = 0 (config.toml:6:5): must be an integer in [1, 2147483648]");
    EXPECT_EQ(error_of(cfg({{6, "d = 2147483649"}})),
              "[adversary] d = 2147483649 (config.toml:6:5): must be an integer in [1, 2147483648]");
    EXPECT_EQ(error_of(cfg({{7, "best = 2.5"}})),
              "[adversary] best = 2.5 (config.toml:7:8): must be an integer in [0, 4294967294]");
    EXPECT_EQ(error_of(cfg({{7, "best = -3"}})),
              "[adversary] best = -3 (config.toml:7:8): must be an integer in [0, 4294967294]");
}

TEST(ConfigErrors, MissingRequiredKey) {
    EXPECT_EQ(error_of(cfg({{2, "#"}})),
              "[run] rounds (config.toml:1:1): required key missing; must be an integer in [1, 4294967295]");
    EXPECT_EQ(error_of(cfg({{1, "#"}, {2, "#"}})),
              "[run] rounds (config.toml): required key missing; must be an integer in [1, 4294967295]");
    EXPECT_EQ(error_of(cfg({{5, "#"}})),
              "[adversary] kind (config.toml:4:1): required key missing; must be " + kKinds);
    EXPECT_EQ(error_of(cfg({{9, "#"}, {10, "#"}})),
              "[learner] algorithm (config.toml:8:1): required key missing; must be " + kAlgorithms);
    EXPECT_EQ(error_of(cfg({{6, "#"}})),
              "[adversary] d (config.toml:4:1): required key missing; must be an integer in [1, 2147483648]");
    EXPECT_EQ(
        error_of(cfg({{10, "#"}})),
        "[learner] epsilon (config.toml:8:1): required key missing (algorithm \"dp-ftrl-experts\" requires "
        "it); must be a number in (0, inf]");
    // Only the swept algorithm that needs it fails, and the message says which point.
    EXPECT_EQ(
        error_of(cfg({{9, "algorithm = [\"hedge\", \"dp-ftrl-experts\"]"}, {10, "eta = 1"}})),
        "[learner] epsilon (config.toml:8:1): required key missing (algorithm \"dp-ftrl-experts\" requires "
        "it); must be a number in (0, inf] (sweep point: learner.algorithm = dp-ftrl-experts)");
    EXPECT_EQ(
        error_of(cfg({{5, "kind = \"file\""}, {6, "#"}})),
        "[adversary] path (config.toml:4:1): required key missing (kind \"file\" requires it); must be the "
        "path of a file (a string)");
}

TEST(ConfigErrors, BadChoiceWithSuggestion) {
    EXPECT_EQ(error_of(cfg({{9, "algorithm = \"hedg\""}, {10, "#"}})),
              "[learner] algorithm = \"hedg\" (config.toml:9:13): must be " + kAlgorithms +
                  "; did you mean \"hedge\"?");
    EXPECT_EQ(error_of(cfg({{9, "algorithm = [\"hedge\", \"dp-ftrl-expert\"]"}})),
              "[learner] algorithm = \"dp-ftrl-expert\" (config.toml:9:23): must be " + kAlgorithms +
                  "; did you mean \"dp-ftrl-experts\"?");
    EXPECT_EQ(
        error_of(cfg({{11, "tree = \"bianry\""}})),
        "[learner] tree = \"bianry\" (config.toml:11:8): must be one of \"padded\", \"binary\"; did you mean "
        "\"binary\"?");
    EXPECT_EQ(error_of(cfg({{5, "kind = \"adaptive\""}})),
              "[adversary] kind = \"adaptive\" (config.toml:5:8): must be " + kKinds);
    // A value that is fine for one swept algorithm and not for another names the algorithm.
    EXPECT_EQ(error_of(cfg({{9, "algorithm = [\"hedge\", \"dp-ftrl-experts\"]"}, {11, "eta = [1, -1]"}})),
              "[learner] eta = -1 (config.toml:11:11): must be a number in (0, inf] for algorithm \"hedge\"");
}

TEST(ConfigErrors, BadSetArguments) {
    EXPECT_EQ(error_of(cfg(), {"learner.epsilon"}),
              "--set learner.epsilon: expected SECTION.KEY=VALUE, e.g. --set learner.epsilon=0.5");
    EXPECT_EQ(error_of(cfg(), {"epsilon=1"}), "--set epsilon=1: expected SECTION.KEY=VALUE, e.g. --set "
                                              "learner.epsilon=0.5");
    EXPECT_EQ(error_of(cfg(), {"learner.tree.x=1"}),
              "--set learner.tree.x=1: expected SECTION.KEY=VALUE, e.g. --set learner.epsilon=0.5");
    EXPECT_EQ(error_of(cfg(), {".x=1"}),
              "--set .x=1: expected SECTION.KEY=VALUE, e.g. --set learner.epsilon=0.5");
    EXPECT_EQ(error_of(cfg(), {"lerner.epsilon=1"}),
              "--set lerner.epsilon=1: unknown section [lerner]; did you mean [learner]? (sections: [run], "
              "[adversary], [learner])");
    const std::string unparsable = error_of(cfg(), {"learner.epsilon=[0.1,1"});
    EXPECT_EQ(unparsable,
              "--set learner.epsilon=[0.1,1: cannot parse '[0.1,1' as a TOML value (Error while parsing "
              "array: encountered end-of-file)");
    EXPECT_EQ(error_of(cfg(), {"learner.epsilon="}),
              "--set learner.epsilon=: cannot parse '' as a TOML value (Error "
              "while parsing key-value pair: encountered end-of-file)");
    EXPECT_EQ(error_of(cfg(), {"learner.epsilon=1\nx = 2"}),
              "--set learner.epsilon=1\nx = 2: VALUE must be a single TOML value");
    // Unknown keys and bad values given by --set are reported against the --set argument.
    EXPECT_EQ(error_of(cfg(), {"learner.epsilonn=1"}),
              "[learner] epsilonn (--set learner.epsilonn=1): unknown key; did you mean epsilon?");
    EXPECT_EQ(error_of(cfg(), {"learner.epsilon=-1"}),
              "[learner] epsilon = -1 (--set learner.epsilon=-1): must be a number in (0, inf]");
    EXPECT_EQ(error_of(cfg(), {"learner.epsilon=abc"}),
              "[learner] epsilon = \"abc\" (--set learner.epsilon=abc): must be a number in (0, inf]");
    EXPECT_EQ(error_of(cfg(), {"learner.epsilon=[1, -2]"}),
              "[learner] epsilon = -2 (--set learner.epsilon=[1, -2]): must be a number in (0, inf]");
    EXPECT_EQ(error_of(cfg(), {"adversary.kind=halvin"}),
              "[adversary] kind = \"halvin\" (--set adversary.kind=halvin): must be " + kKinds);
}

TEST(ConfigErrors, CheckFailureNamesTheKey) {
    EXPECT_EQ(error_of(cfg({{7, "gap = 0.6"}})),
              "[adversary] gap = 0.6 (config.toml:7:7): gap = 0.6 exceeds p = 0.5");
    EXPECT_EQ(error_of(cfg({{7, "p = [0.7, 0.5]"}, {3, "#"}}) + "", {"adversary.gap=0.6"}),
              "[adversary] gap = 0.6 (--set adversary.gap=0.6): gap = 0.6 exceeds p = 0.5 (sweep point: "
              "adversary.p "
              "= 0.5)");
    // The key the component names was left out: its default is shown.
    EXPECT_EQ(error_of(cfg({{11, "noise = \"gaussian\""}})),
              "[learner] delta (default: 0): noise = gaussian needs delta > 0");
    // The component may name a [run] key.
    EXPECT_EQ(error_of(cfg({{2, "rounds = 1"}})),
              "[run] rounds = 1 (config.toml:2:10): needs at least 2 rounds");
    try {
        parse(cfg({{7, "gap = 0.6"}}));
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "adversary.gap");
    }
}

TEST(ConfigErrors, SweepsThatCannotBe) {
    EXPECT_EQ(
        error_of(cfg({{3, "instances = [1, 2]"}})),
        "[run] instances = [1, 2] (config.toml:3:13): cannot be swept (it applies to the whole run); must be "
        "an integer in [1, 4503599627370496]");
    EXPECT_EQ(
        error_of(cfg({{3, "common_random_numbers = [true, false]"}})),
        "[run] common_random_numbers = [true, false] (config.toml:3:25): cannot be swept (it applies to the "
        "whole run); must be true or false");
    EXPECT_EQ(
        error_of(cfg({{10, "epsilon = []"}})),
        "[learner] epsilon = [] (config.toml:10:11): an empty list sweeps over no values; give at least one");
    // 1001 x 1000 combinations.
    std::string big = "[";
    for (int i = 1; i <= 1000; ++i) big += std::to_string(i) + (i < 1000 ? "," : "]");
    EXPECT_EQ(error_of(cfg({{3, "seed = " + big}, {11, "eta = [0.5, " + big.substr(1)}})),
              "the sweep has more than 1000000 combinations; split it into several runs");
}

TEST(ConfigErrors, GeometryMismatch) {
    EXPECT_EQ(
        error_of(cfg({{9, "algorithm = \"ogd-ball\""}, {10, "#"}})),
        "[learner] algorithm = \"ogd-ball\" (config.toml:9:13): plays on the unit l2 ball (losses with "
        "||l||_2 <= 1), but [adversary] kind = \"bernoulli\" (config.toml:5:8) draws losses for the simplex "
        "(experts, losses in [0,1]^d); pair components of the same geometry");
}

TEST(ConfigErrors, FilesAndSharedOnlyKinds) {
    const auto dir = std::filesystem::temp_directory_path() / "dpr_config_errors_files";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "losses.csv") << "0,1\n";
    const std::string cfg_path = (dir / "exp.toml").string();
    auto write = [&](const std::string& adversary_lines) {
        std::ofstream(cfg_path) << "[run]\nrounds = 1\n[adversary]\nkind = \"file\"\n" + adversary_lines +
                                       "[learner]\nalgorithm = \"hedge\"\n";
    };
    auto error = [&](const std::vector<std::string>& sets, const ConfigInputs& in) -> std::string {
        try {
            load_config(cfg_path, sets, in);
        } catch (const ConfigError& e) {
            return e.what();
        }
        return "(no error)";
    };
    const std::string missing = (dir / "nope.csv").lexically_normal().string();
    write("path = \"nope.csv\"\n");
    EXPECT_EQ(error({}, fake_inputs()),
              "[adversary] path = \"nope.csv\" (" + cfg_path + ":5:8): no such file: " + missing);

    write("path = \"losses.csv\"\nd = 3\n");
    ConfigInputs in = fake_inputs();
    in.file_dimension = [](const std::string&) { return 2u; };
    EXPECT_EQ(error({}, in), "[adversary] d = 3 (" + cfg_path +
                                 ":6:5): does not match the file, which has d = 2 "
                                 "([adversary] path = \"losses.csv\" (" +
                                 cfg_path + ":5:8))");
    EXPECT_EQ(
        error({"adversary.per_instance=true", "adversary.d=2"}, in),
        "[adversary] per_instance = true (--set adversary.per_instance=true): kind \"file\" has one loss "
        "sequence shared by all instances; per_instance must be false");
    in.file_dimension = [](const std::string& path) -> std::uint32_t {
        throw std::runtime_error(path + ":1:3: not a number");
    };
    const std::string data = (dir / "losses.csv").lexically_normal().string();
    EXPECT_EQ(error({}, in),
              "[adversary] path = \"losses.csv\" (" + cfg_path + ":5:8): " + data + ":1:3: not a number");
    std::filesystem::remove_all(dir);

    try {
        load_config((dir / "missing.toml").string(), {}, fake_inputs());
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()), "cannot read config file " + (dir / "missing.toml").string() +
                                             ": No such file or directory");
    }
}

// ---- former names of keys (KeySpec::alias) ---------------------------------------------------------------------

namespace {

/// A learner whose key `mechanism` was once called `tree` (as the prefix-sum learners' key), and the same learner
/// before the rename.
struct FakeRenamed {
    static constexpr const char* kName = "dp-ftrl-experts";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, "", "privacy parameter", true},
        {"mechanism", KeyType::Choice, "padded", 0, 1, "padded|binary", "prefix noise", false, false, "tree"},
    };
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
};
struct FakeBeforeRename {
    static constexpr const char* kName = "dp-ftrl-experts";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, "", "privacy parameter", true},
        {"tree", KeyType::Choice, "padded", 0, 1, "padded|binary", "prefix noise"},
    };
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
};

template <class L>
ConfigInputs inputs_with() {
    ConfigInputs in = fake_inputs();
    in.learners = describe_all<TypeList<L>>("learner");
    return in;
}

const std::string kRenamedHead = "[run]\nrounds = 100\ncommon_random_numbers = false\n[adversary]\nkind = "
                                 "\"bernoulli\"\nd = 4\n[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\n";

} // namespace

TEST(ConfigAliases, AKeyGivenByItsFormerNameIsReadAsTheKey) {
    const ConfigInputs in = inputs_with<FakeRenamed>();
    const Config c = parse(kRenamedHead + "tree = \"binary\"\n", {}, in);
    ASSERT_EQ(c.points.size(), 1u);
    const Point& p = c.points[0];
    EXPECT_TRUE(p.learner_values.given[1]);
    EXPECT_EQ(p.learner_values.num[1], 1.0);
    bool named = false;
    for (const auto& [k, v] : p.settings) {
        EXPECT_NE(k, "learner.tree") << "outputs name the key by its name";
        named = named || (k == "learner.mechanism" && v == "binary");
    }
    EXPECT_TRUE(named);
    // Swept under the former name: the sweep is the key's.
    const Config s = parse(kRenamedHead + "tree = [\"padded\", \"binary\"]\n", {}, in);
    EXPECT_EQ(s.points.size(), 2u);
    EXPECT_EQ(s.swept_keys, std::vector<std::string>{"learner.mechanism"});
    // --set under either name replaces the file's value under either name.
    const auto chosen = [&](const std::string& line, const std::string& set) {
        return parse(kRenamedHead + line, {set}, in).points[0].learner_values.num[1];
    };
    EXPECT_EQ(chosen("mechanism = \"padded\"\n", "learner.tree=binary"), 1.0);
    EXPECT_EQ(chosen("tree = \"binary\"\n", "learner.mechanism=padded"), 0.0);
    // A bad value given under the former name is reported at its place, and says that the name written is the former
    // name of the key the message names (issue 47: it named `mechanism` only, a key the file does not contain).
    EXPECT_EQ(error_of(kRenamedHead + "tree = \"bianry\"\n", {}, in),
              "[learner] mechanism = \"bianry\" (config.toml:10:8; tree is the former name of mechanism): must be one "
              "of \"padded\", \"binary\"; did you mean \"binary\"?");
}

// Every message about a value written under the former name says so: a bad value given with --set under it, an
// error of the component's check() (here a sweep that cannot be read), a key of another algorithm. Given under the
// key's name, the messages are as before.
TEST(ConfigAliases, EveryErrorAboutAValueWrittenUnderTheFormerNameSaysItIsTheFormerName) {
    const ConfigInputs in = inputs_with<FakeRenamed>();
    const std::string note = "tree is the former name of mechanism";
    const std::string set = error_of(kRenamedHead, {"learner.tree=bianry"}, in);
    EXPECT_EQ(set, "[learner] mechanism = \"bianry\" (--set learner.tree=bianry; " + note +
                       "): must be one of \"padded\", \"binary\"; did you mean \"binary\"?");
    const std::string swept = error_of(kRenamedHead + "tree = [\"padded\", 3]\n", {}, in);
    EXPECT_EQ(swept.rfind("[learner] mechanism = 3 (config.toml:10:", 0), 0u) << swept;
    EXPECT_NE(swept.find("; " + note + "): must be one of"), std::string::npos) << swept;
    // Written under the key's name: no note. --set under the name replaces a value the file wrote under the former one,
    // and the message is then about the --set argument alone.
    const std::string plain = error_of(kRenamedHead + "mechanism = \"bianry\"\n", {}, in);
    EXPECT_EQ(plain.find("former name"), std::string::npos) << plain;
    const std::string replaced = error_of(kRenamedHead + "tree = \"binary\"\n", {"learner.mechanism=bianry"}, in);
    EXPECT_EQ(replaced.find("former name"), std::string::npos) << replaced;
    // A key of another algorithm, written under its former name.
    ConfigInputs two = fake_inputs();
    two.learners = describe_all<TypeList<FakeRenamed, FakeHedge>>("learner");
    const std::string other = error_of("[run]\nrounds = 100\n[adversary]\nkind = \"bernoulli\"\nd = 4\n[learner]\n"
                                       "algorithm = \"hedge\"\ntree = \"binary\"\n",
                                       {}, two);
    EXPECT_NE(other.find("[learner] mechanism (config.toml:8:1; " + note + "): not a key of algorithm \"hedge\""),
              std::string::npos)
        << other;
}

TEST(ConfigAliases, BothNamesInOneFileAreRefused) {
    const std::string both = kRenamedHead + "tree = \"binary\"\nmechanism = \"padded\"\n";
    EXPECT_EQ(error_of(both, {}, inputs_with<FakeRenamed>()),
              "[learner] tree (config.toml:10:1) and [learner] mechanism (config.toml:11:1) are one key (tree is the "
              "former name of mechanism); give it once");
}

// Without common random numbers a point's stream is a hash of its settings (docs/RANDOMNESS.md §5): renaming a key
// must not change it, or every such run made before the rename would change its numbers.
TEST(ConfigAliases, ARenamedKeyKeepsThePointsStreams) {
    for (const char* value : {"padded", "binary"}) {
        const std::string text = kRenamedHead + "tree = \"" + value + "\"\n";
        const Config before = parse(text, {}, inputs_with<FakeBeforeRename>());
        const Config after = parse(text, {}, inputs_with<FakeRenamed>());
        ASSERT_EQ(before.points.size(), 1u);
        ASSERT_EQ(after.points.size(), 1u);
        EXPECT_NE(after.points[0].stream, 0u);
        EXPECT_EQ(after.points[0].stream, before.points[0].stream) << value;
    }
}

// ---- "auto" --------------------------------------------------------------------------------------------------------

// A number (or list) whose default is "auto" is computed by the component when it is left out (docs/KEYS.md lists
// its default as auto): writing "auto" must mean the same, not be refused (issue 47: blt_buffers = "auto" was
// refused, "must be an integer in [1, 6]"). The point is the one without the key: not given, the same settings, the
// same stream key.
TEST(ConfigAuto, TheStringAutoForAKeyWhoseDefaultIsAutoIsTheKeyLeftOut) {
    const std::string head = "[run]\nrounds = 100\ncommon_random_numbers = false\n[adversary]\nkind = \"bernoulli\"\n"
                             "d = 4\n";
    const std::string learner = "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\n";
    const Config left_out = parse(head + learner);
    for (const auto& [adversary, learner_line] :
         {std::pair<std::string, std::string>{"", "eta = \"auto\"\n"}, {"best = \"auto\"\n", ""}}) {
        SCOPED_TRACE(adversary + learner_line);
        const Config c = parse(head + adversary + learner + learner_line);
        ASSERT_EQ(c.points.size(), 1u);
        const Point& p = c.points[0];
        for (int i = 0; i < kMaxKeys; ++i) {
            EXPECT_EQ(p.learner_values.given[i], left_out.points[0].learner_values.given[i]) << i;
            EXPECT_EQ(p.adversary_values.given[i], left_out.points[0].adversary_values.given[i]) << i;
        }
        EXPECT_EQ(p.settings, left_out.points[0].settings);
        EXPECT_EQ(p.stream, left_out.points[0].stream);
    }
    // A list-valued key too, and through --set.
    const Config sw = parse(head + learner, {"adversary.kind=switching", "adversary.switch_at=auto"});
    ASSERT_EQ(sw.points.size(), 1u);
    EXPECT_FALSE(sw.points[0].adversary_values.given[0]);
}

TEST(ConfigAuto, OtherStringsAreRefusedNamingAutoAndKeysWithoutAnAutoDefaultRefuseIt) {
    EXPECT_EQ(error_of(cfg({{11, "eta = \"fast\""}})),
              "[learner] eta = \"fast\" (config.toml:11:7): must be a number in (0, inf] or \"auto\"");
    EXPECT_EQ(error_of(cfg({{7, "best = \"first\""}})),
              "[adversary] best = \"first\" (config.toml:7:8): must be an integer in [0, 4294967294] or \"auto\"");
    // A number out of range says nothing of auto (the user meant a number).
    EXPECT_EQ(error_of(cfg({{11, "eta = -1"}})), "[learner] eta = -1 (config.toml:11:7): must be a number in (0, inf]");
    // epsilon is required, delta defaults to 0: "auto" is not a value of theirs.
    EXPECT_EQ(error_of(cfg({{10, "epsilon = \"auto\""}})),
              "[learner] epsilon = \"auto\" (config.toml:10:11): must be a number in (0, inf]");
    EXPECT_EQ(error_of(cfg({{11, "delta = \"auto\""}})),
              "[learner] delta = \"auto\" (config.toml:11:9): must be a number in [0, 1)");
}
