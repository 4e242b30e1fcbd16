#pragma once
// The CPU executor's teams (the Team concept of kernels/core/team.hpp) over SIMD packs (host/simd/pack.hpp):
//
//   CoordTeam<R, W>      the W lanes of a pack are W consecutive coordinates of ONE instance. Coordinates are
//                        cut into tiles of kTile; a team may have several members (threads) sharing a
//                        large-d instance, each taking whole tiles. A reduction accumulates each tile in W
//                        lane accumulators (lane l sums coordinates l, l + W, ... of the tile in order),
//                        folds them by halving (simd::reduce_sum), then sums the tiles in tile order -- the
//                        same bits for any number of members and on every ISA.
//   InstanceTeam<R, W>   the W lanes are W instances (a "group"); coordinates are visited in order, so each
//                        lane computes exactly what SerialTeam computes for its instance (same operations,
//                        same order). The state of a group is interleaved: element e of lane l at [e W + l].
//                        For small d, where a pass over the coordinates is too short to amortise horizontal
//                        reductions, this is what makes the per-round fixed cost vanish.
// The loops are `flatten`ed: the loop body (a learner's lambda) and everything it calls are inlined into
// the loop, so lane values stay in registers instead of crossing a call as 64-byte arguments.
#define DPR_CPU_LOOP __attribute__((flatten))
// Both run one loop body per pack of W lanes; a coordinate loop's last pack may reach past n: its extra
// lanes compute on the zero padding of the rows (never NaN-free, never read) and reductions mask them out.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "host/simd/pack.hpp"
#include "kernels/core/team.hpp"
#include "kernels/core/vmath.hpp"

namespace dpr::cpu {

/// Coordinates per tile of a CoordTeam: the unit of work split between members and the unit of the
/// reduction order (part of the reproducibility contract, docs/RANDOMNESS.md).
inline constexpr std::uint32_t kTile = 2048;

/// Members of a CoordTeam sharing one instance: a sense-reversing spin barrier and the per-tile partial
/// results of reductions (double-buffered: a member may start the next reduction while another still reads).
class TeamGroup {
  public:
    explicit TeamGroup(unsigned members) : members_(members) {}
    unsigned members() const { return members_; }

    void barrier() {
        const unsigned gen = gen_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == members_) {
            arrived_.store(0, std::memory_order_relaxed);
            gen_.store(gen + 1, std::memory_order_release);
            return;
        }
        for (unsigned spins = 0; gen_.load(std::memory_order_acquire) == gen; ++spins)
            if (spins > 4096) std::this_thread::yield();
    }

    /// The slots of reduction number `k` (alternating buffers). Sized once by reserve() before the members
    /// start (a resize here could race with another member's read).
    double* slots(unsigned k, std::size_t n) {
        std::vector<double>& b = buf_[k & 1u];
        if (b.size() < n) std::abort(); // reserve(tiles * kMaxSlotsPerTile) was not called
        return b.data();
    }
    /// Room for reductions over `tiles` tiles.
    void reserve(std::size_t tiles) {
        buf_[0].assign(tiles * kMaxSlotsPerTile + 1, 0.0);
        buf_[1].assign(tiles * kMaxSlotsPerTile + 1, 0.0);
    }
    /// The most values one reduction keeps per tile (sums + maxima, or key + index + maxima).
    static constexpr std::size_t kMaxSlotsPerTile = 16;

  private:
    unsigned members_;
    std::atomic<unsigned> arrived_{0};
    std::atomic<unsigned> gen_{0};
    std::vector<double> buf_[2];
};

/// Coordinates base .. base + W - 1.
struct CoordIdx {
    std::uint32_t base;
};

