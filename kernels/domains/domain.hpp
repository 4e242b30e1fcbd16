#pragma once
// Decision sets given by a linear-optimisation (LO) oracle (docs/spec/env21.md §B3, docs/spec/checks.md §3.3): the
// sets on which the projection-free learners of ENV21 (kernels/learners/private_bandit_fw.hpp) play, and the
// projection-based FKM reference (kernels/learners/fkm.hpp) where projection is cheap.
//
//   kind           D                                              LO(v) = argmin_{x in D} <v, x>      diameter     dim aff
//   simplex        {x >= 0, sum x = 1}                            e_{argmin v}                         sqrt 2       n - 1
//   l1-ball        {||x||_1 <= r}                                 -r sign(v_i*) e_i*, i* = argmax |v_i| 2r           n
//   l2-ball        {||x||_2 <= r}                                 -r v / ||v||_2                       2r           n
//   cube           [-1, 1]^n                                      -sign(v)                             2 sqrt n     n
//   k-subsets      {x in [0,1]^n, sum x = k} (uniform matroid)    1 on the k smallest v_i              sqrt(2 min(k, n-k))  n - 1
//   spanning-tree  conv{1_T : T spanning tree of G}               minimum spanning tree (Kruskal)      <= sqrt(2(|V|-1))    |E| - #blocks
//   st-path        conv{1_P : P s-t path of the DAG G}            shortest s-t path (one pass over     <= sqrt(2 P_max)     |E'| - |V'| + 1
//                                                                 the edges in topological order)
// (#blocks: the 2-connected blocks of G, a bridge being a block of its own = the graphic matroid's connected
// components; E', V': the edges and nodes on some s-t path, P_max the most edges on one.) Ties are broken
// towards the lower index (coordinate, edge), so every oracle is a deterministic function of v.
//
// Each set also knows the linear subspace parallel to its affine hull, where the one-point estimator samples its
// direction (docs/spec/env21.md §B2, domain assumption: on a set that is not full-dimensional, u is drawn in the
// subspace parallel to aff(D) and n_eff = dim aff(D)): project_parallel() maps z in R^n to that subspace -- z minus
// its mean (simplex, k-subsets), minus its mean over the block of each edge (spanning tree: x(B) = rank(B) is
// constant on every block B), the projection onto the circulations of the useful subgraph (s-t paths: B x = const for
// its node-edge incidence B; computed as z - B^T phi, L phi = B z with L = B B^T its Laplacian, by conjugate
// gradients), identity otherwise. And, for the sets where it is cheap, the Euclidean projection onto D
// (project(): l2 ball and cube in closed form; simplex and l1 ball exactly by Michelot's finite algorithm; k-subsets
// exactly, by bisection on the shift of a clipped vector until it brackets one linear piece, then its root).
//
// Everything is scalar code over plain arrays with caller-provided scratch (scratch_size() doubles; indices are
// stored in doubles, exact below 2^53), callable from a GPU thread: no allocation, no recursion. lo() and
// project_parallel() also take StridedViews (kernels/core/team.hpp) for their arrays: an instance's state in an
// interleaved layout, read in place by a team's scalar section (each_instance). A Domain is
// trivially copyable and part of a learner's Params (about 16 KB with kMaxDim = 1024 edges/coordinates, the size
// the issue asks for: "n up to 1024 edges or coordinates"). Host code builds it from the adversary's keys and
// validates graphs (kernels/domains/build.hpp). Params go to a kernel by value: CUDA allows 32764 bytes of kernel
// parameters (12.1+, Volta+), so a Domain must stay well under that.
#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"

namespace dpr::domains {

enum class DomainKind : std::uint8_t { Simplex, L1Ball, L2Ball, Cube, KSubsets, SpanningTree, StPath };

/// The [adversary] set key's values, in DomainKind order.
inline constexpr const char* kDomainChoices = "simplex|l1-ball|l2-ball|cube|k-subsets|spanning-tree|st-path";

inline constexpr const char* domain_name(DomainKind k) {
    return k == DomainKind::Simplex        ? "simplex"
           : k == DomainKind::L1Ball       ? "l1-ball"
           : k == DomainKind::L2Ball       ? "l2-ball"
           : k == DomainKind::Cube         ? "cube"
           : k == DomainKind::KSubsets     ? "k-subsets"
           : k == DomainKind::SpanningTree ? "spanning-tree"
                                           : "st-path";
}

struct Domain {
    static constexpr std::uint32_t kMaxDim = 1024;   ///< coordinates or edges
    static constexpr std::uint32_t kMaxNodes = 1024; ///< graph nodes
    static constexpr std::uint32_t kMaxBallNodes = 20; ///< spanning trees with an interior ball (build.hpp interior_ball)

