// Lattice noise in AS17's tree learners (docs/spec/model.md §1.8): the default in float, a key in double, refused
// where it does not apply; what the learners report; every CPU launch policy gives the same bits; and the regret law
// is the continuous double law's (the lattice moves each release by less than a lattice step and raises the node
// scale by under 1.6%).
//
//   LatticeLearners       (unit)         choice of the construction and the privacy report; bitwise equal across
//                                        lanes (instances / coordinates) and ISAs
//   LatticeLearners_Stat  (statistical)  two-sample KS of the final regret: float lattice vs double continuous
// DP-MAB's feedback (AS17 Alg. 4) is the same construction with one release per round (§1.8 "One release per
// round"): its choice and report, the release exact and equal in both precisions and on the documented streams,
// and its law (KS against the continuous Laplace, with a power control). DP-SCRiBLe's feedback (AS17 Alg. 4 on a
// loss vector) is the same with d coordinates per release: its choice and report for the three sets at eps in {0.1,
// 1, 10} and two d, the release exact and on the documented streams, its law, the launch policies' bits and the
// regret law against the continuous double run. private-bandit-fw's tree over batch estimates (§1.8 "Batch
// estimates"): the command line and the regret law here, its report and its bits in test_env21.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/run_cli.hpp"
#include "kernels/learners/dp_mab.hpp"
#include "host/simd/pack.hpp"
#include "kernels/learners/scrible_lanes.hpp"
#include "learners/simulate.hpp"
#include "noise/stat_tests.hpp"

namespace {

using namespace dpr;
using test::SimOptions;
using test::SimResult;
using test::simulate;

constexpr double kDiscreteLaplace = 3, kHonaker = 2; // noise / mechanism choice indices

using test::in;

const char* const kLearners[] = {"dp-ftrl-experts", "dp-ftrl-sphere", "dp-ftrl-cube"};

std::string adversary_of(const std::string& learner) {
    return learner == "dp-ftrl-experts" ? "bernoulli" : learner == "dp-ftrl-cube" ? "cube-coordinate" : "unit-vectors";
}

TEST(LatticeLearners, FloatDefaultsToTheLatticeAndReportsWhatItGuarantees) {
    for (const char* name : kLearners) {
        const std::string adv = adversary_of(name);
        for (double eps : {0.1, 1.0, 10.0}) {
            const SimResult f = simulate(name, {{"epsilon", eps}}, adv, {}, 4, 64, 4, 1, 1, false, 4, 0, in(Precision::Float));
            EXPECT_STREQ(f.privacy.accountant, "lattice-laplace") << name << " eps " << eps;
            EXPECT_LE(f.privacy.epsilon, eps) << name;
            EXPECT_GT(f.privacy.epsilon, 0.99 * eps) << name;
            EXPECT_LT(f.privacy.delta, 1e-15) << name;
            const SimResult d = simulate(name, {{"epsilon", eps}}, adv, {}, 4, 64, 4, 1, 1, false, 4, 0, in(Precision::Double));
            EXPECT_STREQ(d.privacy.accountant, "pure-laplace") << name << ": double keeps the continuous sampler";
            EXPECT_TRUE(d.privacy.nodes_hold_losses) << name << ": the auditor's exact curve (tradeoff.cpp)";
            EXPECT_GT(f.privacy.noise_scale, d.privacy.noise_scale) << "the lattice's slightly larger scale";
            EXPECT_LT(f.privacy.noise_scale, 1.016 * d.privacy.noise_scale);
            const SimResult dl = simulate(name, {{"epsilon", eps}, {"noise", kDiscreteLaplace}}, adv, {}, 4, 64, 4, 1, 1,
                                          false, 4, 0, in(Precision::Double));
            EXPECT_STREQ(dl.privacy.accountant, "lattice-laplace") << name << ": asked for in double";
            EXPECT_EQ(dl.privacy.epsilon, f.privacy.epsilon);
        }
        // Honaker's estimator has no exact release: the float default falls back to the continuous sampler.
        const SimResult h = simulate(name, {{"epsilon", 1.0}, {"mechanism", kHonaker}}, adv, {}, 4, 64, 4, 1, 1, false,
                                     4, 0, in(Precision::Float));
        EXPECT_STREQ(h.privacy.accountant, "pure-laplace") << name;
    }
}

TEST(LatticeLearners, AskingForTheLatticeWhereItDoesNotApplyIsAnError) {
    test::TempDir dir;
    const std::string base = "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"cube-coordinate\"\nd = 4\n"
                             "[learner]\nalgorithm = \"dp-ftrl-cube\"\nnoise = \"discrete-laplace\"\n";
    dir.write("h.toml", base + "epsilon = 1\nmechanism = \"honaker\"\n");
    const test::CliResult h = test::run_cli(dir, "run h.toml --out h --quiet");
    EXPECT_EQ(h.rc, 2) << h.err;
    EXPECT_NE(h.err.find("needs mechanism = \"padded\" or \"binary\""), std::string::npos) << h.err;
    // A node epsilon too large for the sampler's truncation (T = 2: one level, eps = 200).
    dir.write("e.toml", base + "epsilon = 200\n");
    const test::CliResult e = test::run_cli(dir, "run e.toml --out e --quiet --set run.rounds=2");
    EXPECT_EQ(e.rc, 2) << e.err;
    EXPECT_NE(e.err.find("delta above 1e-15"), std::string::npos) << e.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("e/run.json")));
    // The same without the key in float: the continuous sampler, with its warning, not an error.
    dir.write("f.toml", "[run]\ninstances = 4\nrounds = 2\nprecision = \"float\"\n[adversary]\nkind = \"cube-coordinate\"\n"
                        "d = 4\n[learner]\nalgorithm = \"dp-ftrl-cube\"\nepsilon = 200\n");
    const test::CliResult f = test::run_cli(dir, "run f.toml --out f --quiet");
    EXPECT_EQ(f.rc, 0) << f.err;
    EXPECT_NE(f.err.find("Mironov"), std::string::npos) << f.err;
}

