// CPU executor: instances are spread over threads; each instance runs the shared round loop
// (kernels/sim/instance_loop.hpp) with a team of one, so its results are bitwise independent of the
// thread count.
#include "host/engine/cpu_engine.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "host/engine/parallel.hpp"
#include "kernels/core/team.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/sim/comparator.hpp"
#include "kernels/sim/instance_loop.hpp"

namespace dpr {
namespace {

template <class L>
class CpuEngine final : public InstanceEngine {
public:
    CpuEngine(const typename L::Params& p, const EngineShape& s, unsigned threads, const AdversaryRuntime* adv)
        : p_(p), s_(s), threads_(threads), adv_(adv), nck_(static_cast<std::uint32_t>(s.checkpoints.size())),
          W_(L::workspace(p)), ws_(static_cast<std::size_t>(s.instances) * W_), acc_(s.instances),
          expected_(static_cast<std::size_t>(s.instances) * nck_), realized_(expected_.size()) {
        if (adv_) {
            Lcmp_.assign(static_cast<std::size_t>(s.instances) * s.d, 0.0);
            cmp_.assign(static_cast<std::size_t>(s.instances) * nck_, 0.0);
            next_cmp_.assign(s.instances, 0);
        }
        parallel_for(s_.instances, threads_, [&](std::uint64_t k, unsigned) {
            SerialTeam team;
            L::init(p_, ctx(k), team, ws_.data() + k * W_);
        }, 64);
    }

    void advance(std::uint64_t t0, std::uint64_t t1, const double* losses) override {
        const std::uint64_t rows = t1 - t0;
        if (!adv_ && !losses) throw std::logic_error("CpuEngine::advance: no shared losses and no per-instance adversary");
        if (adv_ && scratch_.size() < threads_) scratch_.resize(threads_);
        parallel_for(s_.instances, threads_, [&](std::uint64_t k, unsigned tid) {
            SerialTeam team;
            const double* rows_k = losses;
            if (adv_) rows_k = own_sequence(k, t0, t1, scratch_[tid]);
            sim::advance<L>(p_, ctx(k), team, ws_.data() + k * W_, acc_[k], t0, t1, rows_k, s_.d,
                            s_.checkpoints.data(), nck_, expected_.data() + k * nck_, realized_.data() + k * nck_);
        }, 4);
        (void)rows;
    }

    void results(std::vector<double>& expected, std::vector<double>& realized) override {
        expected = expected_;
        realized = realized_;
    }
    void comparators(std::vector<double>& out) override { out = cmp_; }
    void diagnostics(std::vector<double>& out) override {
        constexpr std::size_t n = learners::DiagnosticCount<L>::value;
        out.assign(static_cast<std::size_t>(s_.instances) * n, 0.0);
        if constexpr (n > 0)
            for (std::uint64_t k = 0; k < s_.instances; ++k) L::diagnostics(p_, ws_.data() + k * W_, out.data() + k * n);
    }
    void first_nonfinite_rounds(std::vector<std::uint64_t>& out) override {
        out.resize(s_.instances);
        for (std::uint64_t k = 0; k < s_.instances; ++k) out[k] = acc_[k].first_nonfinite_round;
    }
    std::string policy() const override {
        return "cpu: " + std::to_string(threads_) + " threads, team of 1 per instance, " + std::to_string(W_) +
               " doubles of state per instance";
    }

private:
    learners::InstanceCtx ctx(std::uint64_t k) const {
        return learners::InstanceCtx{s_.seed, s_.stream, static_cast<std::uint32_t>(s_.first_instance + k)};
    }

    /// Generates instance k's own rows t0..t1-1 into `buf` and records its comparator at checkpoints.
    const double* own_sequence(std::uint64_t k, std::uint64_t t0, std::uint64_t t1, std::vector<double>& buf) {
        const std::uint32_t d = s_.d;
        buf.resize((t1 - t0) * d);
        const adversaries::SequenceCtx sc{s_.seed, s_.stream, static_cast<std::uint32_t>(s_.first_instance + k)};
        double* Lk = Lcmp_.data() + k * d;
        for (std::uint64_t t = t0; t < t1; ++t) {
            double* row = buf.data() + (t - t0) * d;
            adv_->fill(sc, t, row);
            for (std::uint32_t i = 0; i < d; ++i) Lk[i] += row[i];
            std::uint32_t& nx = next_cmp_[k];
            while (nx < nck_ && s_.checkpoints[nx] == t) cmp_[k * nck_ + nx++] = sim::comparator(adv_->geometry, Lk, d);
        }
        return buf.data();
    }

    typename L::Params p_;
    EngineShape s_;
    unsigned threads_;
    const AdversaryRuntime* adv_;
    std::uint32_t nck_;
    std::uint64_t W_;
    std::vector<double> ws_;
    std::vector<sim::InstanceTotals> acc_;
    std::vector<double> expected_, realized_;
    std::vector<double> Lcmp_, cmp_;
    std::vector<std::uint32_t> next_cmp_;
    std::vector<std::vector<double>> scratch_;
};

} // namespace

std::unique_ptr<InstanceEngine> make_cpu_engine(std::size_t learner_index, const void* params,
                                                const EngineShape& shape, unsigned threads,
                                                const AdversaryRuntime* per_instance) {
    std::unique_ptr<InstanceEngine> out;
    std::size_t i = 0;
    for_each_type(learners::AllLearners{}, [&](auto tag) {
        using L = typename decltype(tag)::type;
        if (i++ == learner_index)
            out = std::make_unique<CpuEngine<L>>(*static_cast<const typename L::Params*>(params), shape, threads,
                                                 per_instance);
    });
    if (!out) throw std::logic_error("make_cpu_engine: learner index out of range");
    return out;
}

} // namespace dpr
