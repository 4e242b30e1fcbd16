#pragma once
// Host side of the decision sets (kernels/domains/domain.hpp): the [adversary] keys that name a set, and the
// builder that turns them into a Domain, validating graphs with the offending edge or node named (exit 2 through
// the config layer's Diagnostic). Host code only (std::vector); the Domain it returns is trivially copyable and
// goes to the GPU inside a learner's Params.
//
// Keys (the first kDomainKeyCount keys of every adversary that draws losses on such a set, e.g. bco-linear):
//   set      simplex | l1-ball | l2-ball | cube | k-subsets | spanning-tree | st-path        (default simplex)
//   k        k-subsets: 1 <= k <= d - 1                                       (default max(1, floor(d/4)))
//   radius   l1-ball / l2-ball radius r > 0                                    (default 1)
//   graph    graph sets: complete (K_nodes; st-path orients i -> j for i < j) | edges (the `edges` list)
//   nodes    graph = complete: |V| in [2, 45] (|E| = |V|(|V|-1)/2 <= 1024); graph = edges: |V| >= 1 + the
//            largest node id (default: exactly that)
//   edges    graph = edges: flat list [u0, v0, u1, v1, ...] of 0-based node ids; st-path reads u -> v
//   source   st-path: s (default 0);   target: t (default |V| - 1)
// The dimension d of a graph set is its number of edges; [adversary] d may be left out (domain_dimension()).
//
// Graph checks: no self-loop; at most Domain::kMaxDim edges and kMaxNodes nodes; spanning-tree: connected;
// st-path: acyclic (a directed cycle is reported by one of its edges), s != t, t reachable from s.
// Derived: spanning-tree blocks by Tarjan's biconnected components (the graphic matroid's components, a bridge
// being one of its own): dim aff = |E| - #blocks; st-path: the useful edges (on some s-t path: s reaches the
// tail and the head reaches t), dim aff = |E'| - |V'| + 1, the longest s-t path P_max, and the edge order by
// the topological rank of the tail (Kahn's algorithm, ties by node id) that the oracle relaxes in. Both: the
// certified interior ball of App. D's shrinking (interior_ball; spanning trees of at most Domain::kMaxBallNodes nodes).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/core/params.hpp"
#include "kernels/domains/domain.hpp"

