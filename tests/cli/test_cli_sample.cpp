// `dpregret sample` and `dpregret info`, run as a user would: the built binary (DPREGRET_BINARY) in a
// fresh temporary directory. Checks shapes, determinism, the padded-tree property, the help texts, and
// that every kind of bad input exits with 2, names the flag and its range, and leaves no file behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "host/cpu/cpu_isa.hpp"
#include "host/io/csv.hpp"
#include "host/io/npy.hpp"
#include "host/version.hpp"
#include "kernels/core/team.hpp"
#include "kernels/mechanisms/exponential.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace fs = std::filesystem;

namespace {

using dpr::test::slurp;
using dpr::test::TempDir;
using Result = dpr::test::CliResult;

/// Runs `dpregret <args>` with `dir` as the working directory (tests/cli/run_cli.hpp).
Result run(const TempDir& dir, const std::string& args) { return dpr::test::run_cli(dir, args); }

dpr::io::NpyArray load(const TempDir& dir, const std::string& name) {
    return dpr::io::read_npy(dir.file(name));
}

double mean_of(const std::vector<double>& v) {
    double s = 0;
    for (const double x : v) s += x;
    return s / static_cast<double>(v.size());
}

double var_of(const std::vector<double>& v) {
    const double m = mean_of(v);
    double s = 0;
    for (const double x : v) s += (x - m) * (x - m);
    return s / static_cast<double>(v.size() - 1);
}

/// Column t of an (N, T) array.
std::vector<double> column(const dpr::io::NpyArray& a, std::size_t t) {
    const std::size_t n = a.shape[0], T = a.shape[1];
    std::vector<double> c(n);
    for (std::size_t i = 0; i < n; ++i) c[i] = a.values[i * T + t];
    return c;
}

double cov_of(const std::vector<double>& x, const std::vector<double>& y) {
    const double mx = mean_of(x), my = mean_of(y);
    double s = 0;
    for (std::size_t i = 0; i < x.size(); ++i) s += (x[i] - mx) * (y[i] - my);
    return s / static_cast<double>(x.size() - 1);
}

int popcount(std::uint64_t x) {
    int c = 0;
    for (; x; x &= x - 1) ++c;
    return c;
}

/// Parameter flags that make each form valid (without --n/--seed/--out).
const std::vector<std::pair<std::string, std::string>> kForms = {
    {"laplace", "--scale 2"},           {"gaussian", "--scale 0.5"},
    {"exponential", "--scale 3"},       {"gumbel", "--loc 1 --scale 2"},
    {"gamma", "--shape 2.5 --scale 2"}, {"tree", "--variant padded --noise laplace --scale 1 --T 13"},
};

} // namespace

// ---- every form: shape, determinism, formats ----------------------------------------------------

TEST(CliSample, EveryFormWritesTheRightShape) {
    for (const auto& [name, params] : kForms) {
        TempDir dir;
        const Result r = run(dir, "sample " + name + " " + params + " --n 257 --seed 3 --out x.npy");
        ASSERT_EQ(r.rc, 0) << name << ": " << r.err;
        EXPECT_EQ(dir.list(), std::vector<std::string>{"x.npy"}) << name << ": no temporary file may remain";
        const dpr::io::NpyArray a = load(dir, "x.npy");
        const dpr::io::Shape expected = name == "tree" ? dpr::io::Shape{257, 13} : dpr::io::Shape{257};
        EXPECT_EQ(a.shape, expected) << name;
        for (const double v : a.values) ASSERT_TRUE(std::isfinite(v)) << name;
        if (name == "exponential" || name == "gamma")
            EXPECT_GT(*std::min_element(a.values.begin(), a.values.end()), 0.0) << name;
    }
}

TEST(CliSample, SameSeedSameBytesDifferentSeedDifferentValues) {
    for (const auto& [name, params] : kForms) {
        TempDir dir;
        const std::string base = "sample " + name + " " + params + " --n 100 ";
        ASSERT_EQ(run(dir, base + "--seed 7 --out a.npy").rc, 0) << name;
        ASSERT_EQ(run(dir, base + "--seed 7 --out b.npy").rc, 0) << name;
        ASSERT_EQ(run(dir, base + "--seed 8 --out c.npy").rc, 0) << name;
        EXPECT_EQ(slurp(dir.file("a.npy")), slurp(dir.file("b.npy"))) << name;
        const auto a = load(dir, "a.npy"), c = load(dir, "c.npy");
        std::size_t equal = 0;
        for (std::size_t i = 0; i < a.values.size(); ++i) equal += a.values[i] == c.values[i];
        // Binary/padded trees have no exact zeros here (padded T = 13); continuous laws never repeat.
        EXPECT_EQ(equal, 0u) << name << ": a different seed must change every value";
    }
}

TEST(CliSample, DefaultSeedIsZero) {
    TempDir dir;
    ASSERT_EQ(run(dir, "sample laplace --scale 1 --n 10 --out a.npy").rc, 0);
    ASSERT_EQ(run(dir, "sample laplace --scale 1 --n 10 --seed 0 --out b.npy").rc, 0);
    EXPECT_EQ(slurp(dir.file("a.npy")), slurp(dir.file("b.npy")));
}

