// Discrete Gaussian lattice noise (kernels/noise/discrete_gaussian.hpp, kernels/mechanisms/lattice_gaussian.hpp;
// docs/spec/model.md §1.11): the table and the deterministic exponential, the acceptance's exact probability, the
// sampler's exact law against N_Z(0, s^2), the draws against that law (chi-square, with a meta-test that sees a 2%
// scale error), lanes against the scalar draw, and the accounting three ways: its Renyi bound against the exact Renyi
// divergence of the rounded mechanism (small s, brute force), its conversion against the exact Gaussian curve, and
// the reported (eps, delta) against the hockey-stick divergence of the implemented law itself.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "host/simd/pack.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/lattice_gaussian.hpp"
#include "kernels/noise/discrete_gaussian.hpp"
#include "kernels/rng/lanes.hpp"
#include "mechanisms/exact_laws.hpp"
#include "noise/stat_tests.hpp"

using namespace dpr;

namespace {

const double kSigmas[] = {1.0, 3.7, 1024.0 * 1.999, 0.02, 123456.0};

/// A node sigma's two tables: the lattice's discrete Laplace (the proposal) and the acceptance's constants.
struct Tables {
    noise::DlapTable lat;
    noise::DgaussTable g;
    explicit Tables(double sigma) : lat(mech::dlap_table(sigma)), g(mech::dgauss_table(lat)) {}
    mech::DgaussLaw law() const { return mech::dgauss_law(lat, g); }
};

double draw_scalar(const Tables& tab, std::uint32_t seed, std::uint32_t e) {
    return noise::dgauss_draw<double>(rng::LaneStream<std::uint32_t>{seed, 0u, 0u, rng::Purpose::Test, 0u, 0u, e},
                                      tab.lat, tab.g);
}

/// The exact law P^(n), n in [-last, last], as a vector indexed n + last.
std::vector<long double> exact_law(const mech::DgaussLaw& law) {
    const std::size_t last = law.tail.size() - 1;
    std::vector<long double> p(2 * last + 1);
    for (std::size_t n = 0; n <= last; ++n) {
        const long double above = n == 0 ? 1.0L : static_cast<long double>(law.tail[n - 1]);
        const long double pn = (above - law.tail[n]) / (n == 0 ? 1.0L : 2.0L);
        p[last + n] = p[last - n] = pn;
    }
    return p;
}

} // namespace

TEST(DiscreteGaussian, ScaleIsInRangeAndTheCorrectionsAreTiny) {
    for (double sigma : kSigmas) {
        const Tables tab(sigma);
        EXPECT_GE(tab.lat.t, 1024.0);
        EXPECT_LT(tab.lat.t, 2048.0);
        for (std::uint32_t i = 0; i < noise::kDlapDigits; ++i)
            for (int b = 0; b < 2; ++b) EXPECT_LT(std::fabs(tab.g.corr[b][i] - 1.0), 0x1.0p-28) << i;
        double amax = 0.0;
        for (std::uint32_t n = 0; n < 40000; ++n) {
            const double a = mech::dgauss_accept_of(tab.lat, tab.g, n);
            ASSERT_GE(a, 0.0);
            ASSERT_LE(a, 1.0);
            amax = std::max(amax, a);
        }
        EXPECT_GT(amax, 1.0 - 1e-7) << "a peaks at |y| = s, where it is c R ~ 1";
    }
}

TEST(DiscreteGaussian, DeterministicExponentialIsAccurate) {
    for (double g = 0.0; g <= noise::kDgaussExponentMax; g += 0.0137) {
        const long double exact = std::exp(-static_cast<long double>(g));
        EXPECT_LT(std::fabs(noise::exp_neg_det(g) / exact - 1.0L), 1e-13L) << g;
    }
    EXPECT_EQ(noise::exp_neg_det(0.0), 1.0);
}

