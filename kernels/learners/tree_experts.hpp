#pragma once
// tree-experts: AFKT23 Algorithm 4, the binary-tree algorithm for zero-loss experts (App. B.1; docs/spec/afkt23.md
// §C3; a sketch without constants: every constant below is a key, and the defaults are our choices, marked):
//
//   k = 0
//   round t: if no set is live, or every member x of S_k has chat_{t,x} > tau, and k < K:
//                S_{k+1} = B experts of [d] \ (S_1 ∪ ... ∪ S_k), drawn one after the other without replacement by
//                the exponential mechanism Pr[x] ∝ exp(-c L_{t-1}(x)), c = eps_sel / 2       (eta-style, §1.7)
//                a binary tree (§1.4) per member on its losses from round t on; k <- k + 1
//            chat_{t,x} = the member's tree estimate of its loss in this phase, sum_{i=t_k}^{t-1} l_i(x) + noise
//            play x_t = argmin_{x in S_k} chat_{t,x} (ties: the earlier-drawn member)
// Once k = K the last set stays live to the end (no more selections).
//
// Privacy (C3's split [choice]): eps/2 for the trees, eps/2 for the selections.
//   trees       each loss enters only the trees of the phase it falls in (parallel over phases, the phase
//               boundaries being functions of released counts); within a phase B streams of values in [0, 1],
//               each leaf in h = ceil(log2 T) released nodes (a phase's prefix holds at most T - 1 leaves, so the
//               level of 2^ceil(log2 T) leaves is never released): l1 sensitivity B h, so Laplace node noise of
//               scale b = B h / (eps/2) = 2 B h / eps makes all trees together eps/2-DP (one vector-valued tree).
//   selections  at most K B draws, each eps_sel-DP (score L_{t-1}, sensitivity 1: c = eps_sel/2), eps_sel =
//               eps / (2 K B): together eps/2. Basic composition: eps.
// Parameters [choices where the paper gives none]:
//   B   = set_size,   auto = min(d, ceil(log2(d T))^2)                (C3: "e.g. ceil(log2(dT))^2")
//   K   = max_sets,   auto = floor(d / B)   (the sets are disjoint: K B <= d)
//   tau = threshold,  auto = h b ln(2 B T / beta): in each phase, with probability >= 1 - beta, no node noise of its
//         B trees exceeds b ln(2BT/beta) in absolute value (a union bound over the < 2T nodes of each tree; K beta
//         over all K phases), so a zero-loss member's chat never passes tau and a member whose phase loss is
//         below tau - h b ln(...) is kept.
// These defaults make tau enormous at practical T (e.g. 3e6 at d = 1024, T = 4096, eps = 1): the keys are there
// to study smaller sets and thresholds.
//
// Randomness: the selection of the set started at round t uses the Gumbels of (Exponential, sub 0, round t),
// the B draws being the B smallest keys c L(x) - G_x in order (Gumbel-top-B = sequential sampling without
// replacement); the tree of member b of the set started at round t draws node (j, m) from (TreeStream, round
// t - 1 + (m + 1) 2^j - 1, element b) (tree_aggregation.hpp, origin t - 1): the absolute round that completes
// the node, unique across phases.
//
// State per instance: an excluded flag per expert (d doubles, the union of earlier sets), the B members and
// their L at the phase start, 4 scalars. Cost: a round is B popcount(t - t_k) node draws (O(B log T)); a new set
// is B passes over the d experts. Scalar code (kInstanceLanes = false): the B-loop is per instance.
// Diagnostics: sets (selections made), budget_exhausted (sets = K), last_set_round.
//
// Exact samplers (noise = "discrete-laplace", the default in float precision where it applies; docs/spec/afkt23.md
// §C3 "Exact samplers", docs/spec/model.md §1.8, §1.9). The continuous samplers' report is that of exact real noise,
// which floating point does not give (Mironov 2012). With the key:
//   trees       lattice count trees (model.md §1.8): member b's loss of each round rounded at random onto Gamma Z
//               (lattice_round, the word of (Lattice, sub 1, round t - 1, element b)) and summed exactly (the
//               kBase array holds the phase's lattice sum), its nodes DLap draws times Gamma (TreeNoise::lattice:
//               (Lattice, sub 0, the completing round - 1, element b)). chat is then exact in double, and the
//               comparison with tau and the argmin are post-processing. The prefix's node sum is kept in
//               kPrefixNoise and moved on by one leaf per round (next_prefix_noise: the nodes of the trailing ones
//               leave, one node enters; exact, so equal to tree_part's sum): about 2 node draws per member and
//               round instead of popcount(t - t_k). The node scale is raised to
//               the smallest whose lattice epsilon for h levels, l1 sensitivity B over B coordinates (values in
//               [0, 1]) is at most the continuous trees' eps/2 (mech::lattice_scale_for: at most ~1.6% more noise).
//   selections  the B members drawn one after the other by the exact exponential mechanism (exact_exponential.hpp)
//               over the experts not yet excluded (score L_{t-1}(x) in double, within T^2 2^-53 of the exact sum;
//               excluded experts score +inf and are never drawn), at c = eps_sel / 2 fitted so that each draw is at
//               most eps_sel: draw b of the set started at round t reads (Exponential, sub 0, round t, element b).
//               Sequential draws without replacement are the same law as the continuous Gumbel-top-B.
// The report: the lattice trees' (eps, delta) (parallel over phases) + K B times the exact draw's; each part's eps is
// at most its continuous counterpart's, so the eps never exceeds the continuous report's (the continuous delta is 0,
// the exact one the truncations', below 1e-13); it holds as run, in float as in double, and the bits are the same in
// both precisions.
#include <limits>