TEST(CliSample, RowIDoesNotDependOnN) {
    for (const auto& [name, params] : kForms) {
        TempDir dir;
        ASSERT_EQ(run(dir, "sample " + name + " " + params + " --n 5 --seed 11 --out small.npy").rc, 0);
        ASSERT_EQ(run(dir, "sample " + name + " " + params + " --n 4000 --seed 11 --out big.npy").rc, 0);
        const auto small = load(dir, "small.npy"), big = load(dir, "big.npy");
        ASSERT_LE(small.values.size(), big.values.size());
        for (std::size_t i = 0; i < small.values.size(); ++i)
            ASSERT_EQ(small.values[i], big.values[i]) << name << " value " << i;
    }
    // Long tree rows are split across threads inside the row when there are few rows: the split must not
    // matter (one row of 30000 values vs the same row inside a 3-row file, split differently).
    TempDir dir;
    const std::string tree = "sample tree --variant padded --noise gaussian --scale 1 --T 30000 --seed 4 ";
    ASSERT_EQ(run(dir, tree + "--n 1 --out one.npy").rc, 0);
    ASSERT_EQ(run(dir, tree + "--n 3 --out three.npy").rc, 0);
    const auto one = load(dir, "one.npy"), three = load(dir, "three.npy");
    ASSERT_EQ(one.values.size(), 30000u);
    for (std::size_t t = 0; t < one.values.size(); ++t) ASSERT_EQ(one.values[t], three.values[t]) << t;
}

TEST(CliSample, CsvHoldsExactlyTheNpyValues) {
    for (const auto& [name, params] : kForms) {
        TempDir dir;
        const std::string base = "sample " + name + " " + params + " --n 50 --seed 5 ";
        ASSERT_EQ(run(dir, base + "--out x.npy").rc, 0) << name;
        ASSERT_EQ(run(dir, base + "--out x.csv").rc, 0) << name;
        const auto npy = load(dir, "x.npy");
        const dpr::io::Matrix csv = dpr::io::read_csv_matrix(dir.file("x.csv"));
        EXPECT_EQ(csv.values, npy.values) << name;
        if (name == "tree") {
            EXPECT_EQ(csv.rows, 50u);
            ASSERT_EQ(csv.column_names.size(), 13u);
            EXPECT_EQ(csv.column_names.front(), "t0");
            EXPECT_EQ(csv.column_names.back(), "t12");
        } else {
            EXPECT_EQ(csv.column_names, std::vector<std::string>{name}) << "header names the distribution";
            EXPECT_EQ(csv.cols, 1u);
        }
    }
    TempDir dir;
    ASSERT_EQ(run(dir, "sample laplace --scale 1 --n 2 --out UPPER.CSV").rc, 0)
        << "extension is case-insensitive";
    EXPECT_EQ(slurp(dir.file("UPPER.CSV")).substr(0, 8), "laplace\n");
}

// ---- tree: structure that holds draw by draw ------------------------------------------------------

TEST(CliSample, TreeZeroColumnsAndDegenerateT) {
    TempDir dir;
    // Binary: Z_0 = 0 exactly (S_0 is empty, no padding); every other prefix has a node.
    ASSERT_EQ(run(dir, "sample tree --variant binary --noise gaussian --scale 1 --T 9 --n 20 --out b.npy").rc,
              0);
    const auto b = load(dir, "b.npy");
    ASSERT_EQ(b.shape, (dpr::io::Shape{20, 9}));
    for (const double v : column(b, 0)) EXPECT_EQ(v, 0.0);
    for (std::size_t t = 1; t < 9; ++t)
        for (const double v : column(b, t)) EXPECT_NE(v, 0.0);
    // T = 1: ceil(log2 1) = 0 levels, so L~_0 carries no noise in either variant.
    for (const std::string variant : {"padded", "binary"}) {
        ASSERT_EQ(run(dir, "sample tree --variant " + variant + " --scale 1 --T 1 --n 4 --out one.npy").rc,
                  0);
        const auto one = load(dir, "one.npy");
        EXPECT_EQ(one.shape, (dpr::io::Shape{4, 1}));
        for (const double v : one.values) EXPECT_EQ(v, 0.0) << variant;
    }
}

TEST(CliSample_Stat, TreeBinaryConsecutivePrefixesShareTheirCommonNodeExactly) {
    // Binary tree: S_2 = {(1,0)} and S_3 = {(1,0), (0,2)}, so Z_3 - Z_2 is the single node draw b_{0,2}:
    // Laplace(1), variance 2, and independent of Z_2 (the shared node cancels draw by draw). N = 20000:
    // se(var) = 2 sqrt(5/N) = 0.032, tolerance 0.2 (6 se); se(cov) = 2/sqrt(N) = 0.014, tolerance 0.15.
    // Wrong: node (1,0) regenerated differently at t = 2 and t = 3 (variance 6, covariance -2).
    TempDir dir;
    ASSERT_EQ(
        run(dir, "sample tree --variant binary --noise laplace --scale 1 --T 8 --n 20000 --out b.npy").rc, 0);
    const auto b = load(dir, "b.npy");
    std::vector<double> d32(20000), z2 = column(b, 2), z3 = column(b, 3);
    for (std::size_t i = 0; i < d32.size(); ++i) d32[i] = z3[i] - z2[i];
    EXPECT_NEAR(var_of(d32), 2.0, 0.2) << "Z_3 - Z_2 = one Laplace(1) node, variance 2";
    EXPECT_NEAR(cov_of(d32, z2), 0.0, 0.15) << "the remaining node is shared exactly";
}