/// The command line around lattice noise for `learner`, whose config is `base` ([learner] with its algorithm last) plus
/// an epsilon: at `big_eps` (beyond the sampler's truncation) `noise = "discrete-laplace"` exits 2 naming the key
/// and the reason, and writes nothing; at eps = 1 in float the default is the lattice, without the float warning;
/// `noise = "laplace"` in float gets the warning, naming the learner.
void expect_lattice_on_the_command_line(const std::string& learner, const std::string& base, const char* big_eps) {
    test::TempDir dir;
    dir.write("r.toml", base + "epsilon = " + big_eps + "\nnoise = \"discrete-laplace\"\n");
    const test::CliResult e = test::run_cli(dir, "run r.toml --out e --quiet");
    EXPECT_EQ(e.rc, 2) << e.err;
    EXPECT_NE(e.err.find("delta above 1e-15"), std::string::npos) << e.err;
    EXPECT_NE(e.err.find("noise"), std::string::npos) << e.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("e/run.json")));
    dir.write("d.toml", base + "epsilon = 1\n");
    const test::CliResult l = test::run_cli(dir, "run d.toml --out l --quiet --set 'run.precision=\"float\"'");
    ASSERT_EQ(l.rc, 0) << l.err;
    EXPECT_EQ(l.err.find("[run] precision = \"float\""), std::string::npos) << learner << ", lattice noise: " << l.err;
    const test::CliResult c = test::run_cli(dir, "run d.toml --out c --quiet --set 'run.precision=\"float\"' "
                                                 "--set 'learner.noise=\"laplace\"'");
    ASSERT_EQ(c.rc, 0) << c.err;
    EXPECT_NE(c.err.find("the privacy reported for " + learner), std::string::npos) << "continuous in float: " << c.err;
}

TEST(LatticeLearners, SvtExpertsExactSamplersOnTheCommandLine) {
    // svt-experts' exact samplers (docs/spec/model.md §1.9, §1.10; its own tests in test_svt_experts_exact.cpp): at
    // eps = 1000 the lattice sparse vector's truncation would matter.
    expect_lattice_on_the_command_line("svt-experts", "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"halving\"\n"
                                                      "d = 16\n[learner]\nalgorithm = \"svt-experts\"\n", "1000");
}

TEST(LatticeLearners, PotentialSvtExpertsExactSamplersOnTheCommandLine) {
    // potential-svt-experts' exact samplers (docs/spec/afkt23.md §C4 "Exact samplers"; its own tests in
    // test_potential_svt_exact.cpp): at eps = 3000 (eps_0 about 500 per phase at d = 16) the lattice sparse vector's
    // truncation would matter.
    expect_lattice_on_the_command_line("potential-svt-experts",
                                       "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"halving\"\n"
                                       "d = 16\n[learner]\nalgorithm = \"potential-svt-experts\"\n",
                                       "3000");
}

