// SCRiBLe and DP-SCRiBLe (AS17 Alg. 4 + SCRiBLe, §4.2; docs/spec/as17.md §A3, §A5; docs/spec/checks.md §3.2
// "A5 SCRiBLe"):
//   barriers     closed-form FTRL steps (ball, cube) equal a damped Newton solve; the simplex Newton step
//                satisfies the optimality conditions; every eigenpair lies on the Dikin boundary
//                (v^T H v = lambda, checked in long double) and the eigenbasis is orthonormal; eigenvalues
//                agree with Eigen's SelfAdjointEigenSolver; every point x +- lambda^{-1/2} v is in K.
//   learners     registry, keys, privacy report; epsilon = inf equals scrible bitwise; every played y_t in K
//                (diagnostic, 1e-12) on all three sets, in double and float; a test harness built from the
//                learner's own pieces reproduces the engine's regret.
//   lanes        the registered learners' lane round (kernels/learners/scrible_lanes.hpp) on one lane in double is
//                the scalar learner bit for bit, round by round; the exploration draw on 16 lanes is the scalar
//                draw on each (rejections included); the simplex gives the same bits on coordinate lanes.
//   _Stat        E[lhat | past] = l~ by Monte Carlo over (i_t, s_t) (and wrong estimators are rejected);
//                Lemma 4.3's identity (and a noise-reusing variant is rejected); regret slope ~1/2 in T
//                with a tolerance derived from the Monte Carlo standard errors (and a step size that does
//                not shrink with T is rejected); Pr[F] <= 1/T.
//   _Slow        the slope and Lemma 4.3 tests at larger T / more instances, all three sets.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <boost/math/distributions/normal.hpp>

#include "host/config/component_info.hpp"
#include "host/simd/pack.hpp"
#include "kernels/adversaries/registry.hpp"
#include "kernels/core/team.hpp"
#include "kernels/learners/dp_scrible.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/sim/comparator.hpp"
#include "kernels/sim/instance_loop.hpp"
#include "learners/simulate.hpp"
#include "learners/solo.hpp"
#include "noise/stat_tests.hpp"

