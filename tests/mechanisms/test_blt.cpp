// BLT noise (kernels/mechanisms/blt.hpp; docs/MECHANISMS.md §3.5): the inverse against the published parameters,
// C C^-1 = I, the closed forms against direct sums, the streaming recurrence against the dense C^-1 z, the exact
// variance and covariance against samples, the fitted table against the published losses, and the privacy report
// against an independent computation from the mechanism's own coefficients.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "host/config/component_info.hpp"
#include "kernels/learners/dp_ftrl_experts.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/mechanisms/blt.hpp"
#include "kernels/mechanisms/noisy_prefix.hpp"
#include "learners/simulate.hpp"

namespace dpr {
namespace {

using mech::BltNoise;

// Dvijotham et al. 2024 style 4-buffer BLT for n = 2^16 steps, as published (6 digits) with its inverse.
const double kTheta[4] = {0.999981, 0.999479, 0.989733, 0.815988};
const double kOmega[4] = {0.006246, 0.021659, 0.094607, 0.330252};
const double kInvTheta[4] = {0.399618, 0.955237, 0.997677, 0.999885};
const double kInvOmega[4] = {-0.443624, -0.0090319, -1.0692e-4, -1.2244e-6};

BltNoise published() {
    double u[4];
    for (int b = 0; b < 4; ++b) u[b] = 1.0 - kTheta[b];
    return mech::blt_from(u, kOmega, 4);
}

double loss(const BltNoise& m, std::uint64_t n) {
    return mech::blt_sensitivity_squared(m, n) * mech::blt_prefix_variance(m, n);
}

TEST(Blt, TheInverseOfThePublishedBltIsThePublishedInverse) {
    const BltNoise m = published();
    // The roots come out in the order: below min theta, then between consecutive thetas (ascending theta'). The
    // published inverse has 5 significant digits (and was computed from the unrounded C): agreement to 1e-4
    // relative; a wrong residue formula (e.g. without the square) is off by orders of magnitude.
    for (int b = 0; b < 4; ++b) {
        EXPECT_NEAR(1.0 - m.inv_mu[b], kInvTheta[b], 1e-6) << b;
        EXPECT_NEAR(m.inv_omega[b], kInvOmega[b], 1e-4 * std::fabs(kInvOmega[b])) << b;
    }
    EXPECT_NEAR(mech::blt_sensitivity_squared(m, 65536), 4.577, 1e-3);
    EXPECT_NEAR(loss(m, 65536), 21.32, 0.005);
}

// C C^-1 = I: the convolution of the coefficient sequences is (1, 0, 0, ...), for the published BLT and every
// table entry of a few sizes.
TEST(Blt, CTimesItsInverseIsTheIdentity) {
    std::vector<BltNoise> ms{published()};
    for (std::uint32_t B = 1; B <= mech::kMaxBltBuffers; ++B)
        for (std::uint64_t n : {16u, 1000u, 65536u, 1u << 24}) ms.push_back(mech::blt_for_steps(B, n));
    for (const BltNoise& m : ms) {
        const int K = 300;
        std::vector<double> c(K), ci(K);
        for (int k = 0; k < K; ++k) {
            c[k] = mech::blt_coefficient(m, k);
            ci[k] = mech::blt_inverse_coefficient(m, k);
        }
        for (int k = 0; k < K; ++k) {
            double s = 0.0, scale = 0.0;
            for (int j = 0; j <= k; ++j) {
                s += c[j] * ci[k - j];
                scale += std::fabs(c[j] * ci[k - j]);
            }
            ASSERT_NEAR(s, k == 0 ? 1.0 : 0.0, 1e-12 * scale) << "k " << k << " buffers " << m.buffers;
        }
        // C is positive and decreasing (theta in (0,1), omega > 0): its first column is its largest.
        for (int k = 1; k + 1 < K; ++k) ASSERT_GT(c[k], c[k + 1]);
        for (std::uint32_t b = 0; b < m.buffers; ++b) {
            ASSERT_GT(m.u[b], 0.0);
            ASSERT_LT(m.u[b], 1.0);
            ASSERT_GT(m.omega[b], 0.0);
        }
    }
}

// The closed forms (geometric sums in u = 1 - theta) against direct sums of c_k^2 and e_k^2.
TEST(Blt, TheClosedFormsAreTheDirectSums) {
    for (const BltNoise& m : {published(), mech::blt_for_steps(4, 4096), mech::blt_for_steps(6, 1 << 20),
                              mech::blt_for_steps(1, 100)}) {
        double s2 = 0.0, v = 0.0, e = 0.0;
        for (std::uint64_t k = 0; k < 5000; ++k) {
            const double c = mech::blt_coefficient(m, k);
            e += mech::blt_inverse_coefficient(m, k);
            s2 += c * c;
            v += e * e;
            const std::uint64_t n = k + 1;
            if (n % 97 == 0 || n < 20 || n == 5000) {
                ASSERT_NEAR(mech::blt_sensitivity_squared(m, n), s2, 1e-10 * s2) << n;
                ASSERT_NEAR(mech::blt_prefix_variance(m, n), v, 1e-9 * v) << n;
            }
        }
    }
}

// The streaming recurrence (one draw and B buffers per step) gives the dense N = A C^-1 z: x solves C x = z by
// forward substitution with C's coefficients, N_p = x_1 + ... + x_p; to 1e-12 relative over 300 steps.
TEST(Blt, StreamingIsTheDenseInverseAppliedToTheDraws) {
    const std::uint64_t T = 300;
    for (std::uint32_t B : {1u, 3u, 4u, 6u}) {
        const BltNoise m = mech::blt_for_steps(B, T - 1);
        const mech::TreeNoise tn{mech::TreeVariant::Binary, mech::NodeNoise::Gaussian, 1.0, T, 77, 0, 5};
        std::vector<double> z(T), x(T), c(T);
        for (std::uint64_t s = 0; s < T; ++s) {
            z[s] = mech::stream_node_draw<double>(tn, s, 0u, 2);
            c[s] = mech::blt_coefficient(m, s);
        }
        double n = 0.0;
        for (std::uint64_t s = 0; s < T; ++s) {
            double v = z[s];
            for (std::uint64_t k = 1; k <= s; ++k) v -= c[k] * x[s - k];
            x[s] = v;
            ASSERT_NEAR(mech::blt_prefix_noise<double>(tn, m, s, 2), n, 1e-12 * (1.0 + std::fabs(n))) << "p " << s;
            n += x[s];
        }
    }
}

// The fitted table reaches the published losses (Dvijotham et al. 2024 / McMahan et al. 2024: 3 / 4 / 5 buffers,
// n = 2^10, 2^16, 2^20) within 0.5%, and more buffers never lose.
TEST(Blt, TheTableReachesThePublishedLosses) {
    struct Row {
        std::uint64_t n;
        double b3, b4, b5;
    };
    for (const Row& r : {Row{1024, 10.74, 10.71, 10.71}, Row{65536, 22.06, 21.32, 21.16},
                         Row{1048576, 33.48, 30.96, 30.27}}) {
        EXPECT_LT(loss(mech::blt_for_steps(3, r.n), r.n), r.b3 * 1.005) << r.n;
        EXPECT_LT(loss(mech::blt_for_steps(4, r.n), r.n), r.b4 * 1.005) << r.n;
        EXPECT_LT(loss(mech::blt_for_steps(5, r.n), r.n), r.b5 * 1.005) << r.n;
    }
    for (std::uint32_t k = mech::blt_table::kMinLog2; k <= mech::blt_table::kMaxLog2; ++k) {
        const std::uint64_t n = std::uint64_t{1} << k;
        for (std::uint32_t B = 1; B < mech::kMaxBltBuffers; ++B)
            EXPECT_LE(loss(mech::blt_for_steps(B + 1, n), n), loss(mech::blt_for_steps(B, n), n) * (1 + 1e-6))
                << "n 2^" << k << " buffers " << B + 1;
        // The table's own figure is the loss recomputed here.
        EXPECT_NEAR(mech::blt_table::kEntries[3][k - mech::blt_table::kMinLog2].loss, loss(mech::blt_for_steps(4, n), n),
                    1e-9 * loss(mech::blt_for_steps(4, n), n));
    }
}

// Var(N_p) = sigma^2 sum_{k<p} e_k^2 against the sample variance of 40000 instances (a z-test on the variance at
// |z| < 5); the meta-test: the same samples reject the variance of the prefix made of independent draws (p sigma^2,
// the noise without the BLT's correlation), so the test has the power to see a wrong variance.
TEST(Blt_Stat, PrefixVarianceIsTheExactFormula) {
    const std::uint32_t n = 40000;
    const std::uint64_t T = 64;
    const BltNoise m = mech::blt_for_steps(4, T - 1);
    for (std::uint64_t p : {1u, 2u, 5u, 20u, 63u}) {
        double s1 = 0, s2 = 0;
        for (std::uint32_t k = 0; k < n; ++k) {
            const mech::TreeNoise tn{mech::TreeVariant::Binary, mech::NodeNoise::Gaussian, 1.5, T, 4242, 0, k};
            const double z = mech::blt_prefix_noise<double>(tn, m, p, 1);
            s1 += z;
            s2 += z * z;
        }
        const double mean = s1 / n, var = (s2 - n * mean * mean) / (n - 1);
        const auto z_of = [&](double want) { return (var - want) / (want * std::sqrt(2.0 / n)); }; // Gaussian
        const double exact = 1.5 * 1.5 * mech::blt_prefix_variance(m, p);
        EXPECT_LT(std::fabs(z_of(exact)), 5.0) << "p " << p << " var " << var << " exact " << exact;
        if (p >= 2) EXPECT_GT(std::fabs(z_of(1.5 * 1.5 * p)), 5.0) << "independent draws' variance must be rejected, p " << p;
    }
}

// Cov(N_p, N_q) = sigma^2 sum_{j < min(p,q)} E_{p-1-j} E_{q-1-j}, E_m = e_0 + ... + e_m, with the inverse
// coefficients e computed here from C's by forward substitution (e_0 = 1, e_k = -sum_{j=1..k} c_j e_{k-j}):
// N = A C^-1 z written out. Against the sample covariance of 40000 instances (a z-test at |z| < 5, the variance of a sample
// covariance of two Gaussians being (Var_p Var_q + Cov^2) / n); the meta-test: the same samples reject the covariance
// of a prefix of independent draws (sigma^2 min(p, q)) and that of a BLT whose buffers do not decay (theta' = 1:
// e_k = e_1 for every k >= 1), so the test sees the correlation the BLT is made of.
TEST(Blt_Stat, PrefixCovarianceIsTheDenseFormula) {
    const std::uint32_t n = 40000;
    const std::uint64_t T = 64;
    const double sigma = 1.5;
    const BltNoise m = mech::blt_for_steps(4, T - 1);
    std::vector<double> e(T), E(T), e_flat(T), E_flat(T);
    for (std::uint64_t k = 0; k < T; ++k) {
        double v = k == 0 ? 1.0 : 0.0;
        for (std::uint64_t j = 1; j <= k; ++j) v -= mech::blt_coefficient(m, j) * e[k - j];
        e[k] = v;
        e_flat[k] = k == 0 ? 1.0 : e[1];
        E[k] = (k ? E[k - 1] : 0.0) + e[k];
        E_flat[k] = (k ? E_flat[k - 1] : 0.0) + e_flat[k];
    }
    const auto cov_of = [&](const std::vector<double>& S, std::uint64_t p, std::uint64_t q) {
        double c = 0.0;
        for (std::uint64_t j = 0; j < std::min(p, q); ++j) c += S[p - 1 - j] * S[q - 1 - j];
        return sigma * sigma * c;
    };
    for (const auto& [p, q] : {std::pair<std::uint64_t, std::uint64_t>{1, 2}, {2, 5}, {5, 20}, {20, 63}, {3, 63}}) {
        double sp = 0, sq = 0, spq = 0;
        for (std::uint32_t k = 0; k < n; ++k) {
            const mech::TreeNoise tn{mech::TreeVariant::Binary, mech::NodeNoise::Gaussian, sigma, T, 4243, 0, k};
            const double zp = mech::blt_prefix_noise<double>(tn, m, p, 1);
            const double zq = mech::blt_prefix_noise<double>(tn, m, q, 1);
            sp += zp;
            sq += zq;
            spq += zp * zq;
        }
        const double cov = (spq - sp * sq / n) / (n - 1);
        const double vp = sigma * sigma * mech::blt_prefix_variance(m, p);
        const double vq = sigma * sigma * mech::blt_prefix_variance(m, q);
        const auto z_of = [&](double want) { return (cov - want) / std::sqrt((vp * vq + want * want) / n); };
        const double exact = cov_of(E, p, q);
        EXPECT_NEAR(cov_of(E, p, p), vp, 1e-9 * vp) << "the dense variance is the closed form's, p " << p;
        EXPECT_LT(std::fabs(z_of(exact)), 5.0) << "p " << p << " q " << q << " cov " << cov << " exact " << exact;
        EXPECT_GT(std::fabs(z_of(sigma * sigma * static_cast<double>(std::min(p, q)))), 5.0)
            << "independent draws' covariance must be rejected, p " << p << " q " << q;
        if (p >= 3)
            EXPECT_GT(std::fabs(z_of(cov_of(E_flat, p, q))), 5.0) << "undecayed buffers must be rejected, p " << p;
    }
}

// The privacy report of dp-ftrl-experts with mechanism = "blt": the same rho (and eps) as the binary tree at the same
// request (the scale is the tree's times sqrt(sens^2 / h')), and rho recomputed independently from the mechanism's
// coefficients: rho = Delta_2^2 sum_{k<T-1} c_k^2 / (2 sigma^2).
TEST(Blt, KeysChooseItAndItsGuaranteeIsRecomputedFromItsCoefficients) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    Problem pb;
    pb.d = 8;
    pb.T = 4096;
    const auto blt = learners::DpFtrlExperts::resolve(
        test::key_values(linfo, "dp-ftrl-experts", {{"epsilon", 1.0}, {"delta", 1e-6}, {"noise", 1.0}, {"mechanism", 3.0}}),
        pb);
    const auto bin = learners::DpFtrlExperts::resolve(
        test::key_values(linfo, "dp-ftrl-experts", {{"epsilon", 1.0}, {"delta", 1e-6}, {"noise", 1.0}, {"mechanism", 1.0}}),
        pb);
    ASSERT_TRUE(blt.prefix.blt);
    EXPECT_EQ(blt.prefix.blt_noise.buffers, 4u) << "the default below T = 2^18";
    EXPECT_EQ(blt.prefix.rows(), 5u);
    double s2 = 0.0;
    for (std::uint64_t k = 0; k + 1 < pb.T; ++k) s2 += std::pow(mech::blt_coefficient(blt.prefix.blt_noise, k), 2);
    const double sigma = blt.prefix.scale, delta2 = std::sqrt(8.0);
    const learners::PrivacyReport r = learners::DpFtrlExperts::privacy(blt), rb = learners::DpFtrlExperts::privacy(bin);
    const double rho = delta2 * delta2 * s2 / (2 * sigma * sigma);
    EXPECT_NEAR(r.gdp_mu, std::sqrt(2 * rho), 1e-9 * std::sqrt(2 * rho));
    EXPECT_NEAR(r.gdp_mu, rb.gdp_mu, 1e-9 * rb.gdp_mu) << "equal privacy to the tree";
    EXPECT_NEAR(r.epsilon, rb.epsilon, 1e-9 * rb.epsilon);
    EXPECT_LE(r.epsilon, 1.0 + 1e-9);
    EXPECT_NEAR(r.sensitivity_squared, s2, 1e-9 * s2);
    EXPECT_EQ(r.blt.buffers, 4u);
    EXPECT_NE(std::string(r.mechanism).find("BLT"), std::string::npos) << r.mechanism;
    // Less noise than the tree at that privacy: Var(Z_{T-1}) sigma^2 well below the binary tree's worst prefix.
    const double blt_var = sigma * sigma * blt.prefix.unit_variance(pb.T - 1);
    const double tree_var = bin.prefix.scale * bin.prefix.scale * dpr::ceil_log2(pb.T);
    EXPECT_LT(blt_var, 0.25 * tree_var);
}

TEST(Blt, LaplaceNoiseIsRefusedNamingHonaker) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    Problem pb;
    pb.d = 8;
    pb.T = 256;
    Diagnostic diag;
    EXPECT_FALSE(learners::DpFtrlExperts::check(
        test::key_values(linfo, "dp-ftrl-experts", {{"epsilon", 1.0}, {"mechanism", 3.0}}), pb, diag));
    EXPECT_STREQ(diag.key, "mechanism");
    EXPECT_NE(std::string(diag.message).find("honaker"), std::string::npos) << diag.message;
    EXPECT_NE(std::string(diag.message).find("gaussian"), std::string::npos) << diag.message;
}

