#pragma once
// One annotation for device-callable code (docs/ARCHITECTURE.md §1): `__host__ __device__` under nvcc, nothing
// under a host compiler. Everything in kernels/ is marked with it and is header-only: it allocates
// nothing, throws nothing and does no I/O, so the same source runs on a CPU thread and on a GPU.
//
// DPR_CPU_CALL marks a device-callable function that is inlined on the GPU (where a call costs a stack frame) but
// compiled once per instantiation and called on the CPU: for a lane kernel that only some runs take (a mechanism
// other than the default one, docs/MECHANISMS.md §3.3), so that it is not inlined into every learner's round and
// team type. It changes no result (-ffp-contract=off: the same operations, in the same order).
#if defined(__CUDACC__)
#define DPR_HD __host__ __device__
#define DPR_FORCEINLINE __forceinline__
#define DPR_CPU_CALL __forceinline__
#else
#define DPR_HD
#define DPR_FORCEINLINE inline __attribute__((always_inline))
#define DPR_CPU_CALL __attribute__((noinline))
#endif
