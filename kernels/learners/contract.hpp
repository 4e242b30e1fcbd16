#pragma once
// The learner contract of kernels/learners/common.hpp, checked at compile time for every registered learner
// (kernels/learners/registry.hpp): a learner that misses a member, or declares one with the wrong signature,
// fails to compile with a message naming the member, not deep inside an executor's template.
//
// round() and init() are checked against the one-lane oracle team (SerialTeam<R>, contiguous views,
// ScalarLossRow<R>) for both precisions of [run] precision (R = double, float); the SIMD and GPU teams are
// then exercised by instantiation in host/cpu/cpu_engine_impl.hpp and cuda/engine_impl.cuh.
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/core/detect.hpp"
#include "kernels/core/params.hpp"
#include "kernels/core/sets.hpp"
#include "kernels/core/team.hpp"
#include "kernels/core/type_list.hpp"
#include "kernels/learners/common.hpp"

namespace dpr::learners {
namespace contract {

template <class R>
using SerialWS = Workspace<StridedView<double>, StridedView<R>, StridedView<double>>;

// Each member as an alias template that is well-formed exactly when L declares it (kernels/core/detect.hpp).
template <class L>
using NameOp = decltype(L::kName);
template <class L>
using GeometryOp = std::remove_cv_t<decltype(L::kGeometry)>;
template <class L> // a C array or a std::array of KeySpec
using KeysOp = std::remove_cv_t<std::remove_reference_t<decltype(L::kKeys[0])>>;
template <class L>
using LaneFlagOp = std::remove_cv_t<decltype(L::kInstanceLanes)>;
template <class L>
using ResolveOp = decltype(L::resolve(std::declval<const KeyValues&>(), std::declval<const Problem&>()));
template <class L>
using CheckOp = decltype(L::check(std::declval<const KeyValues&>(), std::declval<const Problem&>(),
                                  std::declval<Diagnostic&>()));
template <class L>
using PrivacyOp = decltype(L::privacy(std::declval<const typename L::Params&>()));
template <class L>
using WorkspaceOp = decltype(L::workspace(std::declval<const typename L::Params&>()));
template <class L, class R>
using InitOp = decltype(L::init(std::declval<const typename L::Params&>(),
                                std::declval<const SerialTeam<R>&>(), std::declval<const SerialWS<R>&>()));
template <class L, class R>
using RoundOp = decltype(L::round(std::declval<const typename L::Params&>(),
                                  std::declval<const SerialTeam<R>&>(), std::declval<const SerialWS<R>&>(),
                                  std::uint64_t{1}, std::declval<const ScalarLossRow<R>&>()));
template <class L>
using DiagnosticsListOp = decltype(L::kDiagnostics);
template <class L>
using DiagnosticsReaderOp = decltype(L::diagnostics(std::declval<const typename L::Params&>(),
                                                    std::declval<const double*>(), std::declval<double*>()));
template <class L>
using ParamsOp = typename L::Params;

struct NoParams {};

/// Which members of the contract L declares, each with the type or signature the contract asks for (round()
/// and init() on the one-lane team of either precision).
template <class L>
struct Declares {
    static constexpr bool name = is_detected_convertible<const char*, NameOp, L>::value;
    static constexpr bool geometry = is_detected_exact<Geometry, GeometryOp, L>::value;
    static constexpr bool keys = is_detected_exact<KeySpec, KeysOp, L>::value;
    static constexpr bool lane_flag = is_detected_exact<bool, LaneFlagOp, L>::value;
    static constexpr bool params = is_detected<ParamsOp, L>::value;
    static constexpr bool resolve =
        is_detected_exact<detected_or_t<NoParams, ParamsOp, L>, ResolveOp, L>::value;
    static constexpr bool check = is_detected_exact<bool, CheckOp, L>::value;
    static constexpr bool privacy = is_detected_exact<PrivacyReport, PrivacyOp, L>::value;
    static constexpr bool workspace = is_detected_exact<WorkspaceSpec, WorkspaceOp, L>::value;
    static constexpr bool init = is_detected<InitOp, L, double>::value;
    template <class R>
    static constexpr bool round =
        is_detected_exact<RoundCharge<typename SerialTeam<R>::template uni<double>>, RoundOp, L, R>::value;
    static constexpr bool diagnostics_list = is_detected<DiagnosticsListOp, L>::value;
    /// No kDiagnostics: nothing to read; with it, the reader must exist.
    static constexpr bool diagnostics = !diagnostics_list || is_detected_exact<void, DiagnosticsReaderOp, L>::value;
};

} // namespace contract

/// Instantiating Conforms<L>::value checks every member of the contract, one message per member.
template <class L>
struct Conforms {
    static_assert(contract::Declares<L>::name, "learner contract: static constexpr const char* kName");
    static_assert(contract::Declares<L>::geometry, "learner contract: static constexpr Geometry kGeometry");
    static_assert(
        contract::Declares<L>::keys,
        "learner contract: static constexpr KeySpec kKeys[] or std::array<KeySpec, N> (its [learner] keys)");
    static_assert(contract::Declares<L>::lane_flag, "learner contract: static constexpr bool kInstanceLanes");
    static_assert(contract::Declares<L>::params, "learner contract: struct Params");
    static_assert(!SerialRound<L>::value || !L::kInstanceLanes,
                  "learner contract: kSerialRound (all work on rank 0) contradicts kInstanceLanes = true");
    static constexpr bool kHasParams = contract::Declares<L>::params;
    static_assert(!kHasParams || std::is_trivially_copyable<typename L::Params>::value,
                  "learner contract: Params must be trivially copyable (copied to the GPU as is)");
    static_assert(contract::Declares<L>::resolve,
                  "learner contract: static Params resolve(const KeyValues&, const Problem&)");
    static_assert(contract::Declares<L>::check,
                  "learner contract: static bool check(const KeyValues&, const Problem&, Diagnostic&)");
    static_assert(
        contract::Declares<L>::privacy,
        "learner contract: static PrivacyReport privacy(const Params&) (the (eps, delta) it provides)");
    static_assert(contract::Declares<L>::workspace,
                  "learner contract: DPR_HD static WorkspaceSpec workspace(const Params&)");
    static_assert(contract::Declares<L>::init,
                  "learner contract: template <class Team, class WS> DPR_HD static void init(const Params&, "
                  "const Team&, const WS&)");
    static_assert(contract::Declares<L>::template round<double>,
                  "learner contract: template <class Team, class WS, class Row> DPR_HD static "
                  "RoundCharge<Team::uni<double>> round(const Params&, const Team&, const WS&, uint64_t t, "
                  "const Row&)");
    static_assert(contract::Declares<L>::template round<float>,
                  "learner contract: round() must also compile for the float precision (Team::real = float)");
    static_assert(contract::Declares<L>::diagnostics,
                  "learner contract: a learner declaring kDiagnostics provides DPR_HD static void "
                  "diagnostics(const Params&, const double* scalars, double* out)");
    static constexpr bool value = true;
};

template <class... Ls>
constexpr bool all_conform(TypeList<Ls...>) {
    return (Conforms<Ls>::value && ...);
}

} // namespace dpr::learners