// Honaker's estimator through `sample tree`: the rows are the definition (tree_aggregation.hpp honaker_prefix_noise)
// of instance i, bit for bit, streamed as a learner streams them; and they differ from the binary tree's from prefix 2
// on (prefix 1 is one leaf, whose estimate is its own draw).
TEST(CliSample, TreeHonakerRowsAreTheDefinition) {
    TempDir dir;
    ASSERT_EQ(run(dir, "sample tree --variant honaker --noise gaussian --scale 1.5 --T 37 --n 6 --seed 8 --out h.npy").rc,
              0);
    ASSERT_EQ(run(dir, "sample tree --variant binary --noise gaussian --scale 1.5 --T 37 --n 6 --seed 8 --out b.npy").rc,
              0);
    const auto h = load(dir, "h.npy"), b = load(dir, "b.npy");
    ASSERT_EQ(h.shape, (dpr::io::Shape{6, 37}));
    for (std::uint32_t i = 0; i < 6; ++i) {
        const dpr::mech::TreeNoise tn{dpr::mech::TreeVariant::Binary, dpr::mech::NodeNoise::Gaussian, 1.5, 37, 8, 0, i};
        for (std::uint64_t t = 0; t < 37; ++t) {
            ASSERT_EQ(h.values[i * 37 + t], dpr::mech::honaker_prefix_noise<double>(tn, t, 0)) << "row " << i << " t " << t;
            if (t == 1) EXPECT_EQ(h.values[i * 37 + t], b.values[i * 37 + t]) << "one leaf";
            if (t == 2) EXPECT_NE(h.values[i * 37 + t], b.values[i * 37 + t]) << "node (1,0) re-estimated";
        }
    }
}

// `sample prefix --mechanism M` is `sample tree --variant M` byte for byte, and its --meta gives the exact Var(Z_t):
// checked against the sample variance of 20000 rows at every column of T = 64 for each mechanism and both laws
// (|z| < 5, alpha ~ 1e-6, with Var of the sample variance bounded by 5 var^2 / n); the same columns against the
// meta's variance times 1.15 must fail somewhere (the test has the power to see a wrong formula).
TEST(CliSample_Stat, PrefixMetaVarianceIsTheSampleVariance) {
    TempDir dir;
    const std::uint64_t T = 64, n = 20000;
    for (const std::string mech : {"padded", "binary", "honaker", "blt"})
        for (const std::string law : {"laplace", "gaussian"}) {
            if (mech == "blt" && law == "laplace") continue; // refused (CliSample.BadArgumentsExit2...)
            SCOPED_TRACE(mech + " " + law);
            const std::string flags = " --noise " + law + " --scale 1.5 --T 64 --n 20000 --seed 3 ";
            ASSERT_EQ(run(dir, "sample prefix --mechanism " + mech + flags + "--out p.npy --meta p.json").rc, 0);
            const nlohmann::json meta = nlohmann::json::parse(slurp(dir.file("p.json")));
            EXPECT_EQ(meta["mechanism"], mech);
            const std::vector<double> v = meta["variance"];
            ASSERT_EQ(v.size(), T);
            if (mech == "blt") {
                // The parameters are the C the noise came from: sens^2 and Var(Z_63) recomputed here from theta,
                // omega (direct sums of c_k^2) and from the inverse's theta', omega' (partial sums e_k).
                EXPECT_EQ(meta["buffers"], 4);
                const std::vector<double> th = meta["theta"], om = meta["omega"], ith = meta["inverse_theta"],
                                          iom = meta["inverse_omega"];
                double s2 = 0, var = 0, e = 0;
                for (std::uint64_t k = 0; k < T - 1; ++k) {
                    double c = k == 0 ? 1.0 : 0.0, ci = k == 0 ? 1.0 : 0.0;
                    for (std::size_t b = 0; b < 4 && k > 0; ++b) {
                        c += om[b] * std::pow(th[b], double(k - 1));
                        ci += iom[b] * std::pow(ith[b], double(k - 1));
                    }
                    e += ci;
                    s2 += c * c;
                    var += e * e;
                }
                EXPECT_NEAR(meta["sensitivity_squared"].get<double>(), s2, 1e-6 * s2) << "sum_{k<T-1} c_k^2";
                EXPECT_NEAR(v[63], var, 1e-6 * var);
            } else {
                ASSERT_EQ(run(dir, "sample tree --variant " + mech + flags + "--out t.npy").rc, 0);
                EXPECT_EQ(slurp(dir.file("p.npy")), slurp(dir.file("t.npy"))) << "prefix and tree draw the same matrix";
                EXPECT_EQ(meta["sensitivity_squared"], 6) << "h' = ceil(log2 64) levels";
                for (const char* k : {"buffers", "theta", "omega", "inverse_theta", "inverse_omega"})
                    EXPECT_TRUE(meta[k].is_null()) << k;
                EXPECT_DOUBLE_EQ(v[63], mech == "padded" ? 6.0 : mech == "binary" ? 6.0 : 1 + 2 / 3.0 + 4 / 7.0 + 8 / 15.0 + 16 / 31.0 + 32 / 63.0);
            }
            const double node = meta["node_variance"];
            EXPECT_DOUBLE_EQ(node, law == "laplace" ? 2 * 1.5 * 1.5 : 1.5 * 1.5);
            const auto p = load(dir, "p.npy");
            double worst_wrong = 0;
            for (std::uint64_t t = 1; t < T; ++t) {
                const double exact = node * v[t], sample = var_of(column(p, t));
                const double z = (sample - exact) / (exact * std::sqrt(5.0 / n));
                EXPECT_LT(std::fabs(z), 5.0) << "t " << t << " sample " << sample << " exact " << exact;
                worst_wrong = std::max(worst_wrong, std::fabs((sample - 1.15 * exact) / (1.15 * exact * std::sqrt(5.0 / n))));
            }
            EXPECT_GT(worst_wrong, 5.0) << "a 15% wrong variance must be rejected";
        }
}