/// An array of one instance, contiguous; rows `pitch` elements apart (pitch a multiple of W).
/// The CDF that kernels/mechanisms/exponential.hpp's exponential_mechanism forms on a one-lane or
/// instance-lane team, for scores shared by many instances: cdf[i] = the running sum, in index order, of the
/// positive weights w(i) = exp(-c (s(i) - min s)) (c = inf: 1 on the minimisers, 0 elsewhere), s(i) =
/// score(cum[i]) in double; and cdf[n] = min s (n + 1 values in all: with cdf[n - 1], the log of the total
/// weight exp_mech_log_total needs). The min and the weights are formed W lanes at a time (the same bits as
/// one at a time: vmath is lane-wise), the sum one by one. c > 0.
template <int W, class Score>
void exp_mech_cdf(std::uint32_t n, double c, const double* cum, Score&& score, double* cdf) {
    using D = simd::Pack<double, W>;
    const std::uint32_t nv = n - n % W;
    double m = std::numeric_limits<double>::infinity();
    if (nv >
        0) { // the running minimum first in vmin, as the team's reduction: a NaN score is passed over alike
        D mv(std::numeric_limits<double>::infinity());
        for (std::uint32_t b = 0; b < nv; b += W) mv = vmin(mv, score(D::load(cum + b)));
        m = -simd::reduce_max(-mv);
    }
    for (std::uint32_t i = nv; i < n; ++i) m = vmin(m, score(cum[i]));
    const bool limit = std::isinf(c);
    const D mv(m), negc(-c);
    for (std::uint32_t b = 0; b < nv; b += W) {
        const D s = score(D::load(cum + b));
        (limit ? select(s == mv, D(1.0), D(0.0)) : vexp(negc * (s - mv))).store(cdf + b);
    }
    for (std::uint32_t i = nv; i < n; ++i) {
        const double s = score(cum[i]);
        cdf[i] = limit ? (s == m ? 1.0 : 0.0) : vexp(-c * (s - m));
    }
    double acc = 0.0;
    for (std::uint32_t i = 0; i < n; ++i) {
        if (cdf[i] > 0.0) acc = acc + cdf[i];
        cdf[i] = acc;
    }
    cdf[n] = m;
}

/// The per-round exponential-mechanism CDFs of a chunk, shared by all instances of a point (learners with
/// kSharedDraw on a shared sequence): round t's is computed by the first instance that asks for it (its
/// thread fills it; another thread asking meanwhile waits), so only the rounds in which some instance
/// switches cost an O(d) pass, once for all instances, instead of one per switching instance. A round's values are
/// exp_mech_cdf's d + 1 or, for the exact exponential mechanism, its table (mech::exact_exp_table_size(d)). A learner
/// with a shared scalar (kernels/learners/common.hpp) also gets round t's value, made on first use the same way and
/// independently of the CDF (its rounds may need one without the other).
class SharedCdfCache {
  public:
    /// Writes round r's `size` values from its L_{t-1} row.
    using Fill = void (*)(const void* ctx, const double* cum, std::uint32_t d, double* cdf);
    /// Round r's shared scalar from its L_{t-1} row.
    using ScalarFill = double (*)(const void* ctx, const double* cum, std::uint32_t d);

    void reset(std::uint64_t t0, std::uint64_t n, std::uint32_t d, std::uint64_t size, const double* cum, Fill fill,
               const void* ctx, ScalarFill scalar_fill = nullptr) {
        if (n > state_cap_) {
            state_.reset(new std::atomic<int>[n]);
            scalar_state_.reset(new std::atomic<int>[n]);
            scalar_.reset(new double[n]);
            state_cap_ = n;
        }
        if (n * size > buf_cap_) {
            buf_.reset(new double[n * size]);
            buf_cap_ = n * size;
        }
        for (std::uint64_t r = 0; r < n; ++r) {
            state_[r].store(0, std::memory_order_relaxed);
            scalar_state_[r].store(0, std::memory_order_relaxed);
        }
        t0_ = t0;
        d_ = d;
        size_ = size;
        cum_ = cum;
        fill_ = fill;
        scalar_fill_ = scalar_fill;
        ctx_ = ctx;
    }

    const double* get(std::uint64_t t) const {
        const std::uint64_t r = t - t0_;
        double* out = buf_.get() + r * size_;
        once(state_[r], [&] { fill_(ctx_, cum_ + r * d_, d_, out); });
        return out;
    }

    /// Round t's shared scalar, or null when the learner has none.
    const double* scalar(std::uint64_t t) const {
        if (!scalar_fill_) return nullptr;
        const std::uint64_t r = t - t0_;
        double* out = scalar_.get() + r;
        once(scalar_state_[r], [&] { *out = scalar_fill_(ctx_, cum_ + r * d_, d_); });
        return out;
    }

