// The GPU executor's on-chip staging (cuda/stage_plan.hpp), tested where no GPU is: which arrays a launch keeps
// in shared memory for the H100/H200's limits, and the index arithmetic of the block copies and of the staged
// views, emulated over every block of a grid for every learner of the registry. A staged launch must read and
// write each element of the state at the shared address that the copy put it at, leave everything it did not
// stage in device memory untouched, and write back exactly what it copied in.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cuda/stage_plan.hpp"
#include "host/engine/registry.hpp"
#include "kernels/core/type_list.hpp"
#include "kernels/learners/registry.hpp"

using namespace dpr;
using cuda_api::GpuState;
using cuda_api::SharedLimits;
using cuda_api::StagePlan;
using cuda_api::UnitShape;

namespace {

/// An H100's and an H200's shared memory (cudaDeviceGetAttribute on both, docs/GPU.md); 800 bytes of CUB
/// storage in the kernel.
SharedLimits hopper() {
    SharedLimits l;
    l.per_block_optin = 232448;
    l.per_sm = 233472;
    l.reserved_per_block = 1024;
    l.static_per_block = 800;
    return l;
}

/// The units of the executor's launch modes (cuda/engine_impl.cuh): a warp per instance (4 per block of 128),
/// a thread per instance interleaved (4 groups of 32) or contiguous (128), a block of 256 per instance.
struct Mode {
    const char* name;
    UnitShape u;
};
const Mode kModes[] = {{"warp", {1, 4, 4}}, {"thread-interleaved", {32, 4, 4}}, {"thread-contiguous", {1, 128, 4}},
                       {"block256", {1, 1, 8}}};

WorkspaceSpec workspace_of(const std::string& name, std::uint32_t d, std::uint64_t T) {
    Problem pb;
    pb.d = d;
    pb.T = T;
    pb.seed = 1;
    const LearnerRuntime lr = resolve_learner(name, KeyValues{}, pb);
    WorkspaceSpec out;
    std::size_t i = 0;
    for_each_type(learners::AllLearners{}, [&](auto tag) {
        using L = typename decltype(tag)::type;
        if (i++ != lr.index) return;
        typename L::Params p;
        std::memcpy(&p, lr.params.data(), sizeof p);
        out = L::workspace(p);
    });
    return out;
}

std::uint64_t budget_auto(const UnitShape& u, const SharedLimits& l) {
    const std::uint64_t blocks = (cuda_api::kStageMinWarpsPerSm + u.warps_per_block - 1) / u.warps_per_block;
    return std::min(l.per_block_optin - l.static_per_block, l.per_sm / blocks - l.reserved_per_block - l.static_per_block);
}

} // namespace

TEST(StagePlan, HedgeAtD1024KeepsItsWholeStateOnChip) {
    // Hedge's state is L alone (d doubles; its scores are L in the run's precision, recomputed): 8 KiB per
    // instance in either precision, 4 instances per block of 4 warps, 7 blocks (28 warps) per SM.
    const WorkspaceSpec ws = workspace_of("hedge", 1024, 1024);
    ASSERT_EQ(ws.n_dbl, 1);
    ASSERT_EQ(ws.n_real, 0);
    for (const std::uint64_t rb : {4u, 8u}) {
        const StagePlan p = cuda_api::plan_stage(ws, rb, kModes[0].u, hopper(), GpuState::Shared);
        EXPECT_TRUE(p.on);
        EXPECT_EQ(p.dbl_arrays, 1);
        EXPECT_EQ(p.unit_bytes, 1024u * 8);
        EXPECT_EQ(p.bytes, 4u * 1024 * 8);
    }
    // dp-ftrl-experts' L and scores in double: 64 KiB per block is over the budget (233472 / 4 blocks, less the
    // reserved and static shared memory: 56544 bytes), so only L is staged.
    const StagePlan pd = cuda_api::plan_stage(workspace_of("dp-ftrl-experts", 1024, 1024), 8, kModes[0].u, hopper(),
                                              GpuState::Shared);
    EXPECT_EQ(pd.dbl_arrays, 1);
    EXPECT_EQ(pd.real_arrays, 0);
    EXPECT_EQ(pd.bytes, 4u * 1024 * 8);
    // Nothing at all when the run asks for device memory.
    EXPECT_FALSE(cuda_api::plan_stage(ws, 4, kModes[0].u, hopper(), GpuState::Global).on);
}

TEST(StagePlan, AOneRowStateGoesToRegistersInTheCompiledSlotSizesUpToD1024) {
    // gpu_state = "registers": lane l of a warp holds coordinates l + 32 j, j < K, K compiled as 8, 16 or 32.
    const auto k = [](std::uint32_t d, bool opted = true, bool warp = true) {
        return cuda_api::register_row_slots(workspace_of("hedge", d, 64), opted, warp);
    };
    EXPECT_EQ(k(2), 8);
    EXPECT_EQ(k(256), 8);
    EXPECT_EQ(k(257), 16);
    EXPECT_EQ(k(512), 16);
    EXPECT_EQ(k(513), 32);
    EXPECT_EQ(k(1024), 32);
    EXPECT_EQ(k(1025), 0); // more than 32 doubles per lane: device memory
    EXPECT_EQ(k(1024, false), 0); // a learner that did not opt in
    EXPECT_EQ(k(1024, true, false), 0); // not a warp per instance
    // More than one double array, or a multi-row one, cannot: tree-experts keeps four.
    EXPECT_EQ(cuda_api::register_row_slots(workspace_of("tree-experts", 64, 64), true, true), 0);
    WorkspaceSpec two_rows;
    two_rows.add_double(2, 64);
    EXPECT_EQ(cuda_api::register_row_slots(two_rows, true, true), 0);
}

