// The door from host/ into the CUDA executor (host/backend/cuda_api.hpp): checks for a device and picks the
// precision's instantiation (cuda/engine_float.cu, cuda/engine_double.cu; the executor is cuda/engine_impl.cuh).
#include <memory>
#include <stdexcept>

#include "host/backend/cuda_api.hpp"

namespace dpr::cuda_api {
namespace detail {
std::unique_ptr<InstanceEngine> make_engine_float(std::size_t, const void*, std::size_t, const EngineShape&);
std::unique_ptr<InstanceEngine> make_engine_double(std::size_t, const void*, std::size_t, const EngineShape&);
} // namespace detail

std::unique_ptr<InstanceEngine> make_cuda_engine(const EngineRequest& r) {
    if (r.per_instance)
        throw std::invalid_argument("the CUDA executor runs shared loss sequences only (per-instance sequences run on "
                                    "the CPU backend)");
    const DeviceInfo info = query_devices();
    if (info.device_count == 0) throw Unavailable(info.message);
    if (r.shape.precision == Precision::Float)
        return detail::make_engine_float(r.learner_index, r.params, r.params_bytes, r.shape);
    return detail::make_engine_double(r.learner_index, r.params, r.params_bytes, r.shape);
}

} // namespace dpr::cuda_api
