#pragma once
// The CUDA executor (CUB's layering: host dispatch that picks a policy -> a thin __global__ -> the per-instance
// work, which is kernels/sim/instance_loop.hpp with a team of cuda/teams.cuh). Instantiated for every learner of
// the registry in each precision (cuda/engine_float.cu, cuda/engine_double.cu) and every policy:
//
//   thread   one instance per thread (lanes = instances, as the CPU's instance lanes); the state of the 32
//            instances of a warp is interleaved (element e of lane l at [e 32 + l]) so that loads coalesce,
//            for learners whose round is written over lane values (L::kInstanceLanes); scalar learners keep
//            their state contiguous per instance. The default for serial-round learners (kSerialRound; none is
//            registered since SCRiBLe moved to lanes) from kSerialThreadMinInstances instances on, at every d.
//   warp     one instance per warp (lanes = coordinates), state contiguous per instance.
//   block    one instance per block of 256 or 1024 threads, for large d.
// The policy is a printable value (policy(), run.json), chosen from the learner and d unless the run asks for
// one ([run] lanes, team_threads). Orthogonal to the mode, [run] gpu_state = "shared" keeps a prefix of each
// instance's state in shared memory for a launch's rounds (cuda/stage_plan.hpp, docs/GPU.md); in the warp mode,
// gpu_state = "registers" keeps a learner's row (Hedge's L) in registers for a launch's rounds (advance_regs_kernel). Noise is regenerated from counters, never stored; one launch per loss chunk.
// Per-instance sequences (adversary.per_instance = true): every instance's rows are made on the host by the loop the
// CPU executor uses (host/backend/own_rows.hpp), uploaded instance-major, and each instance reads its own
// (DevRun::rows_stride); the comparators stay on the host.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/buffer.cuh"
#include "cuda/check.cuh"
#include "cuda/stage_plan.hpp"
#include "cuda/teams.cuh"
#include "host/backend/adversary_runtime.hpp"
#include "host/backend/cuda_api.hpp"
#include "host/backend/own_rows.hpp"
#include "host/cpu/parallel.hpp"
#include "kernels/core/team.hpp"
#include "kernels/core/type_list.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/sim/instance_loop.hpp"

