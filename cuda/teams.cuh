#pragma once
// The GPU executor's teams (the Team concept of kernels/core/team.hpp):
//
//   thread per instance   SerialTeam<R> itself: one lane, coordinates in order, so a thread computes exactly
//                         what the CPU computes with instance lanes (host/cpu/cpu_teams.hpp) -- the same
//                         operations in the same order. The executor interleaves the state of the 32 instances
//                         of a warp (element e of lane l at [e 32 + l]) so that the warp's loads coalesce.
//   WarpTeam<R>           one instance per warp: lane l handles coordinates l, l + 32, ...; reductions, argmin and
//                         the inverse CDF's scan are CUB's (WarpReduce, WarpScan), in CUB's fixed order.
//   RegWarpTeam<R, K>     WarpTeam with its coordinate loops unrolled K per lane, so that a learner's row can live
//                         in registers for a launch's rounds (the same bits as WarpTeam).
//   BlockTeam<R, B>       one instance per block of B threads (large d, up to 2^20 experts and more): the same
//                         with BlockReduce and BlockScan.
// Reductions combine lanes in CUB's order, which differs from the CPU's tile-and-halving order: coordinate-lane
// results agree with the CPU to rounding (tests/gpu/), thread-per-instance results bit for bit.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/core/hd.hpp"
#include "kernels/core/team.hpp"

namespace dpr::cuda {

/// A key and its index, reduced to the smallest key, ties to the lowest index; a NaN key never wins.
template <class R>
struct KeyArg {
    R key;
    std::uint32_t arg;
};
template <class R>
struct KeyArgMin {
    __device__ KeyArg<R> operator()(const KeyArg<R>& a, const KeyArg<R>& b) const {
        const bool a_nan = a.key != a.key, b_nan = b.key != b.key;
        if (a_nan) return b_nan ? (a.arg < b.arg ? a : b) : b;
        if (b_nan) return a;
        if (b.key < a.key || (b.key == a.key && b.arg < a.arg)) return b;
        return a;
    }
};
struct MaxOp {
    template <class T>
    __device__ T operator()(const T& a, const T& b) const {
        return a < b ? b : a;
    }
};

/// Shared memory a team needs for CUB's collectives (one per warp for WarpTeam, one per block for BlockTeam).
template <class R>
union WarpStorage {
    typename cub::WarpReduce<R>::TempStorage reduce;
    typename cub::WarpReduce<KeyArg<R>>::TempStorage argmin;
    typename cub::WarpScan<R>::TempStorage scan;
    typename cub::WarpScan<double>::TempStorage scan_double; ///< categorical over double weights
};
template <class R, int B>
struct BlockStorage {
    union {
        typename cub::BlockReduce<R, B>::TempStorage reduce;
        typename cub::BlockReduce<KeyArg<R>, B>::TempStorage argmin;
        typename cub::BlockScan<R, B>::TempStorage scan;
        typename cub::BlockScan<double, B>::TempStorage scan_double; ///< categorical over double weights
    } cub;
    double slot[2];
};

/// What a WarpTeam and a BlockTeam (Self) share: ScalarTeamBase's members (kernels/core/team.hpp), and the
/// reductions as one strided pass per member (i = rank(), rank() + size(), ...) combined by Self's sum_all /
/// max_all / argmin_all, its CUB collectives.
template <class R, class Self>
struct StridedTeam : ScalarTeamBase<R> {
    template <class F>
    __device__ void for_each(std::uint32_t n, F&& f) const {
        for (std::uint32_t i = self().rank(); i < n; i += Self::size()) f(i);
    }

    template <int NS, int NM, class F>
    __device__ Reduced<R, NS, NM> reduce(std::uint32_t n, F&& f) const {
        Reduced<R, NS, NM> acc;
        for (int k = 0; k < NS; ++k) acc.sum[k] = R(0);
        for (int k = 0; k < NM; ++k) acc.max[k] = -std::numeric_limits<R>::infinity();
        for (std::uint32_t i = self().rank(); i < n; i += Self::size()) {
            const Contrib<R, NS, NM> c = f(i);
            for (int k = 0; k < NS; ++k) acc.sum[k] = acc.sum[k] + c.sum[k];
            for (int k = 0; k < NM; ++k) acc.max[k] = vmax(acc.max[k], c.max[k]);
        }
        for (int k = 0; k < NS; ++k) acc.sum[k] = self().sum_all(acc.sum[k]);
        for (int k = 0; k < NM; ++k) acc.max[k] = self().max_all(acc.max[k]);
        return acc;
    }