TEST(StagePlan, EveryLearnerThatOptsIntoRegistersHasAOneRowState) {
    // A learner's kRowInRegisters promise is only usable if its state is one row of d doubles: checked for every
    // learner of the registry that makes it (Hedge at least), at the largest d the registers take.
    int opted = 0;
    for_each_type(learners::AllLearners{}, [&](auto tag) {
        using L = typename decltype(tag)::type;
        const std::string name = L::kName;
        if (!learners::RowInRegisters<L>::value) return;
        ++opted;
        EXPECT_EQ(cuda_api::register_row_slots(workspace_of(name, 1024, 1024), true, true), 32) << name;
    });
    EXPECT_GE(opted, 1);
}

TEST(StagePlan, DpFtrlKeepsLAndScoresOnChipAndTheLevelCacheInDeviceMemory) {
    // dp-ftrl-experts at d = 1024, T = 1024: L, the scores, and the tree's level cache (11 rows of d floats,
    // 44 KiB) -- 56 KiB per instance would leave 4 warps per SM, so the automatic plan stops before the cache.
    const WorkspaceSpec ws = workspace_of("dp-ftrl-experts", 1024, 1024);
    ASSERT_EQ(ws.n_real, 2);
    ASSERT_GE(ws.real[1].rows, 10u);
    const StagePlan p = cuda_api::plan_stage(ws, 4, kModes[0].u, hopper(), GpuState::Auto);
    EXPECT_TRUE(p.on);
    EXPECT_EQ(p.dbl_arrays, 1);
    EXPECT_EQ(p.real_arrays, 1);
    EXPECT_EQ(p.real_unit, 1024u);
    // One instance per block of 256 threads (8 warps, so 2 blocks per SM keep 16 warps): the whole 56 KiB fit.
    const StagePlan b = cuda_api::plan_stage(ws, 4, kModes[3].u, hopper(), GpuState::Shared);
    EXPECT_EQ(b.real_arrays, 2);
    EXPECT_EQ(b.bytes, 1024u * 12 + ws.real[1].rows * 1024 * 4);
    // At d = 4096 the cache is 176 KiB: over a block of 256's budget (233472 / 2 - 1824 = 114912 bytes).
    const StagePlan big = cuda_api::plan_stage(workspace_of("dp-ftrl-experts", 4096, 1024), 4, kModes[3].u,
                                               hopper(), GpuState::Shared);
    EXPECT_EQ(big.real_arrays, 1);
}

TEST(StagePlan, NothingIsStagedWhenNotEvenTheFirstArrayFits) {
    // Hedge at d = 2^20 in a block: 8 MiB per instance.
    const WorkspaceSpec ws = workspace_of("hedge", 1u << 20, 1024);
    const StagePlan p = cuda_api::plan_stage(ws, 4, kModes[3].u, hopper(), GpuState::Shared);
    EXPECT_FALSE(p.on);
    EXPECT_EQ(p.bytes, 0u);
    EXPECT_EQ(p.units, 1u); // the launch still needs its units per block
    EXPECT_EQ(cuda_api::describe_stage(p, ws, "instance"), "state in device memory");
}