TEST(LatticeLearners, TreeExpertsExactSamplersOnTheCommandLine) {
    // tree-experts' exact samplers (docs/spec/afkt23.md §C3 "Exact samplers"; its own tests in
    // test_tree_experts_exact.cpp): at eps = 3000 (B = 16, h = 6, Gamma = 2^-14: a step moves the lattice trees by
    // 16 / Gamma = 2.6e5 lattice steps) the discrete Laplace's truncation at 2^17 would matter.
    expect_lattice_on_the_command_line("tree-experts",
                                       "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"realizable\"\n"
                                       "d = 16\n[learner]\nalgorithm = \"tree-experts\"\n",
                                       "3000");
}

using test::resolved;

using learners::DpMab;

DpMab::Params mab(test::KeyList keys, bool float_precision, std::uint32_t d = 4, std::uint64_t T = 64) {
    return resolved<DpMab>(keys, float_precision, d, T);
}

constexpr double kMabDiscreteLaplace = 1; // dp-mab's noise choice index

TEST(LatticeLearners, DpMabFeedsBackLatticeNoiseInFloatAndReportsWhatItGuarantees) {
    for (double eps : {0.1, 1.0, 10.0}) {
        const DpMab::Params f = mab({{"epsilon", eps}}, true);
        ASSERT_TRUE(f.lattice) << eps;
        const learners::PrivacyReport rf = DpMab::privacy(f);
        EXPECT_STREQ(rf.accountant, "lattice-laplace") << eps;
        EXPECT_LE(rf.epsilon, eps);
        EXPECT_GT(rf.epsilon, 0.9999 * eps) << "lambda is raised by under 0.05%";
        EXPECT_LT(rf.delta, 1e-15);
        EXPECT_DOUBLE_EQ(rf.noise_scale, f.lambda);
        EXPECT_EQ(f.dlap.gamma * f.dlap.t, f.lambda) << "t = lambda / Gamma";
        const DpMab::Params d = mab({{"epsilon", eps}}, false);
        EXPECT_FALSE(d.lattice) << "double keeps the continuous sampler";
        EXPECT_GT(f.lambda, d.lambda);
        EXPECT_LT(f.lambda, 1.0005 * d.lambda);
        const DpMab::Params dl = mab({{"epsilon", eps}, {"noise", kMabDiscreteLaplace}}, false);
        ASSERT_TRUE(dl.lattice) << "asked for in double";
        EXPECT_EQ(DpMab::privacy(dl).epsilon, rf.epsilon);
        // A loss_bound below 1 buys no privacy: the sensitivity is max(B, 1), as for the continuous report.
        const DpMab::Params b = mab({{"epsilon", eps}, {"loss_bound", 0.5}}, true);
        ASSERT_TRUE(b.lattice);
        EXPECT_GT(DpMab::privacy(b).epsilon, 1.99 * eps);
        EXPECT_EQ(DpMab::privacy(mab({{"epsilon", eps}, {"noise", 0.0}}, true)).accountant,
                  std::string("pure-laplace (local: Lemma 4.2)"))
            << "noise = \"laplace\" keeps the continuous sampler in float";
    }
    // A given noise_scale is kept and its lattice eps reported.
    const DpMab::Params g = mab({{"epsilon", 1.0}, {"noise_scale", 2.0}}, true);
    ASSERT_TRUE(g.lattice);
    EXPECT_EQ(g.lambda, 2.0);
    EXPECT_GT(DpMab::privacy(g).epsilon, 0.5);
    EXPECT_LT(DpMab::privacy(g).epsilon, 0.5 * 1.0005);
    // eps = 100 is beyond the sampler's truncation (delta would be 1): the float default falls back, the key is refused.
    EXPECT_FALSE(mab({{"epsilon", 100.0}}, true).lattice);
    expect_lattice_on_the_command_line("dp-mab", "[run]\ninstances = 4\nrounds = 16\n[adversary]\nkind = \"bernoulli\"\n"
                                                 "d = 3\n[learner]\nalgorithm = \"dp-mab\"\n",
                                       "100");
}

// The release is on the lattice, within the sampler's range of the loss, and the same bits in float and double (the
// team's precision does not enter it).
TEST(LatticeLearners, DpMabReleaseIsExactOnTheLatticeAndTheSameInBothPrecisions) {
    const DpMab::Params p = mab({{"epsilon", 0.7}}, true);
    ASSERT_TRUE(p.lattice);
    const double gamma = p.dlap.gamma;
    std::uint32_t up = 0, n = 0;
    for (std::uint32_t k = 0; k < 200; ++k)
        for (std::uint64_t t = 1; t <= 50; ++t)
            for (std::uint32_t i = 0; i < 3; ++i) {
                // c on the grid 2^-30 (so c + Gamma is exact), mostly between lattice points.
                const double c = std::ldexp(static_cast<double>((k * 7919ull + t * 104729ull + i * 31ull) % (1ull << 30)), -30);
                const double v = DpMab::lattice_feedback<double>(p, RngKey{3, 0}, k, t, i, c);
                ASSERT_EQ(v, DpMab::lattice_feedback<float>(p, RngKey{3, 0}, k, t, i, c)) << k << " " << t << " " << i;
                const double units = v / gamma;
                ASSERT_EQ(units, std::floor(units)) << "on the lattice";
                ASSERT_LE(std::fabs(units - c / gamma), noise::kDlapMax + 1.0);
                // The noise is the same for every c (the rounding word apart): c and c + Gamma differ by one step.
                const double w = DpMab::lattice_feedback<double>(p, RngKey{3, 0}, k, t, i, c + gamma);
                up += w - v != gamma;
                ++n;
            }
    EXPECT_EQ(up, 0u) << "of " << n << ": a loss one lattice step higher releases one step higher";
}