namespace dpr {
namespace {

using learners::DpScribleBall;
using learners::DpScribleCube;
using learners::DpScribleSimplex;
using learners::InstanceCtx;
using learners::ScribleBall;
using learners::ScribleCube;
using learners::ScribleSimplex;
namespace bar = learners::barriers;
using LD = long double;

/// Two-sided normal quantile for false-alarm rate alpha (docs/ARCHITECTURE.md §7: alpha = 1e-6 per decision).
double z_two_sided(double alpha) {
    return boost::math::quantile(boost::math::complement(boost::math::normal(), alpha / 2.0));
}

// ---- barriers -----------------------------------------------------------------------------------------

std::vector<double> random_direction(std::mt19937_64& rng, std::uint32_t n) {
    std::normal_distribution<double> N01;
    std::vector<double> v(n);
    double s = 0.0;
    for (auto& z : v) {
        z = N01(rng);
        s += z * z;
    }
    for (auto& z : v) z /= std::sqrt(s);
    return v;
}

/// Random interior points, many of them close to the boundary (distances down to ~1e-9).
template <class B>
std::vector<double> random_point(std::mt19937_64& rng, std::uint32_t n, int rep) {
    std::uniform_real_distribution<double> U(0.0, 1.0);
    std::vector<double> x(n);
    if constexpr (B::kGeometry == Geometry::Ball) {
        const double r = rep % 3 == 0 ? 1.0 - std::pow(10.0, -1.0 - 8.0 * U(rng)) : U(rng);
        x = random_direction(rng, n);
        for (auto& z : x) z *= r;
    } else if constexpr (B::kGeometry == Geometry::Cube) {
        for (auto& z : x)
            z = (2.0 * U(rng) - 1.0) * (rep % 3 == 0 ? 1.0 - std::pow(10.0, -9.0 * U(rng)) : 1.0);
    } else {
        // weights spanning up to 6 decades, with exact ties (Helmert deflation) and near ties
        std::vector<double> w(n + 1);
        for (auto& z : w) z = std::pow(10.0, -6.0 * U(rng) * (rep % 2));
        if (rep % 5 == 1 && n >= 3) w[1] = w[2] = w[0];
        if (rep % 5 == 2 && n >= 2) w[1] = w[0] * (1.0 + 1e-15 * (1 + rep % 7));
        if (rep % 5 == 3) std::fill(w.begin(), w.end(), 1.0);
        if (rep % 5 == 4 && n >= 2) w[1] = w[0] * (1.0 + 1e-9);
        double s = 0.0;
        for (double z : w) s += z;
        for (std::uint32_t i = 0; i < n; ++i) x[i] = w[i] / s;
    }
    return x;
}

/// Independent membership test of an ambient point: distance outside K (0 inside).
template <class B>
double outside(const std::vector<double>& y) {
    if constexpr (B::kGeometry == Geometry::Ball) {
        LD s = 0;
        for (double z : y) s += static_cast<LD>(z) * z;
        return std::max(0.0, static_cast<double>(std::sqrt(s) - 1));
    } else if constexpr (B::kGeometry == Geometry::Cube) {
        double m = 0.0;
        for (double z : y) m = std::max(m, std::fabs(z) - 1.0);
        return m;
    } else {
        double m = 0.0;
        LD s = 0;
        for (double z : y) {
            m = std::max(m, -z);
            s += z;
        }
        return std::max(m, static_cast<double>(std::fabs(s - 1))); // on the simplex: sum = 1, all >= 0
    }
}

/// v^T H v / (lambda v^T v) - 1 in long double, with H from the barrier's formulas at (x, aux).
template <class B>
LD rayleigh_error(std::uint32_t n, const double* x, const double* aux, const double* v, double lam) {
    LD q = 0, vv = 0;
    for (std::uint32_t i = 0; i < n; ++i) vv += static_cast<LD>(v[i]) * v[i];
    if constexpr (B::kGeometry == Geometry::Ball) {
        LD xv = 0;
        const LD s = aux[0];
        for (std::uint32_t i = 0; i < n; ++i) xv += static_cast<LD>(x[i]) * v[i];
        q = 2 * vv / s + 4 * xv * xv / (s * s);
    } else if constexpr (B::kGeometry == Geometry::Cube) {
        for (std::uint32_t i = 0; i < n; ++i) {
            const LD sl = aux[i], o = 2 - sl;
            q += static_cast<LD>(v[i]) * v[i] * (1 / (sl * sl) + 1 / (o * o));
        }
    } else {
        LD sv = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
            sv += v[i];
            q += static_cast<LD>(v[i]) * v[i] / (static_cast<LD>(x[i]) * x[i]);
        }
        q += sv * sv / (static_cast<LD>(aux[0]) * aux[0]);
    }
    return std::fabs(q / (lam * vv) - 1);
}

template <class B>
void check_eigenpairs(std::uint32_t n, int reps) {
    std::mt19937_64 rng(7 + n);
    LD worst_rayleigh = 0, worst_orth = 0;
    double worst_eig = 0.0, worst_out = 0.0;
    for (int rep = 0; rep < reps; ++rep) {
        const std::vector<double> pt = random_point<B>(rng, n, rep);
        std::vector<double> x(n), aux(n + 2), v(n), H(n * n), lam(n), y(n + 1);
        std::vector<std::vector<double>> V(n);
        B::set_point(n, pt.data(), x.data(), aux.data());
        for (std::uint32_t k = 0; k < n; ++k) {
            lam[k] = B::eigenpair(n, x.data(), aux.data(), k, v.data());
            V[k] = v;
            worst_rayleigh =
                std::max(worst_rayleigh, rayleigh_error<B>(n, x.data(), aux.data(), v.data(), lam[k]));
            for (double sgn : {-1.0, 1.0}) { // both ends of the Dikin axis lie in K
                const double sl =
                    B::play(n, x.data(), aux.data(), v.data(), sgn / std::sqrt(lam[k]), y.data());
                std::vector<double> amb(y.begin(),
                                        y.begin() + (B::kGeometry == Geometry::Simplex ? n + 1 : n));
                worst_out = std::max(worst_out, outside<B>(amb));
                EXPECT_GE(sl, -1e-12);
            }
        }
        for (std::uint32_t a = 0; a < n; ++a)
            for (std::uint32_t b = 0; b < n; ++b) {
                LD dot = 0;
                for (std::uint32_t i = 0; i < n; ++i) dot += static_cast<LD>(V[a][i]) * V[b][i];
                worst_orth = std::max(worst_orth, std::fabs(dot - (a == b ? 1 : 0)));
            }
        // eigenvalues against Eigen (a backward-stable solver: absolute accuracy ~ eps ||H||)
        B::hessian(n, x.data(), aux.data(), H.data());
        Eigen::MatrixXd M(n, n);
        for (std::uint32_t i = 0; i < n; ++i)
            for (std::uint32_t j = 0; j < n; ++j) M(i, j) = H[i * n + j];
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(M);
        std::sort(lam.begin(), lam.end());
        const double top = es.eigenvalues().cwiseAbs().maxCoeff();
        for (std::uint32_t k = 0; k < n; ++k)
            worst_eig = std::max(worst_eig, std::fabs(lam[k] - es.eigenvalues()(k)) / top);
    }
    EXPECT_LT(worst_rayleigh, 1e-13) << B::kSet << " n=" << n << ": v^T H v != lambda";
    EXPECT_LT(worst_orth, 1e-13) << B::kSet << " n=" << n << ": eigenbasis not orthonormal";
    EXPECT_LT(worst_eig, 1e-12) << B::kSet << " n=" << n << ": eigenvalues differ from Eigen";
    EXPECT_LE(worst_out, 1e-12) << B::kSet << " n=" << n << ": a Dikin axis end left K";
}

TEST(As17BloBarriers, EigenpairsOnDikinBoundaryOrthonormalAndInsideK) {
    for (std::uint32_t n : {1u, 2u, 3u, 8u, 32u}) {
        check_eigenpairs<bar::Ball>(n, 300);
        check_eigenpairs<bar::Cube>(n, 300);
        check_eigenpairs<bar::Simplex>(n, 300);
    }
}

TEST(As17BloBarriers, SimplexCentreUsesTiesAndLastRoot) {
    // At the centre every pole ties: n - 1 Helmert vectors (eigenvalue N^2) and one secular root N^2 (1 + n).
    for (std::uint32_t n : {1u, 2u, 5u}) {
        std::vector<double> x(n), aux(1), v(n);
        bar::Simplex::center(n, x.data(), aux.data());
        const double N = n + 1.0;
        for (std::uint32_t k = 0; k < n; ++k) {
            const double lam = bar::Simplex::eigenpair(n, x.data(), aux.data(), k, v.data());
            EXPECT_NEAR(lam / (N * N), k == 0 ? 1.0 + n : 1.0, 1e-14) << "n=" << n << " k=" << k;
        }
    }
}

template <class B>
void check_closed_form_equals_newton(std::uint32_t n) {
    std::mt19937_64 rng(11 + n);
    std::uniform_real_distribution<double> U(0.0, 1.0);
    double worst = 0.0, worst_dec = 0.0;
    for (int rep = 0; rep < 400; ++rep) {
        // |eta g| from 1e-6 to 1e4 (the iterate then sits within ~1e-4 of the boundary)
        const double eta = 0.01;
        std::vector<double> g = random_direction(rng, n);
        const double scale = std::pow(10.0, -4.0 + 10.0 * U(rng));
        for (auto& z : g) z *= scale;
        std::vector<double> xc(n), ac(n + 2), xn(n), an(n + 2), s1(n), s2(n);
        bar::NewtonSettings ns;
        ns.tol = 1e-13;
        ns.max_iter = 500;
        B::ftrl(n, eta, g.data(), xc.data(), ac.data(), ns, s1.data(), s2.data());
        B::center(n, xn.data(), an.data());
        const std::uint32_t it =
            bar::newton_ftrl<B>(n, eta, g.data(), xn.data(), an.data(), ns, s1.data(), s2.data());
        EXPECT_LT(it, ns.max_iter);
        for (std::uint32_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(xc[i] - xn[i]));
        // the closed form is a stationary point: its Newton decrement (local dual norm of the gradient) ~ 0
        worst_dec = std::max(
            worst_dec, B::newton_direction(n, eta, g.data(), xc.data(), ac.data(), s1.data(), s2.data()));
    }
    EXPECT_LT(worst, 1e-10) << B::kSet << " n=" << n;
    EXPECT_LT(worst_dec, 1e-9) << B::kSet << " n=" << n;
}

TEST(As17BloBarriers, ClosedFormStepsEqualNewtonSolve) {
    for (std::uint32_t n : {1u, 3u, 16u}) {
        check_closed_form_equals_newton<bar::Ball>(n);
        check_closed_form_equals_newton<bar::Cube>(n);
    }
}

/// Independent reference for the simplex FTRL step: stationarity gives 1/x_i = eta g_i + mu (i < N, g_N = 0)
/// and x_N = 1/mu, with mu fixed by sum_i x_i = 1: a monotone 1-D equation, solved by bisection in long
/// double.
std::vector<LD> simplex_ftrl_reference(double eta, const std::vector<double>& g) {
    LD lo = 0;
    for (double z : g) lo = std::max(lo, -static_cast<LD>(eta) * z);
    auto total = [&](LD mu) {
        LD s = 1 / mu;
        for (double z : g) s += 1 / (static_cast<LD>(eta) * z + mu);
        return s;
    };
    LD hi = lo + static_cast<LD>(g.size()) + 2;
    while (total(hi) > 1) hi = lo + 2 * (hi - lo);
    for (int it = 0; it < 400; ++it) {
        const LD mid = lo + (hi - lo) / 2;
        if (mid == lo || mid == hi) break;
        (total(mid) > 1 ? lo : hi) = mid;
    }
    const LD mu = lo + (hi - lo) / 2;
    std::vector<LD> x(g.size() + 1);
    for (std::size_t i = 0; i < g.size(); ++i) x[i] = 1 / (static_cast<LD>(eta) * g[i] + mu);
    x[g.size()] = 1 / mu;
    return x;
}

TEST(As17BloBarriers, SimplexNewtonSolvesFtrl) {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    bar::NewtonSettings ns;
    ns.max_iter = 1000; // from the centre with |eta g| up to 5e5 the damped phase needs ~log(1/slack) steps
    for (std::uint32_t n : {1u, 2u, 7u, 31u}) {
        std::vector<double> g(n), x(n), s1(n), s2(n);
        double aux[1];
        double worst = 0.0;
        for (int rep = 0; rep < 100; ++rep) {
            const double scale = std::pow(10.0, 3.0 * (U(rng) + 1.0));
            for (auto& z : g) z = scale * U(rng);
            bar::Simplex::center(n, x.data(), aux);
            const std::uint32_t it =
                bar::Simplex::ftrl(n, 0.5, g.data(), x.data(), aux, ns, s1.data(), s2.data());
            EXPECT_LT(it, ns.max_iter);
            const std::vector<LD> ref = simplex_ftrl_reference(0.5, g);
            for (std::uint32_t i = 0; i <= n; ++i) {
                const double xi = i < n ? x[i] : aux[0];
                EXPECT_GT(xi, 0.0);
                worst = std::max(worst, static_cast<double>(std::fabs(xi - ref[i]) / ref[i]));
            }
        }
        // relative accuracy of every coordinate, including the tiny ones (the stationarity conditions lose
        // ~ eps * eta max|g| * x_i to cancellation, hence not 1e-15)
        EXPECT_LT(worst, 1e-9) << "n=" << n;
    }
}

// ---- learners through the engine ------------------------------------------------------------------

TEST(As17BloLearners, RegisteredWithKeysAndDiagnostics) {
    const auto names = learner_names();
    for (const char* n : {"scrible-ball", "scrible-cube", "scrible-simplex", "dp-scrible-ball",
                          "dp-scrible-cube", "dp-scrible-simplex"})
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    EXPECT_EQ(ScribleBall::kGeometry, Geometry::Ball);
    EXPECT_EQ(DpScribleCube::kGeometry, Geometry::Cube);
    EXPECT_EQ(DpScribleSimplex::kGeometry, Geometry::Simplex);
    EXPECT_EQ(ScribleBall::kKeys.size(), 1u);
    EXPECT_EQ(ScribleSimplex::kKeys.size(), 3u); // eta, newton_tol, newton_iters
    EXPECT_EQ(DpScribleBall::kKeys.size(), 6u);    // + noise (laplace | discrete-laplace)
    EXPECT_EQ(DpScribleSimplex::kKeys.size(), 8u);
    EXPECT_EQ(std::string(DpScribleBall::kKeys[DpScribleBall::kEpsilon].default_text), ""); // required
    EXPECT_EQ(std::string(DpScribleBall::kDiagnostics[5]), "event_F");
    // resolved defaults: nu, n, eta = sqrt(nu ln T)/(4 n B~ sqrt T), B~ = 1 + ||X||_1 ||Y||_1 ln(d T^2)/eps
    Problem pb;
    pb.d = 4;
    pb.T = 4096;
    KeyValues kv;
    kv.num[DpScribleCube::kEpsilon] = 2.0;
    kv.given[DpScribleCube::kEpsilon] = true;
    const auto p = DpScribleCube::resolve(kv, pb);
    EXPECT_EQ(p.n, 4u);
    EXPECT_EQ(p.nu, 8.0);
    EXPECT_DOUBLE_EQ(p.lambda, 1.0); // strict, the default: Delta / eps = 2 ||Y||_1 / eps = 1
    // B~ = 1 + ||X||_1 lambda ln(d T^2): the feedback's bound on the good event, with the lambda used.
    EXPECT_DOUBLE_EQ(p.b_tilde, 1.0 + 4.0 * 1.0 * std::log(4.0 * 4096.0 * 4096.0));
    EXPECT_DOUBLE_EQ(p.eta, std::sqrt(8.0 * std::log(4096.0)) / (4.0 * 4.0 * 64.0) / p.b_tilde);
    const auto ps = ScribleSimplex::resolve(KeyValues{}, pb);
    EXPECT_EQ(ps.n, 3u);
    EXPECT_EQ(ps.nu, 4.0);
    EXPECT_EQ(ps.newton.tol, 1e-12);
    Diagnostic diag;
    Problem one = pb;
    one.d = 1;
    EXPECT_FALSE(ScribleSimplex::check(KeyValues{}, one, diag));
    EXPECT_STREQ(diag.key, "d");
}

template <class L>
struct Tag {
    using type = L;
};

TEST(As17BloLearners, PrivacyReport) {
    Problem pb;
    pb.d = 9;
    pb.T = 1024;
    auto eps_of = [&](auto tag, double eps, int calibration, double scale) {
        using L = typename decltype(tag)::type;
        KeyValues kv;
        kv.num[L::kEpsilon] = eps;
        kv.given[L::kEpsilon] = true;
        kv.num[L::kCalibration] = calibration;
        kv.given[L::kCalibration] = true;
        if (scale > 0) {
            kv.num[L::kNoiseScale] = scale;
            kv.given[L::kNoiseScale] = true;
        }
        return L::privacy(L::resolve(kv, pb));
    };
    // paper: lambda = ||Y||_1/eps; the guarantee uses the replace-one Delta (ball 2 sqrt d, cube 2, simplex
    // d)
    EXPECT_NEAR(eps_of(Tag<DpScribleBall>{}, 1.0, 0, 0).epsilon, 2.0, 1e-12);
    EXPECT_NEAR(eps_of(Tag<DpScribleBall>{}, 1.0, 0, 0).noise_scale, 3.0, 1e-12);
    EXPECT_NEAR(eps_of(Tag<DpScribleCube>{}, 0.5, 0, 0).epsilon, 1.0, 1e-12);
    EXPECT_NEAR(eps_of(Tag<DpScribleSimplex>{}, 0.5, 0, 0).epsilon, 0.5, 1e-12);
    // strict calibration provides exactly eps
    EXPECT_NEAR(eps_of(Tag<DpScribleBall>{}, 0.3, 1, 0).epsilon, 0.3, 1e-12);
    EXPECT_NEAR(eps_of(Tag<DpScribleCube>{}, 0.3, 1, 0).epsilon, 0.3, 1e-12);
    // an explicit noise scale: eps = Delta / lambda
    EXPECT_NEAR(eps_of(Tag<DpScribleCube>{}, 1.0, 0, 8.0).epsilon, 0.25, 1e-12);
    const auto off = eps_of(Tag<DpScribleBall>{}, kInf, 0, 0);
    EXPECT_TRUE(std::isinf(off.epsilon));
    EXPECT_EQ(off.noise_scale, 0.0);
    EXPECT_EQ(std::string(eps_of(Tag<DpScribleBall>{}, 1.0, 0, 0).accountant), "pure-laplace");
    EXPECT_TRUE(std::isinf(ScribleBall::privacy(ScribleBall::resolve(KeyValues{}, pb)).epsilon));
}

struct SetCase {
    const char* plain;
    const char* dp;
    const char* adversary;
    std::uint32_t d;
};
const SetCase kSets[] = {
    {"scrible-ball", "dp-scrible-ball", "drifting", 3},
    {"scrible-ball", "dp-scrible-ball", "unit-vectors", 5},
    {"scrible-cube", "dp-scrible-cube", "cube-coordinate", 4},
    {"scrible-simplex", "dp-scrible-simplex", "bernoulli", 4},
    {"scrible-simplex", "dp-scrible-simplex", "switching", 6},
};

TEST(As17BloLearners, NoiseOffEqualsTwinExactly) {
    for (const SetCase& s : kSets) {
        const auto a = test::simulate(s.plain, {}, s.adversary, {}, s.d, 512, 64);
        const auto b = test::simulate(s.dp, {{"epsilon", kInf}}, s.adversary, {}, s.d, 512, 64);
        const auto c = test::simulate(s.dp, {{"epsilon", 1.0}}, s.adversary, {}, s.d, 512, 64);
        ASSERT_EQ(a.regret.size(), b.regret.size());
        for (std::size_t i = 0; i < a.regret.size(); ++i)
            ASSERT_EQ(a.regret[i], b.regret[i]) << s.plain << " " << i;
        for (std::uint32_t k = 0; k < 64; ++k)
            for (const char* dn : {"max_outside", "min_slack_y", "min_slack_x", "newton_iters_max"})
                ASSERT_EQ(a.diagnostic(dn, k), b.diagnostic(dn, k)) << s.plain << " " << dn;
        EXPECT_NE(a.final_regret, c.final_regret) << s.dp << ": eps = 1 must change the run";
        EXPECT_EQ(b.diagnostic("max_noise_inf", 0), 0.0);
    }
}

TEST(As17BloLearners, EveryPlayedPointInK) {
    // max_t of the distance of y_t outside K, per instance, on all three sets, private and not, including
    // a long run where x_t approaches the boundary (drifting losses with no noise, large eta).
    // Both precisions: float runs keep the state, the eigenpairs and the plays in float (docs/RANDOMNESS.md §7).
    for (const Precision prec : {Precision::Double, Precision::Float})
        for (const SetCase& s : kSets)
            for (const char* learner : {s.plain, s.dp}) {
                const bool dp = std::string(learner).rfind("dp-", 0) == 0;
                test::SimOptions o;
                o.precision = prec;
                const auto r =
                    dp ? test::simulate(learner, {{"epsilon", 0.5}}, s.adversary, {}, s.d, 2048, 200, 2, 1, false, 8,
                                        0, o)
                       : test::simulate(learner, {}, s.adversary, {}, s.d, 2048, 200, 2, 1, false, 8, 0, o);
                const char* p = prec == Precision::Float ? " float" : "";
                for (std::uint32_t k = 0; k < 200; ++k) {
                    ASSERT_LE(r.diagnostic("max_outside", k), 1e-12) << learner << p << " instance " << k;
                    ASSERT_GE(r.diagnostic("min_slack_y", k), -1e-12) << learner << p << " instance " << k;
                    ASSERT_GT(r.diagnostic("min_slack_x", k), 0.0) << learner << p << " instance " << k;
                }
            }
    const auto hard =
        test::simulate("scrible-ball", {{"eta", 5.0}}, "drifting", {{"noise_scale", 0.0}}, 3, 1 << 14, 32);
    for (std::uint32_t k = 0; k < 32; ++k) {
        ASSERT_LE(hard.diagnostic("max_outside", k), 1e-12);
        EXPECT_LT(hard.diagnostic("min_slack_x", k), 1e-3); // the iterate did get close to the sphere
    }
    const auto hs =
        test::simulate("scrible-simplex", {{"eta", 0.5}}, "bernoulli", {{"gap", 0.5}}, 5, 1 << 13, 32);
    for (std::uint32_t k = 0; k < 32; ++k) {
        ASSERT_LE(hs.diagnostic("max_outside", k), 1e-12);
        EXPECT_LT(hs.diagnostic("min_slack_x", k), 1e-3);
    }
}

// ---- a harness built from the learner's own pieces (round_lane0, step by step) --------------------

/// Per-instance record of one run: charged sum_t <l_t, y_t>, sum_t <Z_t, y_t>, sum_t Z_t, L_T.
struct Trace {
    double charged = 0.0;
    double noise_on_play = 0.0;  ///< sum_t <Z_t, y_t>
    std::vector<double> zsum, L; ///< sum_t Z_t, sum_t l_t
    double max_outside = 0.0;    ///< independent membership test of every y_t
};

enum class NoiseMode { Fresh, ReuseRoundOne };

template <class L, class A>
Trace run_trace(const typename L::Params& p, const typename A::Params& ap, std::uint32_t instance,
                std::uint32_t seed, NoiseMode mode) {
    const InstanceCtx c{seed, 0, instance};
    const adversaries::SequenceCtx sc{seed, 0, adversaries::kSharedSequence};
    std::vector<double> ws(L::state_size(p)), dg(L::kDiagSlots), loss(p.d);
    L::init_state(p, c, ws.data(), dg.data());
    Trace tr;
    tr.zsum.assign(p.d, 0.0);
    tr.L.assign(p.d, 0.0);
    sim::CompensatedSum<double> charged;
    for (std::uint64_t t = 1; t <= p.T; ++t) {
        A::fill(ap, sc, t, loss.data());
        const auto pl = L::play(p, c, ws.data(), t);
        const double* y = L::y_of(p, ws.data());
        std::vector<double> amb(y, y + p.d);
        tr.max_outside =
            std::max(tr.max_outside, L::Barrier::kGeometry == Geometry::Ball   ? outside<bar::Ball>(amb)
                                     : L::Barrier::kGeometry == Geometry::Cube ? outside<bar::Cube>(amb)
                                                                               : outside<bar::Simplex>(amb));
        double loss_y = 0.0;
        for (std::uint32_t i = 0; i < p.d; ++i) loss_y += loss[i] * y[i];
        double ctilde = loss_y;
        if (p.lambda > 0.0) {
            const std::uint64_t tz = mode == NoiseMode::Fresh ? t : 1;
            double zmax, zy = 0.0;
            const double fz = L::feedback_noise(p, c, tz, y, zmax);
            ctilde += fz;
            for (std::uint32_t i = 0; i < p.d; ++i) { // the same draws, regenerated independently
                const double z = L::noise_coordinate(p, c, tz, i);
                tr.zsum[i] += z;
                zy += z * y[i];
            }
            EXPECT_EQ(zy, fz); // the same draws, in the same order
            tr.noise_on_play += zy;
        }
        L::accumulate_estimate(p, ws.data(), ctilde, pl);
        if (t < p.T) {
            L::ftrl_step(p, ws.data(), pl);
            if (t % 97 == 0) { // the partial (cube: one-coordinate) step equals the full step exactly
                double* x = L::x_of(p, ws.data());
                double* aux = L::aux_of(p, ws.data());
                std::vector<double> x2(x, x + p.n), a2(aux, aux + L::Barrier::aux_size(p.n)), s1(p.d),
                    s2(p.n);
                L::Barrier::ftrl(p.n, p.eta, L::g_of(p, ws.data()), x2.data(), a2.data(), p.newton, s1.data(),
                                 s2.data());
                if constexpr (L::Barrier::kClosedForm)
                    for (std::uint32_t i = 0; i < p.n; ++i) EXPECT_EQ(x2[i], x[i]) << L::kName << " " << i;
            }
        }
        charged.add(loss_y);
        for (std::uint32_t i = 0; i < p.d; ++i) tr.L[i] += loss[i];
    }
    tr.charged = charged.value();
    return tr;
}

/// The comparator point x* = argmin_{x in K} <L, x> (closed forms of §0.3) in ambient coordinates.
std::vector<double> best_point(Geometry g, const std::vector<double>& L) {
    std::vector<double> x(L.size(), 0.0);
    if (g == Geometry::Ball) {
        double s = 0.0;
        for (double z : L) s += z * z;
        for (std::size_t i = 0; i < L.size(); ++i) x[i] = -L[i] / std::sqrt(s);
    } else if (g == Geometry::Cube) {
        for (std::size_t i = 0; i < L.size(); ++i) x[i] = L[i] > 0 ? -1.0 : 1.0;
    } else {
        x[std::min_element(L.begin(), L.end()) - L.begin()] = 1.0;
    }
    return x;
}

template <class L>
typename L::Params params_of(std::uint32_t d, std::uint64_t T, double eps) {
    Problem pb;
    pb.d = d;
    pb.T = T;
    KeyValues kv;
    if constexpr (L::kEpsilon >= 0) {
        kv.num[L::kEpsilon] = eps;
        kv.given[L::kEpsilon] = true;
    }
    return L::resolve(kv, pb);
}

template <class A>
typename A::Params adv_params(std::uint32_t d, std::uint64_t T) {
    Problem pb;
    pb.d = d;
    pb.T = T;
    return A::resolve(KeyValues{}, pb);
}

TEST(As17BloLearners, HarnessReproducesEngine) {
    const std::uint32_t d = 3, T = 300, I = 8;
    const auto r = test::simulate("dp-scrible-ball", {{"epsilon", 2.0}}, "drifting", {}, d, T, I);
    const auto p = params_of<DpScribleBall>(d, T, 2.0);
    const auto ap = adv_params<adversaries::Drifting>(d, T);
    for (std::uint32_t k = 0; k < I; ++k) {
        const Trace tr = run_trace<DpScribleBall, adversaries::Drifting>(p, ap, k, 1, NoiseMode::Fresh);
        const double regret = tr.charged - sim::comparator(Geometry::Ball, tr.L.data(), d);
        EXPECT_NEAR(regret, r.final_regret[k], 1e-9 * std::max(1.0, std::fabs(regret))) << k;
        EXPECT_LE(tr.max_outside, 1e-12);
    }
}

// ---- the ball and the cube on lanes (kernels/learners/scrible_lanes.hpp)
// ------------------------------------

/// Loss rows of the set's loss family around a fixed direction (so that the iterate drifts to the boundary):
/// unit vectors (ball), l1-unit vectors (cube), [0, 1]^d favouring the last expert (simplex).
template <class B>
std::vector<double> random_loss(std::mt19937_64& rng, std::uint32_t d) {
    if constexpr (B::kGeometry == Geometry::Simplex) {
        std::uniform_real_distribution<double> U(0.0, 1.0);
        std::vector<double> l(d);
        for (std::uint32_t i = 0; i < d; ++i) l[i] = i + 1 == d ? 0.2 * U(rng) : U(rng);
        return l; // (ties, the eigenpairs' Helmert branch, come from the centre: the feedback is one number)
    }
    std::vector<double> l = random_direction(rng, d);
    double s2 = 0.0, s1 = 0.0;
    for (double& z : l) {
        z += 0.5 / std::sqrt(static_cast<double>(d));
        s2 += z * z;
        s1 += std::fabs(z);
    }
    for (double& z : l) z /= B::kGeometry == Geometry::Cube ? s1 : std::sqrt(s2);
    return l;
}

/// The lane learner on one lane in double against the scalar ScribleLearner it is written from: every round's
/// charge and the final state's diagnostics equal as doubles, at the centre (x = 0: the ball's e_k
/// eigenpairs) and near the boundary (a large eta), with and without feedback noise, and with lattice noise
/// (`lattice`: noise = "discrete-laplace", docs/spec/model.md §1.8).
template <class B, bool kPrivate, bool kLattice = false>
void expect_lanes_are_the_scalar_learner() {
    using Lanes = learners::ScribleLanes<B, kPrivate>;
    using Scalar = learners::ScribleLearner<B, kPrivate>;
    for (std::uint32_t d : {1u, 2u, 3u, 5u, 17u, 40u})
        for (double eta : {-1.0, 1.0 / d}) { // -1: the automatic eta
            if (B::kGeometry == Geometry::Simplex && d < 2) continue;
            Problem pb;
            pb.d = d;
            pb.T = 600;
            KeyValues kv;
            if constexpr (kPrivate) {
                kv.num[Lanes::kEpsilon] = 0.5;
                kv.given[Lanes::kEpsilon] = true;
                // paper's lambda (half of the default strict one on the ball and cube): with eta = 1/d at d = 1 the
                // strict noise drives the iterate out of double range (NaN on both sides) within 600 rounds, a
                // point check() refuses (eta n B~ > 1); the lanes are compared where the numbers are finite.
                kv.num[Lanes::kCalibration] = 0;
                kv.given[Lanes::kCalibration] = true;
                if (kLattice) {
                    kv.num[Lanes::kNoise] = 1;
                    kv.given[Lanes::kNoise] = true;
                }
            }
            if (eta > 0) {
                kv.num[Lanes::kEta] = eta;
                kv.given[Lanes::kEta] = true;
            }
            const auto p = Lanes::resolve(kv, pb);
            ASSERT_EQ(p.lattice, kLattice) << Lanes::kName << " d=" << d;
            for (std::uint32_t inst : {0u, 5u, 77u}) {
                test::Solo<Scalar> a(p, 11, inst);
                test::Solo<Lanes> b(p, 11, inst);
                std::mt19937_64 rng(d * 1000 + inst);
                for (std::uint64_t t = 1; t <= pb.T; ++t) {
                    const std::vector<double> l = random_loss<B>(rng, d);
                    const auto ra = a.round(t, l.data());
                    const auto rb = b.round(t, l.data());
                    ASSERT_EQ(ra.expected, rb.expected)
                        << Lanes::kName << " d=" << d << " eta=" << eta << " t=" << t;
                }
                const auto da = a.diagnostics(), db = b.diagnostics();
                ASSERT_EQ(da.size(), db.size());
                for (std::size_t j = 0; j < da.size(); ++j)
                    EXPECT_EQ(da[j], db[j]) << Lanes::kName << " d=" << d << " " << Lanes::kDiagnostics[j];
                if (eta > 0 && d <= 3)
                    EXPECT_LT(db[2], 0.05)
                        << Lanes::kName << " d=" << d << ": the iterate never neared the boundary";
            }
        }
}

TEST(ScribleLanes, OneLaneInDoubleIsTheScalarLearnerBitForBit) {
    expect_lanes_are_the_scalar_learner<bar::Ball, false>();
    expect_lanes_are_the_scalar_learner<bar::Ball, true>();
    expect_lanes_are_the_scalar_learner<bar::Cube, false>();
    expect_lanes_are_the_scalar_learner<bar::Cube, true>();
    expect_lanes_are_the_scalar_learner<bar::Simplex, false>();
    expect_lanes_are_the_scalar_learner<bar::Simplex, true>();
    expect_lanes_are_the_scalar_learner<bar::Ball, true, true>();
    expect_lanes_are_the_scalar_learner<bar::Cube, true, true>();
    expect_lanes_are_the_scalar_learner<bar::Simplex, true, true>();
}

// On coordinate lanes the simplex runs its round on one member as a one-lane team (its iterations amplify
// rounding too much for sums in another order): the same regret, realised regret and diagnostics as instance
// lanes, in both precisions; d = 60 (n = 59) and 200 with 20 instances on 2 threads, and d = 4100 with one
// instance, which the 2 threads share (coordinate tiles split between them, host/cpu/cpu_engine_impl.hpp).
TEST(ScribleLanes, TheSimplexGivesTheInstanceLanesBitsOnCoordinateLanes) {
    for (const std::uint32_t d : {60u, 200u, 4100u})
        for (const Precision prec : {Precision::Double, Precision::Float}) {
            test::SimOptions inst, coord;
            inst.precision = coord.precision = prec;
            inst.lanes = "instances";
            coord.lanes = "coordinates";
            const std::uint32_t I = d > 1000 ? 1 : 20;
            const std::uint64_t T = d > 1000 ? 40 : 150;
            for (const bool dp : {false, true}) {
                const char* learner = dp ? "dp-scrible-simplex" : "scrible-simplex";
                const auto run =
                    [&](const test::SimOptions& o) { // (a KeyList is an initializer_list: no variable)
                        return dp ? test::simulate(learner, {{"epsilon", 1.0}}, "bernoulli", {}, d, T, I, 2, 1,
                                                   false, 8, 0, o)
                                  : test::simulate(learner, {}, "bernoulli", {}, d, T, I, 2, 1, false, 8, 0, o);
                    };
                const auto a = run(inst), b = run(coord);
                ASSERT_EQ(a.regret.size(), b.regret.size());
                EXPECT_EQ(a.regret, b.regret) << learner << " d=" << d;
                EXPECT_EQ(a.realized_regret, b.realized_regret) << learner << " d=" << d;
                EXPECT_EQ(a.diagnostics, b.diagnostics) << learner << " d=" << d;
            }
        }
}

// index_and_coin on 16 instance lanes is noise::uniform_index then the first word of next_double on each
// lane's own WordStream -- also for an n that rejects half of all words (2^31 + 1), so that lanes redraw
// different numbers of times, into the stream's second block.
TEST(ScribleLanes, TheExplorationDrawOnLanesIsTheScalarDrawOnEveryLane) {
    using P = simd::Pack<std::uint32_t, 16>;
    int rejections = 0;
    for (std::uint32_t n : {1u, 2u, 3u, 33u, 1000u, 0x80000001u, 0xC0000000u})
        for (std::uint32_t round = 1; round <= 200; ++round) {
            P ids;
            for (int l = 0; l < 16; ++l) ids.set(l, 16 * round + static_cast<std::uint32_t>(l));
            const rng::LaneStream<P> s{9, 2, ids, rng::Purpose::Exploration, 0, round, P(0u)};
            P k, coin;
            learners::scrible_detail::index_and_coin(s, n, k, coin);
            for (int l = 0; l < 16; ++l) {
                rng::WordStream src(
                    learners::InstanceCtx{9, 2, ids[l]}.id(rng::Purpose::Exploration, 0, round, 0));
                rng::WordStream probe = src;
                rejections += static_cast<int>(
                    static_cast<std::uint32_t>(std::uint64_t{probe.next_u32()} * n) < (0u - n) % n);
                ASSERT_EQ(k[l], noise::uniform_index(src, n)) << "n=" << n << " lane " << l;
                ASSERT_EQ(coin[l], src.next_u32()) << "n=" << n << " lane " << l;
            }
        }
    EXPECT_GT(rejections, 1000); // the redraws were exercised
}

// ---- statistical tests ------------------------------------------------------------------------------

/// E[lhat | x] = l' by Monte Carlo over (i_t, s_t), with l' the loss in the barrier's parameters
/// (simplex: l'_i = l_i - l_N). Per coordinate z = (mean - l'_i)/SE; all n decisions together at
/// alpha = 1e-6 (Bonferroni). Wrong estimators computed from the same draws must be rejected.
template <class L>
void check_estimator(std::uint32_t d, const std::vector<double>& point, int M) {
    const auto p = params_of<L>(d, 1u << 20, kInf);
    const std::uint32_t n = p.n;
    std::vector<double> ws(L::state_size(p)), dg(L::kDiagSlots);
    const InstanceCtx c{3, 0, 0};
    L::init_state(p, c, ws.data(), dg.data());
    if (!point.empty())
        L::Barrier::set_point(n, point.data(), L::x_of(p, ws.data()), L::aux_of(p, ws.data()));
    std::mt19937_64 rng(d);
    std::normal_distribution<double> N01;
    std::vector<double> ltil(d);
    for (auto& z : ltil) z = N01(rng); // any fixed vector (l~ = l + Z need not lie in Y)
    std::vector<double> target(n);
    for (std::uint32_t i = 0; i < n; ++i) target[i] = ltil[i] - (n < d ? ltil[n] : 0.0);
    // variants: the estimator, without the factor n, with lambda^{-1/2} instead of lambda^{1/2}
    std::vector<std::vector<LD>> s1(3, std::vector<LD>(n, 0)), s2(3, std::vector<LD>(n, 0));
    double* g = L::g_of(p, ws.data());
    for (int t = 1; t <= M; ++t) {
        const auto pl = L::play(p, c, ws.data(), static_cast<std::uint64_t>(t));
        const double* y = L::y_of(p, ws.data());
        double ct = 0.0;
        for (std::uint32_t i = 0; i < d; ++i) ct += ltil[i] * y[i];
        std::fill(g, g + n, 0.0);
        L::accumulate_estimate(p, ws.data(), ct, pl);
        for (std::uint32_t i = 0; i < n; ++i) {
            const double e[3] = {g[i], g[i] / n, g[i] / pl.lambda_k};
            for (int v = 0; v < 3; ++v) {
                s1[v][i] += e[v];
                s2[v][i] += static_cast<LD>(e[v]) * e[v];
            }
        }
    }
    const double zc = z_two_sided(1e-6 / n);
    for (int v = 0; v < 3; ++v) {
        double worst = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            const LD mean = s1[v][i] / M;
            const LD var = (s2[v][i] / M - mean * mean) * M / (M - 1);
            const double z = static_cast<double>((mean - target[i]) / std::sqrt(var / M));
            worst = std::max(worst, std::fabs(z));
        }
        if (v == 0)
            EXPECT_LT(worst, zc) << L::kName << " d=" << d << ": the SCRiBLe estimator is biased";
        else
            EXPECT_GT(worst, zc) << L::kName << " d=" << d << ": wrong estimator variant " << v
                                 << " not detected";
    }
}

