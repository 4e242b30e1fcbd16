#pragma once
// Teams: how one learner instance's per-coordinate work is spread over lanes (docs/ARCHITECTURE.md §1, §5;
// the Kokkos team / vector split). A learner's round is written ONCE against the Team concept below; the
// executor, not the learner, decides what the lanes are:
//
//   team                         lanes hold            lane value of a coordinate   per-instance value
//   SerialTeam<R> (here)          1 coordinate          R                            R
//   CPU CoordTeam<R, W>           W coordinates (SIMD)  Pack<R, W>                   R
//   CPU InstanceTeam<R, W>        W instances (SIMD)    Pack<R, W>                   Pack<R, W>
//   GPU thread per instance       1 coordinate          R                            R
//   GPU warp / block per instance 1 coordinate / thread R                            R
// (host/cpu/cpu_teams.hpp, cuda/teams.cuh). The two type families a learner sees:
//   typename Team::template lanes<T>  a value per coordinate handled by this call of a loop body
//   typename Team::template uni<T>    a value per instance (a reduction's result, a scalar of the state)
// Code mixes them freely (a uni operand is broadcast); lanes are never branched on -- a data-dependent
// choice is a select(), and a per-instance condition is tested with any()/all() (kernels/core/lanes.hpp).
//
// The concept (every member is DPR_HD):
//   using real                                   the run's precision, float or double
//   rank(), size(), sync()                       members of a multi-member team (GPU warp/block, CPU
//                                                threads sharing a large-d instance) and a barrier
//   for_each(n, f)                               f(idx) for every coordinate of [0, n), idx a team index
//   reduce<NS, NM>(n, f)                         f(idx) -> Contrib<lanes<real>, NS, NM>; returns the NS
//                                                sums and NM maxima over [0, n) as uni<real>, the same on
//                                                every member, in the team's fixed order
//   argmin<NM>(n, f)                             f(idx) -> ArgContrib: the lowest index of the smallest key
//                                                (+ NM maxima); a NaN key never wins, all-NaN gives key NaN
//                                                (dpr::argmax<NM>(team, n, f) below: the largest key, the
//                                                same rules, on every team)
//   categorical(n, f, target)                    the first index whose running sum of weights f(idx) exceeds
//                                                target (inverse CDF; the last positive weight if none does);
//                                                weights in target's precision (real, or double)
//   categorical_scaled(n, f, u)                  categorical at target u S, S = the sum of the positive
//   double
//                                                weights in the order the scan adds them; u in [0, 1),
//                                                uni<double>
//   load(view, idx) / store(view, idx, v)        a coordinate's state through a workspace view
//   load_at(view, i) / store_at(view, i, v)      the state of one coordinate i (a uni index) per instance;
//                                                store_at is done by rank 0, followed by sync() where needed
//   get(scalars, j) / put(scalars, j, v)         per-instance scalars of the workspace
//   loss(row, idx) / loss_exact(row, idx)        l_t at coordinate idx: the run's precision / double
//   loss_exact_at(row, i)                        l_t(i) at a uni index, per instance
//   cum_exact(row, idx) / cum_exact_at(row, i)   L_{t-1}(idx) = sum_{s<t} l_s(idx), double: only for learners
//   that
//                                                declare kReadsCumulative (the engine then computes it once
//                                                per point for a shared sequence;
//                                                kernels/learners/common.hpp)
//   element(idx)                                 lanes<uint32>: the RNG element word of coordinate idx
//   instance()                                   uni<uint32>: this instance's id (RNG instance word)
//   key()                                        the RNG key (seed, stream)
//   broadcast(x)                                 rank 0's uni value on every member
//   kInstances, instance_view(view, j)           the instances a team holds (1, or W with instance lanes) and
//                                                instance j's coordinates of a workspace view as a
//                                                StridedView: the arrays of each_instance()'s scalar sections
// Reductions combine in a fixed order that depends only on the team type and n, never on timing or
// thread count: results are bitwise reproducible for a given team (docs/RANDOMNESS.md).
#include <cstdint>
#include <limits>

#include "kernels/core/hd.hpp"
#include "kernels/core/lanes.hpp"

namespace dpr {

// ---- the typed workspace (a learner's per-instance state) -------------------------------------------------

/// rows x cols elements; a row is a run of coordinates (rows of one array are padded apart by the
/// executor so that a vector of lanes never crosses into the next row).
struct ArraySpec {
    std::uint64_t rows = 0;
    std::uint64_t cols = 0;
};

inline constexpr int kMaxStateArrays = 6;

/// What a learner's per-instance state is made of: arrays of double (exact running state such as
/// cumulative losses), arrays in the run's precision (noise caches, scores), and per-instance double
/// scalars (running maxima, diagnostics). The executor lays them out (contiguous per instance, or
/// interleaved across instances) and hands the learner views.
struct WorkspaceSpec {
    ArraySpec dbl[kMaxStateArrays] = {};
    ArraySpec real[kMaxStateArrays] = {};
    int n_dbl = 0;
    int n_real = 0;
    int n_scalars = 0;

