// The OLO adversaries: unit-vectors and drifting (Geometry::Ball), cube-coordinate and cube-drift
// (Geometry::Cube), and the file kinds of both sets. Defining properties: unit l2 norm to 1e-12;
// isotropy (moments of the uniform distribution on the sphere); the drifting mean direction is theta;
// one signed coordinate per round, uniform over the 2d (coordinate, sign) pairs; cube-drift's mean
// -(drift/d) c* toward a hidden corner c* uniform over the 2^d corners. Means are "equal" within 5 standard errors estimated from the sample;
// chi-square tests pass at p > 1e-6.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "adversaries/adv_test_util.hpp"
#include "kernels/adversaries/cube_coordinate.hpp"
#include "kernels/adversaries/cube_drift.hpp"
#include "kernels/adversaries/drifting.hpp"
#include "kernels/adversaries/file.hpp"
#include "kernels/adversaries/unit_vectors.hpp"

using namespace dpr;
using namespace dpr::adversaries;
using advtest::chi_square_uniform_pvalue;
using advtest::ctx;
using advtest::kAlpha;
using advtest::keys;

namespace {

double norm2(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x * x;
    return std::sqrt(s);
}

/// Running mean and standard error of a scalar statistic.
struct Moment {
    double n = 0, s = 0, s2 = 0;
    void add(double x) { n += 1, s += x, s2 += x * x; }
    double mean() const { return s / n; }
    double se() const { return std::sqrt((s2 / n - mean() * mean()) / n); }
};

} // namespace

// ---- unit-vectors -------------------------------------------------------------------------------

TEST(UnitVectorsAdversary, EveryLossHasUnitNorm) {
    for (std::uint32_t d : {1u, 2u, 3u, 10u, 100u, 1000u}) {
        const auto p = UnitVectors::resolve(keys<UnitVectors>(), Problem{d, 300, 1});
        for (std::uint32_t seq : {kSharedSequence, 4u})
            for (std::uint64_t t = 1; t <= 300; ++t)
                ASSERT_NEAR(norm2(advtest::row<UnitVectors>(p, ctx(71, seq), t)), 1.0, 1e-12) << "d = " << d;
    }
}

TEST(UnitVectorsAdversary_Stat, IsUniformOnTheSphere) {
    // d = 5, 50000 rounds. On the sphere: E l_i = 0, E l_i^2 = 1/d, E l_i l_j = 0, E l_i^4 = 3/(d(d+2)).
    // The fourth moment separates the sphere from e.g. normalised cube points (E l_i^4 differs by ~10%,
    // ~20 SE here).
    const std::uint32_t d = 5;
    const std::uint64_t T = 50000;
    const auto p = UnitVectors::resolve(keys<UnitVectors>(), Problem{d, T, 1});
    std::vector<Moment> m1(d), m2(d), m4(d), cross(d - 1);
    for (std::uint64_t t = 1; t <= T; ++t) {
        const auto l = advtest::row<UnitVectors>(p, ctx(72), t);
        for (std::uint32_t i = 0; i < d; ++i) {
            m1[i].add(l[i]);
            m2[i].add(l[i] * l[i]);
            m4[i].add(l[i] * l[i] * l[i] * l[i]);
            if (i + 1 < d) cross[i].add(l[i] * l[i + 1]);
        }
    }
    for (std::uint32_t i = 0; i < d; ++i) {
        EXPECT_NEAR(m1[i].mean(), 0.0, 5 * m1[i].se()) << i;
        EXPECT_NEAR(m2[i].mean(), 1.0 / d, 5 * m2[i].se()) << i;
        EXPECT_NEAR(m4[i].mean(), 3.0 / (d * (d + 2.0)), 5 * m4[i].se()) << i;
        if (i + 1 < d) {
            EXPECT_NEAR(cross[i].mean(), 0.0, 5 * cross[i].se()) << i;
        }
    }
}

TEST(UnitVectorsAdversary_Stat, OneDimensionalSignsAreFair) {
    const auto p = UnitVectors::resolve(keys<UnitVectors>(), Problem{1, 20000, 1});
    std::vector<long> counts(2, 0);
    for (std::uint64_t t = 1; t <= 20000; ++t) {
        const double x = advtest::row<UnitVectors>(p, ctx(73), t)[0];
        ASSERT_NEAR(std::fabs(x), 1.0, 1e-15);
        ++counts[x > 0];
    }
    EXPECT_GT(chi_square_uniform_pvalue(counts), kAlpha);
}

