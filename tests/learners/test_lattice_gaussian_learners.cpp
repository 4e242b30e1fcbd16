// Discrete Gaussian nodes in AS17's tree learners (noise = "discrete-gaussian"; docs/spec/model.md §1.11): what they
// report (at most the continuous Gaussian's report at the same sigma, which they keep), refused where the lattice does
// not apply, every CPU launch policy gives the same bits, and the regret law is the continuous Gaussian's. DP-FTPL
// (Gaussian nodes only) takes them by default in float: the same checks.
//
//   LatticeGaussianLearners       (unit)         the report, the command line, bitwise equal across lanes and ISAs
//   LatticeGaussianLearners_Stat  (statistical)  two-sample KS of the final regret and of the noise: float discrete
//                                                Gaussian vs double continuous Gaussian, with a power control
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/run_cli.hpp"
#include "learners/simulate.hpp"
#include "mechanisms/exact_laws.hpp"
#include "noise/stat_tests.hpp"

namespace {

using namespace dpr;
using test::in;
using test::SimResult;
using test::simulate;

constexpr double kGaussian = 1, kDiscreteGaussian = 4, kHonaker = 2; // noise / mechanism choice indices
constexpr double kDelta = 1e-5;

const char* const kLearners[] = {"dp-ftrl-experts", "dp-ftrl-sphere", "dp-ftrl-cube"};

/// Delta_2 of the learner's loss set at d (docs/spec/model.md §0.4): experts sqrt(d), sphere and cube 2.
double delta2_of(const std::string& learner, std::uint32_t d) {
    return learner == "dp-ftrl-experts" ? std::sqrt(static_cast<double>(d)) : 2.0;
}

std::string adversary_of(const std::string& learner) {
    return learner == "dp-ftrl-experts" ? "bernoulli" : learner == "dp-ftrl-cube" ? "cube-coordinate" : "unit-vectors";
}

/// Every CPU launch policy (instance or coordinate lanes, generic or native ISA, 1 or 2 threads) gives the bits of the
/// generic one-thread run of `name` in float with `keys`, whose report is the lattice Gaussian's.
void expect_same_bits_everywhere(const char* name, const std::string& adv, test::KeyList keys) {
    for (const char* lanes : {"instances", "coordinates"})
        for (const char* isa : {"generic", "auto"}) {
            const SimResult ref = simulate(name, keys, adv, {}, 19, 200, 37, 1, 3, false, 4, 0,
                                           in(Precision::Float, lanes, "generic"));
            ASSERT_STREQ(ref.privacy.accountant, "lattice-gaussian") << name;
            const SimResult r = simulate(name, keys, adv, {}, 19, 200, 37, 2, 3, false, 4, 0,
                                         in(Precision::Float, lanes, isa));
            EXPECT_EQ(r.final_regret, ref.final_regret) << name << " " << lanes << " " << isa << " " << r.policy;
            EXPECT_EQ(r.diagnostics, ref.diagnostics) << name << " " << lanes << " " << isa;
        }
}

/// The float run with `lattice` keys (discrete Gaussian nodes) against the double run with `continuous` keys (the
/// same sigma): two-sample KS of the final regret, and with `noise_law` of the diagnostic max_s ||Z_s||_inf, whose test
/// must also see the double run at 0.8 sigma (the power control). Each run takes its own instances (first ids 0,
/// 4000, 8000): independent samples over the same loss sequence.
void expect_continuous_law(const char* name, const std::string& adv, test::KeyList lattice, test::KeyList continuous,
                           bool noise_law) {
    const SimResult f = simulate(name, lattice, adv, {}, 8, 256, 4000, 2, 11, false, 4, 0, in(Precision::Float));
    const SimResult d = simulate(name, continuous, adv, {}, 8, 256, 4000, 2, 11, false, 4, 4000, in(Precision::Double));
    ASSERT_STREQ(f.privacy.accountant, "lattice-gaussian") << name;
    std::vector<double> a = f.final_regret, b = d.final_regret;
    const test::KsResult ks = test::ks_two_sample(a, b);
    EXPECT_GT(ks.p, test::kAlpha) << name << ": D = " << ks.d;
    if (!noise_law) return;
    const SimResult e = simulate(name, {{"epsilon", 1.0}, {"delta", kDelta}, {"node_scale", 0.8 * d.privacy.noise_scale}},
                                 adv, {}, 8, 256, 4000, 2, 11, false, 4, 8000, in(Precision::Double));
    std::vector<double> nf = f.diagnostic_column("max_noise_inf"), nd = d.diagnostic_column("max_noise_inf"),
                        ne = e.diagnostic_column("max_noise_inf");
    EXPECT_GT(test::ks_two_sample(nf, nd).p, test::kAlpha) << name << ": the noise's law";
    nf = f.diagnostic_column("max_noise_inf");
    EXPECT_LT(test::ks_two_sample(nf, ne).p, test::kAlpha) << name << ": power";
}

TEST(LatticeGaussianLearners, TheKeyReportsWhatItGuaranteesAndKeepsTheCalibratedScale) {
    for (const char* name : kLearners) {
        const std::string adv = adversary_of(name);
        for (double eps : {0.1, 1.0, 10.0}) {
            for (Precision prec : {Precision::Float, Precision::Double}) {
                const SimResult g = simulate(name, {{"epsilon", eps}, {"delta", kDelta}, {"noise", kDiscreteGaussian}},
                                             adv, {}, 4, 64, 4, 1, 1, false, 4, 0, in(prec));
                EXPECT_STREQ(g.privacy.accountant, "lattice-gaussian") << name << " eps " << eps;
                EXPECT_TRUE(g.privacy.as_run) << name;
                EXPECT_EQ(g.privacy.delta, kDelta) << name;
                EXPECT_LE(g.privacy.epsilon, eps) << name << " eps " << eps;
                const SimResult c = simulate(name, {{"epsilon", eps}, {"delta", kDelta}, {"noise", kGaussian}}, adv, {},
                                             4, 64, 4, 1, 1, false, 4, 0, in(Precision::Double));
                EXPECT_FALSE(c.privacy.as_run) << name << ": the continuous Gaussian's report is that of its law";
                EXPECT_LE(g.privacy.epsilon, c.privacy.epsilon) << name << " eps " << eps;
                // ... and no less than what the continuous Gaussian mechanism truly gives at this sigma.
                const double mu = std::sqrt(g.privacy.sensitivity_squared) * delta2_of(name, 4) / g.privacy.noise_scale;
                EXPECT_GE(g.privacy.epsilon, test::gaussian_mechanism_epsilon(mu, kDelta)) << name << " eps " << eps;
                EXPECT_EQ(g.privacy.noise_scale, c.privacy.noise_scale) << name << ": sigma is the calibration's";
            }
        }
        // In float, noise = "gaussian" keeps the continuous sampler (with the warning): the key is explicit.
        const SimResult f = simulate(name, {{"epsilon", 1.0}, {"delta", kDelta}, {"noise", kGaussian}}, adv, {}, 4, 64, 4,
                                     1, 1, false, 4, 0, in(Precision::Float));
        EXPECT_FALSE(f.privacy.as_run) << name;
    }
}

TEST(LatticeGaussianLearners, TheKeyWhereTheLatticeDoesNotApplyIsAnErrorAndInFloatItDoesNotWarn) {
    test::TempDir dir;
    const std::string base = "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"cube-coordinate\"\nd = 4\n"
                             "[learner]\nalgorithm = \"dp-ftrl-cube\"\nnoise = \"discrete-gaussian\"\nepsilon = 1\n";
    dir.write("h.toml", base + "delta = 1e-5\nmechanism = \"honaker\"\n");
    const test::CliResult h = test::run_cli(dir, "run h.toml --out h --quiet");
    EXPECT_EQ(h.rc, 2) << h.err;
    EXPECT_NE(h.err.find("needs mechanism = \"padded\" or \"binary\""), std::string::npos) << h.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("h/run.json")));
    dir.write("z.toml", base);
    const test::CliResult z = test::run_cli(dir, "run z.toml --out z --quiet");
    EXPECT_EQ(z.rc, 2) << z.err;
    EXPECT_NE(z.err.find("noise = \"discrete-gaussian\" needs delta in (0, 1)"), std::string::npos) << z.err;
    dir.write("f.toml", base + "delta = 1e-5\n");
    const test::CliResult f = test::run_cli(dir, "run f.toml --out f --quiet --set 'run.precision=\"float\"'");
    ASSERT_EQ(f.rc, 0) << f.err;
    EXPECT_EQ(f.err.find("[run] precision = \"float\""), std::string::npos) << "no float warning: " << f.err;
    const test::CliResult c = test::run_cli(dir, "run f.toml --out c --quiet --set 'run.precision=\"float\"' "
                                                 "--set 'learner.noise=\"gaussian\"'");
    ASSERT_EQ(c.rc, 0) << c.err;
    EXPECT_NE(c.err.find("the privacy reported for dp-ftrl-cube"), std::string::npos) << "continuous: " << c.err;
}