    DomainKind kind = DomainKind::Simplex;
    std::uint32_t n = 0;            ///< ambient dimension: coordinates, or edges of the graph
    std::uint32_t k = 0;            ///< k-subsets: k (1 <= k < n)
    double radius = 1.0;            ///< l1 / l2 ball radius
    std::uint32_t nodes = 0;        ///< graph sets: |V|
    std::uint32_t source = 0;       ///< st-path: s
    std::uint32_t target = 0;       ///< st-path: t
    std::uint32_t blocks = 0;       ///< spanning-tree: number of blocks (matroid components)
    std::uint32_t longest_path = 0; ///< st-path: P_max, the most edges on one s-t path
    std::uint32_t dim_aff = 0;      ///< dim aff(D) = n_eff of the one-point estimator
    double diameter = 0.0;          ///< the l2 diameter D of the table above (a bound for the graph sets)
    std::uint16_t tail[kMaxDim] = {};  ///< graph sets: edge e = (tail[e], head[e]), directed for st-path
    std::uint16_t head[kMaxDim] = {};
    std::uint16_t group[kMaxDim] = {}; ///< spanning-tree: block of edge e; st-path: 1 if e lies on an s-t path
    std::uint16_t order[kMaxDim] = {}; ///< st-path: the edges sorted by the topological rank of their tail
    /// Graph sets: a certified ball (ball_centre, ball_radius) of aff(D) inside D, for App. D's shrinking
    /// (kernels/domains/build.hpp interior_ball); ball_radius = 0 where none was computed (spanning trees of more
    /// than kMaxBallNodes nodes).
    double ball_radius = 0.0;
    double ball_centre[kMaxDim] = {};

