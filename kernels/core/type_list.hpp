#pragma once
// A compile-time list of component types: the registries (kernels/learners/registry.hpp,
// kernels/adversaries/registry.hpp) are one TypeList each, and both backends instantiate from them,
// so adding a component is one line there.
#include <cstddef>
#include <string_view>
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

/// Calls f(TypeTag<T>{}) for the T at position `index` of the list and returns true; false (f not called)
/// when index >= size. The host's dispatch from a registry index (a point's learner_index) to the type.
template <class... Ts, class F>
bool with_type_at(TypeList<Ts...> list, std::size_t index, F&& f) {
    std::size_t i = 0;
    bool hit = false;
    for_each_type(list, [&](auto tag) {
        if (i++ != index) return;
        hit = true;
        f(tag);
    });
    return hit;
}

/// The position of the first T with T::kName == name; the list's size when none has that name.
template <class... Ts>
std::size_t index_named(TypeList<Ts...> list, std::string_view name) {
    std::size_t i = 0, found = sizeof...(Ts);
    for_each_type(list, [&](auto tag) {
        if (found == sizeof...(Ts) && name == decltype(tag)::type::kName) found = i;
        ++i;
    });
    return found;
}

} // namespace dpr