// blt_buffers without mechanism = "blt" is ignored with a warning (a sweep over mechanism may set it for every
// point); an error found after that warning stays an error (Diagnostic::fail clears warning_only; before, the host
// took the d < 2 error below for a warning and ran the point).
TEST(Blt, BuffersWithoutBltAreAWarningThatNeverHidesAnError) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    Problem pb;
    pb.d = 8;
    pb.T = 256;
    const KeyValues kv =
        test::key_values(linfo, "dp-ftrl-experts", {{"epsilon", 1.0}, {"mechanism", 1.0}, {"blt_buffers", 3.0}});
    Diagnostic diag;
    EXPECT_TRUE(learners::DpFtrlExperts::check(kv, pb, diag));
    EXPECT_TRUE(diag.warning_only);
    EXPECT_STREQ(diag.key, "blt_buffers");
    EXPECT_NE(std::string(diag.message).find("binary"), std::string::npos) << diag.message;
    pb.d = 1;
    Diagnostic bad;
    EXPECT_FALSE(learners::DpFtrlExperts::check(kv, pb, bad));
    EXPECT_FALSE(bad.warning_only) << bad.key << ": " << bad.message;
    EXPECT_STREQ(bad.key, "d");
}

// Through the CLI: every documented blt_buffers (1..6) runs and run.json records the BLT it ran with (its
// parameters, from which the noise can be rebuilt); values outside exit 2 naming the key and the range; Laplace noise
// exits 2 naming honaker. The same sweep with mechanism = "binary" warns that blt_buffers is ignored.
TEST(Blt, EveryDocumentedBufferCountRunsAndIsRecordedAndOthersAreRefused) {
    test::TempDir dir;
    const std::string head = "[run]\ninstances = 8\nrounds = 200\n[adversary]\nkind = \"bernoulli\"\nd = 4\n"
                             "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\ndelta = 1e-6\n"
                             "noise = \"gaussian\"\n";
    dir.write("ok.toml", head + "mechanism = \"blt\"\nblt_buffers = [1, 2, 3, 4, 5, 6]\n");
    const test::CliResult r = test::run_cli(dir, "run ok.toml --out ok --quiet");
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(test::slurp(dir.file("ok/run.json")));
    ASSERT_EQ(j["points"].size(), 6u);
    for (std::size_t i = 0; i < 6; ++i) {
        const nlohmann::json& pr = j["points"][i]["privacy"];
        EXPECT_NE(pr["mechanism"].get<std::string>().find("BLT"), std::string::npos) << pr["mechanism"];
        EXPECT_EQ(pr["blt"]["buffers"], i + 1);
        EXPECT_EQ(pr["blt"]["theta"].size(), i + 1);
        EXPECT_EQ(pr["blt"]["fitted_steps"], 256) << "the entry of the smallest 2^k >= T - 1 = 199";
        EXPECT_LE(pr["epsilon"].get<double>(), 1.0 + 1e-9);
    }
    for (const std::string bad : {"0", "7"}) {
        dir.write("bad.toml", head + "mechanism = \"blt\"\nblt_buffers = " + bad + "\n");
        const test::CliResult b = test::run_cli(dir, "run bad.toml --out bad --quiet");
        EXPECT_EQ(b.rc, 2) << bad;
        EXPECT_NE(b.err.find("blt_buffers"), std::string::npos) << b.err;
        EXPECT_NE(b.err.find("[1, 6]"), std::string::npos) << b.err;
    }
    dir.write("lap.toml", "[run]\ninstances = 8\nrounds = 200\n[adversary]\nkind = \"bernoulli\"\nd = 4\n"
                          "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\nmechanism = \"blt\"\n");
    const test::CliResult l = test::run_cli(dir, "run lap.toml --out lap --quiet");
    EXPECT_EQ(l.rc, 2);
    EXPECT_NE(l.err.find("honaker"), std::string::npos) << l.err;
    dir.write("warn.toml", head + "mechanism = [\"binary\", \"blt\"]\nblt_buffers = 3\n");
    const test::CliResult w = test::run_cli(dir, "run warn.toml --out warn --quiet");
    ASSERT_EQ(w.rc, 0) << w.err;
    const nlohmann::json jw = nlohmann::json::parse(test::slurp(dir.file("warn/run.json")));
    ASSERT_EQ(jw["points"].size(), 2u);
    EXPECT_EQ(jw["points"][0]["warnings"].size(), 1u) << "the binary point warns";
    EXPECT_NE(jw["points"][0]["warnings"].dump().find("blt_buffers"), std::string::npos) << jw["points"][0]["warnings"];
    EXPECT_EQ(jw["points"][1]["warnings"].size(), 0u) << "the blt point does not";
}

