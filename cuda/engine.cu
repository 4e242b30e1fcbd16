// The door from host/ into the CUDA executor (host/backend/cuda_api.hpp): checks for a device and picks the
// precision's instantiation (cuda/engine_float.cu, cuda/engine_double.cu; the executor is cuda/engine_impl.cuh).
#include <memory>

#include "host/backend/cuda_api.hpp"

namespace dpr::cuda_api {
namespace detail {
std::unique_ptr<InstanceEngine> make_engine_float(std::size_t, const void*, std::size_t, const EngineShape&);
std::unique_ptr<InstanceEngine> make_engine_double(std::size_t, const void*, std::size_t, const EngineShape&);
} // namespace detail

std::unique_ptr<InstanceEngine> make_cuda_engine(std::size_t learner_index, const void* params,
                                                 std::size_t params_bytes, const EngineShape& shape) {
    const DeviceInfo info = query_devices();
    if (info.device_count == 0) throw Unavailable(info.message);
    if (shape.precision == Precision::Float)
        return detail::make_engine_float(learner_index, params, params_bytes, shape);
    return detail::make_engine_double(learner_index, params, params_bytes, shape);
}

} // namespace dpr::cuda_api
