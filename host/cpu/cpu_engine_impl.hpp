#pragma once
// The CPU executor's kernels, compiled once per instruction set and part of the registry: the units generated
// from host/cpu/cpu_isa_unit.cpp.in include this file with `dpr` renamed (#define dpr dpr_isa_<name>) and
// their own -march, so every function here and every kernels/ template it instantiates is private to that ISA
// (see host/cpu/cpu_isa.hpp for why; nothing from the standard library that another translation unit could
// also instantiate is used here: own buffers, raw arrays, std::thread). Every learner of a unit's part is
// instantiated for both precisions and both lane layouts (host/cpu/cpu_teams.hpp):
//
//   instance lanes    W instances per SIMD group, coordinates in order: each lane computes exactly what the
//                     serial oracle computes for its instance. For small d (lane-safe learners,
//                     L::kInstanceLanes), where per-round fixed costs would dominate.
//   coordinate lanes  W coordinates per SIMD step, tiles of kTile coordinates; a point with fewer instances
//                     than threads and a large d shares each instance between all threads (tiles split
//                     between them), with the same bits for any thread count.
// Results depend only on (config, instance id, layout, precision): never on threads, ISA, chunking or which
// other instances run beside an instance.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <thread>

#include "host/backend/own_rows.hpp"
#include "host/cpu/cpu_isa.hpp"
#include "host/cpu/parallel.hpp"
#include "host/cpu/cpu_teams.hpp"
#include "kernels/core/type_list.hpp"
#include "kernels/learners/common.hpp"
#include "kernels/core/vmath.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/mechanisms/exact_exponential.hpp"
#include "kernels/noise/lane_noise.hpp"
#include "kernels/rng/lanes.hpp"
#include "kernels/sim/instance_loop.hpp"

#ifndef DPR_CPU_ISA_NAME
#error "define DPR_CPU_ISA_NAME before including cpu_engine_impl.hpp"
#endif

namespace dpr::cpu {

/// Lanes per SIMD step (a pack of 16 is one zmm of floats, two of doubles).
inline constexpr int kLanes = 16;
/// d at or below which a lane-safe learner runs with instance lanes by default (the layout is a function of
/// the learner, d and whether the sequence is shared, so results never depend on the instance count;
/// docs/RANDOMNESS.md). Learners with kSharedDraw take instance lanes at any d on a shared sequence.
inline constexpr std::uint32_t kInstanceLanesMaxD = 128;
/// A point with fewer instances than threads shares each instance between the threads from this d on.
inline constexpr std::uint32_t kShareInstanceMinD = 2 * kTile;

inline std::uint64_t round_up(std::uint64_t n, std::uint64_t m) { return (n + m - 1) / m * m; }

/// Rounds per slice of a chunk when a round's rows take `row_bytes`: the slice's rows fit in ~640 KiB, so that
/// with one instance's state beside them they stay in a 1 MiB L2 (this machine's; docs/BENCHMARKS.md) and the
/// instances of a thread's share read them from cache, not from L3; each instance's state is then reloaded
/// once per slice, not once per round. Measured (docs/BENCHMARKS.md): hedge at d = 16384, 238 instances,
/// 1.6e9 -> 2.3-2.9e9 expert-rounds/s against 256 KiB (1-round slices); other shapes unchanged within noise.
inline std::uint64_t slice_rounds(std::uint64_t row_bytes) {
    const std::uint64_t s = (std::uint64_t{640} << 10) / (row_bytes ? row_bytes : 1);
    return s < 1 ? 1 : s;
}

/// Zero-initialised, 64-byte-aligned storage of n elements (trivial types).
template <class T>
class Buffer {
  public:
    Buffer() = default;
    explicit Buffer(std::uint64_t n) { reset(n); }
    ~Buffer() { release(); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    void reset(std::uint64_t n) {
        release();
        n_ = n;
        if (n) {
            p_ = static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64}));
            std::memset(static_cast<void*>(p_), 0, n * sizeof(T));
        }
    }
    /// At least n elements (contents unspecified when it grows).
    void reserve(std::uint64_t n) {
        if (n > n_) reset(n);
    }
    T* data() const { return p_; }
    T& operator[](std::uint64_t i) const { return p_[i]; }

  private:
    void release() {
        if (p_) ::operator delete(p_, std::align_val_t{64});
        p_ = nullptr;
        n_ = 0;
    }
    std::uint64_t n_ = 0;
    T* p_ = nullptr;
};

