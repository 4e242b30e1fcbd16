#pragma once
// The boundary between the CPU executor's front (host/cpu/cpu_engine.cpp, compiled for the baseline x86-64)
// and its kernels, compiled once per instruction set (the units of host/cpu/cpu_isa_unit.cpp.in, each with its
// own -march). Everything that crosses it is plain data and raw pointers: the per-ISA translation units rename
// their `dpr` namespace and use no standard-library template on shared types, so that no function compiled
// for AVX-512 can be chosen by the linker for code that runs on a CPU without it (COMDAT folding of
// inline functions). tests/engine/test_cpu_isa.cpp runs the binary under an emulated CPU without AVX-512
// to check it.
#include <cstddef>
#include <cstdint>
#include <string>

namespace dpr::cpu {

/// What the vector lanes should hold (LaunchRequest::lanes); Auto lets the kernels decide from the learner
/// and d (instance lanes for lane-safe learners at small d).
enum class LanesRequest { Auto, Instances, Coordinates };

/// Everything a per-ISA engine needs, resolved by the front.
struct IsaEngineArgs {
    std::size_t learner_index = 0;
    const void* params = nullptr;  ///< the learner's resolved Params
    std::uint32_t d = 0;
    std::uint64_t T = 0;
    std::uint32_t instances = 0;
    std::uint32_t first_instance = 0;
    std::uint32_t seed = 0;
    std::uint32_t stream = 0;
    const std::uint64_t* checkpoints = nullptr;
    std::uint32_t ncheck = 0;
    /// EngineShape::uncharged (sim::UnchargedRounds) as plain numbers: this header is included outside the ISA
    /// namespaces (host/cpu/cpu_isa_unit.cpp.in), and a kernel type included here would not be one inside them.
    std::uint64_t uncharged_first = 0, uncharged_period = 1, uncharged_last = 0;
    bool float_precision = false;
    LanesRequest lanes = LanesRequest::Auto;
    unsigned threads = 1;
    /// Per-instance sequences: fill(ctx, sequence, t, out) writes instance `sequence`'s l_t; comparator(ctx,
    /// L, d) is the set's comparator of the cumulative loss L. Null fill: rows are shared and passed to advance.
    void (*fill)(const void* ctx, std::uint32_t sequence, std::uint64_t t, double* out) = nullptr;
    double (*comparator)(const void* ctx, const double* L, std::uint32_t d) = nullptr;
    const void* adversary_ctx = nullptr;
};

/// A per-ISA engine (the front wraps it into an InstanceEngine).
class IsaEngine {
  public:
    virtual ~IsaEngine();
    /// Rounds [t0, t1) with the shared rows ((t1 - t0) x d), or null with per-instance sequences; `cum` the
    /// shared L_{t-1} rows (same shape) for learners with kReadsCumulative, else null (per-instance sequences:
    /// the engine forms each instance's own).
    virtual void advance(std::uint64_t t0, std::uint64_t t1, const double* rows, const double* cum) = 0;
    /// instances x ncheck cumulative charged losses, comparators (per-instance sequences only, else
    /// untouched), instances x diagnostics, per instance the first non-finite round.
    virtual void read(double* expected, double* realized, double* comparators, double* diagnostics,
                      std::uint64_t* first_nonfinite) const = 0;
    virtual const char* policy() const = 0;
};

/// The instruction sets the kernels are compiled for (x86-64-v4, x86-64-v3, the baseline).
enum class Isa { Avx512, Avx2, Generic };

bool isa_supported(Isa isa); ///< by this CPU and this build
/// The best ISA this CPU and this build support; throws std::runtime_error where none (a build made with
/// -DDPREGRET_CPU_ISAS=native for another CPU).
Isa best_isa();
/// The ISAs this build compiled kernels for, best first ("avx512, avx2, generic"): CMake option DPREGRET_CPU_ISAS.
std::string built_isas();
const char* isa_name(Isa isa);
/// "auto" (or "") -> best_isa(); a name -> that ISA; throws std::invalid_argument if unknown or unsupported.
Isa resolve_isa(const std::string& requested);

/// The lane vocabulary of one ISA on n inputs (n a multiple of 16), computed with that ISA's 16-lane packs
/// (host/simd/pack.hpp) for tests/simd/test_simd.cpp, which checks every output against the scalar versions.
struct LaneSelfTest {
    std::size_t n = 0;
    const double* x = nullptr;        ///< positive inputs (log)
    const double* y = nullptr;        ///< exp arguments
    const double* u = nullptr;        ///< uniforms in (0, 1) (cos2pi, Laplace)
    const std::uint32_t* c0 = nullptr; ///< Philox counter word 0 (word 1..3 and the key are fixed)
    double* out_d = nullptr;          ///< 4 n: log x, exp y, cos2pi u, laplace(u, 1.5)
    float* out_f = nullptr;           ///< 4 n: the same in float
    std::uint32_t* words = nullptr;   ///< 4 n: Philox blocks (word j of input i at [4 i + j])
    double* u53 = nullptr;            ///< n: 53-bit uniforms from words 0, 1
    float* u24 = nullptr;             ///< n: 24-bit uniforms from word 0
};
/// The exponential mechanism of `dpregret sample expmech` on an ISA's 16-lane coordinate team (the learners'
/// Gumbel-max, kernels/mechanisms/exponential.hpp): out[k] = the round-0 draw (Exponential, sub 0) of instance
/// first + k over d candidates, for k < count. The same index as the serial oracle (the argmin is exact).
struct ExpMechArgs {
    std::uint32_t seed = 0;
    std::uint32_t d = 0;
    double c = 0.0;                 ///< in [0, inf]
    const double* scores = nullptr; ///< d scores, zero-padded to a multiple of 16; null: s(i) = i
};
/// On the given ISA (which must be supported: best_isa()).
void expmech_draws(Isa isa, const ExpMechArgs&, std::uint32_t first, std::uint32_t count, std::uint32_t* out);
/// The self-test of an ISA (tests; the ISA must be supported).
void lane_selftest(Isa isa, const LaneSelfTest& t);

/// The kernels of one ISA are compiled in kIsaParts translation units, generated by CMakeLists.txt from
/// host/cpu/cpu_isa_unit.cpp.in (the number of parts is read from this line): part p instantiates the learners
/// whose registry index is p modulo kIsaParts, so that no unit compiles the whole registry (compile time and
/// memory); part 0 also holds the lane self-test and the exponential-mechanism draws. make_isa_engine_<isa>_<p>
/// returns null for a learner outside its part.
inline constexpr unsigned kIsaParts = 4;
static_assert(kIsaParts == 4, "DPR_CPU_DECLARE_ISA below names four parts");
#define DPR_CPU_DECLARE_ISA(isa)                                                                               \
    IsaEngine* make_isa_engine_##isa##_0(const IsaEngineArgs&);                                                \
    IsaEngine* make_isa_engine_##isa##_1(const IsaEngineArgs&);                                                \
    IsaEngine* make_isa_engine_##isa##_2(const IsaEngineArgs&);                                                \
    IsaEngine* make_isa_engine_##isa##_3(const IsaEngineArgs&);                                                \
    inline constexpr IsaEngine* (*make_isa_engine_##isa[kIsaParts])(const IsaEngineArgs&) = {                  \
        make_isa_engine_##isa##_0, make_isa_engine_##isa##_1, make_isa_engine_##isa##_2, make_isa_engine_##isa##_3}; \
    void lane_selftest_##isa(const LaneSelfTest&);                                                             \
    void expmech_draws_##isa(const ExpMechArgs&, std::uint32_t first, std::uint32_t count, std::uint32_t* out);
DPR_CPU_DECLARE_ISA(avx512)
DPR_CPU_DECLARE_ISA(avx2)
DPR_CPU_DECLARE_ISA(generic)
#undef DPR_CPU_DECLARE_ISA

} // namespace dpr::cpu

/// The boundary under a name without the token `dpr`, for the per-ISA translation units (which rename it).
namespace dpr_cpu_boundary = dpr::cpu;