  private:
    /// make() by the first caller of a round (state 0 -> 1 -> 2); the others wait until it is done.
    template <class Make>
    static void once(std::atomic<int>& st, Make&& make) {
        if (st.load(std::memory_order_acquire) == 2) return;
        int idle = 0;
        if (st.compare_exchange_strong(idle, 1, std::memory_order_acq_rel)) {
            make();
            st.store(2, std::memory_order_release);
        } else {
            while (st.load(std::memory_order_acquire) != 2) std::this_thread::yield();
        }
    }

    std::unique_ptr<double[]> buf_;
    std::unique_ptr<std::atomic<int>[]> state_;
    std::unique_ptr<std::atomic<int>[]> scalar_state_;
    std::unique_ptr<double[]> scalar_;
    std::uint64_t buf_cap_ = 0, state_cap_ = 0, t0_ = 0, size_ = 0;
    std::uint32_t d_ = 0;
    const double* cum_ = nullptr;
    Fill fill_ = nullptr;
    ScalarFill scalar_fill_ = nullptr;
    const void* ctx_ = nullptr;
};

template <class T>
struct PackView {
    T* p = nullptr;
    std::uint64_t pitch = 0;
    PackView row(std::uint64_t j) const { return PackView{p + j * pitch, pitch}; }
    T* data() const { return p; }
};

/// Loss row of one round for a CoordTeam: exact doubles and the row in the run's precision, padded to W.
template <class R>
struct PackLossRow {
    const double* exact;
    const R* real;
    const double* cum = nullptr; ///< L_{t-1} (learners with kReadsCumulative), padded like exact
    const SharedCdfCache* cdf =
        nullptr; ///< the point's shared exponential-mechanism CDFs (kSharedDraw), or null
};

template <class R, int W>
struct CoordTeam {
    using real = R;
    template <class T>
    using lanes = simd::Pack<T, W>;
    template <class T>
    using uni = T;
    using index = CoordIdx;
    template <class T>
    using view = PackView<T>;
    using loss_row = PackLossRow<R>;
    static constexpr int kWidth = W;

    RngKey rng{};
    std::uint32_t id = 0;
    TeamGroup* group = nullptr; ///< null: a team of one member
    unsigned member = 0;
    mutable unsigned reductions = 0; ///< counts reductions (selects the slot buffer)

    std::uint32_t rank() const { return member; }
    std::uint32_t size() const { return group ? group->members() : 1u; }
    void sync() const {
        if (group) group->barrier();
    }
    RngKey key() const { return rng; }
    std::uint32_t instance() const { return id; }
    static lanes<std::uint32_t> element(CoordIdx i) { return lanes<std::uint32_t>::iota(i.base); }
    static constexpr std::uint32_t kInstances = 1;
    template <class T>
    static StridedView<T> instance_view(const PackView<T>& v, std::uint32_t) {
        return StridedView<T>{v.p, 1, v.pitch};
    }
    template <class T>
    T broadcast(T x) const {
        if (!group) return x;
        double* s = group->slots(reductions++, 1);
        if (member == 0) s[0] = static_cast<double>(x);
        group->barrier();
        return static_cast<T>(s[0]);
    }

    /// Tiles [first, last) of this member: contiguous ranges, the same split for every n.
    void my_tiles(std::uint32_t n, std::uint32_t& first, std::uint32_t& last) const {
        const std::uint32_t tiles = (n + kTile - 1) / kTile;
        const unsigned m = size();
        first = static_cast<std::uint32_t>(static_cast<std::uint64_t>(tiles) * member / m);
        last = static_cast<std::uint32_t>(static_cast<std::uint64_t>(tiles) * (member + 1) / m);
    }

    template <class F>
    DPR_CPU_LOOP void for_each(std::uint32_t n, F&& f) const {
        std::uint32_t t0, t1;
        my_tiles(n, t0, t1);
        const std::uint32_t end = std::min<std::uint64_t>(n, std::uint64_t{t1} * kTile);
        std::uint32_t b = t0 * kTile;
        for (; b + 2 * W <= end; b += 2 * W) {
            f(CoordIdx{b});
            f(CoordIdx{b + W});
        }
        for (; b < end; b += W) f(CoordIdx{b});
    }