    DPR_HD WorkspaceSpec& add_double(std::uint64_t rows, std::uint64_t cols) {
        dbl[n_dbl++] = ArraySpec{rows, cols};
        return *this;
    }
    DPR_HD WorkspaceSpec& add_real(std::uint64_t rows, std::uint64_t cols) {
        real[n_real++] = ArraySpec{rows, cols};
        return *this;
    }
    DPR_HD WorkspaceSpec& scalars(int n) {
        n_scalars = n;
        return *this;
    }
    /// Elements per instance with rows padded to multiples of `pad` lanes (bytes: x element size).
    DPR_HD std::uint64_t elements(bool real_arrays, std::uint64_t pad) const {
        std::uint64_t e = 0;
        const int n = real_arrays ? n_real : n_dbl;
        for (int a = 0; a < n; ++a) {
            const ArraySpec& s = real_arrays ? real[a] : dbl[a];
            e += s.rows * ((s.cols + pad - 1) / pad * pad);
        }
        return e;
    }
    /// Per-instance bytes for precision size `real_bytes` and row padding `pad`.
    DPR_HD std::uint64_t bytes(std::uint64_t real_bytes, std::uint64_t pad) const {
        return elements(false, pad) * 8 + elements(true, pad) * real_bytes + static_cast<std::uint64_t>(n_scalars) * 8;
    }
};

/// A learner's state as the executor lays it out: one view per array and the scalars. View types are
/// the team's (a strided pointer for one-lane teams, a packed pointer for SIMD teams).
template <class DV, class RV, class SV>
struct Workspace {
    DV dbl[kMaxStateArrays];
    RV real[kMaxStateArrays];
    SV scalars;
};

/// Element e of an array of one instance at p[e * stride]; row j starts `pitch` elements further per row.
/// stride = 1: contiguous (CPU oracle, GPU warp/block); stride = G: interleaved across the G instances of
/// a group (GPU thread per instance: coalesced).
template <class T>
struct StridedView {
    T* p = nullptr;
    std::uint64_t stride = 1;
    std::uint64_t pitch = 0;

    DPR_HD DPR_FORCEINLINE T& operator[](std::uint64_t e) const { return p[e * stride]; }
    /// The raw array (stride 1 only: learners with scalar code over contiguous state, kInstanceLanes = false).
    DPR_HD T* data() const { return p; }
    DPR_HD DPR_FORCEINLINE StridedView row(std::uint64_t j) const { return StridedView{p + j * pitch * stride, stride, pitch}; }
    /// The view from element k on (pointer arithmetic: the scalar domain functions take views or pointers).
    DPR_HD DPR_FORCEINLINE StridedView operator+(std::uint64_t k) const {
        return StridedView{p + k * stride, stride, pitch};
    }
};

// ---- reductions -----------------------------------------------------------------------------------------

/// What a reduce body returns per call: NS values to sum and NM values to take the maximum of.
template <class V, int NS, int NM>
struct Contrib {
    V sum[NS > 0 ? NS : 1];
    V max[NM > 0 ? NM : 1];
};
/// The reduced values, per instance.
template <class U, int NS, int NM>
struct Reduced {
    U sum[NS > 0 ? NS : 1];
    U max[NM > 0 ? NM : 1];

