// The experts adversaries (Geometry::Simplex): each one's defining property (docs/ADVERSARIES.md),
// its defaults, and check() naming the key of a bad value. Statistical tests (suites *_Stat) use
// fixed seeds; a mean is "equal" within 5 standard errors (two-sided false alarm 6e-7 each) and a
// chi-square test passes at p > 1e-6.
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "adversaries/adv_test_util.hpp"
#include "kernels/adversaries/bernoulli.hpp"
#include "kernels/adversaries/file.hpp"
#include "kernels/adversaries/halving.hpp"
#include "kernels/adversaries/lower_bound.hpp"
#include "kernels/adversaries/realizable.hpp"
#include "kernels/adversaries/switching.hpp"

using namespace dpr;
using namespace dpr::adversaries;
using advtest::chi_square_uniform_pvalue;
using advtest::ctx;
using advtest::kAlpha;
using advtest::keys;

namespace {

bool contains(const char* s, const char* part) {
    return s && std::string(s).find(part) != std::string::npos;
}

/// Index of the only zero in `row` (d if there is none or more than one).
std::uint32_t only_zero(const std::vector<double>& row) {
    std::uint32_t found = static_cast<std::uint32_t>(row.size()), zeros = 0;
    for (std::uint32_t i = 0; i < row.size(); ++i)
        if (row[i] == 0.0) found = i, ++zeros;
    return zeros == 1 ? found : static_cast<std::uint32_t>(row.size());
}

/// Column means of a T x d 0/1 matrix over rows [t0, t1) (0-based).
std::vector<double> column_means(const std::vector<double>& m, std::uint32_t d, std::uint64_t t0,
                                 std::uint64_t t1) {
    std::vector<double> mean(d, 0.0);
    for (std::uint64_t t = t0; t < t1; ++t)
        for (std::uint32_t i = 0; i < d; ++i) mean[i] += m[t * d + i];
    for (double& x : mean) x /= static_cast<double>(t1 - t0);
    return mean;
}

double bernoulli_se(double p, double n) {
    return std::sqrt(p * (1 - p) / n);
}

} // namespace

// ---- file ---------------------------------------------------------------------------------------

TEST(FileAdversary, ReturnsRowTMinusOneForEveryContext) {
    const std::vector<double> data = {0.0, 0.25, 0.5, 1.0, 0.1, 0.2, 0.3, 0.4, 1.0, 1.0, 0.0, 0.0};
    KeyValues kv;
    kv.given[File::kPath] = true;
    kv.str[File::kPath] = "losses.csv";
    kv.list[File::kPath] = data.data();
    kv.list_size[File::kPath] = 12;
    const Problem pb{4, 3, 1};
    Diagnostic diag;
    ASSERT_TRUE(File::check(kv, pb, diag)) << diag.message;
    const File::Params p = File::resolve(kv, pb);
    EXPECT_TRUE(File::kSharedOnly);
    for (std::uint64_t t = 1; t <= 3; ++t)
        for (const SequenceCtx c : {ctx(1), ctx(2, 5), ctx(3, 0, 9)}) {
            const auto r = advtest::row<File>(p, c, t);
            for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(r[i], data[(t - 1) * 4 + i]);
        }
}

TEST(FileAdversary, CheckRejectsMissingDataWrongShapeAndRange) {
    std::vector<double> data(12, 0.5);
    KeyValues kv;
    kv.given[File::kPath] = true;
    Diagnostic diag;
    EXPECT_FALSE(File::check(kv, Problem{4, 3, 1}, diag));
    EXPECT_STREQ(diag.key, "path");

    kv.list[File::kPath] = data.data();
    kv.list_size[File::kPath] = 12;
    diag = Diagnostic{};
    EXPECT_FALSE(File::check(kv, Problem{4, 4, 1}, diag)); // T = 4 rows expected, 3 given
    EXPECT_STREQ(diag.key, "path");
    EXPECT_TRUE(contains(diag.message, "holds 12 values")) << diag.message;
    EXPECT_TRUE(contains(diag.message, "16 expected")) << diag.message;

    data[6] = 1.5; // row 2, column 3
    diag = Diagnostic{};
    EXPECT_FALSE(File::check(kv, Problem{4, 3, 1}, diag));
    EXPECT_STREQ(diag.key, "path");
    EXPECT_TRUE(contains(diag.message, "row 2, column 3 is 1.5")) << diag.message;
    data[6] = std::nan("");
    EXPECT_FALSE(File::check(kv, Problem{4, 3, 1}, diag));
}

// ---- bernoulli ----------------------------------------------------------------------------------

