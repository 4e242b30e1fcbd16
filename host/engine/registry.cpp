#include "host/engine/registry.hpp"

#include <cstring>
#include <stdexcept>
#include <type_traits>

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

} // namespace

std::vector<std::string> learner_names() {
    std::vector<std::string> v;
    for_each_type(learners::AllLearners{}, [&](auto tag) { v.emplace_back(decltype(tag)::type::kName); });
    return v;
}

std::vector<std::string> adversary_names() {
    std::vector<std::string> v;
    for_each_type(adversaries::AllAdversaries{}, [&](auto tag) { v.emplace_back(decltype(tag)::type::kName); });
    return v;
}

LearnerRuntime resolve_learner(const std::string& name, const KeyValues& kv, const Problem& pb) {
    LearnerRuntime r;
    bool found = false;
    std::size_t i = 0;
    for_each_type(learners::AllLearners{}, [&](auto tag) {
        using L = typename decltype(tag)::type;
        if (!found && name == L::kName) {
            const typename L::Params p = L::resolve(kv, pb);
            r.name = name;
            r.index = i;
            r.geometry = L::kGeometry;
            r.params = to_bytes(p);
            r.privacy = L::privacy(p);
            // The double-precision layout with rows padded to 16 lanes: the most any executor allocates.
            r.state_bytes = L::workspace(p).bytes(sizeof(double), 16);
            if constexpr (learners::DiagnosticCount<L>::value > 0)
                for (const char* n : L::kDiagnostics) r.diagnostic_names.emplace_back(n);
            found = true;
        }
        ++i;
    });
    if (!found) throw std::invalid_argument("unknown learner '" + name + "'");
    return r;
}

AdversaryRuntime resolve_adversary(const std::string& name, const KeyValues& kv, const Problem& pb) {
    AdversaryRuntime r;
    bool found = false;
    std::size_t i = 0;
    for_each_type(adversaries::AllAdversaries{}, [&](auto tag) {
        using A = typename decltype(tag)::type;
        if (!found && name == A::kName) {
            r.name = name;
            r.index = i;
            r.geometry = A::kGeometry;
            r.params = to_bytes(A::resolve(kv, pb));
            r.fill_fn = &fill_erased<A>;
            found = true;
        }
        ++i;
    });
    if (!found) throw std::invalid_argument("unknown adversary '" + name + "'");
    return r;
}

} // namespace dpr
