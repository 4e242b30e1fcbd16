#pragma once
// What a backend does for one config point: hold the state of all its instances and advance them
// chunk by chunk through the shared loss sequence (docs/ARCHITECTURE.md §3). Implemented by the CPU
// executor (host/cpu/cpu_engine.cpp) and the CUDA backend (cuda/engine.cu); plain C++, no CUDA types.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/sim/uncharged.hpp"

namespace dpr {

/// The arithmetic of the noise, scores and weights (docs/RANDOMNESS.md): cumulative losses and regret sums
/// are double in both.
enum class Precision { Double, Float };

/// How an executor lays a point out, as requested (every field may be "auto"); the policy it resolves to is
/// printed by InstanceEngine::policy() into run.json.
struct LaunchRequest {
    std::string lanes = "auto"; ///< what vector lanes hold: "instances" or "coordinates" (both backends)
    std::string isa = "auto";   ///< CPU instruction set: "avx512", "avx2", "generic" (the fallback)
    unsigned team_threads = 0;  ///< GPU threads per instance with coordinate lanes: 0 = auto, 32, 256 or 1024
    /// GPU: where an instance's state lives during a launch: "global" (device memory, every round), "shared"
    /// (copied on chip for the launch's rounds, the arrays that fit: cuda/stage_plan.hpp), "registers" (a one-row
    /// state in registers for the launch's rounds, where the learner allows it), "auto"
    std::string gpu_state = "auto";
};

struct EngineShape {
    std::uint32_t d = 0;
    std::uint64_t T = 0;
    std::uint32_t instances = 0;
    std::uint32_t first_instance = 0; ///< instance ids are first_instance .. first_instance + instances - 1
    std::uint32_t seed = 0;
    std::uint32_t stream = 0;
    std::vector<std::uint64_t> checkpoints; ///< sorted, last = T
    /// Rounds whose charge is left out of the cumulative sums (none by default): an audit's t0 or canaries, see
    /// sim::advance.
    sim::UnchargedRounds uncharged;
    Precision precision = Precision::Double;
    LaunchRequest launch;
};

struct AdversaryRuntime; // host/backend/adversary_runtime.hpp

/// The executors. host/engine/point_runner.hpp chooses one (choose_backend) and builds it (make_engine).
enum class Backend { Auto, Cpu, Cuda };

/// What an executor is built for. Both factories take it (make_cpu_engine, host/cpu/cpu_engine.hpp;
/// cuda_api::make_cuda_engine, host/backend/cuda_api.hpp); `shape` and `*per_instance` must outlive the engine.
struct EngineRequest {
    std::size_t learner_index;            ///< position in learners::AllLearners
    const void* params;                   ///< its resolved Params (trivially copyable)
    std::size_t params_bytes;             ///< sizeof those Params (the CUDA executor checks it)
    const EngineShape& shape;
    unsigned threads;                     ///< CPU threads (the CUDA executor runs on the current device)
    const AdversaryRuntime* per_instance; ///< non-null: every instance plays its own sequence from it, made on the
                                          ///< host by both executors (host/backend/own_rows.hpp)
};

class InstanceEngine {
public:
    virtual ~InstanceEngine() = default;
    /// Rounds [t0, t1) with the shared loss rows `losses` ((t1 - t0) x d, row-major, host memory), or
    /// nullptr when sequences are per instance. `cum` (same shape): row t holds L_{t-1} = sum_{s<t} l_s, for
    /// learners that read it (kReadsCumulative), else nullptr.
    virtual void advance(std::uint64_t t0, std::uint64_t t1, const double* losses, const double* cum) = 0;
    /// Cumulative expected / realized loss per instance and checkpoint (instances x checkpoints).
    virtual void results(std::vector<double>& expected, std::vector<double>& realized) = 0;
    /// Per-instance comparator values (instances x checkpoints); only with per-instance sequences.
    virtual void comparators(std::vector<double>& out) = 0;
    /// The learner's diagnostics per instance (instances x count, see kernels/learners/common.hpp),
    /// read after the last round; empty if it declares none.
    virtual void diagnostics(std::vector<double>& out) = 0;
    /// Per instance: the first round whose charged loss was not finite (0 = none), see
    /// sim::InstanceTotals::first_nonfinite_round.
    virtual void first_nonfinite_rounds(std::vector<std::uint64_t>& out) = 0;
    /// Human-readable launch policy (threads, team size, ...) for run.json.
    virtual std::string policy() const = 0;
};

} // namespace dpr
