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

#include "kernels/core/params.hpp"
#include "kernels/core/sets.hpp"
#include "kernels/core/team.hpp"
#include "kernels/core/type_list.hpp"
#include "kernels/learners/common.hpp"

namespace dpr::learners {
namespace contract {

template <class R>
using SerialWS = Workspace<StridedView<double>, StridedView<R>, StridedView<double>>;

template <class L, class = void>
struct HasName : std::false_type {};
template <class L>
struct HasName<L, std::enable_if_t<std::is_convertible<decltype(L::kName), const char*>::value>> : std::true_type {};

template <class L, class = void>
struct HasGeometry : std::false_type {};
template <class L>
struct HasGeometry<L, std::enable_if_t<std::is_same<std::remove_cv_t<decltype(L::kGeometry)>, Geometry>::value>>
    : std::true_type {};

template <class L, class = void>
struct HasKeys : std::false_type {};
template <class L> // a C array or a std::array of KeySpec
struct HasKeys<L, std::enable_if_t<std::is_same<std::remove_cv_t<std::remove_reference_t<decltype(L::kKeys[0])>>,
                                                KeySpec>::value>> : std::true_type {};

template <class L, class = void>
struct HasLaneFlag : std::false_type {};
template <class L>
struct HasLaneFlag<L, std::enable_if_t<std::is_same<std::remove_cv_t<decltype(L::kInstanceLanes)>, bool>::value>>
    : std::true_type {};

template <class L, class = void>
struct HasResolve : std::false_type {};
template <class L>
struct HasResolve<L, std::enable_if_t<std::is_same<decltype(L::resolve(std::declval<const KeyValues&>(),
                                                                       std::declval<const Problem&>())),
                                                   typename L::Params>::value>> : std::true_type {};

template <class L, class = void>
struct HasCheck : std::false_type {};
template <class L>
struct HasCheck<L, std::enable_if_t<std::is_same<decltype(L::check(std::declval<const KeyValues&>(),
                                                                   std::declval<const Problem&>(),
                                                                   std::declval<Diagnostic&>())),
                                                 bool>::value>> : std::true_type {};

template <class L, class = void>
struct HasPrivacy : std::false_type {};
template <class L>
struct HasPrivacy<L, std::enable_if_t<std::is_same<decltype(L::privacy(std::declval<const typename L::Params&>())),
                                                   PrivacyReport>::value>> : std::true_type {};

template <class L, class = void>
struct HasWorkspace : std::false_type {};
template <class L>
struct HasWorkspace<L, std::enable_if_t<std::is_same<decltype(L::workspace(std::declval<const typename L::Params&>())),
                                                     WorkspaceSpec>::value>> : std::true_type {};

template <class L, class R, class = void>
struct HasInit : std::false_type {};
template <class L, class R>
struct HasInit<L, R, std::void_t<decltype(L::init(std::declval<const typename L::Params&>(),
                                                  std::declval<const SerialTeam<R>&>(),
                                                  std::declval<const SerialWS<R>&>()))>> : std::true_type {};

template <class L, class R, class = void>
struct HasRound : std::false_type {};
template <class L, class R>
struct HasRound<L, R, std::enable_if_t<std::is_same<
                          decltype(L::round(std::declval<const typename L::Params&>(), std::declval<const SerialTeam<R>&>(),
                                            std::declval<const SerialWS<R>&>(), std::uint64_t{1},
                                            std::declval<const ScalarLossRow<R>&>())),
                          RoundCharge<typename SerialTeam<R>::template uni<double>>>::value>> : std::true_type {};

template <class L, class = void>
struct HasDiagnosticsList : std::false_type {};
template <class L>
struct HasDiagnosticsList<L, std::void_t<decltype(L::kDiagnostics)>> : std::true_type {};

template <class L, class = void>
struct HasDiagnosticsReader : std::false_type {};
template <class L>
struct HasDiagnosticsReader<L, std::enable_if_t<std::is_void<decltype(L::diagnostics(
                                   std::declval<const typename L::Params&>(), std::declval<const double*>(),
                                   std::declval<double*>()))>::value>> : std::true_type {};

/// No kDiagnostics: nothing to read; with it, the reader must exist.
template <class L>
struct DiagnosticsConsistent : std::integral_constant<bool, !HasDiagnosticsList<L>::value || HasDiagnosticsReader<L>::value> {};

template <class L, class = void>
struct HasParams : std::false_type {};
template <class L>
struct HasParams<L, std::void_t<typename L::Params>> : std::true_type {};

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