TEST(As17Blo_Stat, EstimatorUnbiased) {
    const int M = 400000;
    check_estimator<ScribleBall>(3, {0.3, -0.5, 0.6}, M); // radial + Householder directions
    check_estimator<ScribleBall>(2, {}, M);               // x = 0: H = 2I
    check_estimator<ScribleCube>(4, {0.9, -0.2, 0.0, -0.7}, M);
    check_estimator<ScribleSimplex>(5, {0.1, 0.4, 0.05, 0.3}, M); // distinct poles (secular roots)
    check_estimator<ScribleSimplex>(5, {}, M);                    // centre: Helmert vectors + last root
    check_estimator<ScribleSimplex>(4, {0.2, 0.2, 0.5}, M);       // a tie pair
}

/// Lemma 4.3: E[sum_t <l_t, y_t> - <l_t, x*>] = E[sum_t <l~_t, y_t> - <l~_t, x*>], x* the true best point.
/// The difference per instance is D = sum_t <Z_t, y_t> - <sum_t Z_t, x*> (mean 0 because Z_t is fresh and
/// independent of y_t). Paired test: |mean D| <= z SE(D) at alpha = 1e-6. Negative control: reusing
/// Z_1 in every round makes y_t depend on Z_t and must be detected.
template <class L, class A>
void check_lemma43(std::uint32_t d, std::uint64_t T, std::uint32_t I, double eps, bool control) {
    const auto p = params_of<L>(d, T, eps);
    const auto ap = adv_params<A>(d, T);
    const double zc = z_two_sided(1e-6);
    for (NoiseMode mode : {NoiseMode::Fresh, NoiseMode::ReuseRoundOne}) {
        if (mode == NoiseMode::ReuseRoundOne && !control) continue;
        std::vector<double> D(I), R(I), Rn(I);
        for (std::uint32_t k = 0; k < I; ++k) {
            const Trace tr = run_trace<L, A>(p, ap, k, 2, mode);
            const std::vector<double> xs = best_point(L::kGeometry, tr.L);
            double zx = 0.0, lx = 0.0;
            for (std::uint32_t i = 0; i < d; ++i) {
                zx += tr.zsum[i] * xs[i];
                lx += tr.L[i] * xs[i];
            }
            D[k] = tr.noise_on_play - zx;
            R[k] = tr.charged - lx;
            Rn[k] = R[k] + D[k];
            EXPECT_LE(tr.max_outside, 1e-12);
        }
        const double m = test::SimResult::mean(D), se = test::SimResult::sem(D);
        if (mode == NoiseMode::Fresh)
            EXPECT_LT(std::fabs(m), zc * se)
                << L::kName << ": E[regret] vs true losses " << test::SimResult::mean(R)
                << " != vs noisy losses " << test::SimResult::mean(Rn);
        else
            EXPECT_GT(std::fabs(m), zc * se) << L::kName << ": reused noise not detected";
    }
}

