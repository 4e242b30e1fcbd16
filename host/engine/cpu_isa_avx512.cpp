// The CPU kernels for AVX-512 (x86-64-v4: AVX512F/BW/DQ/VL); compiled with -march=x86-64-v4 (CMakeLists.txt).
// host/engine/cpu_engine_impl.hpp is compiled here with the namespace dpr renamed, so that nothing this
// translation unit instantiates can stand in for a function of another (host/engine/cpu_isa.hpp).
#include "host/engine/cpu_isa.hpp"

#define dpr dpr_isa_avx512
#define DPR_CPU_ISA_NAME "avx512"
#include "host/engine/cpu_engine_impl.hpp"
#undef dpr

dpr::cpu::IsaEngine* dpr::cpu::make_isa_engine_avx512(const IsaEngineArgs& a) {
    return dpr_isa_avx512::cpu::make_engine(a);
}

void dpr::cpu::lane_selftest_avx512(const LaneSelfTest& t) { dpr_isa_avx512::cpu::lane_selftest(t); }

void dpr::cpu::expmech_draws_avx512(const ExpMechArgs& a, std::uint32_t first, std::uint32_t count, std::uint32_t* out) {
    dpr_isa_avx512::cpu::expmech_draws(a, first, count, out);
}
