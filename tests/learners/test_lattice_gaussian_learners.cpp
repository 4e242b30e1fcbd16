// Discrete Gaussian nodes in AS17's tree learners (noise = "discrete-gaussian"; docs/spec/model.md §1.11): what they
// report (at most the continuous Gaussian's report at the same sigma, which they keep), refused where the lattice does
// not apply, every CPU launch policy gives the same bits, and the regret law is the continuous Gaussian's. DP-FTPL
// (Gaussian nodes only) takes them by default in float: the same checks. So does dp-ftrl-smooth (Gaussian only, its
// clipped gradients held to l2 <= L as run), and private-bandit-fw offers them by the key (its batch estimates held to
// l2 <= Delta_2 / 2; §1.11 "Computed step vectors").
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

/// `dpregret run` of `toml` (written as NAME.toml into dir) is refused: exit 2, `message` on stderr, no NAME/run.json.
void expect_refused(const test::TempDir& dir, const std::string& name, const std::string& toml, const char* message) {
    dir.write(name + ".toml", toml);
    const test::CliResult r = test::run_cli(dir, "run " + name + ".toml --out " + name + " --quiet");
    EXPECT_EQ(r.rc, 2) << name << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file(name + "/run.json")));
}

/// The float run with `lattice` keys (discrete Gaussian nodes) against the double run with `continuous` keys (the
/// same sigma): two-sample KS of the final regret, and with `noise_column` (nullptr: none) of that diagnostic (the
/// largest noise the plays were computed from), whose test must also see the double run with `power` keys (by default
/// the continuous run's at 0.8 sigma: the power control). Each run takes its own instances (first ids 0, 4000, 8000):
/// independent samples over the same loss sequence.
void expect_continuous_law(const char* name, const std::string& adv, test::KeyList lattice, test::KeyList continuous,
                           const char* noise_column, test::KeyList power = {}) {
    const SimResult f = simulate(name, lattice, adv, {}, 8, 256, 4000, 2, 11, false, 4, 0, in(Precision::Float));
    const SimResult d = simulate(name, continuous, adv, {}, 8, 256, 4000, 2, 11, false, 4, 4000, in(Precision::Double));
    ASSERT_STREQ(f.privacy.accountant, "lattice-gaussian") << name;
    std::vector<double> a = f.final_regret, b = d.final_regret;
    const test::KsResult ks = test::ks_two_sample(a, b);
    EXPECT_GT(ks.p, test::kAlpha) << name << ": D = " << ks.d;
    if (noise_column == nullptr) return;
    const SimResult e =
        power.size() ? simulate(name, power, adv, {}, 8, 256, 4000, 2, 11, false, 4, 8000, in(Precision::Double))
                     : simulate(name, {{"epsilon", 1.0}, {"delta", kDelta}, {"node_scale", 0.8 * d.privacy.noise_scale}},
                                adv, {}, 8, 256, 4000, 2, 11, false, 4, 8000, in(Precision::Double));
    std::vector<double> nf = f.diagnostic_column(noise_column), nd = d.diagnostic_column(noise_column),
                        ne = e.diagnostic_column(noise_column);
    EXPECT_GT(test::ks_two_sample(nf, nd).p, test::kAlpha) << name << ": the noise's law";
    nf = f.diagnostic_column(noise_column);
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
                              std::string(name) != "dp-ftrl-experts" ? "max_noise_inf" : nullptr);
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
    expect_refused(dir, "h",
                   "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"cube-coordinate\"\nd = 4\n[learner]\n"
                   "algorithm = \"dp-ftpl-cube\"\nnoise = \"discrete-gaussian\"\nepsilon = 1\ndelta = 1e-5\n"
                   "mechanism = \"honaker\"\n",
                   "needs mechanism = \"padded\" or \"binary\"");
}

TEST(LatticeGaussianLearners, FtplEveryCpuLaunchPolicyGivesTheSameBits) {
    for (const char* name : kFtpl) expect_same_bits_everywhere(name, ftpl_adversary(name), {{"epsilon", 1.0}, {"delta", kDelta}});
}

TEST(LatticeGaussianLearners_Stat, FtplRegretLawIsTheContinuousGaussianLaw) {
    // Float (discrete Gaussian by default) against double (continuous): the regret and the noise's law.
    for (const char* name : kFtpl)
        expect_continuous_law(name, ftpl_adversary(name), {{"epsilon", 1.0}, {"delta", kDelta}},
                              {{"epsilon", 1.0}, {"delta", kDelta}}, "max_noise_inf");
}