// ---- drifting -----------------------------------------------------------------------------------

TEST(DriftingAdversary, DefaultsUnitNormAndNoNoiseGivesTheta) {
    EXPECT_EQ(Drifting::resolve(keys<Drifting>(), Problem{3, 10, 1}).noise_scale, 1.0);
    for (std::uint32_t d : {1u, 2u, 7u, 200u}) {
        const auto p = Drifting::resolve(keys<Drifting>({{"noise_scale", 3.0}}), Problem{d, 200, 1});
        const auto still = Drifting::resolve(keys<Drifting>({{"noise_scale", 0.0}}), Problem{d, 200, 1});
        for (std::uint32_t seq : {kSharedSequence, 9u}) {
            std::vector<double> theta(d);
            Drifting::direction(p, ctx(81, seq), theta.data());
            ASSERT_NEAR(norm2(theta), 1.0, 1e-12);
            for (std::uint64_t t = 1; t <= 200; ++t) {
                ASSERT_NEAR(norm2(advtest::row<Drifting>(p, ctx(81, seq), t)), 1.0, 1e-12);
                const auto l0 = advtest::row<Drifting>(still, ctx(81, seq), t);
                for (std::uint32_t i = 0; i < d; ++i) ASSERT_NEAR(l0[i], theta[i], 1e-15);
            }
        }
    }
}

TEST(DriftingAdversary_Stat, MeanDirectionIsTheta) {
    // d = 8, noise_scale 1, 40000 rounds: the mean loss is c theta. Its component orthogonal to theta
    // is 0 within 5 SE per coordinate, its component along theta is positive (> 20 SE), and the angle
    // between the mean and theta is below 1 degree.
    const std::uint32_t d = 8;
    const std::uint64_t T = 40000;
    const auto p = Drifting::resolve(keys<Drifting>({{"noise_scale", 1.0}}), Problem{d, T, 1});
    const SequenceCtx c = ctx(82);
    std::vector<double> theta(d);
    Drifting::direction(p, c, theta.data());
    Moment along;
    std::vector<Moment> ortho(d);
    std::vector<double> mean(d, 0.0);
    for (std::uint64_t t = 1; t <= T; ++t) {
        const auto l = advtest::row<Drifting>(p, c, t);
        double dot = 0;
        for (std::uint32_t i = 0; i < d; ++i) dot += l[i] * theta[i];
        along.add(dot);
        for (std::uint32_t i = 0; i < d; ++i) {
            ortho[i].add(l[i] - dot * theta[i]);
            mean[i] += l[i] / static_cast<double>(T);
        }
    }
    EXPECT_GT(along.mean(), 20 * along.se());
    for (std::uint32_t i = 0; i < d; ++i) EXPECT_NEAR(ortho[i].mean(), 0.0, 5 * ortho[i].se()) << i;
    double dot = 0;
    for (std::uint32_t i = 0; i < d; ++i) dot += mean[i] * theta[i];
    EXPECT_GT(dot / norm2(mean), std::cos(kPi / 180));
}

TEST(DriftingAdversary_Stat, ThetaIsUniformOverSequences) {
    // 4000 per-instance thetas in d = 3: E theta = 0 and E theta_i^2 = 1/3 within 5 SE.
    const std::uint32_t d = 3;
    const auto p = Drifting::resolve(keys<Drifting>(), Problem{d, 1, 1});
    std::vector<Moment> m1(d), m2(d);
    for (std::uint32_t s = 0; s < 4000; ++s) {
        std::vector<double> theta(d);
        Drifting::direction(p, ctx(83, s), theta.data());
        for (std::uint32_t i = 0; i < d; ++i) m1[i].add(theta[i]), m2[i].add(theta[i] * theta[i]);
    }
    for (std::uint32_t i = 0; i < d; ++i) {
        EXPECT_NEAR(m1[i].mean(), 0.0, 5 * m1[i].se());
        EXPECT_NEAR(m2[i].mean(), 1.0 / 3, 5 * m2[i].se());
    }
}

