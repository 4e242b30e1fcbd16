#pragma once
// Test helper: a lockstep emulation on CPU threads of the GPU's WarpTeam / BlockTeam (cuda/teams.cuh): N lanes,
// each a std::thread running the learner's round with rank = lane; for_each strided by N; reductions, argmin and
// the inverse CDF combine the lanes through shared slots behind a barrier, in a fixed order (lane 0, 1, ...);
// sync() is the barrier; broadcast() reads lane 0's value. With N = 32 it runs the learners' warp code path in
// CI, where no GPU is; races (a lane reading what another has not yet written, writes by more than rank 0)
// show up as results that differ from the serial oracle's.
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/core/team.hpp"

namespace dpr::test {

class LaneGroup {
  public:
    explicit LaneGroup(std::uint32_t n) : n_(n), slots_(std::size_t(n) * kSlots) {}
    std::uint32_t size() const { return n_; }
    void arrive() {
        std::unique_lock<std::mutex> lk(m_);
        const unsigned g = gen_;
        if (++count_ == n_) {
            count_ = 0;
            ++gen_;
            cv_.notify_all();
        } else {
            cv_.wait(lk, [&] { return gen_ != g; });
        }
    }
    /// Publishes lane's k values, waits for all lanes, returns every lane's values (lane-major), then waits
    /// again so that nobody overwrites a slot before all have read it.
    std::vector<double> exchange(std::uint32_t lane, const double* v, int k) {
        for (int j = 0; j < k; ++j) slots_[std::size_t(lane) * kSlots + j] = v[j];
        arrive();
        std::vector<double> all(std::size_t(n_) * k);
        for (std::uint32_t l = 0; l < n_; ++l)
            for (int j = 0; j < k; ++j) all[std::size_t(l) * k + j] = slots_[std::size_t(l) * kSlots + j];
        arrive();
        return all;
    }
    static constexpr int kSlots = 16;

  private:
    std::uint32_t n_;
    std::vector<double> slots_;
    std::mutex m_;
    std::condition_variable cv_;
    unsigned count_ = 0, gen_ = 0;
};

template <class R>
struct EmuTeam : ScalarTeamBase<R> {
    LaneGroup* g = nullptr;
    std::uint32_t lane = 0;

    std::uint32_t rank() const { return lane; }
    std::uint32_t size() const { return g->size(); }
    void sync() const { g->arrive(); }
    template <class T>
    T broadcast(T x) const {
        const double v = static_cast<double>(x);
        return static_cast<T>(g->exchange(lane, &v, 1)[0]);
    }

    template <class F>
    void for_each(std::uint32_t n, F&& f) const {
        for (std::uint32_t i = lane; i < n; i += size()) f(i);
    }

    template <int NS, int NM, class F>
    Reduced<R, NS, NM> reduce(std::uint32_t n, F&& f) const {
        double acc[NS + NM + 1];
        for (int k = 0; k < NS; ++k) acc[k] = 0.0;
        for (int k = 0; k < NM; ++k) acc[NS + k] = -std::numeric_limits<double>::infinity();
        R s[NS > 0 ? NS : 1], m[NM > 0 ? NM : 1];
        for (int k = 0; k < NS; ++k) s[k] = R(0);
        for (int k = 0; k < NM; ++k) m[k] = -std::numeric_limits<R>::infinity();
        for (std::uint32_t i = lane; i < n; i += size()) {
            const Contrib<R, NS, NM> c = f(i);
            for (int k = 0; k < NS; ++k) s[k] = s[k] + c.sum[k];
            for (int k = 0; k < NM; ++k) m[k] = vmax(m[k], c.max[k]);
        }
        for (int k = 0; k < NS; ++k) acc[k] = s[k];
        for (int k = 0; k < NM; ++k) acc[NS + k] = m[k];
        const std::vector<double> all = g->exchange(lane, acc, NS + NM);
        Reduced<R, NS, NM> out;
        for (int k = 0; k < NS; ++k) {
            out.sum[k] = R(0);
            for (std::uint32_t l = 0; l < size(); ++l) out.sum[k] = out.sum[k] + static_cast<R>(all[l * (NS + NM) + k]);
        }
        for (int k = 0; k < NM; ++k) {
            out.max[k] = -std::numeric_limits<R>::infinity();
            for (std::uint32_t l = 0; l < size(); ++l)
                out.max[k] = vmax(out.max[k], static_cast<R>(all[l * (NS + NM) + NS + k]));
        }
        return out;
    }

