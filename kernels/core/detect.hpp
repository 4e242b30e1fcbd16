#pragma once
// The detection idiom (std::experimental::is_detected / detected_or of the Library Fundamentals TS v2), written once
// for the members of the component contracts, required and optional. A member is described by an alias template Op
// that is well-formed exactly when T has it, e.g.
//   template <class L> using ReadsCumulativeOp = std::bool_constant<L::kReadsCumulative>;
//   template <class L> using ReadsCumulative = detected_or_t<std::false_type, ReadsCumulativeOp, L>;
#include <type_traits>

namespace dpr {

namespace detect_detail {
template <class Default, class AlwaysVoid, template <class...> class Op, class... Args>
struct Detector : std::false_type {
    using type = Default;
};
template <class Default, template <class...> class Op, class... Args>
struct Detector<Default, std::void_t<Op<Args...>>, Op, Args...> : std::true_type {
    using type = Op<Args...>;
};
} // namespace detect_detail

/// std::true_type when Op<Args...> is well-formed, else std::false_type.
template <template <class...> class Op, class... Args>
using is_detected = std::bool_constant<detect_detail::Detector<void, void, Op, Args...>::value>;

/// Op<Args...> when it is well-formed, else Default.
template <class Default, template <class...> class Op, class... Args>
using detected_or_t = typename detect_detail::Detector<Default, void, Op, Args...>::type;

/// std::true_type when Op<Args...> is well-formed and is exactly R (a member function with the required return
/// type), else std::false_type.
template <class R, template <class...> class Op, class... Args>
using is_detected_exact =
    std::bool_constant<is_detected<Op, Args...>::value && std::is_same<R, detected_or_t<void, Op, Args...>>::value>;

/// std::true_type when Op<Args...> is well-formed and converts to R, else std::false_type.
template <class R, template <class...> class Op, class... Args>
using is_detected_convertible =
    std::bool_constant<is_detected<Op, Args...>::value && std::is_convertible<detected_or_t<void, Op, Args...>, R>::value>;

} // namespace dpr
