#pragma once
#include <cstddef>
#include <memory>

#include "host/backend/instance_engine.hpp"
#include "host/engine/adversary_runtime.hpp"

namespace dpr {

/// The CPU executor for learner number `learner_index` of learners::AllLearners with resolved
/// `params`. With `per_instance` non-null, each instance generates its own sequence from it.
std::unique_ptr<InstanceEngine> make_cpu_engine(std::size_t learner_index, const void* params,
                                                const EngineShape& shape, unsigned threads,
                                                const AdversaryRuntime* per_instance);

} // namespace dpr