    template <int NS, int NM, class F>
    DPR_CPU_LOOP Reduced<R, NS, NM> reduce(std::uint32_t n, F&& f) const {
        using V = lanes<R>;
        constexpr R ninf = -std::numeric_limits<R>::infinity();
        std::uint32_t t0, t1;
        my_tiles(n, t0, t1);
        const std::uint32_t tiles = (n + kTile - 1) / kTile;
        // One tile and one member: the tile's lane fold is the result. Otherwise every tile's fold goes to a
        // slot and the slots are combined in tile order (starting from tile 0's value, so that both paths
        // give the same bits).
        const bool shared = tiles > 1 || group != nullptr;
        double* slots = shared ? (group ? group->slots(reductions++, std::size_t(tiles) * (NS + NM)) : local_slots(tiles * (NS + NM)))
                               : nullptr;
        Reduced<R, NS, NM> out;
        for (std::uint32_t tile = t0; tile < t1; ++tile) {
            V s[NS > 0 ? NS : 1], m[NM > 0 ? NM : 1];
            for (int k = 0; k < NS; ++k) s[k] = V(R(0));
            for (int k = 0; k < NM; ++k) m[k] = V(ninf);
            const std::uint32_t b0 = tile * kTile;
            const std::uint32_t full = std::min<std::uint64_t>(n, std::uint64_t{b0} + kTile);
            std::uint32_t b = b0;
            // Two packs per step: their bodies are independent chains (an exp is ~25 dependent operations),
            // and having both in one block lets them interleave; they are added in index order, so the sums
            // are those of one pack per step.
            for (; b + 2 * W <= full; b += 2 * W) {
                const Contrib<V, NS, NM> c0 = f(CoordIdx{b});
                const Contrib<V, NS, NM> c1 = f(CoordIdx{b + W});
                for (int k = 0; k < NS; ++k) s[k] = (s[k] + c0.sum[k]) + c1.sum[k];
                for (int k = 0; k < NM; ++k) m[k] = vmax(vmax(m[k], c0.max[k]), c1.max[k]);
            }
            for (; b + W <= full; b += W) {
                const Contrib<V, NS, NM> c = f(CoordIdx{b});
                for (int k = 0; k < NS; ++k) s[k] += c.sum[k];
                for (int k = 0; k < NM; ++k) m[k] = vmax(m[k], c.max[k]);
            }
            if (b < full) { // the last, partial pack: mask the lanes past n
                const auto valid = lanes<std::uint32_t>::iota(b) < lanes<std::uint32_t>(n);
                const Contrib<V, NS, NM> c = f(CoordIdx{b});
                for (int k = 0; k < NS; ++k) s[k] += select(valid, c.sum[k], V(R(0)));
                for (int k = 0; k < NM; ++k) m[k] = vmax(m[k], select(valid, c.max[k], V(ninf)));
            }
            if (!shared) {
                for (int k = 0; k < NS; ++k) out.sum[k] = simd::reduce_sum(s[k]);
                for (int k = 0; k < NM; ++k) out.max[k] = simd::reduce_max(m[k]);
            } else {
                double* sl = slots + std::size_t(tile) * (NS + NM);
                for (int k = 0; k < NS; ++k) sl[k] = simd::reduce_sum(s[k]);
                for (int k = 0; k < NM; ++k) sl[NS + k] = simd::reduce_max(m[k]);
            }
        }
        if (shared && tiles > 0) {
            sync();
            for (int k = 0; k < NS; ++k) out.sum[k] = static_cast<R>(slots[k]);
            for (int k = 0; k < NM; ++k) out.max[k] = static_cast<R>(slots[NS + k]);
            for (std::uint32_t tile = 1; tile < tiles; ++tile) {
                const double* sl = slots + std::size_t(tile) * (NS + NM);
                for (int k = 0; k < NS; ++k) out.sum[k] = out.sum[k] + static_cast<R>(sl[k]);
                for (int k = 0; k < NM; ++k) out.max[k] = vmax(out.max[k], static_cast<R>(sl[NS + k]));
            }
        } else if (tiles == 0) {
            for (int k = 0; k < NS; ++k) out.sum[k] = R(0);
            for (int k = 0; k < NM; ++k) out.max[k] = ninf;
        }
        return out;
    }