TEST(BernoulliAdversary, DefaultsAndChecks) {
    const Problem pb{10, 100, 1};
    const Bernoulli::Params p = Bernoulli::resolve(keys<Bernoulli>(), pb);
    EXPECT_EQ(p.p, 0.5);
    EXPECT_EQ(p.gap, 0.1);
    EXPECT_EQ(p.best, Bernoulli::kAutoBest);
    Diagnostic diag;
    EXPECT_TRUE(Bernoulli::check(keys<Bernoulli>(), pb, diag));
    EXPECT_TRUE(
        Bernoulli::check(keys<Bernoulli>({{"p", 0.2}, {"gap", 0.2}}), pb, diag)); // p - gap = 0 is fine

    EXPECT_FALSE(Bernoulli::check(keys<Bernoulli>({{"p", 0.2}, {"gap", 0.3}}), pb, diag));
    EXPECT_STREQ(diag.key, "gap");
    EXPECT_TRUE(contains(diag.message, "gap = 0.3 exceeds p = 0.2")) << diag.message;

    diag = Diagnostic{};
    EXPECT_FALSE(Bernoulli::check(keys<Bernoulli>({{"best", 10}}), pb, diag));
    EXPECT_STREQ(diag.key, "best");
    EXPECT_TRUE(contains(diag.message, "[0, 9]")) << diag.message;
}

TEST(BernoulliAdversary, GivenBestExpertIsUsed) {
    // gap = p makes the best expert's losses identically 0: it must be the configured index.
    const Problem pb{5, 500, 1};
    const auto p = Bernoulli::resolve(keys<Bernoulli>({{"p", 0.5}, {"gap", 0.5}, {"best", 3}}), pb);
    for (std::uint32_t seq : {kSharedSequence, 0u, 7u}) {
        EXPECT_EQ(Bernoulli::best_expert(p, ctx(9, seq)), 3u);
        const auto m = advtest::matrix<Bernoulli>(p, ctx(9, seq));
        const auto mean = column_means(m, 5, 0, 500);
        EXPECT_EQ(mean[3], 0.0);
        for (std::uint32_t i : {0u, 1u, 2u, 4u}) EXPECT_GT(mean[i], 0.3);
    }
}

TEST(BernoulliAdversary_Stat, BestExpertHasMeanPMinusGapOthersP) {
    // d = 7 (odd: the last expert has no pair partner), T = 40000: SE = sqrt(p(1-p)/T) ~ 0.0023, and
    // the gap of 0.1 is > 40 SE, so the test also tells the best expert from the others.
    const std::uint32_t d = 7;
    const std::uint64_t T = 40000;
    const double p = 0.3, gap = 0.1;
    const auto prm = Bernoulli::resolve(keys<Bernoulli>({{"p", p}, {"gap", gap}}), Problem{d, T, 1});
    for (const SequenceCtx c : {ctx(2024), ctx(2024, 3)}) {
        const auto mean = column_means(advtest::matrix<Bernoulli>(prm, c), d, 0, T);
        const std::uint32_t star = Bernoulli::best_expert(prm, c);
        for (std::uint32_t i = 0; i < d; ++i) {
            const double target = i == star ? p - gap : p;
            EXPECT_NEAR(mean[i], target, 5 * bernoulli_se(target, T))
                << "expert " << i << " (x* = " << star << ")";
            if (i != star) {
                EXPECT_GT(mean[i] - mean[star], 20 * bernoulli_se(p, T));
            }
        }
    }
}

TEST(BernoulliAdversary_Stat, CoordinatesAndRoundsAreUncorrelated) {
    // Experts 2k and 2k+1 share one Philox block: their losses (and those of consecutive rounds) must
    // be uncorrelated. Sample correlation of n pairs has SE 1/sqrt(n); tolerance 5 SE.
    const std::uint32_t d = 4;
    const std::uint64_t T = 100000;
    const auto prm = Bernoulli::resolve(keys<Bernoulli>({{"p", 0.5}, {"gap", 0.0}}), Problem{d, T, 1});
    const auto m = advtest::matrix<Bernoulli>(prm, ctx(77));
    auto corr = [&](auto x, auto y, std::uint64_t n) {
        double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
        for (std::uint64_t t = 0; t < n; ++t) {
            const double a = x(t), b = y(t);
            sx += a, sy += b, sxx += a * a, syy += b * b, sxy += a * b;
        }
        const double N = static_cast<double>(n);
        return (sxy / N - sx / N * sy / N) /
               std::sqrt((sxx / N - sx / N * sx / N) * (syy / N - sy / N * sy / N));
    };
    const double tol = 5 / std::sqrt(static_cast<double>(T));
    EXPECT_NEAR(corr([&](auto t) { return m[t * d]; }, [&](auto t) { return m[t * d + 1]; }, T), 0.0, tol);
    EXPECT_NEAR(corr([&](auto t) { return m[t * d + 1]; }, [&](auto t) { return m[t * d + 2]; }, T), 0.0,
                tol);
    EXPECT_NEAR(corr([&](auto t) { return m[t * d]; }, [&](auto t) { return m[(t + 1) * d]; }, T - 1), 0.0,
                tol);
}

