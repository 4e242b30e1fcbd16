#pragma once
// The learner contract (the engine's one extension point for algorithms). A learner is one header in
// kernels/learners/ with a struct L providing
//
//   struct L : Learner<Geometry::G>              G: its decision set, which must match the adversary's loss set
//                                                (the base declares kGeometry = G)
//   static constexpr const char* kName;          TOML value of [learner] algorithm
//   static constexpr KeySpec kKeys[];            its own [learner] keys (see kernels/core/params.hpp)
//   static constexpr bool kInstanceLanes;        true: round() is written over lane values (below), so an
//                                                executor may put instances in the vector lanes; false:
//                                                scalar code over a contiguous state (rank 0 of a team)
//   struct Params;                               trivially copyable (copied to the GPU as is); usually : Dims
//   static Params resolve(const KeyValues&, const Problem&);
//   static bool check(const KeyValues&, const Problem&, Diagnostic&);
//   static PrivacyReport privacy(const Params&); the (eps, delta) it actually provides, computed from
//                                                its noise parameters (docs/ARCHITECTURE.md §3)
//   DPR_HD static WorkspaceSpec workspace(const Params&);     its per-instance state (kernels/core/team.hpp):
//                                                arrays of double, arrays in the run's precision, scalars
//   template <class Team, class WS> DPR_HD static void init(const Params&, const Team&, const WS&);
//   template <class Team, class WS, class Row>
//   DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params&, const Team&, const WS&,
//                                                                        std::uint64_t t, const Row& row);
//
// round() plays round t (1-indexed): it forms x_t from what it has seen (rounds < t), is charged on the loss
// vector l_t (team.loss(row, i): the run's precision; team.loss_exact(row, i): double), then updates its state
// with the feedback its model allows (the whole vector for full information, only the played coordinate for
// bandits). It returns the expected loss <l_t, x_t> and the realised loss (equal for deterministic plays), per
// instance. Everything per coordinate goes through the team (kernels/core/team.hpp): its loops, reductions,
// workspace views and random streams (keyed by team.key(), team.instance(), team.element(i)), so the same
// source runs on SIMD lanes (coordinates or instances) and GPU threads. The registry checks the contract at
// compile time (kernels/learners/registry.hpp). Registering a learner is one line there.
//
// Optional serial round: a learner with kInstanceLanes = false whose init() and round() do all their work on rank 0
// of the team (the others only wait and take the broadcast result) may declare
//   static constexpr bool kSerialRound = true;
// and the CUDA backend's automatic policy then runs it a thread per instance (state contiguous) at every d once there
// are enough instances to fill the GPU, instead of a warp per instance in which 31 of 32 threads idle (H100,
// private-bandit-fw on the simplex, n = 1024, 16384 instances: 2.5x; cuda/engine_impl.cuh). Results do not change:
// the same scalar code runs either way.
//
// Optional shared cumulative losses (AFKT23 learners; docs/spec/checks.md §3.4): a learner may declare
//   static constexpr bool kReadsCumulative = true;
// and then read L_{t-1}(i) = sum_{s<t} l_s(i) through team.cum_exact(row, idx) in round t. The engine computes
// these prefix sums once per point for a shared (oblivious) sequence -- it keeps them anyway for the
// comparator -- and once per instance for per-instance sequences, so the learner's own state need not hold d
// cumulative losses: AFKT23's learners keep O(1) state per instance at d = 2^20.
//
// Optional loss families (kernels/core/sets.hpp LossFamily): a learner charged on convex losses other than linear
// ones declares the families it accepts,
//   static constexpr unsigned kLossFamilies = loss_bit(LossFamily::Squared) | loss_bit(LossFamily::Absolute);
// (default: Linear only); the host pairs it only with adversaries of those families, passes the family in
// Problem::loss, and gives round() rows of loss_row_width(family, d) numbers: a_t at 0..d-1 and b_t at d, read
// with team.loss_exact_at(row, d). round() returns l_t(x_t); the comparator of these (realizable) families is 0.
//
// Optional diagnostics (the "what to record" lists of the docs/spec/ pages): a learner may also declare
//   static constexpr std::array<const char*, N> kDiagnostics = {"max_noise_inf", ...};
//   DPR_HD static void diagnostics(const Params&, const double* scalars, double* out);   // out[0..N)
// keeping what it needs in its workspace scalars; the engine reads them once per instance after round T and
// writes them next to the final regret (final_regret.csv columns, run.json per-point means).
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/core/detect.hpp"
#include "kernels/core/hd.hpp"
#include "kernels/core/math.hpp"
#include "kernels/core/params.hpp"
#include "kernels/core/sets.hpp"
#include "kernels/core/team.hpp"
#include "kernels/mechanisms/blt.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::learners {