    template <int NM, class F>
    DPR_CPU_LOOP ArgReduced<R, std::uint32_t, NM> argmin(std::uint32_t n, F&& f) const {
        using V = lanes<R>;
        constexpr R ninf = -std::numeric_limits<R>::infinity();
        constexpr R nan = std::numeric_limits<R>::quiet_NaN();
        std::uint32_t t0, t1;
        my_tiles(n, t0, t1);
        const std::uint32_t tiles = (n + kTile - 1) / kTile;
        const bool shared = tiles > 1 || group != nullptr;
        double* slots = shared ? (group ? group->slots(reductions++, std::size_t(tiles) * (2 + NM)) : local_slots(tiles * (2 + NM)))
                               : nullptr;
        ArgReduced<R, std::uint32_t, NM> out;
        out.key = nan;
        out.arg = 0;
        for (int k = 0; k < NM; ++k) out.max[k] = ninf;
        for (std::uint32_t tile = t0; tile < t1; ++tile) {
            V key(nan), m[NM > 0 ? NM : 1];
            // Indices in lanes as wide as R's, so that a comparison of keys selects them without converting
            // masks.
            using UA = lanes<std::conditional_t<sizeof(R) == 8, std::uint64_t, std::uint32_t>>;
            using A = typename UA::scalar;
            UA arg(A(0));
            for (int k = 0; k < NM; ++k) m[k] = V(ninf);
            const std::uint32_t b0 = tile * kTile;
            const std::uint32_t end = std::min<std::uint64_t>(n, std::uint64_t{b0} + kTile);
            // Lane-wise: a strictly smaller key (or the first non-NaN one) wins; each lane visits its indices
            // in increasing order, so ties keep the lowest index. Whole packs first, then the last, masked
            // one.
            const auto step = [&](std::uint32_t b, const auto& valid) {
                const ArgContrib<V, NM> c = f(CoordIdx{b});
                const auto better = valid & ((c.key < key) | ((key != key) & (c.key == c.key)));
                key = select(better, c.key, key);
                arg = select(better, UA::iota(A(b)), arg);
                for (int k = 0; k < NM; ++k) m[k] = vmax(m[k], select(valid, c.max[k], V(ninf)));
            };
            const auto all = UA(A(0)) == UA(A(0));
            std::uint32_t b = b0;
            for (; b + W <= end; b += W) step(b, all);
            if (b < end) step(b, UA::iota(A(b)) < UA(A(n)));
            // Across lanes, by halving: the smallest key, ties to the lowest index (lanes hold disjoint
            // indices), a NaN key never wins. The rule picks the same lane in any order; without branches.
            R ka[W];
            A aa[W];
            std::memcpy(ka, key.c, sizeof ka);
            std::memcpy(aa, arg.c, sizeof aa);
            for (int h = W / 2; h >= 1; h /= 2)
                for (int l = 0; l < h; ++l) {
                    const R kb = ka[l + h];
                    const bool b =
                        kb == kb && (ka[l] != ka[l] || kb < ka[l] || (kb == ka[l] && aa[l + h] < aa[l]));
                    ka[l] = b ? kb : ka[l];
                    aa[l] = b ? aa[l + h] : aa[l];
                }
            const R tk = ka[0];
            const std::uint32_t ta = tk == tk ? static_cast<std::uint32_t>(aa[0]) : 0u;
            R tm[NM > 0 ? NM : 1];
            for (int k = 0; k < NM; ++k) tm[k] = simd::reduce_max(m[k]);
            if (!shared) {
                out.key = tk;
                out.arg = ta;
                for (int k = 0; k < NM; ++k) out.max[k] = tm[k];
            } else {
                double* sl = slots + std::size_t(tile) * (2 + NM);
                sl[0] = static_cast<double>(tk);
                sl[1] = static_cast<double>(ta);
                for (int k = 0; k < NM; ++k) sl[2 + k] = static_cast<double>(tm[k]);
            }
        }
        if (shared) {
            sync();
            for (std::uint32_t tile = 0; tile < tiles; ++tile) {
                const double* sl = slots + std::size_t(tile) * (2 + NM);
                const R kl = static_cast<R>(sl[0]);
                if (kl == kl && (out.key != out.key || kl < out.key)) { // tiles in index order: ties keep the first
                    out.key = kl;
                    out.arg = static_cast<std::uint32_t>(sl[1]);
                }
                for (int k = 0; k < NM; ++k) out.max[k] = vmax(out.max[k], static_cast<R>(sl[2 + k]));
            }
        }
        return out;
    }