TEST(LatticeGaussianLearners, EveryCpuLaunchPolicyGivesTheSameBits) {
    for (const char* name : kLearners)
        expect_same_bits_everywhere(name, adversary_of(name), {{"epsilon", 1.0}, {"delta", kDelta}, {"noise", kDiscreteGaussian}});
}

TEST(LatticeGaussianLearners_Stat, TheRegretLawIsTheContinuousGaussianLaw) {
    // The final regret (all three) and, for the sphere and the cube, the noise's law (expect_continuous_law).
    for (const char* name : kLearners)
        expect_continuous_law(name, adversary_of(name), {{"epsilon", 1.0}, {"delta", kDelta}, {"noise", kDiscreteGaussian}},
                              {{"epsilon", 1.0}, {"delta", kDelta}, {"noise", kGaussian}},
                              std::string(name) != "dp-ftrl-experts");
}

// ---- DP-FTPL: discrete Gaussian nodes by default in float -----------------------------------------------------------

const char* const kFtpl[] = {"dp-ftpl-experts", "dp-ftpl-ball", "dp-ftpl-cube"};
constexpr double kFtplGaussian = 0, kFtplDiscreteGaussian = 2; // dp-ftpl's noise choice indices

std::string ftpl_adversary(const std::string& learner) {
    return learner == "dp-ftpl-experts" ? "bernoulli" : learner == "dp-ftpl-cube" ? "cube-coordinate" : "unit-vectors";
}