// ---- expmech: the exponential mechanism ----------------------------------------------------------------

TEST(CliSample_Stat, ExpMechFollowsTheSoftmaxOfTheScores) {
    // --d 12 --c 0.4: Pr[i] ∝ exp(-0.4 i). Chi-square over the 12 cells (11 degrees of freedom): the critical
    // value at alpha = 1e-6 is 50.9. The same counts against c = 0.44 (10% off) must be rejected, so the test
    // has the power to see a wrong temperature.
    TempDir dir;
    const std::uint32_t d = 12, n = 200000;
    const Result r = run(dir, "sample expmech --d 12 --c 0.4 --n 200000 --seed 4 --out i.npy");
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto a = load(dir, "i.npy");
    ASSERT_EQ(a.shape, dpr::io::Shape{n});
    std::vector<double> counts(d, 0.0);
    for (double v : a.values) {
        ASSERT_EQ(v, std::floor(v));
        ASSERT_GE(v, 0.0);
        ASSERT_LT(v, d);
        counts[static_cast<std::size_t>(v)] += 1;
    }
    const auto chi = [&](double c) {
        double z = 0, x = 0;
        for (std::uint32_t i = 0; i < d; ++i) z += std::exp(-c * i);
        for (std::uint32_t i = 0; i < d; ++i) {
            const double e = n * std::exp(-c * i) / z;
            x += (counts[i] - e) * (counts[i] - e) / e;
        }
        return x;
    };
    EXPECT_LT(chi(0.4), 50.9);
    EXPECT_GT(chi(0.44), 50.9);
}

TEST(CliSample, ExpMechOnTheVectorTeamEqualsTheSerialOracleDrawForDraw) {
    // The command runs the Gumbel-max on the CPU engine's 16-lane coordinate team of the best ISA; the serial
    // oracle team (what a GPU thread runs) must pick the same candidate for every draw: the argmin of exact keys
    // does not depend on the reduction order. d = 1000 is not a multiple of 16 (masked padding lanes), and the
    // second file has ties at its minimum for c = inf.
    TempDir dir;
    std::vector<double> s(1000);
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = std::fmod(i * 0.6180339887, 1.0) * 7.0;
    dpr::io::write_npy(dir.file("s.npy"), dpr::io::Shape{s.size()}, s.data());
    std::vector<double> ties(1000, 3.0);
    for (std::size_t i = 0; i < ties.size(); i += 7) ties[i] = 1.0;
    dpr::io::write_npy(dir.file("t.npy"), dpr::io::Shape{ties.size()}, ties.data());
    struct Form {
        std::string flags;
        const std::vector<double>* scores;
        double c;
    } forms[] = {{"--d 1000 --c 0.3", nullptr, 0.3}, {"--scores s.npy --c 2.5", &s, 2.5}, {"--scores t.npy --c inf", &ties, INFINITY}};
    for (const Form& f : forms) {
        ASSERT_EQ(run(dir, "sample expmech " + f.flags + " --n 300 --seed 9 --out o.npy").rc, 0) << f.flags;
        const auto got = load(dir, "o.npy").values;
        for (std::uint32_t r = 0; r < 300; ++r) {
            dpr::SerialTeam<double> team;
            team.rng = dpr::RngKey{9, 0};
            team.id = r;
            const dpr::mech::ExpMechDraw draw{};
            const std::uint32_t want = dpr::mech::exponential_mechanism(team, 1000, f.c, draw, [&](std::uint32_t j) {
                return f.scores ? (*f.scores)[j] : static_cast<double>(j);
            });
            ASSERT_EQ(got[r], static_cast<double>(want)) << f.flags << " draw " << r;
        }
    }
}

