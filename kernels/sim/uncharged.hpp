#pragma once
// The rounds whose charge an audit leaves out of the recorded sums (kernels/sim/instance_loop.hpp advance): every
// round first + k period up to last. A two-sample audit leaves out its round t0 (first = last = t0), a one-run audit
// every canary round (first = period = s, last = m s; host/audit/one_run.hpp), so that every recorded sum is the same
// floating-point function of the plays whichever loss those rounds had (docs/AUDITS.md "An exact statistic").
// Default: none.
#include <cstdint>

#include "kernels/core/hd.hpp"

namespace dpr::sim {

struct UnchargedRounds {
    std::uint64_t first = 0;  ///< 0 (with last = 0): no round
    std::uint64_t period = 1;
    std::uint64_t last = 0;

    static UnchargedRounds one(std::uint64_t t) { return {t, 1, t}; }
    /// Round t (>= 1) is left out. Rounds before `first` wrap t - first past the span and cost one comparison.
    DPR_HD bool contains(std::uint64_t t) const {
        const std::uint64_t k = t - first;
        return k <= last - first && k % period == 0;
    }
};

} // namespace dpr::sim