    /// The sums (from 0) and maxima (from -inf) of f(0) .. f(n - 1), a Contrib<U, NS, NM> each, in index
    /// order: a one-member team's reduce, and a coordinate team's per-lane accumulation (U a pack).
    template <class F>
    DPR_HD DPR_FORCEINLINE static Reduced in_order(std::uint32_t n, F&& f) {
        using S = lane_scalar_t<U>;
        Reduced acc;
        for (int k = 0; k < NS; ++k) acc.sum[k] = U(S(0));
        for (int k = 0; k < NM; ++k) acc.max[k] = U(-std::numeric_limits<S>::infinity());
        for (std::uint32_t i = 0; i < n; ++i) {
            const Contrib<U, NS, NM> c = f(i);
            for (int k = 0; k < NS; ++k) acc.sum[k] = acc.sum[k] + c.sum[k];
            for (int k = 0; k < NM; ++k) acc.max[k] = vmax(acc.max[k], c.max[k]);
        }
        return acc;
    }
};
/// What an argmin body returns: the key to minimise and NM values to take the maximum of.
template <class V, int NM>
struct ArgContrib {
    V key;
    V max[NM > 0 ? NM : 1];
};
template <class U, class UI, int NM>
struct ArgReduced {
    U key;  ///< the smallest key (NaN if every key was NaN)
    UI arg; ///< its lowest index (0 if every key was NaN)
    U max[NM > 0 ? NM : 1];
};

/// The RNG key of a team's instance (docs/ARCHITECTURE.md §2: seed and stream; the instance is in the counter).
struct RngKey {
    std::uint32_t seed = 0;
    std::uint32_t stream = 0;
};

/// A round's charge (learner contract): the expected loss <l_t, x_t> and the realised loss l_t(i_t).
template <class U>
struct RoundCharge {
    U expected;
    U realized;
};

// ---- the serial team: one lane, the CPU oracle ------------------------------------------------------------

/// The loss row l_t of one round for one-lane teams: exact doubles, and the same row rounded to the
/// run's precision (the executor prepares both once per chunk, shared by all instances).
template <class R>
struct ScalarLossRow {
    const double* exact;
    const R* real;
    const double* cum = nullptr; ///< L_{t-1}, the cumulative loss before round t (learners with kReadsCumulative)
    DPR_HD DPR_FORCEINLINE R at(std::uint32_t i) const { return real[i]; }
    DPR_HD DPR_FORCEINLINE double exact_at(std::uint32_t i) const { return exact[i]; }
};

/// What every team whose lanes hold one element each has in common (SerialTeam here, the CUDA warp and block
/// teams of cuda/teams.cuh, the threaded emulation of the tests): the types, the instance's key and id,
/// element access through strided views, and the in-order inverse-CDF scan.
template <class R>
struct ScalarTeamBase {
    using real = R;
    template <class T>
    using lanes = T;
    template <class T>
    using uni = T;
    using index = std::uint32_t;
    template <class T>
    using view = StridedView<T>;
    using loss_row = ScalarLossRow<R>;

    RngKey rng{};
    std::uint32_t id = 0; ///< this instance

    DPR_HD RngKey key() const { return rng; }
    DPR_HD std::uint32_t instance() const { return id; }
    DPR_HD static std::uint32_t element(std::uint32_t i) { return i; }
    static constexpr std::uint32_t kInstances = 1;
    template <class T>
    DPR_HD static StridedView<T> instance_view(const StridedView<T>& v, std::uint32_t) {
        return v;
    }

    template <class T>
    DPR_HD DPR_FORCEINLINE static T load(const StridedView<T>& v, std::uint32_t i) {
        return v[i];
    }
    template <class T>
    DPR_HD DPR_FORCEINLINE static void store(const StridedView<T>& v, std::uint32_t i, T x) {
        v[i] = x;
    }
    // One element per lane value: the element-wise forms are load and store.
    template <class T>
    DPR_HD DPR_FORCEINLINE static T load_at(const StridedView<T>& v, std::uint32_t i) {
        return load(v, i);
    }
    template <class T>
    DPR_HD DPR_FORCEINLINE static void store_at(const StridedView<T>& v, std::uint32_t i, T x) {
        store(v, i, x);
    }
    DPR_HD DPR_FORCEINLINE static double get(const StridedView<double>& s, int j) {
        return s[static_cast<std::uint64_t>(j)];
    }
    DPR_HD DPR_FORCEINLINE static void put(const StridedView<double>& s, int j, double x) {
        s[static_cast<std::uint64_t>(j)] = x;
    }

    DPR_HD DPR_FORCEINLINE static R loss(const loss_row& l, std::uint32_t i) { return l.at(i); }
    DPR_HD DPR_FORCEINLINE static double loss_exact(const loss_row& l, std::uint32_t i) {
        return l.exact_at(i);
    }
    DPR_HD DPR_FORCEINLINE static double loss_exact_at(const loss_row& l, std::uint32_t i) {
        return l.exact_at(i);
    }
    DPR_HD DPR_FORCEINLINE static double cum_exact(const loss_row& l, std::uint32_t i) { return l.cum[i]; }
    DPR_HD DPR_FORCEINLINE static double cum_exact_at(const loss_row& l, std::uint32_t i) { return l.cum[i]; }

    /// Inverse CDF over the weights f(i) >= 0 (of target's type T: R, or double) in index order, every member
    /// scanning all of them (the weights are readable by all): the same arm on every member.
    template <class F, class T>
    DPR_HD DPR_FORCEINLINE static std::uint32_t categorical(std::uint32_t n, F&& f, T target) {
        T acc = T(0);
        std::uint32_t last_positive = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
            const T w = f(i);
            if (w > T(0)) {
                last_positive = i;
                acc = acc + w;
                if (target < acc) return i;
            }
        }
        return last_positive;
    }