namespace dpr::domains {

inline constexpr KeySpec kSetKey{"set", KeyType::Choice, "simplex", 0, 6, kDomainChoices,
                                 "the decision set D (docs/spec/env21.md §B3): LO oracle, diameter and affine hull"};
inline constexpr KeySpec kKKey{"k", KeyType::Int, "auto", 1, 4294967295.0, nullptr,
                               "set = k-subsets: k in [1, d - 1] (D = {x in [0,1]^d : sum x = k}); auto = max(1, floor(d/4))"};
inline constexpr KeySpec kRadiusKey{"radius", KeyType::Real, "1", 0.0, 1e6, nullptr,
                                    "set = l1-ball / l2-ball: the radius r > 0", true};
inline constexpr KeySpec kGraphKey{"graph", KeyType::Choice, "complete", 0, 1, "complete|edges",
                                   "graph sets: complete = K_nodes (st-path: edges i -> j for i < j); edges = the list in `edges`"};
inline constexpr KeySpec kNodesKey{"nodes", KeyType::Int, "auto", 2, 1024, nullptr,
                                   "graph sets: |V| (graph = complete: 2..45; graph = edges: default 1 + the largest id)"};
inline constexpr KeySpec kEdgesKey{"edges", KeyType::RealList, "auto", 0, 1023, nullptr,
                                   "graph = edges: [u0, v0, u1, v1, ...], 0-based node ids (st-path: u -> v); d = the number of edges"};
inline constexpr KeySpec kSourceKey{"source", KeyType::Int, "auto", 0, 1023, nullptr, "set = st-path: s; auto = 0"};
inline constexpr KeySpec kTargetKey{"target", KeyType::Int, "auto", 0, 1023, nullptr, "set = st-path: t; auto = |V| - 1"};

inline constexpr int kDomainKeyCount = 8; ///< kSetKey .. kTargetKey, at positions 0..7 of the adversary's keys
enum DomainKeyPos : int { kSet = 0, kK, kRadius, kGraph, kNodes, kEdges, kSource, kTarget };

namespace build_detail {

inline DomainKind kind_of(const KeyValues& kv) { return static_cast<DomainKind>(static_cast<int>(kv.get(kSet, 0))); }
inline bool graph_kind(DomainKind k) { return k == DomainKind::SpanningTree || k == DomainKind::StPath; }

/// The edge list the keys describe (pairs), and |V|; false with diag filled when the keys are inconsistent.
inline bool edge_list(const KeyValues& kv, std::vector<std::uint32_t>& tail, std::vector<std::uint32_t>& head,
                      std::uint32_t& nodes, Diagnostic& diag) {
    const bool complete = static_cast<int>(kv.get(kGraph, 0)) == 0;
    tail.clear();
    head.clear();
    if (complete) {
        if (!kv.given[kNodes]) return diag.fail("nodes", "graph = \"complete\" needs nodes = |V| (2..45)");
        nodes = static_cast<std::uint32_t>(kv.num[kNodes]);
        if (nodes > 45)
            return diag.fail("nodes", "graph = \"complete\" with %u nodes has %u edges; at most %u edges (nodes <= 45)",
                             nodes, nodes * (nodes - 1) / 2, Domain::kMaxDim);
        for (std::uint32_t a = 0; a < nodes; ++a)
            for (std::uint32_t b = a + 1; b < nodes; ++b) {
                tail.push_back(a);
                head.push_back(b);
            }
        return true;
    }
    if (!kv.given[kEdges] || kv.list[kEdges] == nullptr)
        return diag.fail("edges", "graph = \"edges\" needs edges = [u0, v0, u1, v1, ...]");
    const std::uint64_t len = kv.list_size[kEdges];
    if (len == 0 || len % 2 != 0)
        return diag.fail("edges", "must hold pairs of node ids [u0, v0, u1, v1, ...] (got %llu numbers)",
                         static_cast<unsigned long long>(len));
    if (len / 2 > Domain::kMaxDim)
        return diag.fail("edges", "has %llu edges; at most %u", static_cast<unsigned long long>(len / 2), Domain::kMaxDim);
    std::uint32_t top = 0;
    for (std::uint64_t j = 0; j < len; ++j) {
        const double x = kv.list[kEdges][j];
        if (!(x >= 0.0 && x < Domain::kMaxNodes && x == std::floor(x)))
            return diag.fail("edges", "entry %llu (edge %llu) = %g is not a node id in [0, %u]",
                             static_cast<unsigned long long>(j), static_cast<unsigned long long>(j / 2), x,
                             Domain::kMaxNodes - 1);
        top = static_cast<std::uint32_t>(x) > top ? static_cast<std::uint32_t>(x) : top;
    }
    for (std::uint64_t e = 0; e < len / 2; ++e) {
        tail.push_back(static_cast<std::uint32_t>(kv.list[kEdges][2 * e]));
        head.push_back(static_cast<std::uint32_t>(kv.list[kEdges][2 * e + 1]));
        if (tail.back() == head.back())
            return diag.fail("edges", "edge %llu = (%u, %u) is a self-loop", static_cast<unsigned long long>(e),
                             tail.back(), head.back());
    }
    nodes = top + 1;
    if (kv.given[kNodes]) {
        if (kv.num[kNodes] < nodes)
            return diag.fail("nodes", "= %g, but edges name node %u (nodes must be at least %u)", kv.num[kNodes], top,
                             nodes);
        nodes = static_cast<std::uint32_t>(kv.num[kNodes]);
    }
    return true;
}

/// Biconnected blocks of an undirected connected multigraph (Tarjan, edge stack); block[e] in [0, #blocks).
inline std::uint32_t blocks_of(std::uint32_t nodes, const std::vector<std::uint32_t>& tail,
                               const std::vector<std::uint32_t>& head, std::vector<std::uint32_t>& block) {
    const std::size_t m = tail.size();
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> adj(nodes); // (neighbour, edge)
    for (std::size_t e = 0; e < m; ++e) {
        adj[tail[e]].push_back({head[e], static_cast<std::uint32_t>(e)});
        adj[head[e]].push_back({tail[e], static_cast<std::uint32_t>(e)});
    }
    std::vector<std::int64_t> disc(nodes, -1), low(nodes, 0);
    std::vector<std::uint32_t> stack;
    block.assign(m, 0);
    std::uint32_t count = 0;
    std::int64_t timer = 0;
    std::function<void(std::uint32_t, std::int64_t)> dfs = [&](std::uint32_t a, std::int64_t via) {
        disc[a] = low[a] = timer++;
        for (const auto& [b, e] : adj[a]) {
            if (static_cast<std::int64_t>(e) == via) continue;
            if (disc[b] < 0) {
                stack.push_back(e);
                dfs(b, e);
                low[a] = low[a] < low[b] ? low[a] : low[b];
                if (low[b] >= disc[a]) { // a separates: pop the block up to e
                    for (;;) {
                        const std::uint32_t f = stack.back();
                        stack.pop_back();
                        block[f] = count;
                        if (f == e) break;
                    }
                    ++count;
                }
            } else if (disc[b] < disc[a]) { // back edge (or a parallel edge)
                stack.push_back(e);
                low[a] = low[a] < disc[b] ? low[a] : disc[b];
            }
        }
    };
    for (std::uint32_t a = 0; a < nodes; ++a)
        if (disc[a] < 0 && !adj[a].empty()) dfs(a, -1);
    return count;
}

/// App. D's interior ball of a graph set (ENV21 App. D; docs/spec/env21.md §B2, domain assumption and shrinking),
/// certified against every facet, into D.ball_centre and D.ball_radius (0: none).
///   centre c: the mean of 2 LO vertices per edge e (a tree or path that uses e, and one that avoids it, and for a
///     tree its parallel edges, where one exists; the other edges' weights fixed pseudo-random), a point of D with
///     c_e > 0 wherever some vertex uses e;
///   radius r: the distance within aff(D) from c to the nearest facet, min over the inequalities a.x <= b of D of
///     (b - a.c) / ||P a||, P the projection onto the subspace parallel to aff(D) (project_parallel), skipping those
///     constant on aff(D) (||P a|| = 0: a bridge's x_e = 1, a block's own rank equation):
///       spanning tree (Edmonds): x_e >= 0, and x(E(S)) <= |S| - 1 for every node set S with |S| >= 2; here
///         ||P 1_{E(S)}||^2 = |E(S)| - sum_B |E(S) n B|^2 / |B| (P subtracts each block's mean), visited over all
///         2^|V| sets in Gray-code order (so |V| <= Domain::kMaxBallNodes);
///       s-t path (the flow polytope of a DAG): x_e >= 0 on the useful edges, ||P e_e||^2 = (P e_e)_e; the rest of
///         its description is equations.
///   r is then shrunk by a relative 1e-9 for rounding, and a centre on a facet (r <= 1e-12) gives no ball.
inline void interior_ball(Domain& D) {
    D.ball_radius = 0.0;
    const std::uint32_t m = D.n;
    for (std::uint32_t e = 0; e < m; ++e) D.ball_centre[e] = 0.0;
    if (D.kind == DomainKind::SpanningTree && D.nodes > Domain::kMaxBallNodes) return;
    // A set of one point (a tree, a lone s-t path) has no ball, and no learner accepts it: its O(m^3) search for one
    // (the projections of the s-t path below) would only delay the refusal.
    if (D.dim_aff == 0) return;
    std::vector<double> v(m, 0.0), x(m), scratch(scratch_size(D));
    std::vector<char> useful(m, 1);
    if (D.kind == DomainKind::StPath)
        for (std::uint32_t e = 0; e < m; ++e) useful[e] = D.group[e] != 0;
    // Direction of vertex (e, sign): +-force on e (decides whether the tree or path uses e: it outweighs any sum of
    // the others, at most 1/2 per edge of a path of at most P_max edges), a fixed pseudo-random value in [-1/2, 1/2)
    // on every other edge (splitmix64 of (e, f, sign): a construction, not simulation randomness), so that the
    // vertices differ beyond e instead of all breaking ties towards the lowest edges.
    const double force = 1.0 + (D.kind == DomainKind::StPath ? D.longest_path : 1.0);
    const auto jitter = [](std::uint64_t z) {
        z += 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return static_cast<double>(z >> 11) * 0x1.0p-53 - 0.5;
    };
    // A spanning tree's vertex that avoids e also avoids e's parallel edges (same two nodes, either order): else,
    // on a multigraph, every vertex could use one edge of the class, and the centre would lie on the facet
    // x(E({u, v})) <= 1 (a radius of 0). On a simple graph no other edge is parallel: the vertices are unchanged.
    const auto parallel = [&D](std::uint32_t e, std::uint32_t f) {
        return D.kind == DomainKind::SpanningTree && ((D.tail[e] == D.tail[f] && D.head[e] == D.head[f]) ||
                                                      (D.tail[e] == D.head[f] && D.head[e] == D.tail[f]));
    };
    std::uint32_t vertices = 0;
    for (std::uint32_t e = 0; e < m; ++e) {
        if (!useful[e]) continue;
        for (const double sign : {-1.0, 1.0}) {
            for (std::uint32_t f = 0; f < m; ++f)
                v[f] = f == e || (sign > 0 && parallel(e, f)) ? sign * force
                                                              : jitter((std::uint64_t{e} << 33) ^ (std::uint64_t{f} << 1) ^ (sign > 0));
            lo(D, v.data(), x.data(), scratch.data());
            for (std::uint32_t f = 0; f < m; ++f) D.ball_centre[f] += x[f];
            ++vertices;
        }
    }
    for (std::uint32_t e = 0; e < m; ++e) D.ball_centre[e] /= vertices;
    const double* c = D.ball_centre;

    double r = HUGE_VAL;
    // x_e >= 0: slack c_e over ||P e_e||.
    for (std::uint32_t e = 0; e < m; ++e) {
        if (!useful[e]) continue;
        std::vector<double> z(m, 0.0);
        z[e] = 1.0;
        project_parallel(D, z.data(), scratch.data());
        if (z[e] > 1e-9) r = std::min(r, c[e] / std::sqrt(z[e]));
    }
    if (D.kind == DomainKind::SpanningTree) {
        const std::uint32_t V = D.nodes;
        std::vector<double> block_size(D.blocks, 0.0), in_block(D.blocks, 0.0);
        for (std::uint32_t e = 0; e < m; ++e) block_size[D.group[e]] += 1.0;
        std::vector<std::vector<std::uint32_t>> incident(V);
        for (std::uint32_t e = 0; e < m; ++e) {
            incident[D.tail[e]].push_back(e);
            incident[D.head[e]].push_back(e);
        }
        std::vector<char> in_set(V, 0);
        std::uint32_t size = 0;
        double edges = 0.0, sq = 0.0; // |E(S)|, sum_B |E(S) n B|^2 / |B|
        long double load = 0.0L;      // c(E(S)), with ± updates: extended precision against drift
        for (std::uint64_t step = 1; step < (std::uint64_t{1} << V); ++step) {
            const std::uint32_t a = static_cast<std::uint32_t>(__builtin_ctzll(step)); // Gray code: toggle node a
            const double dir = in_set[a] ? -1.0 : 1.0;
            for (const std::uint32_t e : incident[a]) {
                const std::uint32_t b = D.tail[e] == a ? D.head[e] : D.tail[e];
                if (!in_set[b]) continue;
                const std::uint32_t B = D.group[e];
                const double old = in_block[B], now = old + dir;
                sq += (now * now - old * old) / block_size[B];
                in_block[B] = now;
                edges += dir;
                load += dir * c[e];
            }
            in_set[a] = !in_set[a];
            if (in_set[a]) ++size;
            else --size;
            if (size < 2) continue;
            const double norm2 = edges - sq;
            if (norm2 > 1e-9) r = std::min(r, static_cast<double>((size - 1.0L) - load) / std::sqrt(norm2));
        }
    }
    if (r > 1e-12 && r < HUGE_VAL) D.ball_radius = r * (1.0 - 1e-9);
}

} // namespace build_detail

/// Returned by domain_dimension() for graph keys that do not describe a graph (build_domain() says why).
inline constexpr std::uint32_t kInvalidDimension = 0xFFFFFFFFu;

/// The dimension d a set's keys imply (its number of edges for the graph sets), 0 when d is the user's, or
/// kInvalidDimension.
inline std::uint32_t domain_dimension(const KeyValues& kv) {
    if (!build_detail::graph_kind(build_detail::kind_of(kv))) return 0;
    std::vector<std::uint32_t> tail, head;
    std::uint32_t nodes = 0;
    Diagnostic ignore;
    if (!build_detail::edge_list(kv, tail, head, nodes, ignore) || tail.empty()) return kInvalidDimension;
    return static_cast<std::uint32_t>(tail.size());
}

/// Builds the Domain of the keys kv (positions kDomainKeyCount first) in dimension d; false with diag filled on
/// an invalid set (the key named; graph errors name the edge or node).
inline bool build_domain(const KeyValues& kv, std::uint32_t d, Domain& D, Diagnostic& diag) {
    D = Domain{};
    D.kind = build_detail::kind_of(kv);
    if (!build_detail::graph_kind(D.kind)) {
        if (d < 2 || d > Domain::kMaxDim)
            return diag.fail("d", "must be in [2, %u] for set = \"%s\" (got %u)", Domain::kMaxDim, domain_name(D.kind), d);
        D.n = d;
        switch (D.kind) {
        case DomainKind::Simplex:
            D.dim_aff = d - 1;
            D.diameter = std::sqrt(2.0);
            break;
        case DomainKind::L1Ball:
        case DomainKind::L2Ball:
            D.radius = kv.get(kRadius, 1.0);
            if (!(D.radius > 0.0)) return diag.fail("radius", "must be > 0 (got %g)", D.radius);
            D.dim_aff = d;
            D.diameter = 2.0 * D.radius;
            break;
        case DomainKind::Cube:
            D.dim_aff = d;
            D.diameter = 2.0 * std::sqrt(static_cast<double>(d));
            break;
        default: { // k-subsets
            const double k = kv.given[kK] ? kv.num[kK] : (d / 4 > 1 ? d / 4 : 1);
            if (!(k >= 1 && k <= d - 1))
                return diag.fail("k", "must be in [1, d - 1] = [1, %u] for set = \"k-subsets\" (got %g)", d - 1, k);
            D.k = static_cast<std::uint32_t>(k);
            D.dim_aff = d - 1;
            D.diameter = std::sqrt(2.0 * static_cast<double>(D.k < d - D.k ? D.k : d - D.k));
            break;
        }
        }
        return true;
    }

    std::vector<std::uint32_t> tail, head;
    std::uint32_t nodes = 0;
    if (!build_detail::edge_list(kv, tail, head, nodes, diag)) return false;
    const std::uint32_t m = static_cast<std::uint32_t>(tail.size());
    if (m < 1) return diag.fail("edges", "the graph has no edge");
    if (d != 0 && d != kInvalidDimension && d != m)
        return diag.fail("d", "= %u, but the graph has %u edges (d is the number of edges; leave d out)", d, m);
    D.n = m;
    D.nodes = nodes;
    for (std::uint32_t e = 0; e < m; ++e) {
        D.tail[e] = static_cast<std::uint16_t>(tail[e]);
        D.head[e] = static_cast<std::uint16_t>(head[e]);
    }
    std::vector<std::vector<std::uint32_t>> out(nodes), in(nodes); // edge ids
    for (std::uint32_t e = 0; e < m; ++e) {
        out[tail[e]].push_back(e);
        in[head[e]].push_back(e);
    }

    if (D.kind == DomainKind::SpanningTree) {
        // Connected (undirected): every node reachable from node 0.
        std::vector<char> seen(nodes, 0);
        std::vector<std::uint32_t> frontier{0};
        seen[0] = 1;
        while (!frontier.empty()) {
            const std::uint32_t a = frontier.back();
            frontier.pop_back();
            for (const auto* list : {&out[a], &in[a]})
                for (std::uint32_t e : *list) {
                    const std::uint32_t b = tail[e] == a ? head[e] : tail[e];
                    if (!seen[b]) seen[b] = 1, frontier.push_back(b);
                }
        }
        for (std::uint32_t a = 0; a < nodes; ++a)
            if (!seen[a])
                return diag.fail(kv.given[kEdges] ? "edges" : "nodes",
                                 "the graph is not connected: node %u is not reachable from node 0 (a spanning tree "
                                 "needs a connected graph)",
                                 a);
        std::vector<std::uint32_t> block;
        D.blocks = build_detail::blocks_of(nodes, tail, head, block);
        for (std::uint32_t e = 0; e < m; ++e) D.group[e] = static_cast<std::uint16_t>(block[e]);
        D.dim_aff = m - D.blocks;
        D.diameter = std::sqrt(2.0 * (nodes - 1.0));
        build_detail::interior_ball(D);
        return true;
    }

    // st-path
    D.source = kv.given[kSource] ? static_cast<std::uint32_t>(kv.num[kSource]) : 0u;
    D.target = kv.given[kTarget] ? static_cast<std::uint32_t>(kv.num[kTarget]) : nodes - 1;
    if (D.source >= nodes) return diag.fail("source", "= %u is not a node (the graph has nodes 0..%u)", D.source, nodes - 1);
    if (D.target >= nodes) return diag.fail("target", "= %u is not a node (the graph has nodes 0..%u)", D.target, nodes - 1);
    if (D.source == D.target) return diag.fail("target", "= source = %u; an s-t path needs s != t", D.target);
    // Kahn's algorithm, smallest ready node first.
    std::vector<std::uint32_t> indeg(nodes, 0), topo;
    for (std::uint32_t e = 0; e < m; ++e) ++indeg[head[e]];
    std::vector<char> done(nodes, 0);
    for (std::uint32_t step = 0; step < nodes; ++step) {
        std::uint32_t pick = nodes;
        for (std::uint32_t a = 0; a < nodes && pick == nodes; ++a)
            if (!done[a] && indeg[a] == 0) pick = a;
        if (pick == nodes) break;
        done[pick] = 1;
        topo.push_back(pick);
        for (std::uint32_t e : out[pick]) --indeg[head[e]];
    }
    if (topo.size() < nodes) {
        // Walk leftover out-edges from a leftover node until a node repeats: that edge closes a cycle.
        std::uint32_t a = 0;
        while (done[a]) ++a;
        std::vector<std::int64_t> via(nodes, -2);
        std::uint32_t e_last = 0;
        while (via[a] == -2) {
            via[a] = -1;
            for (std::uint32_t e : out[a])
                if (!done[head[e]]) {
                    e_last = e;
                    break;
                }
            a = head[e_last];
        }
        return diag.fail("edges", "the graph has a directed cycle through edge %u = (%u -> %u); st-path needs a DAG",
                         e_last, tail[e_last], head[e_last]);
    }
    // Reachability: from s forward, to t backward.
    std::vector<char> from_s(nodes, 0), to_t(nodes, 0);
    from_s[D.source] = 1;
    for (std::uint32_t a : topo)
        if (from_s[a])
            for (std::uint32_t e : out[a]) from_s[head[e]] = 1;
    to_t[D.target] = 1;
    for (std::uint32_t j = nodes; j-- > 0;)
        if (to_t[topo[j]])
            for (std::uint32_t e : in[topo[j]]) to_t[tail[e]] = 1;
    if (!from_s[D.target])
        return diag.fail("target", "= node %u is not reachable from source = node %u along the edges' directions",
                         D.target, D.source);
    std::vector<char> useful_node(nodes, 0);
    std::uint32_t useful_edges = 0;
    for (std::uint32_t e = 0; e < m; ++e) {
        const bool u = from_s[tail[e]] && to_t[head[e]];
        D.group[e] = u ? 1 : 0;
        if (u) {
            ++useful_edges;
            useful_node[tail[e]] = useful_node[head[e]] = 1;
        }
    }
    std::uint32_t useful_nodes = 0;
    for (std::uint32_t a = 0; a < nodes; ++a) useful_nodes += useful_node[a];
    D.dim_aff = useful_edges - useful_nodes + 1;
    // Longest s-t path in edges (DP in topological order over the useful edges).
    std::vector<std::int64_t> longest(nodes, -1);
    longest[D.source] = 0;
    for (std::uint32_t a : topo)
        if (longest[a] >= 0)
            for (std::uint32_t e : out[a])
                if (D.group[e] && longest[a] + 1 > longest[head[e]]) longest[head[e]] = longest[a] + 1;
    D.longest_path = static_cast<std::uint32_t>(longest[D.target]);
    D.diameter = std::sqrt(2.0 * D.longest_path);
    // Edges by the topological rank of their tail (stable in the edge id).
    std::uint32_t j = 0;
    for (std::uint32_t a : topo)
        for (std::uint32_t e : out[a]) D.order[j++] = static_cast<std::uint16_t>(e);
    build_detail::interior_ball(D);
    return true;
}

} // namespace dpr::domains
