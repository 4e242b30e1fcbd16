// Every documented key range, extremes included: no accepted value may crash or produce a NaN.
//
// For every learner and every adversary kind, each of its keys (from the same declarations that
// `dpregret run --list-keys` prints) is set, one at a time, to the ends of its valid range, the smallest
// value above a lower end, the largest finite value, and a few odd values; then [run] rounds and
// [adversary] d at their small extremes and their maxima. Each case goes through the library steps of
// `dpregret run` (host/api/pipeline.hpp) in a forked child, with a tiny T and 2 instances:
//   accepted  -> the run completes and every written statistic is finite (finish_point checks them), or
//   refused   -> a ConfigError/UsageError whose message names the key (exit code 2),
// and never a signal, a hang, a NonFiniteResult or another exception (exit code 1). Values just outside
// each range must be refused naming the key. A few cases also run the real binary, for crash detection
// the way a user meets it. All failures of a component are listed, one line each, before the test fails.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/run_cli.hpp"
#include "host/cli/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/config/detail.hpp"
#include "host/results/memory_estimate.hpp"
#include "host/results/outputs.hpp"
#include "host/io/csv.hpp"

using dpr::KeySpec;
using dpr::KeyType;
using dpr::config::ComponentInfo;
namespace fs = std::filesystem;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMax = std::numeric_limits<double>::max();

/// Memory limit of the in-process runs: a value that asks for more is refused (exit 2), the same on
/// every machine.
constexpr std::uint64_t kMemoryLimit = std::uint64_t{2} << 30;
/// Horizons above this are only validated and estimated, not simulated.
constexpr std::uint64_t kMaxSimulatedT = 100000;

const dpr::config::ConfigInputs& inputs() {
    static const dpr::config::ConfigInputs in = dpr::api::run_config_inputs();
    return in;
}

std::string toml_number(double x) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    std::string s = dpr::config::detail::format_number(x);
    // TOML floats need a digit after a dot or an exponent; integers are fine as they are.
    return s;
}

std::string toml_integer(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", x);
    return buf;
}

/// One value to try for a key: its TOML text, and whether the key's declared range accepts it.
struct Value {
    std::string text;
    bool in_range;
};

/// The values of the list for one key: both ends, the smallest value above the lower end, the
/// largest finite value, odd ones in between; and values just outside (in_range = false).
std::vector<Value> values_for(const KeySpec& k, std::uint64_t T) {
    std::vector<Value> v;
    auto add = [&](double x, bool in) { v.push_back({toml_number(x), in}); };
    switch (k.type) {
    case KeyType::Real: {
        const double lo = k.min, hi = k.max;
        if (std::isfinite(lo)) {
            if (!k.min_exclusive) add(lo, true);
            else add(lo, false);
            const double above = std::nextafter(lo, kInf);
            add(above, true);                         // 5e-324 for (0, ...]
            if (lo == 0) add(1e-300, true), add(1e-12, true);
            if (lo == 0 && hi >= 1) add(1.0 - std::ldexp(1.0, -53), true);
            add(lo - std::max(1e-9 * std::fabs(lo), 1e-300), false);
        } else {
            add(-kMax, true);
        }
        if (std::isinf(hi)) {
            add(kInf, true);
            v.push_back({"\"inf\"", true});
            add(kMax, true), add(1e300, true), add(1e15, true);
        } else {
            add(hi, true);
            add(std::nextafter(hi, -kInf), true);
            add(hi + std::max(1e-9 * std::fabs(hi), 1e-300), false);
        }
        if (lo <= 0.5 && 0.5 <= hi) add(0.5, true);
        if (lo <= 1 && 1 <= hi && !(k.min_exclusive && lo == 1)) add(1.0, true);
        add(std::nan(""), false);
        add(-kInf, false);
        break;
    }
    case KeyType::Int: {
        const double lo = k.min, hi = std::min(k.max, 9007199254740992.0);
        for (double x : {lo, lo + 1, hi - 1, hi, 2.0})
            if (x >= lo && x <= hi) v.push_back({toml_integer(x), true});
        v.push_back({toml_integer(lo - 1), false});
        if (std::isfinite(k.max) && k.max < 9e15) v.push_back({toml_integer(k.max + 1), false});
        v.push_back({"1.5", false});
        break;
    }
    case KeyType::Bool:
        v.push_back({"true", true});
        v.push_back({"false", true});
        v.push_back({"1", false});
        break;
    case KeyType::Choice: {
        std::string c = k.choices;
        for (std::size_t a = 0; a <= c.size();) {
            const std::size_t b = std::min(c.find('|', a), c.size());
            v.push_back({"\"" + c.substr(a, b - a) + "\"", true});
            a = b + 1;
        }
        v.push_back({"\"no-such-choice\"", false});
        break;
    }
    case KeyType::RealList: {
        // Element ranges are checked per element; check() may add rules (switch_at: integers in [1, T],
        // strictly increasing), so only the element range decides in_range here.
        const std::string last = toml_integer(static_cast<double>(T));
        v.push_back({"[]", true});
        v.push_back({"[" + toml_number(std::max(k.min, 1.0)) + "]", true});
        v.push_back({"[" + last + "]", true});
        v.push_back({"[1, " + last + "]", true});
        v.push_back({"[" + toml_number(k.max) + "]", true});
        v.push_back({"[nan]", false});
        break;
    }
    case KeyType::Path:
        break; // loss files: FuzzLossFiles below
    }
    return v;
}