/// Per-thread scratch of an engine (grows, never shrinks).
template <class R>
struct ThreadScratch {
    Buffer<double> exact;
    Buffer<R> real;
    Buffer<double> row;
    Buffer<double> cum; ///< per-instance L_{t-1} rows (learners with kReadsCumulative)
};

/// Common to both layouts: the arguments, results, and per-instance sequences with their comparators.
template <class L>
class EngineBase : public dpr_cpu_boundary::IsaEngine {
  public:
    EngineBase(const typename L::Params& p, const dpr_cpu_boundary::IsaEngineArgs& a)
        : p_(p), a_(a), nck_(a.ncheck), uncharged_{a.uncharged_first, a.uncharged_period, a.uncharged_last},
          checkpoints_(a.ncheck), expected_(std::uint64_t{a.instances} * a.ncheck),
          realized_(std::uint64_t{a.instances} * a.ncheck) {
        for (std::uint32_t c = 0; c < nck_; ++c) checkpoints_[c] = a.checkpoints[c];
        a_.checkpoints = checkpoints_.data();
        if (a_.fill) {
            Lcmp_.reset(std::uint64_t{a.instances} * a.d);
            cmp_.reset(std::uint64_t{a.instances} * nck_);
            next_cmp_.reset(a.instances);
        }
    }
    const char* policy() const override { return policy_; }

  protected:
    /// The learner reads L_{t-1} (team.cum_exact): rows come with their prefix sums.
    static constexpr bool kCum = learners::ReadsCumulative<L>::value;
    /// The learner draws from a per-round CDF shared by the instances when it is given one (row.cdf).
    static constexpr bool kSharedDraw = learners::SharedDraw<L>::value;
    RngKey key() const { return RngKey{a_.seed, a_.stream}; }

    /// Instance k's own rows t0..t1-1 into out[(t - t0) * pitch + i * stride] (stride 1, or W when
    /// interleaving a group), recording its comparator at the checkpoints; with `cum`, also its L_{t-1} rows
    /// (the running sum kept for the comparator, before round t) in the same layout.
    void own_rows(std::uint64_t k, std::uint64_t t0, std::uint64_t t1, double* out, std::uint64_t pitch,
                  std::uint64_t stride, double* row, double* cum = nullptr) {
        const std::uint32_t d = a_.d;
        const std::uint32_t seq = static_cast<std::uint32_t>(a_.first_instance + k);
        dpr::own_rows([&](std::uint64_t t, double* r) { a_.fill(a_.adversary_ctx, seq, t, r); },
                      [&](const double* sums) { return a_.comparator(a_.adversary_ctx, sums, d); }, d, t0, t1, out, pitch,
                      stride, row, cum,
                      OwnSequenceState{Lcmp_.data() + k * d, &next_cmp_[k], cmp_.data() + k * nck_, a_.checkpoints, nck_});
    }