// The fitted table is data (kernels/mechanisms/blt_table.csv) that cmake/BltTable.cmake turns into
// blt_table.hpp's initializer. The compiled kEntries are the CSV's numbers, column for column (a swapped or
// shifted column, or a stale generated file, fails here), and the generator refuses a damaged CSV, naming the
// line, instead of building a table with a row missing or out of place.
namespace blt_csv {
std::vector<std::vector<std::string>> rows(const std::string& path) {
    std::vector<std::vector<std::string>> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#' || line.rfind("buffers,", 0) == 0) continue;
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
        out.push_back(f);
    }
    return out;
}

/// Runs the generator on `csv`; returns its exit status, its output (white space folded) in *log.
int generate(const std::filesystem::path& dir, const std::string& csv, std::string* log) {
    const std::filesystem::path script = dir / "gen.cmake", out = dir / "gen.log";
    std::ofstream(script) << "include(" << DPREGRET_SOURCE_DIR << "/cmake/BltTable.cmake)\n"
                          << "dpregret_blt_table(" << csv << " " << (dir / "entries.inc").string() << ")\n";
    const int rc = std::system(("cmake -P " + script.string() + " > " + out.string() + " 2>&1").c_str());
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    log->clear(); // CMake wraps its messages: one space for every run of white space
    for (const char c : ss.str())
        if (!std::isspace(static_cast<unsigned char>(c)) || (!log->empty() && log->back() != ' '))
            log->push_back(std::isspace(static_cast<unsigned char>(c)) ? ' ' : c);
    return rc;
}
} // namespace blt_csv

