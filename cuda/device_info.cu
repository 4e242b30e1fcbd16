// CUDA implementation of cuda_api::query_devices().
#include "cuda/check.cuh"
#include "host/backend/cuda_api.hpp"

namespace dpr::cuda_api {

DeviceInfo query_devices() {
    DeviceInfo info;
    info.compiled = true;
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        info.message = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
        cudaGetLastError(); // clear the sticky error so later queries start clean
        return info;
    }
    info.device_count = n;
    if (n == 0) {
        info.message = "no CUDA device visible";
        return info;
    }
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) current = 0;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, current) == cudaSuccess) {
        info.name = prop.name;
        info.sm_major = prop.major;
        info.sm_minor = prop.minor;
        info.memory_gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
    }
    return info;
}

int use_device(int ordinal) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        return -1;
    }
    const int d = (ordinal % n + n) % n;
    if (cudaSetDevice(d) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return d;
}

} // namespace dpr::cuda_api
