// `dpregret run` at the limits the docs state: every accepted value either runs or is
// refused with exit code 2 naming the key; nothing is truncated, nothing that looks complete is left
// behind after a failure.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/run_cli.hpp"
#include "host/cli/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/io/csv.hpp"
#include "host/io/npy.hpp"
#include "kernels/adversaries/cube_coordinate.hpp"
#include "kernels/adversaries/unit_vectors.hpp"
#include "kernels/noise/samplers.hpp"
#include "kernels/rng/uniform.hpp"

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
        // More than one process holds (2^32 - 1): refused with the way out, never truncated to 32 bits.
        const CliResult r = run_cli(dir, "run big.toml --out out --quiet");
        EXPECT_EQ(r.rc, 2) << r.err;
        EXPECT_TRUE(contains(r.err, "[run] instances = 4294967296")) << r.err;
        EXPECT_TRUE(contains(r.err, "at most 4294967295")) << r.err;
        EXPECT_TRUE(contains(r.err, "--shard")) << r.err;
        EXPECT_FALSE(fs::exists(dir.file("out/summary.csv")));
        EXPECT_FALSE(fs::exists(dir.file("out/run.json")));
        dir.write("huge.toml", small_run("instances = 4503599627370497",
                                         "kind = \"bernoulli\"\nd = 2\nper_instance = " + per_instance + "\n"));
        const CliResult h = run_cli(dir, "run huge.toml --out out --quiet --shard 0/1000000");
        EXPECT_EQ(h.rc, 2) << h.err;
        EXPECT_TRUE(contains(h.err, "[1, 4503599627370496]")) << h.err;
    }
}

TEST(CliRunLimits, InstanceIdsNeverReachTheSharedSequenceId) {
    using dpr::api::check_instance_ids;
    EXPECT_NO_THROW(check_instance_ids(0, 1));
    EXPECT_NO_THROW(check_instance_ids(0, 4294967295ull));        // one process's most
    EXPECT_NO_THROW(check_instance_ids(4294967295ull, 1));        // id 2^32 - 1: block 1, word 0
    EXPECT_THROW(check_instance_ids(0, 4294967296ull), dpr::cli::UsageError);
    EXPECT_THROW(check_instance_ids(0, 0), dpr::cli::UsageError);
    // The counter word of every id is below 0xFFFFFFFF, the shared sequence's (docs/RANDOMNESS.md §2).
    for (const std::uint64_t g : {0ull, 4294967294ull, 4294967295ull, 4294967296ull, 8589934589ull, 8589934590ull,
                                  (1ull << 52) - 1}) {
        EXPECT_NE(dpr::instance_word(g), 0xFFFFFFFFu) << g;
        EXPECT_EQ(dpr::instance_block(g) * dpr::kIdsPerBlock + dpr::instance_word(g), g) << g;
    }
    EXPECT_EQ(dpr::instance_block(4294967294ull), 0u);
    EXPECT_EQ(dpr::instance_block(4294967295ull), 1u);
    EXPECT_EQ(dpr::block_stream(7, 0), 7u); // block 0 keeps the point's stream: old runs keep their numbers
    EXPECT_NE(dpr::block_stream(7, 1), 7u);
    EXPECT_NE(dpr::block_stream(7, 1), dpr::block_stream(7, 2));
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

// Item 11: loss files for every loss set. A file-ball / file-cube file holding exactly the rows that
// unit-vectors / cube-coordinate generate gives the same regret bit for bit (the learner's draws do not
// depend on the adversary), with a private, randomised learner too; a row outside the set is refused
// with its row number and norm; a `file` kind paired with a ball learner names the kind to use.
namespace {

template <class A>
void write_sequence_csv(const TempDir& dir, const std::string& name, std::uint32_t seed, std::uint32_t d,
                        std::uint64_t T) {
    const typename A::Params p = A::resolve(dpr::KeyValues{}, dpr::Problem{d, T, seed});
    const dpr::adversaries::SequenceCtx ctx{seed, 0, dpr::adversaries::kSharedSequence};
    std::string csv;
    std::vector<double> row(d);
    for (std::uint64_t t = 1; t <= T; ++t) {
        A::fill(p, ctx, t, row.data());
        for (std::uint32_t i = 0; i < d; ++i) csv += (i ? "," : "") + dpr::io::format_double(row[i]);
        csv += "\n";
    }
    dir.write(name, csv);
}

std::string column(const std::string& csv, std::size_t col) {
    std::istringstream in(csv);
    std::string out, line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string f;
        for (std::size_t c = 0; c <= col && std::getline(fields, f, ','); ++c) {
        }
        out += f + "\n";
    }
    return out;
}

} // namespace

