#pragma once
// A compile-time list of component types: the registries (kernels/learners/registry.hpp,
// kernels/adversaries/registry.hpp) are one TypeList each, and both backends instantiate from them,
// so adding a component is one line there.
#include <cstddef>

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

} // namespace dpr