    template <int NM, class F>
    ArgReduced<R, std::uint32_t, NM> argmin(std::uint32_t n, F&& f) const {
        R key = std::numeric_limits<R>::quiet_NaN(), m[NM > 0 ? NM : 1];
        std::uint32_t arg = 0;
        for (int k = 0; k < NM; ++k) m[k] = -std::numeric_limits<R>::infinity();
        for (std::uint32_t i = lane; i < n; i += size()) {
            const ArgContrib<R, NM> c = f(i);
            if (c.key < key || (key != key && c.key == c.key)) {
                key = c.key;
                arg = i;
            }
            for (int k = 0; k < NM; ++k) m[k] = vmax(m[k], c.max[k]);
        }
        double v[2 + NM];
        v[0] = key;
        v[1] = arg;
        for (int k = 0; k < NM; ++k) v[2 + k] = m[k];
        const std::vector<double> all = g->exchange(lane, v, 2 + NM);
        ArgReduced<R, std::uint32_t, NM> out;
        out.key = std::numeric_limits<R>::quiet_NaN();
        out.arg = 0;
        for (int k = 0; k < NM; ++k) out.max[k] = -std::numeric_limits<R>::infinity();
        for (std::uint32_t l = 0; l < size(); ++l) {
            const R kl = static_cast<R>(all[l * (2 + NM)]);
            const auto al = static_cast<std::uint32_t>(all[l * (2 + NM) + 1]);
            if (kl == kl && (out.key != out.key || kl < out.key || (kl == out.key && al < out.arg))) {
                out.key = kl;
                out.arg = al;
            }
            for (int k = 0; k < NM; ++k) out.max[k] = vmax(out.max[k], static_cast<R>(all[l * (2 + NM) + 2 + k]));
        }
        return out;
    }
};

/// One instance of learner L played by `lanes` emulated lanes over a contiguous workspace; `rounds(team, ws)`
/// is called on every lane (it runs init and the rounds) and its per-lane results are returned lane by lane.
template <class L, class R, class Result, class Body>
std::vector<Result> run_emulated(const typename L::Params& p, std::uint32_t lanes, std::uint32_t seed,
                                 std::uint32_t instance, Body&& body) {
    const WorkspaceSpec spec = L::workspace(p);
    std::vector<double> dbl(spec.elements(false, 1) + 1, -7.0), sc(std::size_t(spec.n_scalars) + 1, -7.0);
    std::vector<R> real(spec.elements(true, 1) + 1, R(-7));
    Workspace<StridedView<double>, StridedView<R>, StridedView<double>> ws{};
    std::uint64_t off = 0;
    for (int a = 0; a < spec.n_dbl; ++a) {
        ws.dbl[a] = StridedView<double>{dbl.data() + off, 1, spec.dbl[a].cols};
        off += spec.dbl[a].rows * spec.dbl[a].cols;
    }
    off = 0;
    for (int a = 0; a < spec.n_real; ++a) {
        ws.real[a] = StridedView<R>{real.data() + off, 1, spec.real[a].cols};
        off += spec.real[a].rows * spec.real[a].cols;
    }
    ws.scalars = StridedView<double>{sc.data(), 1, static_cast<std::uint64_t>(spec.n_scalars)};
    LaneGroup group(lanes);
    std::vector<Result> out(lanes);
    std::vector<std::thread> threads;
    for (std::uint32_t lane = 0; lane < lanes; ++lane)
        threads.emplace_back([&, lane] {
            EmuTeam<R> team;
            team.g = &group;
            team.lane = lane;
            team.rng = RngKey{seed, 0};
            team.id = instance;
            out[lane] = body(team, ws);
        });
    for (auto& th : threads) th.join();
    return out;
}

} // namespace dpr::test
