// AFKT23 Algorithm 3 (dp-ftrl-smooth, Thm 4; docs/spec/afkt23.md §C6) and the convex linear-model loss families it is
// charged on (kernels/core/sets.hpp LossFamily; adversaries squared-realizable / absolute-realizable). Properties a
// wrong implementation would violate:
//   * the adversaries' rows are (a_t, b_t) with ||a_t|| = a_norm and b_t = <a_t, x*>, ||x*|| = x_star_norm: every
//     loss vanishes at x*, so the comparator 0 is right;
//   * lambda and the privacy report are the spec's formulas (Theorem 4; rho = h' (2L)^2 / (2 sigma^2) converted at
//     delta; the add-remove calibration reports the larger epsilon it really gives under replace-one);
//   * with the noise off the learner is lazy projected gradient descent (checked against a direct implementation),
//     and on realizable squared losses its regret obeys the FTRL bound lambda r^2/2 / (1 - 2/lambda) at every T;
//   * with the noise on, it plays the projection of the noisy gradient sum (play()) and is charged that point's loss;
//   * gradients are clipped to L (never under the family contract; exactly to norm L when a row breaks it);
//   * per-instance sequences (rows of d + 1 numbers through the engine's per-instance path) give each instance the
//     serial oracle's charges;
//   * pairing a linear-loss learner with these adversaries (or the reverse) and bad keys exit 2 naming the key.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/run_cli.hpp"
#include "kernels/adversaries/linear_model.hpp"
#include "kernels/learners/dp_ftrl_smooth.hpp"
#include "kernels/sim/comparator.hpp"
#include "kernels/sim/instance_loop.hpp"
#include "learners/simulate.hpp"
#include "learners/solo.hpp"

