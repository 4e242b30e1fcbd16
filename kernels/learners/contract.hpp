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

template <class L>
using HasName = is_detected_convertible<const char*, NameOp, L>;
template <class L>
using HasGeometry = is_detected_exact<Geometry, GeometryOp, L>;
template <class L>
using HasKeys = is_detected_exact<KeySpec, KeysOp, L>;
template <class L>
using HasLaneFlag = is_detected_exact<bool, LaneFlagOp, L>;
struct NoParams {};
template <class L>
using HasResolve = is_detected_exact<detected_or_t<NoParams, ParamsOp, L>, ResolveOp, L>;
template <class L>
using HasCheck = is_detected_exact<bool, CheckOp, L>;
template <class L>
using HasPrivacy = is_detected_exact<PrivacyReport, PrivacyOp, L>;
template <class L>
using HasWorkspace = is_detected_exact<WorkspaceSpec, WorkspaceOp, L>;
template <class L, class R>
using HasInit = is_detected<InitOp, L, R>;
template <class L, class R>
using HasRound = is_detected_exact<RoundCharge<typename SerialTeam<R>::template uni<double>>, RoundOp, L, R>;
template <class L>
using HasDiagnosticsList = is_detected<DiagnosticsListOp, L>;
template <class L>
using HasDiagnosticsReader = is_detected_exact<void, DiagnosticsReaderOp, L>;
template <class L>
using HasParams = is_detected<ParamsOp, L>;

/// No kDiagnostics: nothing to read; with it, the reader must exist.
template <class L>
struct DiagnosticsConsistent : std::integral_constant<bool, !HasDiagnosticsList<L>::value || HasDiagnosticsReader<L>::value> {};

} // namespace contract

/// Instantiating Conforms<L>::value checks every member of the contract, one message per member.
template <class L>
struct Conforms {
    static_assert(contract::HasName<L>::value, "learner contract: static constexpr const char* kName");
    static_assert(contract::HasGeometry<L>::value, "learner contract: static constexpr Geometry kGeometry");
    static_assert(contract::HasKeys<L>::value, "learner contract: static constexpr KeySpec kKeys[] or std::array<KeySpec, N> (its [learner] keys)");
    static_assert(contract::HasLaneFlag<L>::value, "learner contract: static constexpr bool kInstanceLanes");
    static_assert(contract::HasParams<L>::value, "learner contract: struct Params");
    static_assert(!SerialRound<L>::value || !L::kInstanceLanes,
                  "learner contract: kSerialRound (all work on rank 0) contradicts kInstanceLanes = true");
    static constexpr bool kHasParams = contract::HasParams<L>::value;
    static_assert(!kHasParams || std::is_trivially_copyable<typename L::Params>::value,
                  "learner contract: Params must be trivially copyable (copied to the GPU as is)");
    static_assert(contract::HasResolve<L>::value,
                  "learner contract: static Params resolve(const KeyValues&, const Problem&)");
    static_assert(contract::HasCheck<L>::value,
                  "learner contract: static bool check(const KeyValues&, const Problem&, Diagnostic&)");
    static_assert(contract::HasPrivacy<L>::value,
                  "learner contract: static PrivacyReport privacy(const Params&) (the (eps, delta) it provides)");
    static_assert(contract::HasWorkspace<L>::value,
                  "learner contract: DPR_HD static WorkspaceSpec workspace(const Params&)");
    static_assert(contract::HasInit<L, double>::value,
                  "learner contract: template <class Team, class WS> DPR_HD static void init(const Params&, "
                  "const Team&, const WS&)");
    static_assert(contract::HasRound<L, double>::value,
                  "learner contract: template <class Team, class WS, class Row> DPR_HD static "
                  "RoundCharge<Team::uni<double>> round(const Params&, const Team&, const WS&, uint64_t t, const Row&)");
    static_assert(contract::HasRound<L, float>::value,
                  "learner contract: round() must also compile for the float precision (Team::real = float)");
    static_assert(contract::DiagnosticsConsistent<L>::value,
                  "learner contract: a learner declaring kDiagnostics provides DPR_HD static void "
                  "diagnostics(const Params&, const double* scalars, double* out)");
    static constexpr bool value = true;
};

template <class... Ls>
constexpr bool all_conform(TypeList<Ls...>) {
    return (Conforms<Ls>::value && ...);
}

} // namespace dpr::learners