TEST(As17Blo_Stat, Lemma43Identity) {
    check_lemma43<DpScribleBall, adversaries::Drifting>(3, 512, 2000, 1.0, true);
    check_lemma43<DpScribleCube, adversaries::CubeCoordinate>(3, 512, 1000, 1.0, false);
    check_lemma43<DpScribleSimplex, adversaries::Bernoulli>(4, 256, 1000, 1.0, false);
}

/// Full-information FTRL with the learner's own barrier and step on a realized sequence (seed's shared
/// sequence): x_t = argmin eta <L_{t-1}, x> + R(x), charged <l_t, x_t>. Returns its regret.
template <class B, class A>
double full_info_regret(std::uint32_t d, double eta, const typename A::Params& ap, std::uint32_t seed,
                        std::uint64_t T) {
    const std::uint32_t n = B::params(d);
    const adversaries::SequenceCtx sc{seed, 0, adversaries::kSharedSequence};
    std::vector<double> x(n), aux(n + 2), G(n, 0.0), L(d, 0.0), l(d), s1(d), s2(d);
    B::center(n, x.data(), aux.data());
    bar::NewtonSettings ns;
    sim::CompensatedSum<double> charged;
    for (std::uint64_t t = 1; t <= T; ++t) {
        A::fill(ap, sc, t, l.data());
        double c = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) c += l[i] * x[i];
        if (n < d) c += l[n] * aux[0]; // simplex: the last ambient coordinate
        charged.add(c);
        for (std::uint32_t i = 0; i < d; ++i) L[i] += l[i];
        for (std::uint32_t i = 0; i < n; ++i) G[i] = L[i] - (n < d ? L[n] : 0.0);
        B::ftrl(n, eta, G.data(), x.data(), aux.data(), ns, s1.data(), s2.data());
    }
    return charged.value() - sim::comparator(B::kGeometry, L.data(), d);
}

