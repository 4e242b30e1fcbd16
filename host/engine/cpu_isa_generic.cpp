// The CPU kernels for the fallback: the project's baseline flags (SSE2 on x86-64), any CPU.
// host/engine/cpu_engine_impl.hpp is compiled here with the namespace dpr renamed, so that nothing this
// translation unit instantiates can stand in for a function of another (host/engine/cpu_isa.hpp).
#include "host/engine/cpu_isa.hpp"

#define dpr dpr_isa_generic
#define DPR_CPU_ISA_NAME "generic"
#include "host/engine/cpu_engine_impl.hpp"
#undef dpr

dpr::cpu::IsaEngine* dpr::cpu::make_isa_engine_generic(const IsaEngineArgs& a) {
    return dpr_isa_generic::cpu::make_engine(a);
}

void dpr::cpu::lane_selftest_generic(const LaneSelfTest& t) { dpr_isa_generic::cpu::lane_selftest(t); }

void dpr::cpu::expmech_draws_generic(const ExpMechArgs& a, std::uint32_t first, std::uint32_t count, std::uint32_t* out) {
    dpr_isa_generic::cpu::expmech_draws(a, first, count, out);
}