TEST(LatticeLearners_Stat, DpMabLatticeFeedbackIsLaplaceAndIsWhatTheEngineFedBack) {
    // (a) c~ - c over (instance, round, arm) for c = 0.3 (not on the lattice: the rounding acts) against Lap(lambda):
    // the lattice's atoms (mass about 1/(2t) <= 5e-4) are below the KS resolution at 1e6 (2.7e-3 at alpha = 1e-6),
    // a 5% scale error is not.
    const DpMab::Params p = mab({{"epsilon", 0.5}}, true);
    ASSERT_TRUE(p.lattice);
    std::vector<double> z;
    z.reserve(1000000);
    for (std::uint32_t k = 0; k < 1000; ++k)
        for (std::uint64_t t = 1; t <= 250; ++t)
            for (std::uint32_t i = 0; i < 4; ++i) z.push_back(DpMab::lattice_feedback(p, RngKey{1, 0}, k, t, i, 0.3) - 0.3);
    auto lap = [](double b) { return [b](double x) { return x < 0 ? 0.5 * std::exp(x / b) : 1.0 - 0.5 * std::exp(-x / b); }; };
    std::vector<double> z2 = z;
    EXPECT_GT(test::ks_one_sample(z, lap(p.lambda)).p, test::kAlpha);
    EXPECT_LT(test::ks_one_sample(z2, lap(1.05 * p.lambda)).p, test::kAlpha);
    // (b) The engine's feedback at T = 1 in float (bernoulli losses are 0 or 1, lattice points: Z = Gamma n) is the
    // documented stream's release for the arm played.
    const std::uint32_t m = 20000, d = 3;
    const SimResult r = simulate("dp-mab", {{"epsilon", 0.5}}, "bernoulli", {}, d, 1, m, 2, 1, false, 1, 0, in(Precision::Float));
    ASSERT_STREQ(r.privacy.accountant, "lattice-laplace");
    const DpMab::Params p1 = mab({{"epsilon", 0.5}}, true, d, 1);
    std::uint32_t not_a_release = 0;
    for (std::uint32_t k = 0; k < m; ++k) {
        const double fed = r.diagnostic("sum_feedback_noise", k);
        bool found = false;
        for (std::uint32_t i = 0; i < d; ++i)
            for (double c : {0.0, 1.0}) found |= DpMab::lattice_feedback(p1, RngKey{1, 0}, k, 1, i, c) - c == fed;
        not_a_release += !found;
    }
    EXPECT_EQ(not_a_release, 0u);
}

TEST(LatticeLearners, EveryCpuLaunchPolicyGivesTheSameBits) {
    for (const char* name : kLearners) {
        const std::string adv = adversary_of(name);
        // Coordinate lanes sum in another order than instance lanes (docs/ARCHITECTURE.md §5): each layout is
        // compared across instruction sets and thread counts.
        for (const char* lanes : {"instances", "coordinates"})
            for (const char* isa : {"generic", "auto"}) {
                const SimResult ref = simulate(name, {{"epsilon", 1.0}}, adv, {}, 19, 200, 37, 1, 3, false, 4, 0,
                                               in(Precision::Float, lanes, "generic"));
                const SimResult r = simulate(name, {{"epsilon", 1.0}}, adv, {}, 19, 200, 37, 2, 3, false, 4, 0,
                                             in(Precision::Float, lanes, isa));
                EXPECT_EQ(r.final_regret, ref.final_regret) << name << " " << lanes << " " << isa << " " << r.policy;
                EXPECT_EQ(r.diagnostics, ref.diagnostics) << name << " " << lanes << " " << isa;
            }
    }
}

