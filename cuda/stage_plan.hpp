#pragma once
// State on chip across the rounds of a launch (docs/GPU.md "State on chip"): which of an instance's state
// arrays the CUDA executor copies into shared memory at the start of a launch, keeps there for every round of
// the launch, and writes back to device memory at its end. Plain C++ (no CUDA types), so that the plan and its
// index arithmetic are tested on a CPU (tests/engine/test_stage_plan.cpp); cuda/engine_impl.cuh runs it.
//
// Layout. The executor stores the state per *unit*: an instance (warp and block teams, and a thread per
// instance for scalar learners) or a group of 32 interleaved instances (a thread per instance for lane-safe
// learners: element e of lane l at [e 32 + l]). A unit's double arrays lie one after another (array a at
// offset off_a = per x sum_{b<a} rows_b cols_b, per = 32 interleaved, else 1), likewise its arrays in the run's
// precision R and its scalars. The plan stages a *prefix* of each kind -- the scalars, then arrays taken in the
// order dbl[0], real[0], dbl[1], real[1], ... until the next one does not fit -- so a unit's staged part of each
// kind is one contiguous range at the start of its region, copied as one range per unit and kind. A block's
// shared memory holds [staged doubles of its units][staged reals][staged scalars], each section 16-byte aligned.
//
// Nothing is computed differently: a staged array is the same array at another address, so a staged launch
// gives the same bits as one on device memory (tests/gpu/test_engine_gpu.cu).
#include <cstdint>
#include <cstdio>
#include <string>

#include "kernels/core/hd.hpp"
#include "kernels/core/team.hpp"

namespace dpr::cuda_api {

/// Where an instance's state lives during a launch ([run] gpu_state).
enum class GpuState { Auto, Global, Shared, Registers };

/// The device's shared-memory limits (cudaDevAttr*) and the kernel's own static shared memory.
struct SharedLimits {
    std::uint64_t per_block_optin = 0; ///< cudaDevAttrMaxSharedMemoryPerBlockOptin (H100/H200: 232448)
    std::uint64_t per_sm = 0;          ///< cudaDevAttrMaxSharedMemoryPerMultiprocessor (H100/H200: 233472)
    std::uint64_t reserved_per_block = 0; ///< cudaDevAttrReservedSharedMemoryPerBlock (1024)
    std::uint64_t static_per_block = 0;   ///< the kernel's __shared__ team storage (cudaFuncGetAttributes)
};

/// How a launch lays its units out: `per` lanes per unit (32 interleaved, else 1), units and warps per block.
struct UnitShape {
    std::uint64_t per = 1;
    std::uint32_t units_per_block = 1;
    std::uint32_t warps_per_block = 1;
};

/// Resident warps per SM that the automatic plan keeps at least (the shared memory of a block may not push
/// the SM below this): a quarter of an H100's 64, enough to cover shared-memory latency with the rounds'
/// independent loads.
inline constexpr std::uint32_t kStageMinWarpsPerSm = 16;

struct StagePlan {
    bool on = false;
    int dbl_arrays = 0, real_arrays = 0; ///< staged prefixes: dbl[0, dbl_arrays), real[0, real_arrays)
    bool scalars = false;
    std::uint64_t dbl_unit = 0, real_unit = 0, scal_unit = 0; ///< staged elements per unit of each kind
    std::uint32_t units = 1;                                  ///< units per block
    std::uint64_t off_real = 0, off_scal = 0, bytes = 0;      ///< byte offsets of the sections; bytes per block
    std::uint64_t unit_bytes = 0;                             ///< staged bytes of one unit (unaligned sum)