// ---- dp-ftrl-smooth and private-bandit-fw: computed step vectors held to their l2 bound (§1.11) ---------------------

/// The report of a discrete Gaussian run (`g`, precision `prec`) against the continuous Gaussian run at the same keys
/// in double (`c`): the lattice Gaussian's accountant, as run, at most the request and the continuous report, at least
/// what the exact continuous Gaussian mechanism gives at this sigma (`delta2`: the step's replace-one l2 sensitivity),
/// with the calibration's sigma.
void expect_lattice_gaussian_report(const SimResult& g, const SimResult& c, double eps, double delta2, const char* what) {
    EXPECT_STREQ(g.privacy.accountant, "lattice-gaussian") << what << " eps " << eps;
    EXPECT_TRUE(g.privacy.as_run) << what;
    EXPECT_EQ(g.privacy.delta, kDelta) << what;
    EXPECT_LE(g.privacy.epsilon, eps) << what << " eps " << eps;
    EXPECT_FALSE(c.privacy.as_run) << what << ": the continuous Gaussian's report is that of its law";
    EXPECT_LE(g.privacy.epsilon, c.privacy.epsilon) << what << " eps " << eps;
    const double mu = std::sqrt(g.privacy.sensitivity_squared) * delta2 / g.privacy.noise_scale;
    EXPECT_GE(g.privacy.epsilon, test::gaussian_mechanism_epsilon(mu, kDelta)) << what << " eps " << eps;
    EXPECT_EQ(g.privacy.noise_scale, c.privacy.noise_scale) << what << ": sigma is the calibration's";
}

constexpr double kSmoothGaussian = 0, kSmoothDiscreteGaussian = 2; // dp-ftrl-smooth's noise choice indices

TEST(LatticeGaussianLearners, SmoothFloatDefaultsToDiscreteGaussianNodesAndReportsWhatTheyGuarantee) {
    // Squared losses (L = 2) and absolute losses (L = 1): Delta_2 = 2L.
    for (const char* adv : {"squared-realizable", "absolute-realizable"}) {
        const double delta2 = std::string(adv) == "squared-realizable" ? 4.0 : 2.0;
        for (double eps : {0.1, 1.0, 10.0})
            for (std::uint64_t T : {64ull, 4096ull}) {
                const SimResult f = simulate("dp-ftrl-smooth", {{"epsilon", eps}, {"delta", kDelta}}, adv, {}, 4, T, 4, 1,
                                             1, false, 4, 0, in(Precision::Float));
                const SimResult d = simulate("dp-ftrl-smooth", {{"epsilon", eps}, {"delta", kDelta}}, adv, {}, 4, T, 4, 1,
                                             1, false, 4, 0, in(Precision::Double));
                expect_lattice_gaussian_report(f, d, eps, delta2, adv);
                const SimResult dl = simulate("dp-ftrl-smooth",
                                              {{"epsilon", eps}, {"delta", kDelta}, {"noise", kSmoothDiscreteGaussian}},
                                              adv, {}, 4, T, 4, 1, 1, false, 4, 0, in(Precision::Double));
                EXPECT_STREQ(dl.privacy.accountant, "lattice-gaussian") << adv << ": asked for in double";
                EXPECT_EQ(dl.privacy.epsilon, f.privacy.epsilon) << adv;
                EXPECT_FALSE(simulate("dp-ftrl-smooth", {{"epsilon", eps}, {"delta", kDelta}, {"noise", kSmoothGaussian}},
                                      adv, {}, 4, T, 4, 1, 1, false, 4, 0, in(Precision::Float))
                                 .privacy.as_run)
                    << adv << ": noise = \"gaussian\" keeps the continuous sampler in float";
            }
    }
}