// Every learner, mode, precision and a few d: the plan keeps to its budget, and an emulated grid of staged
// launches -- copy in, every staged element read and rewritten at the address workspace_of computes, copy out --
// changes exactly the staged elements of the launched units and nothing else.
TEST(StagePlan, EmulatedStagedLaunchesTouchExactlyTheStagedStateOfEveryLearner) {
    const SharedLimits lim = hopper();
    int staged_cases = 0;
    for (const std::string& name : learner_names())
        for (const std::uint32_t d : {2u, 24u, 200u})
            for (const Mode& m : kModes)
                for (const std::uint64_t rb : {4u, 8u}) {
                        const std::uint32_t dd = name == "net-oco" ? 2 : d;
                        const WorkspaceSpec ws = workspace_of(name, dd, 64);
                        const UnitShape& u = m.u;
                        const StagePlan p = cuda_api::plan_stage(ws, rb, u, lim, GpuState::Shared);
                        const std::string what = name + " d=" + std::to_string(dd) + " " + m.name + " R=" +
                                                 std::to_string(rb);
                        EXPECT_EQ(p.units, u.units_per_block) << what;
                        if (!p.on) continue;
                        ++staged_cases;
                        EXPECT_LE(p.bytes, budget_auto(u, lim)) << what;
                        EXPECT_EQ(p.off_real % 16, 0u) << what;
                        EXPECT_EQ(p.off_scal % 16, 0u) << what;
                        // The staged part of each kind is the prefix of whole arrays workspace_of's views assume.
                        EXPECT_EQ(p.dbl_unit, StagePlan::array_offset(ws, false, p.dbl_arrays, u.per)) << what;
                        EXPECT_EQ(p.real_unit, StagePlan::array_offset(ws, true, p.real_arrays, u.per)) << what;
                        EXPECT_EQ(p.scal_unit, p.scalars ? std::uint64_t(ws.n_scalars) * u.per : 0u) << what;

                        // Device memory of 2.5 blocks of units, each element a distinct value (kind in the top).
                        const std::uint64_t per_unit[3] = {ws.elements(false, 1) * u.per, ws.elements(true, 1) * u.per,
                                                           std::uint64_t(ws.n_scalars) * u.per};
                        const std::uint64_t units = u.units_per_block * 2 + u.units_per_block / 2 + 1;
                        std::vector<double> dev[3], before[3];
                        for (int k = 0; k < 3; ++k) {
                            dev[k].resize(units * per_unit[k]);
                            for (std::size_t i = 0; i < dev[k].size(); ++i) dev[k][i] = double(k << 24) + double(i);
                            before[k] = dev[k];
                        }
                        const std::uint64_t sec_off[3] = {0, p.off_real, p.off_scal};
                        const std::uint64_t esize[3] = {8, rb, 8};
                        for (std::uint64_t first = 0; first < units; first += p.units) {
                            const std::uint64_t count = std::min<std::uint64_t>(p.units, units - first);
                            // Shared memory as element slots per section, -1 = never written.
                            std::vector<double> sh[3];
                            for (int k = 0; k < 3; ++k) sh[k].assign((k == 0 ? p.off_real : k == 1 ? p.off_scal - p.off_real : p.bytes - p.off_scal) / esize[k], -1.0);
                            std::vector<int> written(p.bytes, 0);
                            cuda_api::for_each_stage_copy(p, per_unit, first, count,
                                [&](int kind, std::uint64_t dv, std::uint64_t s, std::uint64_t n) {
                                    for (std::uint64_t i = 0; i < n; ++i) {
                                        ASSERT_LT(s + i, sh[kind].size()) << what;
                                        ASSERT_LT(dv + i, dev[kind].size()) << what;
                                        for (std::uint64_t b = 0; b < esize[kind]; ++b)
                                            ASSERT_EQ(written[sec_off[kind] + (s + i) * esize[kind] + b]++, 0)
                                                << what << ": two copies write one shared byte";
                                        sh[kind][s + i] = dev[kind][dv + i];
                                    }
                                });
                            // Every staged element as workspace_of addresses it: shared section + unit offset + array
                            // offset + e * stride + lane must hold the device element at the same unit position.
                            const std::uint64_t stride = u.per, lanes = u.per;
                            for (std::uint64_t g = first; g < first + count; ++g)
                                for (std::uint64_t lane = 0; lane < lanes; ++lane)
                                    for (int kind = 0; kind < 2; ++kind) {
                                        const bool real = kind == 1;
                                        const int na = real ? p.real_arrays : p.dbl_arrays;
                                        const std::uint64_t su = real ? p.real_unit : p.dbl_unit;
                                        for (int a = 0; a < na; ++a) {
                                            const ArraySpec& s = real ? ws.real[a] : ws.dbl[a];
                                            const std::uint64_t off = StagePlan::array_offset(ws, real, a, u.per);
                                            for (std::uint64_t e = 0; e < s.rows * s.cols; ++e) {
                                                const std::uint64_t at = (g - first) * su + off + e * stride + lane;
                                                ASSERT_EQ(sh[kind][at], dev[kind][g * per_unit[kind] + off + e * stride + lane]) << what;
                                                sh[kind][at] += 0.5; // the launch's rounds rewrite it
                                            }
                                        }
                                    }
                            for (std::uint64_t i = 0; i < sh[2].size() && p.scalars; ++i) sh[2][i] += 0.5;
                            // Copy out: the same ranges, reversed.
                            cuda_api::for_each_stage_copy(p, per_unit, first, count,
                                [&](int kind, std::uint64_t dv, std::uint64_t s, std::uint64_t n) {
                                    for (std::uint64_t i = 0; i < n; ++i) dev[kind][dv + i] = sh[kind][s + i];
                                });
                        }
                        // Exactly the staged prefixes of every unit changed, by the launch's +0.5.
                        const std::uint64_t staged[3] = {p.dbl_unit, p.real_unit, p.scal_unit};
                        for (int k = 0; k < 3; ++k)
                            for (std::uint64_t g = 0; g < units; ++g)
                                for (std::uint64_t i = 0; i < per_unit[k]; ++i) {
                                    const std::uint64_t j = g * per_unit[k] + i;
                                    ASSERT_EQ(dev[k][j], before[k][j] + (i < staged[k] ? 0.5 : 0.0))
                                        << what << " kind " << k << " unit " << g << " element " << i;
                                }
                    }
    EXPECT_GT(staged_cases, 100); // the emulation ran on staged plans, not only on empty ones
}
