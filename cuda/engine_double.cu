// The CUDA executor in double precision (cuda/engine_impl.cuh).
#include "cuda/engine_impl.cuh"

namespace dpr::cuda_api::detail {
std::unique_ptr<InstanceEngine> make_engine_double(const EngineRequest& request) {
    return make_engine<double>(request);
}
} // namespace dpr::cuda_api::detail