    /// categorical() at the target u S, S = the sum of the positive weights, added in the order the scan adds
    /// them (so the scan's last running sum is S exactly); u in [0, 1). Weights in double.
    template <class F>
    DPR_HD DPR_FORCEINLINE static std::uint32_t categorical_scaled(std::uint32_t n, F&& f, double u) {
        double total = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            const double w = f(i);
            if (w > 0.0) total = total + w;
        }
        return categorical(n, f, u * total);
    }
};

/// The exponential-mechanism CDF of round t shared by the instances of a point (learners with kSharedDraw),
/// from a loss row: null here; the CPU executor's rows prepare it on first use (host/cpu/cpu_teams.hpp, found
/// by argument-dependent lookup).
template <class Row>
DPR_HD DPR_FORCEINLINE const double* shared_cdf_of(const Row&, std::uint64_t) {
    return nullptr;
}

/// The per-round value of round t shared by the instances of a point (learners with shared_scalar,
/// kernels/learners/common.hpp), from a loss row: null here, as shared_cdf_of.
template <class Row>
DPR_HD DPR_FORCEINLINE const double* shared_scalar_of(const Row&, std::uint64_t) {
    return nullptr;
}

/// f(j) on rank 0 for each instance j = 0 .. Team::kInstances - 1 the team holds (its one instance, or the W
/// of instance lanes), between barriers: a scalar section for the work that has no lane version (an LO
/// oracle, a graph projection); f reaches instance j's state through team.instance_view(view, j).
template <class Team, class F>
DPR_HD DPR_FORCEINLINE void each_instance(const Team& team, F&& f) {
    team.sync();
    if (team.rank() == 0)
        for (std::uint32_t j = 0; j < Team::kInstances; ++j) f(j);
    team.sync();
}

/// A team of one lane: the sequential oracle every other team is compared against.
template <class R>
struct SerialTeam : ScalarTeamBase<R> {
    SerialTeam() = default;
    DPR_HD SerialTeam(RngKey key, std::uint32_t instance) : ScalarTeamBase<R>{key, instance} {}

    DPR_HD static constexpr std::uint32_t rank() { return 0; }
    DPR_HD static constexpr std::uint32_t size() { return 1; }
    DPR_HD static void sync() {}
    template <class T>
    DPR_HD static T broadcast(T x) {
        return x;
    }

    template <class F>
    DPR_HD DPR_FORCEINLINE void for_each(std::uint32_t n, F&& f) const {
        for (std::uint32_t i = 0; i < n; ++i) f(i);
    }

    template <int NS, int NM, class F>
    DPR_HD DPR_FORCEINLINE Reduced<R, NS, NM> reduce(std::uint32_t n, F&& f) const {
        return Reduced<R, NS, NM>::in_order(n, f);
    }

    template <int NM, class F>
    DPR_HD DPR_FORCEINLINE ArgReduced<R, std::uint32_t, NM> argmin(std::uint32_t n, F&& f) const {
        ArgReduced<R, std::uint32_t, NM> acc;
        acc.key = std::numeric_limits<R>::quiet_NaN();
        acc.arg = 0;
        for (int m = 0; m < NM; ++m) acc.max[m] = -std::numeric_limits<R>::infinity();
        for (std::uint32_t i = 0; i < n; ++i) {
            const ArgContrib<R, NM> c = f(i);
            // Strictly smaller (or the first non-NaN): ties keep the lowest index, NaN never wins.
            if (c.key < acc.key || (acc.key != acc.key && c.key == c.key)) {
                acc.key = c.key;
                acc.arg = i;
            }
            for (int m = 0; m < NM; ++m) acc.max[m] = vmax(acc.max[m], c.max[m]);
        }
        return acc;
    }
};

// ---- derived team operations (written once over the concept, so every team has them) ---------------------

/// The lowest index of the LARGEST key, on any team: argmin of the negated keys, the key negated back.
/// Negation is exact, so ties (+0 and -0 included) keep the lowest index, a NaN key never wins and all-NaN
/// gives key NaN at index 0, exactly as argmin; the NM maxima are passed through untouched.
template <int NM, class Team, class F>
DPR_HD DPR_FORCEINLINE auto argmax(const Team& team, std::uint32_t n, F&& f) {
    auto r = team.template argmin<NM>(n, [&](auto i) {
        auto c = f(i);
        c.key = -c.key;
        return c;
    });
    r.key = -r.key;
    return r;
}

} // namespace dpr
