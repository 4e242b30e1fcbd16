#pragma once
// A compile-time list of component types: the registries (kernels/learners/registry.hpp,
// kernels/adversaries/registry.hpp) are one TypeList each, and both backends instantiate from them,
// so adding a component is one line there.
#include <cstddef>
#include <type_traits>
#include <utility>

namespace dpr {

template <class... Ts>
struct TypeList {
    static constexpr std::size_t size = sizeof...(Ts);
};

/// An empty value standing for the type T (C++17 has no template lambdas).
template <class T>
struct TypeTag {
    using type = T;
};

/// Calls f(TypeTag<T>{}) for every T in the list, in order; inside, `typename decltype(tag)::type`.
template <class... Ts, class F>
void for_each_type(TypeList<Ts...>, F&& f) {
    (f(TypeTag<Ts>{}), ...);
}

template <class... Ts, class F, std::size_t... Is>
void for_each_type_indexed(TypeList<Ts...>, F&& f, std::index_sequence<Is...>) {
    (f(TypeTag<Ts>{}, std::integral_constant<std::size_t, Is>{}), ...);
}

/// Calls f(TypeTag<T>{}, std::integral_constant<std::size_t, I>{}) for the I-th T of the list, in order: the
/// index is a constant expression inside f (`decltype(index)::value`), e.g. for `if constexpr`.
template <class... Ts, class F>
void for_each_type_indexed(TypeList<Ts...> list, F&& f) {
    for_each_type_indexed(list, f, std::index_sequence_for<Ts...>{});
}

} // namespace dpr
