// The CPU executor's front: picks the instruction set (the best this CPU has, or the one asked for), builds
// the per-ISA engine (host/cpu/cpu_engine_impl.hpp, compiled in the units of host/cpu/cpu_isa_unit.cpp.in)
// and presents it as an InstanceEngine.
// Compiled for the baseline x86-64: nothing here needs more than SSE2.
#include "host/cpu/cpu_engine.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/cpu/cpu_isa.hpp"
#include "kernels/learners/common.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/sim/comparator.hpp"

namespace dpr {

cpu::IsaEngine::~IsaEngine() = default;

namespace {

using cpu::Isa;

struct AdversaryCtx {
    const AdversaryRuntime* adv;
    std::uint32_t seed, stream;
};

void fill_own(const void* ctx, std::uint32_t sequence, std::uint64_t t, double* out) {
    const auto* c = static_cast<const AdversaryCtx*>(ctx);
    c->adv->fill(adversaries::SequenceCtx{c->seed, c->stream, sequence}, t, out);
}
double comparator_of(const void* ctx, const double* L, std::uint32_t d) {
    return static_cast<const AdversaryCtx*>(ctx)->adv->comparator(L, d);
}

std::size_t diagnostic_count(std::size_t learner_index) {
    std::size_t n = 0;
    with_type_at(learners::AllLearners{}, learner_index,
                 [&](auto tag) { n = learners::DiagnosticCount<typename decltype(tag)::type>::value; });
    return n;
}

class CpuEngine final : public InstanceEngine {
  public:
    CpuEngine(std::unique_ptr<cpu::IsaEngine> e, std::unique_ptr<AdversaryCtx> adv, const EngineShape& s,
              std::size_t ndiag)
        : e_(std::move(e)), adv_(std::move(adv)), n_(s.instances), nck_(s.checkpoints.size()), ndiag_(ndiag),
          per_instance_(adv_ != nullptr) {}

    void advance(std::uint64_t t0, std::uint64_t t1, const double* losses, const double* cum) override {
        if (!per_instance_ && !losses) throw std::logic_error("CpuEngine::advance: no shared losses");
        e_->advance(t0, t1, per_instance_ ? nullptr : losses, per_instance_ ? nullptr : cum);
        fresh_ = false;
    }
    void results(std::vector<double>& expected, std::vector<double>& realized) override {
        read();
        expected = expected_;
        realized = realized_;
    }
    void comparators(std::vector<double>& out) override {
        read();
        out = per_instance_ ? cmp_ : std::vector<double>{};
    }
    void diagnostics(std::vector<double>& out) override {
        read();
        out = diag_;
    }
    void first_nonfinite_rounds(std::vector<std::uint64_t>& out) override {
        read();
        out = bad_;
    }
    std::string policy() const override { return e_->policy(); }

  private:
    void read() {
        if (fresh_) return;
        expected_.assign(n_ * nck_, 0.0);
        realized_.assign(n_ * nck_, 0.0);
        cmp_.assign(per_instance_ ? n_ * nck_ : 0, 0.0);
        diag_.assign(n_ * ndiag_, 0.0);
        bad_.assign(n_, 0);
        e_->read(expected_.data(), realized_.data(), per_instance_ ? cmp_.data() : nullptr, diag_.data(), bad_.data());
        fresh_ = true;
    }