    DPR_HD bool graph() const { return kind == DomainKind::SpanningTree || kind == DomainKind::StPath; }
    /// Whether project() is available (the sets FKM runs on).
    DPR_HD bool has_projection() const { return !graph(); }
};

/// Doubles of scratch the functions below need.
DPR_HD inline std::uint32_t scratch_size(const Domain& D) { return D.n + 4 * D.nodes + 4; }

namespace detail {

/// (v[a], a) < (v[b], b): the order every oracle breaks ties by.
template <class Vv>
DPR_HD inline bool before(const Vv& v, std::uint32_t a, std::uint32_t b) {
    return v[a] < v[b] || (!(v[b] < v[a]) && a < b);
}

template <class Vv, class I>
DPR_HD inline void sift_down(const Vv& v, I idx, std::uint32_t root, std::uint32_t end) {
    for (;;) {
        std::uint32_t child = 2 * root + 1;
        if (child >= end) return;
        const auto at = [&](std::uint32_t j) { return static_cast<std::uint32_t>(idx[j]); };
        if (child + 1 < end && before(v, at(child), at(child + 1))) ++child;
        if (!before(v, at(root), at(child))) return;
        const double tmp = idx[root];
        idx[root] = idx[child];
        idx[child] = tmp;
        root = child;
    }
}

/// The n indices in idx[0..n) sorted by (v, index) ascending: heap sort, O(n log n), in place.
template <class Vv, class I>
DPR_HD inline void heap_sort(const Vv& v, I idx, std::uint32_t n) {
    if (n < 2) return;
    for (std::uint32_t i = n / 2; i-- > 0;) sift_down(v, idx, i, n);
    for (std::uint32_t end = n - 1; end > 0; --end) {
        const double tmp = idx[0];
        idx[0] = idx[end];
        idx[end] = tmp;
        sift_down(v, idx, 0, end);
    }
}

/// idx[0..n) = 0..n-1 sorted by (v, index) ascending.
template <class Vv, class I>
DPR_HD inline void sort_indices(const Vv& v, I idx, std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) idx[i] = static_cast<double>(i);
    heap_sort(v, idx, n);
}

/// idx[0..k) = the k smallest of 0..n-1 under (v, index) ascending, in some order; idx[0..n) a permutation. The set
/// is the one sort_indices puts first (the order is strict: indices break ties). Quickselect, the median of three as
/// pivot, on the part that still holds the k-th element; after 2 log2 n + 4 partitions it heap-sorts what is left,
/// so O(n) expected and O(n log n) at worst; in place, no recursion (a GPU thread runs it). `partitions` >= 0 sets
/// that budget instead (tests reach the heap sort with it).
template <class Vv, class I>
DPR_HD inline void select_smallest(const Vv& v, I idx, std::uint32_t n, std::uint32_t k,
                                   int partitions = -1) {
    for (std::uint32_t i = 0; i < n; ++i) idx[i] = static_cast<double>(i);
    if (k == 0 || k >= n) return;
    const auto at = [&](std::uint32_t j) { return static_cast<std::uint32_t>(idx[j]); };
    const auto swap = [&](std::uint32_t a, std::uint32_t b) {
        const double t = idx[a];
        idx[a] = idx[b];
        idx[b] = t;
    };
    std::uint32_t lo = 0, hi = n; // the k-th smallest lies in idx[lo, hi)
    int budget = 4;
    for (std::uint32_t m = n; m > 1; m >>= 1) budget += 2;
    if (partitions >= 0) budget = partitions;
    while (hi - lo > 16) {
        if (budget-- == 0) return heap_sort(v, idx + lo, hi - lo); // indices are absolute: an offset base works
        const std::uint32_t mid = lo + (hi - lo) / 2, last = hi - 1;
        // median of idx[lo], idx[mid], idx[last] moved to idx[last]
        if (before(v, at(mid), at(lo))) swap(mid, lo);
        if (before(v, at(last), at(lo))) swap(last, lo);
        if (before(v, at(mid), at(last))) swap(mid, last);
        const std::uint32_t pivot = at(last);
        const double vp = v[pivot];
        std::uint32_t store = lo;
        // Lomuto without a branch on the comparison (its outcome is a coin flip, and mispredicting it was
        // most of this loop): every element is swapped with idx[store], which stays >= pivot unless the
        // element is below it and store then moves past it. The same invariant -- idx[lo, store) below the
        // pivot, idx[store, j) not.
        for (std::uint32_t j = lo; j < last; ++j) {
            const double e = idx[j];
            const std::uint32_t i = static_cast<std::uint32_t>(e);
            const bool below = (v[i] < vp) | (!(vp < v[i]) & (i < pivot)); // before(v, i, pivot), branch-free
            idx[j] = idx[store];
            idx[store] = e;
            store += below;
        }
        swap(store, last); // the pivot, at its rank
        if (store == k || store + 1 == k) return;
        if (store > k) hi = store;
        else lo = store + 1;
    }
    for (std::uint32_t i = lo + 1; i < hi; ++i) // insertion sort of the last small part
        for (std::uint32_t j = i; j > lo && before(v, at(j), at(j - 1)); --j) swap(j, j - 1);
}

/// Union-find over parent[] (doubles holding node ids), path halving.
template <class P>
DPR_HD inline std::uint32_t find(P parent, std::uint32_t a) {
    while (static_cast<std::uint32_t>(parent[a]) != a) {
        const std::uint32_t g = static_cast<std::uint32_t>(parent[static_cast<std::uint32_t>(parent[a])]);
        parent[a] = static_cast<double>(g);
        a = g;
    }
    return a;
}

} // namespace detail