TEST(BernoulliAdversary_Stat, AutoBestIsUniformOverSequences) {
    // p = gap = 1: the best expert is the only zero of every row. Over 8000 per-instance sequences it is
    // uniform on [0, 8) (1000 per cell).
    const std::uint32_t d = 8;
    const auto prm = Bernoulli::resolve(keys<Bernoulli>({{"p", 1.0}, {"gap", 1.0}}), Problem{d, 10, 1});
    std::vector<long> counts(d, 0);
    for (std::uint32_t s = 0; s < 8000; ++s) {
        const std::uint32_t star = only_zero(advtest::row<Bernoulli>(prm, ctx(5, s), 1 + s % 10));
        ASSERT_LT(star, d);
        ASSERT_EQ(star, Bernoulli::best_expert(prm, ctx(5, s)));
        ++counts[star];
    }
    EXPECT_GT(chi_square_uniform_pvalue(counts), kAlpha);
}

// ---- realizable ---------------------------------------------------------------------------------

TEST(RealizableAdversary, StarHasZeroLossAndIsTheOnlyZeroLossExpert) {
    // 200 per-instance sequences, d = 10, T = 200, p = 0.5: another expert has zero loss with
    // probability 9 * 2^-200 per sequence.
    const std::uint32_t d = 10;
    const std::uint64_t T = 200;
    const auto prm = Realizable::resolve(keys<Realizable>(), Problem{d, T, 1});
    EXPECT_EQ(prm.p, 0.5);
    for (std::uint32_t s = 0; s < 200; ++s) {
        const auto m = advtest::matrix<Realizable>(prm, ctx(11, s));
        std::vector<double> cum(d, 0.0);
        for (std::uint64_t t = 0; t < T; ++t)
            for (std::uint32_t i = 0; i < d; ++i) cum[i] += m[t * d + i];
        const std::uint32_t star = only_zero(cum);
        ASSERT_LT(star, d) << "sequence " << s;
        EXPECT_EQ(star, Realizable::best_expert(prm, ctx(11, s)));
    }
}

TEST(RealizableAdversary, WarnsWhenEveryExpertHasZeroLoss) {
    Diagnostic diag;
    EXPECT_TRUE(Realizable::check(keys<Realizable>({{"p", 0.0}}), Problem{4, 10, 1}, diag));
    EXPECT_TRUE(diag.warning_only);
    EXPECT_STREQ(diag.key, "p");
}

TEST(RealizableAdversary_Stat, StarIsUniformAndOthersHaveMeanP) {
    // 6400 per-instance sequences, d = 16, first 48 rounds: x* is the only zero-loss expert (with
    // probability 1 - 15 * 2^-48 per sequence) and is uniform (400 per cell); the other experts' losses
    // have mean p = 0.5 within 5 SE.
    const std::uint32_t d = 16, rounds = 48;
    const auto prm = Realizable::resolve(keys<Realizable>(), Problem{d, rounds, 1});
    std::vector<long> counts(d, 0);
    double ones = 0, n = 0;
    for (std::uint32_t s = 0; s < 6400; ++s) {
        const auto m = advtest::matrix<Realizable>(prm, ctx(12, s));
        std::vector<double> cum(d, 0.0);
        for (std::uint32_t t = 0; t < rounds; ++t)
            for (std::uint32_t i = 0; i < d; ++i) cum[i] += m[t * d + i];
        const std::uint32_t star = only_zero(cum);
        ASSERT_LT(star, d);
        ++counts[star];
        for (std::uint32_t i = 0; i < d; ++i)
            if (i != star) ones += cum[i], n += rounds;
    }
    EXPECT_GT(chi_square_uniform_pvalue(counts), kAlpha);
    EXPECT_NEAR(ones / n, 0.5, 5 * bernoulli_se(0.5, n));
}