TEST(LatticeLearners_Stat, TheRegretLawIsTheContinuousDoubleLaw) {
    // The final regret (all three learners) and, for the sphere and the cube, the diagnostic max_s ||Z_s||_inf (the
    // noise the plays were computed from, which scales with the node scale: the meta-test shows the KS test sees a
    // node scale 25% smaller there; the final regret at this size barely depends on the scale).
    // Each run takes its own instances (first ids 0, 4000, 8000) over the same loss sequence: independent samples.
    for (const char* name : kLearners) {
        const std::string adv = adversary_of(name);
        const SimResult f = simulate(name, {{"epsilon", 1.0}}, adv, {}, 8, 256, 4000, 2, 11, false, 4, 0, in(Precision::Float));
        const SimResult d = simulate(name, {{"epsilon", 1.0}}, adv, {}, 8, 256, 4000, 2, 11, false, 4, 4000, in(Precision::Double));
        ASSERT_STREQ(f.privacy.accountant, "lattice-laplace");
        std::vector<double> a = f.final_regret, b = d.final_regret;
        const test::KsResult ks = test::ks_two_sample(a, b);
        EXPECT_GT(ks.p, test::kAlpha) << name << ": D = " << ks.d;
        if (std::string(name) == "dp-ftrl-experts") continue;
        const SimResult e = simulate(name, {{"epsilon", 1.25}}, adv, {}, 8, 256, 4000, 2, 11, false, 4, 8000, in(Precision::Double));
        std::vector<double> nf = f.diagnostic_column("max_noise_inf"), nd = d.diagnostic_column("max_noise_inf"),
                            ne = e.diagnostic_column("max_noise_inf");
        EXPECT_GT(test::ks_two_sample(nf, nd).p, test::kAlpha) << name << ": the noise's law";
        nf = f.diagnostic_column("max_noise_inf");
        EXPECT_LT(test::ks_two_sample(nf, ne).p, test::kAlpha) << name << ": power";
    }
}

// ---- DP-SCRiBLe (AS17 Alg. 4 on the loss vector; docs/spec/model.md §1.8 "One release per round") -----------------

struct ScribleCase {
    const char* name;
    const char* adversary;
};
const ScribleCase kScribles[] = {
    {"dp-scrible-ball", "drifting"}, {"dp-scrible-cube", "cube-coordinate"}, {"dp-scrible-simplex", "bernoulli"}};
constexpr double kScribleDiscreteLaplace = 1; // dp-scrible's noise choice index

template <class L>
typename L::Params scrible(test::KeyList keys, bool float_precision, std::uint32_t d, std::uint64_t T = 256) {
    return resolved<L>(keys, float_precision, d, T);
}

template <class L>
void expect_scrible_report(double eps, std::uint32_t d) {
    const auto f = scrible<L>({{"epsilon", eps}}, true, d);
    ASSERT_TRUE(f.lattice) << L::kName << " eps " << eps << " d " << d;
    const learners::PrivacyReport rf = L::privacy(f);
    EXPECT_STREQ(rf.accountant, "lattice-laplace");
    EXPECT_LE(rf.epsilon, eps) << L::kName << " eps " << eps << " d " << d;
    EXPECT_GT(rf.epsilon, 0.9999 * eps) << "lambda is raised by under 0.05%";
    EXPECT_LT(rf.delta, 1e-15);
    EXPECT_EQ(f.dlap.gamma * f.dlap.t, f.lambda) << "t = lambda / Gamma";
    const auto db = scrible<L>({{"epsilon", eps}}, false, d);
    EXPECT_FALSE(db.lattice) << "double keeps the continuous sampler";
    EXPECT_STREQ(L::privacy(db).accountant, "pure-laplace");
    EXPECT_DOUBLE_EQ(L::privacy(db).epsilon, eps) << "strict: Delta / lambda";
    EXPECT_GT(f.lambda, db.lambda);
    EXPECT_LT(f.lambda, 1.0005 * db.lambda);
    const auto dl = scrible<L>({{"epsilon", eps}, {"noise", kScribleDiscreteLaplace}}, false, d);
    ASSERT_TRUE(dl.lattice) << "asked for in double";
    EXPECT_EQ(L::privacy(dl).epsilon, rf.epsilon);
    EXPECT_FALSE(scrible<L>({{"epsilon", eps}, {"noise", 0.0}}, true, d).lattice)
        << "noise = \"laplace\" keeps the continuous sampler in float";
    // calibration = "paper": the paper's lambda = ||Y||_1 / eps, and the old report in double, exactly.
    const auto pp = scrible<L>({{"epsilon", eps}, {"calibration", 0.0}}, false, d);
    EXPECT_EQ(L::privacy(pp).epsilon, pp.delta1 / pp.lambda);
    const auto pf = scrible<L>({{"epsilon", eps}, {"calibration", 0.0}}, true, d);
    ASSERT_TRUE(pf.lattice);
    EXPECT_LE(L::privacy(pf).epsilon, pp.delta1 / pp.lambda) << "the lattice keeps the paper calibration's eps";
}