    /// Learners with kSharedDraw on a shared sequence (L::shares_draw(p) true): the chunk's per-round CDFs of
    /// their exponential mechanism from its L_{t-1} rows `cum` (d per round), each made on first use for all
    /// instances (cpu::SharedCdfCache); shared_cdf() is what the rows carry, null when there is none. With an exact
    /// plan (L::shared_exact_plan), the round's table of the exact mechanism over the double scores instead. A learner
    /// with a shared scalar (L::shared_scalar) also gets its per-round value, made on first use.
    template <class R>
    void prepare_shared_cdf(std::uint64_t t0, std::uint64_t n, const double* cum) {
        cdf_on_ = false;
        if constexpr (kSharedDraw) {
            if (!cum || n == 0 || !L::shares_draw(p_)) return;
            SharedCdfCache::ScalarFill scalar_fill = nullptr;
            if constexpr (learners::SharedScalar<L>::value)
                scalar_fill = [](const void* ctx, const double* c, std::uint32_t d) {
                    return L::shared_scalar(*static_cast<const typename L::Params*>(ctx), c, d);
                };
            if (L::shared_exact_plan(p_))
                cdf_.reset(
                    t0, n, a_.d, mech::exact_exp_table_size(a_.d), cum,
                    [](const void* ctx, const double* c, std::uint32_t d, double* out) {
                        const auto& p = *static_cast<const typename L::Params*>(ctx);
                        mech::exact_exp_table(
                            *L::shared_exact_plan(p), d,
                            [&](std::uint32_t i) { return L::template shared_score<double>(p, c[i]); }, out);
                    },
                    &p_, scalar_fill);
            else
                cdf_.reset(
                    t0, n, a_.d, std::uint64_t{a_.d} + 1, cum,
                    [](const void* ctx, const double* c, std::uint32_t d, double* out) {
                        const auto& p = *static_cast<const typename L::Params*>(ctx);
                        exp_mech_cdf<kLanes>(
                            d, L::shared_coefficient(p), c,
                            [&](auto x) { return L::template shared_score<R>(p, x); }, out);
                    },
                    &p_, scalar_fill);
            cdf_on_ = true;
        }
    }
    const SharedCdfCache* shared_cdf() const { return cdf_on_ ? &cdf_ : nullptr; }

    void read_common(double* expected, double* realized, double* comparators) const {
        const std::uint64_t n = std::uint64_t{a_.instances} * nck_;
        std::memcpy(expected, expected_.data(), n * sizeof(double));
        std::memcpy(realized, realized_.data(), n * sizeof(double));
        if (a_.fill && comparators) std::memcpy(comparators, cmp_.data(), n * sizeof(double));
    }

    typename L::Params p_;
    dpr_cpu_boundary::IsaEngineArgs a_;
    std::uint32_t nck_;
    sim::UnchargedRounds uncharged_; ///< the IsaEngineArgs' uncharged rounds, as the kernels' type
    Buffer<std::uint64_t> checkpoints_;
    Buffer<double> expected_, realized_;
    Buffer<double> Lcmp_, cmp_;
    Buffer<std::uint32_t> next_cmp_;
    SharedCdfCache cdf_;
    bool cdf_on_ = false;
    char policy_[256] = {};
};

/// Shared rows in precision R: the double rows themselves when R is double, else converted into `buf`.
template <class R>
const R* rows_in(const double* rows, std::uint64_t count, Buffer<R>& buf) {
    if constexpr (std::is_same<R, double>::value) {
        return rows;
    } else {
        buf.reserve(count);
        for (std::uint64_t j = 0; j < count; ++j) buf[j] = static_cast<R>(rows[j]);
        return buf.data();
    }
}

// ---- coordinate lanes ---------------------------------------------------------------------------------------

template <class L, class R>
class CoordEngine final : public EngineBase<L> {
    static constexpr int W = kLanes;
    using Team = CoordTeam<R, W>;
    using Totals = sim::InstanceTotals<double, std::uint64_t>;
    using WS = Workspace<PackView<double>, PackView<R>, PackView<double>>;
    using Base = EngineBase<L>;
    using Base::a_, Base::kCum, Base::nck_, Base::p_, Base::uncharged_;

  public:
    CoordEngine(const typename L::Params& p, const dpr_cpu_boundary::IsaEngineArgs& args) : Base(p, args), spec_(L::workspace(p)) {
        nd_ = spec_.elements(false, W);
        nr_ = spec_.elements(true, W);
        ns_ = static_cast<std::uint64_t>(spec_.n_scalars);
        dbl_.reset(std::uint64_t{a_.instances} * nd_);
        real_.reset(std::uint64_t{a_.instances} * nr_);
        scal_.reset(std::uint64_t{a_.instances} * ns_);
        totals_.reset(a_.instances);
        for (std::uint64_t k = 0; k < a_.instances; ++k) new (&totals_[k]) Totals();
        scratch_.reset(a_.threads);
        for (unsigned t = 0; t < a_.threads; ++t) new (&scratch_[t]) ThreadScratch<R>();
        // Fewer instances than threads and a large d: every thread works on every instance (its tiles).
        share_ = !a_.fill && a_.threads > 1 && a_.instances < a_.threads && a_.d >= kShareInstanceMinD;
        parallel_for(a_.instances, a_.threads, [&](std::uint64_t k, unsigned) {
            L::init(p_, make_team(k, nullptr, 0), workspace(k));
        }, 16);
        std::snprintf(this->policy_, sizeof this->policy_,
                      "cpu %s, %s: coordinate lanes (%d coordinates per SIMD step, tiles of %u), %s %u threads",
                      DPR_CPU_ISA_NAME, sizeof(R) == 4 ? "float" : "double", W, kTile,
                      share_ ? "each instance shared by" : "instances over", a_.threads);
    }
    ~CoordEngine() override {
        for (unsigned t = 0; t < a_.threads; ++t) scratch_[t].~ThreadScratch<R>();
    }