/// A value that makes a required key valid, for the baseline of the other keys.
std::string baseline_value(const KeySpec& k) {
    switch (k.type) {
    case KeyType::Real:
        if (k.min <= 1 && 1 <= k.max && !(k.min_exclusive && k.min == 1)) return "1.0";
        return toml_number(std::isfinite(k.max) ? (k.min + k.max) / 2 : k.min + 1);
    case KeyType::Int:
        return toml_integer(k.min);
    case KeyType::Bool:
        return "false";
    case KeyType::Choice: {
        const std::string c = k.choices;
        return "\"" + c.substr(0, c.find('|')) + "\"";
    }
    case KeyType::RealList:
        return "[]";
    case KeyType::Path:
        return "\"\"";
    }
    return "";
}

const ComponentInfo* find(const std::vector<ComponentInfo>& list, const std::string& name) {
    for (const ComponentInfo& c : list)
        if (c.name == name) return &c;
    return nullptr;
}

/// The partner of a component: a learner's default adversary and an adversary's default learner for
/// their shared loss set.
/// An adversary whose losses learner L is charged on (its geometry, and a loss family it accepts).
std::string default_adversary(const ComponentInfo& L) {
    const dpr::Geometry g = L.geometry;
    if (g == dpr::Geometry::Polytope) return "bco-linear";
    if (!(L.loss_families & dpr::loss_bit(dpr::LossFamily::Linear))) return "squared-realizable";
    return g == dpr::Geometry::Simplex ? "bernoulli" : g == dpr::Geometry::Ball ? "unit-vectors" : "cube-coordinate";
}
/// The [learner] lines of a learner charged on adversary A's losses.
std::string default_learner(const ComponentInfo& A) {
    const dpr::Geometry g = A.geometry;
    if (g == dpr::Geometry::Polytope) return "algorithm = \"garber-kretzu\"\n";
    if (A.loss != dpr::LossFamily::Linear) return "algorithm = \"dp-ftrl-smooth\"\nepsilon = 1.0\ndelta = 1e-6\n";
    return std::string("algorithm = \"") +
           (g == dpr::Geometry::Simplex ? "hedge" : g == dpr::Geometry::Ball ? "ftrl-l2-ball" : "ftrl-l2-cube") + "\"\n";
}

