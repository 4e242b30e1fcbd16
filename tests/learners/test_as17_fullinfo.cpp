// AS17 full-information learners over the sphere, the cube and the simplex (AS17 §3, Cor. 3.2 and Thm 3.5;
// docs/spec/as17.md §A1 sphere/cube rows, §A2; docs/spec/afkt23.md §C8; docs/spec/checks.md §3.2): dp-ftrl-sphere,
// dp-ftrl-cube, their twins ftrl-l2-ball / ftrl-l2-cube, and dp-ftpl-experts / -ball / -cube.
//
//   As17FullInfo        (unit)         twins bitwise; an independent re-implementation from the spec and
//                                      the regenerated tree-noise definition reproduces every instance's
//                                      regret and max ||Z||_inf; every played point lies in X and is what
//                                      is charged; privacy() on hand-computed cases; check(); the CLI
//                                      refuses a bad pairing (exit 2, both names)
//   As17FullInfo_Stat   (statistical)  explicit A1/A2 bounds never exceeded beyond MC error; log-log
//                                      slopes 1/2 in T (FTRL) and 1/4 in d (FTPL) within tolerances derived
//                                      from the Monte Carlo standard errors
//   As17FullInfo_Slow   (slow)         the same slopes and bounds over wider ranges
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "kernels/adversaries/registry.hpp"
#include "kernels/core/team.hpp"
#include "kernels/learners/dp_ftpl.hpp"
#include "kernels/learners/dp_ftrl_olo.hpp"
#include "kernels/learners/ftrl_l2.hpp"
#include "kernels/mechanisms/blt.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"
#include "learners/simulate.hpp"
#include "learners/solo.hpp"

