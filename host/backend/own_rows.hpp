#pragma once
// Per-instance loss sequences (adversary.per_instance = true; docs/ARCHITECTURE.md §3): instance k of a point plays
// sequence first_instance + k. Both executors make its rows on the host with the adversary's fill(), the CPU one
// just before the rounds that read them, the CUDA one for a block of rounds of every instance before uploading
// them, and keep the instance's running sum L for its comparator at the checkpoints. This is that loop, in one
// place, so that both executors see the same rows, L_{t-1} rows and comparators, bit for bit.
//
// Header-only and free of standard containers: the CPU executor's per-ISA units compile it with the namespace dpr
// renamed (host/cpu/cpu_isa_unit.cpp.in).
#include <cstdint>

namespace dpr {

/// Where one instance's sequence stands between calls: its running sum L (d numbers, L_t after round t) and the
/// next checkpoint whose comparator it has not yet recorded.
struct OwnSequenceState {
    double* L;               ///< d numbers
    std::uint32_t* next;     ///< index of the next checkpoint to record
    double* comparators;     ///< one per checkpoint
    const std::uint64_t* checkpoints;
    std::uint32_t ncheck;
};

/// Rounds t0..t1-1 of one instance's sequence: fill(t, row) writes l_t into row[0..d); the row goes to
/// out[(t - t0) * pitch + i * stride] and, when cum is not null, L_{t-1} to cum at the same places; at every
/// checkpoint c reached, comparators[c] = comparator(L_t).
template <class Fill, class Comparator>
void own_rows(Fill&& fill, Comparator&& comparator, std::uint32_t d, std::uint64_t t0, std::uint64_t t1, double* out,
              std::uint64_t pitch, std::uint64_t stride, double* row, double* cum, const OwnSequenceState& s) {
    for (std::uint64_t t = t0; t < t1; ++t) {
        fill(t, row);
        double* o = out + (t - t0) * pitch;
        if (cum)
            for (std::uint32_t i = 0; i < d; ++i) cum[(t - t0) * pitch + i * stride] = s.L[i];
        for (std::uint32_t i = 0; i < d; ++i) {
            o[i * stride] = row[i];
            s.L[i] += row[i];
        }
        std::uint32_t& nx = *s.next;
        while (nx < s.ncheck && s.checkpoints[nx] == t) s.comparators[nx++] = comparator(s.L);
    }
}

} // namespace dpr