    template <int NM, class F>
    __device__ ArgReduced<R, std::uint32_t, NM> argmin(std::uint32_t n, F&& f) const {
        KeyArg<R> best{std::numeric_limits<R>::quiet_NaN(), 0u};
        R m[NM > 0 ? NM : 1];
        for (int k = 0; k < NM; ++k) m[k] = -std::numeric_limits<R>::infinity();
        for (std::uint32_t i = self().rank(); i < n; i += Self::size()) {
            const ArgContrib<R, NM> c = f(i);
            if (c.key < best.key || (best.key != best.key && c.key == c.key)) best = KeyArg<R>{c.key, i};
            for (int k = 0; k < NM; ++k) m[k] = vmax(m[k], c.max[k]);
        }
        const KeyArg<R> b = self().argmin_all(best);
        ArgReduced<R, std::uint32_t, NM> out;
        out.key = b.key;
        out.arg = b.arg;
        for (int k = 0; k < NM; ++k) out.max[k] = self().max_all(m[k]);
        return out;
    }

  private:
    __device__ const Self& self() const { return static_cast<const Self&>(*this); }
};

/// One instance per warp.
template <class R>
struct WarpTeam : StridedTeam<R, WarpTeam<R>> {
    std::uint32_t lane = 0;
    WarpStorage<R>* tmp = nullptr;

    __device__ std::uint32_t rank() const { return lane; }
    __device__ static constexpr std::uint32_t size() { return 32; }
    __device__ static void sync() { __syncwarp(); }
    template <class T>
    __device__ T broadcast(T x) const {
        return __shfl_sync(0xffffffffu, x, 0);
    }

    __device__ R sum_all(R x) const {
        __syncwarp();
        const R s = cub::WarpReduce<R>(tmp->reduce).Sum(x);
        return __shfl_sync(0xffffffffu, s, 0);
    }
    __device__ R max_all(R x) const {
        __syncwarp();
        const R m = cub::WarpReduce<R>(tmp->reduce).Reduce(x, MaxOp{});
        return __shfl_sync(0xffffffffu, m, 0);
    }

    __device__ KeyArg<R> argmin_all(KeyArg<R> best) const {
        __syncwarp();
        const KeyArg<R> b = cub::WarpReduce<KeyArg<R>>(tmp->argmin).Reduce(best, KeyArgMin<R>{});
        return KeyArg<R>{__shfl_sync(0xffffffffu, b.key, 0), __shfl_sync(0xffffffffu, b.arg, 0)};
    }

    /// Inverse CDF in index order, 32 weights at a time (an inclusive warp scan each); weights of the
    /// target's type T (R, or double).
    template <class F, class T>
    __device__ std::uint32_t categorical(std::uint32_t n, F&& f, T target) const {
        T acc = T(0);
        std::uint32_t last_positive = 0;
        for (std::uint32_t base = 0; base < n; base += 32) {
            const std::uint32_t i = base + lane;
            const T w = i < n ? f(i) : T(0);
            const T cum = inclusive_sum(w > T(0) ? w : T(0));
            const unsigned positive = __ballot_sync(0xffffffffu, w > T(0));
            const unsigned hit = __ballot_sync(0xffffffffu, w > T(0) && target < acc + cum);
            if (hit) return base + static_cast<std::uint32_t>(__ffs(hit) - 1);
            if (positive) last_positive = base + static_cast<std::uint32_t>(31 - __clz(positive));
            acc = acc + __shfl_sync(0xffffffffu, cum, 31);
        }
        return last_positive;
    }

    /// categorical() over double weights at the target u S, S their sum added 32 at a time as the scan adds
    /// it.
    template <class F>
    __device__ std::uint32_t categorical_scaled(std::uint32_t n, F&& f, double u) const {
        double total = 0.0;
        for (std::uint32_t base = 0; base < n; base += 32) {
            const std::uint32_t i = base + lane;
            const double w = i < n ? f(i) : 0.0;
            total = total + __shfl_sync(0xffffffffu, inclusive_sum(w > 0.0 ? w : 0.0), 31);
        }
        return categorical(n, f, u * total);
    }

  private:
    template <class T>
    __device__ T inclusive_sum(T x) const {
        T cum;
        __syncwarp();
        if constexpr (std::is_same<T, double>::value && !std::is_same<R, double>::value)
            cub::WarpScan<double>(tmp->scan_double).InclusiveSum(x, cum);
        else
            cub::WarpScan<R>(tmp->scan).InclusiveSum(x, cum);
        return cum;
    }