namespace {

using namespace dpr;
using test::SimResult;
using test::simulate;

constexpr double kInfty = std::numeric_limits<double>::infinity();
// Choice keys take the index of the choice.
constexpr double kPadded = 0, kBinary = 1, kHonaker = 2, kBlt = 3; // mechanism = padded|binary|honaker|blt
constexpr double kLaplace = 0, kGaussian = 1, kNoiseOff = 2; // dp-ftrl-*: laplace|gaussian|none
constexpr double kFtplNoiseOff = 1;                          // dp-ftpl-*: gaussian|none
constexpr double kPaper = 0, kStrict = 1;

double log2ceil(std::uint64_t T) {
    return static_cast<double>(ceil_log2(T));
}

// ---------------------------------------------------------------------------------------------------
// Twins: noise off is the non-private learner, bit for bit.

void expect_bitwise_equal(const SimResult& a, const SimResult& b) {
    ASSERT_EQ(a.regret.size(), b.regret.size());
    ASSERT_FALSE(a.regret.empty());
    EXPECT_EQ(0, std::memcmp(a.regret.data(), b.regret.data(), a.regret.size() * sizeof(double)));
    EXPECT_EQ(
        0, std::memcmp(a.realized_regret.data(), b.realized_regret.data(), a.regret.size() * sizeof(double)));
}

TEST(As17FullInfo, SphereAndCubeWithNoiseOffEqualTheirTwinsBitwise) {
    const std::uint32_t n = 3;
    // Sphere: epsilon = inf, and noise = "none" at a finite epsilon; default eta and a custom one
    // (0.3 makes the projection inactive early and active later).
    for (const char* adv : {"drifting", "unit-vectors"}) {
        const SimResult twin = simulate("ftrl-l2-ball", {}, adv, {}, 5, 1000, n);
        expect_bitwise_equal(simulate("dp-ftrl-sphere", {{"epsilon", kInfty}}, adv, {}, 5, 1000, n), twin);
        const SimResult off =
            simulate("dp-ftrl-sphere", {{"epsilon", 0.5}, {"noise", kNoiseOff}}, adv, {}, 5, 1000, n);
        expect_bitwise_equal(off, twin);
        EXPECT_EQ(off.diagnostic("max_noise_inf", 0), 0.0);
        expect_bitwise_equal(
            simulate("dp-ftrl-sphere", {{"epsilon", kInfty}, {"eta", 0.3}}, adv, {}, 5, 1000, n),
            simulate("ftrl-l2-ball", {{"eta", 0.3}}, adv, {}, 5, 1000, n));
        // Non-vacuous: with noise the regret differs.
        const SimResult noisy = simulate("dp-ftrl-sphere", {{"epsilon", 0.5}}, adv, {}, 5, 1000, n);
        EXPECT_NE(noisy.final_regret[0], twin.final_regret[0]);
        EXPECT_GT(noisy.diagnostic("max_noise_inf", 0), 0.0);
    }
    const SimResult twin = simulate("ftrl-l2-cube", {}, "cube-coordinate", {}, 6, 777, n);
    expect_bitwise_equal(simulate("dp-ftrl-cube", {{"epsilon", kInfty}}, "cube-coordinate", {}, 6, 777, n),
                         twin);
    expect_bitwise_equal(simulate("dp-ftrl-cube", {{"epsilon", 2.0}, {"noise", kNoiseOff}, {"mechanism", kBinary}},
                                  "cube-coordinate", {}, 6, 777, n),
                         twin);
    expect_bitwise_equal(
        simulate("dp-ftrl-cube", {{"epsilon", kInfty}, {"eta", 0.02}}, "cube-coordinate", {}, 6, 777, n),
        simulate("ftrl-l2-cube", {{"eta", 0.02}}, "cube-coordinate", {}, 6, 777, n));
    EXPECT_NE(simulate("dp-ftrl-cube", {{"epsilon", 0.5}}, "cube-coordinate", {}, 6, 777, n).final_regret[0],
              twin.final_regret[0]);
}

TEST(As17FullInfo, FtplTwinIsSigmaRegOnlyAndPrivacyIsFreeWhenSigmaRegDominates) {
    struct Case {
        const char* learner;
        const char* adversary;
        std::uint32_t d;
    };
    for (const Case c : {Case{"dp-ftpl-experts", "bernoulli", 6}, Case{"dp-ftpl-ball", "drifting", 5},
                         Case{"dp-ftpl-cube", "cube-coordinate", 6}}) {
        SCOPED_TRACE(c.learner);
        const std::uint64_t T = 900;
        const SimResult twin = simulate(c.learner, {{"epsilon", kInfty}}, c.adversary, {}, c.d, T, 3);
        // privacy = false: sigma_priv = 0 whatever epsilon says.
        const SimResult off = simulate(c.learner, {{"epsilon", 0.5}, {"delta", 1e-5}, {"privacy", 0}},
                                       c.adversary, {}, c.d, T, 3);
        expect_bitwise_equal(off, twin);
        EXPECT_EQ(off.privacy.noise_scale, twin.privacy.noise_scale);
        // epsilon so large that sigma_priv < sigma_reg: sigma = max{.} = sigma_reg, the same run.
        const SimResult reg =
            simulate(c.learner, {{"epsilon", 1e4}, {"delta", 1e-5}}, c.adversary, {}, c.d, T, 3);
        expect_bitwise_equal(reg, twin);
        EXPECT_NE(std::string(reg.privacy.mechanism).find("regret-dominated"), std::string::npos);
        EXPECT_LT(reg.privacy.epsilon, 1e4); // the guarantee sigma_reg actually gives
        // epsilon small: sigma_priv dominates and the run differs.
        const SimResult priv =
            simulate(c.learner, {{"epsilon", 0.1}, {"delta", 1e-5}}, c.adversary, {}, c.d, T, 3);
        EXPECT_NE(priv.final_regret[0], twin.final_regret[0]);
        EXPECT_NE(std::string(priv.privacy.mechanism).find("privacy-dominated"), std::string::npos);
        EXPECT_GT(priv.privacy.noise_scale, twin.privacy.noise_scale);
    }
}

// ---------------------------------------------------------------------------------------------------
// Independent re-implementation: from docs/spec/as17.md §A1/§A2 directly, with the tree noise taken from its
// DEFINITION (mech::prefix_noise, regenerated from the node ids), the engine's regret of every instance
// at every checkpoint and its max ||Z||_inf diagnostic are reproduced. Catches a wrong step, scale,
// eta, tree variant, padding, comparator or noise bookkeeping.

enum class Play { L2Ball, L2Cube, LinSimplex, LinBall, LinCube };

struct RefSpec {
    Play play;
    double eta = 0.0; ///< FTRL only
    mech::TreeVariant variant = mech::TreeVariant::Padded;
    mech::NodeNoise noise = mech::NodeNoise::None;
    double scale = 0.0; ///< node scale computed BY HAND in the test (checked against privacy().noise_scale)
    bool honaker = false; ///< the binary tree with Honaker's estimator (tree_aggregation.hpp honaker_prefix_noise)
    std::uint32_t blt_buffers = 0; ///< > 0: BLT noise (blt.hpp blt_prefix_noise) with the table's C for T - 1 steps
};

/// sum_{k<n} c_k^2 of a BLT by direct summation (not the closed form the engine uses).
double blt_sens2_direct(const mech::BltNoise& m, std::uint64_t n) {
    double s = 0;
    for (std::uint64_t k = 0; k < n; ++k) s += mech::blt_coefficient(m, k) * mech::blt_coefficient(m, k);
    return s;
}

using Fill = std::function<void(std::uint64_t t, double* out)>;

template <class A>
Fill shared_fill(const typename A::Params& p, std::uint32_t seed) {
    const adversaries::SequenceCtx ctx{seed, 0, adversaries::kSharedSequence};
    return [p, ctx](std::uint64_t t, double* out) { A::fill(p, ctx, t, out); };
}

/// x = the spec's play for u = L~_{t-1}.
std::vector<double> ref_point(const RefSpec& s, const std::vector<double>& u) {
    const std::size_t d = u.size();
    std::vector<double> x(d, 0.0);
    switch (s.play) {
    case Play::L2Ball: { // y = -(eta/2) u; x = y / max(1, ||y||_2)
        double n = 0;
        for (std::size_t i = 0; i < d; ++i) n += (s.eta / 2 * u[i]) * (s.eta / 2 * u[i]);
        n = std::sqrt(n);
        for (std::size_t i = 0; i < d; ++i) x[i] = -(s.eta / 2) * u[i] / std::max(1.0, n);
        break;
    }
    case Play::L2Cube:
        for (std::size_t i = 0; i < d; ++i) x[i] = std::min(1.0, std::max(-1.0, -(s.eta / 2) * u[i]));
        break;
    case Play::LinSimplex:
        x[static_cast<std::size_t>(std::min_element(u.begin(), u.end()) - u.begin())] = 1.0;
        break;
    case Play::LinBall: {
        double n = 0;
        for (double v : u) n += v * v;
        n = std::sqrt(n);
        for (std::size_t i = 0; i < d; ++i) x[i] = n > 0 ? -u[i] / n : 0.0;
        break;
    }
    case Play::LinCube:
        for (std::size_t i = 0; i < d; ++i) x[i] = u[i] > 0 ? -1.0 : (u[i] < 0 ? 1.0 : 0.0);
        break;
    }
    return x;
}

double ref_comparator(Play p, const std::vector<double>& L) {
    double acc = 0;
    if (p == Play::LinSimplex) return *std::min_element(L.begin(), L.end());
    if (p == Play::L2Ball || p == Play::LinBall) {
        for (double v : L) acc += v * v;
        return -std::sqrt(acc);
    }
    for (double v : L) acc += std::fabs(v);
    return -acc;
}

void expect_replay(const SimResult& r, const RefSpec& s, const Fill& fill, std::uint32_t d, std::uint64_t T,
                   std::uint32_t seed = 1) {
    EXPECT_NEAR(r.privacy.noise_scale, s.scale, 1e-12 * s.scale)
        << "node scale differs from the hand formula";
    const std::size_t nck = r.checkpoints.size();
    for (std::uint32_t k = 0; k < r.instances; ++k) {
        const mech::TreeNoise tn{s.variant, s.noise, s.scale, T, seed, 0, k};
        const mech::BltNoise blt = s.blt_buffers ? mech::blt_for_steps(s.blt_buffers, T - 1) : mech::BltNoise{};
        std::vector<double> L(d, 0.0), u(d), l(d);
        long double loss = 0;
        double zmax = 0;
        std::size_t c = 0;
        for (std::uint64_t t = 1; t <= T; ++t) {
            for (std::uint32_t i = 0; i < d; ++i) {
                const double z = s.blt_buffers ? mech::blt_prefix_noise(tn, blt, t - 1, i) // Z_{t-1}, the definition
                                 : s.honaker   ? mech::honaker_prefix_noise(tn, t - 1, i)
                                               : mech::prefix_noise(tn, t - 1, i);
                zmax = std::max(zmax, std::fabs(z));
                u[i] = L[i] + z;
            }
            const std::vector<double> x = ref_point(s, u);
            fill(t, l.data());
            for (std::uint32_t i = 0; i < d; ++i) {
                loss += static_cast<long double>(l[i]) * x[i];
                L[i] += l[i];
            }
            if (c < nck && r.checkpoints[c] == t) {
                const double want = static_cast<double>(loss) - ref_comparator(s.play, L);
                EXPECT_NEAR(r.regret[k * nck + c], want, 1e-9 * std::max(1.0, std::fabs(want)))
                    << "instance " << k << " t " << t;
                ++c;
            }
        }
        ASSERT_EQ(c, nck);
        if (!r.diagnostic_names.empty())
            EXPECT_NEAR(r.diagnostic("max_noise_inf", k), zmax, 1e-9 * std::max(1.0, zmax));
    }
}

TEST(As17FullInfo, EngineRegretEqualsAnIndependentReimplementationFromTheSpec) {
    using mech::NodeNoise;
    using mech::TreeVariant;
    const std::uint32_t d = 5;
    const std::uint64_t T = 300; // not a power of two: k = 9, h' = 9
    const double k = log2ceil(T);
    const Fill drifting = shared_fill<adversaries::Drifting>({d, T, 1.0}, 1);
    const Fill unit = shared_fill<adversaries::UnitVectors>({d, T}, 1);
    const Fill cube = shared_fill<adversaries::CubeCoordinate>({d, T}, 1);
    const Fill bern = shared_fill<adversaries::Bernoulli>(
        adversaries::Bernoulli::resolve(
            test::key_values(config::describe_all<adversaries::AllAdversaries>("adversary"), "bernoulli",
                             {{"gap", 0.2}}),
            Problem{d, T, 1}),
        1);
    const double eta_ball = 1 / std::sqrt(double(T)), eta_cube = std::sqrt(d / double(T));
    // sqrt(rho) of the zCDP that converts to (2, 1e-6)-DP: rho + 2 sqrt(rho ln(1e6)) = 2.
    const double sqrt_rho_2 = std::sqrt(std::log(1e6) + 2.0) - std::sqrt(std::log(1e6));
    const double sd = std::sqrt(double(d));
    {
        SCOPED_TRACE("dp-ftrl-sphere, Laplace, paper, padded: lambda = sqrt(d) k / eps");
        const auto r = simulate("dp-ftrl-sphere", {{"epsilon", 0.5}, {"calibration", kPaper}}, "drifting", {}, d, T, 3);
        expect_replay(r, {Play::L2Ball, eta_ball, TreeVariant::Padded, NodeNoise::Laplace, sd * k / 0.5},
                      drifting, d, T);
    }
    {
        // eps = 2 >= 1: strict takes the zCDP scale, sigma = sqrt(h'/(2 rho)) Delta_2 with sqrt(rho) = sqrt(ln(1/delta)
        // + eps) - sqrt(ln(1/delta)) (the classical formula holds only for eps < 1; docs/spec/as17.md §A1).
        SCOPED_TRACE("dp-ftrl-sphere, Gaussian, strict, binary, eta = 0.05: sigma = sqrt(k/2) 2/sqrt(rho)");
        const auto r = simulate("dp-ftrl-sphere",
                                {{"epsilon", 2.0},
                                 {"delta", 1e-6},
                                 {"noise", kGaussian},
                                 {"calibration", kStrict},
                                 {"mechanism", kBinary},
                                 {"eta", 0.05}},
                                "unit-vectors", {}, d, T, 3);
        expect_replay(r,
                      {Play::L2Ball, 0.05, TreeVariant::Binary, NodeNoise::Gaussian,
                       std::sqrt(k / 2) * 2 / sqrt_rho_2},
                      unit, d, T);
    }
    {
        SCOPED_TRACE("dp-ftrl-sphere, Gaussian, strict, honaker: the binary tree's sigma, Honaker's estimates");
        const auto r = simulate("dp-ftrl-sphere",
                                {{"epsilon", 2.0},
                                 {"delta", 1e-6},
                                 {"noise", kGaussian},
                                 {"calibration", kStrict},
                                 {"mechanism", kHonaker},
                                 {"eta", 0.05}},
                                "unit-vectors", {}, d, T, 3);
        expect_replay(r,
                      {Play::L2Ball, 0.05, TreeVariant::Binary, NodeNoise::Gaussian,
                       std::sqrt(k / 2) * 2 / sqrt_rho_2, true},
                      unit, d, T);
    }
    {
        SCOPED_TRACE("dp-ftrl-sphere, Gaussian, strict, blt: the zCDP sigma with sens^2 for h', BLT noise");
        const auto r = simulate("dp-ftrl-sphere",
                                {{"epsilon", 2.0},
                                 {"delta", 1e-6},
                                 {"noise", kGaussian},
                                 {"calibration", kStrict},
                                 {"mechanism", kBlt},
                                 {"eta", 0.05}},
                                "unit-vectors", {}, d, T, 3);
        const double s2 = blt_sens2_direct(mech::blt_for_steps(4, T - 1), T - 1);
        expect_replay(r,
                      {Play::L2Ball, 0.05, TreeVariant::Binary, NodeNoise::Gaussian,
                       std::sqrt(s2 / 2) * 2 / sqrt_rho_2, false, 4},
                      unit, d, T);
        EXPECT_NE(std::string(r.privacy.mechanism).find("BLT"), std::string::npos) << r.privacy.mechanism;
    }
    {
        SCOPED_TRACE("dp-ftrl-cube, Laplace, strict, padded: lambda = 2 k / eps");
        const auto r = simulate("dp-ftrl-cube", {{"epsilon", 1.0}, {"calibration", kStrict}},
                                "cube-coordinate", {}, d, T, 3);
        expect_replay(r, {Play::L2Cube, eta_cube, TreeVariant::Padded, NodeNoise::Laplace, 2 * k / 1.0}, cube,
                      d, T);
    }
    {
        SCOPED_TRACE("dp-ftrl-cube, Gaussian, paper, binary: sigma = k ln(k/delta)/eps");
        const auto r = simulate("dp-ftrl-cube",
                                {{"epsilon", 3.0}, {"delta", 1e-4}, {"noise", kGaussian}, {"mechanism", kBinary}, {"calibration", kPaper}},
                                "cube-coordinate", {}, d, T, 3);
        expect_replay(
            r,
            {Play::L2Cube, eta_cube, TreeVariant::Binary, NodeNoise::Gaussian, k * std::log(k / 1e-4) / 3.0},
            cube, d, T);
    }
    {
        SCOPED_TRACE("twins");
        expect_replay(simulate("ftrl-l2-ball", {}, "drifting", {}, d, T, 1), {Play::L2Ball, eta_ball},
                      drifting, d, T);
        expect_replay(simulate("ftrl-l2-cube", {}, "cube-coordinate", {}, d, T, 1), {Play::L2Cube, eta_cube},
                      cube, d, T);
    }
    const double c_reg = std::pow(2 * M_PI, -0.25);
    {
        SCOPED_TRACE("dp-ftpl-experts, paper, padded: sigma = max{c sqrt(d) sqrt(T/(sqrt(d) k)), sqrt(d) k "
                     "ln(k/delta)/eps}");
        const auto r = simulate("dp-ftpl-experts", {{"epsilon", 1.0}, {"delta", 1e-5}}, "bernoulli",
                                {{"gap", 0.2}}, d, T, 3);
        const double reg = c_reg * sd * std::sqrt(T / (sd * k)), priv = sd * k * std::log(k / 1e-5) / 1.0;
        ASSERT_GT(priv, reg);
        expect_replay(r, {Play::LinSimplex, 0, TreeVariant::Padded, NodeNoise::Gaussian, priv}, bern, d, T);
    }
    {
        SCOPED_TRACE("dp-ftpl-experts, noise = none: Follow The Leader");
        const auto r =
            simulate("dp-ftpl-experts", {{"epsilon", 1.0}, {"delta", 1e-5}, {"noise", kFtplNoiseOff}},
                     "bernoulli", {{"gap", 0.2}}, d, T, 1);
        expect_replay(r, {Play::LinSimplex}, bern, d, T);
        EXPECT_TRUE(std::isinf(r.privacy.epsilon));
    }
    {
        SCOPED_TRACE("dp-ftpl-ball, eps = inf (the twin): sigma = sigma_reg = c sqrt(T/(sqrt(d) k))");
        const auto r = simulate("dp-ftpl-ball", {{"epsilon", kInfty}}, "drifting", {}, d, T, 3);
        expect_replay(
            r, {Play::LinBall, 0, TreeVariant::Padded, NodeNoise::Gaussian, c_reg * std::sqrt(T / (sd * k))},
            drifting, d, T);
    }
    {
        SCOPED_TRACE("dp-ftpl-cube, strict, binary: sigma_priv = sqrt(k) 2 sqrt(2 ln(1.25/delta))/eps");
        const auto r = simulate(
            "dp-ftpl-cube", {{"epsilon", 0.3}, {"delta", 1e-4}, {"calibration", kStrict}, {"mechanism", kBinary}},
            "cube-coordinate", {}, d, T, 3);
        const double reg = c_reg * std::sqrt(T / (sd * k)),
                     priv = std::sqrt(k) * 2 * std::sqrt(2 * std::log(1.25e4)) / 0.3;
        ASSERT_GT(priv, reg);
        expect_replay(r, {Play::LinCube, 0, TreeVariant::Binary, NodeNoise::Gaussian, priv}, cube, d, T);
    }
    {
        SCOPED_TRACE("dp-ftpl-experts, strict, honaker: the binary tree's sigma, Honaker's estimates");
        const auto r = simulate("dp-ftpl-experts",
                                {{"epsilon", 0.3}, {"delta", 1e-4}, {"calibration", kStrict}, {"mechanism", kHonaker}},
                                "bernoulli", {{"gap", 0.2}}, d, T, 3);
        const double priv = std::sqrt(k) * sd * std::sqrt(2 * std::log(1.25e4)) / 0.3;
        expect_replay(r, {Play::LinSimplex, 0, TreeVariant::Binary, NodeNoise::Gaussian, priv, true}, bern, d, T);
    }
    {
        SCOPED_TRACE("dp-ftpl-experts, strict, blt with 2 buffers: sigma_priv for sens^2 instead of h'");
        const auto r = simulate(
            "dp-ftpl-experts",
            {{"epsilon", 0.3}, {"delta", 1e-4}, {"calibration", kStrict}, {"mechanism", kBlt}, {"blt_buffers", 2.0}},
            "bernoulli", {{"gap", 0.2}}, d, T, 3);
        const double s2 = blt_sens2_direct(mech::blt_for_steps(2, T - 1), T - 1);
        const double priv = std::sqrt(s2) * sd * std::sqrt(2 * std::log(1.25e4)) / 0.3;
        expect_replay(r, {Play::LinSimplex, 0, TreeVariant::Binary, NodeNoise::Gaussian, priv, false, 2}, bern, d, T);
        EXPECT_NE(std::string(r.privacy.mechanism).find("BLT"), std::string::npos) << r.privacy.mechanism;
    }
}

// ---------------------------------------------------------------------------------------------------
// Every played point lies in X, and the charged expected loss is <l_t, x_t> for that point. Drives the
// learners through the contract directly (SerialTeam), calling play() before each round().

template <class L>
typename L::Params params_of(test::KeyList keys, std::uint32_t d, std::uint64_t T) {
    static const auto infos = config::describe_all<learners::AllLearners>("learner");
    return L::resolve(test::key_values(infos, L::kName, keys), Problem{d, T, 7});
}

struct Feasibility {
    std::uint64_t rounds = 0;
    std::uint64_t on_boundary = 0; ///< ||x||_2 = 1 (ball), some |x_i| = 1 (cube): the projection was active
    std::uint64_t interior = 0;
};

template <class L>
Feasibility drive(const typename L::Params& p, const Fill& fill) {
    test::Solo<L> solo(p, 7, 3);
    std::vector<double> x(p.d), l(p.d);
    Feasibility f;
    for (std::uint64_t t = 1; t <= p.T; ++t) {
        solo.play(t, x.data());
        fill(t, l.data());
        double dot = 0, mag = 0, n2 = 0, ninf = 0, n1 = 0;
        for (std::uint32_t i = 0; i < p.d; ++i) {
            dot += l[i] * x[i];
            mag += std::fabs(l[i] * x[i]);
            n2 += x[i] * x[i];
            ninf = std::max(ninf, std::fabs(x[i]));
            n1 += std::fabs(x[i]);
            EXPECT_TRUE(std::isfinite(x[i]));
        }
        if constexpr (L::kGeometry == Geometry::Ball) {
            EXPECT_LE(std::sqrt(n2), 1.0 + 1e-12) << "t " << t;
            (std::fabs(std::sqrt(n2) - 1.0) < 1e-12 ? f.on_boundary : f.interior)++;
        } else if constexpr (L::kGeometry == Geometry::Cube) {
            EXPECT_LE(ninf, 1.0) << "t " << t;
            (ninf == 1.0 ? f.on_boundary : f.interior)++;
        } else { // simplex: FTPL plays a vertex
            EXPECT_EQ(n1, 1.0);
            EXPECT_EQ(ninf, 1.0);
            f.on_boundary++;
        }
        const RoundCharge<double> r = solo.round(t, l.data());
        EXPECT_NEAR(r.expected, dot, 1e-12 * (1.0 + mag)) << "t " << t;
        EXPECT_EQ(r.expected, r.realized);
        ++f.rounds;
    }
    return f;
}

TEST(As17FullInfo, EveryPlayedPointLiesInTheSetAndIsWhatIsCharged) {
    using namespace learners;
    const std::uint32_t d = 6;
    const std::uint64_t T = 600;
    const Fill drifting = shared_fill<adversaries::Drifting>({d, T, 0.5}, 3);
    const Fill unit = shared_fill<adversaries::UnitVectors>({d, T}, 3);
    const Fill cube = shared_fill<adversaries::CubeCoordinate>({d, T}, 3);
    const Fill bern = [d](std::uint64_t t, double* out) { // deterministic [0,1] losses
        for (std::uint32_t i = 0; i < d; ++i) out[i] = 0.5 + 0.5 * std::sin(0.1 * double(t * (i + 1)));
    };
    // Both sides of max(1, ||y||): large noise (eps small) or a large eta push y outside the ball; eta
    // small and no noise keep it inside for a while.
    for (double eps : {0.02, 1.0, kInfty}) {
        for (double eta : {0.005, 0.05, 1.0}) {
            SCOPED_TRACE("eps " + std::to_string(eps) + " eta " + std::to_string(eta));
            const Feasibility a = drive<DpFtrlSphere>(
                params_of<DpFtrlSphere>({{"epsilon", eps}, {"eta", eta}}, d, T), drifting);
            const Feasibility b = drive<DpFtrlSphere>(
                params_of<DpFtrlSphere>(
                    {{"epsilon", eps}, {"eta", eta}, {"noise", kGaussian}, {"delta", 1e-5}}, d, T),
                unit);
            const Feasibility c =
                drive<DpFtrlCube>(params_of<DpFtrlCube>({{"epsilon", eps}, {"eta", eta}}, d, T), cube);
            EXPECT_EQ(a.rounds + b.rounds + c.rounds, 3 * T);
        }
    }
    // Non-vacuous: both branches are exercised.
    const Feasibility in = drive<FtrlL2Ball>(params_of<FtrlL2Ball>({{"eta", 0.005}}, d, T), drifting);
    const Feasibility out = drive<DpFtrlSphere>(params_of<DpFtrlSphere>({{"epsilon", 0.02}}, d, T), drifting);
    EXPECT_GT(in.interior, T / 2);
    EXPECT_GT(out.on_boundary, T / 2);
    const Feasibility cin = drive<FtrlL2Cube>(params_of<FtrlL2Cube>({}, d, T), cube);
    EXPECT_GT(cin.interior, 0u);
    EXPECT_GT(drive<DpFtrlCube>(params_of<DpFtrlCube>({{"epsilon", 0.05}}, d, T), cube).on_boundary, T / 2);
    for (double eps : {0.1, 10.0, kInfty}) {
        drive<DpFtplExperts>(params_of<DpFtplExperts>({{"epsilon", eps}, {"delta", 1e-5}}, d, T), bern);
        drive<DpFtplBall>(params_of<DpFtplBall>({{"epsilon", eps}, {"delta", 1e-5}}, d, T), drifting);
        drive<DpFtplCube>(params_of<DpFtplCube>({{"epsilon", eps}, {"delta", 1e-5}}, d, T), cube);
    }
    drive<DpFtplBall>(params_of<DpFtplBall>({{"epsilon", 1.0}, {"noise", kFtplNoiseOff}}, d, T), drifting);
    drive<DpFtplCube>(params_of<DpFtplCube>({{"epsilon", 1.0}, {"noise", kFtplNoiseOff}}, d, T), cube);
}

// ---------------------------------------------------------------------------------------------------
// privacy(): the guarantee the noise actually provides, on cases computed by hand from §1.2/§1.4:
//   Laplace: eps = h' Delta_1 / lambda (h' = ceil(log2 T), Delta_1 = 2 ||Y||_1 for the symmetric sets)
//   Gaussian: rho = h' Delta_2^2 / (2 sigma^2), eps_zcdp = rho + 2 sqrt(rho ln(1/delta)),
//             eps_classical = sqrt(h') Delta_2 sqrt(2 ln(1.25/delta)) / sigma (valid when < 1); the smaller.

learners::PrivacyReport privacy_of(const char* name, test::KeyList keys, std::uint32_t d, std::uint64_t T) {
    static const auto infos = config::describe_all<learners::AllLearners>("learner");
    return resolve_learner(name, test::key_values(infos, name, keys), Problem{d, T, 1}).privacy;
}

struct GaussEps {
    double eps;
    const char* accountant;
};
GaussEps gauss_eps(double sigma, double delta2, double hp, double delta) {
    const double rho = hp * delta2 * delta2 / (2 * sigma * sigma);
    const double ez = rho + 2 * std::sqrt(rho * std::log(1 / delta));
    const double ec = std::sqrt(hp) * delta2 * std::sqrt(2 * std::log(1.25 / delta)) / sigma;
    return ec < 1 && ec < ez ? GaussEps{ec, "gaussian-classical"} : GaussEps{ez, "zcdp"};
}

TEST(As17FullInfo, PrivacyReportsTheGuaranteeTheNoiseProvidesOnHandComputedCases) {
    {
        // Sphere, d = 4, T = 1024 (k = h' = 10), eps = 1, paper: lambda = sqrt(4) 10 / 1 = 20, and
        // Delta_1 = 2 sqrt(4) = 4, so the release is h' Delta_1 / lambda = 10 * 4 / 20 = 2-DP (factor 2).
        const auto p = privacy_of("dp-ftrl-sphere", {{"epsilon", 1.0}, {"calibration", kPaper}}, 4, 1024);
        EXPECT_DOUBLE_EQ(p.noise_scale, 20.0);
        EXPECT_DOUBLE_EQ(p.epsilon, 2.0);
        EXPECT_EQ(p.delta, 0.0);
        EXPECT_STREQ(p.accountant, "pure-laplace");
        EXPECT_STREQ(p.calibration, "paper");
        // strict, the default: lambda = Delta_1 h' / eps = 40 -> exactly eps = 1.
        for (const auto& s : {privacy_of("dp-ftrl-sphere", {{"epsilon", 1.0}, {"calibration", kStrict}}, 4, 1024),
                              privacy_of("dp-ftrl-sphere", {{"epsilon", 1.0}}, 4, 1024)}) {
            EXPECT_DOUBLE_EQ(s.noise_scale, 40.0);
            EXPECT_DOUBLE_EQ(s.epsilon, 1.0);
            EXPECT_STREQ(s.calibration, "strict");
        }
    }
    {
        // Cube, T = 1000 (k = 10), eps = 0.5, paper: lambda = 10 / 0.5 = 20, Delta_1 = 2: eps = 10*2/20 = 1.
        const auto p = privacy_of("dp-ftrl-cube", {{"epsilon", 0.5}, {"calibration", kPaper}}, 7, 1000);
        EXPECT_DOUBLE_EQ(p.noise_scale, 20.0);
        EXPECT_DOUBLE_EQ(p.epsilon, 1.0);
    }
    {
        // Sphere, node_scale = 5 given, d = 9, T = 16 (h' = 4): eps = 4 * (2 * 3) / 5 = 4.8.
        const auto p = privacy_of("dp-ftrl-sphere", {{"epsilon", 1.0}, {"node_scale", 5.0}}, 9, 16);
        EXPECT_DOUBLE_EQ(p.noise_scale, 5.0);
        EXPECT_DOUBLE_EQ(p.epsilon, 4.8);
    }
    {
        // Cube, Gaussian strict, eps = 0.5, delta = 1e-6, T = 1024: sigma = sqrt(10) 2 sqrt(2 ln 1.25e6) /
        // 0.5 = 67.03; classical gives back exactly 0.5 (< zCDP's 0.5004).
        const auto p = privacy_of(
            "dp-ftrl-cube",
            {{"epsilon", 0.5}, {"delta", 1e-6}, {"noise", kGaussian}, {"calibration", kStrict}}, 3, 1024);
        const double sigma = std::sqrt(10.0) * 2 * std::sqrt(2 * std::log(1.25e6)) / 0.5;
        EXPECT_NEAR(p.noise_scale, sigma, 1e-12 * sigma);
        EXPECT_NEAR(p.epsilon, 0.5, 1e-12);
        EXPECT_EQ(p.delta, 1e-6);
        EXPECT_STREQ(p.accountant, "gaussian-classical");
        // paper: sigma = ||Y||_2 k ln(k/delta)/eps = 10 ln(1e7)/0.5 = 322.4, far more than needed.
        const auto q =
            privacy_of("dp-ftrl-cube", {{"epsilon", 0.5}, {"delta", 1e-6}, {"noise", kGaussian}, {"calibration", kPaper}}, 3,
                       1024);
        const double sq = 10 * std::log(1e7) / 0.5;
        EXPECT_NEAR(q.noise_scale, sq, 1e-12 * sq);
        const GaussEps g = gauss_eps(sq, 2.0, 10, 1e-6);
        EXPECT_NEAR(q.epsilon, g.eps, 1e-12);
        EXPECT_STREQ(q.accountant, g.accountant);
        EXPECT_LT(q.epsilon, 0.5);
    }
    {
        const auto p = privacy_of("dp-ftrl-sphere", {{"epsilon", kInfty}}, 4, 1024);
        EXPECT_TRUE(std::isinf(p.epsilon));
        EXPECT_EQ(p.noise_scale, 0.0);
        EXPECT_TRUE(std::isinf(privacy_of("ftrl-l2-cube", {}, 4, 1024).epsilon));
    }
    {
        // FTPL experts, d = 16, T = 1024, eps = 1, delta = 1e-6: sigma_priv = sqrt(16) 10 ln(10/1e-6) =
        // 644.7, sigma_reg = (2 pi)^(-1/4) 4 sqrt(1024/(4 * 10)) = 12.78; sigma = 644.7. Delta_2 = sqrt(16) =
        // 4: rho = 10 * 16 / (2 sigma^2) = 1.92e-4, eps_zcdp = 0.1033 < eps_classical = 0.1040.
        const auto p = privacy_of("dp-ftpl-experts", {{"epsilon", 1.0}, {"delta", 1e-6}}, 16, 1024);
        const double sigma = 4 * 10 * std::log(1e7);
        EXPECT_NEAR(p.noise_scale, sigma, 1e-12 * sigma);
        const GaussEps g = gauss_eps(sigma, 4.0, 10, 1e-6);
        EXPECT_NEAR(p.epsilon, g.eps, 1e-12);
        EXPECT_NEAR(p.epsilon, 0.1033, 1e-4);
        EXPECT_STREQ(p.accountant, "zcdp");
    }
    {
        // FTPL ball, d = 4, T = 1024, eps = 1000, delta = 1e-5: sigma_priv = 10 ln(1e6)/1000 = 0.138 <
        // sigma_reg = (2 pi)^(-1/4) sqrt(1024 / (2 * 10)) = 4.52, so sigma = sigma_reg, and the guarantee
        // that sigma gives (Delta_2 = 2) is eps = 7.69 (zCDP; classical 6.78 is >= 1, not valid).
        const auto p = privacy_of("dp-ftpl-ball", {{"epsilon", 1000.0}, {"delta", 1e-5}}, 4, 1024);
        const double sigma = std::pow(2 * M_PI, -0.25) * std::sqrt(1024.0 / 20.0);
        EXPECT_NEAR(p.noise_scale, sigma, 1e-12 * sigma);
        const GaussEps g = gauss_eps(sigma, 2.0, 10, 1e-5);
        EXPECT_NEAR(p.epsilon, g.eps, 1e-12);
        EXPECT_NEAR(p.epsilon, 7.69, 0.01);
        EXPECT_STREQ(p.accountant, "zcdp");
        // The twin without delta has no (eps, delta) statement.
        EXPECT_TRUE(
            std::isinf(privacy_of("dp-ftpl-cube", {{"epsilon", 1.0}, {"privacy", 0}}, 4, 1024).epsilon));
    }
}

// T = 1 (issue 47): AS17 Alg. 2 releases L~_0 .. L~_{T-1}, so the one play x_1 = argmin <x, L~_0> reads L~_0 alone,
// which holds no loss (L_0 = 0) and no node (k = ceil(log2 1) = 0: docs/spec/model.md §1.5 "T = 1"; docs/spec/as17.md
// §A2). Nothing released depends on the losses: (0, 0)-DP, whatever the noise. dp-ftpl-* turned their noise off there
// (sigma_reg = 0 at k = 0, and the paper's sigma_priv = L_Y k ln(k/delta)/eps = 0) and then reported eps = inf, "no
// privacy". At T = 2 (k = 1) the same keys give a finite eps > 0: the report follows the release, it is not 0 for all.
TEST(As17FullInfo, DpFtplAtOneRoundReportsThatNothingReleasedDependsOnTheLosses) {
    for (const char* name : {"dp-ftpl-experts", "dp-ftpl-ball", "dp-ftpl-cube"}) {
        SCOPED_TRACE(name);
        const auto expect_nothing_released = [](const learners::PrivacyReport& one, const char* keys) {
            EXPECT_EQ(one.epsilon, 0.0) << keys;
            EXPECT_EQ(one.delta, 0.0) << keys;
            EXPECT_EQ(one.gdp_mu, 0.0) << keys;
        };
        expect_nothing_released(privacy_of(name, {{"epsilon", 1.0}, {"delta", 1e-5}}, 4, 1), "paper");
        expect_nothing_released(privacy_of(name, {{"epsilon", 1.0}, {"delta", 1e-5}, {"calibration", kStrict}}, 4, 1),
                                "strict");
        expect_nothing_released(privacy_of(name, {{"epsilon", 1.0}, {"delta", 1e-5}, {"privacy", 0}}, 4, 1), "the twin");
        expect_nothing_released(privacy_of(name, {{"epsilon", 1.0}, {"delta", 1e-5}, {"mechanism", kBlt}}, 4, 1), "blt");
        const auto two = privacy_of(name, {{"epsilon", 1.0}, {"delta", 1e-5}}, 4, 2);
        EXPECT_GT(two.epsilon, 0.0);
        EXPECT_TRUE(std::isfinite(two.epsilon));
        EXPECT_EQ(two.delta, 1e-5);
    }
    // A learner with no noise at all (the twin ftrl-l2-cube, no prefix mechanism) still reports no privacy.
    EXPECT_TRUE(std::isinf(privacy_of("ftrl-l2-cube", {}, 4, 1).epsilon));
}

TEST(As17FullInfo, GaussianNoiseWithoutDeltaIsRejectedNamingDelta) {
    static const auto infos = config::describe_all<learners::AllLearners>("learner");
    auto check = [](const char* name, test::KeyList keys, std::string* key) {
        for (const auto& c : infos)
            if (c.name == name) {
                Diagnostic diag;
                const bool ok = c.check(test::key_values(infos, name, keys), Problem{4, 1024, 1}, diag);
                *key = diag.key ? diag.key : "";
                return ok;
            }
        throw std::invalid_argument(name);
    };
    std::string key;
    EXPECT_FALSE(check("dp-ftrl-sphere", {{"epsilon", 1.0}, {"noise", kGaussian}}, &key));
    EXPECT_EQ(key, "delta");
    EXPECT_TRUE(check("dp-ftrl-sphere", {{"epsilon", 1.0}, {"noise", kGaussian}, {"delta", 1e-5}}, &key));
    EXPECT_TRUE(check("dp-ftrl-cube", {{"epsilon", 1.0}}, &key)); // Laplace needs no delta
    for (const char* f : {"dp-ftpl-experts", "dp-ftpl-ball", "dp-ftpl-cube"}) {
        EXPECT_FALSE(check(f, {{"epsilon", 1.0}}, &key)) << f;
        EXPECT_EQ(key, "delta");
        EXPECT_TRUE(check(f, {{"epsilon", 1.0}, {"privacy", 0}}, &key)) << f;
        EXPECT_TRUE(check(f, {{"epsilon", kInfty}}, &key)) << f;
        EXPECT_TRUE(check(f, {{"epsilon", 1.0}, {"delta", 1e-6}}, &key)) << f;
    }
}

// ---------------------------------------------------------------------------------------------------
// The CLI refuses a learner whose decision set does not match the adversary's loss set.

struct CliResult {
    int rc = -1;
    std::string err;
    bool run_json = false;
};

CliResult run_cli(const std::string& toml) {
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "dpregret_as17_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    const fs::path dir(tmpl);
    std::ofstream(dir / "cfg.toml") << toml;
    const std::string cmd =
        "cd '" + dir.string() +
        "' && '" DPREGRET_BINARY
        "' run cfg.toml --out out --quiet --backend cpu --threads 1 >stdout.txt 2>stderr.txt";
    const int status = std::system(cmd.c_str());
    CliResult r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(dir / "stderr.txt");
    std::ostringstream ss;
    ss << in.rdbuf();
    r.err = ss.str();
    r.run_json = fs::exists(dir / "out" / "run.json");
    std::error_code ec;
    fs::remove_all(dir, ec);
    return r;
}

std::string pairing_toml(const std::string& learner, const std::string& adversary,
                         const std::string& extra = "") {
    return "[run]\nseed = 1\ninstances = 2\nrounds = 16\ncheckpoints = 2\n\n[adversary]\nkind = \"" +
           adversary + "\"\nd = 3\n\n[learner]\nalgorithm = \"" + learner +
           "\"\nepsilon = 1.0\ndelta = 1e-5\n" + extra;
}

TEST(As17FullInfo, CliRejectsAMismatchedPairingWithExitCode2NamingBoth) {
    struct Bad {
        const char* learner;
        const char* adversary;
        const char* good_adversary;
    };
    for (const Bad b :
         {Bad{"dp-ftrl-cube", "unit-vectors", "cube-coordinate"},
          Bad{"dp-ftrl-sphere", "cube-coordinate", "unit-vectors"},
          Bad{"ftrl-l2-ball", "bernoulli", "drifting"}, Bad{"dp-ftpl-experts", "drifting", "bernoulli"},
          Bad{"dp-ftpl-cube", "unit-vectors", "cube-coordinate"}}) {
        SCOPED_TRACE(std::string(b.learner) + " vs " + b.adversary);
        std::string toml = pairing_toml(b.learner, b.adversary);
        if (std::string(b.learner).rfind("ftrl-l2", 0) == 0) // the twin has no privacy keys
            toml = "[run]\nseed = 1\ninstances = 2\nrounds = 16\n\n[adversary]\nkind = \"" +
                   std::string(b.adversary) + "\"\nd = 3\n\n[learner]\nalgorithm = \"" + b.learner + "\"\n";
        const CliResult r = run_cli(toml);
        EXPECT_EQ(r.rc, 2) << r.err;
        EXPECT_NE(r.err.find("algorithm = \"" + std::string(b.learner) + "\""), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("kind = \"" + std::string(b.adversary) + "\""), std::string::npos) << r.err;
        EXPECT_FALSE(r.run_json);
        // Non-vacuous: the same file with a matching adversary runs.
        std::string good = toml;
        good.replace(good.find(b.adversary), std::strlen(b.adversary), b.good_adversary);
        const CliResult ok = run_cli(good);
        EXPECT_EQ(ok.rc, 0) << ok.err;
        EXPECT_TRUE(ok.run_json);
    }
    // A Gaussian FTPL without delta is refused naming the key.
    const CliResult r =
        run_cli("[run]\nseed = 1\ninstances = 2\nrounds = 16\n\n[adversary]\nkind = \"drifting\"\n"
                "d = 3\n\n[learner]\nalgorithm = \"dp-ftpl-ball\"\nepsilon = 1.0\n");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("delta"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------------------------------------------
// Statistical: explicit bounds and scaling.

/// Least-squares slope of log(mean_j) against log(x_j) and its Monte Carlo standard deviation. With
/// independent points (different seeds) and Var(log mean_j) ~= (sem_j / mean_j)^2 (delta method), the
/// slope b = sum_j w_j log(mean_j), w_j = (log x_j - mean(log x)) / S_xx, has
///     sd(b) = sqrt( sum_j w_j^2 (sem_j / mean_j)^2 ).
/// Tests accept |b - b_expected| <= 4 sd(b) + bias, bias = the deterministic finite-size deviation of
/// the exact (or leading-order) expected curve from the asymptotic slope, computed in each test. For
/// a Gaussian b, 4 sd gives a false-alarm rate of 6e-5.
struct Slope {
    double b = 0, sd = 0;
};
Slope loglog_slope(const std::vector<double>& x, const std::vector<double>& mean,
                   const std::vector<double>& sem) {
    const std::size_t n = x.size();
    double xb = 0;
    for (double v : x) xb += std::log(v) / n;
    double sxx = 0;
    for (double v : x) sxx += (std::log(v) - xb) * (std::log(v) - xb);
    Slope s;
    double var = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const double w = (std::log(x[j]) - xb) / sxx;
        s.b += w * std::log(mean[j]);
        var += w * w * (sem[j] / mean[j]) * (sem[j] / mean[j]);
    }
    s.sd = std::sqrt(var);
    return s;
}
double loglog_slope_exact(const std::vector<double>& x, const std::vector<double>& y) {
    return loglog_slope(x, y, std::vector<double>(x.size(), 0.0)).b;
}

/// E|S_n| for a simple +-1 random walk: E|S_{2m}| = E|S_{2m-1}| = 2m C(2m, m) / 4^m.
double srw_abs_mean(std::uint64_t n) {
    if (n == 0) return 0;
    const double m = static_cast<double>((n + 1) / 2);
    return std::exp(std::log(2 * m) + std::lgamma(2 * m + 1) - 2 * std::lgamma(m + 1) -
                    2 * m * std::log(2.0));
}
/// Exact E||L_T||_1 under cube-coordinate (each coordinate a lazy walk: +-1 w.p. 1/(2d) each):
/// d sum_k Bin(k; T, 1/d) E|S_k|. For any learner whose x_t depends only on l_1..l_{t-1},
/// E <l_t, x_t> = 0 (l_t is independent and symmetric), so this IS the expected regret (per-instance
/// sequences).
double cube_coordinate_expected_regret(std::uint32_t d, std::uint64_t T) {
    const double p = 1.0 / d, Td = static_cast<double>(T);
    double e = 0;
    for (std::uint64_t k = 1; k <= T; ++k) {
        const double kd = static_cast<double>(k);
        const double logb = std::lgamma(Td + 1) - std::lgamma(kd + 1) - std::lgamma(Td - kd + 1) +
                            kd * std::log(p) + (Td - kd) * std::log1p(-p);
        e += std::exp(logb) * srw_abs_mean(k);
    }
    return d * e;
}

struct SlopeRun {
    std::vector<double> x, mean, sem;
};

void expect_slope(const SlopeRun& r, double expected_asymptotic, double bias, const char* what) {
    const Slope s = loglog_slope(r.x, r.mean, r.sem);
    const double tol = 4 * s.sd + std::fabs(bias);
    std::printf(
        "[slope] %s: measured %.4f (MC sd %.4f), theory %.4f (finite-size bias %+.4f), tolerance %.4f\n",
        what, s.b, s.sd, expected_asymptotic, bias, tol);
    EXPECT_NEAR(s.b, expected_asymptotic, tol) << what;
}

/// FTRL (non-private twin) regret against T on per-instance random sequences; slope 1/2 (§3.2).
void ftrl_slope_in_T(const char* learner, const char* adversary, std::uint32_t d,
                     const std::vector<std::uint64_t>& Ts, std::uint32_t instances) {
    SlopeRun run;
    std::vector<double> exact;
    for (std::size_t j = 0; j < Ts.size(); ++j) {
        // Different seeds: independent points (the slope's variance formula assumes it).
        const SimResult r =
            simulate(learner, {}, adversary, {}, d, Ts[j], instances, 2, 100 + j, /*per_instance=*/true, 2);
        run.x.push_back(double(Ts[j]));
        run.mean.push_back(r.mean_regret());
        run.sem.push_back(r.sem_regret());
        if (std::string(adversary) == "cube-coordinate") {
            exact.push_back(cube_coordinate_expected_regret(d, Ts[j]));
            // The mean itself matches the exact expectation.
            EXPECT_NEAR(run.mean.back(), exact.back(), 4 * run.sem.back()) << "T " << Ts[j];
        }
    }
    // Bias: cube-coordinate, from the exact curve; unit-vectors, E||L_T||_2 = sqrt(T) E||g||_2/sqrt(d)
    // (1 + O(1/T)) by the CLT with vanishing third cumulant: |bias| <= 1/T_min.
    const double bias = exact.empty() ? 1.0 / double(Ts.front()) : loglog_slope_exact(run.x, exact) - 0.5;
    expect_slope(run, 0.5, bias, (std::string(learner) + " vs " + adversary + ", slope in T").c_str());
}

/// E||g||_2 for g ~ N(0, I_n): sqrt(2) Gamma((n+1)/2) / Gamma(n/2).
double chi_mean(double n) {
    return std::sqrt(2.0) * std::exp(std::lgamma((n + 1) / 2) - std::lgamma(n / 2));
}

/// DP-FTPL over the ball, regret-dominated (eps = inf: sigma = sigma_reg), against a constant loss
/// theta (drifting, noise_scale = 0), over d: slope 1/4 (§3.2 A2). With the padded tree Z_{t-1} ~
/// N(0, s^2 I), s = sqrt(k) sigma_reg = c sqrt(T / sqrt(d)), for every t, so E regret = sum_t E[1 -
/// (t-1+g)/sqrt((t-1+g)^2 + P^2)] with g = <theta, Z>, P = ||Z_perp||; summing the integrand gives the
/// leading-order E regret ~= s E chi_d - s^2 (d-1)/(2T) + 1/2, whose log-log slope in d is 1/4 plus a
/// finite-size bias that the tolerance includes.
void ftpl_slope_in_d(const std::vector<std::uint32_t>& ds, std::uint64_t T, std::uint32_t instances) {
    SlopeRun run;
    std::vector<double> model;
    const double k = log2ceil(T), c = std::pow(2 * M_PI, -0.25);
    for (std::size_t j = 0; j < ds.size(); ++j) {
        const SimResult r = simulate("dp-ftpl-ball", {{"epsilon", kInfty}}, "drifting",
                                     {{"noise_scale", 0.0}}, ds[j], T, instances, 2, 200 + j, false, 2);
        run.x.push_back(double(ds[j]));
        run.mean.push_back(r.mean_regret());
        run.sem.push_back(r.sem_regret());
        const double s = std::sqrt(k) * c * std::sqrt(T / (std::sqrt(double(ds[j])) * k));
        model.push_back(s * chi_mean(ds[j]) - s * s * (ds[j] - 1) / (2.0 * T) + 0.5);
        std::printf("[ftpl] d %u: mean regret %.3f +- %.3f (leading-order model %.3f)\n", ds[j],
                    run.mean.back(), run.sem.back(), model.back());
    }
    expect_slope(run, 0.25, loglog_slope_exact(run.x, model) - 0.25,
                 "dp-ftpl-ball (regret-dominated), slope in d");
}

/// A1 explicit bound (Thm 3.4 + Cor 3.2 table): D_R/eta + 2 eta T max(||l||*)^2 + D_noise bound, with
/// (||l||*)^2 = ||l||_2^2 / 2 <= 1/2 for R = ||x||^2, D_R = 1 (ball) or d (cube), and
///   Laplace:  sphere 2 sqrt(2 k d) lambda,  cube 2 d sqrt(2 k) lambda
///   Gaussian: sphere 2 sqrt(k d) sigma,     cube 2 d sqrt(k) sigma      (E||Z|| <= sqrt(E||Z||^2))
double a1_bound(bool sphere, std::uint32_t d, std::uint64_t T, double eta, bool gaussian, double scale) {
    const double k = log2ceil(T);
    const double dr = sphere ? 1.0 : double(d);
    const double noise = sphere
                             ? (gaussian ? 2 * std::sqrt(k * d) * scale : 2 * std::sqrt(2 * k * d) * scale)
                             : (gaussian ? 2 * d * std::sqrt(k) * scale : 2 * d * std::sqrt(2 * k) * scale);
    return dr / eta + 2 * eta * T * 0.5 + noise;
}

void expect_a1_bound(const char* learner, const char* adversary, test::KeyList akeys, std::uint32_t d,
                     std::uint64_t T, std::uint32_t instances, const std::vector<double>& eps_list) {
    const bool sphere = std::string(learner) == "dp-ftrl-sphere";
    const double eta = sphere ? 1 / std::sqrt(double(T)) : std::sqrt(d / double(T));
    for (double eps : eps_list)
        for (int mode = 0; mode < 3; ++mode) { // Laplace paper, Laplace strict, Gaussian paper
            const double noise = mode == 2 ? kGaussian : kLaplace;
            const double cal = mode == 1 ? kStrict : kPaper;
            const SimResult r =
                simulate(learner, {{"epsilon", eps}, {"delta", 1e-5}, {"noise", noise}, {"calibration", cal}},
                         adversary, akeys, d, T, instances);
            const double bound = a1_bound(sphere, d, T, eta, mode == 2, r.privacy.noise_scale);
            const double m = r.mean_regret(), se = r.sem_regret();
            std::printf("[A1 bound] %s vs %s d %u T %llu eps %g mode %d: regret %.2f +- %.2f <= bound %.2f "
                        "(%.0f%%)\n",
                        learner, adversary, d, static_cast<unsigned long long>(T), eps, mode, m, se, bound,
                        100 * (m + 3 * se) / bound);
            EXPECT_LE(m + 3 * se, bound) << learner << " eps " << eps << " mode " << mode;
        }
}

/// A2 bound: 2 s D_X sqrt(d) + 2 T D_X L_Y^2 / (s sqrt(2 pi)), s = sqrt(k) sigma.
void expect_a2_bound(const char* learner, const char* adversary, test::KeyList akeys, std::uint32_t d,
                     std::uint64_t T, std::uint32_t instances, double dx, double ly,
                     const std::vector<double>& eps_list) {
    const double k = log2ceil(T);
    for (double eps : eps_list) {
        const SimResult r =
            simulate(learner, {{"epsilon", eps}, {"delta", 1e-5}}, adversary, akeys, d, T, instances);
        const double s = std::sqrt(k) * r.privacy.noise_scale;
        const double bound =
            2 * s * dx * std::sqrt(double(d)) + 2 * T * dx * ly * ly / (s * std::sqrt(2 * M_PI));
        const double m = r.mean_regret(), se = r.sem_regret();
        std::printf("[A2 bound] %s vs %s d %u T %llu eps %g: regret %.2f +- %.2f <= bound %.2f (%.0f%%)\n",
                    learner, adversary, d, static_cast<unsigned long long>(T), eps, m, se, bound,
                    100 * (m + 3 * se) / bound);
        EXPECT_LE(m + 3 * se, bound) << learner << " eps " << eps;
    }
}

TEST(As17FullInfo_Stat, DpFtrlSphereAndCubeNeverExceedTheExplicitA1Bound) {
    // drifting with noise_scale 0 is a constant loss: there the regret is ~ E||Z||_2 + sqrt(T)/2, within
    // a factor ~2 of the bound, so a noise scale or step off by 2x would show.
    expect_a1_bound("dp-ftrl-sphere", "drifting", {{"noise_scale", 0.0}}, 4, 1024, 100, {0.1, 1.0, 10.0});
    expect_a1_bound("dp-ftrl-sphere", "unit-vectors", {}, 4, 1024, 100, {0.1, 1.0});
    expect_a1_bound("dp-ftrl-cube", "cube-coordinate", {}, 4, 1024, 100, {0.1, 1.0, 10.0});
}

TEST(As17FullInfo_Stat, DpFtplNeverExceedsTheExplicitA2Bound) {
    const std::uint32_t d = 8;
    expect_a2_bound("dp-ftpl-ball", "drifting", {{"noise_scale", 0.0}}, d, 1024, 100, 1.0, 1.0,
                    {0.1, 1.0, kInfty});
    expect_a2_bound("dp-ftpl-cube", "cube-coordinate", {}, d, 1024, 100, std::sqrt(double(d)), 1.0,
                    {0.1, kInfty});
    expect_a2_bound("dp-ftpl-experts", "bernoulli", {{"gap", 0.2}}, d, 1024, 100, 1.0, std::sqrt(double(d)),
                    {0.1, kInfty});
}

TEST(As17FullInfo_Stat, FtrlRegretGrowsLikeSqrtT) {
    ftrl_slope_in_T("ftrl-l2-cube", "cube-coordinate", 8, {1024, 4096, 16384}, 400);
    ftrl_slope_in_T("ftrl-l2-ball", "unit-vectors", 8, {1024, 4096, 16384}, 300);
}

TEST(As17FullInfo_Stat, FtplRegretGrowsLikeDToTheQuarterInTheRegretDominatedRegime) {
    ftpl_slope_in_d({4, 16, 64, 256}, 1024, 30);
}

TEST(As17FullInfo_Slow, FtrlRegretGrowsLikeSqrtTOverAWideRange) {
    ftrl_slope_in_T("ftrl-l2-cube", "cube-coordinate", 16, {1024, 4096, 16384, 65536}, 1000);
    ftrl_slope_in_T("ftrl-l2-ball", "unit-vectors", 16, {1024, 4096, 16384, 65536}, 500);
}

TEST(As17FullInfo_Slow, FtplRegretGrowsLikeDToTheQuarterOverAWideRange) {
    ftpl_slope_in_d({16, 64, 256, 1024}, 4096, 30);
}

TEST(As17FullInfo_Slow, ExplicitBoundsHoldOverTheRegimeGrid) {
    for (std::uint64_t T : {std::uint64_t{1} << 12, std::uint64_t{1} << 14}) {
        const std::vector<double> eps = {0.01, 0.1, 1.0, 10.0, 100.0};
        expect_a1_bound("dp-ftrl-sphere", "drifting", {{"noise_scale", 0.0}}, 8, T, 100, eps);
        expect_a1_bound("dp-ftrl-cube", "cube-coordinate", {}, 8, T, 100, eps);
        expect_a2_bound("dp-ftpl-ball", "drifting", {{"noise_scale", 0.0}}, 8, T, 100, 1.0, 1.0,
                        {0.01, 0.1, 1.0, 10.0, kInfty});
    }
}

} // namespace
