#pragma once
// The "team" abstraction of DESIGN.md §1: instance-parallel work inside one learner instance (a loop
// over d experts, a reduction) goes through a team so that the same learner source runs with a team
// of one CPU thread here and with a warp or block on the GPU (cuda/team.cuh). A team provides
//   size(), rank()                       lanes and this lane's index
//   for_each(n, f)                       f(i) for i in [0, n), split over lanes
//   sum(x), max(x)                       reductions over lanes, result on every lane, fixed order
// A learner never asks which backend it runs on.
#include <cstdint>

#include "kernels/core/hd.hpp"

namespace dpr {

/// A team of one: the CPU executor's (and the sequential oracle's) team.
struct SerialTeam {
    DPR_HD static constexpr std::uint32_t size() { return 1; }
    DPR_HD static constexpr std::uint32_t rank() { return 0; }
    template <class F>
    DPR_HD void for_each(std::uint32_t n, F&& f) const {
        for (std::uint32_t i = 0; i < n; ++i) f(i);
    }
    DPR_HD static double sum(double x) { return x; }
    DPR_HD static double max(double x) { return x; }
    DPR_HD static void sync() {}
};

} // namespace dpr