// ---- cube-coordinate ----------------------------------------------------------------------------

TEST(CubeCoordinateAdversary, ExactlyOneSignedUnitEntry) {
    for (std::uint32_t d : {1u, 2u, 5u, 64u}) {
        const auto p = CubeCoordinate::resolve(keys<CubeCoordinate>(), Problem{d, 500, 1});
        for (std::uint64_t t = 1; t <= 500; ++t) {
            const auto l = advtest::row<CubeCoordinate>(p, ctx(91, 2), t);
            int nonzero = 0;
            double l1 = 0;
            for (double x : l) {
                if (x != 0.0) {
                    ++nonzero;
                    ASSERT_EQ(std::fabs(x), 1.0);
                }
                l1 += std::fabs(x);
            }
            ASSERT_EQ(nonzero, 1);
            ASSERT_EQ(l1, 1.0);
        }
    }
}

namespace {
std::uint32_t signed_coordinate(const std::vector<double>& l) {
    for (std::uint32_t i = 0; i < l.size(); ++i)
        if (l[i] != 0.0) return 2 * i + (l[i] > 0);
    return ~0u;
}
} // namespace

TEST(CubeCoordinateAdversary_Stat, CoordinateAndSignAreUniform) {
    // d = 10: (coordinate, sign) uniform over 20 cells (2000 each). d = 3: consecutive rounds
    // independent, (cell_t, cell_{t+1}) uniform over 36 cells (1000 each).
    {
        const auto p = CubeCoordinate::resolve(keys<CubeCoordinate>(), Problem{10, 40000, 1});
        std::vector<long> counts(20, 0);
        for (std::uint64_t t = 1; t <= 40000; ++t) {
            const std::uint32_t cell = signed_coordinate(advtest::row<CubeCoordinate>(p, ctx(92), t));
            ASSERT_LT(cell, 20u);
            ++counts[cell];
        }
        EXPECT_GT(chi_square_uniform_pvalue(counts), kAlpha);
    }
    {
        const auto p = CubeCoordinate::resolve(keys<CubeCoordinate>(), Problem{3, 36001, 1});
        std::vector<long> counts(36, 0);
        std::uint32_t prev = signed_coordinate(advtest::row<CubeCoordinate>(p, ctx(93, 1), 1));
        for (std::uint64_t t = 2; t <= 36001; ++t) {
            const std::uint32_t cur = signed_coordinate(advtest::row<CubeCoordinate>(p, ctx(93, 1), t));
            ASSERT_LT(cur, 6u);
            ++counts[prev * 6 + cur];
            prev = cur;
        }
        EXPECT_GT(chi_square_uniform_pvalue(counts), kAlpha);
    }
}

// ---- cube-drift -----------------------------------------------------------------------------------

namespace {
CubeDrift::Params drift_params(std::uint32_t d, std::uint64_t T, double drift) {
    return CubeDrift::resolve(keys<CubeDrift>({{"drift", drift}}), Problem{d, T, 1});
}
} // namespace

TEST(CubeDriftAdversary, DefaultsAndExactlyOneSignedUnitEntry) {
    EXPECT_EQ(CubeDrift::resolve(keys<CubeDrift>(), Problem{3, 10, 1}).drift, 0.5);
    for (double drift : {0.0, 0.3, 1.0})
        for (std::uint32_t d : {1u, 2u, 5u, 64u}) {
            const auto p = drift_params(d, 300, drift);
            for (std::uint64_t t = 1; t <= 300; ++t) {
                const auto l = advtest::row<CubeDrift>(p, ctx(31, 4), t);
                int nonzero = 0;
                for (double x : l)
                    if (x != 0.0) {
                        ++nonzero;
                        ASSERT_EQ(std::fabs(x), 1.0);
                    }
                ASSERT_EQ(nonzero, 1) << "d = " << d;
            }
        }
}

