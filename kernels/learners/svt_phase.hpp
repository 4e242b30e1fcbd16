#pragma once
// The round skeleton of AFKT23's sparse-vector phase learners (docs/spec/afkt23.md §C1, §C2, §C4): svt-experts
// (Algorithm 1), adaptive-svt-experts (Algorithm 2) and potential-svt-experts (Algorithm 5) all play one expert
// per phase and ask an AboveThreshold instance (kernels/mechanisms/above_threshold.hpp) once per round whether
// the phase is over:
//
//   round t:  if the sparse vector fired at round t-1:     switch: x <- the learner's draw, k <- k + 1,
//                                                          a fresh sparse vector started at round t
//                                                          (no query in the first round of a phase)
//             elif k < K:                                  fire <- q_t + Lap(query scale) > rho_hat
//             play x
//
// What differs between the three is the draw at a switch, the threshold and the query q_t; each learner
// writes those and calls the members below for the rest, so the timing (a query fired at round t switches at
// t + 1), the budget K (the sparse vector freezes for good once k = K) and the randomness addresses (the
// threshold draw of the phase started at round t, the query of round t) are written once.
//
// State: scalars 0 .. kPhaseSlots - 1 of the learner's workspace (a learner's own scalars follow):
//   x        current expert                  k      switches so far (of the current run, for Algorithm 2)
//   acc      the phase accumulator the learner's query is built from (Alg. 1/2: the phase loss of x;
//            Alg. 5: ln phi at the phase start)
//   rho      the noisy threshold of the live sparse vector
//   pending  1 if the sparse vector fired at the previous round     fires   TOP answers so far
//   last     round of the latest switch (0 if none)
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"
#include "kernels/learners/common.hpp"
#include "kernels/mechanisms/above_threshold.hpp"
#include "kernels/mechanisms/exact_exponential.hpp"
#include "kernels/mechanisms/lattice_above_threshold.hpp"
#include "kernels/noise/discrete_laplace.hpp"
#include "kernels/rng/lanes.hpp"

namespace dpr::learners {

enum PhaseSlot : int { kPhaseX = 0, kPhaseK, kPhaseAcc, kPhaseRho, kPhasePending, kPhaseFires, kPhaseLast, kPhaseSlots };

/// The privacy keys of the phase learners that choose between a pure and an approximate guarantee
/// (svt-experts: AFKT23 Thm 3.1 / 3.2; potential-svt-experts: Thm 6 / 7; docs/spec/afkt23.md §C1, §C4). The
/// learner derives from it, lists epsilon, variant ("pure|approx") and delta first in its kKeys, in this
/// order, and derives its Params from PureOrApprox::Params.
struct PureOrApprox {
    static constexpr int kEpsilon = 0, kVariant = 1, kDelta = 2;

    struct Params : Dims {
        double epsilon;
        bool approx;
        double delta; ///< used by variant = "approx" only
    };

    template <class L>
    static void resolve_privacy(const KeyValues& kv, const Problem& pb, Params& p) {
        static_assert(key_index(L::kKeys, "epsilon") == kEpsilon &&
                          key_index(L::kKeys, "variant") == kVariant &&
                          key_index(L::kKeys, "delta") == kDelta,
                      "a PureOrApprox learner lists epsilon, variant and delta first");
        static_cast<Dims&>(p) = dims(pb);
        p.epsilon = kv.num[kEpsilon];
        p.approx = kv.get(kVariant, 0.0) == 1.0;
        p.delta = kv.get(kDelta, 1e-6);
    }

    /// A warning (and true) when delta is given to variant = "pure", which ignores it.
    static bool warn_ignored_delta(const Params& p, const KeyValues& kv, Diagnostic& diag) {
        if (p.approx || !kv.given[kDelta]) return false;
        diag.fail("delta", "delta is used only by variant = \"approx\"; variant = \"pure\" ignores it");
        diag.warning_only = true;
        return true;
    }

