// The team versions of the projections (kernels/domains/team_ops.hpp) against their scalar twins in
// domain.hpp: on a one-lane team in double they must give the same bits (the same operations in the same
// order), on inputs that reach every branch -- points far outside and inside D, the l1 ball's own-projection
// case, tied coordinates (where Michelot's count can stop by rounding) and k-subsets inputs whose breakpoints
// lie too close for the bisection to separate; in float they must be the double projection to float rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/core/team.hpp"
#include "kernels/domains/build.hpp"
#include "kernels/domains/domain.hpp"
#include "kernels/domains/team_ops.hpp"

namespace dpr::domains {
namespace {

using Vec = std::vector<double>;

Domain make(DomainKind kind, std::uint32_t n, double radius = 1.0, std::uint32_t k = 3) {
    KeyValues kv;
    kv.num[kSet] = static_cast<double>(kind);
    kv.given[kSet] = true;
    kv.num[kK] = k;
    kv.given[kK] = kind == DomainKind::KSubsets;
    kv.num[kRadius] = radius;
    kv.given[kRadius] = kind == DomainKind::L1Ball || kind == DomainKind::L2Ball;
    Domain D;
    Diagnostic diag;
    EXPECT_TRUE(build_domain(kv, n, D, diag)) << diag.message;
    return D;
}

/// The five sets with a projection in dimension n (k-subsets: k = n / 4, at least 1).
std::vector<Domain> projectable_sets(std::uint32_t n) {
    return {make(DomainKind::Simplex, n), make(DomainKind::L1Ball, n, 2.5), make(DomainKind::L2Ball, n, 0.7),
            make(DomainKind::Cube, n), make(DomainKind::KSubsets, n, 1.0, n / 4 > 0 ? n / 4 : 1)};
}

template <class R>
std::vector<R> project_on_one_lane(const Domain& D, const Vec& v) {
    std::vector<R> in(v.begin(), v.end()), out(v.size(), R(-7));
    const SerialTeam<R> team(RngKey{1, 0}, 0);
    project_team(team, D, StridedView<R>{in.data(), 1, 0}, StridedView<R>{out.data(), 1, 0});
    return out;
}

/// Inputs of every kind for D: Gaussian points at scales from inside D to far outside it, points with many
/// equal coordinates, and (k-subsets) points whose coordinates differ by a few ulps.
std::vector<Vec> inputs(std::uint32_t n, std::mt19937_64& gen) {
    std::normal_distribution<double> z(0.0, 1.0);
    std::vector<Vec> out;
    for (double scale : {1e-3, 0.05, 0.3, 1.0, 10.0, 1e3})
        for (int rep = 0; rep < 20; ++rep) {
            Vec v(n);
            for (double& x : v) x = scale * z(gen);
            out.push_back(v);
        }
    for (int rep = 0; rep < 20; ++rep) { // ties: three distinct values
        Vec v(n);
        for (std::uint32_t i = 0; i < n; ++i)
            v[i] = 0.25 * static_cast<double>((i * 7 + rep) % 3) - 0.1 * rep;
        out.push_back(v);
    }
    for (int rep = 0; rep < 5;
         ++rep) { // signed zeros among small values (the l1 ball copies a point inside it)
        Vec v(n);
        for (std::uint32_t i = 0; i < n; ++i) v[i] = (i + rep) % 3 == 0 ? -0.0 : 1e-3 * z(gen);
        out.push_back(v);
    }
    for (int rep = 0; rep < 10; ++rep) { // breakpoints a few ulps apart
        Vec v(n);
        for (std::uint32_t i = 0; i < n; ++i) v[i] = std::nextafter(0.5 + 0.01 * rep, 1.0 + i % 4);
        out.push_back(v);
    }
    return out;
}

TEST(TeamOps, ProjectionsOnOneLaneInDoubleAreTheScalarProjectionsBitForBit) {
    std::mt19937_64 gen(3);
    int l1_inside = 0, l1_outside = 0;
    for (std::uint32_t n : {2u, 5u, 33u, 200u}) {
        for (const Domain& D : projectable_sets(n)) {
            if (D.kind == DomainKind::KSubsets && D.k >= n) continue;
            for (const Vec& v : inputs(n, gen)) {
                Vec want(n);
                ASSERT_TRUE(project(D, v.data(), want.data()));
                const Vec got = project_on_one_lane<double>(D, v);
                for (std::uint32_t i = 0; i < n; ++i)
                    ASSERT_TRUE(got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i]))
                        << domain_name(D.kind) << " n " << n << " coordinate " << i << " of " << v[0] << ", "
                        << v[n - 1] << " ...";
                if (D.kind == DomainKind::L1Ball) {
                    double norm = 0.0;
                    for (double x : v) norm += std::fabs(x);
                    (norm <= D.radius ? l1_inside : l1_outside)++;
                }
            }
        }
    }
    EXPECT_GT(l1_inside, 10);
    EXPECT_GT(l1_outside, 10);
}

TEST(TeamOps, ProjectionsInFloatAreTheDoubleProjectionsToFloatRounding) {
    std::mt19937_64 gen(4);
    std::normal_distribution<double> z(0.0, 1.0);
    const std::uint32_t n = 64;
    for (const Domain& D : projectable_sets(n)) {
        for (double scale : {0.01, 0.3, 3.0}) {
            for (int rep = 0; rep < 20; ++rep) {
                Vec v(n);
                for (double& x : v)
                    x = static_cast<double>(static_cast<float>(scale * z(gen))); // exact in float
                Vec want(n);
                ASSERT_TRUE(project(D, v.data(), want.data()));
                const std::vector<float> got = project_on_one_lane<float>(D, v);
                double sum = 0.0;
                for (std::uint32_t i = 0; i < n; ++i) {
                    ASSERT_NEAR(got[i], want[i], 1e-5 * (1.0 + scale))
                        << domain_name(D.kind) << " coordinate " << i;
                    sum += got[i];
                }
                if (D.kind == DomainKind::Simplex) EXPECT_NEAR(sum, 1.0, 1e-5);
                if (D.kind == DomainKind::KSubsets) EXPECT_NEAR(sum, static_cast<double>(D.k), 1e-4);
            }
        }
    }
}

TEST(TeamOps, TheProjectionReturnsTheSquaredDistanceItMoved) {
    std::mt19937_64 gen(5);
    std::normal_distribution<double> z(0.0, 1.0);
    const std::uint32_t n = 9;
    for (const Domain& D : projectable_sets(n))
        for (int rep = 0; rep < 50; ++rep) {
            Vec v(n), proj(n), want(n);
            for (double& x : v) x = (rep % 5) * z(gen);
            ASSERT_TRUE(project(D, v.data(), want.data()));
            double sq = 0.0;
            for (std::uint32_t i = 0; i < n; ++i) sq += (v[i] - want[i]) * (v[i] - want[i]);
            const SerialTeam<double> team(RngKey{1, 0}, 0);
            const double moved = project_team(team, D, StridedView<double>{v.data(), 1, 0},
                                              StridedView<double>{proj.data(), 1, 0});
            EXPECT_EQ(moved, sq) << domain_name(D.kind);
            EXPECT_EQ(proj, want) << domain_name(D.kind);
        }
}

} // namespace
} // namespace dpr::domains
