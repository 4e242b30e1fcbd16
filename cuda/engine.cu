// The door from host/ into the CUDA executor (host/backend/cuda_api.hpp): checks for a device and picks the
// precision's instantiation (cuda/engine_float.cu, cuda/engine_double.cu; the executor is cuda/engine_impl.cuh).
#include <memory>
#include <stdexcept>

#include "host/backend/cuda_api.hpp"

namespace dpr::cuda_api {
namespace detail {
std::unique_ptr<InstanceEngine> make_engine_float(const EngineRequest&);
std::unique_ptr<InstanceEngine> make_engine_double(const EngineRequest&);
} // namespace detail

std::unique_ptr<InstanceEngine> make_cuda_engine(const EngineRequest& r) {
    const DeviceInfo info = query_devices();
    if (info.device_count == 0) throw Unavailable(info.message);
    if (r.shape.precision == Precision::Float) return detail::make_engine_float(r);
    return detail::make_engine_double(r);
}

} // namespace dpr::cuda_api
