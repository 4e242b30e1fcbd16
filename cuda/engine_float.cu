// The CUDA executor in float precision (cuda/engine_impl.cuh); a translation unit of its own so that the two
// precisions compile in parallel.
#include "cuda/engine_impl.cuh"

namespace dpr::cuda_api::detail {
std::unique_ptr<InstanceEngine> make_engine_float(std::size_t learner_index, const void* params, std::size_t params_bytes,
                                                  const EngineShape& shape) {
    return make_engine<float>(learner_index, params, params_bytes, shape);
}
} // namespace dpr::cuda_api::detail