  public:
};

/// The index a RegWarpTeam hands its loops' bodies: coordinate i and its slot j = (i - lane) / 32 among the lane's
/// registers. It converts to the coordinate, so a body that indexes loss rows or device-memory views is unchanged.
struct RegIndex {
    std::uint32_t i;
    int j;
    __device__ operator std::uint32_t() const { return i; }
};

/// An array of one row held in registers: lane l keeps coordinates l, l + 32, ..., l + 32 (K - 1) in the K values
/// `v` points to (the kernel's local array). Only indices from the team's unrolled loops (RegIndex, whose j is a
/// compile-time constant after unrolling) reach it, so the array never leaves the register file.
template <class T, int K>
struct RegRow {
    T* v = nullptr;
};

/// A round's loss row with this lane's K coordinates (l + 32 j) loaded into registers at the round's start
/// (RegWarpTeam::load_row), all K loads in flight before the first use; it is also the row in device memory, for
/// the accessors that take a plain index.
template <class R, int K>
struct RegLossRow : ScalarLossRow<R> {
    double ex[K];
    R re[K];
};

/// One instance per warp with the loops over coordinates unrolled to K per lane (d <= 32 K): the same coordinates,
/// operations and CUB reductions in the same order as WarpTeam -- the same bits -- but a learner's arrays can live
/// in registers (RegRow) across the rounds of a launch, and each lane has all K coordinates' loads in flight before
/// their first use. Learners opt in with kRowInRegisters (their round reaches its first double array only through
/// for_each / reduce indices); cuda/engine_impl.cuh, docs/GPU.md "State in registers". Full: the rows are exactly
/// 32 K wide (d = 256, 512, 1024), so a loop over all of them needs no per-coordinate bounds test (ptxas keeps only
/// 7 predicates: the 32 tests of K = 32 were recomputed every pass, about 7 instructions per coordinate).
template <class R, int K, bool Full = false>
struct RegWarpTeam : WarpTeam<R> {
    using WarpTeam<R>::load;
    using WarpTeam<R>::store;
    using WarpTeam<R>::sum_all;
    using WarpTeam<R>::max_all;
    using WarpTeam<R>::loss;
    using WarpTeam<R>::loss_exact;

    template <class T, int K2>
    __device__ static T load(const RegRow<T, K2>& v, RegIndex x) {
        return v.v[x.j];
    }
    template <class T, int K2>
    __device__ static void store(const RegRow<T, K2>& v, RegIndex x, T y) {
        v.v[x.j] = y;
    }

    template <int K2>
    __device__ static R loss(const RegLossRow<R, K2>& l, RegIndex x) {
        return l.re[x.j];
    }
    template <int K2>
    __device__ static double loss_exact(const RegLossRow<R, K2>& l, RegIndex x) {
        return l.ex[x.j];
    }

    /// Row r's first n coordinates of this lane, in registers (the rest of a RegLossRow reads r itself).
    __device__ RegLossRow<R, K> load_row(const ScalarLossRow<R>& r, std::uint32_t n) const {
        RegLossRow<R, K> out;
        static_cast<ScalarLossRow<R>&>(out) = r;
        const double* const ex = r.exact + this->lane; // one base: coordinate lane + 32 j is an immediate offset
        const R* const re = r.real + this->lane;
        each_slot(n, [&](RegIndex x) {
            out.ex[x.j] = ex[32 * x.j];
            out.re[x.j] = re[32 * x.j];
        }, [&](int j) {
            out.ex[j] = 0.0;
            out.re[j] = R(0);
        });
        return out;
    }

    /// The loops cover 32 K coordinates: a larger n is a launch-policy bug, stopped here rather than computed wrong.
    __device__ static void check_width(std::uint32_t n) {
        if (n > 32u * K) __trap();
    }

    /// f(RegIndex{lane + 32 j, j}) for the slots j < K whose coordinate is below n, in order of j; absent(j) for
    /// the others. Full: n = 32 K takes an unrolled loop without bounds tests.
    template <class F, class G>
    __device__ void each_slot(std::uint32_t n, F&& f, G&& absent) const {
        check_width(n);
        if constexpr (Full) {
            if (n == 32u * K) {
#pragma unroll
                for (int j = 0; j < K; ++j) f(RegIndex{this->lane + 32u * static_cast<std::uint32_t>(j), j});
                return;
            }
        }
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const std::uint32_t i = this->lane + 32u * static_cast<std::uint32_t>(j);
            if (i < n) f(RegIndex{i, j});
            else absent(j);
        }
    }

    template <class F>
    __device__ void for_each(std::uint32_t n, F&& f) const {
        each_slot(n, f, [](int) {});
    }