namespace dpr::cuda_api::detail {

enum class Mode { Thread, Warp, Block256, Block1024 };

inline const char* mode_name(Mode m) {
    return m == Mode::Thread ? "one thread per instance" : m == Mode::Warp ? "one warp per instance"
           : m == Mode::Block256 ? "one block of 256 threads per instance" : "one block of 1024 threads per instance";
}

/// d at or below which a lane-safe learner runs a thread per instance by default: the same rule as the CPU's
/// instance lanes (host/cpu/cpu_engine_impl.hpp), so that both backends compute the same bits there.
inline constexpr std::uint32_t kThreadMaxD = 128;

/// Instances from which a serial-round learner (kSerialRound) runs a thread per instance by default: fewer leave
/// most of the GPU idle (blocks of 128 threads against 132 SMs on an H100), and there a warp per instance, though
/// 31 of its 32 threads wait, was faster. Measured on an H100 (docs/BENCHMARKS.md "GPU: NVIDIA H100"),
/// private-bandit-fw on the simplex, n = 1024, T = 1024: thread/warp whole-run time 1.12 at 4096 instances, 0.41 at
/// 16384. tree-experts loops over d with its team and keeps a team above d = 32.
inline constexpr std::uint64_t kSerialThreadMinInstances = 16384;

/// Threads per block of each mode, also the kernels' __launch_bounds__: without it the compiler may give a
/// learner's round more registers than 65536 / 1024 = 64 per thread, and a block of 1024 then fails to launch
/// (cudaErrorLaunchOutOfResources: seen on an H200 for dp-ftrl-experts in double at d = 2^20).
constexpr int block_threads(Mode m) {
    return m == Mode::Block1024 ? 1024 : m == Mode::Block256 ? 256 : 128;
}

template <class L>
Mode choose_mode(const EngineShape& s) {
    const LaunchRequest& q = s.launch;
    if (q.team_threads != 0 && q.team_threads != 32 && q.team_threads != 256 && q.team_threads != 1024)
        throw std::invalid_argument("[run] team_threads = " + std::to_string(q.team_threads) +
                                    ": the CUDA backend has teams of 32 (a warp), 256 or 1024 threads (0 = auto)");
    bool thread;
    if (q.lanes == "instances") thread = true;
    else if (q.lanes == "coordinates") thread = false;
    else if (L::kInstanceLanes) thread = s.d <= kThreadMaxD;
    else thread = (learners::SerialRound<L>::value && s.instances >= kSerialThreadMinInstances) || s.d < 32;
    if (thread) return Mode::Thread;
    const unsigned tt = q.team_threads ? q.team_threads : (s.d <= 8192 ? 32u : (s.d <= (1u << 18) ? 256u : 1024u));
    return tt == 32 ? Mode::Warp : tt == 256 ? Mode::Block256 : Mode::Block1024;
}

/// [run] gpu_state. "auto" keeps a one-row state in registers where the learner allows it (register_row_slots: on an
/// H200 Hedge ran 1.1-1.6x faster there in every shape and precision measured, docs/BENCHMARKS.md "fourth GPU
/// session"), otherwise in device memory: shared memory gained in half of the shapes measured and lost in the
/// other half (docs/GPU.md "State on chip", docs/BENCHMARKS.md "third GPU session").
inline GpuState gpu_state_of(const LaunchRequest& q) {
    if (q.gpu_state == "shared") return GpuState::Shared;
    if (q.gpu_state == "registers") return GpuState::Registers;
    if (q.gpu_state == "auto" || q.gpu_state.empty()) return GpuState::Auto;
    if (q.gpu_state == "global") return GpuState::Global;
    throw std::invalid_argument("[run] gpu_state = \"" + q.gpu_state +
                                "\": must be \"auto\", \"global\", \"shared\" or \"registers\"");
}

/// Where the state of the instances lives and how it is laid out.
template <class R>
struct DevState {
    WorkspaceSpec spec;
    bool interleaved;        ///< thread mode, lane-safe learner: groups of 32 instances interleaved
    double* dbl;
    R* real;
    double* scal;
    std::uint64_t dbl_per, real_per, scal_per; ///< elements per instance (interleaved: per group of 32)
    std::uint64_t units;                       ///< instances, or groups of 32 when interleaved
    StagePlan plan;                            ///< what a launch keeps in shared memory (cuda/stage_plan.hpp)
};

template <class R>
struct DevRun {
    std::uint32_t seed, stream, first, instances;
    sim::InstanceTotals<double, std::uint64_t>* totals;
    const std::uint64_t* checkpoints;
    std::uint32_t ncheck;
    sim::UnchargedRounds uncharged; ///< EngineShape::uncharged
    double* out_expected;
    double* out_realized;
    const double* rows_exact;
    const R* rows_real;
    const double* rows_cum; ///< L_{t-1} rows (learners with kReadsCumulative), else null
    std::uint64_t rows_stride; ///< numbers between two instances' rows: 0 for a shared sequence
    std::uint32_t d;
};

template <class R>
using DevWorkspace = Workspace<StridedView<double>, StridedView<R>, StridedView<double>>;

/// The views of one kind of state arrays (double, or the run's precision R) of an instance: array a starts
/// after arrays 0 .. a - 1 in the staged (shared-memory) block when a < staged_arrays, else in device memory.
/// Unrolled over every slot with compile-time indices, so that the views stay in registers: a loop to the
/// run-time n indexed the arrays at run time and put the whole Workspace (312 bytes) in local memory, which
/// every round re-read (ptxas: a 312-byte stack frame in every advance_kernel; Nsight Compute on an H200:
/// half of DP-FTRL's stall cycles waiting on L1TEX).
template <class T>
__device__ __forceinline__ void lay_out(StridedView<T> (&views)[kMaxStateArrays], int n,
                                        const ArraySpec* spec, T* staged, int staged_arrays, T* global,
                                        std::uint64_t stride, std::uint64_t lane) {
    std::uint64_t off = 0;
#pragma unroll
    for (int a = 0; a < kMaxStateArrays; ++a)
        if (a < n) {
            T* const base = a < staged_arrays ? staged : global;
            views[a] = StridedView<T>{base + off * stride + lane, stride, spec[a].cols};
            off += spec[a].rows * spec[a].cols;
        }
}

/// The views of instance k's state: staged arrays (st.plan) in the block's shared memory `smem` (null when

/// nothing is staged), whose first unit is `g_first`; the others in device memory.
template <class R>
__device__ DevWorkspace<R> workspace_of(const DevState<R>& st, std::uint64_t k, unsigned char* smem = nullptr,
                                        std::uint64_t g_first = 0) {
    DevWorkspace<R> ws{};
    const std::uint64_t g = st.interleaved ? k / 32 : k;
    const std::uint64_t lane = st.interleaved ? k % 32 : 0;
    const std::uint64_t stride = st.interleaved ? 32 : 1;
    const StagePlan& sp = st.plan;
    const std::uint64_t gl = g - g_first;
    double* const sd = smem ? reinterpret_cast<double*>(smem) + gl * sp.dbl_unit : nullptr;
    R* const sr = smem ? reinterpret_cast<R*>(smem + sp.off_real) + gl * sp.real_unit : nullptr;
    lay_out(ws.dbl, st.spec.n_dbl, st.spec.dbl, sd, smem ? sp.dbl_arrays : 0, st.dbl + g * st.dbl_per, stride,
            lane);
    lay_out(ws.real, st.spec.n_real, st.spec.real, sr, smem ? sp.real_arrays : 0, st.real + g * st.real_per,
            stride, lane);
    double* const scal = smem && sp.scalars ? reinterpret_cast<double*>(smem + sp.off_scal) + gl * sp.scal_unit
                                            : st.scal + g * st.scal_per;
    ws.scalars = StridedView<double>{scal + lane, stride, static_cast<std::uint64_t>(st.spec.n_scalars)};
    return ws;
}

/// Copies n elements between device memory g and shared memory s (in: to s), a block's threads taking every
/// blockDim.x-th element.
template <class T>
__device__ void stage_range(T* g, T* s, std::uint64_t n, bool in) {
    for (std::uint64_t i = threadIdx.x; i < n; i += blockDim.x)
        if (in) s[i] = g[i];
        else g[i] = s[i];
}

/// Copies the staged part of units [first, first + count) between device memory and the block's shared memory
/// (in: to shared memory).
template <class R>
__device__ void stage_copy(const DevState<R>& st, unsigned char* smem, std::uint64_t first, std::uint64_t count,
                           bool in) {
    const std::uint64_t per_unit[3] = {st.dbl_per, st.real_per, st.scal_per};
    for_each_stage_copy(st.plan, per_unit, first, count,
                        [&](int kind, std::uint64_t dev, std::uint64_t sh, std::uint64_t n) {
                            if (kind == 1)
                                stage_range(st.real + dev, reinterpret_cast<R*>(smem + st.plan.off_real) + sh, n, in);
                            else
                                stage_range((kind == 0 ? st.dbl : st.scal) + dev,
                                            reinterpret_cast<double*>(smem + (kind == 0 ? 0 : st.plan.off_scal)) + sh,
                                            n, in);
                        });
}

/// Rounds [t0, t1) of instance k on the workspace ws: its totals in, the rounds, its checkpoint sums and totals
/// out. row_of(r) turns a round's row in device memory into what the team reads (the row itself, or its registers).
template <class L, class R, class Team, class WS, class RowOf>
__device__ void advance_instance(const typename L::Params& p, const Team& team, const WS& ws, const DevRun<R>& run,
                                 std::uint64_t k, std::uint64_t t0, std::uint64_t t1, RowOf&& row_of) {
    sim::InstanceTotals<double, std::uint64_t> acc = run.totals[k];
    double* oe = run.out_expected + k * run.ncheck;
    double* orr = run.out_realized + k * run.ncheck;
    const std::uint64_t own = k * run.rows_stride; // where this instance's rows start (0: the shared rows)
    sim::advance<L>(
        p, team, ws, acc, t0, t1,
        [&](std::uint64_t t) {
            const std::uint64_t at = own + (t - t0) * run.d;
            return row_of(ScalarLossRow<R>{run.rows_exact + at, run.rows_real + at, run.rows_cum ? run.rows_cum + at : nullptr});
        },
        run.checkpoints, run.ncheck, run.uncharged, [&](std::uint32_t c, double e, double r) {
            if (team.rank() == 0) {
                oe[c] = e;
                orr[c] = r;
            }
        });
    if (team.rank() == 0) run.totals[k] = acc;
}

template <class L, class R, class Team>
__device__ void run_instance(const typename L::Params& p, const Team& team, const DevState<R>& st, const DevRun<R>& run,
                             std::uint64_t k, std::uint64_t t0, std::uint64_t t1, unsigned char* smem,
                             std::uint64_t g_first) {
    advance_instance<L, R>(p, team, workspace_of(st, k, smem, g_first), run, k, t0, t1,
                           [](const ScalarLossRow<R>& r) { return r; });
}

/// One launch: the rounds [t0, t1) of every instance. With a stage plan, a block first copies the staged state of
/// its units into shared memory, runs every round there and writes it back at the end; the instances past the last
/// take part in the copies and barriers only.
template <class L, class R, Mode M>
__global__ void __launch_bounds__(block_threads(M)) advance_kernel(const typename L::Params p, const DevState<R> st, const DevRun<R> run, std::uint64_t t0,
                               std::uint64_t t1) {
    extern __shared__ __align__(16) unsigned char stage_mem[];
    const bool staged = st.plan.on;
    const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * st.plan.units;
    const std::uint64_t count = st.units - first < st.plan.units ? st.units - first : st.plan.units;
    unsigned char* const smem = staged ? stage_mem : nullptr;
    if (staged) {
        stage_copy(st, stage_mem, first, count, true);
        __syncthreads();
    }
    if constexpr (M == Mode::Thread) {
        const std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
        if (k < run.instances) {
            SerialTeam<R> team;
            team.rng = RngKey{run.seed, run.stream};
            team.id = static_cast<std::uint32_t>(run.first + k);
            run_instance<L, R>(p, team, st, run, k, t0, t1, smem, first);
        }
    } else if constexpr (M == Mode::Warp) {
        __shared__ cuda::WarpStorage<R> tmp[4]; // blocks of 128 threads: 4 warps, 4 instances
        const std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * 4 + threadIdx.x / 32;
        if (k < run.instances) { // whole warps skip together
            cuda::WarpTeam<R> team;
            team.rng = RngKey{run.seed, run.stream};
            team.id = static_cast<std::uint32_t>(run.first + k);
            team.lane = threadIdx.x % 32;
            team.tmp = &tmp[threadIdx.x / 32];
            run_instance<L, R>(p, team, st, run, k, t0, t1, smem, first);
        }
    } else {
        constexpr int B = M == Mode::Block256 ? 256 : 1024;
        __shared__ cuda::BlockStorage<R, B> tmp;
        const std::uint64_t k = blockIdx.x;
        cuda::BlockTeam<R, B> team;
        team.rng = RngKey{run.seed, run.stream};
        team.id = static_cast<std::uint32_t>(run.first + k);
        team.thread = threadIdx.x;
        team.tmp = &tmp;
        run_instance<L, R>(p, team, st, run, k, t0, t1, smem, first);
    }
    if (staged) {
        __syncthreads();
        stage_copy(st, stage_mem, first, count, false);
    }
}

/// One launch with each instance's first double array in registers (gpu_state = "registers", register_row_slots):
/// a warp per instance loads its row once, runs every round of the launch on it with RegWarpTeam<R, K> (lane l
/// holds coordinates l + 32 j, j < K) and stores it back at the end. The other arrays and the scalars stay in
/// device memory. Each round's loss row is loaded into registers at the round's start (RegWarpTeam::load_row), so
/// that its loads overlap the first pass instead of each waiting at its use. The same operations in the same order
/// as the warp mode: the same bits. Full: the state row and the loss rows are exactly 32 K wide (no bounds tests).
template <class L, class R, int K, bool Full>
__global__ void __launch_bounds__(block_threads(Mode::Warp)) advance_regs_kernel(const typename L::Params p, const DevState<R> st,
                                                                 const DevRun<R> run, std::uint64_t t0, std::uint64_t t1) {
    __shared__ cuda::WarpStorage<R> tmp[4];
    const std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * 4 + threadIdx.x / 32;
    if (k >= run.instances) return; // whole warps leave together
    cuda::RegWarpTeam<R, K, Full> team;
    team.rng = RngKey{run.seed, run.stream};
    team.id = static_cast<std::uint32_t>(run.first + k);
    team.lane = threadIdx.x % 32;
    team.tmp = &tmp[threadIdx.x / 32];
    const DevWorkspace<R> g = workspace_of(st, k);
    const std::uint32_t cols = static_cast<std::uint32_t>(st.spec.dbl[0].cols);
    double row[K];
    team.each_slot(cols, [&](cuda::RegIndex x) { row[x.j] = g.dbl[0][x.i]; }, [&](int j) { row[j] = 0.0; });
    Workspace<cuda::RegRow<double, K>, StridedView<R>, StridedView<double>> ws;
    ws.dbl[0] = cuda::RegRow<double, K>{row};
#pragma unroll
    for (int a = 0; a < kMaxStateArrays; ++a) ws.real[a] = g.real[a];
    ws.scalars = g.scalars;
    advance_instance<L, R>(p, team, ws, run, k, t0, t1,
                           [&](const ScalarLossRow<R>& r) { return team.load_row(r, run.d < 32u * K ? run.d : 32u * K); });
    team.for_each(cols, [&](cuda::RegIndex x) { g.dbl[0][x.i] = row[x.j]; });
}

/// The loss rows in precision R: out[j] = (R) in[j] (grid-stride).
template <class R>
__global__ void round_rows_kernel(const double* in, R* out, std::size_t n) {
    for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
         j += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        out[j] = static_cast<R>(in[j]);
}

template <class L, class R, Mode M>
__global__ void __launch_bounds__(block_threads(M)) init_kernel(const typename L::Params p, const DevState<R> st, const DevRun<R> run) {
    if constexpr (M == Mode::Thread) {
        const std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
        if (k >= run.instances) return;
        SerialTeam<R> team;
        team.rng = RngKey{run.seed, run.stream};
        team.id = static_cast<std::uint32_t>(run.first + k);
        L::init(p, team, workspace_of(st, k));
    } else if constexpr (M == Mode::Warp) {
        __shared__ cuda::WarpStorage<R> tmp[4];
        const std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * 4 + threadIdx.x / 32;
        if (k >= run.instances) return;
        cuda::WarpTeam<R> team;
        team.rng = RngKey{run.seed, run.stream};
        team.id = static_cast<std::uint32_t>(run.first + k);
        team.lane = threadIdx.x % 32;
        team.tmp = &tmp[threadIdx.x / 32];
        L::init(p, team, workspace_of(st, k));
    } else {
        constexpr int B = M == Mode::Block256 ? 256 : 1024;
        __shared__ cuda::BlockStorage<R, B> tmp;
        cuda::BlockTeam<R, B> team;
        team.rng = RngKey{run.seed, run.stream};
        team.id = static_cast<std::uint32_t>(run.first + blockIdx.x);
        team.thread = threadIdx.x;
        team.tmp = &tmp;
        L::init(p, team, workspace_of(st, blockIdx.x));
    }
}

/// Numbers of per-instance rows (all instances) made on the host and uploaded at a time: 128 MiB of doubles.
inline constexpr std::uint64_t kOwnRowsNumbers = std::uint64_t{1} << 24;

template <class L, class R>
class CudaEngine final : public InstanceEngine {
  public:
    /// `own` non-null: per-instance sequences, made on the host (host/backend/own_rows.hpp) with `threads` threads.
    CudaEngine(const typename L::Params& p, const EngineShape& s, const AdversaryRuntime* own, unsigned threads)
        : p_(p), s_(s), nck_(static_cast<std::uint32_t>(s.checkpoints.size())), mode_(choose_mode<L>(s)), own_(own),
          threads_(threads < 1 ? 1 : threads) {
        st_.spec = L::workspace(p);
        if (const GpuState g = gpu_state_of(s.launch); g == GpuState::Registers || g == GpuState::Auto)
            regs_k_ = register_row_slots(st_.spec, learners::RowInRegisters<L>::value, mode_ == Mode::Warp);
        st_.interleaved = mode_ == Mode::Thread && L::kInstanceLanes;
        const std::uint64_t nd = st_.spec.elements(false, 1), nr = st_.spec.elements(true, 1),
                            ns = static_cast<std::uint64_t>(st_.spec.n_scalars);
        const std::uint64_t units = st_.interleaved ? (std::uint64_t{s.instances} + 31) / 32 : s.instances;
        const std::uint64_t per = st_.interleaved ? 32 : 1;
        st_.dbl_per = nd * per;
        st_.real_per = nr * per;
        st_.scal_per = ns * per;
        st_.units = units;
        plan_stage_for_launch(per);
        dbl_.resize(units * st_.dbl_per + 1);
        real_.resize(units * st_.real_per + 1);
        scal_.resize(units * st_.scal_per + 1);
        dbl_.zero();
        real_.zero();
        scal_.zero();
        st_.dbl = dbl_.data();
        st_.real = real_.data();
        st_.scal = scal_.data();
        acc_.resize(s.instances);
        acc_.zero(); // InstanceTotals is all-zero initialised
        exp_.resize(std::size_t(s.instances) * nck_);
        real_out_.resize(exp_.size());
        exp_.zero();
        real_out_.zero();
        ck_.upload(s.checkpoints);
        if (own_) {
            own_L_.assign(std::size_t(s.instances) * s.d, 0.0);
            own_cmp_.assign(std::size_t(s.instances) * nck_, 0.0);
            own_next_.assign(s.instances, 0);
        }
        launch(true, 0, 0);
    }