/// Lines "key = value" for the required keys of `c`, except `skip`.
std::string required_keys(const ComponentInfo& c, const std::string& skip) {
    std::string out;
    for (int i = 0; i < c.nkeys; ++i) {
        const KeySpec& k = c.keys[i];
        if ((k.default_text == nullptr || *k.default_text == '\0') && skip != k.name && k.type != KeyType::Path)
            out += std::string(k.name) + " = " + baseline_value(k) + "\n";
    }
    return out;
}

/// The learner lines every learner case starts from: the required keys, and delta = 1e-6 for a learner that
/// has a delta key (its default 0 is refused by the Gaussian learners, dp-ftpl-*, which would then never
/// simulate: every case of theirs would pass as a "refusal naming a key").
std::string baseline_keys(const ComponentInfo& L, const std::string& skip) {
    std::string out = required_keys(L, skip);
    for (int i = 0; i < L.nkeys; ++i)
        if (std::string(L.keys[i].name) == "delta" && skip != "delta") out += "delta = 1e-6\n";
    return out;
}

struct Case {
    std::string what;        ///< "eta = inf", "d = 1", ...
    std::string toml;
    std::string source;      ///< file name for positions (a path in a temp dir for loss files)
    bool expect_refusal = false;
    bool expect_run = false; ///< a baseline case: must run (a refusal means the other cases test nothing)
    std::vector<std::string> names; ///< a refusal must name one of these ("[learner] eta", ...)
};

enum class Outcome { Ok, Refused, NonFinite, OtherError, Crash, Hang };

struct Result {
    Outcome outcome;
    std::string message;
};

/// The steps of `dpregret run`, in this process.
Result run_in_process(const Case& c) {
    using namespace dpr;
    try {
        const config::Config cfg = config::parse_config(c.toml, c.source, {}, inputs());
        std::vector<PointRecord> recs = api::resolve_points(cfg);
        api::check_launch(cfg, Backend::Cpu);
        api::MemoryLimit limit;
        limit.bytes = kMemoryLimit;
        limit.source = "the fuzz test's limit";
        api::check_memory(estimate_run_memory(cfg, recs, 1, PointJob{}.chunk_bytes, false), limit);
        for (const config::Point& p : cfg.points)
            if (p.problem.T > kMaxSimulatedT) return {Outcome::Ok, "validated only (T too large to simulate)"};
        api::SimulateOptions o;
        o.backend = Backend::Cpu;
        o.threads = 1;
        if (!api::simulate_points(cfg, recs, o)) return {Outcome::OtherError, "interrupted"};
        return {Outcome::Ok, ""};
    } catch (const config::ConfigError& e) {
        return {Outcome::Refused, e.what()};
    } catch (const cli::UsageError& e) {
        return {Outcome::Refused, e.what()};
    } catch (const NonFiniteResult& e) {
        return {Outcome::NonFinite, e.what()};
    } catch (const std::exception& e) {
        return {Outcome::OtherError, std::string(typeid(e).name()) + ": " + e.what()};
    }
}

/// run_in_process() in a forked child, so that a crash or a hang is a result, not the end of the test.
Result run_isolated(const Case& c, int timeout_seconds = 60) {
    int fd[2];
    if (::pipe(fd) != 0) return {Outcome::OtherError, "pipe failed"};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fd[0]);
        const Result r = run_in_process(c);
        const std::string msg = std::to_string(static_cast<int>(r.outcome)) + "\n" + r.message;
        std::size_t off = 0;
        while (off < msg.size()) {
            const ssize_t n = ::write(fd[1], msg.data() + off, msg.size() - off);
            if (n <= 0) break;
            off += static_cast<std::size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fd[1]);
    std::string out;
    char buf[4096];
    const auto start = std::chrono::steady_clock::now();
    int status = 0;
    bool done = false;
    while (!done) {
        pollfd p{fd[0], POLLIN, 0};
        const int ready = ::poll(&p, 1, 100);
        if (ready > 0) {
            const ssize_t n = ::read(fd[0], buf, sizeof buf);
            if (n > 0) out.append(buf, static_cast<std::size_t>(n));
            else done = true; // EOF: the child has finished (or died)
        }
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(timeout_seconds)) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            ::close(fd[0]);
            return {Outcome::Hang, "no result within " + std::to_string(timeout_seconds) + " s"};
        }
    }
    ::close(fd[0]);
    ::waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) return {Outcome::Crash, std::string("signal ") + strsignal(WTERMSIG(status))};
    const std::size_t nl = out.find('\n');
    if (nl == std::string::npos) return {Outcome::Crash, "no result from the child"};
    return {static_cast<Outcome>(std::stoi(out.substr(0, nl))), out.substr(nl + 1)};
}