TEST(CliLossFiles, BallAndCubeFilesReplayAGeneratedSequenceExactly) {
    TempDir dir;
    write_sequence_csv<dpr::adversaries::UnitVectors>(dir, "ball.csv", 5, 3, 60);
    write_sequence_csv<dpr::adversaries::CubeCoordinate>(dir, "cube.csv", 5, 4, 60);
    struct Case {
        std::string learner, generated, file_kind, file, d;
    };
    const std::vector<Case> cases = {
        {"algorithm = \"ftrl-l2-ball\"\n", "unit-vectors", "file-ball", "ball.csv", "3"},
        {"algorithm = \"dp-ftrl-sphere\"\nepsilon = 1\n", "unit-vectors", "file-ball", "ball.csv", "3"},
        {"algorithm = \"scrible-ball\"\n", "unit-vectors", "file-ball", "ball.csv", "3"},
        {"algorithm = \"ftrl-l2-cube\"\n", "cube-coordinate", "file-cube", "cube.csv", "4"},
        {"algorithm = \"dp-ftrl-cube\"\nepsilon = 1\n", "cube-coordinate", "file-cube", "cube.csv", "4"},
        {"algorithm = \"scrible-cube\"\n", "cube-coordinate", "file-cube", "cube.csv", "4"},
    };
    for (const Case& c : cases) {
        const std::string run = "[run]\nseed = 5\nrounds = 60\ninstances = 3\ncheckpoints = 4\n";
        dir.write("gen.toml", run + "[adversary]\nkind = \"" + c.generated + "\"\nd = " + c.d + "\n[learner]\n" + c.learner);
        dir.write("file.toml", run + "[adversary]\nkind = \"" + c.file_kind + "\"\npath = \"" + c.file +
                                   "\"\n[learner]\n" + c.learner);
        fs::remove_all(dir.file("gen"));
        fs::remove_all(dir.file("file"));
        const CliResult a = run_cli(dir, "run gen.toml --out gen --quiet");
        const CliResult b = run_cli(dir, "run file.toml --out file --quiet");
        ASSERT_EQ(a.rc, 0) << c.learner << a.err;
        ASSERT_EQ(b.rc, 0) << c.learner << b.err;
        EXPECT_EQ(slurp(dir.file("gen/final_regret.csv")), slurp(dir.file("file/final_regret.csv"))) << c.learner;
        const std::string sa = slurp(dir.file("gen/summary.csv")), sb = slurp(dir.file("file/summary.csv"));
        for (std::size_t col : {8u, 13u, 18u, 20u}) // mean, q50, realized_mean, comparator_mean
            EXPECT_EQ(column(sa, col), column(sb, col)) << c.learner << " column " << col;
    }
}

TEST(CliLossFiles, RowsOutsideTheLossSetAreRefusedWithTheRowAndTheNorm) {
    TempDir dir;
    const std::string run = "[run]\nrounds = 3\ninstances = 2\n";
    dir.write("ball.csv", "0.6,-0.8\n0.6,0.80001\n0,0\n");
    dir.write("b.toml", run + "[adversary]\nkind = \"file-ball\"\npath = \"ball.csv\"\n[learner]\nalgorithm = \"ftrl-l2-ball\"\n");
    CliResult r = run_cli(dir, "run b.toml --out out --quiet");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(contains(r.err, "[adversary] path = \"ball.csv\"")) << r.err;
    EXPECT_TRUE(contains(r.err, "row 2: ||l||_2 = 1.0000080")) << r.err;
    EXPECT_TRUE(contains(r.err, "must have ||l||_2 <= 1")) << r.err;
    // The same rows are fine for the ball but row 1 (||l||_1 = 1.4) is not in the cube's loss set.
    dir.write("ball_ok.csv", "0.6,-0.8\n0,1\n0,0\n");
    dir.write("c.toml", run + "[adversary]\nkind = \"file-cube\"\npath = \"ball_ok.csv\"\n[learner]\nalgorithm = \"ftrl-l2-cube\"\n");
    r = run_cli(dir, "run c.toml --out out --quiet");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(contains(r.err, "row 1: ||l||_1 = 1.4")) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("out/run.json")));
    dir.write("b2.toml", run + "[adversary]\nkind = \"file-ball\"\npath = \"ball_ok.csv\"\n[learner]\nalgorithm = \"ftrl-l2-ball\"\n");
    r = run_cli(dir, "run b2.toml --out ok --quiet");
    EXPECT_EQ(r.rc, 0) << r.err;
}