TEST(LatticeLearners, DpScribleFeedsBackLatticeNoiseInFloatAndReportsWhatItGuarantees) {
    for (double eps : {0.1, 1.0, 10.0})
        for (std::uint32_t d : {3u, 16u, 4096u}) { // 4096: delta's factor d and eps's d 2^-31 term
            expect_scrible_report<learners::DpScribleBall>(eps, d);
            expect_scrible_report<learners::DpScribleCube>(eps, d);
            expect_scrible_report<learners::DpScribleSimplex>(eps, d);
        }
    // A given noise_scale is kept and its lattice eps reported (cube, d = 4: Delta = 2).
    const auto g = scrible<learners::DpScribleCube>({{"epsilon", 1.0}, {"noise_scale", 4.0}}, true, 4);
    ASSERT_TRUE(g.lattice);
    EXPECT_EQ(g.lambda, 4.0);
    EXPECT_GT(learners::DpScribleCube::privacy(g).epsilon, 0.5);
    EXPECT_LT(learners::DpScribleCube::privacy(g).epsilon, 0.5 * 1.0005);
    // eps = 200 on the simplex (Delta = d): beyond the sampler's truncation; the float default falls back, the key
    // is refused naming it, and nothing is written.
    EXPECT_FALSE(scrible<learners::DpScribleSimplex>({{"epsilon", 200.0}}, true, 4).lattice);
    expect_lattice_on_the_command_line("dp-scrible-simplex",
                                       "[run]\ninstances = 4\nrounds = 256\n[adversary]\nkind = \"bernoulli\"\nd = 4\n"
                                       "[learner]\nalgorithm = \"dp-scrible-simplex\"\n",
                                       "200");
}

// The release r_t(i) is on the lattice, within the sampler's range of the loss, one step higher for a loss one step
// higher (the noise depends on the streams only), and the lanes' version (16 instances per SIMD step) is the scalar
// reference's on every lane.
TEST(LatticeLearners, DpScribleReleaseIsExactOnTheLatticeAndTheLanesDrawTheScalarRelease) {
    using L = learners::DpScribleBall;
    const auto p = scrible<L>({{"epsilon", 0.7}}, true, 5);
    ASSERT_TRUE(p.lattice);
    const double gamma = p.dlap.gamma;
    std::uint32_t up = 0, n = 0, lanes_differ = 0;
    using P = simd::Pack<std::uint32_t, 16>;
    using PD = simd::Pack<double, 16>;
    for (std::uint32_t k = 0; k < 64; ++k)
        for (std::uint64_t t = 1; t <= 40; ++t)
            for (std::uint32_t i = 0; i < 5; ++i) {
                const double l = std::ldexp(static_cast<double>((k * 7919ull + t * 104729ull + i * 31ull) % (1ull << 30)),
                                            -30) * 2.0 - 1.0; // in [-1, 1), on the grid 2^-29
                const learners::InstanceCtx c{3, 0, k};
                const double v = L::lattice_coordinate(p, c, t, i, l);
                const double units = v / gamma;
                ASSERT_EQ(units, std::floor(units)) << "on the lattice";
                ASSERT_LE(std::fabs(units - l / gamma), noise::kDlapMax + 1.0);
                up += L::lattice_coordinate(p, c, t, i, l + gamma) - v != gamma;
                ++n;
                if (k % 16 == 0) { // lanes k .. k + 15 against the scalar
                    P ids;
                    for (int j = 0; j < 16; ++j) ids.set(j, k + static_cast<std::uint32_t>(j));
                    const PD r = learners::scrible_detail::feedback_lattice(RngKey{3, 0}, ids, static_cast<std::uint32_t>(t),
                                                                            P(i), PD(l), p.dlap);
                    for (int j = 0; j < 16; ++j)
                        lanes_differ += r[j] != L::lattice_coordinate(p, learners::InstanceCtx{3, 0, k + j}, t, i, l);
                }
            }
    EXPECT_EQ(up, 0u) << "of " << n << ": a loss one lattice step higher releases one step higher";
    EXPECT_EQ(lanes_differ, 0u);
}

