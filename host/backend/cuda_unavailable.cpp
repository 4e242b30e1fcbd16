// Built only without CUDA (see CMakeLists.txt): every CUDA entry point says so.
#include "host/backend/cuda_api.hpp"

namespace dpr::cuda_api {

DeviceInfo query_devices() {
    DeviceInfo info;
    info.compiled = false;
    info.message = "built without CUDA (no nvcc found at configure time, or DPREGRET_CUDA=OFF)";
    return info;
}

} // namespace dpr::cuda_api