TEST(CubeDriftAdversary, FullDriftPointsEveryLossAwayFromTheCorner) {
    // drift = 1: sigma_t = -c*_{i_t} always, so l_t(i) c*_i <= 0 for every t and i, and the best corner
    // -sign(L_T) is c* on every coordinate that was drawn.
    const std::uint32_t d = 6;
    const auto p = drift_params(d, 2000, 1.0);
    for (const SequenceCtx c : {ctx(41), ctx(41, 0), ctx(42, 3)}) {
        std::vector<double> L(d, 0.0);
        for (std::uint64_t t = 1; t <= 2000; ++t) {
            const auto l = advtest::row<CubeDrift>(p, c, t);
            for (std::uint32_t i = 0; i < d; ++i) {
                ASSERT_LE(l[i] * CubeDrift::corner(p, c, i), 0.0);
                L[i] += l[i];
            }
        }
        for (std::uint32_t i = 0; i < d; ++i) {
            ASSERT_NE(L[i], 0.0) << "coordinate " << i << " never drawn in 2000 rounds";
            EXPECT_EQ(L[i] > 0 ? 1.0 : -1.0, -CubeDrift::corner(p, c, i)) << "coordinate " << i;
        }
    }
}

TEST(CubeDriftAdversary_Stat, MeanIsDriftOverDTowardMinusTheCorner) {
    // E l_t(i) = -(drift/d) c*_i: per-coordinate means within 5 standard errors, for two sequences (two
    // corners). The same test rejects the mean-zero cube-coordinate law and a doubled drift.
    const std::uint32_t d = 4;
    const double drift = 0.3;
    const std::uint64_t T = 200000;
    const auto p = drift_params(d, T, drift);
    for (const SequenceCtx c : {ctx(51), ctx(52, 7)}) {
        std::vector<Moment> m(d);
        for (std::uint64_t t = 1; t <= T; ++t) {
            const auto l = advtest::row<CubeDrift>(p, c, t);
            for (std::uint32_t i = 0; i < d; ++i) m[i].add(l[i]);
        }
        for (std::uint32_t i = 0; i < d; ++i) {
            const double want = -drift / d * CubeDrift::corner(p, c, i);
            EXPECT_NEAR(m[i].mean(), want, 5 * m[i].se()) << "coordinate " << i;
            EXPECT_GT(std::fabs(m[i].mean() - 0.0), 5 * m[i].se()) << "indistinguishable from mean zero";
            EXPECT_GT(std::fabs(m[i].mean() - 2 * want), 5 * m[i].se()) << "indistinguishable from 2 x drift";
        }
    }
}

TEST(CubeDriftAdversary_Stat, CornerIsUniformOverSequencesAndDriftZeroIsFair) {
    // d = 3: the corner over 8000 per-instance sequences is uniform over the 8 corners.
    {
        const auto p = drift_params(3, 1, 0.5);
        std::vector<long> counts(8, 0);
        for (std::uint32_t k = 0; k < 8000; ++k) {
            int cell = 0;
            for (std::uint32_t i = 0; i < 3; ++i) cell = 2 * cell + (CubeDrift::corner(p, ctx(61, k), i) > 0);
            ++counts[cell];
        }
        EXPECT_GT(chi_square_uniform_pvalue(counts), kAlpha);
    }
    // drift = 0: (coordinate, sign) uniform over the 2d cells, as cube-coordinate.
    {
        const auto p = drift_params(10, 40000, 0.0);
        std::vector<long> counts(20, 0);
        for (std::uint64_t t = 1; t <= 40000; ++t) {
            const std::uint32_t cell = signed_coordinate(advtest::row<CubeDrift>(p, ctx(62), t));
            ASSERT_LT(cell, 20u);
            ++counts[cell];
        }
        EXPECT_GT(chi_square_uniform_pvalue(counts), kAlpha);
    }
}

// ---- file-ball, file-cube ------------------------------------------------------------------------

