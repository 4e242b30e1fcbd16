// Prints the best instruction set of the CPU that runs it (CMake option DPREGRET_CPU_ISAS=native,
// cmake/CpuIsaUnits.cmake); the same tests as host/cpu/cpu_engine.cpp's.
#include <cstdio>
int main() {
    __builtin_cpu_init();
    std::puts(__builtin_cpu_supports("x86-64-v4") ? "avx512" : __builtin_cpu_supports("x86-64-v3") ? "avx2" : "generic");
}