/// x = LO(v) = argmin_{x in D} <v, x> (a vertex of D; ties towards lower indices). scratch: scratch_size(D).
template <class In, class Out, class S>
DPR_HD inline void lo(const Domain& D, const In& v, Out x, S scratch) {
    const std::uint32_t n = D.n;
    switch (D.kind) {
    case DomainKind::Simplex: {
        std::uint32_t best = 0;
        for (std::uint32_t i = 1; i < n; ++i)
            if (v[i] < v[best]) best = i;
        for (std::uint32_t i = 0; i < n; ++i) x[i] = i == best ? 1.0 : 0.0;
        return;
    }
    case DomainKind::L1Ball: {
        std::uint32_t best = 0;
        for (std::uint32_t i = 1; i < n; ++i)
            if (std::fabs(v[i]) > std::fabs(v[best])) best = i;
        for (std::uint32_t i = 0; i < n; ++i) x[i] = 0.0;
        x[best] = v[best] > 0.0 ? -D.radius : D.radius;
        return;
    }
    case DomainKind::L2Ball: {
        double sq = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) sq += v[i] * v[i];
        const double s = sq > 0.0 ? -D.radius / std::sqrt(sq) : 0.0; // v = 0: every point is optimal, play 0
        for (std::uint32_t i = 0; i < n; ++i) x[i] = s * v[i];
        return;
    }
    case DomainKind::Cube:
        for (std::uint32_t i = 0; i < n; ++i) x[i] = v[i] > 0.0 ? -1.0 : 1.0;
        return;
    case DomainKind::KSubsets: {
        detail::select_smallest(v, scratch, n, D.k);
        for (std::uint32_t i = 0; i < n; ++i) x[i] = 0.0;
        for (std::uint32_t j = 0; j < D.k; ++j) x[static_cast<std::uint32_t>(scratch[j])] = 1.0;
        return;
    }
    case DomainKind::SpanningTree: { // Kruskal
        const auto idx = scratch;
        const auto parent = scratch + n;
        detail::sort_indices(v, idx, n);
        for (std::uint32_t a = 0; a < D.nodes; ++a) parent[a] = static_cast<double>(a);
        for (std::uint32_t i = 0; i < n; ++i) x[i] = 0.0;
        std::uint32_t taken = 0;
        for (std::uint32_t j = 0; j < n && taken + 1 < D.nodes; ++j) {
            const std::uint32_t e = static_cast<std::uint32_t>(idx[j]);
            const std::uint32_t a = detail::find(parent, D.tail[e]), b = detail::find(parent, D.head[e]);
            if (a == b) continue;
            parent[a < b ? b : a] = static_cast<double>(a < b ? a : b);
            x[e] = 1.0;
            ++taken;
        }
        return;
    }
    case DomainKind::StPath: { // DAG shortest path: relax the edges in topological order of their tails
        const auto dist = scratch;
        const auto pred = scratch + D.nodes;
        for (std::uint32_t a = 0; a < D.nodes; ++a) {
            dist[a] = HUGE_VAL;
            pred[a] = -1.0;
        }
        dist[D.source] = 0.0;
        for (std::uint32_t j = 0; j < n; ++j) {
            const std::uint32_t e = D.order[j];
            const double du = dist[D.tail[e]];
            if (du == HUGE_VAL) continue;
            const double cand = du + v[e];
            if (cand < dist[D.head[e]] || pred[D.head[e]] < 0.0) {
                dist[D.head[e]] = cand;
                pred[D.head[e]] = static_cast<double>(e);
            }
        }
        for (std::uint32_t i = 0; i < n; ++i) x[i] = 0.0;
        // t is reachable from s (build.hpp checks it) and the graph is acyclic, so this walk ends at s.
        std::uint32_t a = D.target;
        for (std::uint32_t steps = 0; a != D.source && pred[a] >= 0.0 && steps < D.nodes; ++steps) {
            const std::uint32_t e = static_cast<std::uint32_t>(pred[a]);
            x[e] = 1.0;
            a = D.tail[e];
        }
        return;
    }
    }
}

/// <v, x>.
DPR_HD inline double dot(const double* v, const double* x, std::uint32_t n) {
    double s = 0.0;
    for (std::uint32_t i = 0; i < n; ++i) s += v[i] * x[i];
    return s;
}

/// The coordinate value of centre() (every coordinate equal), for the non-graph sets.
DPR_HD inline double centre_value(const Domain& D) {
    return D.kind == DomainKind::Simplex    ? 1.0 / D.n
           : D.kind == DomainKind::KSubsets ? static_cast<double>(D.k) / D.n
                                            : 0.0;
}

/// A point of the relative interior of D: the centre of symmetry (0 for the balls and the cube, the barycentre 1/n
/// or k/n of the simplex and k-subsets), or for a graph set the centre of its certified ball (false where it has
/// none).
DPR_HD inline bool centre(const Domain& D, double* c) {
    if (D.graph()) {
        if (!(D.ball_radius > 0.0)) return false;
        for (std::uint32_t i = 0; i < D.n; ++i) c[i] = D.ball_centre[i];
        return true;
    }
    const double value = centre_value(D);
    for (std::uint32_t i = 0; i < D.n; ++i) c[i] = value;
    return true;
}