/// The engine's feedback noise in float is the release of the documented streams: at T = 1, on losses that are
/// lattice points (0 or +-1: the rounding keeps them), max_noise_inf = max_i |r_1(i) - l_1(i)| = Gamma max_i |n_i|, with
/// n_i rebuilt here from the 29 words of (FeedbackNoise, sub 1, round 1, element i) of each instance, on instance and
/// coordinate lanes (a stream shared by two coordinates, or the continuous sampler, gives other values).
template <class L>
void expect_engine_feeds_back_the_documented_release(const char* adversary) {
    const std::uint32_t d = 6, m = 400;
    const auto p = resolved<L>({{"epsilon", 0.5}}, true, d, 1);
    ASSERT_TRUE(p.lattice);
    for (const char* lanes : {"instances", "coordinates"}) {
        const SimResult r = simulate(L::kName, {{"epsilon", 0.5}}, adversary, {}, d, 1, m, 2, 1, false, 1, 0,
                                     in(Precision::Float, lanes));
        ASSERT_STREQ(r.privacy.accountant, "lattice-laplace");
        std::uint32_t differ = 0;
        for (std::uint32_t k = 0; k < m; ++k) {
            double zmax = 0.0;
            for (std::uint32_t i = 0; i < d; ++i) {
                std::uint32_t wd[noise::kDlapWords];
                noise::dlap_words(rng::LaneStream<std::uint32_t>{1u, 0u, k, rng::Purpose::FeedbackNoise, 1u, 1u, i}, wd);
                zmax = std::fmax(zmax, std::fabs(noise::dlap_from_words<double>(wd, p.dlap)));
            }
            differ += r.diagnostic("max_noise_inf", k) != zmax;
        }
        EXPECT_EQ(differ, 0u) << L::kName << " " << lanes << " (" << r.policy << ")";
    }
}

TEST(LatticeLearners, DpScribleEngineFeedsBackTheDocumentedRelease) {
    expect_engine_feeds_back_the_documented_release<learners::DpScribleBall>("cube-coordinate");
    expect_engine_feeds_back_the_documented_release<learners::DpScribleCube>("cube-coordinate");
    expect_engine_feeds_back_the_documented_release<learners::DpScribleSimplex>("bernoulli");
}

TEST(LatticeLearners_Stat, DpScribleLatticeNoiseIsLaplace) {
    // r - l over (instance, round, coordinate) for l = 0.3 (off the lattice: the rounding acts) against Lap(lambda),
    // and the same test rejects a 5% scale error (as DP-MAB's above).
    const auto p = scrible<learners::DpScribleCube>({{"epsilon", 0.5}}, true, 8);
    ASSERT_TRUE(p.lattice);
    std::vector<double> z;
    z.reserve(1000000);
    for (std::uint32_t k = 0; k < 500; ++k)
        for (std::uint64_t t = 1; t <= 250; ++t)
            for (std::uint32_t i = 0; i < 8; ++i)
                z.push_back(learners::DpScribleCube::lattice_coordinate(p, learners::InstanceCtx{1, 0, k}, t, i, 0.3) - 0.3);
    auto lap = [](double b) { return [b](double x) { return x < 0 ? 0.5 * std::exp(x / b) : 1.0 - 0.5 * std::exp(-x / b); }; };
    std::vector<double> z2 = z;
    EXPECT_GT(test::ks_one_sample(z, lap(p.lambda)).p, test::kAlpha);
    EXPECT_LT(test::ks_one_sample(z2, lap(1.05 * p.lambda)).p, test::kAlpha);
}

TEST(LatticeLearners, DpScribleEveryCpuLaunchPolicyGivesTheSameBits) {
    for (const ScribleCase& s : kScribles)
        for (const char* lanes : {"instances", "coordinates"})
            for (const char* isa : {"generic", "auto"}) {
                const SimResult ref = simulate(s.name, {{"epsilon", 1.0}}, s.adversary, {}, 19, 200, 37, 1, 3, false, 4,
                                               0, in(Precision::Float, lanes, "generic"));
                ASSERT_STREQ(ref.privacy.accountant, "lattice-laplace") << s.name;
                const SimResult r = simulate(s.name, {{"epsilon", 1.0}}, s.adversary, {}, 19, 200, 37, 2, 3, false, 4, 0,
                                             in(Precision::Float, lanes, isa));
                EXPECT_EQ(r.final_regret, ref.final_regret) << s.name << " " << lanes << " " << isa << " " << r.policy;
                EXPECT_EQ(r.diagnostics, ref.diagnostics) << s.name << " " << lanes << " " << isa;
            }
}