    /// Inverse CDF: blocks of W weights in index order (a block's sum by halving), then lane by lane inside
    /// the block where the running sum passes `target`. Every member computes it (weights are readable by
    /// all). Weights of type T (R, or double: the target's type).
    template <class F, class T>
    DPR_CPU_LOOP std::uint32_t categorical(std::uint32_t n, F&& f, T target) const {
        using V = lanes<T>;
        using UI = lanes<std::uint32_t>;
        T acc = T(0);
        std::uint32_t last_positive = 0;
        for (std::uint32_t b = 0; b < n; b += W) {
            const V w = select(UI::iota(b) < UI(n), f(CoordIdx{b}), V(T(0)));
            const T bs = simd::reduce_sum(w);
            if (!(target < acc + bs)) {
                acc = acc + bs;
                if (bs > T(0))
                    for (int l = W - 1; l >= 0; --l)
                        if (w[l] > T(0)) {
                            last_positive = b + static_cast<std::uint32_t>(l);
                            break;
                        }
                continue;
            }
            for (int l = 0; l < W; ++l) {
                if (w[l] > T(0)) {
                    last_positive = b + static_cast<std::uint32_t>(l);
                    acc = acc + w[l];
                    if (target < acc) return last_positive;
                }
            }
        }
        return last_positive;
    }

    /// categorical() over double weights at the target u S, S their sum added block by block as the scan adds
    /// it.
    template <class F>
    DPR_CPU_LOOP std::uint32_t categorical_scaled(std::uint32_t n, F&& f, double u) const {
        using D = lanes<double>;
        using UI = lanes<std::uint32_t>;
        double total = 0.0;
        for (std::uint32_t b = 0; b < n; b += W)
            total = total + simd::reduce_sum(select(UI::iota(b) < UI(n), f(CoordIdx{b}), D(0.0)));
        return categorical(n, f, u * total);
    }

    template <class T>
    static DPR_FORCEINLINE lanes<T> load(const PackView<T>& v, CoordIdx i) {
        return lanes<T>::load(v.p + i.base);
    }
    template <class T>
    static DPR_FORCEINLINE void store(const PackView<T>& v, CoordIdx i, lanes<T> x) {
        x.store(v.p + i.base);
    }
    template <class T>
    static DPR_FORCEINLINE T load_at(const PackView<T>& v, std::uint32_t i) {
        return v.p[i];
    }
    template <class T>
    static DPR_FORCEINLINE void store_at(const PackView<T>& v, std::uint32_t i, T x) {
        v.p[i] = x;
    }
    static DPR_FORCEINLINE double get(const PackView<double>& s, int j) { return s.p[j]; }
    static DPR_FORCEINLINE void put(const PackView<double>& s, int j, double x) { s.p[j] = x; }

    static DPR_FORCEINLINE lanes<R> loss(const loss_row& l, CoordIdx i) { return lanes<R>::load(l.real + i.base); }
    static DPR_FORCEINLINE lanes<double> loss_exact(const loss_row& l, CoordIdx i) {
        return lanes<double>::load(l.exact + i.base);
    }
    static DPR_FORCEINLINE double loss_exact_at(const loss_row& l, std::uint32_t i) { return l.exact[i]; }
    static DPR_FORCEINLINE lanes<double> cum_exact(const loss_row& l, CoordIdx i) { return lanes<double>::load(l.cum + i.base); }
    static DPR_FORCEINLINE double cum_exact_at(const loss_row& l, std::uint32_t i) { return l.cum[i]; }

  private:
    double* local_slots(std::size_t n) const {
        thread_local std::vector<double> buf;
        if (buf.size() < n) buf.resize(n);
        return buf.data();
    }
};

// ---- instance lanes ---------------------------------------------------------------------------------------

/// An array of a group of W instances, interleaved: element e of lane l at p[e W + l]; rows `pitch`
/// elements apart.
template <class T, int W>
struct GroupView {
    T* p = nullptr;
    std::uint64_t pitch = 0;
    GroupView row(std::uint64_t j) const { return GroupView{p + j * pitch * W, pitch}; }
};

