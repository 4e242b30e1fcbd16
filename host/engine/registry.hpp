#pragma once
// Host view of the component registries (kernels/learners/registry.hpp,
// kernels/adversaries/registry.hpp): find a component by name, resolve its keys into Params, and
// erase its type for the executors. Nothing here needs editing when a component is added.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "host/backend/adversary_runtime.hpp"
#include "kernels/core/params.hpp"
#include "kernels/learners/common.hpp"

namespace dpr {

struct LearnerRuntime : ComponentRuntime {
    unsigned loss_families = loss_bit(LossFamily::Linear); ///< L::kLossFamilies (kernels/core/sets.hpp)
    learners::PrivacyReport privacy;
    std::vector<std::string> diagnostic_names; ///< the learner's kDiagnostics, if any
    bool reads_cumulative = false; ///< L::kReadsCumulative: the engine passes L_{t-1} rows with the losses
    std::uint64_t state_bytes = 0; ///< per-instance learner state (its workspace), 64-bit: d may be ~2^32;
                                   ///< UINT64_MAX when it does not fit in 64 bits
};

/// Names in registry order.
std::vector<std::string> learner_names();
std::vector<std::string> adversary_names();

/// Throws std::invalid_argument for an unknown name (the config layer has validated names already).
LearnerRuntime resolve_learner(const std::string& name, const KeyValues& kv, const Problem& pb);
AdversaryRuntime resolve_adversary(const std::string& name, const KeyValues& kv, const Problem& pb);

/// Applies a planted privacy bug (learners::Planted; `dpregret audit --allow-planted` only) to a resolved
/// learner's Params, leaving its privacy report that of the correct learner. False (nothing changed) when
/// the learner has no such variant.
bool plant_learner(LearnerRuntime& learner, learners::Planted bug);

} // namespace dpr