TEST(LatticeGaussianLearners, PrivateBanditFwDiscreteGaussianReportsWhatItGuarantees) {
    // Its batch estimates: Delta_2 = 2 (n / zeta) C (docs/spec/env21.md §B2), read back from the continuous report's
    // own mu (the classical Gaussian mechanism's, mu = sqrt(h') Delta_2 / sigma). The sensitivity calibration (sigma
    // for the key's eps exactly): the default's Lemma 5.4 scale reports eps far below the key's (3e-4 at eps = 0.1,
    // T = 4096), under the discrete Gaussian accounting's floor (SmallEpsilonTargetsKeepTheContinuousSampler).
    constexpr double kSensitivity = 1;
    for (double eps : {0.1, 1.0, 10.0})
        for (std::uint64_t T : {64ull, 4096ull})
            for (Precision prec : {Precision::Float, Precision::Double}) {
                const SimResult g = simulate("private-bandit-fw",
                                             {{"epsilon", eps}, {"delta", kDelta}, {"noise", kDiscreteGaussian},
                                              {"calibration", kSensitivity}},
                                             "bco-linear", {}, 4, T, 4, 1, 1, false, 4, 0, in(prec));
                const SimResult c = simulate("private-bandit-fw",
                                             {{"epsilon", eps}, {"delta", kDelta}, {"noise", kGaussian},
                                              {"calibration", kSensitivity}},
                                             "bco-linear", {}, 4, T, 4, 1, 1, false, 4, 0, in(Precision::Double));
                ASSERT_GT(c.privacy.gdp_mu, 0.0);
                const double delta2 = c.privacy.gdp_mu * c.privacy.noise_scale / std::sqrt(c.privacy.sensitivity_squared);
                expect_lattice_gaussian_report(g, c, eps, delta2, "private-bandit-fw");
            }
    // Without the key the float default stays discrete Laplace (Laplace nodes), and noise = "gaussian" in float keeps
    // the continuous sampler.
    EXPECT_STREQ(simulate("private-bandit-fw", {{"epsilon", 1.0}}, "bco-linear", {}, 4, 64, 4, 1, 1, false, 4, 0,
                          in(Precision::Float))
                     .privacy.accountant,
                 "lattice-laplace");
    EXPECT_FALSE(simulate("private-bandit-fw", {{"epsilon", 1.0}, {"delta", kDelta}, {"noise", kGaussian}}, "bco-linear",
                          {}, 4, 64, 4, 1, 1, false, 4, 0, in(Precision::Float))
                     .privacy.as_run);
}

TEST(LatticeGaussianLearners, SmoothAndBanditFwAskingWhereTheLatticeDoesNotApplyIsAnError) {
    test::TempDir dir;
    dir.write("s.toml", "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"squared-realizable\"\nd = 4\n"
                        "[learner]\nalgorithm = \"dp-ftrl-smooth\"\nnoise = \"discrete-gaussian\"\nepsilon = 1\n"
                        "delta = 1e-5\nmechanism = \"honaker\"\n");
    dir.write("b.toml", "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"bco-linear\"\nd = 4\n[learner]\n"
                        "algorithm = \"private-bandit-fw\"\nnoise = \"discrete-gaussian\"\nepsilon = 1\ndelta = 1e-5\n"
                        "mechanism = \"honaker\"\n");
    for (const char* f : {"s", "b"}) {
        const test::CliResult r = test::run_cli(dir, std::string("run ") + f + ".toml --out " + f + " --quiet");
        EXPECT_EQ(r.rc, 2) << f << ": " << r.err;
        EXPECT_NE(r.err.find("needs mechanism = \"padded\" or \"binary\""), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file(std::string(f) + "/run.json")));
    }
    // private-bandit-fw's discrete Gaussian needs delta; dp-ftrl-smooth's float default runs without the float warning.
    dir.write("z.toml", "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"bco-linear\"\nd = 4\n[learner]\n"
                        "algorithm = \"private-bandit-fw\"\nnoise = \"discrete-gaussian\"\nepsilon = 1\n");
    const test::CliResult z = test::run_cli(dir, "run z.toml --out z --quiet");
    EXPECT_EQ(z.rc, 2) << z.err;
    EXPECT_NE(z.err.find("noise = \"discrete-gaussian\" needs delta in (0, 1)"), std::string::npos) << z.err;
    // ... also when node_scale is given (which waives delta for the continuous Gaussian only).
    const std::string n = "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"cube-coordinate\"\nd = 4\n"
                          "[learner]\nalgorithm = \"dp-ftrl-cube\"\nnoise = \"discrete-gaussian\"\nepsilon = 1\n"
                          "node_scale = 3\n";
    expect_refused(dir, "n", n, "[learner] delta");
    expect_refused(dir, "n", n, "needs delta in (0, 1) (got 0), also with node_scale given");
    dir.write("f.toml", "[run]\ninstances = 4\nrounds = 64\nprecision = \"float\"\n[adversary]\n"
                        "kind = \"squared-realizable\"\nd = 4\n[learner]\nalgorithm = \"dp-ftrl-smooth\"\nepsilon = 1\n"
                        "delta = 1e-5\n");
    const test::CliResult f = test::run_cli(dir, "run f.toml --out f --quiet");
    ASSERT_EQ(f.rc, 0) << f.err;
    EXPECT_EQ(f.err.find("[run] precision = \"float\""), std::string::npos) << "no float warning: " << f.err;
}

