#pragma once
#include <cstddef>
#include <memory>

#include "host/backend/instance_engine.hpp"
#include "host/engine/adversary_runtime.hpp"

namespace dpr {

/// The CPU executor for learner number `learner_index` of learners::AllLearners with resolved `params`, on
/// the instruction set, precision and lane layout of `shape` (shape.launch.isa "auto" = the best this CPU
/// has). With `per_instance` non-null, each instance generates its own sequence from it. Throws
/// std::invalid_argument for an ISA this CPU or build does not support.
std::unique_ptr<InstanceEngine> make_cpu_engine(std::size_t learner_index, const void* params,
                                                const EngineShape& shape, unsigned threads,
                                                const AdversaryRuntime* per_instance);

} // namespace dpr