TEST(RealizableAdversary, PerExpertMeansAreFixedPerSequenceInTheirRangeAndAutoKeepsTheOldLaw) {
    const std::uint32_t d = 9;
    const std::uint64_t T = 30;
    const auto alike = Realizable::resolve(keys<Realizable>({{"p", 0.4}}), Problem{d, T, 1});
    const auto spread = Realizable::resolve(keys<Realizable>({{"p", 0.4}, {"p_min", 0.1}}), Problem{d, T, 1});
    for (std::uint32_t s = 0; s < 20; ++s) {
        // p_min = auto: exactly bernoulli_row with mean p (the sequences of earlier versions).
        const auto m = advtest::matrix<Realizable>(alike, ctx(13, s));
        std::vector<double> row(d);
        for (std::uint64_t t = 1; t <= T; ++t) {
            bernoulli_row(ctx(13, s), t, d, Realizable::best_expert(alike, ctx(13, s)), 0.0, 0.4, row.data());
            for (std::uint32_t i = 0; i < d; ++i) ASSERT_EQ(m[(t - 1) * d + i], row[i]);
        }
        // p_min < p: distinct means in [p_min, p], the same at every call (fixed per sequence), x* never loses.
        std::set<double> means;
        for (std::uint32_t i = 0; i < d; ++i) {
            const double mu = Realizable::mean(spread, ctx(13, s), i);
            EXPECT_GE(mu, 0.1);
            EXPECT_LE(mu, 0.4);
            EXPECT_EQ(mu, Realizable::mean(spread, ctx(13, s), i));
            means.insert(mu);
        }
        EXPECT_EQ(means.size(), d);
        const auto ms = advtest::matrix<Realizable>(spread, ctx(13, s));
        const std::uint32_t star = Realizable::best_expert(spread, ctx(13, s));
        for (std::uint64_t t = 0; t < T; ++t) EXPECT_EQ(ms[t * d + star], 0.0);
    }
    Diagnostic diag;
    EXPECT_FALSE(Realizable::check(keys<Realizable>({{"p", 0.3}, {"p_min", 0.5}}), Problem{4, 10, 1}, diag));
    EXPECT_STREQ(diag.key, "p_min");
}

TEST(RealizableAdversary_Stat, EachExpertLosesAtItsOwnMean) {
    // W4 (docs/spec/checks.md §3.4): expert i != x* has Bernoulli(mu_i) losses. Over 20000 rounds every expert's
    // loss frequency is within 5 SE of its own mu_i (mu_i in [0.05, 0.6]) and, for a pair of experts whose
    // means differ by more than 10 SE, not within 5 SE of the other's: a law that ignored mu_i would fail.
    const std::uint32_t d = 12;
    const std::uint64_t T = 20000;
    const auto prm = Realizable::resolve(keys<Realizable>({{"p", 0.6}, {"p_min", 0.05}}), Problem{d, T, 1});
    const auto c = ctx(14, 3);
    const auto m = advtest::matrix<Realizable>(prm, c);
    const std::uint32_t star = Realizable::best_expert(prm, c);
    std::vector<double> freq(d, 0.0);
    for (std::uint64_t t = 0; t < T; ++t)
        for (std::uint32_t i = 0; i < d; ++i) freq[i] += m[t * d + i] / T;
    int separated = 0;
    for (std::uint32_t i = 0; i < d; ++i) {
        if (i == star) {
            EXPECT_EQ(freq[i], 0.0);
            continue;
        }
        const double mu = Realizable::mean(prm, c, i);
        EXPECT_NEAR(freq[i], mu, 5 * bernoulli_se(mu, T)) << i;
        for (std::uint32_t j = 0; j < d; ++j) {
            const double mj = Realizable::mean(prm, c, j);
            if (j == star || std::abs(mj - mu) < 10 * bernoulli_se(0.5, T)) continue;
            EXPECT_GT(std::abs(freq[i] - mj), 5 * bernoulli_se(mj, T)) << i << " vs " << j;
            ++separated;
        }
    }
    EXPECT_GT(separated, 20);
}

// ---- halving ------------------------------------------------------------------------------------

TEST(HalvingAdversary, AutoPhaseLength) {
    auto m = [](std::uint32_t d, std::uint64_t T) {
        return Halving::resolve(keys<Halving>(), Problem{d, T, 1});
    };
    EXPECT_EQ(m(100, 1000).phases, 7u);
    EXPECT_EQ(m(100, 1000).m, 142u); // floor(1000 / 7)
    EXPECT_EQ(m(2, 50).phases, 1u);
    EXPECT_EQ(m(2, 50).m, 50u);
    EXPECT_EQ(m(1, 50).phases, 0u);
    EXPECT_EQ(m(64, 3).m, 1u); // max(1, floor(3 / 6))
    EXPECT_EQ(Halving::resolve(keys<Halving>({{"phase_length", 9}}), Problem{64, 100, 1}).m, 9u);
}

TEST(HalvingAdversary, WarnsWhenThePhasesDoNotFit) {
    Diagnostic diag;
    EXPECT_TRUE(Halving::check(keys<Halving>({{"phase_length", 100}}), Problem{16, 300, 1}, diag));
    EXPECT_TRUE(diag.warning_only);
    EXPECT_STREQ(diag.key, "phase_length");
    EXPECT_TRUE(contains(diag.message, "only 3 of the 4 phases")) << diag.message;
    Diagnostic quiet;
    EXPECT_TRUE(Halving::check(keys<Halving>(), Problem{16, 300, 1}, quiet));
    EXPECT_EQ(quiet.key, nullptr);
}