namespace dpr {
namespace {

using adversaries::AbsoluteRealizable;
using adversaries::SquaredRealizable;
using learners::DpFtrlSmooth;

DpFtrlSmooth::Params smooth_params(std::uint32_t d, std::uint64_t T, double eps, LossFamily f,
                                   std::initializer_list<std::pair<int, double>> keys = {}) {
    KeyValues kv;
    kv.num[DpFtrlSmooth::kEpsilon] = eps;
    kv.given[DpFtrlSmooth::kEpsilon] = true;
    for (const auto& k : keys) {
        kv.num[k.first] = k.second;
        kv.given[k.first] = true;
    }
    Problem pb;
    pb.d = d;
    pb.T = T;
    pb.loss = f;
    return DpFtrlSmooth::resolve(kv, pb);
}

template <class A>
typename A::Params adversary_params(std::uint32_t d, std::uint64_t T, double r = 0.5, double s = 1.0) {
    KeyValues kv;
    kv.num[A::kXStarNorm] = r;
    kv.given[A::kXStarNorm] = true;
    kv.num[A::kANorm] = s;
    kv.given[A::kANorm] = true;
    Problem pb;
    pb.d = d;
    pb.T = T;
    return A::resolve(kv, pb);
}

double dot(const double* a, const double* b, std::uint32_t d) {
    double s = 0;
    for (std::uint32_t i = 0; i < d; ++i) s += a[i] * b[i];
    return s;
}

double family_loss(LossFamily f, double r) { return f == LossFamily::Squared ? 0.5 * r * r : std::fabs(r); }

// ---- the adversaries ------------------------------------------------------------------------------------------

TEST(LinearModelAdversaries, RowsAreALinearModelThatVanishesAtXStar) {
    const std::uint32_t d = 7;
    const std::uint64_t T = 400;
    const auto p = adversary_params<SquaredRealizable>(d, T, 0.7, 0.6);
    for (std::uint32_t seq : {adversaries::kSharedSequence, 0u, 5u}) {
        const adversaries::SequenceCtx ctx{9, 0, seq};
        std::vector<double> xs(d), row(d + 1), mean(d, 0.0);
        SquaredRealizable::x_star(p, ctx, xs.data());
        EXPECT_NEAR(std::sqrt(dot(xs.data(), xs.data(), d)), 0.7, 1e-12);
        for (std::uint64_t t = 1; t <= T; ++t) {
            SquaredRealizable::fill(p, ctx, t, row.data());
            EXPECT_NEAR(std::sqrt(dot(row.data(), row.data(), d)), 0.6, 1e-12) << t;
            EXPECT_NEAR(row[d], dot(row.data(), xs.data(), d), 1e-14) << t; // l_t(x*) = 0
            for (std::uint32_t i = 0; i < d; ++i) mean[i] += row[i] / T;
        }
        // a_t uniform on the sphere of radius 0.6: each coordinate has mean 0 and sd 0.6/sqrt(d) per draw.
        for (std::uint32_t i = 0; i < d; ++i) EXPECT_LT(std::fabs(mean[i]), 5 * 0.6 / std::sqrt(double(d * T))) << i;
    }
    // Both families draw the same (a_t, b_t) for the same keys and context: only the loss differs.
    const auto q = adversary_params<AbsoluteRealizable>(d, T, 0.7, 0.6);
    std::vector<double> r1(d + 1), r2(d + 1);
    SquaredRealizable::fill(p, {9, 0, 3}, 17, r1.data());
    AbsoluteRealizable::fill(q, {9, 0, 3}, 17, r2.data());
    EXPECT_EQ(r1, r2);
    EXPECT_EQ(sim::comparator(Geometry::Ball, LossFamily::Squared, r1.data(), d + 1), 0.0);
}

// ---- dp-ftrl-smooth: parameters and privacy ------------------------------------------------------------------

TEST(DpFtrlSmooth, LambdaAndPrivacyReportAreTheSpecsFormulas) {
    const std::uint32_t d = 6;
    const std::uint64_t T = 5000;
    const double eps = 2.0, delta = 1e-6;
    const auto p = smooth_params(d, T, eps, LossFamily::Squared, {{DpFtrlSmooth::kDelta, delta}});
    EXPECT_EQ(p.lipschitz, 2.0);
    EXPECT_EQ(p.beta, 1.0);
    EXPECT_EQ(p.row_d, d + 1);
    // Theorem 4: lambda = 32 beta + ((beta/eps^2) (L/D)^2 T d ln T ln(1/delta))^{1/3}.
    const double want = 32.0 + std::cbrt(1.0 / (eps * eps) * 4.0 * T * d * std::log(double(T)) * std::log(1.0 / delta));
    EXPECT_NEAR(p.lambda, want, 1e-12 * want);
    // The node sigma gives exactly eps at delta through zCDP with Delta_2 = 2L over h' = ceil(log2 T) levels.
    const double hp = std::ceil(std::log2(double(T)));
    const double rho = hp * (2 * 2.0) * (2 * 2.0) / (2 * p.prefix.scale * p.prefix.scale);
    EXPECT_NEAR(rho + 2 * std::sqrt(rho * std::log(1 / delta)), eps, 1e-9);
    const learners::PrivacyReport r = DpFtrlSmooth::privacy(p);
    EXPECT_NEAR(r.epsilon, eps, 1e-9);
    EXPECT_EQ(r.delta, delta);
    EXPECT_STREQ(r.accountant, "zcdp");
    EXPECT_EQ(r.noise_scale, p.prefix.scale);
    // add-remove: sigma for Delta_2 = L, half the replace-one sigma's sensitivity, so 4 rho under replace-one.
    const auto a = smooth_params(d, T, eps, LossFamily::Squared,
                                 {{DpFtrlSmooth::kDelta, delta}, {DpFtrlSmooth::kCalibration, 1}});
    EXPECT_NEAR(a.prefix.scale, p.prefix.scale / 2, 1e-12 * p.prefix.scale);
    const double rho4 = 4 * rho;
    EXPECT_NEAR(DpFtrlSmooth::privacy(a).epsilon, rho4 + 2 * std::sqrt(rho4 * std::log(1 / delta)), 1e-9);
    EXPECT_GT(DpFtrlSmooth::privacy(a).epsilon, 1.9 * eps);
    // general tuning: sqrt(2T (L^2 + L sigma sqrt(d ceil(log2 T)))).
    const auto g = smooth_params(d, T, eps, LossFamily::Squared, {{DpFtrlSmooth::kDelta, delta}, {DpFtrlSmooth::kTuning, 2}});
    EXPECT_NEAR(g.lambda, std::sqrt(2.0 * T * (4.0 + 2.0 * p.prefix.scale * std::sqrt(d * hp))), 1e-9 * g.lambda);
    // auto tuning: absolute losses (L = 1, not smooth) take the general lambda.
    const auto ab = smooth_params(d, T, eps, LossFamily::Absolute, {{DpFtrlSmooth::kDelta, delta}});
    EXPECT_EQ(ab.lipschitz, 1.0);
    EXPECT_EQ(ab.tuning, DpFtrlSmooth::Tuning::General);
    EXPECT_NEAR(ab.lambda, std::sqrt(2.0 * T * (1.0 + ab.prefix.scale * std::sqrt(d * hp))), 1e-9 * ab.lambda);
    // Noise off: not private, lambda = 32 beta (realizable) and sqrt(2T) L (general).
    const auto off = smooth_params(d, T, kInf, LossFamily::Squared);
    EXPECT_EQ(off.prefix.scale, 0.0);
    EXPECT_EQ(off.lambda, 32.0);
    EXPECT_TRUE(std::isinf(DpFtrlSmooth::privacy(off).epsilon));
    EXPECT_EQ(smooth_params(d, T, kInf, LossFamily::Absolute).lambda, std::sqrt(2.0 * T));
}

// ---- dp-ftrl-smooth: what it plays -----------------------------------------------------------------------------

/// Lazy projected gradient descent on the family's losses, written directly: x_t = -G/max(lambda, ||G||).
template <class A>
std::vector<double> lazy_gradient_charges(LossFamily f, double lambda, const typename A::Params& ap,
                                          const adversaries::SequenceCtx& ctx, std::uint32_t d, std::uint64_t T) {
    std::vector<double> G(d, 0.0), x(d), row(d + 1), out;
    for (std::uint64_t t = 1; t <= T; ++t) {
        const double n = std::sqrt(dot(G.data(), G.data(), d));
        const double den = std::max(lambda, n);
        for (std::uint32_t i = 0; i < d; ++i) x[i] = den > 0 ? -G[i] / den : 0.0;
        A::fill(ap, ctx, t, row.data());
        const double r = dot(row.data(), x.data(), d) - row[d];
        out.push_back(family_loss(f, r));
        const double c = f == LossFamily::Squared ? r : (r > 0 ? 1.0 : r < 0 ? -1.0 : 0.0);
        for (std::uint32_t i = 0; i < d; ++i) G[i] += c * row[i];
    }
    return out;
}

template <class A>
void expect_noise_off_is_lazy_gradient(LossFamily f) {
    const std::uint32_t d = 5;
    const std::uint64_t T = 300;
    const auto ap = adversary_params<A>(d, T, 0.8);
    const adversaries::SequenceCtx ctx{4, 0, adversaries::kSharedSequence};
    for (double lambda : {0.5, 3.0, 32.0}) {
        const auto p = smooth_params(d, T, kInf, f, {{DpFtrlSmooth::kLambda, lambda}});
        const auto want = lazy_gradient_charges<A>(f, lambda, ap, ctx, d, T);
        test::Solo<DpFtrlSmooth> solo(p, 4, 0);
        std::vector<double> row(d + 1);
        for (std::uint64_t t = 1; t <= T; ++t) {
            A::fill(ap, ctx, t, row.data());
            const auto q = solo.round(t, row.data());
            ASSERT_NEAR(q.expected, want[t - 1], 1e-12 * (1 + want[t - 1])) << A::kName << " lambda " << lambda << " t " << t;
            ASSERT_EQ(q.expected, q.realized);
        }
    }
}

TEST(DpFtrlSmooth, NoiseOffIsLazyProjectedGradientDescent) {
    expect_noise_off_is_lazy_gradient<SquaredRealizable>(LossFamily::Squared);
    expect_noise_off_is_lazy_gradient<AbsoluteRealizable>(LossFamily::Absolute);
}

TEST(DpFtrlSmooth, NoiseOffRegretOnRealizableSquaredLossesObeysTheFtrlBoundAtEveryT) {
    // FTRL with (lambda/2)||x||^2 on the linearised losses: sum <g_t, x_t - x*> <= lambda ||x*||^2/2 + sum ||g_t||^2/lambda,
    // and ||g_t||^2 = r_t^2 ||a_t||^2 <= 2 l_t(x_t) (squared losses, ||a|| <= 1), so with L* = 0
    // Regret_T <= (lambda r^2 / 2) / (1 - 2/lambda): 4.27 at lambda = 32 beta = 32, r = 0.5, whatever T.
    // A wrong gradient (sign, scale) or projection breaks it; each instance has its own sequence.
    const double bound = (32.0 * 0.25 / 2) / (1 - 2.0 / 32);
    const auto r = test::simulate("dp-ftrl-smooth", {{"epsilon", kInf}}, "squared-realizable", {}, 6, 3000, 40, 2, 7,
                                  /*per_instance=*/true, 8);
    double worst = 0, last = 0;
    for (std::size_t k = 0; k < r.regret.size(); ++k) {
        EXPECT_LE(r.regret[k], bound);
        EXPECT_GE(r.regret[k], 0.0); // comparator 0, losses >= 0
        worst = std::max(worst, r.regret[k]);
    }
    for (double v : r.final_regret) last += v / r.final_regret.size();
    EXPECT_GT(worst, 0.2 * bound); // the bound is not vacuous for this workload
    EXPECT_GT(last, 0.5);
}

TEST(DpFtrlSmooth, PlaysTheProjectionOfTheNoisyGradientSumAndIsChargedItsLoss) {
    const std::uint32_t d = 9;
    const std::uint64_t T = 200;
    for (LossFamily f : {LossFamily::Squared, LossFamily::Absolute})
        for (int tree : {0, 1}) { // padded, binary
            const auto p = smooth_params(d, T, 1.0, f, {{DpFtrlSmooth::kDelta, 1e-5}, {DpFtrlSmooth::kMechanism, tree}});
            ASSERT_GT(p.prefix.scale, 0.0);
            const auto ap = adversary_params<SquaredRealizable>(d, T);
            const adversaries::SequenceCtx ctx{2, 0, adversaries::kSharedSequence};
            test::Solo<DpFtrlSmooth> solo(p, 2, 3);
            std::vector<double> x(d), prev(d, 0.0), row(d + 1);
            int moves = 0;
            for (std::uint64_t t = 1; t <= T; ++t) {
                solo.play(t, x.data());
                EXPECT_LE(std::sqrt(dot(x.data(), x.data(), d)), 1.0 + 1e-12);
                double step = 0;
                for (std::uint32_t i = 0; i < d; ++i) step += (x[i] - prev[i]) * (x[i] - prev[i]);
                moves += step > 1e-18;
                prev = x;
                SquaredRealizable::fill(ap, ctx, t, row.data());
                const double want = family_loss(f, dot(row.data(), x.data(), d) - row[d]);
                const auto q = solo.round(t, row.data());
                ASSERT_NEAR(q.expected, want, 1e-9 * (1 + want)) << "t " << t;
            }
            EXPECT_GT(moves, int(T) / 2); // the noise (and the gradients) move the point most rounds
            EXPECT_GT(solo.diagnostics()[0], 0.0); // max ||Z||_2 recorded
            EXPECT_EQ(solo.diagnostics()[1], 0.0); // never clipped under the family contract
        }
}

TEST(DpFtrlSmooth, GradientsOutsideTheFamilyContractAreClippedToL) {
    // A row with ||a|| = 3 breaks the contract (||a|| <= 1): at x_1 = 0, r_1 = -b, the gradient -b a has norm 3|b|
    // (2.7 at b = 0.9) and is clipped to L = 2, so x_2 = -G_1/lambda has norm 2/lambda (lambda = 100 > ||G_1||).
    const std::uint32_t d = 3;
    const auto p = smooth_params(d, 10, kInf, LossFamily::Squared, {{DpFtrlSmooth::kLambda, 100.0}});
    test::Solo<DpFtrlSmooth> solo(p, 1, 0);
    const double row1[] = {3.0, 0.0, 0.0, 0.9};
    const auto q = solo.round(1, row1);
    EXPECT_NEAR(q.expected, 0.5 * 0.81, 1e-15);
    std::vector<double> x(d);
    solo.play(2, x.data());
    EXPECT_NEAR(x[0], 2.0 / 100, 1e-15); // G_1 = clip(-0.9 (3, 0, 0)) = (-2, 0, 0), x_2 = -G_1/100 (unclipped: 0.027)
    EXPECT_EQ(solo.diagnostics()[1], 1.0);
    // Within the contract nothing is clipped: ||a|| = 1, b = 1 gives the full gradient (-1, 0, 0).
    test::Solo<DpFtrlSmooth> ok(p, 1, 0);
    const double row2[] = {1.0, 0.0, 0.0, 1.0};
    ok.round(1, row2);
    ok.play(2, x.data());
    EXPECT_NEAR(x[0], 1.0 / 100, 1e-15);
    EXPECT_EQ(ok.diagnostics()[1], 0.0);
}

TEST(DpFtrlSmooth, PerInstanceSequencesOfWidthDPlusOneGiveEachInstanceTheSerialOraclesCharges) {
    const std::uint32_t d = 11, n = 20, seed = 5;
    const std::uint64_t T = 250;
    for (const char* lanes : {"instances", "coordinates"}) {
        const auto r = test::simulate("dp-ftrl-smooth", {{"epsilon", 1.0}, {"delta", 1e-5}}, "absolute-realizable", {},
                                      d, T, n, 2, seed, /*per_instance=*/true, 8, 0,
                                      test::SimOptions{Precision::Double, lanes});
        const auto p = smooth_params(d, T, 1.0, LossFamily::Absolute, {{DpFtrlSmooth::kDelta, 1e-5}});
        const auto ap = adversary_params<AbsoluteRealizable>(d, T);
        std::vector<double> row(d + 1);
        for (std::uint32_t k = 0; k < n; k += 3) {
            const adversaries::SequenceCtx ctx{seed, 0, k};
            test::Solo<DpFtrlSmooth> solo(p, seed, k);
            sim::CompensatedSum<double> total;
            for (std::uint64_t t = 1; t <= T; ++t) {
                AbsoluteRealizable::fill(ap, ctx, t, row.data());
                total.add(solo.round(t, row.data()).expected);
            }
            // The comparator of a realizable family is 0: regret = the charged total.
            const double want = total.value();
            if (std::string(lanes) == "instances") EXPECT_EQ(r.final_regret[k], want) << "instance " << k;
            else EXPECT_NEAR(r.final_regret[k], want, 1e-9 * (1 + want)) << "instance " << k;
        }
    }
}

// ---- the CLI ---------------------------------------------------------------------------------------------------

TEST(DpFtrlSmooth, MismatchedLossFamiliesAndBadKeysAreRefusedWithExitTwoNamingTheKey) {
    test::TempDir dir;
    struct Case {
        std::string adversary, learner, needle;
    } cases[] = {
        {"kind = \"unit-vectors\"\nd = 4\n", "algorithm = \"dp-ftrl-smooth\"\nepsilon = 1\ndelta = 1e-6\n",
         "is not charged on linear losses"},
        {"kind = \"squared-realizable\"\nd = 4\n", "algorithm = \"ftrl-l2-ball\"\n",
         "is not charged on squared losses"},
        {"kind = \"squared-realizable\"\nd = 4\n", "algorithm = \"dp-ftrl-smooth\"\nepsilon = 1\n",
         "[learner] delta"},
        {"kind = \"squared-realizable\"\nd = 4\n", "algorithm = \"dp-ftrl-smooth\"\nepsilon = 1\ndelta = 1e-6\nlambda = 0\n",
         "[learner] lambda"},
        {"kind = \"squared-realizable\"\nd = 4\n", "algorithm = \"dp-ftrl-smooth\"\nepsilon = 1\ndelta = 1e-6\nbeta = 0\n",
         "[learner] beta"},
        {"kind = \"squared-realizable\"\nd = 4\nx_star_norm = 1.5\n", "algorithm = \"dp-ftrl-smooth\"\nepsilon = inf\n",
         "[adversary] x_star_norm"},
        {"kind = \"absolute-realizable\"\nd = 4\na_norm = -0.1\n", "algorithm = \"dp-ftrl-smooth\"\nepsilon = inf\n",
         "[adversary] a_norm"},
    };
    for (const Case& c : cases) {
        dir.write("c.toml", "[run]\nrounds = 64\ninstances = 2\n[adversary]\n" + c.adversary + "[learner]\n" + c.learner);
        const test::CliResult r = test::run_cli(dir, "run c.toml --out out --quiet");
        EXPECT_EQ(r.rc, 2) << c.learner << r.err;
        EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.needle << "\n" << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("out"))) << c.learner;
    }
}

} // namespace
} // namespace dpr