TEST(CliLossFiles, AFileKindForAnotherLossSetNamesTheRightOne) {
    TempDir dir;
    dir.write("l.csv", "0.5,0.5\n0,1\n");
    dir.write("c.toml", "[run]\nrounds = 2\ninstances = 2\n[adversary]\nkind = \"file\"\npath = \"l.csv\"\n"
                        "[learner]\nalgorithm = \"ftrl-l2-ball\"\n");
    const CliResult r = run_cli(dir, "run c.toml --out out --quiet");
    EXPECT_EQ(r.rc, 2);
    EXPECT_TRUE(contains(r.err, "for a loss file of this set use kind = \"file-ball\"")) << r.err;
}

// Item 13: the DP-FTPL twin guarantee that docs/experiments/as17_fullinfo.md quotes must be the one
// that the named learners report (it quoted the ball/cube value without naming the set, and
// dp-ftpl-experts reports half of it).
namespace {
/// The epsilon that `dpregret run` reports for `algorithm` at epsilon = inf, delta = 1e-5, d = 4.
double twin_epsilon(const TempDir& dir, const std::string& algorithm, const std::string& kind, int T) {
    dir.write("ftpl.toml", "[run]\ninstances = 2\nrounds = " + std::to_string(T) + "\n[adversary]\nkind = \"" + kind +
                               "\"\nd = 4\n[learner]\nalgorithm = \"" + algorithm +
                               "\"\nepsilon = \"inf\"\ndelta = 1e-5\n");
    fs::remove_all(dir.file("ftpl"));
    const CliResult r = run_cli(dir, "run ftpl.toml --out ftpl --quiet");
    EXPECT_EQ(r.rc, 0) << r.err;
    std::istringstream summary(slurp(dir.file("ftpl/summary.csv")));
    std::string header, row;
    std::getline(summary, header);
    std::getline(summary, row);
    return std::stod(row.substr(row.find(',', row.find(',') + 1) + 1)); // third column: epsilon
}

std::string two_digits(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", x);
    return buf;
}
} // namespace

TEST(DocsClaims, TheFtplTwinGuaranteeQuotedForEachSetIsWhatItReports) {
    TempDir dir;
    const std::string doc = slurp(DPREGRET_SOURCE_DIR "/docs/experiments/as17_fullinfo.md");
    const std::size_t at = doc.find("* DP-FTPL's twin");
    ASSERT_NE(at, std::string::npos);
    const std::string bullet = doc.substr(at, doc.find("\n\n", at) - at);
    for (int T : {1024, 16384}) {
        const double ball = twin_epsilon(dir, "dp-ftpl-ball", "unit-vectors", T);
        const double cube = twin_epsilon(dir, "dp-ftpl-cube", "cube-coordinate", T);
        const double experts = twin_epsilon(dir, "dp-ftpl-experts", "bernoulli", T);
        EXPECT_EQ(two_digits(ball), two_digits(cube));
        EXPECT_NE(two_digits(ball), two_digits(experts));
        const std::size_t named_ball = bullet.find("`dp-ftpl-ball` and `dp-ftpl-cube`");
        const std::size_t named_experts = bullet.find("`dp-ftpl-experts`");
        ASSERT_NE(named_ball, std::string::npos) << bullet;
        ASSERT_NE(named_experts, std::string::npos) << bullet;
        const std::size_t q_ball = bullet.find("(" + two_digits(ball) + ", 1e-5)");
        const std::size_t q_experts = bullet.find("(" + two_digits(experts) + ", 1e-5)");
        ASSERT_NE(q_ball, std::string::npos) << "T = " << T << ": " << bullet;
        ASSERT_NE(q_experts, std::string::npos) << "T = " << T << ": " << bullet;
        // Each value is quoted after the name it belongs to (and the ball's before the experts' name).
        EXPECT_LT(named_ball, q_ball);
        EXPECT_LT(q_ball, named_experts);
        EXPECT_LT(named_experts, q_experts);
    }
}