    void advance(std::uint64_t t0, std::uint64_t t1, const double* rows, const double* cum) override {
        const std::uint64_t pitch = round_up(a_.d, W);
        const std::uint64_t n = t1 - t0;
        const double* cu = nullptr;
        if (rows && pitch == a_.d) {
            // Rows of a multiple of W numbers need no padding: read them where they lie (valid during
            // advance()).
            ex_ = rows;
            re_ = rows_in<R>(rows, n * pitch, real_rows_);
            cu = cum;
        } else if (rows) {
            exact_.reserve(n * pitch);
            real_rows_.reserve(n * pitch);
            for (std::uint64_t r = 0; r < n; ++r)
                for (std::uint32_t i = 0; i < a_.d; ++i) {
                    exact_[r * pitch + i] = rows[r * a_.d + i];
                    real_rows_[r * pitch + i] = static_cast<R>(rows[r * a_.d + i]);
                }
            if (cum) {
                cum_.reserve(n * pitch);
                for (std::uint64_t r = 0; r < n; ++r)
                    for (std::uint32_t i = 0; i < a_.d; ++i) cum_[r * pitch + i] = cum[r * a_.d + i];
            }
            ex_ = exact_.data();
            re_ = real_rows_.data();
            cu = cum ? cum_.data() : nullptr;
        }
        this->template prepare_shared_cdf<R>(t0, n, rows ? cum : nullptr);
        if (share_) return advance_shared(t0, t1, pitch, cu);
        if (!rows) {
            parallel_for(a_.instances, a_.threads, [&](std::uint64_t k, unsigned tid) {
                ThreadScratch<R>& o = scratch_[tid];
                o.exact.reserve(n * pitch);
                o.real.reserve(n * pitch);
                o.row.reserve(a_.d);
                if (kCum) o.cum.reserve(n * pitch);
                this->own_rows(k, t0, t1, o.exact.data(), pitch, 1, o.row.data(), kCum ? o.cum.data() : nullptr);
                for (std::uint64_t j = 0; j < n * pitch; ++j) o.real[j] = static_cast<R>(o.exact[j]);
                run(make_team(k, nullptr, 0), k, t0, t1, o.exact.data(), o.real.data(), pitch,
                    kCum ? o.cum.data() : nullptr);
            }, 1);
            return;
        }
        // Shared rows: each thread runs a fixed share of the instances over slices of the chunk's rounds small
        // enough for the slice's rows to stay in the core's cache while every instance of the share reads them.
        const std::uint64_t slice = slice_rounds(pitch * (sizeof(double) + sizeof(R)));
        parallel_for(a_.threads, a_.threads, [&](std::uint64_t j, unsigned) {
            const std::uint64_t k0 = a_.instances * j / a_.threads, k1 = a_.instances * (j + 1) / a_.threads;
            for (std::uint64_t s0 = t0; s0 < t1; s0 += slice) {
                const std::uint64_t s1 = s0 + slice < t1 ? s0 + slice : t1;
                for (std::uint64_t k = k0; k < k1; ++k)
                    run(make_team(k, nullptr, 0), k, s0, s1, ex_ + (s0 - t0) * pitch, re_ + (s0 - t0) * pitch,
                        pitch, cu ? cu + (s0 - t0) * pitch : nullptr);
            }
        }, 1);
    }

