#pragma once
// Small device-callable numeric helpers shared by samplers, mechanisms and learners.
#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"

namespace dpr {

/// ceil(log2(x)) for x >= 1 (0 for x = 1): the tree depth k of docs/spec/model.md §1.4/§1.5.
DPR_HD constexpr inline std::uint32_t ceil_log2(std::uint64_t x) {
    std::uint32_t k = 0;
    while ((std::uint64_t{1} << k) < x) ++k;
    return k;
}

/// floor(log2(x)) for x >= 1.
DPR_HD constexpr inline std::uint32_t floor_log2(std::uint64_t x) {
    std::uint32_t k = 0;
    while (x >>= 1) ++k;
    return k;
}

DPR_HD constexpr inline std::uint32_t popcount64(std::uint64_t x) {
    std::uint32_t c = 0;
    for (; x; x &= x - 1) ++c;
    return c;
}

/// Number of trailing zero bits of x > 0.
DPR_HD constexpr inline std::uint32_t ctz64(std::uint64_t x) {
    std::uint32_t c = 0;
    while (!(x & 1u)) { x >>= 1; ++c; }
    return c;
}

DPR_HD inline double dmax(double a, double b) { return a > b ? a : b; }
DPR_HD inline double dmin(double a, double b) { return a < b ? a : b; }

constexpr double kPi = 3.14159265358979323846;

} // namespace dpr