TEST(DiscreteGaussian, AcceptanceIsBelowItsValueWithTheExactProbability) {
    // For a in (0, 1), W = floor(a 2^128) (exact 128-bit arithmetic) split into four words: W - 1 is below a, W is below
    // a iff a 2^128 is not an integer, W + 1 is not: P(U < a) = ceil(a 2^128) / 2^128.
    using u128 = unsigned __int128;
    std::mt19937_64 gen(5);
    auto words_of = [](u128 v, std::uint32_t* w) {
        for (int k = 0; k < 4; ++k) w[k] = static_cast<std::uint32_t>(v >> (32 * (3 - k)));
    };
    int integers = 0, fractions = 0;
    for (int it = 0; it < 3000; ++it) {
        double a = std::ldexp(static_cast<double>(gen() >> 11), -53);
        if (it % 3 == 1) a = std::ldexp(a, -static_cast<int>(gen() % 120)); // tiny values use the lower words
        if (!(a > 0.0)) continue;
        int e = 0;
        const double fr = std::frexp(a, &e);
        const u128 m = static_cast<u128>(std::ldexp(fr, 53)); // a = m 2^(e - 53), m < 2^53
        const int shift = e + 75;                              // a 2^128 = m 2^shift
        const u128 W = shift >= 0 ? m << shift : m >> -shift;
        const bool integer = shift >= 0 || (m & ((static_cast<u128>(1) << -shift) - 1)) == 0;
        (integer ? integers : fractions)++;
        std::uint32_t w[4];
        if (W >= 1) {
            words_of(W - 1, w);
            EXPECT_TRUE(noise::uniform_below(w, a)) << a;
        }
        words_of(W, w);
        EXPECT_EQ(static_cast<bool>(noise::uniform_below(w, a)), !integer) << a;
        words_of(W + 1, w);
        EXPECT_FALSE(noise::uniform_below(w, a)) << a;
        const long double expect = std::ldexp(static_cast<long double>(W + (integer ? 0 : 1)), -128);
        EXPECT_EQ(mech::dgauss_accept_probability(a), expect) << a;
    }
    EXPECT_GT(integers, 100);
    EXPECT_GT(fractions, 100);
    const std::uint32_t ones[4] = {~0u, ~0u, ~0u, ~0u};
    EXPECT_TRUE(noise::uniform_below(ones, 1.0)) << "a = 1 always accepts";
    const std::uint32_t zeros[4] = {0u, 0u, 0u, 0u};
    EXPECT_FALSE(noise::uniform_below(zeros, 0.0)) << "a = 0 never accepts";
}

TEST(DiscreteGaussian, ExactLawIsTheDiscreteGaussianOnTheCore) {
    for (double sigma : kSigmas) {
        const Tables tab(sigma);
        const mech::DgaussLaw law = tab.law();
        const std::size_t core = static_cast<std::size_t>(9.5 * tab.lat.t);
        EXPECT_LT(law.eta[core], 1e-12) << sigma;
        EXPECT_LT(law.eta[static_cast<std::size_t>(12.0 * tab.lat.t)], 1e-11) << sigma;
        EXPECT_NEAR(law.accept, 0.7601734, 1e-6) << "CKS20 Algorithm 3's acceptance at t = s";
        EXPECT_LT(law.fallback, 1e-19);
        EXPECT_NEAR(law.variance / (tab.lat.t * tab.lat.t), 1.0, 1e-6);
        // The tail beyond 9.5 s: the ideal's 2 Phi(-9.5) ~ 2.1e-21, to the precision of the law.
        EXPECT_NEAR(law.tail[core] / 2.1e-21, 1.0, 0.05) << sigma;
        // The law sums to one.
        long double total = 0.0L;
        for (long double p : exact_law(law)) total += p;
        EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-15);
    }
}

TEST(DiscreteGaussian_Stat, DrawsFollowTheExactLawAndTheTestSeesATwoPercentScaleError) {
    const Tables tab(3.7);
    constexpr std::uint32_t n = 400000;
    std::map<std::int64_t, std::uint64_t> counts;
    for (std::uint32_t e = 0; e < n; ++e) {
        const double v = draw_scalar(tab, 11u, e);
        const double k = v / tab.lat.gamma;
        ASSERT_EQ(k, std::rint(k)) << "a draw off the lattice";
        ASSERT_EQ(static_cast<double>(static_cast<float>(v)), v) << "a draw not exact in float";
        ++counts[static_cast<std::int64_t>(k)];
    }
    // Bins of width s/4 over [-4 s, 4 s] plus the two tails, against the exact law of a table at scale sigma.
    auto test_against = [&](double sigma) {
        const std::vector<long double> p = exact_law(Tables(sigma).law());
        const std::int64_t last = static_cast<std::int64_t>(p.size() / 2);
        auto mass = [&](std::int64_t lo, std::int64_t hi) {
            long double m = 0.0L;
            for (std::int64_t k = std::max(lo, -last); k <= std::min(hi, last); ++k) m += p[k + last];
            return static_cast<double>(m);
        };
        const std::int64_t w = static_cast<std::int64_t>(tab.lat.t / 4), lim = 16 * w;
        return test::chi_square_integer_cells(counts, w, lim, mass, mass(-last, -lim - 1), mass(lim, last));
    };
    EXPECT_GT(test_against(3.7), test::kAlpha);
    EXPECT_LT(test_against(3.7 * 1.02), test::kAlpha);
    EXPECT_LT(test_against(3.7 * 0.98), test::kAlpha);
}