/// Cube losses with a mean to learn (cube-coordinate's are mean-zero, which makes every learner's
/// expected regret E||L_T||_1): l_t = sigma_t e_{i_t}, i_t uniform, P[sigma_t = +1] = (1 + bias)/2.
struct BiasedCube {
    struct Params {
        std::uint32_t d;
        std::uint64_t T;
        double bias;
    };
    static void fill(const Params& p, const adversaries::SequenceCtx& sc, std::uint64_t t, double* out) {
        rng::WordStream src(adversaries::adversary_stream(sc, adversaries::kSubLoss, t, 0));
        const std::uint32_t i = noise::uniform_index(src, p.d);
        const double u = src.next_double();
        for (std::uint32_t j = 0; j < p.d; ++j) out[j] = 0.0;
        out[i] = u < 0.5 * (1.0 + p.bias) ? 1.0 : -1.0;
    }
};

/// Regret slope in T, with a band derived from the algorithm's regret decomposition and a tolerance
/// derived from the Monte Carlo standard errors.
///
/// Measurement. Horizons T1 < T2, independent runs (different seeds), I instances each. The slope
/// b = ln(Rbar2/Rbar1)/ln(T2/T1) has, by the delta method, SE(b) = sqrt((se1/Rbar1)^2 + (se2/Rbar2)^2) /
/// ln(T2/T1) (se = standard error of the mean regret; the sizes below make se/Rbar ~ 1%, where the delta
/// method is accurate). Tolerance: z SE(b), z = 4.89 (two-sided false-alarm rate 1e-6).
///
/// Prediction. FTRL's regret splits (AHR's proof of Thm D.1) into the bias of FTRL with the barrier on the
/// true losses, R0(T), and the price of bandit feedback P(T) = R(T) - R0(T), whose bound is the stability
/// term eta sum_t E||lhat_t||^2_{x_t,*} = eta n^2 sum_t E[c~_t^2] = K eta(T) T (E c~^2 = O(1) does not
/// grow with t). R0 is computed exactly: full-information FTRL with the learner's barrier and step on the
/// same realized sequence. For positive parts, (a2 + b2)/(a1 + b1) lies between a2/a1 and b2/b1 (mediant
/// inequality), so with P ~ eta T the slope of R lies between s0 = ln(R0(T2)/R0(T1))/ln(T2/T1) and
/// s1 = ln(eta2 T2/(eta1 T1))/ln(T2/T1) (= 1/2 + ln(ln T2/ln T1)/(2 ln(T2/T1)) for eta ~ sqrt(ln T/T): the
/// sqrt(T ln T) of Thm D.1). Before the asymptotic regime P can grow faster than eta T; whatever its
/// slope, b = s0 + [ln(1 + P2/R0(T2)) - ln(1 + P1/R0(T1))]/ln(T2/T1) <= s0 + ln(1 + f2)/ln(T2/T1) =: s0 +
/// delta for P1 >= 0, f2 = P2/R0(T2). The test asserts
///     min(s0, s1) - z SE(b)  <=  b  <=  max(s0, s1) + delta + z SE(b),
/// and separately that f2 <= 0.15 (the bandit learner tracks FTRL's bias; a biased estimator would not).
/// At these horizons s0 is above 1/2 by a log factor (the barrier bias ~ (1/eta) ln(eta c T) has not yet
/// reached its asymptotic sqrt(T ln T)); the band stays below 0.8 and above 0.45, i.e. it excludes linear
/// regret, which is checked.
struct Slope {
    double b, se, s0, s1, f2, delta;
    double r1, r2, r01, r02;
    double lo(double z) const { return std::min(s0, s1) - z * se; }
    double hi(double z) const { return std::max(s0, s1) + delta + z * se; }
};