/// The radius r of a ball around centre() inside D, within aff(D) (ENV21 App. D's interior ball; docs/spec/env21.md
/// §B2, domain assumption and shrinking): the distance from the centre to the nearest facet --
///   simplex 1/sqrt(n(n-1)) (facet x_i = 0, its normal e_i - 1/n within the hyperplane has norm sqrt((n-1)/n)),
///   k-subsets min(k, n-k)/sqrt(n(n-1)) (facets x_i = 0 and x_i = 1 likewise), l1 ball r/sqrt(n), l2 ball r,
///   cube 1. Graph sets: the radius kernels/domains/build.hpp certified against every facet (0 where none was).
DPR_HD inline double inradius(const Domain& D) {
    const double n = static_cast<double>(D.n);
    switch (D.kind) {
    case DomainKind::Simplex: return 1.0 / std::sqrt(n * (n - 1.0));
    case DomainKind::KSubsets: return (D.k < D.n - D.k ? D.k : D.n - D.k) / std::sqrt(n * (n - 1.0));
    case DomainKind::L1Ball: return D.radius / std::sqrt(n);
    case DomainKind::L2Ball: return D.radius;
    case DomainKind::Cube: return 1.0;
    default: return D.ball_radius;
    }
}

/// x <- c + (1 - alpha)(x - c), c = centre() (App. D's shrinking; alpha in [0, 1]; graph sets need their ball). A
/// point of D + alpha r B (B the unit ball of the subspace parallel to aff(D)) lands in D.
DPR_HD inline void shrink_towards_centre(const Domain& D, double alpha, double* x) {
    if (D.graph()) {
        for (std::uint32_t i = 0; i < D.n; ++i) x[i] = D.ball_centre[i] + (1.0 - alpha) * (x[i] - D.ball_centre[i]);
        return;
    }
    const double value = centre_value(D);
    for (std::uint32_t i = 0; i < D.n; ++i) x[i] = value + (1.0 - alpha) * (x[i] - value);
}

/// z <- its projection onto the linear subspace parallel to aff(D) (see the header). scratch: scratch_size(D).
template <class Z, class S>
DPR_HD inline void project_parallel(const Domain& D, Z z, S scratch) {
    const std::uint32_t n = D.n;
    switch (D.kind) {
    case DomainKind::Simplex:
    case DomainKind::KSubsets: {
        double m = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) m += z[i];
        m /= n;
        for (std::uint32_t i = 0; i < n; ++i) z[i] -= m;
        return;
    }
    case DomainKind::SpanningTree: { // per-block means (scratch: sums at [0, blocks), counts at [blocks, 2 blocks))
        const auto sum = scratch;
        const auto cnt = scratch + D.blocks;
        for (std::uint32_t b = 0; b < 2 * D.blocks; ++b) scratch[b] = 0.0;
        for (std::uint32_t e = 0; e < n; ++e) {
            sum[D.group[e]] += z[e];
            cnt[D.group[e]] += 1.0;
        }
        for (std::uint32_t e = 0; e < n; ++e) z[e] -= sum[D.group[e]] / cnt[D.group[e]];
        return;
    }
    case DomainKind::StPath: {
        // Circulations of the useful subgraph: z <- z - B^T phi with L phi = B z (B: node-edge incidence of the
        // useful edges, (B z)_a = sum_{e out of a} z_e - sum_{e into a} z_e; L = B B^T). L is singular (constant
        // vectors) but B z is orthogonal to them, so conjugate gradients from phi = 0 stay in range(L).
        const std::uint32_t V = D.nodes;
        const auto phi = scratch;
        const auto r = scratch + V;
        const auto p = scratch + 2 * V;
        const auto q = scratch + 3 * V;
        for (std::uint32_t e = 0; e < n; ++e)
            if (!D.group[e]) z[e] = 0.0;
        for (std::uint32_t a = 0; a < V; ++a) phi[a] = r[a] = 0.0;
        for (std::uint32_t e = 0; e < n; ++e) {
            r[D.tail[e]] += z[e];
            r[D.head[e]] -= z[e];
        }
        // Remove the rounding-level component of B z along the kernel of L (the constants on the useful nodes,
        // marked in q): without it an already-projected z would make CG chase an inconsistent residual.
        double zz = 0.0, rsum = 0.0, marked = 0.0;
        for (std::uint32_t a = 0; a < V; ++a) q[a] = 0.0;
        for (std::uint32_t e = 0; e < n; ++e)
            if (D.group[e]) {
                q[D.tail[e]] = q[D.head[e]] = 1.0;
                zz += z[e] * z[e];
            }
        for (std::uint32_t a = 0; a < V; ++a) {
            rsum += q[a] * r[a];
            marked += q[a];
        }
        double rr = 0.0;
        for (std::uint32_t a = 0; a < V; ++a) {
            r[a] -= marked > 0.0 ? q[a] * rsum / marked : 0.0;
            p[a] = r[a];
            rr += r[a] * r[a];
        }
        const double stop = zz * 1e-30;
        for (std::uint32_t it = 0; it < 2 * V && rr > stop; ++it) {
            for (std::uint32_t a = 0; a < V; ++a) q[a] = 0.0;
            for (std::uint32_t e = 0; e < n; ++e) // q = L p = B (B^T p) over the useful edges
                if (D.group[e]) {
                    const double f = p[D.tail[e]] - p[D.head[e]];
                    q[D.tail[e]] += f;
                    q[D.head[e]] -= f;
                }
            double pq = 0.0;
            for (std::uint32_t a = 0; a < V; ++a) pq += p[a] * q[a];
            if (!(pq > 0.0)) break;
            const double alpha = rr / pq;
            double rr_next = 0.0;
            for (std::uint32_t a = 0; a < V; ++a) {
                phi[a] += alpha * p[a];
                r[a] -= alpha * q[a];
                rr_next += r[a] * r[a];
            }
            const double beta = rr_next / rr;
            rr = rr_next;
            for (std::uint32_t a = 0; a < V; ++a) p[a] = r[a] + beta * p[a];
        }
        for (std::uint32_t e = 0; e < n; ++e)
            if (D.group[e]) z[e] -= phi[D.tail[e]] - phi[D.head[e]];
        return;
    }
    default:
        return;
    }
}