/// A round's loss rows for a group: shared by the lanes (one row) or one row per lane, interleaved.
template <class R, bool PerLane>
struct GroupLossRow {
    const double* exact;
    const R* real;
    const double* cum = nullptr; ///< L_{t-1} (learners with kReadsCumulative), laid out like exact
    const SharedCdfCache* cdf =
        nullptr; ///< the point's shared exponential-mechanism CDFs (kSharedDraw), or null
};

/// Round t's shared CDF from a CPU loss row (kernels/core/team.hpp shared_cdf_of), prepared on first use.
template <class R>
const double* shared_cdf_of(const PackLossRow<R>& row, std::uint64_t t) {
    return row.cdf ? row.cdf->get(t) : nullptr;
}
template <class R, bool P>
const double* shared_cdf_of(const GroupLossRow<R, P>& row, std::uint64_t t) {
    return row.cdf ? row.cdf->get(t) : nullptr;
}
/// Round t's shared scalar from a CPU loss row (kernels/core/team.hpp shared_scalar_of), made on first use.
template <class R>
const double* shared_scalar_of(const PackLossRow<R>& row, std::uint64_t t) {
    return row.cdf ? row.cdf->scalar(t) : nullptr;
}
template <class R, bool P>
const double* shared_scalar_of(const GroupLossRow<R, P>& row, std::uint64_t t) {
    return row.cdf ? row.cdf->scalar(t) : nullptr;
}

template <class R, int W, bool PerLaneRows = false>
struct InstanceTeam {
    using real = R;
    template <class T>
    using lanes = simd::Pack<T, W>;
    template <class T>
    using uni = simd::Pack<T, W>;
    using index = std::uint32_t;
    template <class T>
    using view = GroupView<T, W>;
    using loss_row = GroupLossRow<R, PerLaneRows>;
    static constexpr int kWidth = W;

    RngKey rng{};
    lanes<std::uint32_t> ids; ///< the group's instances

    static constexpr std::uint32_t rank() { return 0; }
    static constexpr std::uint32_t size() { return 1; }
    static void sync() {}
    RngKey key() const { return rng; }
    lanes<std::uint32_t> instance() const { return ids; }
    static lanes<std::uint32_t> element(std::uint32_t i) { return lanes<std::uint32_t>(i); }
    static constexpr std::uint32_t kInstances = W;
    template <class T>
    static StridedView<T> instance_view(const GroupView<T, W>& v, std::uint32_t j) {
        return StridedView<T>{v.p + j, W, v.pitch};
    }
    template <class T>
    static T broadcast(T x) {
        return x;
    }

    template <class F>
    DPR_CPU_LOOP void for_each(std::uint32_t n, F&& f) const {
        for (std::uint32_t i = 0; i < n; ++i) f(i);
    }

    template <int NS, int NM, class F>
    DPR_FORCEINLINE Reduced<lanes<R>, NS, NM> reduce(std::uint32_t n, F&& f) const {
        return Reduced<lanes<R>, NS, NM>::in_order(n, f);
    }

    template <int NM, class F>
    DPR_CPU_LOOP ArgReduced<lanes<R>, lanes<std::uint32_t>, NM> argmin(std::uint32_t n, F&& f) const {
        using V = lanes<R>;
        using UI = lanes<std::uint32_t>;
        ArgReduced<V, UI, NM> acc;
        acc.key = V(std::numeric_limits<R>::quiet_NaN());
        acc.arg = UI(0u);
        for (int k = 0; k < NM; ++k) acc.max[k] = V(-std::numeric_limits<R>::infinity());
        for (std::uint32_t i = 0; i < n; ++i) {
            const ArgContrib<V, NM> c = f(i);
            const auto better = (c.key < acc.key) | ((acc.key != acc.key) & (c.key == c.key));
            acc.key = select(better, c.key, acc.key);
            acc.arg = select(better, UI(i), acc.arg);
            for (int k = 0; k < NM; ++k) acc.max[k] = vmax(acc.max[k], c.max[k]);
        }
        return acc;
    }