    template <int NS, int NM, class F>
    __device__ Reduced<R, NS, NM> reduce(std::uint32_t n, F&& f) const {
        Reduced<R, NS, NM> acc;
        for (int k = 0; k < NS; ++k) acc.sum[k] = R(0);
        for (int k = 0; k < NM; ++k) acc.max[k] = -std::numeric_limits<R>::infinity();
        each_slot(n, [&](RegIndex x) {
            const Contrib<R, NS, NM> c = f(x);
            for (int k = 0; k < NS; ++k) acc.sum[k] = acc.sum[k] + c.sum[k];
            for (int k = 0; k < NM; ++k) acc.max[k] = vmax(acc.max[k], c.max[k]);
        }, [](int) {});
        for (int k = 0; k < NS; ++k) acc.sum[k] = sum_all(acc.sum[k]);
        for (int k = 0; k < NM; ++k) acc.max[k] = max_all(acc.max[k]);
        return acc;
    }
};

/// One instance per block of B threads.
template <class R, int B>
struct BlockTeam : StridedTeam<R, BlockTeam<R, B>> {
    std::uint32_t thread = 0;
    BlockStorage<R, B>* tmp = nullptr;

    __device__ std::uint32_t rank() const { return thread; }
    __device__ static constexpr std::uint32_t size() { return B; }
    __device__ static void sync() { __syncthreads(); }
    template <class T>
    __device__ T broadcast(T x) const {
        __syncthreads();
        if (thread == 0) tmp->slot[0] = static_cast<double>(x);
        __syncthreads();
        return static_cast<T>(tmp->slot[0]);
    }

    __device__ R sum_all(R x) const {
        __syncthreads();
        const R s = cub::BlockReduce<R, B>(tmp->cub.reduce).Sum(x);
        return broadcast(s);
    }
    __device__ R max_all(R x) const {
        __syncthreads();
        const R m = cub::BlockReduce<R, B>(tmp->cub.reduce).Reduce(x, MaxOp{});
        return broadcast(m);
    }

    __device__ KeyArg<R> argmin_all(KeyArg<R> best) const {
        __syncthreads();
        const KeyArg<R> b = cub::BlockReduce<KeyArg<R>, B>(tmp->cub.argmin).Reduce(best, KeyArgMin<R>{});
        return KeyArg<R>{broadcast(b.key), broadcast(b.arg)};
    }

    /// Weights of the target's type T (R, or double).
    template <class F, class T>
    __device__ std::uint32_t categorical(std::uint32_t n, F&& f, T target) const {
        T acc = T(0);
        std::uint32_t last_positive = 0;
        for (std::uint32_t base = 0; base < n; base += B) {
            const std::uint32_t i = base + thread;
            const T w = i < n ? f(i) : T(0);
            T cum, total;
            inclusive_sum(w > T(0) ? w : T(0), cum, total);
            // The first index whose running sum passes the target, and the last positive one, via a min / max
            // over the block (each a reduction: the lowest hit and the highest positive index).
            const std::uint32_t hit_i = (w > T(0) && target < acc + cum) ? i : 0xFFFFFFFFu;
            // Integer min / max through atomics on shared words (the result does not depend on their order).
            unsigned* words = reinterpret_cast<unsigned*>(tmp->slot);
            if (thread == 0) {
                words[0] = 0xFFFFFFFFu;
                words[1] = 0u;
            }
            __syncthreads();
            atomicMin(&words[0], hit_i);
            if (w > T(0)) atomicMax(&words[1], i + 1);
            __syncthreads();
            const unsigned first_hit = words[0], last_pos = words[1];
            if (first_hit != 0xFFFFFFFFu) return first_hit;
            if (last_pos) last_positive = last_pos - 1;
            acc = acc + total;
        }
        return last_positive;
    }

    /// categorical() over double weights at the target u S, S their sum added B at a time as the scan adds
    /// it.
    template <class F>
    __device__ std::uint32_t categorical_scaled(std::uint32_t n, F&& f, double u) const {
        double total = 0.0;
        for (std::uint32_t base = 0; base < n; base += B) {
            const std::uint32_t i = base + thread;
            const double w = i < n ? f(i) : 0.0;
            double cum, block;
            inclusive_sum(w > 0.0 ? w : 0.0, cum, block);
            total = total + block;
        }
        return categorical(n, f, u * total);
    }

  private:
    template <class T>
    __device__ void inclusive_sum(T x, T& cum, T& total) const {
        __syncthreads();
        if constexpr (std::is_same<T, double>::value && !std::is_same<R, double>::value)
            cub::BlockScan<double, B>(tmp->cub.scan_double).InclusiveSum(x, cum, total);
        else
            cub::BlockScan<R, B>(tmp->cub.scan).InclusiveSum(x, cum, total);
    }

  public:
};

} // namespace dpr::cuda