TEST(HalvingAdversary, PhasesHalveTheSurvivorsAndKeepXStarAtZero) {
    // For every d: rows are constant within a phase; the loss-1 sets grow (nested phases); after phase
    // q exactly floor((d - 1) / 2^q) = ceil(d / 2^q) - 1 experts other than x* have zero loss so far;
    // x* has loss 0 in every round; after the last phase every other expert has loss 1.
    for (std::uint32_t d : {2u, 3u, 4u, 5u, 8u, 13u, 64u, 100u, 1000u}) {
        const std::uint64_t m = 3;
        const std::uint32_t P = ceil_log2(d);
        const std::uint64_t T = P * m + 4;
        const auto prm =
            Halving::resolve(keys<Halving>({{"phase_length", static_cast<double>(m)}}), Problem{d, T, 1});
        ASSERT_EQ(prm.phases, P);
        for (std::uint32_t seq : {kSharedSequence, 0u, 1u, 2u}) {
            const SequenceCtx c = ctx(31, seq);
            const auto mat = advtest::matrix<Halving>(prm, c);
            const std::uint32_t star = Halving::best_expert(prm, c);
            std::vector<double> cum(d, 0.0);
            for (std::uint64_t t = 1; t <= T; ++t) {
                const double* r = &mat[(t - 1) * d];
                EXPECT_EQ(r[star], 0.0);
                for (std::uint32_t i = 0; i < d; ++i) cum[i] += r[i];
                if (t > 1) {
                    const double* prev = r - d;
                    const bool same_phase = (t - 1) % m != 0 || t > P * m;
                    for (std::uint32_t i = 0; i < d; ++i) {
                        EXPECT_GE(r[i], prev[i])
                            << "d = " << d << ": expert " << i << " revived at t = " << t;
                        if (same_phase) {
                            EXPECT_EQ(r[i], prev[i]) << "d = " << d << ", t = " << t;
                        }
                    }
                }
                if (t % m == 0 && t <= P * m) {
                    const std::uint32_t q = static_cast<std::uint32_t>(t / m);
                    std::uint32_t zero = 0;
                    for (std::uint32_t i = 0; i < d; ++i)
                        if (i != star && cum[i] == 0.0) ++zero;
                    EXPECT_EQ(zero, (d - 1) >> q) << "d = " << d << ", after phase " << q;
                    EXPECT_EQ(zero + 1, (d + (1u << q) - 1) >> q) << "ceil(d / 2^q) survivors with x*";
                }
            }
            for (std::uint32_t i = 0; i < d; ++i) EXPECT_EQ(mat[(T - 1) * d + i], i == star ? 0.0 : 1.0);
            EXPECT_EQ(only_zero(cum), star);
        }
    }
}

TEST(HalvingAdversary, OneExpertAndAutoLengthWithLeftoverRounds) {
    const auto one = Halving::resolve(keys<Halving>(), Problem{1, 5, 1});
    for (std::uint64_t t = 1; t <= 5; ++t) EXPECT_EQ(advtest::row<Halving>(one, ctx(1), t)[0], 0.0);
    // d = 10: P = 4, T = 23 -> m = 5; rounds 21..23 come after the last phase.
    const auto p = Halving::resolve(keys<Halving>(), Problem{10, 23, 1});
    ASSERT_EQ(p.m, 5u);
    const auto mat = advtest::matrix<Halving>(p, ctx(3));
    const std::uint32_t star = Halving::best_expert(p, ctx(3));
    for (std::uint64_t t = 16; t <= 23; ++t)
        for (std::uint32_t i = 0; i < 10; ++i) EXPECT_EQ(mat[(t - 1) * 10 + i], i == star ? 0.0 : 1.0) << t;
    std::uint32_t alive_after_3 = 0;
    for (std::uint32_t i = 0; i < 10; ++i) alive_after_3 += mat[14 * 10 + i] == 0.0;
    EXPECT_EQ(alive_after_3, 2u); // x* and floor(9 / 8) = 1 other
}