    /// Inverse CDF lane by lane (each lane scans its own weights in index order, as SerialTeam does).
    template <class F, class T>
    DPR_CPU_LOOP lanes<std::uint32_t> categorical(std::uint32_t n, F&& f, lanes<T> target) const {
        using V = lanes<T>;
        using UI = lanes<std::uint32_t>;
        V acc(T(0));
        UI last_positive(0u), found(0u);
        auto done = !(V(T(0)) == V(T(0))); // all false
        for (std::uint32_t i = 0; i < n; ++i) {
            const V w = f(i);
            const auto pos = (w > V(T(0))) & !done;
            last_positive = select(pos, UI(i), last_positive);
            acc = select(pos, acc + w, acc);
            const auto hit = pos & (target < acc);
            found = select(hit, UI(i), found);
            done = done | hit;
            if (all(done)) break;
        }
        return select(done, found, last_positive);
    }

    /// categorical() over double weights at the target u S, S the sum of each lane's positive weights in
    /// index order (what SerialTeam::categorical_scaled computes for its instance).
    template <class F>
    DPR_CPU_LOOP lanes<std::uint32_t> categorical_scaled(std::uint32_t n, F&& f, lanes<double> u) const {
        using D = lanes<double>;
        D total(0.0);
        for (std::uint32_t i = 0; i < n; ++i) {
            const D w = f(i);
            total = select(w > D(0.0), total + w, total);
        }
        return categorical(n, f, u * total);
    }

    template <class T>
    static DPR_FORCEINLINE lanes<T> load(const GroupView<T, W>& v, std::uint32_t i) {
        return lanes<T>::load(v.p + std::uint64_t{i} * W);
    }
    template <class T>
    static DPR_FORCEINLINE void store(const GroupView<T, W>& v, std::uint32_t i, lanes<T> x) {
        x.store(v.p + std::uint64_t{i} * W);
    }
    template <class T>
    static DPR_FORCEINLINE lanes<T> load_at(const GroupView<T, W>& v, lanes<std::uint32_t> i) {
        lanes<T> r;
        for (int l = 0; l < W; ++l) r.set(l, v.p[std::uint64_t{i[l]} * W + l]);
        return r;
    }
    template <class T>
    static DPR_FORCEINLINE void store_at(const GroupView<T, W>& v, lanes<std::uint32_t> i, lanes<T> x) {
        for (int l = 0; l < W; ++l) v.p[std::uint64_t{i[l]} * W + l] = x[l];
    }
    static DPR_FORCEINLINE lanes<double> get(const GroupView<double, W>& s, int j) {
        return lanes<double>::load(s.p + std::uint64_t(j) * W);
    }
    static DPR_FORCEINLINE void put(const GroupView<double, W>& s, int j, lanes<double> x) {
        x.store(s.p + std::uint64_t(j) * W);
    }

    static DPR_FORCEINLINE lanes<R> loss(const loss_row& l, std::uint32_t i) {
        if constexpr (PerLaneRows)
            return lanes<R>::load(l.real + std::uint64_t{i} * W);
        else
            return lanes<R>(l.real[i]);
    }
    static DPR_FORCEINLINE lanes<double> loss_exact(const loss_row& l, std::uint32_t i) {
        if constexpr (PerLaneRows)
            return lanes<double>::load(l.exact + std::uint64_t{i} * W);
        else
            return lanes<double>(l.exact[i]);
    }
    static DPR_FORCEINLINE lanes<double> cum_exact(const loss_row& l, std::uint32_t i) {
        if constexpr (PerLaneRows)
            return lanes<double>::load(l.cum + std::uint64_t{i} * W);
        else
            return lanes<double>(l.cum[i]);
    }
    static DPR_FORCEINLINE lanes<double> cum_exact_at(const loss_row& l, lanes<std::uint32_t> i) {
        lanes<double> r;
        for (int k = 0; k < W; ++k) r.set(k, PerLaneRows ? l.cum[std::uint64_t{i[k]} * W + k] : l.cum[i[k]]);
        return r;
    }
    static DPR_FORCEINLINE lanes<double> loss_exact_at(const loss_row& l, lanes<std::uint32_t> i) {
        lanes<double> r;
        for (int k = 0; k < W; ++k)
            r.set(k, PerLaneRows ? l.exact[std::uint64_t{i[k]} * W + k] : l.exact[i[k]]);
        return r;
    }
};

} // namespace dpr::cpu