// Item 13: docs/KEYS.md is the output of `dpregret run --list-keys`, so what it says about a key (its
// range, its default, which twin it equals and when) is what the binary enforces.
TEST(DocsClaims, KeysMdIsTheBinarysListKeysOutput) {
    TempDir dir;
    const CliResult r = run_cli(dir, "run --list-keys");
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string doc = slurp(DPREGRET_SOURCE_DIR "/docs/KEYS.md");
    const std::size_t a = doc.find("```\n");
    ASSERT_NE(a, std::string::npos);
    const std::size_t b = doc.find("```", a + 4);
    ASSERT_NE(b, std::string::npos);
    EXPECT_EQ(doc.substr(a + 4, b - a - 4), r.out)
        << "regenerate docs/KEYS.md: the block between the fences is `dpregret run --list-keys`";
    // The twins' claims say when they hold (the automatic learning rates differ).
    EXPECT_TRUE(contains(r.out, "equal to hedge bit for bit given the same eta")) << r.out;
    EXPECT_TRUE(contains(r.out, "equal to exp3 bit for bit given the same eta and gamma")) << r.out;
}

// Item 14: a header citing a test as its evidence must cite one that exists (two did not); and every file a
// source, a script or a docs page names (a header, a test, a docs page, a script) must exist: a path from the
// repository root, or a Markdown link relative to the page. Examples of names to invent (`cmd_foo`) are not
// citations.
TEST(DocsClaims, EveryCitedFileExists) {
    const fs::path root = DPREGRET_SOURCE_DIR;
    const std::regex cited(R"((^|[^A-Za-z0-9_./-])((kernels|host|cuda|tests|docs|cmake|scripts|experiments)/)"
                           R"([A-Za-z0-9_/.-]+\.(cpp|hpp|cu|cuh|md|in|cmake|sh|py))\b)");
    int citations = 0, test_citations = 0;
    std::vector<fs::path> files = {root / "README.md", root / "CONTRIBUTING.md"};
    for (const char* dir : {"kernels", "host", "cuda", "docs", "experiments", "scripts", "tests", "cmake"})
        for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
            const std::string ext = e.path().extension().string();
            if (e.is_regular_file() && (ext == ".hpp" || ext == ".cpp" || ext == ".cu" || ext == ".cuh" ||
                                        ext == ".md" || ext == ".py" || ext == ".sh" || ext == ".in" || ext == ".cmake"))
                files.push_back(e.path());
        }
    for (const fs::path& f : files) {
        const std::string text = slurp(f.string());
        for (std::sregex_iterator m(text.begin(), text.end(), cited), end; m != end; ++m) {
            const std::string path = (*m)[2].str();
            if (path.find("_foo") != std::string::npos) continue;
            ++citations;
            test_citations += path.rfind("tests/", 0) == 0;
            EXPECT_TRUE(fs::exists(root / path) || fs::exists(f.parent_path() / path)) << f << " cites " << path;
        }
    }
    EXPECT_GT(citations, 1000); // the scan reads the tree it is meant to
    EXPECT_GT(test_citations, 10);
}

