// AboveThreshold on a lattice (kernels/mechanisms/lattice_above_threshold.hpp; docs/spec/model.md §1.10): the plan
// (the raise, K, delta, the refusals), the exactness of what it compares, the privacy theorem checked on the exact
// law of the halting index (computed from the sampler's thresholds over its whole support) for random and adversarial
// neighbouring query streams, with a planted instance without threshold noise that the same check rejects, and the
// draws against that exact law (chi-square).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../noise/stat_tests.hpp"
#include "mechanisms/exact_laws.hpp"
#include "kernels/core/team.hpp"
#include "kernels/mechanisms/lattice_above_threshold.hpp"

namespace dpr {
namespace {

using mech::LatticeSvt;

/// The sampler's exact law P^(n), n in [-2^17, 2^17], as pmf[n + 2^17] (from the thresholds in use).
std::vector<long double> exact_pmf(const noise::DlapTable& tab) {
    const test::ExactLaw law(tab);
    const std::int64_t M = noise::kDlapMax;
    std::vector<long double> pmf(2 * M + 1);
    for (std::int64_t n = -M; n <= M; ++n) pmf[n + M] = law(n);
    return pmf;
}

/// The exact law of the halting index (k - 1 for a halt at query k, m for none) of one instance with threshold tau and
/// computed queries q (what lattice_svt_threshold and lattice_svt_noisy_query compare). threshold_noise = false: the
/// planted variant rho = floor(tau / Gamma) Gamma.
std::vector<long double> halting_law(const LatticeSvt& s, const std::vector<long double>& pmf, double tau,
                                     const std::vector<double>& q, bool threshold_noise = true) {
    const std::int64_t M = noise::kDlapMax;
    // upper[j] = P^(n >= j - M) for j in [0, 2M + 2): the query's tail.
    std::vector<long double> upper(2 * M + 2, 0.0L);
    for (std::int64_t j = 2 * M; j >= 0; --j) upper[j] = upper[j + 1] + pmf[j];
    auto fires = [&](std::int64_t rho, std::int64_t f) { // P(f + 2 n > rho) = P(n >= floor((rho - f) / 2) + 1)
        const std::int64_t d = rho - f;
        const std::int64_t need = (d >= 0 ? d / 2 : -((-d + 1) / 2)) + 1;
        if (need <= -M) return 1.0L;
        if (need > M) return 0.0L;
        return upper[need + M];
    };
    const double g = s.tab.gamma;
    const std::int64_t t0 = static_cast<std::int64_t>(std::floor(tau / g));
    std::vector<std::int64_t> f(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) f[i] = static_cast<std::int64_t>(std::floor(q[i] / g));
    std::vector<long double> law(q.size() + 1, 0.0L);
    for (std::int64_t n = -M; n <= M; ++n) {
        const long double pn = threshold_noise ? pmf[n + M] : (n == 0 ? 1.0L : 0.0L);
        if (pn == 0.0L) continue;
        long double alive = pn;
        for (std::size_t i = 0; i < q.size(); ++i) {
            const long double pf = fires(t0 + n, f[i]);
            law[i] += alive * pf;
            alive *= 1.0L - pf;
        }
        law[q.size()] += alive;
    }
    return law;
}

/// max over outputs of ln(P(o) / P'(o)) for outputs of probability above `floor_p` under P (delta-sized masses aside).
long double worst_log_ratio(const std::vector<long double>& P, const std::vector<long double>& Q, long double floor_p) {
    long double w = 0;
    for (std::size_t i = 0; i < P.size(); ++i)
        if (P[i] > floor_p) w = std::max(w, std::log(P[i] / Q[i]));
    return w;
}

using test::hockey_stick;

TEST(LatticeSvt, PlanMeetsTheContinuousEpsilonForAtMostOneLatticeStepMoreNoise) {
    for (double eps : {0.05, 1.0, 10.0, 40.0})
        for (double sens : {1.0, 2.0, 0.37, 3.0})
            for (double err : {0.0, 1e-9}) {
                const mech::SvtScales sc = mech::svt_scales(eps, sens);
                const LatticeSvt s = mech::lattice_svt(sc, false, sens, err, 4096, 1e6);
                SCOPED_TRACE(testing::Message() << "eps " << eps << " sens " << sens << " err " << err);
                ASSERT_EQ(s.obstacle, nullptr) << s.obstacle;
                EXPECT_LE(s.epsilon, eps);
                EXPECT_GE(s.threshold_scale, sc.threshold);
                // The raise: K Gamma / Delta (1 when the computed queries are exact and Delta / Gamma is a whole
                // number of steps, as here; one step more with an error bound) times 1 + O(1/t).
                EXPECT_LE(s.threshold_scale, sc.threshold * (s.K * s.tab.gamma / sens) * (1.0 + 2.0 / 1024));
                // A power-of-two Delta is a whole number of steps: exact queries cost only the thresholds' rounding.
                if (err == 0 && (sens == 1.0 || sens == 2.0)) EXPECT_LE(s.threshold_scale, sc.threshold * (1.0 + 1e-5));
                EXPECT_GE(s.tab.t, 1024.0);
                EXPECT_LT(s.tab.t, 2048.0);
                EXPECT_GE(s.K, (sens + 2 * err) / s.tab.gamma);
                EXPECT_LE(s.K, (sens + 2 * err) / s.tab.gamma + 1);
                EXPECT_LE(s.delta, 1e-15);
                // A given scale is kept, and its epsilon reported: the continuous scale's is above eps.
                const LatticeSvt kept = mech::lattice_svt(sc, true, sens, err, 4096, 1e6);
                EXPECT_EQ(kept.threshold_scale, sc.threshold);
                EXPECT_GT(kept.epsilon, eps);
            }
}

TEST(LatticeSvt, RefusesWhereItsArithmeticOrItsTailDoNotHold) {
    EXPECT_NE(mech::lattice_svt(mech::SvtScales{}, false, 1.0, 0.0, 10, 10).obstacle, nullptr); // eps = inf
    EXPECT_NE(mech::lattice_svt(mech::SvtScales{1.0, 3.0}, false, 1.0, 0.0, 10, 10).obstacle, nullptr);
    const LatticeSvt huge = mech::lattice_svt(mech::svt_scales(1000.0, 1.0), false, 1.0, 0.0, 10, 10);
    ASSERT_NE(huge.obstacle, nullptr);
    EXPECT_NE(std::string(huge.obstacle).find("delta above 1e-15"), std::string::npos) << huge.obstacle;
    const LatticeSvt big = mech::lattice_svt(mech::svt_scales(1.0, 1.0), false, 1.0, 0.0, 10, 1e300);
    ASSERT_NE(big.obstacle, nullptr);
    EXPECT_NE(std::string(big.obstacle).find("2^51"), std::string::npos) << big.obstacle;
}

TEST(LatticeSvt, LatticeFloorIsTheFloorOnEveryValueItAccepts) {
    std::mt19937_64 rng(13);
    for (double gamma : {0x1.0p-10, 0x1.0p-3, 1.0, 4.0}) {
        std::vector<double> ys = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0x1.0p51 - 1, -0x1.0p51 + 1, 0x1.0p50 + 0.5,
                                  -0x1.0p50 - 0.5, 1e-300, -1e-300};
        for (int k = 0; k < 200000; ++k) {
            const double mag = std::ldexp(1.0, static_cast<int>(rng() % 52));
            ys.push_back(std::uniform_real_distribution<double>(-mag, mag)(rng));
            ys.push_back(std::round(ys.back()) + (k % 2 ? 0.5 : 0.0)); // ties and integers
        }
        for (double y : ys) {
            if (!(std::fabs(y) < 0x1.0p51)) continue;
            const double x = y * gamma;
            ASSERT_EQ(mech::lattice_floor(x, gamma), std::floor(x / gamma) * gamma) << "x " << x << " gamma " << gamma;
        }
    }
}

TEST(LatticeSvt, ItComparesLatticePointsExactly) {
    const LatticeSvt s = mech::lattice_svt(mech::svt_scales(0.7, 1.0), false, 1.0, 0.0, 100, 1e6);
    ASSERT_EQ(s.obstacle, nullptr);
    const SerialTeam<double> team{RngKey{9, 0}, 4};
    for (std::uint32_t r = 1; r < 500; ++r) {
        const double rho = mech::lattice_svt_threshold(team, s, 123.456, r, 0u);
        const double q = mech::lattice_svt_noisy_query(team, s, 100.0 + r * 0.3719, r, 0u);
        EXPECT_EQ(std::fmod(rho, s.tab.gamma), 0.0);
        EXPECT_EQ(std::fmod(q, 2 * s.tab.gamma), std::fmod(std::floor((100.0 + r * 0.3719) / s.tab.gamma) * s.tab.gamma, 2 * s.tab.gamma));
    }
    EXPECT_EQ(mech::lattice_floor(-0.5 * s.tab.gamma, s.tab.gamma), -s.tab.gamma);
    EXPECT_EQ(mech::lattice_floor(3.0 * s.tab.gamma, s.tab.gamma), 3.0 * s.tab.gamma);
    EXPECT_EQ(mech::lattice_floor(std::nextafter(3.0 * s.tab.gamma, 0.0), s.tab.gamma), 2.0 * s.tab.gamma);
}

TEST(LatticeSvt, HaltingLawsOfNeighboursStayWithinEpsilonAndThePlantedVariantDoesNot) {
    const double eps = 1.0, sens = 1.0, err = 1e-3;
    const LatticeSvt s = mech::lattice_svt(mech::svt_scales(eps, sens), false, sens, err, 64, 1e6);
    ASSERT_EQ(s.obstacle, nullptr);
    const auto pmf = exact_pmf(s.tab);
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    const double tau = 10.0, b = s.threshold_scale;
    long double worst = 0;
    for (int rep = 0; rep < 60; ++rep) {
        const std::size_t m = 1 + rep % 12;
        std::vector<double> q(m), qn(m);
        for (std::size_t i = 0; i < m; ++i) {
            q[i] = tau + b * 3 * unit(rng);
            // adversarial moves: everything up, everything down, the last against the rest, or random
            const double dir = rep % 4 == 0 ? 1 : rep % 4 == 1 ? -1 : rep % 4 == 2 ? (i + 1 == m ? -1 : 1) : unit(rng);
            qn[i] = q[i] + sens * dir + err * unit(rng);
            q[i] += err * unit(rng);
        }
        const auto P = halting_law(s, pmf, tau, q), Q = halting_law(s, pmf, tau, qn);
        worst = std::max({worst, worst_log_ratio(P, Q, 1e-12L), worst_log_ratio(Q, P, 1e-12L)});
        // Every output, however improbable: within (eps, delta).
        EXPECT_LE(hockey_stick(P, Q, s.epsilon), s.delta) << "rep " << rep;
        EXPECT_LE(hockey_stick(Q, P, s.epsilon), s.delta) << "rep " << rep;
    }
    EXPECT_LE(worst, s.epsilon);
    // The check has power: these streams reach 0.995 eps (seed 31), so an accounting with half the sensitivity, or
    // either noise at half its scale, would fail it.
    EXPECT_GE(worst, 0.9L * s.epsilon);
    // 60 queries at the threshold, each moved up by Delta: without threshold noise the chance of never firing moves
    // by a factor per query, far past e^eps; with it, within eps.
    const std::vector<double> at(60, tau), up(60, tau + sens);
    const auto P = halting_law(s, pmf, tau, at), Q = halting_law(s, pmf, tau, up);
    EXPECT_LE(std::max(worst_log_ratio(P, Q, 1e-12L), worst_log_ratio(Q, P, 1e-12L)), s.epsilon);
    const auto Pp = halting_law(s, pmf, tau, at, false), Qp = halting_law(s, pmf, tau, up, false);
    EXPECT_GT(std::max(worst_log_ratio(Pp, Qp, 1e-12L), worst_log_ratio(Qp, Pp, 1e-12L)), 2.0L * s.epsilon);
}

TEST(LatticeSvt_Stat, HaltsFollowTheExactLawAtAlpha1e6) {
    const LatticeSvt s = mech::lattice_svt(mech::svt_scales(2.0, 1.0), false, 1.0, 0.0, 8, 1e6);
    ASSERT_EQ(s.obstacle, nullptr);
    const double tau = 5.0;
    const std::vector<double> q = {4.0, 4.6, 5.1, 5.3};
    const auto law = halting_law(s, exact_pmf(s.tab), tau, q);
    std::vector<std::uint64_t> counts(q.size() + 1, 0);
    for (std::uint32_t inst = 0; inst < 200000; ++inst) {
        const SerialTeam<double> team{RngKey{77, 0}, inst};
        const double rho = mech::lattice_svt_threshold(team, s, tau, 1, 0u);
        std::size_t k = q.size();
        for (std::size_t i = 0; i < q.size(); ++i)
            if (mech::lattice_svt_noisy_query(team, s, q[i], 1 + i, 0u) > rho) {
                k = i;
                break;
            }
        ++counts[k];
    }
    const auto r = test::chi_square_gof(counts, std::vector<double>(law.begin(), law.end()));
    EXPECT_GT(r.p, test::kAlpha) << "chi2 " << r.stat << " on " << r.dof << " dof";
}

} // namespace
} // namespace dpr
