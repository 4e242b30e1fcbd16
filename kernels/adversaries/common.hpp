#pragma once
// What every oblivious adversary shares (docs/ARCHITECTURE.md §3, docs/ADVERSARIES.md): the address of its loss
// sequence, the layout of its draws in the counter-based stream, and the few derivations that several
// adversaries use (a hidden best expert, a row of Bernoulli losses, a normalised Gaussian vector).
//
// The adversary contract (one header per adversary, namespace dpr::adversaries):
//   struct Xyz : Adversary<Geometry::G> {         G: the loss set its losses lie in (kernels/core/sets.hpp);
//                                                the base declares kGeometry = G and kSharedOnly = false
//     static constexpr const char* kName;        the TOML value of [adversary] kind
//     static constexpr bool kSharedOnly = true;  optional: the host rejects adversary.per_instance = true
//     static constexpr KeySpec kKeys[] = {...};  its own keys (d, per_instance and kind are common);
//                                                a keyless adversary derives from Keyless<G> (below)
//     struct Params : Dims {...};                trivially copyable, d and T from Dims (params.hpp); to the GPU
//     static Params resolve(const KeyValues&, const Problem&);
//     static bool check(const KeyValues&, const Problem&, Diagnostic&);
//     DPR_HD static void fill(const Params&, const SequenceCtx&, std::uint64_t t, double* out);
//     static constexpr LossFamily kLoss;          optional (default Linear): the form of its losses
//   };
// fill() writes l_t (t = 1..T) into out[0..d) -- for a linear-model loss family (kernels/core/sets.hpp), a_t into
// out[0..d) and b_t into out[d], loss_row_width(kLoss, d) numbers -- and is a pure function of (params, ctx, t): any round
// can be generated without the others, so the engine generates rounds in parallel chunks. Whatever
// an adversary keeps "across rounds" (a best expert, an order of the experts, the Thm 5 index j) is
// re-derived from the stream at every call, never stored.
//
// Optional: an adversary whose rows repeat (piecewise-constant sequences: halving within a phase, the Thm 5
// mixture) may declare
//     DPR_HD static std::uint64_t row_epoch(const Params&, std::uint64_t t);
// with the promise that rounds of equal epoch have bitwise-equal rows for every SequenceCtx; host code then
// copies the previous row instead of calling fill() again (point_runner.cpp). The promise is tested for every
// adversary that declares it (tests/adversaries/test_adv_contract.cpp).
//
// check() reports an error by `return diag.fail("key", "fmt", ...)` (false). A value that is accepted
// but probably not what the user wants is a warning: diag.fail(...) is filled, diag.warning_only is
// set, and check() returns true.
//
// Stream layout (part of the reproducibility contract: never renumber). Every draw uses
// StreamId{seed, stream, instance = ctx.sequence, Purpose::Adversary, sub, round, element}:
//   sub kSubLoss      round t (1..T)       the per-round randomness of l_t; element as the adversary
//                                          documents (a coordinate pair, a coordinate, or 0)
//   sub kSubHidden    round 0, or the      hidden indices fixed for the whole sequence: the best
//                     segment index s      expert x*, the Thm 5 index j, the best of segment s
//   sub kSubOrder     round 0              the key of the random order of the experts (Feistel)
//   sub kSubDirection round 0, element i   coordinate i of a fixed random direction theta
//   sub kSubMeans     round 0, element k   per-expert means fixed for the sequence (realizable's
//                                          mu_{2k}, mu_{2k+1}: the two uniforms of one block)
//   sub kSubHidden    round t (1..T)       bco-distance's centre index k_t
//   sub kSubCentres   round 2k+1, 2k+2,    bco-distance's centre directions g_k, h_k, under the ctx
//                     element i            {layout, 0, shared}, not the run's seed
// Rounds are < 2^32 (rng::check_layout), so t fits the 32-bit round field.
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/core/hd.hpp"
#include "kernels/core/params.hpp"
#include "kernels/core/sets.hpp"
#include "kernels/noise/samplers.hpp"
#include "kernels/rng/stream.hpp"
#include "kernels/rng/uniform.hpp"

