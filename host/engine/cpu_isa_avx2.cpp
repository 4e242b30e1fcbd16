// The CPU kernels for AVX2 (x86-64-v3: AVX2, FMA, BMI2); compiled with -march=x86-64-v3 (CMakeLists.txt).
// host/engine/cpu_engine_impl.hpp is compiled here with the namespace dpr renamed, so that nothing this
// translation unit instantiates can stand in for a function of another (host/engine/cpu_isa.hpp).
#include "host/engine/cpu_isa.hpp"

#define dpr dpr_isa_avx2
#define DPR_CPU_ISA_NAME "avx2"
#include "host/engine/cpu_engine_impl.hpp"
#undef dpr

dpr::cpu::IsaEngine* dpr::cpu::make_isa_engine_avx2(const IsaEngineArgs& a) {
    return dpr_isa_avx2::cpu::make_engine(a);
}

void dpr::cpu::lane_selftest_avx2(const LaneSelfTest& t) { dpr_isa_avx2::cpu::lane_selftest(t); }

void dpr::cpu::expmech_draws_avx2(const ExpMechArgs& a, std::uint32_t first, std::uint32_t count, std::uint32_t* out) {
    dpr_isa_avx2::cpu::expmech_draws(a, first, count, out);
}
