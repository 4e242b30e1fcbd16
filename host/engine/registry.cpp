#include "host/engine/registry.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "kernels/adversaries/registry.hpp"
#include "kernels/learners/registry.hpp"

namespace dpr {
namespace {

template <class P>
std::vector<unsigned char> to_bytes(const P& p) {
    static_assert(std::is_trivially_copyable<P>::value, "component Params must be trivially copyable");
    std::vector<unsigned char> b(sizeof(P));
    std::memcpy(b.data(), &p, sizeof(P));
    return b;
}

template <class A>
void fill_erased(const void* params, const adversaries::SequenceCtx& ctx, std::uint64_t t, double* out) {
    A::fill(*static_cast<const typename A::Params*>(params), ctx, t, out);
}

template <class A>
using RowEpochOp = decltype(A::row_epoch(std::declval<const typename A::Params&>(), std::uint64_t{1}));
template <class A>
using HasRowEpoch = is_detected<RowEpochOp, A>;

template <class A>
using ComparatorOp =
    decltype(A::comparator(std::declval<const typename A::Params&>(), std::declval<const double*>()));
template <class A>
using HasComparator = is_detected<ComparatorOp, A>;

template <class A>
double comparator_erased(const void* params, const double* L) {
    return A::comparator(*static_cast<const typename A::Params*>(params), L);
}

template <class A>
std::uint64_t epoch_erased(const void* params, std::uint64_t t) {
    return A::row_epoch(*static_cast<const typename A::Params*>(params), t);
}

/// WorkspaceSpec::bytes(sizeof(double), 16), saturating at UINT64_MAX.
std::uint64_t saturating_state_bytes(const WorkspaceSpec& w) {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    const auto add = [](std::uint64_t a, std::uint64_t b) { return a > kMax - b ? kMax : a + b; };
    const auto mul = [](std::uint64_t a, std::uint64_t b) { return a != 0 && b > kMax / a ? kMax : a * b; };
    constexpr std::uint64_t pad = 16;
    std::uint64_t total = mul(static_cast<std::uint64_t>(w.n_scalars), 8);
    for (int real = 0; real < 2; ++real) {
        const int n = real ? w.n_real : w.n_dbl;
        for (int a = 0; a < n; ++a) {
            const ArraySpec& s = real ? w.real[a] : w.dbl[a];
            const std::uint64_t cols = s.cols > kMax - (pad - 1) ? kMax : (s.cols + pad - 1) / pad * pad;
            total = add(total, mul(mul(s.rows, cols), sizeof(double)));
        }
    }
    return total;
}

template <class List>
std::vector<std::string> names_of(List list) {
    std::vector<std::string> v;
    for_each_type(list, [&](auto tag) { v.emplace_back(decltype(tag)::type::kName); });
    return v;
}

/// The runtime record of the component of `list` (the learners or the adversaries) named `name`: its index,
/// name and loss set, and what `fill(type tag, record)` adds for its kind. Throws std::invalid_argument
/// naming an unknown one.
template <class Runtime, class List, class Fill>
Runtime resolve_named(List list, const char* kind, const std::string& name, Fill&& fill) {
    Runtime r;
    r.index = index_named(list, name);
    r.name = name;
    const bool found = with_type_at(list, r.index, [&](auto tag) {
        r.geometry = decltype(tag)::type::kGeometry;
        fill(tag, r);
    });
    if (!found) throw std::invalid_argument(std::string("unknown ") + kind + " '" + name + "'");
    return r;
}

} // namespace

std::vector<std::string> learner_names() {
    return names_of(learners::AllLearners{});
}

std::vector<std::string> adversary_names() {
    return names_of(adversaries::AllAdversaries{});
}

LearnerRuntime resolve_learner(const std::string& name, const KeyValues& kv, const Problem& pb) {
    const auto fill = [&](auto tag, LearnerRuntime& r) {
        using L = typename decltype(tag)::type;
        const typename L::Params p = L::resolve(kv, pb);
        r.loss_families = LossFamiliesOf<L>::value;
        r.params = to_bytes(p);
        r.privacy = L::privacy(p);
        // The double-precision layout with rows padded to 16 lanes (the most any executor allocates),
        // as WorkspaceSpec::bytes(8, 16) computes it but saturating: d^2 state at d = 2^31 reads as
        // UINT64_MAX bytes, which the memory check refuses, instead of wrapping to a small size.
        r.state_bytes = saturating_state_bytes(L::workspace(p));
        r.reads_cumulative = learners::ReadsCumulative<L>::value;
        if constexpr (learners::DiagnosticCount<L>::value > 0)
            for (const char* n : L::kDiagnostics) r.diagnostic_names.emplace_back(n);
    };
    return resolve_named<LearnerRuntime>(learners::AllLearners{}, "learner", name, fill);
}

bool plant_learner(LearnerRuntime& lr, learners::Planted bug) {
    if (bug == learners::Planted::None) return true;
    bool planted = false;
    with_type_at(learners::AllLearners{}, lr.index, [&](auto tag) {
        using L = typename decltype(tag)::type;
        if constexpr (learners::HasPlant<L>::value) {
            typename L::Params p;
            std::memcpy(&p, lr.params.data(), sizeof p);
            planted = L::plant(p, bug);
            if (planted) lr.params = to_bytes(p);
        }
    });
    return planted;
}

AdversaryRuntime resolve_adversary(const std::string& name, const KeyValues& kv, const Problem& pb) {
    const auto fill = [&](auto tag, AdversaryRuntime& r) {
        using A = typename decltype(tag)::type;
        r.loss = LossFamilyOf<A>::value;
        const typename A::Params ap = A::resolve(kv, pb);
        r.row_width = loss_row_width(r.loss, pb.d) + adversaries::row_extra<A>(ap);
        r.params = to_bytes(ap);
        r.fill_fn = &fill_erased<A>;
        if constexpr (HasRowEpoch<A>::value) r.epoch_fn = &epoch_erased<A>;
        static_assert(A::kGeometry != Geometry::Polytope || HasComparator<A>::value,
                      "an adversary on a Polytope set declares static double comparator(const Params&, const "
                      "double* L)");
        if constexpr (HasComparator<A>::value) r.comparator_fn = &comparator_erased<A>;
    };
    return resolve_named<AdversaryRuntime>(adversaries::AllAdversaries{}, "adversary", name, fill);
}

} // namespace dpr
