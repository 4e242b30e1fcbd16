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
#include <limits>

#include "kernels/learners/common.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/exponential.hpp"
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
    };
    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    static constexpr int kSetSize = key_index(kKeys, "set_size");
    static constexpr int kMaxSets = key_index(kKeys, "max_sets");
    static constexpr int kThresholdKey = key_index(kKeys, "threshold");
    static constexpr int kBeta = key_index(kKeys, "beta");
    static constexpr bool kInstanceLanes = false;
    static constexpr bool kReadsCumulative = true;

    struct Params : Dims {
        double epsilon;
        std::uint32_t B;
        std::uint32_t K;
        std::uint32_t h;  ///< levels of a released estimate: ceil(log2 T) (at least 1)
        double b;         ///< Laplace scale of a node: 2 B h / eps
        double tau;
        double eps_sel;   ///< per selection draw: eps / (2 K B)
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
        const double beta = kv.get(kBeta, 0.05);
        p.tau = kv.get(kThresholdKey, p.h * p.b * std::log(2.0 * p.B * static_cast<double>(pb.T) / beta));
        p.eps_sel = p.epsilon / (2.0 * p.K * p.B);
        return p;
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
        return true;
    }

    static PrivacyReport privacy(const Params& p) {
        PrivacyReport r;
        r.epsilon = p.epsilon / 2.0 + static_cast<double>(p.K) * p.B * p.eps_sel;
        r.delta = 0.0;
        r.accountant = "basic composition: eps/2 (B Laplace trees per phase, parallel over phases) + K B selections of "
                       "eps/(2KB) each";
        r.mechanism = "binary-tree counts (Laplace 2Bh/eps per node) + exponential mechanism without replacement";
        r.noise_scale = p.b;
        return r;
    }

    enum Scalar : int { kSets = 0, kStart, kX, kLastSet, kScalars };
    enum Array : int { kExcluded = 0, kMembers, kBase };

    DPR_HD static WorkspaceSpec workspace(const Params& p) {
        return WorkspaceSpec{}.add_double(1, p.d).add_double(1, p.B).add_double(1, p.B).scalars(kScalars);
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
        mech::TreeNoise tn;
        tn.variant = mech::TreeVariant::Binary;
        tn.noise = mech::NodeNoise::Laplace;
        tn.scale = pr.b;
        tn.T = pr.T;
        const RngKey key = team.key();
        tn.seed = key.seed;
        tn.stream = key.stream;
        tn.instance = team.instance();
        return mech::tree_part<double>(tn, p, b, start - 1);
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
                const double chat = team.cum_exact_at(row, y) - team.load_at(base, b) + tree_noise(p, team, start, t - start, b);
                if (chat < best) best = chat, x = y;
            }
        }
        if ((sets == 0 || best > p.tau) && sets < p.K) {
            team.sync(); // every member has read the set before it is replaced
            if (sets > 0 && team.rank() == 0)
                for (std::uint32_t b = 0; b < p.B; ++b)
                    team.store_at(ws.dbl[kExcluded], static_cast<std::uint32_t>(team.load_at(members, b)), 1.0);
            team.sync();
            draw_set(p, team, ws, t, row);
            sets += 1.0;
            start = t;
            x = static_cast<std::uint32_t>(team.load_at(members, 0)); // all phase counts are 0 + no noise: member 0
        }
        const double loss = team.loss_exact_at(row, x);
        team.sync();
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
