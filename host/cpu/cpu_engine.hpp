#pragma once
#include <cstddef>
#include <memory>

#include "host/backend/instance_engine.hpp"
#include "host/backend/adversary_runtime.hpp"

namespace dpr {

/// The CPU executor for the request, on the instruction set, precision and lane layout of its shape
/// (shape.launch.isa "auto" = the best this CPU has), on request.threads threads; with request.per_instance,
/// each instance generates its own sequence. Throws std::invalid_argument for an ISA this CPU or build does not
/// support.
std::unique_ptr<InstanceEngine> make_cpu_engine(const EngineRequest& request);

} // namespace dpr