TEST(HalvingAdversary_Stat, EachPhaseKillsAFreshUniformHalf) {
    // d = 5, m = 1: the joint law of (x*, the 2 non-star survivors of phase 1, the survivor of phase 2)
    // is uniform over 5 * 6 * 2 = 60 outcomes (12000 per-instance sequences, 200 per cell): each phase
    // kills a uniformly random half of the survivors, independently of the past.
    const std::uint32_t d = 5;
    const auto prm = Halving::resolve(keys<Halving>({{"phase_length", 1}}), Problem{d, 3, 1});
    std::vector<long> counts(60, 0);
    for (std::uint32_t s = 0; s < 12000; ++s) {
        const auto mat = advtest::matrix<Halving>(prm, ctx(41, s));
        const std::uint32_t star = only_zero(std::vector<double>(mat.begin() + 2 * d, mat.end()));
        ASSERT_LT(star, d);
        std::uint32_t others[4], k = 0;
        for (std::uint32_t i = 0; i < d; ++i)
            if (i != star) others[k++] = i;
        std::uint32_t mask1 = 0, survivor2 = 4;
        for (std::uint32_t j = 0; j < 4; ++j) {
            if (mat[others[j]] == 0.0) mask1 |= 1u << j;
            if (mat[d + others[j]] == 0.0) survivor2 = j;
        }
        ASSERT_EQ(__builtin_popcount(mask1), 2);
        ASSERT_TRUE(survivor2 < 4 && (mask1 >> survivor2 & 1u));
        // index of each 2-of-4 mask: 3 -> 0, 5 -> 1, 6 -> 2, 9 -> 3, 10 -> 4, 12 -> 5
        static const std::uint32_t pair_index[16] = {0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 5, 0, 0, 0};
        const std::uint32_t second = survivor2 == static_cast<std::uint32_t>(__builtin_ctz(mask1)) ? 0 : 1;
        ++counts[(star * 6 + pair_index[mask1]) * 2 + second];
    }
    EXPECT_GT(chi_square_uniform_pvalue(counts), kAlpha);
}

TEST(HalvingAdversary_Stat, FirstPhaseSurvivorsAreAUniformSubset) {
    // d = 9, fixed x* = whatever the stream gives: the 4 survivors among the 8 others after phase 1 are
    // uniform over the C(8,4) = 70 subsets (7000 sequences, 100 per cell).
    const std::uint32_t d = 9;
    const auto prm = Halving::resolve(keys<Halving>({{"phase_length", 1}}), Problem{d, 4, 1});
    std::vector<long> by_mask(256, 0);
    for (std::uint32_t s = 0; s < 7000; ++s) {
        const SequenceCtx c = ctx(43, s);
        const std::uint32_t star = Halving::best_expert(prm, c);
        const auto r = advtest::row<Halving>(prm, c, 1);
        std::uint32_t mask = 0, j = 0;
        for (std::uint32_t i = 0; i < d; ++i)
            if (i != star) mask |= (r[i] == 0.0 ? 1u : 0u) << j++;
        ASSERT_EQ(__builtin_popcount(mask), 4);
        ++by_mask[mask];
    }
    std::vector<long> counts;
    for (std::uint32_t mask = 0; mask < 256; ++mask)
        if (__builtin_popcount(mask) == 4) counts.push_back(by_mask[mask]);
    ASSERT_EQ(counts.size(), 70u);
    EXPECT_GT(chi_square_uniform_pvalue(counts), kAlpha);
}

// ---- lower-bound (AFKT23 Thm 5) -------------------------------------------------------------------

TEST(LowerBoundAdversary, KIsCeilLnDOverTwoEpsilon) {
    auto k = [](std::uint32_t d, double eps) {
        return LowerBound::resolve(keys<LowerBound>({{"epsilon", eps}}), Problem{d, 100000, 1}).k;
    };
    EXPECT_EQ(k(32, 0.1), 18u);     // ln 32 / 0.2 = 17.33
    EXPECT_EQ(k(1000, 1.0), 4u);    // 3.45
    EXPECT_EQ(k(2, 10.0), 1u);      // 0.035
    EXPECT_EQ(k(1024, 0.01), 347u); // 346.57
}

TEST(LowerBoundAdversary, ZerosThenLj) {
    const std::uint32_t d = 32;
    const std::uint64_t T = 100;
    const auto prm = LowerBound::resolve(keys<LowerBound>({{"epsilon", 0.1}}), Problem{d, T, 1});
    ASSERT_EQ(prm.k, 18u);
    for (std::uint32_t seq : {kSharedSequence, 0u, 1u, 2u, 3u}) {
        const SequenceCtx c = ctx(51, seq);
        const auto m = advtest::matrix<LowerBound>(prm, c);
        const std::uint32_t j = LowerBound::target(prm, c);
        for (std::uint64_t t = 1; t <= T; ++t)
            for (std::uint32_t i = 0; i < d; ++i)
                ASSERT_EQ(m[(t - 1) * d + i], t <= T - 18 ? 0.0 : (i == j ? 0.0 : 1.0))
                    << "t = " << t << ", i = " << i;
    }
}

