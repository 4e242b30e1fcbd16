#pragma once
// A learner's or adversary's configuration contract with its type erased (kernels/core/params.hpp):
// its name, its keys, its geometry and its check(). The config layer (host/config/config.hpp) validates
// and expands a TOML file against lists of these, so it never includes a component header, and tests can
// drive it with small hand-written tables.
//
//   auto learners    = describe_all<learners::AllLearners>("learner");
//   auto adversaries = describe_all<adversaries::AllAdversaries>("adversary");
//
// The position of a ComponentInfo in the list that describe_all() returns is the component's position
// in the TypeList, which the executors dispatch on (Point::learner_index / adversary_index).
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/core/params.hpp"
#include "kernels/core/sets.hpp"
#include "kernels/core/type_list.hpp"
#include "kernels/domains/domain.hpp"

namespace dpr::config {

using CheckFn = bool (*)(const KeyValues&, const Problem&, Diagnostic&);
/// Adversaries of Geometry::Polytope (kernels/domains/build.hpp): the dimension their keys imply (0: d is the
/// user's; 0xFFFFFFFF: the keys are invalid, check() says why) and the decision set they name.
using DimensionFn = std::uint32_t (*)(const KeyValues&);
using DomainFn = bool (*)(const KeyValues&, std::uint32_t d, domains::Domain&, Diagnostic&);

struct ComponentInfo {
    std::string name;              ///< C::kName: the value of [learner] algorithm / [adversary] kind
    const KeySpec* keys = nullptr; ///< C::kKeys (static storage); nullptr when nkeys == 0
    int nkeys = 0;
    Geometry geometry = Geometry::Simplex; ///< C::kGeometry: decision set (learner) / loss set (adversary)
    LossFamily loss = LossFamily::Linear;  ///< LossFamilyOf<C> (adversaries): the losses it draws
    unsigned loss_families = loss_bit(LossFamily::Linear); ///< LossFamiliesOf<C> (learners): those it accepts
    CheckFn check = nullptr;               ///< C::check; nullptr = nothing to check
    std::string section;                   ///< "learner" or "adversary"
    bool shared_only = false;              ///< C::kSharedOnly (adversaries): per_instance = true is refused
    bool instance_lanes = true;            ///< C::kInstanceLanes (learners): false = scalar code per instance,
                                           ///< so [run] lanes = "instances" cannot be honoured
    DimensionFn dimension = nullptr;       ///< C::dimension (Polytope adversaries), else nullptr
    DomainFn domain = nullptr;             ///< C::domain (Polytope adversaries), else nullptr

    /// Index of key `name` in keys, -1 if this component does not declare it.
    int key_index(const std::string& key) const {
        for (int i = 0; i < nkeys; ++i)
            if (key == keys[i].name) return i;
        return -1;
    }
};

namespace detail {
template <class C>
using SharedOnlyOp = std::bool_constant<C::kSharedOnly>;
template <class C>
using SharedOnly = detected_or_t<std::false_type, SharedOnlyOp, C>;
template <class C>
using DomainOp =
    std::void_t<decltype(C::domain(std::declval<const KeyValues&>(), std::uint32_t{},
                                   std::declval<domains::Domain&>(), std::declval<Diagnostic&>())),
                decltype(C::dimension(std::declval<const KeyValues&>()))>;
template <class C>
using HasDomain = is_detected<DomainOp, C>;
template <class C>
using InstanceLanesOp = std::bool_constant<C::kInstanceLanes>;
template <class C>
using InstanceLanes = detected_or_t<std::true_type, InstanceLanesOp, C>;
} // namespace detail

/// The ComponentInfo of component type C. C::kKeys may be a C array or a std::array (a keyless
/// component declares std::array<KeySpec, 0>); C::kSharedOnly is optional (default false), and so is
/// C::kInstanceLanes for this table (default true; the learner contract requires it of learners).
template <class C>
ComponentInfo describe(const char* section) {
    constexpr std::size_t n = std::size(C::kKeys);
    static_assert(n <= static_cast<std::size_t>(kMaxKeys), "a component declares at most kMaxKeys keys");
    ComponentInfo info;
    info.name = C::kName;
    info.keys = n == 0 ? nullptr : std::data(C::kKeys);
    info.nkeys = static_cast<int>(n);
    info.geometry = C::kGeometry;
    info.loss = LossFamilyOf<C>::value;
    info.loss_families = LossFamiliesOf<C>::value;
    info.check = &C::check;
    info.section = section;
    info.shared_only = detail::SharedOnly<C>::value;
    info.instance_lanes = detail::InstanceLanes<C>::value;
    if constexpr (detail::HasDomain<C>::value) {
        info.dimension = &C::dimension;
        info.domain = &C::domain;
    }
    return info;
}

/// One ComponentInfo per type of the TypeList, in list order.
template <class List>
std::vector<ComponentInfo> describe_all(const char* section) {
    std::vector<ComponentInfo> out;
    for_each_type(List{}, [&](auto tag) { out.push_back(describe<typename decltype(tag)::type>(section)); });
    return out;
}

} // namespace dpr::config