TEST(DiscreteGaussian, LanesDrawWhatEachScalarStreamDraws) {
    // Eight lanes of elements in float and double: each lane equals the scalar draw of its element, whatever the
    // other lanes needed (the loop runs until every lane accepted).
    using U = simd::Pack<std::uint32_t, 8>;
    using F = simd::Pack<float, 8>;
    using D = simd::Pack<double, 8>;
    const Tables tab(0.37);
    for (std::uint32_t base = 0; base < 4000; base += 8) {
        alignas(64) std::uint32_t el[8];
        for (int l = 0; l < 8; ++l) el[l] = base + static_cast<std::uint32_t>(l);
        const rng::LaneStream<U> s{3u, 1u, U(0u), rng::Purpose::Test, 0u, 0u, U::load(el)};
        const F vf = noise::dgauss_draw<F>(s, tab.lat, tab.g);
        const D vd = noise::dgauss_draw<D>(s, tab.lat, tab.g);
        for (int l = 0; l < 8; ++l) {
            const double scalar =
                noise::dgauss_draw<double>(rng::LaneStream<std::uint32_t>{3u, 1u, 0u, rng::Purpose::Test, 0u, 0u, el[l]}, tab.lat, tab.g);
            ASSERT_EQ(vd[l], scalar) << "element " << el[l];
            ASSERT_EQ(static_cast<double>(vf[l]), scalar) << "element " << el[l];
        }
    }
}

namespace {

/// N_Z(0, s^2) on [-R, R] (long double, normalised there; R = 14 s leaves less than 1e-40 out).
std::vector<long double> ideal(double s, std::int64_t R) {
    std::vector<long double> p(2 * R + 1);
    long double z = 0.0L;
    for (std::int64_t n = -R; n <= R; ++n) z += p[n + R] = std::exp(-(long double)n * n / (2.0L * s * s));
    for (auto& v : p) v /= z;
    return p;
}

std::vector<long double> convolve(const std::vector<long double>& a, const std::vector<long double>& b) {
    std::vector<long double> c(a.size() + b.size() - 1, 0.0L);
    for (std::size_t i = 0; i < a.size(); ++i)
        for (std::size_t j = 0; j < b.size(); ++j) c[i + j] += a[i] * b[j];
    return c;
}

/// The law of the h' released nodes' sum (a sufficient statistic for the shift: the likelihood ratio of any two
/// shifts, and of mixtures of them, is a function of it) for a coordinate x rounded at random: the mixture over
/// r in {floor x, floor x + 1} of (h' N_Z(0, s^2)) shifted by h' r, on a common grid offset by `off`.
std::vector<long double> rounded_release(const std::vector<long double>& sum_law, double x, std::uint32_t hp,
                                         std::int64_t off, std::size_t size) {
    std::vector<long double> out(size, 0.0L);
    const double fl = std::floor(x), f = x - fl;
    for (int up = 0; up < 2; ++up) {
        const long double w = up ? f : 1.0 - f;
        if (w == 0.0L) continue;
        const std::int64_t shift = static_cast<std::int64_t>(hp) * (static_cast<std::int64_t>(fl) + up) + off;
        for (std::size_t i = 0; i < sum_law.size(); ++i) out[i + shift] += w * sum_law[i];
    }
    return out;
}

long double renyi(const std::vector<long double>& P, const std::vector<long double>& Q, double alpha) {
    long double s = 0.0L; // over the common support (the arrays stop at 14 s: what they leave out is below 1e-40)
    for (std::size_t i = 0; i < P.size(); ++i)
        if (P[i] > 0.0L && Q[i] > 0.0L) s += std::pow(P[i], (long double)alpha) * std::pow(Q[i], 1.0L - (long double)alpha);
    return std::log(s) / (alpha - 1.0);
}

} // namespace