    std::unique_ptr<cpu::IsaEngine> e_;
    std::unique_ptr<AdversaryCtx> adv_;
    std::size_t n_, nck_, ndiag_;
    bool per_instance_;
    bool fresh_ = false;
    std::vector<double> expected_, realized_, cmp_, diag_;
    std::vector<std::uint64_t> bad_;
};

} // namespace

namespace cpu {

namespace {

/// The entry points of one ISA's kernels.
struct IsaKernels {
    Isa isa;
    IsaEngine* (*const* make)(const IsaEngineArgs&); ///< kIsaParts factories: learner i is in part i % kIsaParts
    void (*selftest)(const LaneSelfTest&);
    void (*expmech)(const ExpMechArgs&, std::uint32_t, std::uint32_t, std::uint32_t*);
};

/// The ISAs this build compiled (CMake option DPREGRET_CPU_ISAS defines DPREGRET_CPU_ISA_<NAME> here), best first.
constexpr IsaKernels kBuilt[] = {
#ifdef DPREGRET_CPU_ISA_AVX512
    {Isa::Avx512, make_isa_engine_avx512, lane_selftest_avx512, expmech_draws_avx512},
#endif
#ifdef DPREGRET_CPU_ISA_AVX2
    {Isa::Avx2, make_isa_engine_avx2, lane_selftest_avx2, expmech_draws_avx2},
#endif
#ifdef DPREGRET_CPU_ISA_GENERIC
    {Isa::Generic, make_isa_engine_generic, lane_selftest_generic, expmech_draws_generic},
#endif
};

bool cpu_has(Isa isa) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    switch (isa) {
    case Isa::Avx512:
        return __builtin_cpu_supports("x86-64-v4");
    case Isa::Avx2:
        return __builtin_cpu_supports("x86-64-v3");
    case Isa::Generic:
        return true;
    }
    return false;
#else
    return isa == Isa::Generic;
#endif
}

/// The kernels of a supported ISA; throws std::invalid_argument naming `what` otherwise.
const IsaKernels& kernels_of(Isa isa, const char* what) {
    for (const IsaKernels& k : kBuilt)
        if (k.isa == isa && cpu_has(isa)) return k;
    throw std::invalid_argument(std::string(what) + ": " + isa_name(isa) + " is not supported here");
}

} // namespace

bool isa_supported(Isa isa) {
    for (const IsaKernels& k : kBuilt)
        if (k.isa == isa) return cpu_has(isa);
    return false;
}

std::string built_isas() {
    std::string out;
    for (const IsaKernels& k : kBuilt) out += (out.empty() ? "" : ", ") + std::string(isa_name(k.isa));
    return out;
}

Isa best_isa() {
    for (const IsaKernels& k : kBuilt)
        if (cpu_has(k.isa)) return k.isa;
    throw std::runtime_error("this build has CPU kernels for " + built_isas() + " only, and this CPU supports none of "
                             "them (a build configured with -DDPREGRET_CPU_ISAS=native on another machine?): rebuild "
                             "with -DDPREGRET_CPU_ISAS=all");
}

const char* isa_name(Isa isa) {
    return isa == Isa::Avx512 ? "avx512" : isa == Isa::Avx2 ? "avx2" : "generic";
}

Isa resolve_isa(const std::string& requested) {
    if (requested.empty() || requested == "auto") return best_isa();
    for (Isa i : {Isa::Avx512, Isa::Avx2, Isa::Generic}) {
        if (requested != isa_name(i)) continue;
        if (!isa_supported(i))
            throw std::invalid_argument(std::string("isa = \"") + requested + "\": this CPU (or this build, with kernels "
                                        "for " + built_isas() + ") does not support it; the best it supports is \"" +
                                        isa_name(best_isa()) + "\"");
        return i;
    }
    throw std::invalid_argument("isa = \"" + requested + "\": must be one of \"auto\", \"avx512\", \"avx2\", \"generic\"");
}

void expmech_draws(Isa isa, const ExpMechArgs& a, std::uint32_t first, std::uint32_t count, std::uint32_t* out) {
    kernels_of(isa, "expmech_draws").expmech(a, first, count, out);
}

void lane_selftest(Isa isa, const LaneSelfTest& t) { kernels_of(isa, "lane_selftest").selftest(t); }

} // namespace cpu

std::unique_ptr<InstanceEngine> make_cpu_engine(const EngineRequest& request) {
    const EngineShape& shape = request.shape;
    const std::size_t learner_index = request.learner_index;
    const cpu::Isa isa = cpu::resolve_isa(shape.launch.isa);
    cpu::IsaEngineArgs a;
    a.learner_index = learner_index;
    a.params = request.params;
    a.d = shape.d;
    a.T = shape.T;
    a.instances = shape.instances;
    a.first_instance = shape.first_instance;
    a.seed = shape.seed;
    a.stream = shape.stream;
    a.checkpoints = shape.checkpoints.data();
    a.ncheck = static_cast<std::uint32_t>(shape.checkpoints.size());
    a.uncharged_first = shape.uncharged.first;
    a.uncharged_period = shape.uncharged.period;
    a.uncharged_last = shape.uncharged.last;
    a.float_precision = shape.precision == Precision::Float;
    a.lanes = shape.launch.lanes == "instances"     ? cpu::LanesRequest::Instances
              : shape.launch.lanes == "coordinates" ? cpu::LanesRequest::Coordinates
                                                    : cpu::LanesRequest::Auto;
    a.threads = request.threads < 1 ? 1 : request.threads;
    std::unique_ptr<AdversaryCtx> adv;
    if (request.per_instance) {
        adv = std::make_unique<AdversaryCtx>(AdversaryCtx{request.per_instance, shape.seed, shape.stream});
        a.fill = &fill_own;
        a.comparator = &comparator_of;
        a.adversary_ctx = adv.get();
    }
    cpu::IsaEngine* e = cpu::kernels_of(isa, "make_cpu_engine").make[learner_index % cpu::kIsaParts](a);
    if (!e) throw std::logic_error("make_cpu_engine: learner index out of range");
    return std::make_unique<CpuEngine>(std::unique_ptr<cpu::IsaEngine>(e), std::move(adv), shape,
                                       diagnostic_count(learner_index));
}

} // namespace dpr
