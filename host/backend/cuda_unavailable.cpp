// Built only without CUDA (see CMakeLists.txt): every CUDA entry point says so.
#include "host/backend/cuda_api.hpp"

namespace dpr::cuda_api {

DeviceInfo query_devices() {
    DeviceInfo info;
    info.compiled = false;
    info.message = "built without CUDA (no nvcc found at configure time, or DPREGRET_CUDA=OFF)";
    return info;
}

int use_device(int) { return -1; }

std::unique_ptr<InstanceEngine> make_cuda_engine(const EngineRequest&) {
    throw Unavailable("the CUDA backend is not part of this build (configure with nvcc available)");
}

} // namespace dpr::cuda_api