// Item 8: `dpregret sample` keeps its promise of finite values (parameters whose largest draw would
// overflow are refused, naming the largest valid value, and that value itself gives finite draws), and
// streams rows of any length (sample tree --T 4294967295 died with std::bad_alloc).
namespace {

/// The upper end of "(0, X]" in a message.
double printed_limit(const std::string& err) {
    const std::size_t a = err.find("(0, ");
    const std::size_t b = err.find(']', a);
    if (a == std::string::npos || b == std::string::npos) return 0.0;
    return std::stod(err.substr(a + 4, b - a - 4));
}

bool all_finite(const std::string& npy_path) {
    const dpr::io::NpyArray a = dpr::io::read_npy(npy_path);
    for (double v : a.values)
        if (!std::isfinite(v)) return false;
    return !a.values.empty();
}

/// Peak resident set size (KiB) of the processes `command` starts, measured in a fresh child process so
/// that earlier commands do not count.
long peak_rss_kib(const std::string& command) {
    int fd[2];
    if (::pipe(fd) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fd[0]);
        const int rc = std::system(command.c_str());
        rusage ru{};
        ::getrusage(RUSAGE_CHILDREN, &ru);
        const long v = (WIFEXITED(rc) && WEXITSTATUS(rc) == 0) ? ru.ru_maxrss : -1;
        if (::write(fd[1], &v, sizeof v) != sizeof v) ::_exit(1);
        ::_exit(0);
    }
    ::close(fd[1]);
    long v = -1;
    if (::read(fd[0], &v, sizeof v) != sizeof v) v = -1;
    ::close(fd[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return v;
}

} // namespace

TEST(CliSampleLimits, ParametersWhoseDrawsWouldOverflowAreRefusedAndTheLimitIsFinite) {
    TempDir dir;
    struct Case {
        std::string form, too_big, flag_after; // flag_after: the rest of the command line
        double (*extreme)(double);             // the largest |draw| of the kernel transform at scale s
    };
    using namespace dpr::noise;
    const double umin = dpr::rng::kU53Min, umax = dpr::rng::kU53Max;
    static double s_umin, s_umax;
    s_umin = umin, s_umax = umax;
    const std::vector<Case> cases = {
        {"laplace", "1e308", "", [](double b) { return std::fabs(laplace_from_u(s_umin, b)); }},
        {"gaussian", "1.7e308", "", [](double s) { return std::fabs(s * normal_from_u(s_umin, 1.0 - s_umax)); }},
        {"exponential", "1e307", "", [](double s) { return exponential_from_u(s_umin, s); }},
        {"gumbel", "1e306", "--loc 1.7e308", [](double s) { return gumbel_from_u(s_umax, 1.7e308, s); }},
        {"gamma", "10", "--shape 1e308", nullptr},
        {"tree", "1e306", "--T 100", nullptr},
        {"tree", "1e307", "--T 100 --noise gaussian", nullptr},
    };
    for (const Case& c : cases) {
        const std::string base = "sample " + c.form + " " + c.flag_after + " --n 2000 --seed 3 --out x.npy --scale ";
        const CliResult bad = run_cli(dir, base + c.too_big);
        EXPECT_EQ(bad.rc, 2) << c.form << ": " << bad.err;
        EXPECT_TRUE(contains(bad.err, "--scale must be a finite number in (0, ")) << bad.err;
        EXPECT_TRUE(contains(bad.err, "(got " + c.too_big + ")")) << bad.err;
        EXPECT_FALSE(fs::exists(dir.file("x.npy")));
        const double limit = printed_limit(bad.err);
        ASSERT_GT(limit, 0.0) << bad.err;
        if (c.extreme) EXPECT_TRUE(std::isfinite(c.extreme(limit))) << c.form << " at " << limit;
        char text[64];
        std::snprintf(text, sizeof text, "%.17g", limit);
        const CliResult ok = run_cli(dir, base + text);
        ASSERT_EQ(ok.rc, 0) << c.form << " at the printed limit " << text << ": " << ok.err;
        EXPECT_TRUE(all_finite(dir.file("x.npy"))) << c.form;
        fs::remove(dir.file("x.npy"));
    }
}

TEST(CliSampleLimits, AnOutputAboveTheFileSizeLimitIsRefusedBeforeDrawing) {
    TempDir dir;
    const CliResult r = run_cli(dir, "sample tree --scale 1 --T 4294967295 --n 1 --out z.npy", "ulimit -f 10240;");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "--out z.npy: the file would take 34359738488 bytes (32 GiB)")) << r.err;
    EXPECT_TRUE(contains(r.err, "ulimit -f")) << r.err;
    EXPECT_EQ(dir.list(), std::vector<std::string>{});
}