TEST(CliSample, ExpMechScoresFileEqualsDAndInfinityPicksAMinimiser) {
    TempDir dir;
    dir.write("s.csv", "0\n1\n2\n3\n4\n5\n6\n7\n");
    ASSERT_EQ(run(dir, "sample expmech --d 8 --c 0.7 --n 5000 --seed 2 --out a.npy").rc, 0);
    ASSERT_EQ(run(dir, "sample expmech --scores s.csv --c 0.7 --n 5000 --seed 2 --out b.npy").rc, 0);
    EXPECT_EQ(slurp(dir.file("a.npy")), slurp(dir.file("b.npy"))) << "the same scores, the same draws";
    // A .npy vector of the same scores (numpy.save of a 1-D array): the same draws again.
    const std::vector<double> ramp = {0, 1, 2, 3, 4, 5, 6, 7};
    dpr::io::write_npy(dir.file("s.npy"), dpr::io::Shape{8}, ramp.data());
    ASSERT_EQ(run(dir, "sample expmech --scores s.npy --c 0.7 --n 5000 --seed 2 --out c.npy").rc, 0);
    EXPECT_EQ(slurp(dir.file("a.npy")), slurp(dir.file("c.npy")));
    // c = inf: uniform over the minimisers {1, 2} of (3, 1, 1, 2); c = 0: uniform over all four.
    dir.write("m.csv", "3,1,1,2\n");
    ASSERT_EQ(run(dir, "sample expmech --scores m.csv --c inf --n 4000 --out m.npy").rc, 0);
    double ones = 0;
    for (double v : load(dir, "m.npy").values) {
        ASSERT_TRUE(v == 1.0 || v == 2.0) << v;
        ones += v == 1.0;
    }
    EXPECT_NEAR(ones / 4000, 0.5, 5 * std::sqrt(0.25 / 4000));
    ASSERT_EQ(run(dir, "sample expmech --scores m.csv --c 0 --n 4000 --out u.npy").rc, 0);
    std::vector<double> cells(4, 0.0);
    for (double v : load(dir, "u.npy").values) cells[static_cast<std::size_t>(v)] += 1;
    for (double c : cells) EXPECT_NEAR(c / 4000, 0.25, 5 * std::sqrt(0.25 * 0.75 / 4000));
    // Bad score files: a non-finite entry, a matrix, named with the file.
    dir.write("nan.csv", "0\nnan\n1\n");
    Result r = run(dir, "sample expmech --scores nan.csv --c 1 --n 3 --out x.npy");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("nan.csv"), std::string::npos) << r.err;
    dir.write("mat.csv", "1,2\n3,4\n");
    r = run(dir, "sample expmech --scores mat.csv --c 1 --n 3 --out x.npy");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("a vector, one column or one row"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("x.npy")));
}

// ---- help and info ----------------------------------------------------------------------------------

TEST(CliSample, HelpOfEverySubcommandTeaches) {
    TempDir dir;
    const std::vector<std::pair<std::string, std::vector<std::string>>> expect = {
        {"", {"sample", "info", "Exit codes"}},
        {"sample", {"laplace", "gaussian", "exponential", "gumbel", "gamma", "tree", "expmech", "Examples"}},
        {"sample laplace", {"exp(-|x|/b) / (2b)", "variance 2 b^2", "not the variance", "Example"}},
        {"sample gaussian", {"exp(-x^2 / (2 sigma^2))", "standard deviation (not the variance)", "Example"}},
        {"sample exponential", {"exp(-x/s) / s", "mean s", "1/rate", "Example"}},
        {"sample gumbel", {"exp(-exp(-(x - mu)/beta))", "--loc", "pi^2 beta^2 / 6", "Example"}},
        {"sample gamma", {"x^(k-1) exp(-x/theta)", "variance k theta^2", "not the rate", "Example"}},
        {"sample tree", {"popcount(t)", "ceil(log2 T)", "Var(node) = 2 b^2", "(N, T)", "Example"}},
        {"sample expmech", {"exp(-c s(i))", "Gumbel-max", "c = eps / (2 Delta)", "--scores", "Example"}},
        {"info", {"commit", "rng", "gpu", "Example"}},
    };
    for (const auto& [cmd, phrases] : expect) {
        const Result r = run(dir, cmd + " --help");
        EXPECT_EQ(r.rc, 0) << cmd;
        for (const std::string& p : phrases) EXPECT_NE(r.out.find(p), std::string::npos) << cmd << ": " << p;
    }
    EXPECT_TRUE(dir.list().empty());
}

TEST(CliInfo, PrintsBuildIdentityAndGpuVisibility) {
    TempDir dir;
    const dpr::BuildInfo& b = dpr::build_info();
    const Result r = run(dir, "info");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("dpregret " + b.version), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(b.git_commit), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(b.rng), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(b.cuda_compiled ? "CUDA backend compiled" : "built without CUDA"),
              std::string::npos);
    EXPECT_NE(r.out.find("gpu"), std::string::npos);
    const std::string isa = dpr::cpu::isa_name(dpr::cpu::best_isa());
    EXPECT_NE(r.out.find("kernels for " + dpr::cpu::built_isas() + "; this CPU runs " + isa), std::string::npos)
        << r.out;

    const Result j = run(dir, "info --json");
    ASSERT_EQ(j.rc, 0) << j.err;
    const nlohmann::json doc = nlohmann::json::parse(j.out);
    EXPECT_EQ(doc.at("version"), b.version);
    EXPECT_EQ(doc.at("git_commit"), b.git_commit);
    EXPECT_EQ(doc.at("cuda_compiled"), b.cuda_compiled);
    EXPECT_EQ(doc.at("rng"), b.rng);
    EXPECT_EQ(doc.at("cpu_kernels"), dpr::cpu::built_isas());
    EXPECT_EQ(doc.at("cpu_isa"), isa);
    const nlohmann::json& gpu = doc.at("gpu");
    if (gpu.at("available").get<bool>()) {
        EXPECT_FALSE(gpu.at("name").get<std::string>().empty());
        EXPECT_GT(gpu.at("memory_gib").get<double>(), 0.0);
    } else {
        EXPECT_FALSE(gpu.at("reason").get<std::string>().empty()) << "say why no GPU is usable";
    }

    const Result v = run(dir, "--version");
    EXPECT_EQ(v.rc, 0);
    EXPECT_NE(v.out.find(b.version), std::string::npos);
}

// ---- bad input: exit 2, flag and range named, nothing left behind ----------------------------------

struct BadCase {
    std::string args;                 ///< after `dpregret`
    std::vector<std::string> phrases; ///< must all appear in stderr
};

class CliSampleBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(CliSampleBadInput, ExitsWithTwoNamesTheFlagAndWritesNothing) {
    const BadCase& c = GetParam();
    TempDir dir;
    const Result r = run(dir, c.args);
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("dpregret: error: ", 0), 0u) << r.err;
    for (const std::string& p : c.phrases)
        EXPECT_NE(r.err.find(p), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(dir.list().empty()) << c.args << ": left " << (dir.list().empty() ? "" : dir.list().front());
}

std::vector<BadCase> bad_cases() {
    std::vector<BadCase> cases;
    const std::string io = " --n 10 --out out.npy";
    const std::string scale_range = "--scale must be a finite number > 0";
    // Non-positive / non-finite / non-numeric scale, for every form.
    for (const auto& [name, params] : kForms) {
        std::string fixed = params.substr(0, params.find("--scale"));
        for (const std::string bad : {"-1", "0", "nan", "inf", "-inf", "abc", "1e999", "1e-400", "2x"})
            cases.push_back(
                {"sample " + name + " " + fixed + "--scale " + bad + (name == "tree" ? " --T 4" : "") + io,
                 {scale_range, "(got " + bad + ")"}});
        cases.push_back(
            {"sample " + name + " " + fixed + (name == "tree" ? " --T 4" : "") + io, {"missing --scale"}});
    }
    cases.push_back(
        {"sample laplace --scale=-1" + io, {"error: --scale must be a finite number > 0 (got -1)"}});
    for (const std::string bad : {"-1", "nan", "-inf", "x"})
        cases.push_back({"sample expmech --d 4 --c " + bad + io, {"--c must be", "(got " + bad + ")"}});
    cases.push_back({"sample expmech --d 4" + io, {"missing --c"}});
    cases.push_back({"sample expmech --c 1" + io, {"missing --d or --scores"}});
    cases.push_back({"sample expmech --d 4 --scores s.csv --c 1" + io, {"both --d and --scores"}});
    cases.push_back({"sample expmech --d 0 --c 1" + io, {"--d must be an integer in [1, 2147483647] (got 0)"}});
    cases.push_back({"sample expmech --d 2147483648 --c 1" + io, {"--d must be an integer in [1, 2147483647]", "32-bit"}});
    cases.push_back({"sample expmech --scores missing.csv --c 1" + io, {"--scores", "missing.csv"}});
    for (const std::string bad : {"0", "-2", "nan", "inf", "x"})
        cases.push_back({"sample gamma --shape " + bad + " --scale 1" + io,
                         {"--shape must be a finite number > 0 (got " + bad + ")"}});
    cases.push_back({"sample gamma --scale 1" + io, {"missing --shape", "> 0"}});
    for (const std::string bad : {"inf", "nan", "abc"})
        cases.push_back({"sample gumbel --loc " + bad + " --scale 1" + io,
                         {"--loc must be a finite number (got " + bad + ")"}});
    // Unknown distribution, variant, node law.
    cases.push_back(
        {"sample foo --scale 1" + io,
         {"DISTRIBUTION must be one of: laplace, gaussian, exponential, gumbel, gamma, tree, prefix, expmech (got foo)"}});
    cases.push_back({"sample", {"missing DISTRIBUTION", "laplace"}});
    cases.push_back({"sample tree --variant foo --scale 1 --T 4" + io,
                     {"--variant must be one of: padded, binary, honaker (got foo)"}});
    cases.push_back({"sample tree --variant Padded --scale 1 --T 4" + io, {"--variant", "(got Padded)"}});
    cases.push_back({"sample prefix --mechanism foo --scale 1 --T 4" + io,
                     {"--mechanism must be one of: padded, binary, honaker, blt (got foo)"}});
    cases.push_back({"sample tree --variant blt --scale 1 --T 4" + io,
                     {"--variant must be one of: padded, binary, honaker (got blt)"}});
    cases.push_back({"sample prefix --mechanism blt --scale 1 --T 4" + io,
                     {"--mechanism blt needs --noise gaussian", "honaker"}});
    cases.push_back({"sample prefix --mechanism binary --buffers 3 --scale 1 --T 4" + io,
                     {"--buffers is a parameter of --mechanism blt"}});
    cases.push_back({"sample prefix --mechanism blt --noise gaussian --buffers 7 --scale 1 --T 4" + io,
                     {"--buffers must be an integer in [1, 6] (got 7)"}});
    cases.push_back({"sample prefix --mechanism blt --noise gaussian --scale 1 --T 1048577" + io,
                     {"--T must be at most 1048576 with --mechanism blt (got 1048577)"}});
    cases.push_back({"sample prefix --scale 1 --T 4 --meta m.txt" + io, {"--meta m.txt: must name a .json file"}});
    cases.push_back({"sample prefix --scale 1 --T 1048577 --meta m.json" + io,
                     {"--T must be at most 1048576 with --meta (got 1048577)"}});
    cases.push_back({"sample tree --variant honaker --scale 1 --T 1048577" + io,
                     {"--T must be at most 1048576 with --variant honaker (got 1048577)"}});
    cases.push_back({"sample tree --noise none --scale 1 --T 4" + io,
                     {"--noise must be one of: laplace, gaussian (got none)"}});
    // N and T ranges (the RNG counter layout: 32-bit instance and round words).
    const std::string n_range = "--n must be an integer in [1, 4294967295]";
    for (const std::string form : {"laplace --scale 1", "tree --scale 1 --T 4"}) {
        for (const std::string bad : {"0", "-1", "1.5", "abc", ""})
            cases.push_back({"sample " + form + " --n '" + bad + "' --out out.npy", {n_range}});
        for (const std::string bad : {"4294967296", "18446744073709551616"})
            cases.push_back({"sample " + form + " --n " + bad + " --out out.npy",
                             {n_range + " (got " + bad + ")", "RNG instance"}});
        cases.push_back({"sample " + form + " --out out.npy", {"missing --n", "[1, 4294967295]"}});
    }
    const std::string T_range = "--T must be an integer in [1, 4294967295]";
    cases.push_back({"sample tree --scale 1 --T 0" + io, {T_range + " (got 0)"}});
    cases.push_back({"sample tree --scale 1 --T 4294967296" + io, {T_range + " (got 4294967296)", "32-bit"}});
    cases.push_back({"sample tree --scale 1 --T -3" + io, {T_range}});
    cases.push_back({"sample tree --scale 1" + io, {"missing --T"}});
    cases.push_back({"sample laplace --scale 1 --n 3 --seed 4294967296 --out out.npy",
                     {"--seed must be an integer in [0, 4294967295] (got 4294967296)"}});
    cases.push_back(
        {"sample laplace --scale 1 --n 3 --seed -1 --out out.npy", {"--seed", "[0, 4294967295]"}});
    // Output path: extension, missing directory, unwritable directory, missing flag.
    const std::string ext = "--out must be a file name ending in .npy";
    for (const std::string bad : {"out.txt", "out", "out.npz", "out.npy.gz", ".npy"})
        cases.push_back({"sample laplace --scale 1 --n 3 --out " + bad, {ext, "(got " + bad + ")"}});
    cases.push_back({"sample tree --scale 1 --T 4 --n 3 --out out.json", {ext}});
    cases.push_back(
        {"sample laplace --scale 1 --n 3 --out nodir/out.npy", {"--out", "nodir", "does not exist"}});
    cases.push_back({"sample tree --scale 1 --T 4 --n 3 --out nodir/out.csv", {"--out", "does not exist"}});
    cases.push_back({"sample laplace --scale 1 --n 3 --out /proc/dpregret_cli_test.npy", {"--out", "/proc"}});
    cases.push_back({"sample laplace --scale 1 --n 3", {"missing --out", ".npy or .csv"}});
    // CLI11's own parse errors are usage errors too.
    cases.push_back({"sample laplace --scale 1 --bogus" + io, {"--bogus"}});
    cases.push_back({"sample laplace --scale 1 extra" + io, {"extra"}});
    cases.push_back({"", {"missing COMMAND: must be one of: ", "sample", "info"}});
    cases.push_back({"nosuchcommand", {"COMMAND must be one of: ", "sample", "info", "(got nosuchcommand)"}});
    cases.push_back({"--bogus", {"--bogus"}});
    cases.push_back({"sample laplace --scale 1 info" + io, {"info"}});
    return cases;
}