/// What every learner declares the same way: its decision set (kGeometry). A learner header includes this file
/// (with the few extra kernels/ headers it uses) and derives from Learner<G>.
template <Geometry G>
struct Learner {
    static constexpr Geometry kGeometry = G;
};

/// Who an instance is, for learners with scalar streams (SCRiBLe; docs/ARCHITECTURE.md §2).
struct InstanceCtx {
    std::uint32_t seed;
    std::uint32_t stream;   ///< 0 with common random numbers across points
    std::uint32_t instance;

    DPR_HD rng::StreamId id(rng::Purpose purpose, std::uint32_t sub, std::uint32_t round,
                            std::uint32_t element) const {
        rng::StreamId s;
        s.seed = seed;
        s.stream = stream;
        s.instance = instance;
        s.purpose = purpose;
        s.sub = sub;
        s.round = round;
        s.element = element;
        return s;
    }
};

/// The privacy guarantee a learner provides (docs/ARCHITECTURE.md §3), reported per point in run.json.
struct PrivacyReport {
    double epsilon = kInf;            ///< inf for non-private learners
    double delta = 0.0;
    const char* accountant = "none";  ///< how epsilon was computed from the noise
    const char* calibration = "none"; ///< "paper" or "strict" (docs/spec/model.md §1.5), "none"
    const char* mechanism = "none";   ///< what carries the noise
    double noise_scale = 0.0;         ///< per-node Laplace b or Gaussian sigma actually used
    /// mu-Gaussian-DP of the released outputs when the noise is Gaussian (mech::Guarantee::gdp_mu), else 0;
    /// `dpregret audit` then bounds mu instead of eps by default (docs/AUDITS.md).
    double gdp_mu = 0.0;
    /// Prefix-sum learners (tree_learner.hpp): the squared l2 norm of everything released about one step per unit
    /// of its sensitivity (the tree's h', BLT's sum_k c_k^2; PrefixMechanism::sensitivity_squared), 0 otherwise;
    /// and the BLT (buffers = 0 for the tree).
    double sensitivity_squared = 0.0;
    mech::BltNoise blt;
    /// The released nodes hold the loss vectors themselves (AS17's DP-FTRL trees, tree_learner.hpp As17Ftrl): a
    /// changed round moves each node that holds it by l_t - l'_t, so `dpregret audit` composes the exact trade-off
    /// curve of the audited pair from the node scale (host/audit/tradeoff.cpp learner_tradeoff). False for trees over
    /// other vectors (ENV21's batch estimates) and for every other release.
    bool nodes_hold_losses = false;
    /// The (epsilon, delta) above holds for the code as it runs, in float as in double: every draw that carries the
    /// privacy is an exact sampler (lattice noise, the exact exponential mechanism, AboveThreshold on a lattice;
    /// docs/spec/model.md §1.8-§1.10). False: it is the guarantee of exact real-valued noise, which the floating-point
    /// samplers approximate (run.json's float warning names such learners).
    bool as_run = false;