namespace {

/// For random neighbours (d coordinates, each at a random x and moved by a random delta, small or large), the exact
/// (alpha - 1) D_alpha of the rounded mechanism with exact N_Z(0, s^2) nodes (brute force, per coordinate, summed: the
/// coordinates are independent) against `bound` (a Renyi epsilon, i.e. divided by alpha - 1); returns the largest
/// ratio exact / (alpha h' D_2^2 / (2 s^2)), the continuous Gaussian's value.
using RenyiBound = std::function<double(double alpha, double d1, double d2, double dinf, double coords)>;

double check_renyi_bounds(double s, std::uint32_t hp, std::uint64_t seed, const std::vector<RenyiBound>& bounds,
                          std::vector<bool>& held) {
    held.assign(bounds.size(), true);
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> U(0.0, 1.0);
    const std::int64_t R = static_cast<std::int64_t>(std::ceil(14 * s));
    std::vector<long double> sum_law = ideal(s, R);
    for (std::uint32_t j = 1; j < hp; ++j) sum_law = convolve(sum_law, ideal(s, R));
    double worst_ratio = 0.0;
    const double alphas[4] = {1.5, 2.0, 5.0, 20.0};
    for (int trial = 0; trial < 40; ++trial) {
        const std::uint32_t d = 1 + trial % 3;
        double d1 = 0, d2sq = 0, dinf = 0;
        std::vector<long double> exact(4, 0.0L);
        for (std::uint32_t c = 0; c < d; ++c) {
            const double x = 10.0 * U(gen);
            const double delta = (trial % 2 ? 0.05 : 2.5) * (U(gen) - 0.5) * 2.0; // small and large moves
            d1 += std::fabs(delta), d2sq += delta * delta, dinf = std::max(dinf, std::fabs(delta));
            const std::int64_t off = 3 * static_cast<std::int64_t>(hp);
            const std::size_t size = sum_law.size() + static_cast<std::size_t>(hp) * 30 + 8;
            const auto P = rounded_release(sum_law, x + 5.0, hp, off, size);
            const auto Q = rounded_release(sum_law, x + 5.0 + delta, hp, off, size);
            for (int a = 0; a < 4; ++a) exact[a] += (alphas[a] - 1.0) * renyi(P, Q, alphas[a]);
        }
        for (int a = 0; a < 4; ++a) {
            for (std::size_t k = 0; k < bounds.size(); ++k) {
                const double b = (alphas[a] - 1.0) * bounds[k](alphas[a], d1, std::sqrt(d2sq), dinf, d);
                if (!(static_cast<double>(exact[a]) <= b * (1 + 1e-9) + 1e-15)) held[k] = false;
            }
            const double lead = alphas[a] * (alphas[a] - 1.0) * hp * d2sq / (2 * s * s);
            worst_ratio = std::max(worst_ratio, static_cast<double>(exact[a]) / lead);
        }
    }
    return worst_ratio;
}

} // namespace