namespace detail {

/// How the coordinates of v - tau fall against [0, 1]: `capped` (v_i - tau >= 1), `middle` (strictly inside (0, 1)),
/// with the sum of v_i over the middle ones. f(tau) = sum_i clip(v_i - tau, 0, 1) = sum_middle - middle tau + capped.
struct CappedSplit {
    std::uint32_t capped, middle;
    double sum_middle;
    DPR_HD double mass(double tau) const { return sum_middle - static_cast<double>(middle) * tau + capped; }
};
DPR_HD inline CappedSplit capped_split(const double* v, std::uint32_t n, double tau) {
    CappedSplit c{0, 0, 0.0};
    for (std::uint32_t i = 0; i < n; ++i) {
        const double a = v[i] - tau;
        if (a >= 1.0) ++c.capped;
        else if (a > 0.0) {
            ++c.middle;
            c.sum_middle += v[i];
        }
    }
    return c;
}

/// The shift tau of the k-subsets projection x = clip(v - tau, 0, 1), sum x = mass (0 < mass < n). f(tau) =
/// sum_i clip(v_i - tau, 0, 1) is piecewise linear and non-increasing, with breakpoints at v_i - 1 and v_i, and a
/// coordinate only moves one way (capped, then middle, then zero) as tau grows. So bisection on [min v - 1, max v]
/// (f = n > mass at the left end, f = 0 <= mass at the right) stops as soon as both ends split the coordinates
/// alike: no breakpoint then lies between them, f is linear there, and its root is exact,
///     tau = (sum_{middle} v_i + #capped - mass) / #middle.
/// That takes about log2(range / gap between breakpoints) halvings, not a fixed 100; no sorting and no scratch, as a
/// GPU thread needs. Breakpoints closer than 100 halvings resolve leave the midpoint, to ~1e-15 relative.
DPR_HD inline double capped_shift(const double* v, std::uint32_t n, double mass) {
    double vmin = v[0], vmax = v[0];
    for (std::uint32_t i = 0; i < n; ++i) {
        vmin = v[i] < vmin ? v[i] : vmin;
        vmax = v[i] > vmax ? v[i] : vmax;
    }
    double lo = vmin - 1.0, hi = vmax;
    CappedSplit a = capped_split(v, n, lo), b = capped_split(v, n, hi);
    for (int it = 0; it < 100; ++it) {
        if (a.capped == b.capped && a.middle == b.middle && b.middle > 0)
            return (b.sum_middle + static_cast<double>(b.capped) - mass) / static_cast<double>(b.middle);
        const double mid = 0.5 * (lo + hi);
        const CappedSplit m = capped_split(v, n, mid);
        if (m.mass(mid) > mass) {
            lo = mid;
            a = m;
        } else {
            hi = mid;
            b = m;
        }
    }
    return 0.5 * (lo + hi);
}

/// The shift tau of the projection onto {x >= 0, sum x = mass} of the vector with entries a_i = abs ? |v_i| : v_i:
/// x_i = max(a_i - tau, 0). Michelot's algorithm (Michelot 1986; Condat 2016, Alg. 2): tau = (sum_{i in A} a_i -
/// mass) / |A| over the active set A, starting from every coordinate and dropping those with a_i <= tau until none
/// drops. tau only grows and A only shrinks, so it ends after at most n passes, with the exact shift of its final
/// active set (in practice a few passes); no sorting and no scratch, as a GPU thread needs.
DPR_HD inline double simplex_shift(const double* v, std::uint32_t n, double mass, bool abs) {
    double sum = 0.0;
    for (std::uint32_t i = 0; i < n; ++i) sum += abs ? std::fabs(v[i]) : v[i];
    std::uint32_t active = n;
    double tau = (sum - mass) / static_cast<double>(n);
    for (;;) {
        double s = 0.0;
        std::uint32_t c = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
            const double a = abs ? std::fabs(v[i]) : v[i];
            if (a > tau) {
                s += a;
                ++c;
            }
        }
        if (c >= active || c == 0) return tau; // (c > active only by rounding at a tie: the set is final)
        active = c;
        tau = (s - mass) / static_cast<double>(c);
    }
}

} // namespace detail