TEST(CliSampleLimits, LongRowsAreStreamedInSlicesThatReadBackExactly) {
    TempDir dir;
    // T = 2^23 columns (64 MiB per row): the whole row used to be held in memory at once.
    const std::string cmd = "cd '" + dir.path().string() + "' && '" + dpr::test::binary() +
                            "' sample tree --scale 1 --T 8388608 --n 1 --out big.npy";
    const long kib = peak_rss_kib(cmd);
    ASSERT_GT(kib, 0);
    EXPECT_LT(kib, 40 * 1024) << "peak RSS " << kib << " KiB for a 64 MiB row";
    EXPECT_TRUE(all_finite(dir.file("big.npy")));
    // A row of 2^20 + 3 values is written in two slices; CSV and .npy hold the same values.
    ASSERT_EQ(run_cli(dir, "sample tree --variant binary --scale 2 --T 1048579 --n 2 --seed 9 --out s.npy").rc, 0);
    ASSERT_EQ(run_cli(dir, "sample tree --variant binary --scale 2 --T 1048579 --n 2 --seed 9 --out s.csv").rc, 0);
    const dpr::io::NpyArray npy = dpr::io::read_npy(dir.file("s.npy"));
    const dpr::io::Matrix csv = dpr::io::read_csv_matrix(dir.file("s.csv"));
    ASSERT_EQ(npy.shape, (dpr::io::Shape{2, 1048579}));
    ASSERT_EQ(csv.rows, 2u);
    ASSERT_EQ(csv.cols, 1048579u);
    EXPECT_EQ(csv.column_names.back(), "t1048578");
    EXPECT_TRUE(npy.values == csv.values);
    EXPECT_NE(npy.values[1048577], 0.0);
}

// Item 9 (learner keys): values whose noise or step would leave the arithmetic the engine computes in
// are refused naming the key that set them; the largest accepted value runs and writes finite regret.
namespace {

std::string learner_run(const std::string& adversary, const std::string& learner, const std::string& run = "") {
    return "[run]\nrounds = 64\ninstances = 2\n" + run + "[adversary]\n" + adversary + "[learner]\n" + learner;
}

/// The regret columns (mean .. q95) of every row of summary.csv are finite numbers.
void expect_finite_regret(const std::string& csv) {
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line); // header: point,algorithm,epsilon,delta,d,T,t,instances,mean,std,sem,q05,...,q95,...
    int rows = 0;
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::stringstream ls(line);
        for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
        ASSERT_GE(f.size(), 16u) << line;
        for (std::size_t c = 8; c <= 15; ++c) EXPECT_TRUE(std::isfinite(std::stod(f[c]))) << c << ": " << line;
        ++rows;
    }
    EXPECT_GT(rows, 0);
}

} // namespace

TEST(CliLearnerRanges, NoiseAndStepsBeyondTheEnginesArithmeticAreRefusedNamingTheKey) {
    TempDir dir;
    const std::string bern = "kind = \"bernoulli\"\nd = 4\n";
    struct Case {
        std::string adversary, learner, needle;
    } cases[] = {
        {bern, "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\nnode_scale = 1e31\n",
         "[learner] node_scale = 1e31 (c.toml:10:14): must be a number in (0, 1e30]"},
        {bern, "algorithm = \"dp-ftrl-experts\"\nepsilon = 1e-40\n", "[learner] epsilon = 1e-40 (c.toml:9:11): gives a node noise scale of"},
        {bern, "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\nnoise = \"gaussian\"\ndelta = 1\n",
         "[learner] delta = 1 (c.toml:11:9): must be a number in [0, 1)"},
        {"kind = \"unit-vectors\"\nd = 4\n", "algorithm = \"dp-ftpl-ball\"\nepsilon = 1e-40\ndelta = 1e-5\n",
         "[learner] epsilon = 1e-40 (c.toml:9:11): gives a node noise scale of"},
        {bern, "algorithm = \"dp-mab\"\nepsilon = 1\neta = 2e6\n", "[learner] eta = 2000000 (c.toml:10:7): must be a number in [0, 1000000]"},
        {bern, "algorithm = \"dp-mab\"\nepsilon = 1e-13\n", "[learner] epsilon = 1e-13 (c.toml:9:11): gives a feedback noise scale lambda"},
        {"kind = \"unit-vectors\"\nd = 2\n", "algorithm = \"scrible-ball\"\neta = 10\n", "[learner] eta = 10 (c.toml:9:7): gives eta n B~ = 20"},
    };
    for (const Case& c : cases) {
        dir.write("c.toml", learner_run(c.adversary, c.learner));
        const CliResult r = run_cli(dir, "run c.toml --out out --quiet");
        EXPECT_EQ(r.rc, 2) << c.learner << r.err;
        EXPECT_TRUE(contains(r.err, c.needle)) << c.needle << "\n" << r.err;
        EXPECT_FALSE(fs::exists(dir.file("out"))) << c.learner;
    }
}