TEST(DiscreteGaussian, RenyiBoundsHoldForTheRoundedMechanism) {
    // Both bounds of the accounting against the exact Renyi divergence of the randomised-rounding mechanism with exact
    // discrete Gaussian nodes. The coupling bound at small s, where the rounding matters (the exact divergence exceeds
    // the continuous Gaussian's alpha h' D_2^2 / (2 s^2) by far); the tilting bound at s >= 8, where the excess is
    // small. In both, the continuous value alone fails (the remainder is needed), and so does the tilting bound with
    // a tenth of its remainder (the test sees a remainder too small, not only a missing one).
    std::vector<bool> held;
    for (double s : {1.5, 3.0}) {
        for (std::uint32_t hp : {1u, 3u}) {
            const auto lead = [&](double al, double, double d2, double, double) { return al * hp * d2 * d2 / (2 * s * s); };
            const double worst = check_renyi_bounds(s, hp, 17, {[&](double al, double d1, double d2, double di, double d) {
                return mech::dgauss_renyi_coupling(al, s, hp, d1, d2, di, d);
            }, lead}, held);
            EXPECT_TRUE(held[0]) << "coupling bound, s " << s << " h' " << hp;
            EXPECT_FALSE(held[1]) << "the continuous value alone, s " << s << " h' " << hp;
            EXPECT_GT(worst, 1.05) << "the rounding adds divergence at s " << s;
        }
    }
    for (double s : {8.0, 32.0, 64.0}) {
        for (std::uint32_t hp : {1u, 3u}) {
            const auto tilt = [&](double al, double d1, double d2, double di, double d) {
                return mech::dgauss_renyi_tilt(al, s, hp, d1, d2, di, d);
            };
            const auto lead = [&](double al, double, double d2, double, double) { return al * hp * d2 * d2 / (2 * s * s); };
            const auto tenth = [&](double al, double d1, double d2, double di, double d) {
                const double l = lead(al, d1, d2, di, d);
                return l + 0.1 * (tilt(al, d1, d2, di, d) - l);
            };
            check_renyi_bounds(s, hp, 23, {tilt, lead, tenth}, held);
            EXPECT_TRUE(held[0]) << "tilting bound, s " << s << " h' " << hp;
            EXPECT_FALSE(held[1]) << "the continuous value alone, s " << s << " h' " << hp;
            if (s >= 32.0) // at s = 8 the remainder's constants are loose enough that a tenth of it still holds
                EXPECT_FALSE(held[2]) << "a tenth of the remainder, s " << s << " h' " << hp;
        }
    }
    // Near the continuous value where the engine runs it (s >= 1024), for a large move and for many small ones.
    const double s = 1024.0;
    for (std::uint32_t hp : {1u, 10u, 32u}) {
        const double big = mech::dgauss_renyi_tilt(5.0, s, hp, 300.0, 300.0, 300.0, 1.0);
        EXPECT_LT(big, 5.0 * hp * 300.0 * 300.0 / (2 * s * s) * 1.001) << hp;
        const double d = 1e6; // a million coordinates each moved by 1/4 of a lattice step
        const double many = mech::dgauss_renyi_tilt(5.0, s, hp, d / 4, std::sqrt(d) / 4, 0.25, d);
        EXPECT_LT(many, 5.0 * hp * d / 16 / (2 * s * s) * 1.01) << hp;
        EXPECT_LT(many, mech::dgauss_renyi_coupling(5.0, s, hp, d / 4, std::sqrt(d) / 4, 0.25, d) / 4) << hp;
    }
}

using test::gaussian_mechanism_delta;
using test::gaussian_mechanism_epsilon;

TEST(DiscreteGaussian, ConversionIsNeverBelowTheExactGaussianCurve) {
    // For the continuous Gaussian mechanism of L2 sensitivity mu (sigma = 1), the Renyi curve alpha mu^2 / 2 converted
    // as dgauss_epsilon_ideal converts it is at least the exact epsilon(delta) (Balle & Wang 2018) and at most the
    // zCDP conversion rho + 2 sqrt(rho ln(1/delta)) the continuous report uses.
    for (double mu : {0.05, 0.3, 1.0, 3.0}) {
        for (double delta : {1e-3, 1e-6, 1e-10}) {
            // dgauss_renyi with h' = 1, one coordinate moved by an integer mu s (no rounding term) and a huge s: the
            // Gaussian curve alpha mu^2 / 2 up to the cubic term's 1e-12.
            const double s = 1e6;
            const double eps = mech::dgauss_epsilon_ideal(s, 1, 0.0, mu * s, 0.0, 0.0, delta);
            EXPECT_LE(gaussian_mechanism_delta(mu, eps), delta * (1 + 1e-6)) << "mu " << mu << " delta " << delta;
            const double rho = mu * mu / 2;
            EXPECT_LE(eps, mech::zcdp_epsilon(rho, delta) * (1 + 1e-9)) << "mu " << mu << " delta " << delta;
            EXPECT_GT(eps, 0.0);
        }
    }
}