namespace dpr::adversaries {

/// `sequence` value of the one loss sequence shared by all instances of a config point. A
/// per-instance sequence (adversary.per_instance = true) uses the instance index instead, so the
/// instance index 0xFFFFFFFF is not available to per-instance sequences.
inline constexpr std::uint32_t kSharedSequence = rng::kReservedInstance;

/// The address of one loss sequence: key (seed, stream) and the sequence index, which goes into
/// StreamId::instance with Purpose::Adversary (independent of every learner draw, whose purposes
/// differ).
struct SequenceCtx {
    std::uint32_t seed;
    std::uint32_t stream;
    std::uint32_t sequence; ///< kSharedSequence, or the instance index when per_instance
};

enum AdversarySub : std::uint32_t {
    kSubLoss = 0,
    kSubHidden = 1,
    kSubOrder = 2,
    kSubDirection = 3,
    kSubMeans = 4,
    kSubCentres = 5, ///< bco-distance: the directions that fix its centres (under the `layout` key, not the seed)
    kSubsUsed = 6,   ///< one past the largest; new subs go above kSubCentres
};
static_assert(kSubsUsed <= rng::kMaxSub, "adversary sub values must fit the counter's 8-bit sub field");

/// The StreamId of one adversary draw.
DPR_HD DPR_FORCEINLINE rng::StreamId adversary_stream(const SequenceCtx& ctx, std::uint32_t sub,
                                                      std::uint64_t round, std::uint32_t element) {
    rng::StreamId id;
    id.seed = ctx.seed;
    id.stream = ctx.stream;
    id.instance = ctx.sequence;
    id.purpose = rng::Purpose::Adversary;
    id.sub = sub;
    id.round = static_cast<std::uint32_t>(round);
    id.element = element;
    return id;
}

/// A hidden index uniform on [0, n), n >= 1: uniform_index over the stream (kSubHidden, round, 0).
/// With round = 0 this is the best expert x* of bernoulli, realizable, halving and the Thm 5 index j.
DPR_HD inline std::uint32_t hidden_index(const SequenceCtx& ctx, std::uint64_t round, std::uint32_t n) {
    rng::WordStream src(adversary_stream(ctx, kSubHidden, round, 0));
    return noise::uniform_index(src, n);
}

/// Independent Bernoulli losses of round t: out[i] = 1{U_{t,i} < mean_i} with mean_i = p_star for
/// i = star and p_other otherwise (star >= d: no special expert). Coordinates 2k and 2k+1 take the two
/// open 53-bit uniforms of one Philox block, stream (kSubLoss, round t, element k): one block per
/// pair of experts, and still a pure function of (t, i).
DPR_HD inline void bernoulli_row(const SequenceCtx& ctx, std::uint64_t t, std::uint32_t d, std::uint32_t star,
                                 double p_star, double p_other, double* out) {
    for (std::uint32_t k = 0; 2 * static_cast<std::uint64_t>(k) < d; ++k) {
        rng::WordStream src(adversary_stream(ctx, kSubLoss, t, k));
        const std::uint32_t i = 2 * k;
        out[i] = noise::bernoulli(src, i == star ? p_star : p_other) ? 1.0 : 0.0;
        if (i + 1 < d) out[i + 1] = noise::bernoulli(src, i + 1 == star ? p_star : p_other) ? 1.0 : 0.0;
    }
}

/// out[i] = Z_i, i = 0..d-1, independent standard normals (Box-Muller), Z_i from the stream
/// (sub, round, element i); returns sum Z_i^2.
DPR_HD inline double gaussian_vector(const SequenceCtx& ctx, std::uint32_t sub, std::uint64_t round,
                                     std::uint32_t d, double* out) {
    double sq = 0.0;
    for (std::uint32_t i = 0; i < d; ++i) {
        rng::WordStream src(adversary_stream(ctx, sub, round, i));
        out[i] = noise::gaussian(src, 1.0);
        sq += out[i] * out[i];
    }
    return sq;
}

/// Scales out[0..d) to unit l2 norm given its squared norm `sq`. A zero vector (not reachable from
/// open-interval Box-Muller draws, kept for safety) becomes e_0, so the result always has norm 1.
DPR_HD inline void normalise(double* out, std::uint32_t d, double sq) {
    if (!(sq > 0.0)) {
        for (std::uint32_t i = 0; i < d; ++i) out[i] = i == 0 ? 1.0 : 0.0;
        return;
    }
    const double inv = 1.0 / std::sqrt(sq);
    for (std::uint32_t i = 0; i < d; ++i) out[i] *= inv;
}

/// A::row_extra(params): numbers an adversary appends to each row after its loss family's (sufficient
/// statistics that only its comparator reads, e.g. bco-distance's one-hot centre counts, so that the engine's
/// running sum of the rows carries them to comparator()); 0 when the adversary does not declare it. Learners
/// never read them.
template <class A>
using RowExtraOp = decltype(A::row_extra(std::declval<const typename A::Params&>()));
template <class A>
using HasRowExtra = is_detected<RowExtraOp, A>;
template <class A>
std::uint64_t row_extra(const typename A::Params& p) {
    if constexpr (HasRowExtra<A>::value) return A::row_extra(p);
    else return 0;
}

/// What every adversary declares the same way: its loss set, and that per-instance sequences are allowed (a
/// shared-only adversary redeclares kSharedOnly = true). An adversary header includes this file only (with the
/// few extra kernels/ headers it uses) and derives from Adversary<G>.
template <Geometry G>
struct Adversary {
    static constexpr Geometry kGeometry = G;
    static constexpr bool kSharedOnly = false;
};

/// The common part of an adversary with no keys of its own (d and T only): derive from it and write kName
/// and fill().
template <Geometry G>
struct Keyless : Adversary<G> {
    static constexpr std::array<KeySpec, 0> kKeys{};

    struct Params : Dims {};

    static Params resolve(const KeyValues&, const Problem& pb) { return Params{dims(pb)}; }
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
};

} // namespace dpr::adversaries