TEST(LatticeGaussianLearners, SmallEpsilonTargetsKeepTheContinuousSampler) {
    // The accounting's floor (about 6e-4 at delta = 1e-5; mech::lattice_gaussian_scale_for): a calibration whose eps
    // is below it keeps the continuous sampler (with the float warning) instead of raising sigma without end (DP-FTPL
    // at eps = 1e-4 once asked for sigma = 7e306 and was refused), and asking for the key there is an error naming
    // the floor.
    const SimResult f = simulate("dp-ftpl-cube", {{"epsilon", 1e-4}, {"delta", kDelta}}, "cube-coordinate", {}, 4, 64, 4,
                                 1, 1, false, 4, 0, in(Precision::Float));
    const SimResult d = simulate("dp-ftpl-cube", {{"epsilon", 1e-4}, {"delta", kDelta}}, "cube-coordinate", {}, 4, 64, 4,
                                 1, 1, false, 4, 0, in(Precision::Double));
    EXPECT_FALSE(f.privacy.as_run);
    EXPECT_EQ(f.privacy.noise_scale, d.privacy.noise_scale);
    EXPECT_LE(f.privacy.epsilon, 1e-4);
    // ... while at eps = 1e-2 the lattice applies, at the calibration's sigma.
    const SimResult g = simulate("dp-ftpl-cube", {{"epsilon", 1e-2}, {"delta", kDelta}}, "cube-coordinate", {}, 4, 64, 4,
                                 1, 1, false, 4, 0, in(Precision::Float));
    EXPECT_TRUE(g.privacy.as_run);
    EXPECT_LE(g.privacy.epsilon, 1e-2);
    test::TempDir dir;
    // private-bandit-fw's default (conservative) scale at eps = 0.1, T = 4096 reports 3e-4 continuous.
    expect_refused(dir, "b",
                   "[run]\ninstances = 4\nrounds = 4096\n[adversary]\nkind = \"bco-linear\"\nd = 4\n[learner]\n"
                   "algorithm = \"private-bandit-fw\"\nnoise = \"discrete-gaussian\"\nepsilon = 0.1\ndelta = 1e-5\n",
                   "accounting has a floor");
}

TEST(LatticeGaussianLearners, SmoothAndBanditFwEveryCpuLaunchPolicyGivesTheSameBits) {
    expect_same_bits_everywhere("dp-ftrl-smooth", "squared-realizable", {{"epsilon", 1.0}, {"delta", kDelta}});
    expect_same_bits_everywhere("dp-ftrl-smooth", "absolute-realizable", {{"epsilon", 1.0}, {"delta", kDelta}});
    expect_same_bits_everywhere("private-bandit-fw", "bco-linear",
                                {{"epsilon", 1.0}, {"delta", kDelta}, {"noise", kDiscreteGaussian}});
}

TEST(LatticeGaussianLearners_Stat, SmoothAndBanditFwRegretLawIsTheContinuousGaussianLaw) {
    // Float discrete Gaussian against double continuous: the regret and max ||Z||_2 (the noise the plays were computed
    // from), with the power control (dp-ftrl-smooth: 0.8 sigma; private-bandit-fw: eps = 1.25, sigma 20% smaller).
    expect_continuous_law("dp-ftrl-smooth", "squared-realizable", {{"epsilon", 1.0}, {"delta", kDelta}},
                          {{"epsilon", 1.0}, {"delta", kDelta}}, "max_noise_l2");
    expect_continuous_law("private-bandit-fw", "bco-linear",
                          {{"epsilon", 1.0}, {"delta", kDelta}, {"noise", kDiscreteGaussian}},
                          {{"epsilon", 1.0}, {"delta", kDelta}, {"noise", kGaussian}}, "max_noise_l2",
                          {{"epsilon", 1.25}, {"delta", kDelta}, {"noise", kGaussian}});
}

} // namespace