    void read(double* expected, double* realized, double* comparators, double* diagnostics,
              std::uint64_t* first_nonfinite) const override {
        this->read_common(expected, realized, comparators);
        constexpr std::size_t nd = learners::DiagnosticCount<L>::value;
        if constexpr (nd > 0)
            for (std::uint64_t k = 0; k < a_.instances; ++k) L::diagnostics(p_, scal_.data() + k * ns_, diagnostics + k * nd);
        for (std::uint64_t k = 0; k < a_.instances; ++k) first_nonfinite[k] = totals_[k].first_nonfinite_round;
    }

  private:
    Team make_team(std::uint64_t k, TeamGroup* g, unsigned member) const {
        Team t;
        t.rng = this->key();
        t.id = static_cast<std::uint32_t>(a_.first_instance + k);
        t.group = g;
        t.member = member;
        return t;
    }

    WS workspace(std::uint64_t k) const {
        WS ws{};
        double* d = dbl_.data() + k * nd_;
        for (int a = 0; a < spec_.n_dbl; ++a) {
            const std::uint64_t pitch = round_up(spec_.dbl[a].cols, W);
            ws.dbl[a] = PackView<double>{d, pitch};
            d += spec_.dbl[a].rows * pitch;
        }
        R* r = real_.data() + k * nr_;
        for (int a = 0; a < spec_.n_real; ++a) {
            const std::uint64_t pitch = round_up(spec_.real[a].cols, W);
            ws.real[a] = PackView<R>{r, pitch};
            r += spec_.real[a].rows * pitch;
        }
        ws.scalars = PackView<double>{scal_.data() + k * ns_, ns_};
        return ws;
    }

    void run(const Team& team, std::uint64_t k, std::uint64_t t0, std::uint64_t t1, const double* ex, const R* re,
             std::uint64_t pitch, const double* cu) {
        const WS ws = workspace(k);
        double* oe = this->expected_.data() + k * nck_;
        double* orr = this->realized_.data() + k * nck_;
        // Members of a shared instance each advance a copy of its totals (they compute the same values); rank 0
        // writes it back.
        Totals acc = totals_[k];
        sim::advance<L>(
            p_, team, ws, acc, t0, t1,
            [&](std::uint64_t t) {
                return PackLossRow<R>{ex + (t - t0) * pitch, re + (t - t0) * pitch,
                                      cu ? cu + (t - t0) * pitch : nullptr, this->shared_cdf()};
            },
            a_.checkpoints, nck_, uncharged_,
            [&](std::uint32_t c, double e, double r) {
                if (team.rank() == 0) {
                    oe[c] = e;
                    orr[c] = r;
                }
            });
        if (team.rank() == 0) totals_[k] = acc;
    }

    /// Every thread works on every instance, each on its own tiles (shared sequences only).
    void advance_shared(std::uint64_t t0, std::uint64_t t1, std::uint64_t pitch, const double* cu) {
        TeamGroup group(a_.threads);
        group.reserve((a_.d + kTile - 1) / kTile);
        parallel_for(a_.threads, a_.threads, [&](std::uint64_t member, unsigned) {
            for (std::uint64_t k = 0; k < a_.instances; ++k)
                run(make_team(k, &group, static_cast<unsigned>(member)), k, t0, t1, ex_, re_, pitch, cu);
        }, 1);
    }

    WorkspaceSpec spec_;
    std::uint64_t nd_ = 0, nr_ = 0, ns_ = 0;
    Buffer<double> dbl_;
    Buffer<R> real_;
    Buffer<double> scal_;
    Buffer<Totals> totals_;
    Buffer<double> exact_;
    Buffer<R> real_rows_;
    const double* ex_ = nullptr; ///< this chunk's shared rows: exact_, or the caller's rows
    const R* re_ = nullptr; ///< the same in precision R: real_rows_, or the caller's rows when R is double
    Buffer<double> cum_;
    Buffer<ThreadScratch<R>> scratch_;
    bool share_ = false;
};

// ---- instance lanes -----------------------------------------------------------------------------------------

template <class L, class R, bool PerLane>
class GroupEngine final : public EngineBase<L> {
    static constexpr int W = kLanes;
    using Team = InstanceTeam<R, W, PerLane>;
    using D = simd::Pack<double, W>;
    using Q = simd::Pack<std::uint64_t, W>;
    using Totals = sim::InstanceTotals<D, Q>;
    using WS = Workspace<GroupView<double, W>, GroupView<R, W>, GroupView<double, W>>;
    using Base = EngineBase<L>;
    using Base::a_, Base::kCum, Base::nck_, Base::p_, Base::uncharged_;

