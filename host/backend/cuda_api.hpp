#pragma once
// The only door from host/ into cuda/ (docs/ARCHITECTURE.md §1). Declared here in plain C++; implemented by
// cuda/*.cu when the CUDA backend is built, and by host/backend/cuda_unavailable.cpp otherwise, whose
// functions report "built without CUDA". Host code never needs an #ifdef.
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "host/backend/instance_engine.hpp"

namespace dpr::cuda_api {

/// Thrown by every entry point of a build without CUDA, and when no device can be used.
struct Unavailable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct DeviceInfo {
    bool compiled = false;  ///< the CUDA backend is part of this build
    int device_count = 0;   ///< visible devices (0 if none or if the driver is missing)
    std::string name;       ///< device 0's name
    int sm_major = 0, sm_minor = 0;
    double memory_gib = 0;
    std::string message;    ///< why no device is usable, if none is
};

/// Never throws: reports what is there (name, capability and memory of the current device, 0 unless
/// use_device() chose another).
DeviceInfo query_devices();

/// Makes device `ordinal % device_count` current for this process (one GPU per MPI rank: the rank's local
/// rank). Returns the device chosen, or -1 when there is none (or no CUDA in this build). Never throws.
int use_device(int ordinal);

/// The CUDA executor for the request (learner, shape, per-instance adversary if any; the device current for this
/// process). Throws Unavailable in a build without CUDA or without a device, CudaError on device errors.
std::unique_ptr<InstanceEngine> make_cuda_engine(const EngineRequest& request);

} // namespace dpr::cuda_api