    /// Element offset of array a of a kind within a unit's region (the same for the staged copy and device
    /// memory: the staged part is a prefix).
    DPR_HD static std::uint64_t array_offset(const WorkspaceSpec& spec, bool real, int a, std::uint64_t per) {
        std::uint64_t off = 0;
        for (int b = 0; b < a; ++b) off += real ? spec.real[b].rows * spec.real[b].cols : spec.dbl[b].rows * spec.dbl[b].cols;
        return off * per;
    }
};

DPR_HD inline std::uint64_t stage_align16(std::uint64_t x) { return (x + 15) / 16 * 16; }

/// The plan for a launch: stages the scalars, then dbl[0], real[0], dbl[1], ... while the block's shared memory
/// keeps at least kStageMinWarpsPerSm warps resident per SM (and within what the device gives one block).
/// `Global` stages nothing. (Without the occupancy floor a warp-mode block could take an SM's whole shared memory
/// and leave 4 warps there to hide the latency of everything not staged.)
inline StagePlan plan_stage(const WorkspaceSpec& spec, std::uint64_t real_bytes, const UnitShape& u,
                            const SharedLimits& lim, GpuState want) {
    StagePlan p;
    p.units = u.units_per_block;
    if (want == GpuState::Global || lim.per_block_optin <= lim.static_per_block) return p;
    std::uint64_t budget = lim.per_block_optin - lim.static_per_block;
    const std::uint64_t blocks = (kStageMinWarpsPerSm + u.warps_per_block - 1) / u.warps_per_block;
    const std::uint64_t share = lim.per_sm / blocks;
    const std::uint64_t over = lim.reserved_per_block + lim.static_per_block;
    budget = share > over ? (budget < share - over ? budget : share - over) : 0;
    const auto total = [&](const StagePlan& q) {
        const std::uint64_t a = stage_align16(q.dbl_unit * u.units_per_block * 8);
        const std::uint64_t b = stage_align16(q.real_unit * u.units_per_block * real_bytes);
        return a + b + q.scal_unit * u.units_per_block * 8;
    };
    StagePlan q = p;
    // The scalars first (a few words, read every round), then the arrays alternately by kind.
    if (spec.n_scalars > 0) {
        q.scalars = true;
        q.scal_unit = static_cast<std::uint64_t>(spec.n_scalars) * u.per;
        if (total(q) > budget) return p;
        p = q;
    }
    bool fits = true;
    for (int a = 0; a < kMaxStateArrays && fits; ++a) {
        for (int kind = 0; kind < 2 && fits; ++kind) {
            const bool real = kind == 1;
            if (a >= (real ? spec.n_real : spec.n_dbl)) continue;
            const ArraySpec& s = real ? spec.real[a] : spec.dbl[a];
            q = p;
            (real ? q.real_arrays : q.dbl_arrays) = a + 1;
            (real ? q.real_unit : q.dbl_unit) += s.rows * s.cols * u.per;
            fits = total(q) <= budget;
            if (fits) p = q;
        }
    }
    p.on = p.scalars || p.dbl_arrays > 0 || p.real_arrays > 0;
    if (!p.on) {
        StagePlan none;
        none.units = u.units_per_block;
        return none;
    }
    p.off_real = stage_align16(p.dbl_unit * u.units_per_block * 8);
    p.off_scal = p.off_real + stage_align16(p.real_unit * u.units_per_block * real_bytes);
    p.bytes = p.off_scal + p.scal_unit * u.units_per_block * 8;
    p.unit_bytes = p.dbl_unit * 8 + p.real_unit * real_bytes + p.scal_unit * 8;
    return p;
}

/// The copies of a block's stage-in (and, reversed, stage-out): for each of its `count` units (first unit
/// `first`) and each kind with a staged part, f(kind, device_offset, shared_offset, n) with offsets in
/// elements of the kind (0 doubles, 1 reals, 2 scalars) from the start of the kind's device array and of its
/// shared section. `per_unit` gives each kind's elements per unit in device memory.
template <class F>
DPR_HD void for_each_stage_copy(const StagePlan& p, const std::uint64_t per_unit[3], std::uint64_t first,
                                std::uint64_t count, F&& f) {
    const std::uint64_t staged[3] = {p.dbl_unit, p.real_unit, p.scal_unit};
    for (int kind = 0; kind < 3; ++kind) {
        if (staged[kind] == 0) continue;
        for (std::uint64_t u = 0; u < count; ++u) f(kind, (first + u) * per_unit[kind], u * staged[kind], staged[kind]);
    }
}

/// Coordinates per lane of a warp that holds an instance's first double array in registers (gpu_state =
/// "registers", docs/GPU.md "State in registers"), or 0 where that cannot run: the learner must opt in
/// (kRowInRegisters), its state be that one row (n_dbl = 1, one row; its other arrays and scalars stay in device
/// memory) of at most kRegRowMaxCols coordinates, and the launch a warp per instance. The slots come in the
/// compiled sizes 8, 16 and 32 (d <= 256, 512, 1024): fewer wasted predicated iterations at small d.
inline constexpr std::uint64_t kRegRowMaxCols = 1024;
inline int register_row_slots(const WorkspaceSpec& spec, bool opted_in, bool warp_mode) {
    if (!opted_in || !warp_mode || spec.n_dbl != 1 || spec.dbl[0].rows != 1 || spec.dbl[0].cols == 0 ||
        spec.dbl[0].cols > kRegRowMaxCols)
        return 0;
    const std::uint64_t per_lane = (spec.dbl[0].cols + 31) / 32;
    return per_lane <= 8 ? 8 : per_lane <= 16 ? 16 : 32;
}

/// One line for run.json's launch policy.
inline std::string describe_stage(const StagePlan& p, const WorkspaceSpec& spec, const char* unit_name) {
    if (!p.on) return "state in device memory";
    const int total = spec.n_dbl + spec.n_real, staged = p.dbl_arrays + p.real_arrays;
    char buf[200];
    std::snprintf(buf, sizeof buf, "state on chip: %s%d of %d arrays, %.1f KiB per %s, %.1f KiB per block",
                  p.scalars ? "scalars + " : "", staged, total, static_cast<double>(p.unit_bytes) / 1024.0, unit_name,
                  static_cast<double>(p.bytes) / 1024.0);
    return buf;
}

} // namespace dpr::cuda_api