    /// epsilon, delta, accountant and gdp_mu from the guarantee of the mechanism that carries the noise (the
    /// calibration, the mechanism's description and the scale are the learner's to say).
    void set(const mech::Guarantee& g) {
        epsilon = g.epsilon;
        delta = g.delta;
        accountant = g.accountant;
        gdp_mu = g.gdp_mu;
        as_run = g.as_run;
    }
};

/// Planted privacy bugs (docs/AUDITS.md "Planted bugs"): variants of a correct learner that keep
/// reporting the correct learner's (eps, delta) while providing less privacy, so that the auditor can be shown
/// to catch them. Only `dpregret audit --allow-planted` applies one, through the learner's optional
///   static bool plant(Params&, Planted);   // false: this learner has no such variant
/// called after privacy() has been read from the correct Params. Never used by `dpregret run`.
enum class Planted : std::uint8_t {
    None = 0,
    HalfNoise,        ///< the node noise scale halved (really 2 eps)
    LeafWithoutNoise, ///< the tree's level-0 nodes (the leaves) released without noise
    ReusedNoise,      ///< every round's tree draws from the same counter (round 1's): node noise reused
    NoThresholdNoise, ///< the sparse vector's threshold without noise
    TwiceTemperature, ///< the exponential mechanism's coefficient doubled (really 2 eta per selection)
    /// BLT's sigma calibrated with its sensitivity summed over one column too few, sum_{k<n-1} c_k^2 for the n
    /// released steps (really sqrt(sum_{k<n} c_k^2 / sum_{k<n-1} c_k^2) times the claimed mu)
    BltShortSensitivity,
    /// lattice noise (docs/spec/model.md §1.8) replaced by the continuous Laplace sampler of the same scale, whose
    /// float draws leak through their rounding (Mironov 2012; issue 48 measured eps ~ 2 for a claim of 1)
    FloatLattice,
    /// the node noise scale times 0.9 (really eps / 0.9 for Laplace nodes, mu / 0.9 for Gaussian ones): a scale error
    /// that an eps-only bound cannot show where its ceiling is below 0.9 of the claim, and that the f-DP test against
    /// the claimed trade-off curve sees (docs/AUDITS.md "The claimed trade-off curve"; issue 49, item 3)
    NineTenthsNoise,
};
inline constexpr const char* kPlantedNames = "none|half-noise|leaf-without-noise|reused-noise|no-threshold-noise|"
                                             "twice-temperature|blt-short-sensitivity|float-lattice|nine-tenths-noise";

template <class L>
using PlantOp = decltype(L::plant(std::declval<typename L::Params&>(), Planted::None));
template <class L>
using HasPlant = is_detected_exact<bool, PlantOp, L>;

/// Whether a learner reads L_{t-1} through team.cum_exact (kReadsCumulative; false without it).
template <class L>
using ReadsCumulativeOp = std::bool_constant<L::kReadsCumulative>;
template <class L>
using ReadsCumulative = detected_or_t<std::false_type, ReadsCumulativeOp, L>;

template <class L>
using SharedDrawOp = std::bool_constant<L::kSharedDraw>;
/// Whether a learner's exponential mechanism can be drawn from a CDF prepared once per round for all
/// instances of a shared sequence (kSharedDraw; false without it). Such a learner also declares
///   static bool shares_draw(const Params&);                 // false: no CDF to share (e.g. every weight 1)
///   static double shared_coefficient(const Params&);        // c of exp(-c s), > 0
///   template <class R, class V> static V shared_score(const Params&, V cum);
///                                        // s(i) from L_{t-1}(i), on double lanes
///   template <class R> static bool shared_round(const Params&);
///                                        // in precision R, with the CDF: its round is O(1) per instance
///                                        // (then instance lanes at any d)
///   static const mech::ExactExpPlan* shared_exact_plan(const Params&);
///                                        // the exact mechanism's plan when the draw is exact (docs/spec/model.md
///                                        // §1.9): the executor then prepares mech::exact_exp_table over
///                                        // shared_score<double> instead of the CDF; null: the CDF
/// and reads the CDF (or the table) in its round with shared_cdf_of(row, t) (kernels/core/team.hpp; null where
/// none is prepared). It may also declare
///   static double shared_scalar(const Params&, const double* cum, std::uint32_t d);
///                                        // a per-round value computed from L_{t-1} alone, the same for every
///                                        // instance of a shared sequence: the executor computes it once per round
///                                        // on first use, and the learner reads it with shared_scalar_of(row, t)
///                                        // (null where none is prepared), where it must be the bits of its own
///                                        // computation (potential-svt-experts' log potential with the exact samplers)
template <class L>
using SharedDraw = detected_or_t<std::false_type, SharedDrawOp, L>;
template <class L>
using SharedScalarOp = decltype(&L::shared_scalar);
template <class L>
using SharedScalar = is_detected<SharedScalarOp, L>;