INSTANTIATE_TEST_SUITE_P(All, CliSampleBadInput, ::testing::ValuesIn(bad_cases()));

TEST(CliSample, BadInputKeepsAnExistingOutputFileUntouched) {
    TempDir dir;
    { std::ofstream(dir.file("out.npy")) << "previous results"; }
    const Result r = run(dir, "sample laplace --scale -1 --n 3 --out out.npy");
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(dir.list(), std::vector<std::string>{"out.npy"});
    EXPECT_EQ(slurp(dir.file("out.npy")), "previous results");
}

TEST(CliSample, OutputPathThatIsADirectoryIsRefused) {
    TempDir dir;
    fs::create_directory(dir.file("out.npy"));
    const Result r = run(dir, "sample laplace --scale 1 --n 3 --out out.npy");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
    EXPECT_EQ(dir.list(), std::vector<std::string>{"out.npy"});
    EXPECT_TRUE(fs::is_empty(dir.file("out.npy")));
}

// ---- statistical: the flags reach the samplers with the documented parametrisation ----------------
// Fixed seeds; each tolerance is >= 6 standard errors of the estimate (false alarm < 1e-8 per check)
// and each named wrong parametrisation is off by >= 20%, far outside it.

TEST(CliSample_Stat, ParametersMeanWhatTheHelpSays) {
    TempDir dir;
    const int n = 200000;
    const auto sample = [&](const std::string& args) {
        const Result r =
            run(dir, "sample " + args + " --n " + std::to_string(n) + " --seed 2024 --out s.npy");
        EXPECT_EQ(r.rc, 0) << r.err;
        return load(dir, "s.npy").values;
    };
    // Laplace b = 3: variance 2 b^2 = 18. se(s^2)/s^2 = sqrt((kurtosis - 1)/n) = sqrt(5/n) = 0.5%;
    // tolerance 3% (6 se). Wrong: b used as sd (9) or as variance (6).
    EXPECT_NEAR(var_of(sample("laplace --scale 3")), 18.0, 18.0 * 0.03);
    // Gaussian sigma = 0.5: variance 0.25, se sqrt(2/n) = 0.32%; tolerance 2%. Wrong: sigma as variance
    // (0.5).
    EXPECT_NEAR(var_of(sample("gaussian --scale 0.5")), 0.25, 0.25 * 0.02);
    // Exponential mean 3: se 3/sqrt(n) = 0.0067; tolerance 0.04. Wrong: rate 3 (mean 1/3).
    EXPECT_NEAR(mean_of(sample("exponential --scale 3")), 3.0, 0.04);
    // Gumbel(2, 0.5): mean 2 + 0.5772 * 0.5 = 2.2886, se 0.5 pi / sqrt(6 n) = 0.0014; tolerance 0.01.
    // Wrong: --loc ignored (0.289) or loc/scale swapped (0.5 + 0.5772 * 2 = 1.654).
    const std::vector<double> g = sample("gumbel --loc 2 --scale 0.5");
    EXPECT_NEAR(mean_of(g), 2.0 + 0.5772156649 * 0.5, 0.01);
    EXPECT_NEAR(var_of(g), 0.25 * M_PI * M_PI / 6.0, 0.411 * 0.05);
    // Gamma(k = 2.5, theta = 2): mean 5, variance 10. se(mean) = 0.0071, tolerance 0.05; se(s^2)/s^2 =
    // sqrt((2 + 6/k)/n) = 0.47%, tolerance 3.5%. Wrong: shape/scale swapped (variance 12.5), rate (0.625).
    const std::vector<double> ga = sample("gamma --shape 2.5 --scale 2");
    EXPECT_NEAR(mean_of(ga), 5.0, 0.05);
    EXPECT_NEAR(var_of(ga), 10.0, 10.0 * 0.035);
}