TEST(LowerBoundAdversary, CheckNamesEpsilonAndD) {
    const Problem pb{32, 100, 1};
    Diagnostic diag;
    EXPECT_FALSE(LowerBound::check(keys<LowerBound>(), pb, diag));
    EXPECT_STREQ(diag.key, "epsilon");
    for (double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
        diag = Diagnostic{};
        EXPECT_FALSE(LowerBound::check(keys<LowerBound>({{"epsilon", bad}}), pb, diag)) << bad;
        EXPECT_STREQ(diag.key, "epsilon");
    }
    diag = Diagnostic{};
    EXPECT_FALSE(LowerBound::check(keys<LowerBound>({{"epsilon", 0.01}}), pb, diag)); // k = 174 > 100
    EXPECT_STREQ(diag.key, "epsilon");
    EXPECT_TRUE(contains(diag.message, "= 174 rounds exceeds T = 100")) << diag.message;
    EXPECT_FALSE(diag.warning_only);

    diag = Diagnostic{};
    EXPECT_TRUE(LowerBound::check(keys<LowerBound>({{"epsilon", 0.1}}), pb, diag)); // k = 18 <= 100
    EXPECT_EQ(diag.key, nullptr);
    EXPECT_TRUE(LowerBound::check(keys<LowerBound>({{"epsilon", 0.5}}), pb, diag)); // outside Thm 5
    EXPECT_TRUE(diag.warning_only);
    EXPECT_STREQ(diag.key, "epsilon");

    diag = Diagnostic{};
    EXPECT_FALSE(LowerBound::check(keys<LowerBound>({{"epsilon", 0.1}}), Problem{1, 100, 1}, diag));
    EXPECT_STREQ(diag.key, "d");
}

TEST(LowerBoundAdversary_Stat, JIsUniformOverInstances) {
    // j read from the last row (its only zero) of 6400 per-instance sequences: uniform on [0, 32).
    const std::uint32_t d = 32;
    const auto prm = LowerBound::resolve(keys<LowerBound>({{"epsilon", 0.1}}), Problem{d, 50, 1});
    std::vector<long> counts(d, 0);
    for (std::uint32_t s = 0; s < 6400; ++s) {
        const std::uint32_t j = only_zero(advtest::row<LowerBound>(prm, ctx(52, s), 50));
        ASSERT_LT(j, d);
        ++counts[j];
    }
    EXPECT_GT(chi_square_uniform_pvalue(counts), kAlpha);
}

// ---- switching ----------------------------------------------------------------------------------

TEST(SwitchingAdversary, AutoSwitchRoundsAndSegments) {
    auto autos = [](std::uint64_t T) {
        const auto p = Switching::resolve(keys<Switching>(), Problem{4, T, 1});
        return std::vector<std::uint32_t>(p.switch_at, p.switch_at + p.switches);
    };
    EXPECT_EQ(autos(100), (std::vector<std::uint32_t>{26, 51, 76}));
    EXPECT_EQ(autos(4), (std::vector<std::uint32_t>{2, 3, 4}));
    EXPECT_EQ(autos(2), (std::vector<std::uint32_t>{2}));
    EXPECT_EQ(autos(1), (std::vector<std::uint32_t>{}));

    KeyValues kv = keys<Switching>();
    const std::vector<double> at = {5, 20, 30};
    advtest::set_list<Switching>(kv, "switch_at", at);
    const auto p = Switching::resolve(kv, Problem{4, 40, 1});
    for (std::uint64_t t = 1; t <= 40; ++t)
        EXPECT_EQ(Switching::segment_of(p, t), t < 5 ? 0u : t < 20 ? 1u : t < 30 ? 2u : 3u) << t;
}

TEST(SwitchingAdversary, BestExpertChangesExactlyAtSwitchRounds) {
    // p = gap = 1: the current best expert is the only zero of each row, so the row's zero must move
    // exactly at the switch rounds (including a switch at round 1, adjacent switches and one at T).
    const std::vector<double> at = {1, 5, 6, 20, 59, 60};
    for (std::uint32_t d : {2u, 3u, 7u}) {
        KeyValues kv = keys<Switching>({{"p", 1.0}, {"gap", 1.0}});
        advtest::set_list<Switching>(kv, "switch_at", at);
        Diagnostic diag;
        ASSERT_TRUE(Switching::check(kv, Problem{d, 60, 1}, diag)) << diag.message;
        const auto p = Switching::resolve(kv, Problem{d, 60, 1});
        for (std::uint32_t seq : {kSharedSequence, 0u, 1u, 2u, 3u, 4u}) {
            const SequenceCtx c = ctx(61, seq);
            std::uint32_t prev = d;
            for (std::uint64_t t = 1; t <= 60; ++t) {
                const std::uint32_t best = only_zero(advtest::row<Switching>(p, c, t));
                ASSERT_LT(best, d);
                EXPECT_EQ(best, Switching::segment_best(p, c, Switching::segment_of(p, t)));
                const bool is_switch = t == 5 || t == 6 || t == 20 || t == 59 || t == 60;
                if (t > 1) {
                    EXPECT_EQ(best != prev, is_switch) << "d = " << d << ", t = " << t;
                }
                prev = best;
            }
        }
    }
}

