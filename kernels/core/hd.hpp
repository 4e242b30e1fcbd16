#pragma once
// One annotation for device-callable code (docs/ARCHITECTURE.md §1): `__host__ __device__` under nvcc, nothing
// under a host compiler. Everything in kernels/ is marked with it and is header-only: it allocates
// nothing, throws nothing and does no I/O, so the same source runs on a CPU thread and on a GPU.
#if defined(__CUDACC__)
#define DPR_HD __host__ __device__
#define DPR_FORCEINLINE __forceinline__
#else
#define DPR_HD
#define DPR_FORCEINLINE inline __attribute__((always_inline))
#endif