TEST(LatticeLearners_Stat, DpScribleRegretLawIsTheContinuousDoubleLaw) {
    // The final regret and max_t ||Z_t||_inf (the noise the feedback carried, which scales with lambda: the
    // meta-test shows the KS test sees a lambda 20% smaller), float lattice against double continuous. Each run
    // takes its own instances (first ids 0, 4000, 8000) over the same loss sequence: independent samples.
    for (const ScribleCase& s : kScribles) {
        const SimResult f = simulate(s.name, {{"epsilon", 1.0}}, s.adversary, {}, 6, 256, 4000, 2, 11, false, 4, 0,
                                     in(Precision::Float));
        const SimResult d = simulate(s.name, {{"epsilon", 1.0}}, s.adversary, {}, 6, 256, 4000, 2, 11, false, 4, 4000,
                                     in(Precision::Double));
        const SimResult e = simulate(s.name, {{"epsilon", 1.25}}, s.adversary, {}, 6, 256, 4000, 2, 11, false, 4, 8000,
                                     in(Precision::Double));
        ASSERT_STREQ(f.privacy.accountant, "lattice-laplace");
        ASSERT_STREQ(d.privacy.accountant, "pure-laplace");
        std::vector<double> a = f.final_regret, b = d.final_regret;
        const test::KsResult ks = test::ks_two_sample(a, b);
        EXPECT_GT(ks.p, test::kAlpha) << s.name << ": D = " << ks.d;
        std::vector<double> nf = f.diagnostic_column("max_noise_inf"), nd = d.diagnostic_column("max_noise_inf"),
                            ne = e.diagnostic_column("max_noise_inf");
        EXPECT_GT(test::ks_two_sample(nf, nd).p, test::kAlpha) << s.name << ": the noise's law";
        nf = f.diagnostic_column("max_noise_inf");
        EXPECT_LT(test::ks_two_sample(nf, ne).p, test::kAlpha) << s.name << ": power";
    }
}


// ---- private-bandit-fw (ENV21 Alg. 1: a tree over batch estimates; docs/spec/model.md §1.8 "Batch estimates") -----
// Its report and the float default are tested in tests/learners/test_env21.cpp (which has the decision sets), with
// the clip of each round's vector and the instance lanes' bits; here the command line and the regret law.

const std::string kBanditFwBase = "[run]\ninstances = 4\nrounds = 64\n[adversary]\nkind = \"bco-linear\"\nd = 4\n"
                                  "[learner]\nalgorithm = \"private-bandit-fw\"\n";

TEST(LatticeLearners, PrivateBanditFwLatticeOnTheCommandLine) {
    expect_lattice_on_the_command_line("private-bandit-fw", kBanditFwBase, "1000");
    test::TempDir dir;
    dir.write("h.toml", kBanditFwBase + "epsilon = 1\nnoise = \"discrete-laplace\"\nmechanism = \"honaker\"\n");
    const test::CliResult h = test::run_cli(dir, "run h.toml --out h --quiet");
    EXPECT_EQ(h.rc, 2) << h.err;
    EXPECT_NE(h.err.find("needs mechanism = \"padded\" or \"binary\""), std::string::npos) << h.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("h/run.json")));
}

TEST(LatticeLearners_Stat, PrivateBanditFwRegretLawIsTheContinuousDoubleLaw) {
    // The final regret and max_R ||Z_R||_2 (the noise the plays were computed from): float lattice against double
    // continuous, with a power control (the noise at eps = 1.25, a node scale 20% smaller, must be told apart).
    // Each run takes its own instances (first ids 0, 4000, 8000) over the same loss sequence, so the samples are
    // independent (the same instances would share their directions and part of the padding).
    const auto run = [](double eps, Precision p, std::uint32_t first) {
        return simulate("private-bandit-fw", {{"epsilon", eps}}, "bco-linear", {}, 4, 256, 4000, 2, 11, false, 4, first,
                        in(p));
    };
    const SimResult f = run(1.0, Precision::Float, 0), d = run(1.0, Precision::Double, 4000),
                    e = run(1.25, Precision::Double, 8000);
    ASSERT_STREQ(f.privacy.accountant, "lattice-laplace");
    ASSERT_STREQ(d.privacy.accountant, "pure-laplace");
    std::vector<double> a = f.final_regret, b = d.final_regret;
    EXPECT_GT(test::ks_two_sample(a, b).p, test::kAlpha) << "the regret's law";
    std::vector<double> nf = f.diagnostic_column("max_noise_l2"), nd = d.diagnostic_column("max_noise_l2"),
                        ne = e.diagnostic_column("max_noise_l2");
    EXPECT_GT(test::ks_two_sample(nf, nd).p, test::kAlpha) << "the noise's law";
    nf = f.diagnostic_column("max_noise_l2");
    EXPECT_LT(test::ks_two_sample(nf, ne).p, test::kAlpha) << "power";
}

} // namespace
