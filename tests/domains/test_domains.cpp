// The decision sets of kernels/domains/: every LO oracle against brute force over the set's
// vertices on small instances (random and tied directions), the affine-hull dimension against the rank of the
// vertex differences, the diameter against the largest vertex distance, the parallel-subspace projection and the
// Euclidean projection by their defining properties, and the graph validation's errors naming the edge or node.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/domains/build.hpp"
#include "kernels/domains/domain.hpp"

namespace dpr::domains {
namespace {

using Vec = std::vector<double>;

struct Keys {
    KeyValues kv;
    Vec edges;
    Keys& set(DomainKind k) { return num(kSet, static_cast<double>(k)); }
    Keys& num(int i, double v) {
        kv.num[i] = v;
        kv.given[i] = true;
        return *this;
    }
    Keys& edge_list(std::vector<std::pair<int, int>> es) {
        edges.clear();
        for (auto [a, b] : es) edges.push_back(a), edges.push_back(b);
        kv.list[kEdges] = edges.data();
        kv.list_size[kEdges] = edges.size();
        kv.given[kEdges] = true;
        return num(kGraph, 1);
    }
};

Domain make(Keys& k, std::uint32_t d = 0) {
    Domain D;
    Diagnostic diag;
    const std::uint32_t dim = domain_dimension(k.kv);
    EXPECT_TRUE(build_domain(k.kv, dim ? dim : d, D, diag)) << diag.message;
    return D;
}

std::string error_of(Keys& k, std::uint32_t d, const char** key = nullptr) {
    Domain D;
    Diagnostic diag;
    const std::uint32_t dim = domain_dimension(k.kv);
    EXPECT_FALSE(build_domain(k.kv, dim && dim != kInvalidDimension ? dim : d, D, diag));
    if (key) *key = diag.key;
    return diag.message;
}

/// Every vertex of D (finite sets), by enumeration independent of the oracles.
std::vector<Vec> vertices(const Domain& D) {
    std::vector<Vec> out;
    const std::uint32_t n = D.n;
    switch (D.kind) {
    case DomainKind::Simplex:
        for (std::uint32_t i = 0; i < n; ++i) {
            Vec x(n, 0.0);
            x[i] = 1.0;
            out.push_back(x);
        }
        break;
    case DomainKind::L1Ball:
        for (std::uint32_t i = 0; i < n; ++i)
            for (double s : {-1.0, 1.0}) {
                Vec x(n, 0.0);
                x[i] = s * D.radius;
                out.push_back(x);
            }
        break;
    case DomainKind::Cube:
        for (std::uint32_t m = 0; m < (1u << n); ++m) {
            Vec x(n);
            for (std::uint32_t i = 0; i < n; ++i) x[i] = (m >> i & 1) ? 1.0 : -1.0;
            out.push_back(x);
        }
        break;
    case DomainKind::KSubsets:
        for (std::uint32_t m = 0; m < (1u << n); ++m)
            if (static_cast<std::uint32_t>(__builtin_popcount(m)) == D.k) {
                Vec x(n);
                for (std::uint32_t i = 0; i < n; ++i) x[i] = (m >> i) & 1;
                out.push_back(x);
            }
        break;
    case DomainKind::SpanningTree:
        for (std::uint32_t m = 0; m < (1u << n); ++m) {
            if (static_cast<std::uint32_t>(__builtin_popcount(m)) != D.nodes - 1) continue;
            std::vector<int> comp(D.nodes);
            std::iota(comp.begin(), comp.end(), 0);
            std::function<int(int)> root = [&](int a) { return comp[a] == a ? a : root(comp[a]); };
            bool acyclic = true;
            for (std::uint32_t e = 0; e < n && acyclic; ++e)
                if (m >> e & 1) {
                    const int a = root(D.tail[e]), b = root(D.head[e]);
                    if (a == b) acyclic = false;
                    else comp[a] = b;
                }
            if (!acyclic) continue;
            Vec x(n);
            for (std::uint32_t e = 0; e < n; ++e) x[e] = (m >> e) & 1;
            out.push_back(x);
        }
        break;
    case DomainKind::StPath: {
        Vec x(n, 0.0);
        std::function<void(std::uint32_t)> walk = [&](std::uint32_t a) {
            if (a == D.target) {
                out.push_back(x);
                return;
            }
            for (std::uint32_t e = 0; e < n; ++e)
                if (D.tail[e] == a) {
                    x[e] = 1.0;
                    walk(D.head[e]);
                    x[e] = 0.0;
                }
        };
        walk(D.source);
        break;
    }
    default:
        break;
    }
    return out;
}

/// Rank of the rows (Gaussian elimination with partial pivoting).
std::uint32_t rank_of(std::vector<Vec> rows) {
    std::uint32_t r = 0;
    const std::size_t cols = rows.empty() ? 0 : rows[0].size();
    for (std::size_t c = 0; c < cols && r < rows.size(); ++c) {
        std::size_t piv = r;
        for (std::size_t i = r; i < rows.size(); ++i)
            if (std::fabs(rows[i][c]) > std::fabs(rows[piv][c])) piv = i;
        if (std::fabs(rows[piv][c]) < 1e-9) continue;
        std::swap(rows[piv], rows[r]);
        for (std::size_t i = 0; i < rows.size(); ++i)
            if (i != r) {
                const double f = rows[i][c] / rows[r][c];
                for (std::size_t j = 0; j < cols; ++j) rows[i][j] -= f * rows[r][j];
            }
        ++r;
    }
    return r;
}

double dotv(const Vec& a, const Vec& b) { return std::inner_product(a.begin(), a.end(), b.begin(), 0.0); }

/// LO(v) is one of the vertices and attains the brute-force minimum, for random and tied directions.
void check_oracle(const Domain& D, std::uint64_t seed) {
    const std::vector<Vec> V = vertices(D);
    ASSERT_FALSE(V.empty());
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> z;
    std::uniform_int_distribution<int> small(-2, 2);
    Vec x(D.n), scratch(scratch_size(D));
    for (int trial = 0; trial < 200; ++trial) {
        Vec v(D.n);
        for (auto& c : v) c = trial % 2 ? z(gen) : static_cast<double>(small(gen)); // odd: generic, even: ties
        lo(D, v.data(), x.data(), scratch.data());
        double best = HUGE_VAL;
        for (const Vec& w : V) best = std::min(best, dotv(v, w));
        EXPECT_NEAR(dotv(v, x), best, 1e-12) << domain_name(D.kind) << " trial " << trial;
        EXPECT_TRUE(std::find(V.begin(), V.end(), x) != V.end()) << domain_name(D.kind) << ": LO returned a non-vertex";
    }
    // dim aff = rank of the vertex differences; the diameter bounds (and for these sets equals) the vertex spread.
    std::vector<Vec> diffs;
    double spread = 0.0;
    for (const Vec& w : V) {
        Vec dlt(D.n);
        for (std::uint32_t i = 0; i < D.n; ++i) dlt[i] = w[i] - V[0][i];
        diffs.push_back(dlt);
        for (const Vec& w2 : V) {
            double sq = 0.0;
            for (std::uint32_t i = 0; i < D.n; ++i) sq += (w[i] - w2[i]) * (w[i] - w2[i]);
            spread = std::max(spread, std::sqrt(sq));
        }
    }
    EXPECT_EQ(D.dim_aff, rank_of(diffs)) << domain_name(D.kind);
    EXPECT_GE(D.diameter, spread - 1e-12) << domain_name(D.kind);
    if (!D.graph()) {
        EXPECT_NEAR(D.diameter, spread, 1e-12) << domain_name(D.kind);
    }

    // project_parallel: idempotent, orthogonal residual, and the result moves between vertices' affine span
    // (every difference of vertices is fixed by it).
    for (int trial = 0; trial < 20; ++trial) {
        Vec u(D.n), w;
        for (auto& c : u) c = z(gen);
        const Vec orig = u;
        project_parallel(D, u.data(), scratch.data());
        w = u;
        project_parallel(D, w.data(), scratch.data());
        for (std::uint32_t i = 0; i < D.n; ++i) EXPECT_NEAR(w[i], u[i], 1e-9) << domain_name(D.kind);
        Vec res(D.n);
        for (std::uint32_t i = 0; i < D.n; ++i) res[i] = orig[i] - u[i];
        EXPECT_NEAR(dotv(res, u), 0.0, 1e-9) << domain_name(D.kind);
        for (const Vec& dlt : diffs) EXPECT_NEAR(dotv(res, dlt), 0.0, 1e-9) << domain_name(D.kind);
    }
}

TEST(Domains, OraclesMatchBruteForceOnTheSimpleSets) {
    for (std::uint32_t n : {2u, 3u, 5u, 8u}) {
        Keys s;
        s.set(DomainKind::Simplex);
        check_oracle(make(s, n), n);
        Keys l1;
        l1.set(DomainKind::L1Ball).num(kRadius, 1.5);
        check_oracle(make(l1, n), 10 + n);
        Keys c;
        c.set(DomainKind::Cube);
        check_oracle(make(c, n), 20 + n);
        for (std::uint32_t k = 1; k < n; ++k) {
            Keys ks;
            ks.set(DomainKind::KSubsets).num(kK, k);
            check_oracle(make(ks, n), 30 + n * 10 + k);
        }
    }
}

// The k-subsets oracle selects the k smallest by quickselect (domain.hpp detail::select_smallest), not by sorting:
// the same set as the first k of the (v, index) sort, on random values, heavy ties, sorted and reversed input, all
// equal, an organ pipe, at sizes past the insertion-sort cut-off, with the default partition budget and with budgets
// that force the heap-sort fallback early; lo() is 1 exactly on that set.
TEST(Domains, KSubsetsOracleSelectsWhatTheSortPutsFirst) {
    std::mt19937_64 gen(41);
    std::normal_distribution<double> z;
    for (std::uint32_t n : {17u, 33u, 100u, 1024u}) {
        std::vector<Vec> inputs(6, Vec(n));
        for (std::uint32_t i = 0; i < n; ++i) {
            inputs[0][i] = z(gen);
            inputs[1][i] = std::floor(3.0 * std::fabs(z(gen))); // heavy ties
            inputs[2][i] = i;                                     // sorted
            inputs[3][i] = n - i;                                 // reversed
            inputs[4][i] = 0.5;                                   // all equal
            inputs[5][i] = std::min(i, n - i);                    // organ pipe
        }
        for (const Vec& v : inputs)
            for (std::uint32_t k : {1u, n / 3, n / 2, n - 1}) {
                Vec sorted(n), sel(n);
                detail::sort_indices(v.data(), sorted.data(), n);
                std::vector<int> want(n, 0);
                for (std::uint32_t j = 0; j < k; ++j) want[static_cast<std::uint32_t>(sorted[j])] = 1;
                for (int budget : {-1, 0, 1, 3}) {
                    detail::select_smallest(v.data(), sel.data(), n, k, budget);
                    std::vector<int> got(n, 0);
                    for (std::uint32_t j = 0; j < k; ++j) got[static_cast<std::uint32_t>(sel[j])] += 1;
                    EXPECT_EQ(got, want) << "n " << n << " k " << k << " budget " << budget << " v[0] " << v[0];
                }
                Keys keys;
                keys.set(DomainKind::KSubsets).num(kK, k);
                const Domain D = make(keys, n);
                Vec x(n), scratch(scratch_size(D));
                lo(D, v.data(), x.data(), scratch.data());
                for (std::uint32_t i = 0; i < n; ++i) EXPECT_EQ(x[i], want[i]) << "n " << n << " k " << k << " i " << i;
            }
    }
}

TEST(Domains, L2BallOracleIsTheScaledNegativeDirection) {
    Keys b;
    b.set(DomainKind::L2Ball).num(kRadius, 2.0);
    const Domain D = make(b, 4);
    EXPECT_EQ(D.dim_aff, 4u);
    EXPECT_DOUBLE_EQ(D.diameter, 4.0);
    std::mt19937_64 gen(3);
    std::normal_distribution<double> z;
    Vec x(4), scratch(scratch_size(D));
    for (int trial = 0; trial < 50; ++trial) {
        Vec v(4), w(4);
        for (auto& c : v) c = z(gen);
        lo(D, v.data(), x.data(), scratch.data());
        EXPECT_NEAR(std::sqrt(dotv(x, x)), 2.0, 1e-12);
        for (int s = 0; s < 20; ++s) { // no point of the sphere does better
            for (auto& c : w) c = z(gen);
            const double nw = std::sqrt(dotv(w, w));
            for (auto& c : w) c *= 2.0 / nw;
            EXPECT_LE(dotv(v, x), dotv(v, w) + 1e-12);
        }
    }
}

TEST(Domains, SpanningTreeOracleIsAMinimumSpanningTree) {
    Keys k4;
    k4.set(DomainKind::SpanningTree).num(kNodes, 4); // K_4: 6 edges, 16 trees, one block
    const Domain a = make(k4);
    EXPECT_EQ(a.n, 6u);
    EXPECT_EQ(a.blocks, 1u);
    check_oracle(a, 1);
    // Two triangles joined by a bridge: 3 blocks, dim aff = 7 - 3 = 4; the bridge is in every tree.
    Keys bridge;
    bridge.set(DomainKind::SpanningTree).edge_list({{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 5}, {5, 3}});
    const Domain b = make(bridge);
    EXPECT_EQ(b.blocks, 3u);
    EXPECT_EQ(b.dim_aff, 4u);
    check_oracle(b, 2);
    // A multigraph with a parallel edge and a pendant path.
    Keys multi;
    multi.set(DomainKind::SpanningTree).edge_list({{0, 1}, {0, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 4}, {4, 5}, {0, 2}});
    check_oracle(make(multi), 3);
    // K_5 (10 edges).
    Keys k5;
    k5.set(DomainKind::SpanningTree).num(kNodes, 5);
    check_oracle(make(k5), 4);
}

TEST(Domains, StPathOracleIsAShortestPath) {
    Keys dag;
    dag.set(DomainKind::StPath).num(kNodes, 5); // complete DAG 0 -> 4: 8 paths, dim = 10 - 5 + 1 = 6
    const Domain a = make(dag);
    EXPECT_EQ(a.n, 10u);
    EXPECT_EQ(a.longest_path, 4u);
    check_oracle(a, 5);
    // Edges listed out of topological order, a dead end (3 -> 5) and an edge into s (6 -> 0) off every s-t path.
    Keys messy;
    messy.set(DomainKind::StPath)
        .edge_list({{2, 4}, {0, 2}, {1, 2}, {0, 1}, {3, 5}, {1, 3}, {3, 4}, {6, 0}, {2, 3}})
        .num(kTarget, 4);
    const Domain b = make(messy);
    EXPECT_EQ(b.group[4], 0); // 3 -> 5 leads nowhere
    EXPECT_EQ(b.group[7], 0); // 6 -> 0 comes from nowhere s reaches
    check_oracle(b, 6);
}

// The simplex and l1-ball projections (Michelot's finite algorithm, domain.hpp detail::simplex_shift) against two
// independent references: the sort-based exact shift (sort a descending, rho = the last j with a_(j) > (sum_{i<=j}
// a_(i) - mass) / j, tau that value at rho; Held, Wolfe & Crowder 1974 / Duchi et al. 2008) and a 200-halving
// bisection of the mass in tau, both to 1e-12 relative to the largest |a_i|; on random vectors of n = 2 .. 1024 at two
// scales, on ties (every
// value equal, pairs of equal values), on a point already in the set, and on one huge coordinate.
TEST(Domains, SimplexAndL1BallProjectionsAreExact) {
    const auto sorted_shift = [](Vec a, double mass) {
        std::sort(a.begin(), a.end(), std::greater<double>());
        double s = 0.0, tau = 0.0;
        for (std::size_t j = 0; j < a.size(); ++j) {
            s += a[j];
            const double t = (s - mass) / static_cast<double>(j + 1);
            if (a[j] > t) tau = t;
        }
        return tau;
    };
    const auto bisected_shift = [](const Vec& a, double mass) {
        double lo = *std::min_element(a.begin(), a.end()) - mass, hi = *std::max_element(a.begin(), a.end());
        for (int it = 0; it < 200; ++it) {
            const double mid = 0.5 * (lo + hi);
            double m = 0.0;
            for (double c : a) m += std::max(c - mid, 0.0);
            (m > mass ? lo : hi) = mid;
        }
        return 0.5 * (lo + hi);
    };
    std::mt19937_64 gen(31);
    std::normal_distribution<double> z;
    std::vector<Vec> inputs;
    for (std::uint32_t n : {2u, 3u, 6u, 64u, 1024u})
        for (double scale : {1.5, 100.0}) {
            Vec v(n);
            for (auto& c : v) c = scale * z(gen);
            inputs.push_back(v);
        }
    inputs.push_back(Vec(64, 0.3));                                   // every value equal
    inputs.push_back({0.5, 0.5, -0.2, 0.9, 0.9, 0.1});                // pairs of equal values
    inputs.push_back({0.2, 0.3, 0.5, 0.0});                           // in the simplex already
    inputs.push_back({1e6, -3.0, 2.0, 0.5});                          // one huge coordinate
    for (DomainKind kind : {DomainKind::Simplex, DomainKind::L1Ball}) {
        for (const Vec& v : inputs) {
            Keys k;
            k.set(kind);
            const Domain D = make(k, static_cast<std::uint32_t>(v.size()));
            Vec a(v.size()), x(v.size());
            double l1 = 0.0;
            for (std::size_t i = 0; i < v.size(); ++i) {
                a[i] = kind == DomainKind::L1Ball ? std::fabs(v[i]) : v[i];
                l1 += std::fabs(v[i]);
            }
            ASSERT_TRUE(project(D, v.data(), x.data()));
            if (kind == DomainKind::L1Ball && l1 <= 1.0) {
                EXPECT_EQ(x, v) << "inside the ball: the point itself";
                continue;
            }
            const double t_sort = sorted_shift(a, 1.0), t_bisect = bisected_shift(a, 1.0);
            double scale = 1.0;
            for (double c : a) scale = std::max(scale, 1.0 + std::fabs(c));
            double mass = 0.0;
            for (std::size_t i = 0; i < v.size(); ++i) {
                const double want = std::max(a[i] - t_sort, 0.0) * (kind == DomainKind::L1Ball && v[i] < 0 ? -1 : 1);
                const double bisect = std::max(a[i] - t_bisect, 0.0) * (kind == DomainKind::L1Ball && v[i] < 0 ? -1 : 1);
                EXPECT_NEAR(x[i], want, 1e-12 * scale) << domain_name(kind) << " n " << v.size() << " i " << i;
                EXPECT_NEAR(x[i], bisect, 1e-12 * scale) << domain_name(kind) << " n " << v.size() << " i " << i;
                mass += std::fabs(x[i]);
            }
            EXPECT_NEAR(mass, 1.0, 1e-12 * scale) << domain_name(kind) << " n " << v.size();
        }
    }
}

// The k-subsets projection (domain.hpp detail::capped_shift: bisection until one linear piece is bracketed, then its
// root) against two independent references: the breakpoint-sorted exact shift (f(tau) = sum_i clip(v_i - tau, 0, 1)
// at every sorted breakpoint v_i - 1, v_i; the root by linear interpolation on the piece where f crosses k) and a
// 200-halving bisection, both to 1e-12 relative to the largest |v_i|; the result lies in the set (0 <= x <= 1,
// sum x = k). On random vectors of n = 3 .. 1024 at two scales and k from 1 to n - 1, on ties (every value equal,
// two levels), on a vertex, and on one huge coordinate.
TEST(Domains, KSubsetsProjectionIsExact) {
    const auto mass_at = [](const Vec& v, double tau) {
        double m = 0.0;
        for (double c : v) m += std::clamp(c - tau, 0.0, 1.0);
        return m;
    };
    const auto sorted_shift = [&](const Vec& v, double k) {
        Vec b;
        for (double c : v) b.push_back(c - 1.0), b.push_back(c);
        std::sort(b.begin(), b.end());
        for (std::size_t j = 0; j + 1 < b.size(); ++j) {
            const double f0 = mass_at(v, b[j]), f1 = mass_at(v, b[j + 1]);
            if (f0 >= k && k >= f1 && f0 > f1) return b[j] + (f0 - k) * (b[j + 1] - b[j]) / (f0 - f1);
        }
        ADD_FAILURE() << "no piece crosses k";
        return 0.0;
    };
    const auto bisected_shift = [&](const Vec& v, double k) {
        double lo = *std::min_element(v.begin(), v.end()) - 1.0, hi = *std::max_element(v.begin(), v.end());
        for (int it = 0; it < 200; ++it) {
            const double mid = 0.5 * (lo + hi);
            (mass_at(v, mid) > k ? lo : hi) = mid;
        }
        return 0.5 * (lo + hi);
    };
    std::mt19937_64 gen(37);
    std::normal_distribution<double> z;
    std::vector<std::pair<Vec, std::uint32_t>> inputs; // (v, k)
    for (std::uint32_t n : {3u, 6u, 64u, 1024u})
        for (double scale : {0.4, 50.0}) {
            Vec v(n);
            for (auto& c : v) c = scale * z(gen);
            for (std::uint32_t k : {1u, n / 2, n - 1}) inputs.emplace_back(v, std::max(1u, k));
        }
    inputs.emplace_back(Vec(64, 0.3), 5);                                   // every value equal: x = k / n
    inputs.emplace_back(Vec{0.9, 0.9, 0.9, -0.2, -0.2, -0.2}, 2);           // two levels
    inputs.emplace_back(Vec{1.0, 0.0, 1.0, 0.0, 0.0}, 2);                   // a vertex already
    inputs.emplace_back(Vec{1e6, -3.0, 2.0, 0.5, 0.25}, 2);                 // one huge coordinate
    for (const auto& [v, kk] : inputs) {
        Keys keys;
        keys.set(DomainKind::KSubsets).num(kK, kk);
        const Domain D = make(keys, static_cast<std::uint32_t>(v.size()));
        Vec x(v.size());
        ASSERT_TRUE(project(D, v.data(), x.data()));
        const double t_sort = sorted_shift(v, kk), t_bisect = bisected_shift(v, kk);
        double scale = 1.0, mass = 0.0;
        for (double c : v) scale = std::max(scale, 1.0 + std::fabs(c));
        for (std::size_t i = 0; i < v.size(); ++i) {
            const std::string what = "n " + std::to_string(v.size()) + " k " + std::to_string(kk) + " i " + std::to_string(i);
            EXPECT_NEAR(x[i], std::clamp(v[i] - t_sort, 0.0, 1.0), 1e-12 * scale) << what;
            EXPECT_NEAR(x[i], std::clamp(v[i] - t_bisect, 0.0, 1.0), 1e-12 * scale) << what;
            EXPECT_GE(x[i], 0.0) << what;
            EXPECT_LE(x[i], 1.0) << what;
            mass += x[i];
        }
        EXPECT_NEAR(mass, kk, 1e-12 * v.size()) << "n " << v.size() << " k " << kk;
    }
}

TEST(Domains, EuclideanProjectionIsTheNearestPoint) {
    std::mt19937_64 gen(9);
    std::normal_distribution<double> z;
    for (DomainKind kind : {DomainKind::Simplex, DomainKind::L1Ball, DomainKind::L2Ball, DomainKind::Cube,
                            DomainKind::KSubsets}) {
        Keys k;
        k.set(kind).num(kK, 2);
        const Domain D = make(k, 6);
        ASSERT_TRUE(D.has_projection());
        const std::vector<Vec> V = kind == DomainKind::L2Ball ? std::vector<Vec>{} : vertices(D);
        Vec x(6), scratch(scratch_size(D));
        for (int trial = 0; trial < 100; ++trial) {
            Vec v(6);
            for (auto& c : v) c = 1.5 * z(gen);
            ASSERT_TRUE(project(D, v.data(), x.data()));
            // x is in D ...
            if (kind == DomainKind::Simplex || kind == DomainKind::KSubsets) {
                double s = 0.0;
                for (double c : x) {
                    s += c;
                    EXPECT_GE(c, -1e-12);
                    EXPECT_LE(c, 1.0 + 1e-12);
                }
                EXPECT_NEAR(s, kind == DomainKind::Simplex ? 1.0 : 2.0, 1e-12);
            } else if (kind == DomainKind::L1Ball) {
                double s = 0.0;
                for (double c : x) s += std::fabs(c);
                EXPECT_LE(s, 1.0 + 1e-12);
            } else if (kind == DomainKind::L2Ball) {
                EXPECT_LE(dotv(x, x), 1.0 + 1e-12);
            }
            // ... and the variational inequality <v - x, w - x> <= 0 holds for every vertex w (hence all of D).
            Vec r(6);
            for (int i = 0; i < 6; ++i) r[i] = v[i] - x[i];
            if (kind == DomainKind::L2Ball) {
                Vec w(6);
                lo(D, r.data(), w.data(), scratch.data()); // the worst point of the ball for this check
                for (auto& c : w) c = -c;
                EXPECT_LE(dotv(r, w) - dotv(r, x), 1e-9);
            } else {
                for (const Vec& w : V) EXPECT_LE(dotv(r, w) - dotv(r, x), 1e-9) << domain_name(kind);
            }
        }
    }
    Keys g;
    g.set(DomainKind::SpanningTree).num(kNodes, 4);
    Vec v(6, 0.0), x(6);
    EXPECT_FALSE(project(make(g), v.data(), x.data()));
}

TEST(Domains, InradiusIsTheLargestBallAroundTheCentreInsideTheSet) {
    // App. D's interior ball (c, r): c + r u lies in D for random unit u of the subspace parallel to aff(D) (the
    // projection moves it by < 1e-12), and r is tight: along the inward facet normal of some facet (the parallel
    // part of -e_i, e_i or a sign vector), c + 1.01 r u leaves D. shrink_towards_centre maps D + alpha r B into D.
    std::mt19937_64 gen(5);
    std::normal_distribution<double> z;
    for (DomainKind kind : {DomainKind::Simplex, DomainKind::L1Ball, DomainKind::L2Ball, DomainKind::Cube,
                            DomainKind::KSubsets}) {
        for (std::uint32_t n : {3u, 7u}) {
            Keys k;
            k.set(kind).num(kK, 2).num(kRadius, 1.5);
            const Domain D = make(k, n);
            const double r = inradius(D);
            ASSERT_GT(r, 0.0) << domain_name(kind);
            Vec c(n), x(n), y(n), u(n), scratch(scratch_size(D));
            ASSERT_TRUE(centre(D, c.data()));
            const auto dist = [&](const Vec& p) {
                EXPECT_TRUE(project(D, p.data(), y.data()));
                double s = 0.0;
                for (std::uint32_t i = 0; i < n; ++i) s += (p[i] - y[i]) * (p[i] - y[i]);
                return std::sqrt(s);
            };
            const auto unit = [&](Vec& v) {
                project_parallel(D, v.data(), scratch.data());
                const double nv = std::sqrt(dotv(v, v));
                for (auto& e : v) e /= nv;
            };
            for (int trial = 0; trial < 500; ++trial) {
                for (auto& e : u) e = z(gen);
                unit(u);
                for (std::uint32_t i = 0; i < n; ++i) x[i] = c[i] + r * u[i];
                EXPECT_LT(dist(x), 1e-12) << domain_name(kind) << " n " << n;
                // a point of D + alpha r B, shrunk, is in D: a vertex plus alpha r u
                Vec w(n), g(n);
                for (auto& e : g) e = z(gen);
                lo(D, g.data(), w.data(), scratch.data());
                for (std::uint32_t i = 0; i < n; ++i) w[i] += 0.3 * r * u[i];
                shrink_towards_centre(D, 0.3, w.data());
                EXPECT_LT(dist(w), 1e-12) << domain_name(kind) << " n " << n;
            }
            double exits = 0.0;
            for (std::uint32_t i = 0; i < n; ++i)
                for (double sgn : {-1.0, 1.0}) {
                    for (std::uint32_t j = 0; j < n; ++j) u[j] = sgn * (i == j ? 1.0 : 0.0);
                    Vec s(n, sgn);
                    for (Vec* v : {&u, &s}) {
                        unit(*v);
                        for (std::uint32_t j = 0; j < n; ++j) x[j] = c[j] + 1.01 * r * (*v)[j];
                        exits = std::max(exits, dist(x));
                    }
                }
            EXPECT_GT(exits, 1e-4 * r) << domain_name(kind) << " n " << n << ": r is not tight";
        }
    }
}

/// The largest violation of D's description at x (graph sets; 0 inside): spanning trees by Edmonds' inequalities
/// over every node set, s-t paths by the flow equations and x >= 0 -- independent of the code under test.
double violation(const Domain& D, const Vec& x) {
    const std::uint32_t n = D.n;
    double worst = 0.0;
    for (std::uint32_t e = 0; e < n; ++e) worst = std::max(worst, -x[e]);
    if (D.kind == DomainKind::SpanningTree) {
        worst = std::max(worst, std::fabs(std::accumulate(x.begin(), x.end(), 0.0) - (D.nodes - 1.0)));
        for (std::uint32_t S = 1; S < (1u << D.nodes); ++S) {
            double load = 0.0;
            for (std::uint32_t e = 0; e < n; ++e)
                if ((S >> D.tail[e] & 1) && (S >> D.head[e] & 1)) load += x[e];
            worst = std::max(worst, load - (__builtin_popcount(S) - 1.0));
        }
    } else {
        Vec net(D.nodes, 0.0);
        for (std::uint32_t e = 0; e < n; ++e) {
            net[D.tail[e]] += x[e];
            net[D.head[e]] -= x[e];
            if (!D.group[e]) worst = std::max(worst, std::fabs(x[e])); // off every s-t path
        }
        for (std::uint32_t a = 0; a < D.nodes; ++a)
            worst = std::max(worst, std::fabs(net[a] - (a == D.source ? 1.0 : a == D.target ? -1.0 : 0.0)));
    }
    return worst;
}

TEST(Domains, GraphSetsHaveACertifiedInteriorBall) {
    // build.hpp's interior ball (c, r) of a graph set: c + r u is in D for random unit u of the subspace parallel to
    // aff(D), r is tight (along the parallel part of some facet's outward normal, c + 1.01 r u leaves D), and
    // shrink_towards_centre maps a vertex + alpha r u into D (App. D). Membership is checked by the polytope's
    // description, not by the construction.
    std::mt19937_64 gen(11);
    std::normal_distribution<double> z;
    std::vector<Keys> graphs(8);
    graphs[0].set(DomainKind::SpanningTree).num(kNodes, 4);
    graphs[1].set(DomainKind::SpanningTree).edge_list({{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 5}, {5, 3}});
    graphs[2].set(DomainKind::SpanningTree).edge_list({{0, 1}, {0, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 4}, {4, 5}, {0, 2}});
    graphs[3].set(DomainKind::SpanningTree).num(kNodes, 6);
    graphs[4].set(DomainKind::StPath).num(kNodes, 5);
    graphs[5].set(DomainKind::StPath)
        .edge_list({{2, 4}, {0, 2}, {1, 2}, {0, 1}, {3, 5}, {1, 3}, {3, 4}, {6, 0}, {2, 3}})
        .num(kTarget, 4);
    // A triangle whose edge (0, 2) is repeated as (2, 0), and a triple edge. Every tree used one edge of
    // the pair, so the centre lay on the facet x(E({0, 2})) <= 1 and no ball was found (shrink was refused).
    graphs[6].set(DomainKind::SpanningTree).edge_list({{0, 1}, {1, 2}, {0, 2}, {2, 0}});
    graphs[7].set(DomainKind::SpanningTree).edge_list({{0, 1}, {1, 0}, {0, 1}, {1, 2}, {2, 0}});
    for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
        const Domain D = make(graphs[gi]);
        const std::uint32_t n = D.n;
        const double r = inradius(D);
        ASSERT_GT(r, 1e-3) << "graph " << gi;
        Vec c(n), x(n), u(n), scratch(scratch_size(D));
        ASSERT_TRUE(centre(D, c.data()));
        EXPECT_LT(violation(D, c), 1e-12) << "graph " << gi;
        const auto unit = [&](Vec& v) {
            project_parallel(D, v.data(), scratch.data());
            const double nv = std::sqrt(dotv(v, v));
            for (auto& e : v) e /= nv;
        };
        for (int trial = 0; trial < 300; ++trial) {
            for (auto& e : u) e = z(gen);
            unit(u);
            for (std::uint32_t i = 0; i < n; ++i) x[i] = c[i] + r * u[i];
            EXPECT_LT(violation(D, x), 1e-9) << "graph " << gi;
            Vec w(n), g(n);
            for (auto& e : g) e = z(gen);
            lo(D, g.data(), w.data(), scratch.data());
            for (std::uint32_t i = 0; i < n; ++i) w[i] += 0.3 * r * u[i];
            shrink_towards_centre(D, 0.3, w.data());
            EXPECT_LT(violation(D, w), 1e-9) << "graph " << gi;
        }
        // Tightness: the outward normals -e_e and (spanning trees) 1_{E(S)}, each made parallel to aff(D).
        std::vector<Vec> normals;
        for (std::uint32_t e = 0; e < n; ++e) {
            Vec a(n, 0.0);
            a[e] = -1.0;
            normals.push_back(a);
        }
        if (D.kind == DomainKind::SpanningTree)
            for (std::uint32_t S = 1; S < (1u << D.nodes); ++S) {
                Vec a(n, 0.0);
                for (std::uint32_t e = 0; e < n; ++e) a[e] = (S >> D.tail[e] & 1) && (S >> D.head[e] & 1);
                normals.push_back(a);
            }
        double exits = 0.0;
        for (Vec& a : normals) {
            project_parallel(D, a.data(), scratch.data());
            if (dotv(a, a) < 1e-12) continue; // constant on aff(D)
            unit(a);
            for (std::uint32_t i = 0; i < n; ++i) x[i] = c[i] + 1.01 * r * a[i];
            exits = std::max(exits, violation(D, x));
        }
        EXPECT_GT(exits, 1e-3 * r) << "graph " << gi << ": r is not tight";
    }
    Keys big;
    big.set(DomainKind::SpanningTree).num(kNodes, Domain::kMaxBallNodes + 1);
    EXPECT_EQ(inradius(make(big)), 0.0); // beyond the enumeration: no ball, and shrink is refused
    // A set of one point (a chain of 1023 edges from s to t) has dimension 0: no learner accepts it, and the O(m^3)
    // search for a ball (seconds at m = 1023) is skipped, so the centre stays unset.
    Keys chain;
    std::vector<std::pair<int, int>> edges;
    for (int a = 0; a < 1023; ++a) edges.push_back({a, a + 1});
    chain.set(DomainKind::StPath).edge_list(edges);
    const Domain one = make(chain);
    EXPECT_EQ(one.dim_aff, 0u);
    EXPECT_EQ(inradius(one), 0.0);
    for (std::uint32_t e = 0; e < one.n; ++e) ASSERT_EQ(one.ball_centre[e], 0.0) << "edge " << e;
}

TEST(Domains, BadKeysAndGraphsNameTheKeyEdgeOrNode) {
    const char* key = nullptr;
    {
        Keys k;
        k.set(DomainKind::KSubsets).num(kK, 6);
        EXPECT_NE(error_of(k, 6, &key).find("[1, d - 1]"), std::string::npos);
        EXPECT_STREQ(key, "k");
    }
    {
        Keys k;
        k.set(DomainKind::Simplex);
        EXPECT_NE(error_of(k, 1, &key).find("[2, 1024]"), std::string::npos);
        EXPECT_STREQ(key, "d");
    }
    {
        Keys k;
        k.set(DomainKind::SpanningTree).edge_list({{0, 1}, {2, 3}});
        EXPECT_NE(error_of(k, 0, &key).find("node 2 is not reachable"), std::string::npos);
        EXPECT_STREQ(key, "edges");
    }
    {
        Keys k;
        k.set(DomainKind::SpanningTree).edge_list({{0, 1}, {1, 1}});
        EXPECT_NE(error_of(k, 0, &key).find("edge 1 = (1, 1) is a self-loop"), std::string::npos);
    }
    {
        Keys k;
        k.set(DomainKind::StPath).edge_list({{0, 1}, {1, 2}, {2, 1}, {2, 3}});
        const std::string m = error_of(k, 0, &key);
        EXPECT_NE(m.find("directed cycle through edge"), std::string::npos) << m;
        EXPECT_TRUE(m.find("(1 -> 2)") != std::string::npos || m.find("(2 -> 1)") != std::string::npos) << m;
        EXPECT_STREQ(key, "edges");
    }
    {
        Keys k;
        k.set(DomainKind::StPath).edge_list({{0, 1}, {2, 3}}).num(kTarget, 3);
        EXPECT_NE(error_of(k, 0, &key).find("node 3 is not reachable from source = node 0"), std::string::npos);
        EXPECT_STREQ(key, "target");
    }
    {
        Keys k;
        k.set(DomainKind::StPath).num(kNodes, 4).num(kSource, 7);
        EXPECT_NE(error_of(k, 0, &key).find("is not a node"), std::string::npos);
        EXPECT_STREQ(key, "source");
    }
    {
        Keys k;
        k.set(DomainKind::SpanningTree).num(kNodes, 46);
        EXPECT_NE(error_of(k, 0, &key).find("1035 edges"), std::string::npos);
        EXPECT_STREQ(key, "nodes");
    }
    {
        Keys k;
        k.set(DomainKind::SpanningTree);
        k.edges = {0, 1, 2};
        k.kv.list[kEdges] = k.edges.data();
        k.kv.list_size[kEdges] = 3;
        k.kv.given[kEdges] = true;
        k.num(kGraph, 1);
        EXPECT_NE(error_of(k, 0, &key).find("pairs of node ids"), std::string::npos);
        EXPECT_EQ(domain_dimension(k.kv), kInvalidDimension);
    }
    {
        Keys k;
        k.set(DomainKind::SpanningTree).num(kNodes, 4);
        Domain D;
        Diagnostic diag;
        EXPECT_FALSE(build_domain(k.kv, 5, D, diag));
        EXPECT_STREQ(diag.key, "d");
        EXPECT_NE(std::string(diag.message).find("has 6 edges"), std::string::npos);
    }
}

} // namespace
} // namespace dpr::domains
