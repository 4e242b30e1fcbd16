// The CUDA executor in float precision (cuda/engine_impl.cuh); a translation unit of its own so that the two
// precisions compile in parallel.
#include "cuda/engine_impl.cuh"

namespace dpr::cuda_api::detail {
std::unique_ptr<InstanceEngine> make_engine_float(const EngineRequest& request) {
    return make_engine<float>(request);
}
} // namespace dpr::cuda_api::detail