TEST(DiscreteGaussian, ReportBoundsTheHockeyStickOfTheImplementedLawAndIsNotLoose) {
    // One coordinate, h' = 1, the sampler's exact law (not N_Z): the output law under x and x' = x + Delta (lattice
    // units, non-integer) is the rounding mixture of P^ shifted. Its hockey-stick divergence at the reported eps is at
    // most the reported delta; at 0.9 eps it exceeds delta (the report is within 10% of the truth).
    const double sigma = 2.5;
    const Tables tab(sigma);
    const mech::DgaussLaw law = tab.law();
    const std::vector<long double> p = exact_law(law);
    for (double move : {37.3, 211.6, 900.45}) { // lattice units
        const double delta = 1e-6;
        mech::LatticeSens y{move * tab.lat.gamma, move * tab.lat.gamma, move * tab.lat.gamma, 1};
        const mech::Guarantee g = mech::lattice_gaussian_guarantee(tab.lat, law, 1, y, delta);
        ASSERT_TRUE(std::isfinite(g.epsilon));
        EXPECT_TRUE(g.as_run);
        EXPECT_STREQ(g.accountant, "lattice-gaussian");
        const std::int64_t off = 4;
        const std::size_t size = p.size() + static_cast<std::size_t>(move) + 16;
        const double x = 3.77;
        const auto P = rounded_release(p, x, 1, off, size);
        const auto Q = rounded_release(p, x + move, 1, off, size);
        for (const auto* A : {&P, &Q}) { // both directions
            const auto& B = A == &P ? Q : P;
            EXPECT_LE(static_cast<double>(test::hockey_stick(*A, B, g.epsilon)), delta) << "move " << move;
            EXPECT_GT(static_cast<double>(test::hockey_stick(*A, B, 0.9 * g.epsilon)), delta) << "move " << move;
        }
    }
}

TEST(DiscreteGaussian, ReportIsAtMostTheContinuousCalibrationsAndRefusesWhatItCannotState) {
    // The trees' shapes: cube (Delta_1 = Delta_2 = Delta_inf = 2), experts (d, sqrt d, 1); h' = 10; the continuous
    // calibration's sigma at eps. The lattice states at most the continuous report at the same sigma (its conversion
    // is tighter than the zCDP one and the rounding costs next to nothing), so the default never reports more than was
    // asked and lattice_gaussian_scale_for leaves sigma as it is.
    for (double eps : {0.1, 1.0, 10.0, 100.0}) {
        for (std::uint32_t d : {1u, 64u, 4096u}) {
            for (int kind = 0; kind < 2; ++kind) {
                const mech::LossSetNorms y = kind ? mech::experts_loss_norms(d) : mech::cube_loss_norms();
                const double delta = 1e-5;
                const std::uint32_t hp = 10;
                const double sigma = mech::gaussian_node_scale_zcdp(eps, delta, y, 1024, false);
                const mech::Guarantee cont = mech::gaussian_guarantee(sigma, hp, y.delta2, delta);
                const mech::LatticeSens ls{y.delta1, y.delta2, kind ? 1.0 : 2.0, d};
                const Tables tab(sigma);
                const mech::Guarantee g = mech::lattice_gaussian_guarantee(tab.lat, tab.law(), hp, ls, delta);
                EXPECT_LE(g.epsilon, cont.epsilon) << "eps " << eps << " d " << d << " kind " << kind;
                // ... and no less than what the continuous Gaussian mechanism truly gives at this sigma.
                const double mu = std::sqrt(static_cast<double>(hp)) * y.delta2 / sigma;
                EXPECT_GE(g.epsilon, gaussian_mechanism_epsilon(mu, delta)) << "eps " << eps << " d " << d << " kind " << kind;
                EXPECT_EQ(mech::lattice_gaussian_scale_for(sigma, cont.epsilon, hp, ls, delta), sigma);
            }
        }
    }
    // A delta the tails cannot fit in, and a scale too small for the rounding's range: refused, naming why.
    const Tables tab(1.0);
    const mech::DgaussLaw law = tab.law();
    const mech::LatticeSens one{2.0, 2.0, 2.0, 1};
    EXPECT_FALSE(std::isfinite(mech::lattice_gaussian_guarantee(tab.lat, law, 10, one, 1e-300).epsilon));
    EXPECT_NE(mech::lattice_gaussian_limit(tab.lat, law, 10, one, 1e-300, 1.0), nullptr);
    EXPECT_EQ(mech::lattice_gaussian_limit(tab.lat, law, 10, one, 1e-5, 1.0), nullptr);
    EXPECT_NE(mech::lattice_gaussian_limit(tab.lat, law, 10, one, 1e-5, 2048.0), nullptr);
}