    /// The advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth Thm 3.20) of K mechanisms of e each, at
    /// the extra delta: sqrt(2 K ln(1/delta)) e + K e (e^e - 1). The epsilon of variant = "approx".
    static double advanced_composition(double K, double e, double delta) {
        return std::sqrt(2.0 * K * std::log(1.0 / delta)) * e + K * e * std::expm1(e);
    }
};

/// The key of the phase learners' exact samplers (svt-experts, adaptive-svt-experts; docs/spec/model.md §1.9, §1.10).
inline constexpr KeySpec kExactSamplersKey = {
    "noise", KeyType::Choice, "laplace", 0, 1, "laplace|discrete-laplace",
    "samplers: laplace = the continuous sparse vector and exponential mechanism (double draws); discrete-laplace = "
    "exact samplers, the sparse vector on a lattice and the exponential mechanism on integer weights, whose report "
    "holds as run in floating point (the default in float precision where it applies; docs/spec/model.md §1.9, "
    "§1.10)"};

/// Why a phase learner's exact samplers do not apply: the part that does not (`what`) and why (nullptr: they apply).
struct ExactObstacle {
    const char* what = nullptr;
    const char* why = nullptr;
};

/// check()'s error when noise = "discrete-laplace" was asked for and the exact samplers do not apply.
inline bool exact_obstacle_error(const ExactObstacle& o, Diagnostic& diag) {
    return diag.fail("noise", "%s %s (docs/spec/model.md §1.9, §1.10)", o.what ? o.what : "the exact samplers",
                     o.why ? o.why : "do not apply");
}

template <class Team>
struct SvtPhase {
    using U = typename Team::template uni<double>;
    using UI = typename Team::template uni<std::uint32_t>;
    using M = decltype(U() > U());

    U x, k, acc, rho, fires, last;
    M pending;

    template <class WS>
    DPR_HD DPR_FORCEINLINE static SvtPhase load(const Team& team, const WS& ws) {
        SvtPhase s;
        s.x = team.get(ws.scalars, kPhaseX);
        s.k = team.get(ws.scalars, kPhaseK);
        s.acc = team.get(ws.scalars, kPhaseAcc);
        s.rho = team.get(ws.scalars, kPhaseRho);
        s.fires = team.get(ws.scalars, kPhaseFires);
        s.last = team.get(ws.scalars, kPhaseLast);
        s.pending = team.get(ws.scalars, kPhasePending) > U(0.5);
        return s;
    }

    /// The state of round 0: expert x0, threshold rho0 of the sparse vector started at round 1, accumulator acc0.
    template <class WS>
    DPR_HD DPR_FORCEINLINE static void start(const Team& team, const WS& ws, const UI& x0, const U& rho0, const U& acc0) {
        if (team.rank() == 0) {
            team.put(ws.scalars, kPhaseX, convert<double>(x0));
            team.put(ws.scalars, kPhaseK, U(0.0));
            team.put(ws.scalars, kPhaseAcc, acc0);
            team.put(ws.scalars, kPhaseRho, rho0);
            team.put(ws.scalars, kPhasePending, U(0.0));
            team.put(ws.scalars, kPhaseFires, U(0.0));
            team.put(ws.scalars, kPhaseLast, U(0.0));
        }
    }

    /// The switch of round t, on the pending lanes: expert y, k + 1, accumulator acc0, the threshold rho_new of
    /// the sparse vector started at round t (the caller draws it with mech::svt_threshold(..., t, ...)).
    DPR_HD DPR_FORCEINLINE void switch_to(const UI& y, std::uint64_t t, const U& rho_new, const U& acc0) {
        const U one(1.0), zero(0.0);
        x = select(pending, convert<double>(y), x);
        k = k + select(pending, one, zero);
        acc = select(pending, acc0, acc);
        last = select(pending, U(static_cast<double>(t)), last);
        rho = select(pending, rho_new, rho);
    }

    /// The lanes whose sparse vector asks at round t: live (k < K) and not in the first round of a phase.
    DPR_HD DPR_FORCEINLINE M asks(double K) const { return (!pending) & (k < U(K)); }

    /// The question of round t with query q: q + Lap(query scale) > rho on the lanes that ask.
    DPR_HD DPR_FORCEINLINE M test(const Team& team, const mech::SvtScales& svt, double K, std::uint64_t t,
                                  const U& q) const {
        return asks(K) & (mech::svt_noisy_query(team, svt, q, t, std::uint32_t{0}) > rho);
    }