template <class L>
KeyValues learner_kv(test::KeyList keys) {
    static const auto infos = config::describe_all<learners::AllLearners>("learner");
    return test::key_values(infos, L::kName, keys);
}
template <class A>
typename A::Params adversary_params(const char* kind, test::KeyList keys, std::uint32_t d, std::uint64_t T) {
    static const auto infos = config::describe_all<adversaries::AllAdversaries>("adversary");
    Problem pb;
    pb.d = d;
    pb.T = T;
    return A::resolve(test::key_values(infos, kind, keys), pb);
}

template <class L>
typename L::Params resolve_with(test::KeyList keys, std::uint32_t d, std::uint64_t T) {
    Problem pb;
    pb.d = d;
    pb.T = T;
    return L::resolve(learner_kv<L>(keys), pb);
}

Slope finish_slope(double r1, double se1, double r2, double se2, double eta1, double eta2, double r01,
                   double r02, std::uint64_t T1, std::uint64_t T2) {
    Slope s;
    const double lr = std::log(static_cast<double>(T2) / static_cast<double>(T1));
    s.r1 = r1;
    s.r2 = r2;
    s.r01 = r01;
    s.r02 = r02;
    s.b = std::log(r2 / r1) / lr;
    s.se = std::sqrt(std::pow(se1 / r1, 2) + std::pow(se2 / r2, 2)) / lr;
    s.s0 = std::log(r02 / r01) / lr;
    s.s1 = std::log(eta2 * static_cast<double>(T2) / (eta1 * static_cast<double>(T1))) / lr;
    s.f2 = (r2 - r02) / r02;
    s.delta = std::log1p(std::max(0.0, s.f2)) / lr;
    return s;
}

