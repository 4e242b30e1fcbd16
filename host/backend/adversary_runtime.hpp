#pragma once
// A resolved adversary with its type erased, for host code: generates loss rows of a sequence and
// knows its geometry. Built from the registry (host/engine/registry.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/adversaries/common.hpp"
#include "kernels/core/sets.hpp"
#include "kernels/sim/comparator.hpp"

namespace dpr {

/// What the host holds of any resolved component (learner or adversary): its name, its position in its
/// registry list (learners::AllLearners, adversaries::AllAdversaries), its geometry, and its Params as bytes
/// (trivially copyable).
struct ComponentRuntime {
    std::string name;
    std::size_t index = 0;
    Geometry geometry = Geometry::Simplex;
    std::vector<unsigned char> params;
};

struct AdversaryRuntime : ComponentRuntime {
    LossFamily loss = LossFamily::Linear; ///< A::kLoss: the row layout and the comparator
    std::uint64_t row_width = 0; ///< numbers per loss row: loss_row_width(loss, d) + A::row_extra, if any
    void (*fill_fn)(const void* params, const adversaries::SequenceCtx&, std::uint64_t t, double* out) = nullptr;
    /// A::row_epoch if the adversary declares it (rows of equal epoch are equal), else null.
    std::uint64_t (*epoch_fn)(const void* params, std::uint64_t t) = nullptr;
    /// A::comparator(params, L) if the adversary declares it (Geometry::Polytope: the comparator needs its decision
    /// set), else null: kernels/sim/comparator.hpp's closed forms from the geometry and the loss family.
    double (*comparator_fn)(const void* params, const double* L) = nullptr;

    /// min_x sum_{s<=t} l_s(x) given the summed rows L (width row_width) of rounds 1..t.
    double comparator(const double* L, std::uint32_t d) const {
        return comparator_fn ? comparator_fn(params.data(), L) : sim::comparator(geometry, loss, L, d);
    }

    /// True when round t's row is known to equal round t - 1's (t >= 2).
    bool repeats(std::uint64_t t) const { return epoch_fn && t >= 2 && epoch_fn(params.data(), t) == epoch_fn(params.data(), t - 1); }

    void fill(const adversaries::SequenceCtx& ctx, std::uint64_t t, double* out) const {
        fill_fn(params.data(), ctx, t, out);
    }
};

} // namespace dpr
