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
// and its law (KS against the continuous Laplace, with a power control).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/run_cli.hpp"
#include "kernels/learners/dp_mab.hpp"
#include "learners/simulate.hpp"
#include "noise/stat_tests.hpp"

namespace {

using namespace dpr;
using test::SimOptions;
using test::SimResult;
using test::simulate;

constexpr double kDiscreteLaplace = 3, kHonaker = 2; // noise / mechanism choice indices

SimOptions in(Precision p, const char* lanes = "auto", const char* isa = "auto") {
    SimOptions o;
    o.precision = p;
    o.lanes = lanes;
    o.isa = isa;
    return o;
}

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

using learners::DpMab;

DpMab::Params mab(test::KeyList keys, bool float_precision, std::uint32_t d = 4, std::uint64_t T = 64) {
    static const auto infos = config::describe_all<learners::AllLearners>("learner");
    Problem pb;
    pb.d = d;
    pb.T = T;
    pb.seed = 1;
    pb.float_precision = float_precision;
    return DpMab::resolve(test::key_values(infos, "dp-mab", keys), pb);
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
    test::TempDir dir;
    dir.write("m.toml", "[run]\ninstances = 4\nrounds = 16\n[adversary]\nkind = \"bernoulli\"\nd = 3\n[learner]\n"
                        "algorithm = \"dp-mab\"\nepsilon = 100\nnoise = \"discrete-laplace\"\n");
    const test::CliResult e = test::run_cli(dir, "run m.toml --out e --quiet");
    EXPECT_EQ(e.rc, 2) << e.err;
    EXPECT_NE(e.err.find("delta above 1e-15"), std::string::npos) << e.err;
    EXPECT_NE(e.err.find("noise"), std::string::npos) << e.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("e/run.json")));
    // In float at eps = 1 no warning: the report holds for the lattice release.
    const test::CliResult f = test::run_cli(dir, "run m.toml --out f --quiet --set learner.epsilon=1 "
                                                 "--set 'learner.noise=\"laplace\"' --set 'run.precision=\"float\"'");
    ASSERT_EQ(f.rc, 0) << f.err;
    EXPECT_NE(f.err.find("the privacy reported for dp-mab"), std::string::npos) << "continuous in float: " << f.err;
    dir.write("n.toml", "[run]\ninstances = 4\nrounds = 16\nprecision = \"float\"\n[adversary]\nkind = \"bernoulli\"\n"
                        "d = 3\n[learner]\nalgorithm = \"dp-mab\"\nepsilon = 1\n");
    const test::CliResult l = test::run_cli(dir, "run n.toml --out l --quiet");
    ASSERT_EQ(l.rc, 0) << l.err;
    EXPECT_EQ(l.err.find("[run] precision = \"float\""), std::string::npos) << "lattice noise: " << l.err;
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
    for (const char* name : kLearners) {
        const std::string adv = adversary_of(name);
        const SimResult f = simulate(name, {{"epsilon", 1.0}}, adv, {}, 8, 256, 4000, 2, 11, false, 4, 0, in(Precision::Float));
        const SimResult d = simulate(name, {{"epsilon", 1.0}}, adv, {}, 8, 256, 4000, 2, 11, false, 4, 0, in(Precision::Double));
        ASSERT_STREQ(f.privacy.accountant, "lattice-laplace");
        std::vector<double> a = f.final_regret, b = d.final_regret;
        const test::KsResult ks = test::ks_two_sample(a, b);
        EXPECT_GT(ks.p, test::kAlpha) << name << ": D = " << ks.d;
        if (std::string(name) == "dp-ftrl-experts") continue;
        const SimResult e = simulate(name, {{"epsilon", 1.25}}, adv, {}, 8, 256, 4000, 2, 11, false, 4, 0, in(Precision::Double));
        auto noise = [](const SimResult& r) {
            std::vector<double> v;
            for (std::uint32_t k = 0; k < r.instances; ++k) v.push_back(r.diagnostic("max_noise_inf", k));
            return v;
        };
        std::vector<double> nf = noise(f), nd = noise(d), ne = noise(e);
        EXPECT_GT(test::ks_two_sample(nf, nd).p, test::kAlpha) << name << ": the noise's law";
        nf = noise(f);
        EXPECT_LT(test::ks_two_sample(nf, ne).p, test::kAlpha) << name << ": power";
    }
}

} // namespace