/// The first two diagnostics of a learner with a budget of K switches (svt-experts, potential-svt-experts) or
/// sets (tree-experts): out[0] = the number used, out[1] = 1 once it reached K (no further switch: the last
/// choice stays), else 0.
DPR_HD inline void budget_diagnostics(double used, double K, double* out) {
    out[0] = used;
    out[1] = used >= K ? 1.0 : 0.0;
}

/// Whether a learner's round is serial code on rank 0 of its team (kSerialRound; false without it).
template <class L>
using SerialRoundOp = std::bool_constant<L::kSerialRound>;
template <class L>
using SerialRound = detected_or_t<std::false_type, SerialRoundOp, L>;

/// The team adapter of a serial-round learner: rank 0 runs L::init_state / L::round_lane0 on the instance's state
/// (ws.dbl[0]) and diagnostics (ws.scalars); the others wait and take the broadcast charge. A serial learner derives
/// from SerialLearner<L> (which declares kSerialRound) and writes only
///   DPR_HD static void init_state(const Params&, const InstanceCtx&, double* state, double* diagnostics);
///   DPR_HD static double round_lane0(const Params&, const InstanceCtx&, double* state, double* diagnostics,
///                                    std::uint64_t t, const double* loss_row);   // returns l_t(x_t)
template <class L>
struct SerialLearner {
    static constexpr bool kSerialRound = true;

    template <class P, class Team, class WS>
    DPR_HD static void init(const P& p, const Team& team, const WS& ws) {
        const InstanceCtx c{team.key().seed, team.key().stream, team.instance()};
        if (team.rank() == 0) L::init_state(p, c, ws.dbl[0].data(), ws.scalars.data());
        team.sync();
    }

    template <class P, class Team, class WS, class Row>
    DPR_HD static RoundCharge<double> round(const P& p, const Team& team, const WS& ws, std::uint64_t t,
                                            const Row& row) {
        double charged = 0.0;
        const InstanceCtx c{team.key().seed, team.key().stream, team.instance()};
        if (team.rank() == 0) charged = L::round_lane0(p, c, ws.dbl[0].data(), ws.scalars.data(), t, row.exact);
        charged = team.broadcast(charged);
        return {charged, charged};
    }
};

/// Whether a learner's first double array may live in registers on the GPU (kRowInRegisters; false without
/// it): its init and round reach ws.dbl[0] only with the indices that team.for_each / team.reduce hand their
/// bodies, never with an index of their own (cuda/teams.cuh RegWarpTeam, docs/GPU.md "State in registers").
template <class L>
using RowInRegistersOp = std::bool_constant<L::kRowInRegisters>;
template <class L>
using RowInRegisters = detected_or_t<std::false_type, RowInRegistersOp, L>;

/// Number of diagnostics a learner declares (0 without kDiagnostics).
template <class L>
using DiagnosticCountOp = std::integral_constant<std::size_t, L::kDiagnostics.size()>;
template <class L>
using DiagnosticCount = detected_or_t<std::integral_constant<std::size_t, 0>, DiagnosticCountOp, L>;

} // namespace dpr::learners