/// x = the Euclidean projection of v onto D, for the sets with has_projection(); returns false otherwise.
DPR_HD inline bool project(const Domain& D, const double* v, double* x) {
    const std::uint32_t n = D.n;
    if (D.graph()) return false;
    if (D.kind == DomainKind::L2Ball) {
        double sq = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) sq += v[i] * v[i];
        const double s = sq > D.radius * D.radius ? D.radius / std::sqrt(sq) : 1.0;
        for (std::uint32_t i = 0; i < n; ++i) x[i] = s * v[i];
        return true;
    }
    if (D.kind == DomainKind::Cube) {
        for (std::uint32_t i = 0; i < n; ++i) x[i] = v[i] > 1.0 ? 1.0 : v[i] < -1.0 ? -1.0 : v[i];
        return true;
    }
    // Simplex: x = max(v - tau, 0) with sum x = 1; l1 ball: the soft threshold with ||x||_1 = r when ||v||_1 > r.
    // Both exactly (detail::simplex_shift).
    if (D.kind == DomainKind::Simplex || D.kind == DomainKind::L1Ball) {
        const bool l1 = D.kind == DomainKind::L1Ball;
        if (l1) {
            double norm = 0.0;
            for (std::uint32_t i = 0; i < n; ++i) norm += std::fabs(v[i]);
            if (norm <= D.radius) {
                for (std::uint32_t i = 0; i < n; ++i) x[i] = v[i];
                return true;
            }
        }
        const double tau = detail::simplex_shift(v, n, l1 ? D.radius : 1.0, l1);
        for (std::uint32_t i = 0; i < n; ++i) {
            const double a = (l1 ? std::fabs(v[i]) : v[i]) - tau;
            x[i] = a > 0.0 ? (l1 && v[i] < 0.0 ? -a : a) : 0.0;
        }
        return true;
    }
    // k-subsets: x = clip(v - tau, 0, 1) with sum x = k, tau exact on its linear piece (detail::capped_shift).
    const double tau = detail::capped_shift(v, n, static_cast<double>(D.k));
    for (std::uint32_t i = 0; i < n; ++i) {
        double a = v[i] - tau;
        a = a > 0.0 ? a : 0.0;
        x[i] = a > 1.0 ? 1.0 : a;
    }
    return true;
}

} // namespace dpr::domains
