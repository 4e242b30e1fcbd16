#pragma once
// Test helper: one learner instance driven through the contract directly with the serial team (the CPU
// oracle), its workspace laid out from the learner's WorkspaceSpec (contiguous, unpadded):
//   test::Solo<DpFtrlSphere> s(params, /*seed=*/7, /*instance=*/3);
//   s.play(t, x);                         // learners with play(): x_t before round t
//   const auto r = s.round(t, loss);      // RoundCharge<double>: expected, realized
//   s.scalar(j), s.dbl(a)[i], s.real(a)[i]
#include <cstdint>
#include <vector>

#include "kernels/core/team.hpp"
#include "kernels/learners/common.hpp"

namespace dpr::test {

namespace detail {
template <int N>
struct Rank : Rank<N - 1> {}; ///< overload priority: Rank<2> prefers the Rank<2> overload, then Rank<1>, ...
template <>
struct Rank<0> {};
} // namespace detail

template <class L, class R = double>
class Solo {
  public:
    using Team = SerialTeam<R>;
    using WS = Workspace<StridedView<double>, StridedView<R>, StridedView<double>>;

    Solo(const typename L::Params& p, std::uint32_t seed, std::uint32_t instance, std::uint32_t stream = 0,
         double fill = -7.0)
        : p_(p), spec_(L::workspace(p)) {
        team_.rng = RngKey{seed, stream};
        team_.id = instance;
        // Filled with garbage first: init() must set everything the learner reads.
        dbl_.assign(spec_.elements(false, 1) + 1, fill);
        real_.assign(spec_.elements(true, 1) + 1, static_cast<R>(fill));
        scal_.assign(static_cast<std::size_t>(spec_.n_scalars) + 1, fill);
        std::uint64_t off = 0;
        for (int a = 0; a < spec_.n_dbl; ++a) {
            ws_.dbl[a] = StridedView<double>{dbl_.data() + off, 1, spec_.dbl[a].cols};
            off += spec_.dbl[a].rows * spec_.dbl[a].cols;
        }
        off = 0;
        for (int a = 0; a < spec_.n_real; ++a) {
            ws_.real[a] = StridedView<R>{real_.data() + off, 1, spec_.real[a].cols};
            off += spec_.real[a].rows * spec_.real[a].cols;
        }
        ws_.scalars = StridedView<double>{scal_.data(), 1, static_cast<std::uint64_t>(spec_.n_scalars)};
        L::init(p_, team_, ws_);
    }

    /// Round t on the loss vector l (d doubles). Learners with kReadsCumulative see L_{t-1}, the sum of the
    /// rows this Solo was given before (what the engine computes for them).
    RoundCharge<double> round(std::uint64_t t, const double* l) {
        real_row_.resize(row_size());
        for (std::size_t i = 0; i < real_row_.size(); ++i) real_row_[i] = static_cast<R>(l[i]);
        cum_.resize(row_size(), 0.0);
        const auto r = L::round(p_, team_, ws_, t, ScalarLossRow<R>{l, real_row_.data(), cum_.data()});
        for (std::size_t i = 0; i < cum_.size(); ++i) cum_[i] += l[i];
        return r;
    }
    void play(std::uint64_t t, double* x) const { L::play(p_, team_, ws_, t, x); }

    /// Rounds 1..T on the rows fill(t, row) writes (row: the loss row's width); the total realised charge. The serial
    /// oracle's side of the tests that compare it with the engine.
    template <class Fill>
    double run(std::uint64_t T, Fill&& fill) {
        std::vector<double> row(row_size());
        double total = 0;
        for (std::uint64_t t = 1; t <= T; ++t) {
            fill(t, row.data());
            total += round(t, row.data()).realized;
        }
        return total;
    }

    const Team& team() const { return team_; }
    const WS& ws() const { return ws_; }
    double scalar(int j) const { return scal_[j]; }
    /// Array a of the double state (contiguous, unpadded).
    const double* dbl(int a) const { return ws_.dbl[a].data(); }
    /// Every value of the state, for bitwise comparisons of two instances.
    std::vector<double> state() const {
        std::vector<double> v(dbl_);
        for (R x : real_) v.push_back(static_cast<double>(x));
        v.insert(v.end(), scal_.begin(), scal_.end());
        return v;
    }
    std::vector<double> diagnostics() const {
        std::vector<double> out(learners::DiagnosticCount<L>::value);
        if constexpr (learners::DiagnosticCount<L>::value > 0) L::diagnostics(p_, scal_.data(), out.data());
        return out;
    }

  private:
    // The loss row's width: Params::row_d where the learner's d counts something else (net-oco: d = net points,
    // the row is the ball's dimension), else Params::d, else Params::base::d.
    template <int N>
    using Rank = detail::Rank<N>;
    std::size_t row_size() const { return d_of(p_, Rank<2>{}); }
    template <class P>
    static auto d_of(const P& p, Rank<2>) -> decltype(p.row_d, std::size_t()) {
        return p.row_d;
    }
    template <class P>
    static auto d_of(const P& p, Rank<1>) -> decltype(p.d, std::size_t()) {
        return p.d;
    }
    template <class P>
    static auto d_of(const P& p, Rank<0>) -> decltype(p.base.d, std::size_t()) {
        return p.base.d;
    }

    typename L::Params p_;
    WorkspaceSpec spec_;
    Team team_;
    WS ws_{};
    std::vector<double> dbl_, scal_;
    std::vector<R> real_, real_row_;
    std::vector<double> cum_; ///< L_{t-1} for learners with kReadsCumulative
};

} // namespace dpr::test