  public:
    GroupEngine(const typename L::Params& p, const dpr_cpu_boundary::IsaEngineArgs& args) : Base(p, args), spec_(L::workspace(p)) {
        groups_ = (std::uint64_t{a_.instances} + W - 1) / W;
        nd_ = spec_.elements(false, 1) * W;
        nr_ = spec_.elements(true, 1) * W;
        ns_ = static_cast<std::uint64_t>(spec_.n_scalars) * W;
        dbl_.reset(groups_ * nd_);
        real_.reset(groups_ * nr_);
        scal_.reset(groups_ * ns_);
        totals_.reset(groups_);
        for (std::uint64_t g = 0; g < groups_; ++g) new (&totals_[g]) Totals();
        scratch_.reset(a_.threads);
        for (unsigned t = 0; t < a_.threads; ++t) new (&scratch_[t]) ThreadScratch<R>();
        parallel_for(groups_, a_.threads, [&](std::uint64_t g, unsigned) { L::init(p_, make_team(g), workspace(g)); }, 4);
        std::snprintf(this->policy_, sizeof this->policy_,
                      "cpu %s, %s: instance lanes (%d instances per SIMD step), groups over %u threads",
                      DPR_CPU_ISA_NAME, sizeof(R) == 4 ? "float" : "double", W, a_.threads);
    }
    ~GroupEngine() override {
        for (unsigned t = 0; t < a_.threads; ++t) scratch_[t].~ThreadScratch<R>();
    }

    void advance(std::uint64_t t0, std::uint64_t t1, const double* rows, const double* cum) override {
        const std::uint32_t d = a_.d;
        const std::uint64_t n = t1 - t0;
        if (rows) { // read where they lie (valid during advance()); precision R converted once
            ex_ = rows;
            re_ = rows_in<R>(rows, n * d, real_rows_);
        }
        this->template prepare_shared_cdf<R>(t0, n, rows ? cum : nullptr);
        if constexpr (PerLane) {
            parallel_for(groups_, a_.threads, [&](std::uint64_t g, unsigned tid) {
                ThreadScratch<R>& o = scratch_[tid];
                const std::uint64_t pitch = std::uint64_t{d} * W;
                o.exact.reserve(n * pitch);
                o.real.reserve(n * pitch);
                o.row.reserve(d);
                std::memset(static_cast<void*>(o.exact.data()), 0, sizeof(double) * n * pitch);
                if (kCum) {
                    o.cum.reserve(n * pitch);
                    std::memset(static_cast<void*>(o.cum.data()), 0, sizeof(double) * n * pitch);
                }
                for (int l = 0; l < W; ++l) {
                    const std::uint64_t k = g * W + l;
                    if (k < a_.instances)
                        this->own_rows(k, t0, t1, o.exact.data() + l, pitch, W, o.row.data(),
                                       kCum ? o.cum.data() + l : nullptr);
                }
                for (std::uint64_t j = 0; j < n * pitch; ++j) o.real[j] = static_cast<R>(o.exact[j]);
                run(g, t0, t1, o.exact.data(), o.real.data(), pitch, kCum ? o.cum.data() : nullptr);
            }, 1);
        } else {
            // As CoordEngine: fixed shares of the groups over cache-sized slices of the chunk's rounds.
            const std::uint64_t slice = slice_rounds(std::uint64_t{d} * (sizeof(double) + sizeof(R)));
            parallel_for(a_.threads, a_.threads, [&](std::uint64_t j, unsigned) {
                const std::uint64_t g0 = groups_ * j / a_.threads, g1 = groups_ * (j + 1) / a_.threads;
                for (std::uint64_t s0 = t0; s0 < t1; s0 += slice) {
                    const std::uint64_t s1 = s0 + slice < t1 ? s0 + slice : t1;
                    for (std::uint64_t g = g0; g < g1; ++g)
                        run(g, s0, s1, ex_ + (s0 - t0) * d, re_ + (s0 - t0) * d, d,
                            cum ? cum + (s0 - t0) * d : nullptr); // the caller's rows: valid during advance()
                }
            }, 1);
        }
    }