TEST(LatticeGaussianLearners, FtplFloatDefaultsToDiscreteGaussianNodesAndReportsWhatTheyGuarantee) {
    for (const char* name : kFtpl) {
        const std::string adv = ftpl_adversary(name);
        for (double eps : {0.1, 1.0, 10.0}) {
            const test::KeyList keys{{"epsilon", eps}, {"delta", kDelta}, {"calibration", 1.0}};
            const SimResult f = simulate(name, keys, adv, {}, 4, 64, 4, 1, 1, false, 4, 0, in(Precision::Float));
            EXPECT_STREQ(f.privacy.accountant, "lattice-gaussian") << name << " eps " << eps;
            EXPECT_TRUE(f.privacy.as_run);
            const SimResult d = simulate(name, keys, adv, {}, 4, 64, 4, 1, 1, false, 4, 0, in(Precision::Double));
            EXPECT_FALSE(d.privacy.as_run) << name << ": double keeps the continuous sampler";
            EXPECT_LE(f.privacy.epsilon, d.privacy.epsilon) << name << " eps " << eps;
            EXPECT_EQ(f.privacy.noise_scale, d.privacy.noise_scale) << name;
            const SimResult dl = simulate(name, {{"epsilon", eps}, {"delta", kDelta}, {"calibration", 1.0},
                                                 {"noise", kFtplDiscreteGaussian}},
                                          adv, {}, 4, 64, 4, 1, 1, false, 4, 0, in(Precision::Double));
            EXPECT_STREQ(dl.privacy.accountant, "lattice-gaussian") << name << ": asked for in double";
            EXPECT_EQ(dl.privacy.epsilon, f.privacy.epsilon);
            EXPECT_FALSE(simulate(name, {{"epsilon", eps}, {"delta", kDelta}, {"calibration", 1.0}, {"noise", kFtplGaussian}},
                                  adv, {}, 4, 64, 4, 1, 1, false, 4, 0, in(Precision::Float))
                             .privacy.as_run)
                << name << ": noise = \"gaussian\" keeps the continuous sampler in float";
        }
    }
}

TEST(LatticeGaussianLearners, FtplAskingWhereTheLatticeDoesNotApplyIsAnError) {
    test::TempDir dir;
    dir.write("h.toml", "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"cube-coordinate\"\nd = 4\n[learner]\n"
                        "algorithm = \"dp-ftpl-cube\"\nnoise = \"discrete-gaussian\"\nepsilon = 1\ndelta = 1e-5\n"
                        "mechanism = \"honaker\"\n");
    const test::CliResult h = test::run_cli(dir, "run h.toml --out h --quiet");
    EXPECT_EQ(h.rc, 2) << h.err;
    EXPECT_NE(h.err.find("needs mechanism = \"padded\" or \"binary\""), std::string::npos) << h.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("h/run.json")));
}

TEST(LatticeGaussianLearners, FtplEveryCpuLaunchPolicyGivesTheSameBits) {
    for (const char* name : kFtpl) expect_same_bits_everywhere(name, ftpl_adversary(name), {{"epsilon", 1.0}, {"delta", kDelta}});
}

TEST(LatticeGaussianLearners_Stat, FtplRegretLawIsTheContinuousGaussianLaw) {
    // Float (discrete Gaussian by default) against double (continuous): the regret and the noise's law.
    for (const char* name : kFtpl)
        expect_continuous_law(name, ftpl_adversary(name), {{"epsilon", 1.0}, {"delta", kDelta}},
                              {{"epsilon", 1.0}, {"delta", kDelta}}, true);
}

} // namespace