/// The verdict on one case: "" if it behaved, else a one-line description.
std::string judge(const Case& c, const Result& r) {
    const auto names_one = [&] {
        for (const std::string& n : c.names)
            if (r.message.find(n) != std::string::npos) return true;
        return false;
    };
    switch (r.outcome) {
    case Outcome::Ok:
        if (c.expect_refusal) return "accepted a value outside the documented range";
        return "";
    case Outcome::Refused:
        if (c.expect_run) return "the baseline was refused (so the cases built on it test nothing): " + r.message;
        if (!names_one()) return "refused without naming the key: " + r.message;
        return "";
    case Outcome::NonFinite:
        return "NaN/inf result (exit 1): " + r.message;
    case Outcome::OtherError:
        return "exit 1: " + r.message;
    case Outcome::Crash:
        return "crash: " + r.message;
    case Outcome::Hang:
        return "hang: " + r.message;
    }
    return "?";
}

std::string run_section(std::uint64_t T, const std::string& extra = "") {
    return "[run]\nseed = 5\ninstances = 2\nrounds = " + std::to_string(T) + "\ncheckpoints = 3\n" + extra;
}

/// All the cases of one learner.
std::vector<Case> learner_cases(const ComponentInfo& L) {
    std::vector<Case> cases;
    const std::string adv = default_adversary(L);
    const std::uint64_t T = 5;
    const bool net = std::string(L.name) == "net-oco"; // a rho-net of the ball lives in d in {1, 2}
    const std::string d = net ? "2" : "3";
    const auto make = [&](const std::string& what, const std::string& run, const std::string& adversary,
                          const std::string& learner_lines) {
        Case c;
        c.what = what;
        c.source = "fuzz.toml";
        c.toml = run + "[adversary]\nkind = \"" + adv + "\"\n" + adversary + "[learner]\nalgorithm = \"" + L.name +
                 "\"\n" + learner_lines;
        return c;
    };
    std::vector<std::string> all_names = {"[adversary] d"};
    for (const KeySpec& k : dpr::config::run_keys()) all_names.push_back(std::string("[run] ") + k.name);
    for (int i = 0; i < L.nkeys; ++i) all_names.push_back(std::string("[learner] ") + L.keys[i].name);
    for (int i = 0; i < L.nkeys; ++i) {
        const KeySpec& k = L.keys[i];
        for (const Value& v : values_for(k, T)) {
            Case c = make(std::string(k.name) + " = " + v.text, run_section(T), "d = " + d + "\n",
                          baseline_keys(L, k.name) + k.name + " = " + v.text + "\n");
            c.expect_refusal = !v.in_range;
            c.names = v.in_range ? all_names : std::vector<std::string>{std::string("[learner] ") + k.name};
            cases.push_back(c);
        }
    }
    // Every [run] key but rounds and instances (below), with default learner keys: the seed, the
    // checkpoints, and the settings of the arithmetic and the executors.
    for (const KeySpec& k : dpr::config::run_keys()) {
        const std::string name = k.name;
        if (name == "rounds" || name == "instances") continue;
        for (const Value& v : values_for(k, T)) {
            Case c = make("[run] " + name + " = " + v.text, "[run]\ninstances = 2\nrounds = 5\n" + name + " = " + v.text + "\n",
                          "d = " + d + "\n", baseline_keys(L, ""));
            c.expect_refusal = !v.in_range;
            c.names = v.in_range ? all_names : std::vector<std::string>{"[run] " + name};
            cases.push_back(c);
        }
    }
    // The common keys at their extremes, with default learner keys.
    for (const std::string dv : {"1", "2", "64", "2147483648"}) {
        Case c = make("d = " + dv, run_section(T), "d = " + dv + "\n", baseline_keys(L, ""));
        c.names = all_names;
        c.expect_run = dv == "2" || (dv == "64" && !net);
        cases.push_back(c);
    }
    for (const std::uint64_t t : {1ull, 2ull, 4294967295ull}) {
        Case c = make("rounds = " + std::to_string(t), run_section(t), "d = " + d + "\n", baseline_keys(L, ""));
        c.names = all_names;
        c.expect_run = t == 2;
        cases.push_back(c);
    }
    {
        Case c = make("instances = 4294967295", "[run]\ninstances = 4294967295\nrounds = 5\n", "d = " + d + "\n",
                      baseline_keys(L, ""));
        c.names = all_names;
        cases.push_back(c);
    }
    return cases;
}