    void read(double* expected, double* realized, double* comparators, double* diagnostics,
              std::uint64_t* first_nonfinite) const override {
        this->read_common(expected, realized, comparators);
        constexpr std::size_t nd = learners::DiagnosticCount<L>::value;
        if constexpr (nd > 0) {
            double sc[64];
            for (std::uint64_t k = 0; k < a_.instances; ++k) {
                const double* g = scal_.data() + (k / W) * ns_;
                for (int j = 0; j < spec_.n_scalars && j < 64; ++j) sc[j] = g[std::uint64_t(j) * W + k % W];
                L::diagnostics(p_, sc, diagnostics + k * nd);
            }
        }
        for (std::uint64_t k = 0; k < a_.instances; ++k) first_nonfinite[k] = totals_[k / W].first_nonfinite_round[k % W];
    }

  private:
    /// Rounds [t0, t1) of group g with rows at ex/re (row t at (t - t0) * pitch).
    void run(std::uint64_t g, std::uint64_t t0, std::uint64_t t1, const double* ex, const R* re, std::uint64_t pitch,
             const double* cu) {
        const Team team = make_team(g);
        const WS ws = workspace(g);
        sim::advance<L>(
            p_, team, ws, totals_[g], t0, t1,
            [&](std::uint64_t t) {
                return GroupLossRow<R, PerLane>{ex + (t - t0) * pitch, re + (t - t0) * pitch,
                                                cu ? cu + (t - t0) * pitch : nullptr, this->shared_cdf()};
            },
            a_.checkpoints, nck_, uncharged_,
            [&](std::uint32_t c, const D& e, const D& r) {
                for (int l = 0; l < W; ++l) {
                    const std::uint64_t k = g * W + l;
                    if (k >= a_.instances) break;
                    this->expected_[k * nck_ + c] = e[l];
                    this->realized_[k * nck_ + c] = r[l];
                }
            });
    }

    Team make_team(std::uint64_t g) const {
        Team t;
        t.rng = this->key();
        t.ids = simd::Pack<std::uint32_t, W>::iota(static_cast<std::uint32_t>(a_.first_instance + g * W));
        return t;
    }
    WS workspace(std::uint64_t g) const {
        WS ws{};
        double* d = dbl_.data() + g * nd_;
        for (int a = 0; a < spec_.n_dbl; ++a) {
            ws.dbl[a] = GroupView<double, W>{d, spec_.dbl[a].cols};
            d += spec_.dbl[a].rows * spec_.dbl[a].cols * W;
        }
        R* r = real_.data() + g * nr_;
        for (int a = 0; a < spec_.n_real; ++a) {
            ws.real[a] = GroupView<R, W>{r, spec_.real[a].cols};
            r += spec_.real[a].rows * spec_.real[a].cols * W;
        }
        ws.scalars = GroupView<double, W>{scal_.data() + g * ns_, static_cast<std::uint64_t>(spec_.n_scalars)};
        return ws;
    }

    WorkspaceSpec spec_;
    std::uint64_t groups_ = 0, nd_ = 0, nr_ = 0, ns_ = 0;
    Buffer<double> dbl_;
    Buffer<R> real_;
    Buffer<double> scal_;
    Buffer<Totals> totals_;
    Buffer<R> real_rows_;
    const double* ex_ = nullptr; ///< this chunk's shared rows (the caller's)
    const R* re_ = nullptr; ///< the same in precision R: the caller's rows when R is double, else real_rows_
    Buffer<ThreadScratch<R>> scratch_;
};

// ---- the exponential mechanism alone (dpregret sample expmech) ----------------------------------------------

inline void expmech_draws(const dpr_cpu_boundary::ExpMechArgs& a, std::uint32_t first, std::uint32_t count,
                          std::uint32_t* out) {
    using PD = simd::Pack<double, kLanes>;
    CoordTeam<double, kLanes> team; // one member
    team.rng = RngKey{a.seed, 0};
    const mech::ExpMechDraw draw{}; // (Exponential, sub 0, round 0)
    for (std::uint32_t k = 0; k < count; ++k) {
        team.id = first + k;
        out[k] = a.scores ? mech::exponential_mechanism(team, a.d, a.c, draw,
                                                        [&](CoordIdx i) { return PD::load(a.scores + i.base); })
                          : mech::exponential_mechanism(team, a.d, a.c, draw,
                                                        [&](CoordIdx i) { return convert<double>(team.element(i)); });
    }
}

