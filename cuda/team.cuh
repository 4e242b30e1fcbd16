#pragma once
// A warp as a team (kernels/core/team.hpp): lane i handles coordinates i, i+32, ...; reductions are
// xor-butterflies, so every lane ends with the same bits and the order is fixed (DESIGN.md §4).
#include <cstdint>

#include "kernels/core/hd.hpp"

namespace dpr::cuda {

struct WarpTeam {
    std::uint32_t lane;

    DPR_HD static constexpr std::uint32_t size() { return 32; }
    DPR_HD std::uint32_t rank() const { return lane; }
    template <class F>
    DPR_HD void for_each(std::uint32_t n, F&& f) const {
        for (std::uint32_t i = lane; i < n; i += 32) f(i);
    }
    DPR_HD double sum(double x) const {
#ifdef __CUDA_ARCH__
        for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
#endif
        return x;
    }
    DPR_HD double max(double x) const {
#ifdef __CUDA_ARCH__
        for (int o = 16; o > 0; o >>= 1) {
            const double y = __shfl_xor_sync(0xffffffffu, x, o);
            x = y > x ? y : x;
        }
#endif
        return x;
    }
    DPR_HD void sync() const {
#ifdef __CUDA_ARCH__
        __syncwarp();
#endif
    }
};

} // namespace dpr::cuda