/// All the cases of one adversary kind (paired with the default learner of its loss set).
std::vector<Case> adversary_cases(const ComponentInfo& A) {
    std::vector<Case> cases;
    const std::string learner = default_learner(A);
    const std::uint64_t T = 6;
    std::vector<std::string> all_names = {"[adversary] d", "[run] rounds", "[adversary] per_instance"};
    for (int i = 0; i < A.nkeys; ++i) all_names.push_back(std::string("[adversary] ") + A.keys[i].name);
    for (const bool per_instance : {false, true}) {
        if (per_instance && A.shared_only) continue;
        const std::string pi = per_instance ? "per_instance = true\n" : "";
        for (int i = 0; i < A.nkeys; ++i) {
            const KeySpec& k = A.keys[i];
            for (const Value& v : values_for(k, T)) {
                Case c;
                c.what = std::string(k.name) + " = " + v.text + (per_instance ? " (per instance)" : "");
                c.source = "fuzz.toml";
                c.toml = run_section(T) + "[adversary]\nkind = \"" + A.name + "\"\nd = 4\n" + pi + required_keys(A, k.name) +
                         k.name + " = " + v.text + "\n[learner]\n" + learner;
                c.expect_refusal = !v.in_range;
                c.names = v.in_range ? all_names : std::vector<std::string>{std::string("[adversary] ") + k.name};
                cases.push_back(c);
            }
        }
        for (const std::string dv : {"1", "2", "2147483648"}) {
            if (A.nkeys > 0 && A.keys[0].type == KeyType::Path) break; // d comes from the file
            Case c;
            c.what = "d = " + dv + (per_instance ? " (per instance)" : "");
            c.source = "fuzz.toml";
            c.toml = run_section(T) + "[adversary]\nkind = \"" + A.name + "\"\nd = " + dv + "\n" + pi +
                     required_keys(A, "") + "[learner]\n" + learner;
            c.names = all_names;
            cases.push_back(c);
        }
    }
    return cases;
}

std::string test_name(const std::string& component) {
    std::string s = component;
    for (char& ch : s)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return s;
}

void run_cases(const std::string& component, const std::vector<Case>& cases) {
    ASSERT_FALSE(cases.empty());
    std::vector<std::string> failures;
    std::size_t accepted = 0, refused = 0;
    for (const Case& c : cases) {
        const Result r = run_isolated(c);
        accepted += r.outcome == Outcome::Ok;
        refused += r.outcome == Outcome::Refused;
        const std::string verdict = judge(c, r);
        if (!verdict.empty()) failures.push_back(component + ": " + c.what + ": " + verdict);
    }
    std::string all;
    for (const std::string& f : failures) all += "\n  " + f;
    EXPECT_TRUE(failures.empty()) << failures.size() << " of " << cases.size() << " cases misbehave (" << accepted
                                  << " ran, " << refused << " were refused):" << all;
    EXPECT_GT(accepted, 0u) << component << ": not one case ran";
}