    /// The same question on the lattice sparse vector (kernels/mechanisms/lattice_above_threshold.hpp): q a sum of
    /// lattice points, rho a lattice threshold.
    DPR_HD DPR_FORCEINLINE M test_lattice(const Team& team, const mech::LatticeSvt& svt, double K, std::uint64_t t,
                                          const U& q) const {
        return asks(K) & (mech::lattice_svt_noisy_query(team, svt, q, t, std::uint32_t{0}) > rho);
    }

    /// With the exact samplers (docs/spec/model.md §1.9, §1.10): round t's loss l of the played expert rounded at
    /// random onto Gamma Z with the word of (Lattice, sub 1, round t - 1, element 0), the value the phase accumulator
    /// adds, so that the queries are exact sums of lattice points and move by at most ceil(1 / Gamma) steps between
    /// neighbours (the word is the same on both sides). |l| <= 1.
    DPR_HD DPR_FORCEINLINE static U lattice_loss(const Team& team, const U& l, double gamma, std::uint64_t t) {
        const UI w = rng::instance_stream(team, rng::Purpose::Lattice, 1u, t - 1, std::uint32_t{0}).block(0).w[0];
        return noise::lattice_round(l, gamma, w);
    }

    /// The exact exponential mechanism of round t (model.md §1.9; plan over n candidates) on the pending lanes: one
    /// scalar draw per switching instance from the words of (Exponential, sub 0, round t, element 0), over the scores
    /// score(l, i) (lane l, candidate i, in double). The other lanes get 0, which switch_to ignores. A scalar loop per
    /// instance: O(n) per switch.
    template <class Score>
    DPR_HD UI exact_draw(const Team& team, const mech::ExactExpPlan& plan, std::uint32_t n, std::uint64_t t,
                         Score&& score) const {
        return each_pending(team, t, [&](const rng::StreamId& id, int l) {
            return mech::exact_exp_draw(plan, n, [&](std::uint32_t i) { return score(l, i); }, id);
        });
    }

    /// The same draws from the round's shared table (mech::exact_exp_table over the scores every instance shares):
    /// the same index, in O(log n + 64) per instance.
    DPR_HD UI exact_draw_from_table(const Team& team, const mech::ExactExpPlan& plan, std::uint32_t n, std::uint64_t t,
                                    const double* table) const {
        return each_pending(team, t, [&](const rng::StreamId& id, int) {
            return mech::exact_exp_draw_from_table(plan, n, table, id);
        });
    }

    /// draw(id, l) for each pending lane l with id the stream (Exponential, sub 0, round t) of its instance; 0 on the
    /// other lanes.
    template <class Draw>
    DPR_HD UI each_pending(const Team& team, std::uint64_t t, Draw&& draw) const {
        rng::StreamId id;
        id.seed = team.key().seed;
        id.stream = team.key().stream;
        id.purpose = rng::Purpose::Exponential;
        id.round = static_cast<std::uint32_t>(t);
        const UI inst = team.instance();
        if constexpr (std::is_same<U, double>::value) {
            id.instance = inst;
            return draw(id, 0);
        } else {
            UI r(0u);
            for (int l = 0; l < Team::kWidth; ++l) {
                if (!pending[l]) continue;
                id.instance = inst[l];
                r.set(l, draw(id, l));
            }
            return r;
        }
    }

    /// Writes the state after round t (rank 0; the caller syncs the team before, so that every member has read
    /// the scalars, and after): `fire` pends a switch at t + 1, acc_next is the accumulator for round t + 1.
    template <class WS>
    DPR_HD DPR_FORCEINLINE void store(const Team& team, const WS& ws, const M& fire, const U& acc_next) const {
        const U one(1.0), zero(0.0);
        team.put(ws.scalars, kPhaseX, x);
        team.put(ws.scalars, kPhaseK, k);
        team.put(ws.scalars, kPhaseAcc, acc_next);
        team.put(ws.scalars, kPhaseRho, rho);
        team.put(ws.scalars, kPhasePending, select(fire, one, zero));
        team.put(ws.scalars, kPhaseFires, fires + select(fire, one, zero));
        team.put(ws.scalars, kPhaseLast, last);
    }
};

} // namespace dpr::learners