#include "kernels/learners/common.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/exact_exponential.hpp"
#include "kernels/mechanisms/exponential.hpp"
#include "kernels/mechanisms/lattice.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace dpr::learners {

struct TreeExperts : Learner<Geometry::Simplex> {
    static constexpr const char* kName = "tree-experts";
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, 1e12, "",
         "privacy parameter eps > 0: eps/2 for the trees (Laplace 2Bh/eps per node), eps/2 for the K B selections", true},
        {"set_size", KeyType::Real, "auto", 1.0, 4294967295.0, "",
         "B, experts per set (one binary tree each); auto = min(d, ceil(log2(d T))^2) (docs/spec/afkt23.md §C3)"},
        {"max_sets", KeyType::Real, "auto", 1.0, 4294967295.0, "",
         "K, the most sets drawn (then the last stays live); auto = floor(d / B); K B <= d (the sets are disjoint)"},
        {"threshold", KeyType::Real, "auto", 0.0, kInf, "",
         "tau: a set is abandoned when every member's noisy phase loss exceeds it; auto = h b ln(2BT/beta), "
         "h = ceil(log2 T) released levels, b = 2Bh/eps (per phase, no node noise exceeds b ln(2BT/beta) w.p. >= "
         "1 - beta)",
         true},
        {"beta", KeyType::Real, "0.05", 0.0, 1.0, "", "failure probability of the automatic threshold", true, true},
        {"noise", KeyType::Choice, "laplace", 0, 1, "laplace|discrete-laplace",
         "samplers: laplace = continuous Laplace tree nodes (double) and Gumbel keys (the run's precision); "
         "discrete-laplace = exact samplers, lattice count trees (discrete Laplace nodes, exact releases) and the "
         "exact exponential mechanism without replacement, whose report holds as run in floating point (the default "
         "in float precision where it applies; docs/spec/afkt23.md §C3, docs/spec/model.md §1.8, §1.9)"},
    };
    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    static constexpr int kSetSize = key_index(kKeys, "set_size");
    static constexpr int kMaxSets = key_index(kKeys, "max_sets");
    static constexpr int kThresholdKey = key_index(kKeys, "threshold");
    static constexpr int kBeta = key_index(kKeys, "beta");
    static constexpr int kNoise = key_index(kKeys, "noise");
    static constexpr bool kInstanceLanes = false;
    static constexpr bool kReadsCumulative = true;

    struct Params : Dims {
        double epsilon;
        std::uint32_t B;
        std::uint32_t K;
        std::uint32_t h;  ///< levels of a released estimate: ceil(log2 T) (at least 1)
        double b;         ///< Laplace scale of a node: 2 B h / eps (lattice: raised, see the header)
        double tau;
        double eps_sel;   ///< per selection draw: eps / (2 K B)
        bool lattice;            ///< exact samplers (noise = "discrete-laplace"; see the header)
        noise::DlapTable dlap;   ///< the lattice trees' discrete Laplace (lattice only)
        mech::ExactExpPlan xexp; ///< the exact exponential mechanism of each selection draw (lattice only)
    };

    static constexpr std::array<const char*, 3> kDiagnostics = {"sets", "budget_exhausted", "last_set_round"};

    static double auto_set_size(std::uint32_t d, std::uint64_t T) {
        const double l = std::ceil(std::log2(static_cast<double>(d) * static_cast<double>(T)));
        return std::min(static_cast<double>(d), l * l);
    }

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        Params p{};
        static_cast<Dims&>(p) = dims(pb);
        p.epsilon = kv.num[kEpsilon];
        const double B = std::min(kv.get(kSetSize, auto_set_size(pb.d, pb.T)), static_cast<double>(pb.d));
        p.B = static_cast<std::uint32_t>(std::max(1.0, B));
        const double K = kv.get(kMaxSets, std::floor(static_cast<double>(pb.d) / p.B));
        p.K = static_cast<std::uint32_t>(std::max(1.0, std::min(K, 4294967295.0)));
        // The levels a released estimate can touch: a phase's prefix holds at most T - 1 leaves (it starts at a
        // round >= 1 and is read before round t's loss), so the level of 2^ceil(log2 T) leaves is never released
        // (mech::levels_released, docs/spec/afkt23.md §C3). Counting it (ceil(log2 T) + 1, as before) gave
        // eps/2 (h' / (h' + 1)) for the trees: 95.83 at eps = 100, T = 2048, with 9% more noise than needed.
        p.h = std::max<std::uint32_t>(1, mech::levels_released(pb.T, false));
        p.b = 2.0 * p.B * p.h / p.epsilon;
        p.eps_sel = p.epsilon / (2.0 * p.K * p.B);
        p.lattice = false;
        if (mech::lattice_wanted(lattice_asked(kv), kv.given[kNoise], pb.float_precision)) {
            Params q = p;
            if (!exact_plans(q, pb).why) p = q; // the scale in use is the lattice's; the threshold below follows it
        }
        const double beta = kv.get(kBeta, 0.05);
        p.tau = kv.get(kThresholdKey, p.h * p.b * std::log(2.0 * p.B * static_cast<double>(pb.T) / beta));
        return p;
    }

    static bool lattice_asked(const KeyValues& kv) { return kv.given[kNoise] && static_cast<int>(kv.num[kNoise]) == 1; }

    /// Why the exact samplers do not apply: the part that does not (`what`, the subject of `why`) and why (nullptr: they
    /// apply).
    struct ExactObstacle {
        const char* what = nullptr;
        const char* why = nullptr;
    };

    /// Plans the exact samplers into p (lattice = true, b raised, dlap, xexp) and says why they do not apply. Host code.
    static ExactObstacle exact_plans(Params& p, const Problem& pb) {
        // The trees: h released levels, one step moves each of the B members' values (in [0, 1]) by at most 1.
        p.b = mech::lattice_scale_for(p.b, p.h, static_cast<double>(p.B), p.B);
        p.dlap = mech::dlap_table(p.b);
        if (const char* why = mech::lattice_limit(p.dlap, p.h, static_cast<double>(p.B), p.B, 1.0))
            return {"lattice noise on the count trees", why};
        // The draws: score L_{t-1}(x) (sensitivity 1), the engine's double sum within T^2 2^-53 of the exact one
        // (afkt23.md §C4 "Exact samplers"), c = eps_sel / 2 fitted to eps_sel.
        const double T = static_cast<double>(pb.T);
        p.xexp = mech::plan_exact_exp(p.eps_sel / 2.0, 1.0, T * T * 0x1.0p-53 * 1.001, pb.d, p.eps_sel);
        if (!p.xexp.ok) return {"the exact exponential mechanism does not apply:", p.xexp.why};
        p.lattice = true;
        return {};
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (pb.d < 2) return diag.fail("d", "tree-experts needs d >= 2 experts (got %u)", pb.d);
        for (int key : {kSetSize, kMaxSets})
            if (kv.given[key] && kv.num[key] != std::floor(kv.num[key]))
                return diag.fail(kKeys[key].name, "%s = %g must be a whole number", kKeys[key].name, kv.num[key]);
        if (kv.given[kSetSize] && kv.num[kSetSize] > pb.d)
            return diag.fail("set_size", "set_size = %g exceeds d = %u (a set holds distinct experts)", kv.num[kSetSize], pb.d);
        const Params p = resolve(kv, pb);
        if (static_cast<double>(p.K) * p.B > pb.d)
            return diag.fail("max_sets", "max_sets = %u sets of set_size = %u experts exceed d = %u (the sets are disjoint)",
                             p.K, p.B, pb.d);
        if (lattice_asked(kv) && !p.lattice) {
            Params q = p;
            const ExactObstacle o = exact_plans(q, pb);
            return diag.fail("noise", "%s %s (docs/spec/model.md §1.8, §1.9)", o.what ? o.what : "the exact samplers",
                             o.why ? o.why : "do not apply");
        }
        return true;
    }

    static PrivacyReport privacy(const Params& p) {
        PrivacyReport r;
        if (p.lattice) {
            // The trees are parallel over phases (a step's loss enters only its phase's trees), the draws compose.
            const mech::Guarantee g = mech::lattice_guarantee(p.dlap, p.h, static_cast<double>(p.B), p.B);
            const double draws = static_cast<double>(p.K) * p.B;
            r.epsilon = g.epsilon + draws * p.xexp.epsilon;
            r.delta = g.delta + draws * p.xexp.delta;
            r.accountant = "lattice: basic composition: the B lattice count trees of a phase (parallel over phases) + "
                           "K B exact exponential-mechanism draws of at most eps/(2KB) each";
            r.mechanism = "binary-tree counts on a lattice (discrete Laplace nodes, exact releases) + exact exponential "
                          "mechanism without replacement (integer weights on a score grid)";
            r.noise_scale = p.b;
            r.as_run = true;
            return r;
        }
        r.epsilon = p.epsilon / 2.0 + static_cast<double>(p.K) * p.B * p.eps_sel;
        r.delta = 0.0;
        r.accountant = "basic composition: eps/2 (B Laplace trees per phase, parallel over phases) + K B selections of "
                       "eps/(2KB) each";
        r.mechanism = "binary-tree counts (Laplace 2Bh/eps per node) + exponential mechanism without replacement";
        r.noise_scale = p.b;
        return r;
    }

    enum Scalar : int { kSets = 0, kStart, kX, kLastSet, kScalars };
    enum Array : int { kExcluded = 0, kMembers, kBase, kPrefixNoise };

    /// kPrefixNoise (the lattice prefixes' node sums) is used only with the exact samplers.
    DPR_HD static WorkspaceSpec workspace(const Params& p) {
        return WorkspaceSpec{}
            .add_double(1, p.d)
            .add_double(1, p.B)
            .add_double(1, p.B)
            .add_double(1, p.lattice ? p.B : 1)
            .scalars(kScalars);
    }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using D = typename Team::template lanes<double>;
        team.for_each(p.d, [&](auto i) { team.store(ws.dbl[kExcluded], i, D(0.0)); });
        if (team.rank() == 0) {
            team.put(ws.scalars, kSets, 0.0);
            team.put(ws.scalars, kStart, 0.0);
            team.put(ws.scalars, kX, 0.0);
            team.put(ws.scalars, kLastSet, 0.0);
        }
        team.sync();
    }

    /// The node noise of the tree of member b of the set started at round `start`, prefix of p leaves.
    template <class Team>
    DPR_HD static double tree_noise(const Params& pr, const Team& team, std::uint64_t start, std::uint64_t p, std::uint32_t b) {
        return mech::tree_part<double>(tree_noise_of(pr, team), p, b, start - 1);
    }

    /// With the exact samplers: the node sum of member b's prefix of q + 1 leaves from z, its prefix of q leaves, of the
    /// tree started at round `start`: the nodes of q's trailing ones leave, the node at level ctz(q + 1) enters (exact:
    /// lattice values, so the result is tree_noise's bit for bit).
    template <class Team>
    DPR_HD static double next_prefix_noise(const Params& pr, const Team& team, std::uint64_t start, std::uint64_t q,
                                           std::uint32_t b, double z) {
        const mech::TreeNoise tn = tree_noise_of(pr, team);
        const std::uint64_t n = q + 1;
        const std::uint32_t top = ctz64(n);
        for (std::uint32_t j = 0; j < top; ++j) z -= mech::node_noise<double>(tn, j, mech::prefix_node(q, j), b, start - 1);
        return z + mech::node_noise<double>(tn, top, mech::prefix_node(n, top), b, start - 1);
    }

    /// What the node draws of a member's tree depend on (its instance, the scale, lattice or continuous).
    template <class Team>
    DPR_HD static mech::TreeNoise tree_noise_of(const Params& pr, const Team& team) {
        mech::TreeNoise tn;
        tn.variant = mech::TreeVariant::Binary;
        tn.noise = mech::NodeNoise::Laplace;
        tn.scale = pr.b;
        tn.T = pr.T;
        tn.lattice = pr.lattice;
        tn.dlap = pr.dlap;
        const RngKey key = team.key();
        tn.seed = key.seed;
        tn.stream = key.stream;
        tn.instance = team.instance();
        return tn;
    }

    /// Draws the set of round t: B members without replacement, the keys c L_{t-1}(x) - G_x in increasing order
    /// over the experts not excluded (each pass: the smallest key after the previous one, ties by index).
    template <class Team, class WS, class Row>
    DPR_HD static void draw_set(const Params& p, const Team& team, const WS& ws, std::uint64_t t, const Row& row) {
        using R = typename Team::real;
        using V = typename Team::template lanes<R>;
        using D = typename Team::template lanes<double>;
        using UL = typename Team::template lanes<std::uint32_t>;
        mech::ExpMechDraw draw;
        draw.round = static_cast<std::uint32_t>(t);
        const D c(p.eps_sel / 2.0);
        const R inf = std::numeric_limits<R>::infinity();
        R prev_key = -inf;
        std::uint32_t prev_i = 0;
        const auto excluded = ws.dbl[kExcluded];
        for (std::uint32_t b = 0; b < p.B; ++b) {
            const auto r = team.template argmin<0>(p.d, [&](auto i) {
                ArgContrib<V, 0> k;
                const V key = convert<R>(c * team.cum_exact(row, i) - mech::gumbel(team, draw, i));
                // After the previous draw in (key, index) order (the first pass: prev_key = -inf, every finite key).
                const auto later = (key > V(prev_key)) | ((key == V(prev_key)) & mask_for<R>(team.element(i) > UL(prev_i)));
                const auto open = team.load(excluded, i) < D(0.5);
                k.key = select(mask_for<R>(open) & later, key, V(inf));
                return k;
            });
            prev_key = r.key;
            prev_i = r.arg;
            if (team.rank() == 0) {
                team.store_at(ws.dbl[kMembers], b, static_cast<double>(r.arg));
                team.store_at(ws.dbl[kBase], b, team.cum_exact_at(row, r.arg));
            }
            team.sync();
        }
    }

    /// The exact samplers' set of round t (see the header): B exact draws over the experts not excluded, each drawn
    /// member excluded at once (its lattice sum starts at 0). Every member of the team makes the same draws.
    template <class Team, class WS, class Row>
    DPR_HD static void draw_set_exact(const Params& p, const Team& team, const WS& ws, std::uint64_t t, const Row& row) {
        const auto excluded = ws.dbl[kExcluded];
        rng::StreamId id;
        id.seed = team.key().seed;
        id.stream = team.key().stream;
        id.instance = team.instance();
        id.purpose = rng::Purpose::Exponential;
        id.round = static_cast<std::uint32_t>(t);
        for (std::uint32_t b = 0; b < p.B; ++b) {
            id.element = b;
            const std::uint32_t x = mech::exact_exp_draw(p.xexp, p.d, [&](std::uint32_t i) {
                return team.load_at(excluded, i) > 0.5 ? std::numeric_limits<double>::infinity() : team.cum_exact_at(row, i);
            }, id);
            team.sync(); // every member has read the excluded flags
            if (team.rank() == 0) {
                team.store_at(ws.dbl[kMembers], b, static_cast<double>(x));
                team.store_at(ws.dbl[kBase], b, 0.0);
                team.store_at(excluded, x, 1.0);
            }
            team.sync();
        }
    }

    /// Round t's loss of member b (expert y) rounded at random onto the lattice: the word of (Lattice, sub 1,
    /// round t - 1, element b).
    template <class Team>
    DPR_HD static double lattice_loss(const Params& p, const Team& team, std::uint64_t t, std::uint32_t b, double loss) {
        const std::uint32_t w = rng::instance_stream(team, rng::Purpose::Lattice, 1u, t - 1, b).block(0).w[0];
        return noise::lattice_round(loss, p.dlap.gamma, w);
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t t, const Row& row) {
        const auto members = ws.dbl[kMembers];
        const auto base = ws.dbl[kBase];
        double sets = team.get(ws.scalars, kSets);
        std::uint64_t start = static_cast<std::uint64_t>(team.get(ws.scalars, kStart));
        // The noisy phase losses of the live set (none before the first selection).
        double best = std::numeric_limits<double>::infinity();
        std::uint32_t x = 0;
        if (sets > 0) {
            for (std::uint32_t b = 0; b < p.B; ++b) {
                const auto y = static_cast<std::uint32_t>(team.load_at(members, b));
                // The phase's loss so far and its noise: the lattice sum and the kept node sum (exact samplers), or
                // L_{t-1} - L at the phase start and the prefix's nodes.
                const double chat = p.lattice ? team.load_at(base, b) + team.load_at(ws.dbl[kPrefixNoise], b)
                                              : team.cum_exact_at(row, y) - team.load_at(base, b) +
                                                    tree_noise(p, team, start, t - start, b);
                if (chat < best) best = chat, x = y;
            }
        }
        if ((sets == 0 || best > p.tau) && sets < p.K) {
            team.sync(); // every member has read the set before it is replaced
            if (sets > 0 && team.rank() == 0)
                for (std::uint32_t b = 0; b < p.B; ++b)
                    team.store_at(ws.dbl[kExcluded], static_cast<std::uint32_t>(team.load_at(members, b)), 1.0);
            team.sync();
            if (p.lattice)
                draw_set_exact(p, team, ws, t, row);
            else
                draw_set(p, team, ws, t, row);
            sets += 1.0;
            start = t;
            x = static_cast<std::uint32_t>(team.load_at(members, 0)); // all phase counts are 0 + no noise: member 0
        }
        const double loss = team.loss_exact_at(row, x);
        team.sync();
        if (p.lattice && team.rank() == 0) // the live set's lattice sums take round t's losses, its node sums a leaf
            for (std::uint32_t b = 0; b < p.B; ++b) {
                const double l = team.loss_exact_at(row, static_cast<std::uint32_t>(team.load_at(members, b)));
                team.store_at(base, b, team.load_at(base, b) + lattice_loss(p, team, t, b, l));
                const double z = start == t ? 0.0 : team.load_at(ws.dbl[kPrefixNoise], b); // a new set: empty prefix
                team.store_at(ws.dbl[kPrefixNoise], b, next_prefix_noise(p, team, start, t - start, b, z));
            }
        if (team.rank() == 0) {
            team.put(ws.scalars, kSets, sets);
            team.put(ws.scalars, kStart, static_cast<double>(start));
            team.put(ws.scalars, kX, static_cast<double>(x));
            if (start == t) team.put(ws.scalars, kLastSet, static_cast<double>(t));
        }
        team.sync();
        return {loss, loss};
    }

    DPR_HD static void diagnostics(const Params& p, const double* s, double* out) {
        budget_diagnostics(s[kSets], p.K, out);
        out[2] = s[kLastSet];
    }
};

} // namespace dpr::learners