    void advance(std::uint64_t t0, std::uint64_t t1, const double* losses, const double* cum) override {
        if (own_) return advance_own(t0, t1);
        if (!losses) throw std::logic_error("CudaEngine::advance: no shared losses");
        upload_rows(losses, cum, (t1 - t0) * s_.d, 0);
        launch(false, t0, t1);
        DPR_CUDA_CHECK(cudaDeviceSynchronize());
    }

    void results(std::vector<double>& expected, std::vector<double>& realized) override {
        exp_.download(expected);
        real_out_.download(realized);
    }
    void comparators(std::vector<double>& out) override { out = own_ ? own_cmp_ : std::vector<double>{}; }
    void diagnostics(std::vector<double>& out) override {
        // Diagnostics are a few scalars per instance in the workspace: read them back once.
        constexpr std::size_t n = learners::DiagnosticCount<L>::value;
        out.assign(std::size_t(s_.instances) * n, 0.0);
        if constexpr (n > 0) {
            std::vector<double> sc;
            scal_.download(sc);
            std::vector<double> one(static_cast<std::size_t>(st_.spec.n_scalars));
            for (std::uint64_t k = 0; k < s_.instances; ++k) {
                for (int j = 0; j < st_.spec.n_scalars; ++j)
                    one[j] = st_.interleaved ? sc[(k / 32) * st_.scal_per + std::uint64_t(j) * 32 + k % 32]
                                             : sc[k * st_.scal_per + j];
                L::diagnostics(p_, one.data(), out.data() + k * n);
            }
        }
    }
    void first_nonfinite_rounds(std::vector<std::uint64_t>& out) override {
        std::vector<sim::InstanceTotals<double, std::uint64_t>> acc;
        acc_.download(acc);
        out.resize(acc.size());
        for (std::size_t k = 0; k < acc.size(); ++k) out[k] = acc[k].first_nonfinite_round;
    }
    std::string policy() const override {
        return std::string("cuda, ") + (sizeof(R) == 4 ? "float" : "double") + ": " + mode_name(mode_) +
               (mode_ == Mode::Thread ? (st_.interleaved ? " (state interleaved per warp)" : " (state contiguous)") : "") +
               "; " + stage_text_;
    }

