// The CUDA executor in double precision (cuda/engine_impl.cuh).
#include "cuda/engine_impl.cuh"

namespace dpr::cuda_api::detail {
std::unique_ptr<InstanceEngine> make_engine_double(std::size_t learner_index, const void* params, std::size_t params_bytes,
                                                   const EngineShape& shape) {
    return make_engine<double>(learner_index, params, params_bytes, shape);
}
} // namespace dpr::cuda_api::detail
