#pragma once
// The BLT noise parameters for B = 1 .. 6 buffers and horizons n = 2^4 .. 2^24 that minimise sens^2 x max variance
// (docs/MECHANISMS.md §3.5): u_b = 1 - theta_b (stored instead of theta: theta is within 1e-7 of 1 for large n),
// omega_b, and the fitted loss. The numbers are data: kernels/mechanisms/blt_table.csv, written by
// scripts/fit_blt_table.py and turned into the initializer blt_table_entries.inc by cmake/BltTable.cmake (in the
// build's generated/ directory, which is on the kernels' include path).
#include <cstdint>

namespace dpr::mech::blt_table {

inline constexpr std::uint32_t kMinLog2 = 4, kMaxLog2 = 24, kMaxBuffers = 6;

struct Entry {
    double u[kMaxBuffers];
    double omega[kMaxBuffers];
    double loss;
};

/// kEntries[B - 1][log2 n - kMinLog2].
inline constexpr Entry kEntries[kMaxBuffers][kMaxLog2 - kMinLog2 + 1] = {
#include "blt_table_entries.inc"
};

} // namespace dpr::mech::blt_table