  private:
    static constexpr bool kCum = learners::ReadsCumulative<L>::value;

    /// Rows (and L_{t-1} rows) to the device, `stride` numbers apart per instance (0: one shared sequence). The
    /// rows in the run's precision are rounded on the device (the same IEEE rounding as on the host), so that each
    /// chunk crosses PCIe once; in double they are the exact rows themselves.
    void upload_rows(const double* rows, const double* cum, std::size_t n, std::uint64_t stride) {
        rows_exact_.upload(rows, n);
        if (cum) rows_cum_.upload(cum, n);
        has_cum_ = cum != nullptr;
        rows_stride_ = stride;
        if constexpr (!std::is_same_v<R, double>) {
            if (rows_real_.size() < n) rows_real_.resize(n);
            const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 1u << 16));
            round_rows_kernel<R><<<blocks, 256>>>(rows_exact_.data(), rows_real_.data(), n);
            DPR_CUDA_CHECK_LAUNCH();
        }
    }

    /// Per-instance sequences: blocks of rounds small enough that every instance's rows fit kOwnRowsNumbers, each
    /// made on the host (instance-major: instance k's rounds at k (b - a) d), uploaded, then played by one launch.
    void advance_own(std::uint64_t t0, std::uint64_t t1) {
        const std::uint64_t d = s_.d, per_round = std::max<std::uint64_t>(1, std::uint64_t{s_.instances} * d);
        const std::uint64_t step = std::max<std::uint64_t>(1, kOwnRowsNumbers / per_round);
        std::vector<std::vector<double>> scratch(threads_, std::vector<double>(d));
        for (std::uint64_t a = t0; a < t1; a += step) {
            const std::uint64_t b = std::min(t1, a + step), per = (b - a) * d;
            host_rows_.resize(std::size_t(s_.instances) * per);
            if (kCum) host_cum_.resize(host_rows_.size());
            parallel_for(s_.instances, threads_, [&](std::uint64_t k, unsigned tid) {
                const adversaries::SequenceCtx ctx{s_.seed, s_.stream, static_cast<std::uint32_t>(s_.first_instance + k)};
                own_rows([&](std::uint64_t t, double* row) { own_->fill(ctx, t, row); },
                         [&](const double* sums) { return own_->comparator(sums, s_.d); }, s_.d, a, b,
                         host_rows_.data() + k * per, d, 1, scratch[tid].data(), kCum ? host_cum_.data() + k * per : nullptr,
                         OwnSequenceState{own_L_.data() + k * d, &own_next_[k], own_cmp_.data() + k * nck_,
                                          s_.checkpoints.data(), nck_});
            });
            upload_rows(host_rows_.data(), kCum ? host_cum_.data() : nullptr, host_rows_.size(), per);
            launch(false, a, b);
            DPR_CUDA_CHECK(cudaDeviceSynchronize());
        }
    }

    /// The kernel of this engine's mode (for its attributes).
    const void* advance_fn() const {
        switch (mode_) {
        case Mode::Thread: return reinterpret_cast<const void*>(&advance_kernel<L, R, Mode::Thread>);
        case Mode::Warp: return reinterpret_cast<const void*>(&advance_kernel<L, R, Mode::Warp>);
        case Mode::Block256: return reinterpret_cast<const void*>(&advance_kernel<L, R, Mode::Block256>);
        default: return reinterpret_cast<const void*>(&advance_kernel<L, R, Mode::Block1024>);
        }
    }

    /// st_.plan from the request ([run] gpu_state), the mode's units per block and the device's shared memory;
    /// raises the kernel's dynamic shared-memory limit when the plan needs more than the default 48 KiB.
    void plan_stage_for_launch(std::uint64_t per) {
        if (regs_k_) {
            char buf[160];
            std::snprintf(buf, sizeof buf,
                          "state in registers: the first of %d arrays, %d coordinates per lane; the rest in device memory",
                          st_.spec.n_dbl + st_.spec.n_real, regs_k_);
            stage_text_ = buf;
            return;
        }
        const GpuState want = gpu_state_of(s_.launch) == GpuState::Shared ? GpuState::Shared : GpuState::Global;
        UnitShape u;
        u.per = per;
        u.warps_per_block = static_cast<std::uint32_t>(block_threads(mode_) / 32);
        u.units_per_block = mode_ == Mode::Thread ? (st_.interleaved ? 4u : 128u) : mode_ == Mode::Warp ? 4u : 1u;
        SharedLimits lim;
        int dev = 0, v = 0;
        DPR_CUDA_CHECK(cudaGetDevice(&dev));
        DPR_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        lim.per_block_optin = static_cast<std::uint64_t>(v);
        DPR_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
        lim.per_sm = static_cast<std::uint64_t>(v);
        DPR_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrReservedSharedMemoryPerBlock, dev));
        lim.reserved_per_block = static_cast<std::uint64_t>(v);
        cudaFuncAttributes fa{};
        DPR_CUDA_CHECK(cudaFuncGetAttributes(&fa, advance_fn()));
        lim.static_per_block = fa.sharedSizeBytes;
        st_.plan = plan_stage(st_.spec, sizeof(R), u, lim, want);
        stage_text_ = describe_stage(st_.plan, st_.spec, st_.interleaved ? "32 instances" : "instance");
        if (want == GpuState::Shared && !st_.plan.on)
            stage_text_ += " (gpu_state = shared: the first array does not fit a block's share of shared memory)";
        if (gpu_state_of(s_.launch) == GpuState::Registers)
            stage_text_ += " (gpu_state = registers: needs a learner with kRowInRegisters, a warp per instance and "
                           "its state one row of at most 1024 doubles)";
        if (st_.plan.on) {
            DPR_CUDA_CHECK(cudaFuncSetAttribute(advance_fn(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(st_.plan.bytes)));
            DPR_CUDA_CHECK(cudaFuncSetAttribute(advance_fn(), cudaFuncAttributePreferredSharedMemoryCarveout,
                                                cudaSharedmemCarveoutMaxShared));
        }
    }

    DevRun<R> run_args() {
        DevRun<R> r;
        r.seed = s_.seed;
        r.stream = s_.stream;
        r.first = s_.first_instance;
        r.instances = s_.instances;
        r.totals = acc_.data();
        r.checkpoints = ck_.data();
        r.ncheck = nck_;
        r.uncharged = s_.uncharged;
        r.out_expected = exp_.data();
        r.out_realized = real_out_.data();
        r.rows_exact = rows_exact_.data();
        if constexpr (std::is_same_v<R, double>) r.rows_real = rows_exact_.data();
        else r.rows_real = rows_real_.data();
        r.rows_cum = has_cum_ ? rows_cum_.data() : nullptr;
        r.rows_stride = rows_stride_;
        r.d = s_.d;
        return r;
    }

    void launch(bool init, std::uint64_t t0, std::uint64_t t1) {
        const DevRun<R> r = run_args();
        const unsigned n = s_.instances;
        const std::size_t shm = st_.plan.on ? static_cast<std::size_t>(st_.plan.bytes) : 0;
        if constexpr (learners::RowInRegisters<L>::value) {
            if (regs_k_ && !init) { // init runs in the warp mode, on device memory: the layouts are the same
                const unsigned blocks = (n + 3) / 4, bt = block_threads(Mode::Warp);
                const std::uint64_t w = 32u * static_cast<std::uint64_t>(regs_k_);
                const bool full = st_.spec.dbl[0].cols == w && s_.d == w;
                const auto go = [&](auto kk) {
                    constexpr int KK = decltype(kk)::value;
                    if (full) advance_regs_kernel<L, R, KK, true><<<blocks, bt>>>(p_, st_, r, t0, t1);
                    else advance_regs_kernel<L, R, KK, false><<<blocks, bt>>>(p_, st_, r, t0, t1);
                };
                if (regs_k_ == 8) go(std::integral_constant<int, 8>{});
                else if (regs_k_ == 16) go(std::integral_constant<int, 16>{});
                else go(std::integral_constant<int, 32>{});
                DPR_CUDA_CHECK_LAUNCH();
                return;
            }
        }
        switch (mode_) {
        case Mode::Thread:
            if (init) init_kernel<L, R, Mode::Thread><<<(n + 127) / 128, block_threads(Mode::Thread)>>>(p_, st_, r);
            else advance_kernel<L, R, Mode::Thread><<<(n + 127) / 128, block_threads(Mode::Thread), shm>>>(p_, st_, r, t0, t1);
            break;
        case Mode::Warp:
            if (init) init_kernel<L, R, Mode::Warp><<<(n + 3) / 4, block_threads(Mode::Warp)>>>(p_, st_, r);
            else advance_kernel<L, R, Mode::Warp><<<(n + 3) / 4, block_threads(Mode::Warp), shm>>>(p_, st_, r, t0, t1);
            break;
        case Mode::Block256:
            if (init) init_kernel<L, R, Mode::Block256><<<n, block_threads(Mode::Block256)>>>(p_, st_, r);
            else advance_kernel<L, R, Mode::Block256><<<n, block_threads(Mode::Block256), shm>>>(p_, st_, r, t0, t1);
            break;
        case Mode::Block1024:
            if (init) init_kernel<L, R, Mode::Block1024><<<n, block_threads(Mode::Block1024)>>>(p_, st_, r);
            else advance_kernel<L, R, Mode::Block1024><<<n, block_threads(Mode::Block1024), shm>>>(p_, st_, r, t0, t1);
            break;
        }
        DPR_CUDA_CHECK_LAUNCH();
    }

    typename L::Params p_;
    EngineShape s_;
    std::uint32_t nck_;
    Mode mode_;
    int regs_k_ = 0; ///< coordinates per lane held in registers (gpu_state = "registers"), 0 = not
    DevState<R> st_{};
    std::string stage_text_;
    cuda::DeviceBuffer<double> dbl_, scal_, exp_, real_out_, rows_exact_, rows_cum_;
    bool has_cum_ = false;
    cuda::DeviceBuffer<R> real_, rows_real_;
    cuda::DeviceBuffer<sim::InstanceTotals<double, std::uint64_t>> acc_;
    cuda::DeviceBuffer<std::uint64_t> ck_;
    std::uint64_t rows_stride_ = 0;
    const AdversaryRuntime* own_; ///< per-instance sequences from this adversary, or null
    unsigned threads_;
    std::vector<double> own_L_, own_cmp_, host_rows_, host_cum_;
    std::vector<std::uint32_t> own_next_;
};

/// The engine for the request's learner in precision R.
template <class R>
std::unique_ptr<InstanceEngine> make_engine(const EngineRequest& r) {
    std::unique_ptr<InstanceEngine> out;
    with_type_at(learners::AllLearners{}, r.learner_index, [&](auto tag) {
        using L = typename decltype(tag)::type;
        if (r.params_bytes != sizeof(typename L::Params))
            throw std::logic_error("make_cuda_engine: params size mismatch");
        typename L::Params p;
        std::memcpy(&p, r.params, sizeof p);
        out = std::make_unique<CudaEngine<L, R>>(p, r.shape, r.per_instance, r.threads);
    });
    if (!out) throw std::logic_error("make_cuda_engine: learner index out of range");
    return out;
}

} // namespace dpr::cuda_api::detail
