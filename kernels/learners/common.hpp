#pragma once
// The learner contract (the engine's one extension point for algorithms). A learner is one header in
// kernels/learners/ with a struct L providing
//
//   static constexpr const char* kName;          TOML value of [learner] algorithm
//   static constexpr Geometry kGeometry;         decision set; must match the adversary's loss set
//   static constexpr KeySpec kKeys[];            its own [learner] keys (see kernels/core/params.hpp)
//   struct Params;                               trivially copyable (copied to the GPU as is)
//   static Params resolve(const KeyValues&, const Problem&);
//   static bool check(const KeyValues&, const Problem&, Diagnostic&);
//   static PrivacyReport privacy(const Params&); the (eps, delta) it actually provides, computed from
//                                                its noise parameters (DESIGN.md §3)
//   DPR_HD static std::uint32_t workspace(const Params&);   doubles of per-instance state
//   template <class Team> DPR_HD static void init(const Params&, const InstanceCtx&, Team&, double* ws);
//   template <class Team> DPR_HD static RoundResult round(const Params&, const InstanceCtx&, Team&,
//                                                         double* ws, std::uint64_t t, const double* loss);
//
// round() plays round t (1-indexed): it forms x_t from what it has seen (rounds < t), is charged on
// the loss vector l_t = loss[0..d), then updates its state with the feedback its model allows (the
// whole vector for full information, only the played coordinate for bandits). It returns the
// expected loss <l_t, x_t> and the realised loss (equal for deterministic plays).
// All state lives in ws (the executor owns it); randomness comes only from InstanceCtx's streams.
// Registering a learner is one line in kernels/learners/registry.hpp.
//
// Optional diagnostics (ALGORITHMS.md "Record" lists): a learner may also declare
//   static constexpr std::array<const char*, N> kDiagnostics = {"max_noise_inf", ...};
//   DPR_HD static void diagnostics(const Params&, const double* ws, double* out);   // out[0..N)
// keeping what it needs in its workspace; the engine reads them once per instance after round T and
// writes them next to the final regret (final_regret.csv columns, run.json per-point means).
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/core/hd.hpp"
#include "kernels/core/math.hpp"
#include "kernels/core/params.hpp"
#include "kernels/core/sets.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::learners {

/// Who this instance is, for its random streams (DESIGN.md §2).
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

struct RoundResult {
    double expected; ///< <l_t, x_t> (x_t the learner's distribution / point)
    double realized; ///< l_t(i_t) for a sampled action; = expected for deterministic plays
};

/// The privacy guarantee a learner provides (DESIGN.md §3), reported per point in run.json.
struct PrivacyReport {
    double epsilon = kInf;            ///< inf for non-private learners
    double delta = 0.0;
    const char* accountant = "none";  ///< how epsilon was computed from the noise
    const char* calibration = "none"; ///< "paper" or "strict" (ALGORITHMS.md §1.5), "none"
    const char* mechanism = "none";   ///< what carries the noise
    double noise_scale = 0.0;         ///< per-node Laplace b or Gaussian sigma actually used
};

/// Number of diagnostics a learner declares (0 without kDiagnostics).
template <class L, class = void>
struct DiagnosticCount {
    static constexpr std::size_t value = 0;
};
template <class L>
struct DiagnosticCount<L, std::void_t<decltype(L::kDiagnostics)>> {
    static constexpr std::size_t value = L::kDiagnostics.size();
};

} // namespace dpr::learners