TEST(FileLossSets, RowNormIsExactOnSimpleRowsAndSafeAtTheExtremes) {
    const double a[] = {0.6, -0.8, 0.0};
    EXPECT_EQ(loss_row_norm(Geometry::Ball, a, 3), 1.0);
    EXPECT_DOUBLE_EQ(loss_row_norm(Geometry::Cube, a, 3), 1.4);
    const double zero[] = {0.0, -0.0};
    EXPECT_EQ(loss_row_norm(Geometry::Ball, zero, 2), 0.0);
    // No overflow or underflow in the squares: 1e200 and 1e-200 scale out.
    const double huge[] = {3e200, 4e200};
    EXPECT_DOUBLE_EQ(loss_row_norm(Geometry::Ball, huge, 2), 5e200);
    const double tiny[] = {3e-200, -4e-200};
    EXPECT_DOUBLE_EQ(loss_row_norm(Geometry::Ball, tiny, 2), 5e-200);
    const double inf[] = {0.1, -std::numeric_limits<double>::infinity()};
    EXPECT_EQ(loss_row_norm(Geometry::Cube, inf, 2), std::numeric_limits<double>::infinity());
    const double nan[] = {0.1, std::nan("")};
    EXPECT_TRUE(std::isnan(loss_row_norm(Geometry::Ball, nan, 2)));
    const double nan_first[] = {std::nan(""), 0.1};
    EXPECT_TRUE(std::isnan(loss_row_norm(Geometry::Ball, nan_first, 2)));
    // A long row of equal entries 1/d has l1 norm 1 to a few ulp (compensated summation).
    std::vector<double> row(1u << 20, 1.0 / (1u << 20) / 3.0 * 3.0);
    EXPECT_NEAR(loss_row_norm(Geometry::Cube, row.data(), static_cast<std::uint32_t>(row.size())), 1.0, 1e-15);
}

namespace {
/// check() of a file kind on a T x d matrix, with the message.
template <class F>
bool file_check(const std::vector<double>& data, std::uint32_t d, std::string* message = nullptr) {
    KeyValues kv;
    kv.given[F::kPath] = true;
    kv.list[F::kPath] = data.data();
    kv.list_size[F::kPath] = data.size();
    Diagnostic diag;
    const bool ok = F::check(kv, Problem{d, data.size() / d, 1}, diag);
    if (message) *message = diag.message;
    if (!ok) EXPECT_STREQ(diag.key, "path");
    return ok;
}
} // namespace

TEST(FileLossSets, EachKindChecksItsOwnSetAndReplaysTheMatrix) {
    EXPECT_EQ(FileBall::kGeometry, Geometry::Ball);
    EXPECT_EQ(FileCube::kGeometry, Geometry::Cube);
    EXPECT_TRUE(FileBall::kSharedOnly && FileCube::kSharedOnly);
    // Row 1 has ||.||_2 = 1 and ||.||_1 = 1.4; row 2 is small: a ball matrix, not a cube matrix.
    const std::vector<double> m = {0.6, -0.8, 0.1, 0.2};
    std::string msg;
    EXPECT_TRUE(file_check<FileBall>(m, 2, &msg)) << msg;
    EXPECT_FALSE(file_check<FileCube>(m, 2, &msg));
    EXPECT_NE(msg.find("row 1 has ||l||_1 = 1.4000000000000001"), std::string::npos) << msg;
    EXPECT_FALSE(file_check<File>(m, 2, &msg)); // -0.8 is not an expert loss
    // Rounding above 1 (a normalised row) is accepted; 1 + 1e-9 is not.
    const double s = 1.0 / std::sqrt(3.0);
    EXPECT_TRUE(file_check<FileBall>({s, s, s}, 3, &msg)) << msg;
    EXPECT_TRUE(file_check<FileCube>({0.5, -0.5 - 1e-13}, 2, &msg)) << msg;
    EXPECT_FALSE(file_check<FileCube>({0.5, -0.5 - 1e-9}, 2, &msg));
    EXPECT_NE(msg.find("row 1 has ||l||_1 = 1.00000000"), std::string::npos) << msg;
    EXPECT_FALSE(file_check<FileBall>({0.0, 0.0, 0.0, std::nan("")}, 2, &msg));
    EXPECT_NE(msg.find("row 2"), std::string::npos) << msg;
    // fill() returns row t - 1 whatever the context.
    KeyValues kv;
    kv.given[FileCube::kPath] = true;
    const std::vector<double> cube = {0.25, -0.75, 0.0, 1.0, -0.5, 0.5};
    kv.list[FileCube::kPath] = cube.data();
    kv.list_size[FileCube::kPath] = cube.size();
    const auto p = FileCube::resolve(kv, Problem{2, 3, 1});
    for (std::uint64_t t = 1; t <= 3; ++t)
        for (const SequenceCtx c : {ctx(1), ctx(2, 7)})
            EXPECT_EQ(advtest::row<FileCube>(p, c, t), (std::vector<double>{cube[2 * t - 2], cube[2 * t - 1]}));
}