/// The first field of summary.csv that must be finite and is not ("" if none): mean, q05..q95,
/// realized_mean, comparator_mean, and std, sem, realized_sem when n >= 2.
std::string non_finite_field(const std::string& csv) {
    std::istringstream in(csv);
    std::string line;
    if (!std::getline(in, line)) return "no summary.csv";
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::istringstream fields(line);
        for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
        if (f.size() < 21) return "short line: " + line;
        std::vector<std::size_t> cols = {8, 11, 12, 13, 14, 15, 18, 20};
        if (std::stoul(f[7]) >= 2) cols.insert(cols.end(), {9, 10, 19});
        for (std::size_t c : cols)
            if (!std::isfinite(std::strtod(f[c].c_str(), nullptr))) return "column " + std::to_string(c) + " of " + line;
    }
    return "";
}

std::vector<std::string> learner_names() {
    std::vector<std::string> n;
    for (const ComponentInfo& c : inputs().learners) n.push_back(c.name);
    return n;
}
std::vector<std::string> adversary_names() {
    std::vector<std::string> n;
    for (const ComponentInfo& c : inputs().adversaries) n.push_back(c.name);
    return n;
}

} // namespace

class FuzzLearner : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzLearner, EveryDocumentedValueRunsFiniteOrIsRefusedNamingTheKey) {
    const ComponentInfo* L = find(inputs().learners, GetParam());
    ASSERT_NE(L, nullptr);
    run_cases(L->name, learner_cases(*L));
}

INSTANTIATE_TEST_SUITE_P(AllLearners, FuzzLearner, ::testing::ValuesIn(learner_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return test_name(i.param); });

class FuzzAdversary : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzAdversary, EveryDocumentedValueRunsFiniteOrIsRefusedNamingTheKey) {
    const ComponentInfo* A = find(inputs().adversaries, GetParam());
    ASSERT_NE(A, nullptr);
    const std::vector<Case> cases = adversary_cases(*A);
    if (A->nkeys > 0 && A->keys[0].type == KeyType::Path) GTEST_SKIP() << "loss files: FuzzLossFiles";
    run_cases(A->name, cases);
}

INSTANTIATE_TEST_SUITE_P(AllAdversaries, FuzzAdversary, ::testing::ValuesIn(adversary_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return test_name(i.param); });

// Every learner on a loss file of its set holding the extreme valid losses: the corners of the set,
// zero rows, subnormal entries.
TEST(FuzzLossFiles, EveryLearnerRunsOnExtremeValidLossFiles) {
    dpr::test::TempDir dir;
    const double tiny = std::numeric_limits<double>::denorm_min();
    const std::vector<std::vector<double>> simplex = {{1, 1, 1}, {0, 0, 0}, {tiny, 1, 0}, {1, 0, tiny}, {0.5, 1e-300, 1}};
    const std::vector<std::vector<double>> ball = {{1, 0, 0}, {0, -1, 0}, {0, 0, 0}, {tiny, -tiny, 0}, {0.6, 0, -0.8}};
    const std::vector<std::vector<double>> disc = {{1, 0}, {0, -1}, {0, 0}, {tiny, -tiny}, {0.6, -0.8}}; // net-oco: d = 2
    const std::vector<std::vector<double>> cube = {{1, 0, 0}, {0, -1, 0}, {0, 0, 0}, {0.5, -0.25, 0.25}, {tiny, 0, -1 + tiny}};
    const auto write = [&](const std::string& name, const std::vector<std::vector<double>>& rows) {
        std::string csv;
        for (const auto& r : rows) {
            for (std::size_t i = 0; i < r.size(); ++i) csv += (i ? "," : "") + dpr::io::format_double(r[i]);
            csv += "\n";
        }
        dir.write(name, csv);
    };
    write("s.csv", simplex);
    write("b.csv", ball);
    write("b2.csv", disc);
    write("c.csv", cube);
    std::vector<std::string> failures;
    for (const ComponentInfo& L : inputs().learners) {
        if (!(L.loss_families & dpr::loss_bit(dpr::LossFamily::Linear))) continue; // loss files hold linear losses
        const std::string kind = L.geometry == dpr::Geometry::Simplex ? "file" : L.geometry == dpr::Geometry::Ball ? "file-ball" : "file-cube";
        const std::string file = L.geometry == dpr::Geometry::Simplex ? "s.csv"
                                 : std::string(L.name) == "net-oco"      ? "b2.csv"
                                 : L.geometry == dpr::Geometry::Ball     ? "b.csv"
                                                                         : "c.csv";
        Case c;
        c.what = kind;
        c.source = dir.file("fuzz.toml");
        c.toml = "[run]\ninstances = 2\nrounds = 5\ncheckpoints = 5\n[adversary]\nkind = \"" + kind + "\"\npath = \"" + file +
                 "\"\n[learner]\nalgorithm = \"" + L.name + "\"\n" + baseline_keys(L, "");
        c.names = {"[learner]", "[adversary]", "[run]"};
        const std::string verdict = judge(c, run_isolated(c));
        if (!verdict.empty()) failures.push_back(L.name + " on " + kind + ": " + verdict);
    }
    std::string all;
    for (const std::string& f : failures) all += "\n  " + f;
    EXPECT_TRUE(failures.empty()) << all;
}