TEST(CliSample_Stat, PaddedTreeEveryColumnHasVarianceLogTTimesNodeVariance) {
    // AS17 Alg. 2, docs/spec/model.md §1.5: every Z_t of the padded tree is a sum of k = ceil(log2 T) iid node
    // draws, so Var Z_t = k * 2 b^2 for every t (Laplace). T = 16, k = 4, b = 1: 8 for all 16 columns.
    // se(s^2)/s^2 = sqrt((2 + 3/k)/N) = 1.2% at N = 20000 (excess kurtosis of a sum of k Laplace is 3/k);
    // tolerance 7.5% (6.4 se; 16 columns: false alarm < 1e-8). Wrong variants: binary (popcount(t) * 2:
    // 2 at t = 1), padding off by one level (6 or 10), padding missing at t = 0 (0).
    TempDir dir;
    const int N = 20000;
    ASSERT_EQ(run(dir, "sample tree --variant padded --noise laplace --scale 1 --T 16 --n " +
                           std::to_string(N) + " --seed 99 --out p.npy")
                  .rc,
              0);
    const auto p = load(dir, "p.npy");
    ASSERT_EQ(p.shape, (dpr::io::Shape{static_cast<std::uint64_t>(N), 16}));
    for (std::size_t t = 0; t < 16; ++t) {
        const std::vector<double> z = column(p, t);
        EXPECT_NEAR(var_of(z), 8.0, 8.0 * 0.075) << "t = " << t;
        EXPECT_NEAR(mean_of(z), 0.0, 6.0 * std::sqrt(8.0 / N)) << "t = " << t;
    }
    // Columns share exactly the tree nodes common to [0,t) and [0,t') and never padding draws:
    // Cov(Z_2, Z_3) = Var(node (1,0)) = 2; Cov(Z_1, Z_2) = 0 (disjoint nodes; fresh padding);
    // Cov(Z_12, Z_14) = Var(node (3,0)) + Var(node (2,2)) = 4. se(cov) ~ sqrt((64 + cov^2)/N) ~ 0.06;
    // tolerance 0.4. Wrong: padding reused across t would add up to 2 * (k - 1) = 6 to Cov(Z_1, Z_2).
    EXPECT_NEAR(cov_of(column(p, 2), column(p, 3)), 2.0, 0.4);
    EXPECT_NEAR(cov_of(column(p, 1), column(p, 2)), 0.0, 0.4);
    EXPECT_NEAR(cov_of(column(p, 12), column(p, 14)), 4.0, 0.4);
}

TEST(CliSample_Stat, BinaryTreeColumnVarianceIsPopcountTimesNodeVariance) {
    // docs/spec/model.md §1.4: Var Z_t = popcount(t) sigma^2 (Gaussian nodes, sigma = 1.5). se(s^2)/s^2 =
    // sqrt(2/N) = 1% at N = 20000; tolerance 6.5%. Wrong: padded (4 * 2.25 for every t).
    TempDir dir;
    const int N = 20000;
    ASSERT_EQ(run(dir, "sample tree --variant binary --noise gaussian --scale 1.5 --T 16 --n " +
                           std::to_string(N) + " --seed 5 --out b.npy")
                  .rc,
              0);
    const auto b = load(dir, "b.npy");
    for (std::size_t t = 1; t < 16; ++t) {
        const double expected = popcount(t) * 2.25;
        EXPECT_NEAR(var_of(column(b, t)), expected, expected * 0.065) << "t = " << t;
    }
    // Gaussian padded: k sigma^2 = 9 for every t.
    ASSERT_EQ(run(dir, "sample tree --variant padded --noise gaussian --scale 1.5 --T 16 --n " +
                           std::to_string(N) + " --seed 5 --out g.npy")
                  .rc,
              0);
    const auto g = load(dir, "g.npy");
    for (std::size_t t = 0; t < 16; ++t) EXPECT_NEAR(var_of(column(g, t)), 9.0, 9.0 * 0.065) << "t = " << t;
}