/// Through the engine (test::simulate), for an adversary of the registry.
template <class L, class A>
Slope measure_slope(test::KeyList keys, const char* kind, test::KeyList akeys, std::uint32_t d,
                    std::uint64_t T1, std::uint64_t T2, std::uint32_t I) {
    const auto a = test::simulate(L::kName, keys, kind, akeys, d, T1, I, 2, /*seed=*/11);
    const auto b = test::simulate(L::kName, keys, kind, akeys, d, T2, I, 2, /*seed=*/12);
    const double eta1 = resolve_with<L>(keys, d, T1).eta, eta2 = resolve_with<L>(keys, d, T2).eta;
    const double r01 =
        full_info_regret<typename L::Barrier, A>(d, eta1, adversary_params<A>(kind, akeys, d, T1), 11, T1);
    const double r02 =
        full_info_regret<typename L::Barrier, A>(d, eta2, adversary_params<A>(kind, akeys, d, T2), 12, T2);
    return finish_slope(a.mean_regret(), a.sem_regret(), b.mean_regret(), b.sem_regret(), eta1, eta2, r01,
                        r02, T1, T2);
}

/// Through the harness (run_trace), for BiasedCube.
template <class L>
Slope measure_slope_cube(std::uint32_t d, double bias, std::uint64_t T1, std::uint64_t T2, std::uint32_t I) {
    double r[2], se[2], eta[2], r0[2];
    const std::uint64_t Ts[2] = {T1, T2};
    for (int j = 0; j < 2; ++j) {
        const auto p = resolve_with<L>({}, d, Ts[j]);
        const BiasedCube::Params ap{d, Ts[j], bias};
        std::vector<double> reg(I);
        for (std::uint32_t k = 0; k < I; ++k) {
            const Trace tr = run_trace<L, BiasedCube>(p, ap, k, 11 + j, NoiseMode::Fresh);
            reg[k] = tr.charged - sim::comparator(Geometry::Cube, tr.L.data(), d);
        }
        r[j] = test::SimResult::mean(reg);
        se[j] = test::SimResult::sem(reg);
        eta[j] = p.eta;
        r0[j] = full_info_regret<typename L::Barrier, BiasedCube>(d, p.eta, ap, 11 + j, Ts[j]);
    }
    return finish_slope(r[0], se[0], r[1], se[1], eta[0], eta[1], r0[0], r0[1], T1, T2);
}