// The real binary, for crash detection as a user meets it: every learner at d = 1 and T = 1 and at its
// keys' largest values (one key at a time is what the in-process cases do; here all at once).
TEST(FuzzBinary, NoLearnerCrashesTheBinaryAtItsExtremes) {
    dpr::test::TempDir dir;
    std::vector<std::string> failures;
    for (const ComponentInfo& L : inputs().learners) {
        std::string maxed;
        for (int i = 0; i < L.nkeys; ++i) {
            const KeySpec& k = L.keys[i];
            // the largest accepted value: below an exclusive maximum (delta < 1), the double just under it
            const double top = k.max_exclusive ? std::nextafter(k.max, -std::numeric_limits<double>::infinity()) : k.max;
            if (k.type == KeyType::Real) maxed += std::string(k.name) + " = " + (std::isinf(top) ? "inf" : toml_number(top)) + "\n";
            if (k.type == KeyType::Int) maxed += std::string(k.name) + " = " + toml_integer(k.max) + "\n";
        }
        const std::string adv = default_adversary(L);
        int n = 0;
        for (const std::string& learner_lines : {baseline_keys(L, ""), maxed}) {
            const std::string name = "c" + std::to_string(n++) + ".toml";
            dir.write(name, "[run]\ninstances = 2\nrounds = 1\n[adversary]\nkind = \"" + adv + "\"\nd = " +
                                (L.geometry == dpr::Geometry::Simplex || L.geometry == dpr::Geometry::Polytope ? "2" : "1") + "\n[learner]\nalgorithm = \"" + L.name +
                                "\"\n" + learner_lines);
            const dpr::test::CliResult r = dpr::test::run_cli(dir, "run " + name + " --out o --quiet");
            const std::string bad = r.rc == 0 ? non_finite_field(dpr::test::slurp(dir.file("o/summary.csv"))) : "";
            fs::remove_all(dir.file("o"));
            if (!bad.empty())
                failures.push_back(L.name + (n == 1 ? " (defaults)" : " (every key at its maximum)") +
                                   ": exit 0 with a non-finite statistic: " + bad);
            if (r.rc != 0 && r.rc != 2)
                failures.push_back(L.name + (n == 1 ? " (defaults)" : " (every key at its maximum)") + ": exit " +
                                   std::to_string(r.rc) + (r.rc < 0 ? " (killed by a signal)" : "") + ": " + r.err);
            if (n == 1 && r.rc != 0) // the defaults must run, or this test exercises nothing of the learner
                failures.push_back(L.name + " (defaults): refused: " + r.err);
        }
    }
    std::string all;
    for (const std::string& f : failures) all += "\n  " + f;
    EXPECT_TRUE(failures.empty()) << all;
}