TEST(BltTable, TheCompiledTableIsTheCsvAndADamagedCsvIsRefusedNamingItsLine) {
    const std::string csv = std::string(DPREGRET_SOURCE_DIR) + "/kernels/mechanisms/blt_table.csv";
    const auto rows = blt_csv::rows(csv);
    ASSERT_EQ(rows.size(), std::size_t{mech::blt_table::kMaxBuffers} *
                               (mech::blt_table::kMaxLog2 - mech::blt_table::kMinLog2 + 1));
    for (const auto& f : rows) {
        ASSERT_EQ(f.size(), 15u);
        const int B = std::stoi(f[0]), k = std::stoi(f[1]);
        const mech::blt_table::Entry& e = mech::blt_table::kEntries[B - 1][k - mech::blt_table::kMinLog2];
        for (int b = 0; b < 6; ++b) {
            EXPECT_EQ(e.u[b], std::strtod(f[2 + b].c_str(), nullptr))
                << "B " << B << " 2^" << k << " u" << b + 1;
            EXPECT_EQ(e.omega[b], std::strtod(f[8 + b].c_str(), nullptr))
                << "B " << B << " 2^" << k << " omega" << b + 1;
        }
        EXPECT_EQ(e.loss, std::strtod(f[14].c_str(), nullptr)) << "B " << B << " 2^" << k;
    }

    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("dpr_blt_csv_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::vector<std::string> lines;
    {
        std::ifstream in(csv);
        for (std::string line; std::getline(in, line);) lines.push_back(line);
    }
    const auto write = [&](const std::vector<std::string>& ls) {
        const std::string path = (dir / "table.csv").string();
        std::ofstream out(path);
        for (const std::string& l : ls) out << l << "\n";
        return path;
    };
    std::string log;
    ASSERT_EQ(blt_csv::generate(dir, write(lines), &log), 0) << log;
    const std::size_t first = 5; // 0-based: four comment lines and the column names come first
    ASSERT_EQ(lines[first].rfind("1,4,", 0), 0u);

    std::vector<std::string> missing = lines; // B = 1, n = 2^8 left out: line 10 holds 2^9
    missing.erase(missing.begin() + first + 4);
    EXPECT_NE(blt_csv::generate(dir, write(missing), &log), 0);
    EXPECT_NE(log.find("table.csv:10: buffers = 1, log2_n = 9; expected buffers = 1, log2_n = 8"),
              std::string::npos)
        << log;

    std::vector<std::string> narrow = lines; // a row with a number missing
    narrow[first + 2] = narrow[first + 2].substr(0, narrow[first + 2].rfind(','));
    EXPECT_NE(blt_csv::generate(dir, write(narrow), &log), 0);
    EXPECT_NE(log.find("table.csv:8: 14 fields"), std::string::npos) << log;

    std::vector<std::string> short_table(lines.begin(),
                                         lines.end() - 1); // B = 6, n = 2^24 missing at the end
    EXPECT_NE(blt_csv::generate(dir, write(short_table), &log), 0);
    EXPECT_NE(log.find("the table ends at"), std::string::npos) << log;
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace dpr