TEST(CliLearnerRanges, TheLargestAcceptedNoiseRunsAndGivesFiniteRegretInEitherPrecision) {
    TempDir dir;
    struct Case {
        std::string adversary, learner;
    } cases[] = {
        {"kind = \"bernoulli\"\nd = 4\n", "algorithm = \"dp-ftrl-experts\"\nepsilon = 1\nnode_scale = 1e30\n"},
        {"kind = \"unit-vectors\"\nd = 4\n", "algorithm = \"dp-ftpl-ball\"\nepsilon = 1\ndelta = 1e-5\nnode_scale = 1e30\n"},
        {"kind = \"cube-coordinate\"\nd = 4\n", "algorithm = \"dp-ftrl-cube\"\nepsilon = 1\nnode_scale = 1e30\n"},
        {"kind = \"bernoulli\"\nd = 4\n", "algorithm = \"dp-mab\"\nepsilon = 1\neta = 1e6\nnoise_scale = 1e12\n"},
    };
    for (const Case& c : cases)
        for (const std::string precision : {"float", "double"}) {
            fs::remove_all(dir.file("out"));
            dir.write("c.toml", learner_run(c.adversary, c.learner, "precision = \"" + precision + "\"\n"));
            const CliResult r = run_cli(dir, "run c.toml --out out --quiet");
            ASSERT_EQ(r.rc, 0) << c.learner << precision << r.err;
            expect_finite_regret(slurp(dir.file("out/summary.csv")));
        }
}

// A list of 2200 numbers was echoed whole in the refusal (20 KB of stderr); the message now shows its
// start and how many values it holds.
TEST(CliRunMessages, ALongListIsNotEchoedWhole) {
    TempDir dir;
    std::string edges;
    for (int i = 0; i < 1100; ++i) edges += (i ? ", " : "") + std::to_string(i % 1000) + ", " + std::to_string(i % 1000 + 1);
    dir.write("c.toml", "[run]\ninstances = 2\nrounds = 10\n[adversary]\nkind = \"bco-linear\"\nset = \"spanning-tree\"\n"
                        "graph = \"edges\"\nedges = [" + edges + "]\n[learner]\nalgorithm = \"private-bandit-fw\"\n"
                        "epsilon = 1\n");
    const CliResult r = run_cli(dir, "run c.toml --out o --quiet");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "[adversary] edges = [0, 1, 1, 2,")) << r.err;
    EXPECT_TRUE(contains(r.err, "(2200 values in all)")) << r.err;
    EXPECT_LT(r.err.size(), 1000u) << r.err;
}

// With the paper's calibration, private-bandit-fw asked for eps = 1 at n = 1024, T = 1024 guarantees
// eps = 1.18; run.json said so, now stderr does too. The sensitivity calibration and the default (conservative:
// the larger scale of the two) stay within the request, and run.json names the default.
TEST(CliRunMessages, AGuaranteeAboveTheRequestIsAWarning) {
    TempDir dir;
    const std::string base = "[run]\ninstances = 2\nrounds = 1024\n[adversary]\nkind = \"bco-linear\"\nset = \"simplex\"\n"
                             "d = 1024\n[learner]\nalgorithm = \"private-bandit-fw\"\nepsilon = 1\n";
    dir.write("paper.toml", base + "calibration = \"paper\"\n");
    const CliResult paper = run_cli(dir, "run paper.toml --out p --quiet");
    ASSERT_EQ(paper.rc, 0) << paper.err;
    EXPECT_TRUE(contains(paper.err, "warning: point 0: [learner] algorithm = \"private-bandit-fw\" as configured "
                                    "guarantees eps = 1.177 (requested [learner] epsilon = 1)")) << paper.err;
    dir.write("sens.toml", base + "calibration = \"sensitivity\"\n");
    const CliResult sens = run_cli(dir, "run sens.toml --out s --quiet");
    ASSERT_EQ(sens.rc, 0) << sens.err;
    EXPECT_FALSE(contains(sens.err, "more than requested")) << sens.err;
    dir.write("default.toml", base);
    const CliResult dflt = run_cli(dir, "run default.toml --out d --quiet");
    ASSERT_EQ(dflt.rc, 0) << dflt.err;
    EXPECT_FALSE(contains(dflt.err, "more than requested")) << dflt.err;
    EXPECT_TRUE(contains(slurp(dir.file("d/run.json")), "conservative (the larger of")) << slurp(dir.file("d/run.json"));
}
