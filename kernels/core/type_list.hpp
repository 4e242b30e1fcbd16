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

/// Calls f.template operator()<T>() for every T in the list, in order.
template <class... Ts, class F>
void for_each_type(TypeList<Ts...>, F&& f) {
    (f.template operator()<Ts>(), ...);
}

} // namespace dpr