// ---- self-test of the lane vocabulary (tests/simd/test_simd.cpp) --------------------------------------------

inline void lane_selftest(const dpr_cpu_boundary::LaneSelfTest& t) {
    using PD = simd::Pack<double, kLanes>;
    using PF = simd::Pack<float, kLanes>;
    using PU = simd::Pack<std::uint32_t, kLanes>;
    for (std::size_t b = 0; b < t.n; b += kLanes) {
        const PD x = PD::load(t.x + b), y = PD::load(t.y + b), u = PD::load(t.u + b);
        const PF xf = convert<float>(x), yf = convert<float>(y), uf = convert<float>(u);
        const PD od[4] = {vlog(x), vexp(y), vcos2pi(u), noise::laplace_from_u(u, PD(1.5))};
        const PF of[4] = {vlog(xf), vexp(yf), vcos2pi(uf), noise::laplace_from_u(uf, PF(1.5f))};
        for (int k = 0; k < 4; ++k) {
            od[k].store(t.out_d + k * t.n + b);
            of[k].store(t.out_f + k * t.n + b);
        }
        const rng::Words4<PU> w = rng::philox_lanes<PU>(PU::load(t.c0 + b), PU(17u), PU(42u), PU(0x0B000000u), 1234u, 5u);
        for (int l = 0; l < kLanes; ++l)
            for (int j = 0; j < 4; ++j) t.words[4 * (b + l) + j] = w.w[j][l];
        rng::u53_lanes(w.w[0], w.w[1]).store(t.u53 + b);
        rng::u24_lanes(w.w[0]).store(t.u24 + b);
    }
}

// ---- the factory ---------------------------------------------------------------------------------------------

template <class L, class R>
dpr_cpu_boundary::IsaEngine* make_for(const typename L::Params& p, const dpr_cpu_boundary::IsaEngineArgs& a) {
    if constexpr (L::kInstanceLanes) {
        // A learner that draws from the shared per-round CDF (kSharedDraw) keeps O(1) state and, where
        // L::shared_round<R> says so, O(1) work per round at any d when the sequence is shared: 16 instances
        // per SIMD step beat one instance's coordinates.
        bool shared_round = false;
        if constexpr (learners::SharedDraw<L>::value)
            shared_round = !a.fill && L::template shared_round<R>(p);
        const bool small = a.d <= kInstanceLanesMaxD || shared_round;
        const bool instance_lanes = a.lanes == dpr_cpu_boundary::LanesRequest::Instances ||
                                    (a.lanes == dpr_cpu_boundary::LanesRequest::Auto && small);
        if (instance_lanes) {
            if (a.fill) return new GroupEngine<L, R, true>(p, a);
            return new GroupEngine<L, R, false>(p, a);
        }
    }
    return new CoordEngine<L, R>(p, a);
}

/// The engine of learner a.learner_index if its registry index is Part modulo Parts, else null: each part is
/// compiled in a translation unit of its own (host/cpu/cpu_isa_unit.cpp.in), so that no unit instantiates
/// the whole registry.
template <std::size_t Part, std::size_t Parts>
dpr_cpu_boundary::IsaEngine* make_engine(const dpr_cpu_boundary::IsaEngineArgs& a) {
    static_assert(Part < Parts);
    dpr_cpu_boundary::IsaEngine* out = nullptr;
    for_each_type_indexed(learners::AllLearners{}, [&](auto tag, auto index) {
        if constexpr (decltype(index)::value % Parts == Part) {
            using L = typename decltype(tag)::type;
            if (decltype(index)::value != a.learner_index) return;
            const auto& p = *static_cast<const typename L::Params*>(a.params);
            out = a.float_precision ? make_for<L, float>(p, a) : make_for<L, double>(p, a);
        }
    });
    return out;
}

} // namespace dpr::cpu