void expect_slope_in_band(const Slope& s, const std::string& what) {
    const double z = z_two_sided(1e-6);
    char msg[512];
    std::snprintf(msg, sizeof msg,
                  "%s: slope %.4f +- %.4f, band [%.4f, %.4f] (s0 = %.4f from R0 %.1f -> %.1f, s1 = %.4f, "
                  "delta = %.4f, f2 = %.3f), R %.1f -> %.1f",
                  what.c_str(), s.b, s.se, s.lo(z), s.hi(z), s.s0, s.r01, s.r02, s.s1, s.delta, s.f2, s.r1,
                  s.r2);
    std::printf("%s\n", msg);
    EXPECT_GT(s.b, s.lo(z)) << msg;
    EXPECT_LT(s.b, s.hi(z)) << msg;
    EXPECT_LT(s.f2, 0.15) << msg;
    EXPECT_LT(s.hi(z), 0.8) << msg; // the test has power: linear regret is outside the band
    EXPECT_GT(s.lo(z), 0.45) << msg;
}

TEST(As17Blo_Stat, RegretSlopeHalf) {
    expect_slope_in_band(
        measure_slope<ScribleBall, adversaries::Drifting>({}, "drifting", {}, 2, 1 << 12, 1 << 16, 200),
        "scrible-ball drifting d=2");
    expect_slope_in_band(measure_slope<ScribleSimplex, adversaries::Bernoulli>(
                             {}, "bernoulli", {{"gap", 0.4}}, 3, 1 << 12, 1 << 15, 200),
                         "scrible-simplex bernoulli d=3 gap 0.4");
    expect_slope_in_band(measure_slope_cube<ScribleCube>(2, 0.5, 1 << 12, 1 << 16, 100),
                         "scrible-cube biased d=2");
    expect_slope_in_band(measure_slope<DpScribleBall, adversaries::Drifting>({{"epsilon", 10.0}}, "drifting",
                                                                             {}, 2, 1 << 12, 1 << 16, 200),
                         "dp-scrible-ball drifting d=2 eps=10");
}

TEST(As17Blo_Stat, FeedbackNoiseIsLaplace) {
    // Z_t(i) ~ Lap(lambda) with strict's (the default) lambda = Delta/eps = 2 ||Y||_1/eps (Lemma 4.2 with the
    // replace-one sensitivity, docs/spec/as17.md §A3): KS against the exact CDF over rounds,
    // coordinates (both members of each Philox pair) and instances, at alpha = 1e-6; the same test must
    // reject the scale off by 5%. Coordinates 2k and 2k+1 share a block: their correlation must vanish.
    const auto p = params_of<DpScribleBall>(5, 1024, 0.5); // lambda = 2 sqrt(5)/0.5
    ASSERT_NEAR(p.lambda, 2 * std::sqrt(5.0) / 0.5, 1e-12);
    std::vector<double> z, even, odd;
    for (std::uint32_t k = 0; k < 40; ++k)
        for (std::uint64_t t = 1; t <= 1024; ++t) {
            const InstanceCtx c{9, 0, k};
            for (std::uint32_t i = 0; i < 5; ++i) z.push_back(DpScribleBall::noise_coordinate(p, c, t, i));
            even.push_back(z[z.size() - 5]);
            odd.push_back(z[z.size() - 4]);
        }
    auto cdf = [](double b) {
        return [b](double x) { return x < 0 ? 0.5 * std::exp(x / b) : 1.0 - 0.5 * std::exp(-x / b); };
    };
    std::sort(z.begin(), z.end());
    EXPECT_GT(test::ks_one_sample_sorted(z, cdf(p.lambda)).p, 1e-6);
    EXPECT_LT(test::ks_one_sample_sorted(z, cdf(1.05 * p.lambda)).p, 1e-6);
    EXPECT_LT(std::fabs(test::pearson(even, odd)) * std::sqrt(static_cast<double>(even.size())),
              z_two_sided(1e-6));
}

TEST(As17Blo_Stat, EventFAtMostOneOverT) {
    // Pr[F] <= 1/T (Fact C.1 + union bound): over I instances the count of F is Binomial(I, q), q <= 1/T;
    // reject if count exceeds the 1 - 1e-6 quantile of Binomial(I, 1/T) (Poisson tail, mean I/T = 1).
    const std::uint64_t T = 1024;
    const std::uint32_t I = 1024;
    const auto r = test::simulate("dp-scrible-ball", {{"epsilon", 1.0}}, "drifting", {}, 4, T, I);
    double count = 0.0;
    for (std::uint32_t k = 0; k < I; ++k) count += r.diagnostic("event_F", k);
    EXPECT_LE(count, 10.0); // P[Poisson(1) > 10] < 1e-8
    // and the threshold is in the right place: max_t ||Z_t||_inf is of order lambda ln(d T)
    const double lam = r.privacy.noise_scale;
    double mx = 0.0;
    for (std::uint32_t k = 0; k < I; ++k) mx = std::max(mx, r.diagnostic("max_noise_inf", k));
    EXPECT_GT(mx, lam * std::log(4.0 * T) * 0.5);
    EXPECT_LT(mx, lam * std::log(4.0 * T * T) * 2.0);
}

// ---- slow versions ------------------------------------------------------------------------------------

TEST(As17Blo_Slow, RegretSlopeHalfAllSets) {
    expect_slope_in_band(
        measure_slope<ScribleBall, adversaries::Drifting>({}, "drifting", {}, 4, 1 << 14, 1 << 18, 400),
        "scrible-ball drifting d=4");
    expect_slope_in_band(measure_slope<ScribleSimplex, adversaries::Bernoulli>(
                             {}, "bernoulli", {{"gap", 0.2}}, 5, 1 << 14, 1 << 17, 200),
                         "scrible-simplex bernoulli d=5 gap 0.2");
    expect_slope_in_band(measure_slope_cube<ScribleCube>(4, 0.5, 1 << 14, 1 << 18, 200),
                         "scrible-cube biased d=4");
    expect_slope_in_band(measure_slope<DpScribleBall, adversaries::Drifting>({{"epsilon", 10.0}}, "drifting",
                                                                             {}, 2, 1 << 14, 1 << 18, 400),
                         "dp-scrible-ball drifting d=2 eps=10");
}

TEST(As17Blo_Slow, Lemma43IdentityLarge) {
    check_lemma43<DpScribleBall, adversaries::UnitVectors>(4, 4096, 4000, 0.5, true);
    check_lemma43<DpScribleCube, adversaries::CubeCoordinate>(4, 4096, 4000, 0.5, true);
    check_lemma43<DpScribleSimplex, adversaries::Switching>(4, 2048, 4000, 0.5, true);
}

} // namespace
} // namespace dpr