TEST(SwitchingAdversary, CheckRejectsBadSwitchRounds) {
    const Problem pb{4, 100, 1};
    auto reject = [&](std::vector<double> at, const char* part) {
        KeyValues kv = keys<Switching>();
        advtest::set_list<Switching>(kv, "switch_at", at);
        Diagnostic diag;
        EXPECT_FALSE(Switching::check(kv, pb, diag)) << part;
        EXPECT_STREQ(diag.key, "switch_at");
        EXPECT_TRUE(contains(diag.message, part)) << diag.message;
    };
    reject({10, 5}, "strictly increasing: switch_at[1] = 5 follows switch_at[0] = 10");
    reject({10, 10}, "strictly increasing");
    reject({2.5}, "switch_at[0] = 2.5; switch rounds must be integers in [1, T] = [1, 100]");
    reject({50, 101}, "switch_at[1] = 101");
    reject({0}, "switch_at[0] = 0");
    reject(std::vector<double>(300, 1.0), "at most 256");

    KeyValues kv = keys<Switching>();
    const std::vector<double> one = {3};
    advtest::set_list<Switching>(kv, "switch_at", one);
    Diagnostic diag;
    EXPECT_FALSE(Switching::check(kv, Problem{1, 100, 1}, diag));
    EXPECT_STREQ(diag.key, "switch_at");
    diag = Diagnostic{};
    EXPECT_FALSE(Switching::check(keys<Switching>({{"p", 0.1}, {"gap", 0.2}}), pb, diag));
    EXPECT_STREQ(diag.key, "gap");
    const std::vector<double> none;
    KeyValues empty = keys<Switching>();
    advtest::set_list<Switching>(empty, "switch_at", none);
    EXPECT_TRUE(Switching::check(empty, pb, diag));
    EXPECT_EQ(Switching::resolve(empty, pb).switches, 0u);
}

TEST(SwitchingAdversary_Stat, EachSegmentHasItsOwnBestExpert) {
    // d = 4, T = 40000, switches at 10001 and 25001: in each segment the segment's best expert has
    // empirical mean p - gap and the others p (5 SE), and it is the argmin of the empirical means.
    const std::uint32_t d = 4;
    const std::uint64_t T = 40000;
    KeyValues kv = keys<Switching>({{"p", 0.5}, {"gap", 0.1}});
    const std::vector<double> at = {10001, 25001};
    advtest::set_list<Switching>(kv, "switch_at", at);
    const auto p = Switching::resolve(kv, Problem{d, T, 1});
    const SequenceCtx c = ctx(62);
    const auto m = advtest::matrix<Switching>(p, c);
    const std::uint64_t bounds[4] = {0, 10000, 25000, 40000};
    for (std::uint32_t s = 0; s < 3; ++s) {
        const auto mean = column_means(m, d, bounds[s], bounds[s + 1]);
        const double n = static_cast<double>(bounds[s + 1] - bounds[s]);
        const std::uint32_t best = Switching::segment_best(p, c, s);
        for (std::uint32_t i = 0; i < d; ++i) {
            const double target = i == best ? 0.4 : 0.5;
            EXPECT_NEAR(mean[i], target, 5 * bernoulli_se(target, n)) << "segment " << s << ", expert " << i;
        }
    }
}

TEST(SwitchingAdversary_Stat, NextBestIsUniformAmongTheOthers) {
    // (b_0, b_1) over 8000 per-instance sequences, d = 5: uniform over the 20 ordered pairs of distinct
    // experts (400 per cell).
    const std::uint32_t d = 5;
    KeyValues kv = keys<Switching>({{"p", 1.0}, {"gap", 1.0}});
    const std::vector<double> at = {2};
    advtest::set_list<Switching>(kv, "switch_at", at);
    const auto p = Switching::resolve(kv, Problem{d, 2, 1});
    std::vector<long> cells(d * d, 0);
    for (std::uint32_t s = 0; s < 8000; ++s) {
        const std::uint32_t b0 = only_zero(advtest::row<Switching>(p, ctx(63, s), 1));
        const std::uint32_t b1 = only_zero(advtest::row<Switching>(p, ctx(63, s), 2));
        ASSERT_LT(b0, d);
        ASSERT_LT(b1, d);
        ASSERT_NE(b0, b1);
        ++cells[b0 * d + b1];
    }
    std::vector<long> off;
    for (std::uint32_t a = 0; a < d; ++a)
        for (std::uint32_t b = 0; b < d; ++b)
            if (a != b) off.push_back(cells[a * d + b]);
    EXPECT_GT(chi_square_uniform_pvalue(off), kAlpha);
}
