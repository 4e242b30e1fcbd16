#pragma once
// The CUDA error macro (docs/ARCHITECTURE.md §8, one check macro): records the expression, file and line and
// throws a typed error; used after every API call and, via DPR_CUDA_CHECK_LAUNCH, after every kernel launch,
// in release builds too.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace dpr::cuda {

struct CudaError : std::runtime_error {
    cudaError_t code;
    CudaError(cudaError_t c, const char* expr, const char* file, int line)
        : std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(c) + " (" + cudaGetErrorString(c) +
                             ") in `" + expr + "` at " + file + ":" + std::to_string(line)),
          code(c) {}
};

} // namespace dpr::cuda

#define DPR_CUDA_CHECK(expr)                                                                          \
    do {                                                                                              \
        const cudaError_t dpr_err_ = (expr);                                                          \
        if (dpr_err_ != cudaSuccess) throw ::dpr::cuda::CudaError(dpr_err_, #expr, __FILE__, __LINE__); \
    } while (0)

#define DPR_CUDA_CHECK_LAUNCH() DPR_CUDA_CHECK(cudaGetLastError())
