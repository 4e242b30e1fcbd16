#pragma once
// The steps of a run between a loaded config and the output files: the library under `dpregret run`
// (host/cli/cmd_run.cpp) and host/api/run.hpp, which tests also drive in-process
// (tests/cli/test_cli_fuzz.cpp) exactly as the command does:
//
//   config::Config cfg = config::load_config(path, sets, run_config_inputs());
//   std::vector<PointRecord> recs = resolve_points(cfg);       // UsageError: bad combinations
//   ...                                                          // memory check, output directory
//   check_memory(estimate_run_memory(...), limit);              // UsageError: it would not fit
//   simulate_points(cfg, recs, options);                         // NonFiniteResult: a NaN/inf result
//
// Everything here that rejects input throws UsageError (exit code 2) with a message that names the
// key and its valid range, before anything is simulated.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/api/config_source.hpp"
#include "host/config/config.hpp"
#include "host/engine/loss_file.hpp"
#include "host/engine/point_runner.hpp"
#include "host/results/memory_estimate.hpp"
#include "host/results/outputs.hpp"
#include "host/results/progress_store.hpp"

namespace dpr::api {

/// What load_config validates a run against: the registered learners and adversaries, and the loss
/// file hooks (host/engine/loss_file.hpp). `arrays`: path values that stand for matrices in memory (read in
/// place, never copied; they must outlive the Config).
config::ConfigInputs run_config_inputs(const LossArrays& arrays = {});

/// The files every point reads (the values of KeyType::Path keys: loss files), absolute, each once: what
/// digest_inputs (host/results/input_digest.hpp) makes part of a resumable run's or a shard's identity.
std::vector<std::string> input_paths(const config::Config& cfg);

/// "" unless the learner of point `p` guarantees less privacy than its keys request (the eps or delta of its
/// PrivacyReport above [learner] epsilon / delta): then the warning that says so, with both values. A learner whose
/// calibration follows a paper's constants may do this (e.g. private-bandit-fw with calibration = "paper" when
/// n is not much smaller than T); run.json reports the guarantee in either case.
std::string privacy_excess(const config::Point& p, const learners::PrivacyReport& privacy);

/// "" unless the run computes in float and some learner claims a finite eps: then the warning that the claim is that
/// of exact noise, which the float sampler does not provide (its values lie on a lattice that a set event sees:
/// docs/AUDITS.md "Set events", docs/RANDOMNESS.md "Not a hardened DP release sampler").
std::string float_privacy_warning(const config::Config& cfg, const std::vector<PointRecord>& recs);

/// What one process may hold of a point: instances [first, first + count) with 1 <= count <= 2^32 - 1 (the
/// executors' 32-bit instance count; global ids go up to 2^52, in blocks of 32-bit RNG words, point_runner.hpp).
/// Throws UsageError naming [run] instances and --shard / mpirun otherwise.
void check_instance_ids(std::uint64_t first, std::uint64_t count);

/// Resolves every point's learner and adversary and checks what spans components (decision set vs
/// loss set, the RNG counter layout, instance ids). Throws UsageError.
std::vector<PointRecord> resolve_points(const config::Config& cfg);

/// The launch request ([run] isa, team_threads): an instruction set this CPU lacks (with the CPU
/// backend), or a GPU team size the CUDA backend does not have, is a UsageError naming the key.
void check_launch(const config::Config& cfg, Backend backend);

/// --memory-limit: "auto" (the memory available now, host/results/memory_estimate.hpp), "none" (no
/// check), or a size in bytes with an optional binary suffix K, M, G or T ("512M", "1.5G").
///
/// What is refused (docs/OUTPUTS.md "Memory"): with auto or a size, an estimate above a hard limit of the process --
/// the room left under RLIMIT_AS (which also counts the threads' stacks) or under its cgroup's memory limit, each plus
/// what the process holds -- since the kernel refuses (RLIMIT_AS) or kills (the cgroup) beyond it; with auto, an
/// estimate above MemAvailable plus what the process holds, unless it is at most `floor`; with a size, an estimate
/// above it. none checks nothing.
struct MemoryLimit {
    bool check = true;
    std::uint64_t bytes = 0;  ///< 0 with check: unknown (then it refuses nothing)
    std::string source;       ///< where the limit comes from, for the message
    /// auto: an estimate up to this is not refused for `bytes` (min(kAutoMemoryFloor, MemTotal / 4)); 0 otherwise.
    std::uint64_t floor = 0;
    std::uint64_t address_space = 0; ///< what the estimate may reach under RLIMIT_AS; 0 = no such limit
    std::string address_space_source;
    std::uint64_t cgroup = 0;        ///< what the estimate may reach under the cgroup's limit; 0 = none
    std::string cgroup_source;
};
/// The floor of --memory-limit auto: an estimate of at most 1 GiB (a quarter of the machine when that is less) is not
/// refused for the memory available at the moment, which moves by that much as other processes come and go.
inline constexpr std::uint64_t kAutoMemoryFloor = std::uint64_t{1} << 30;
MemoryLimit parse_memory_limit(const std::string& text);
/// The same with the process's memory as given (tests: a machine whose MemAvailable dipped, a ulimit).
MemoryLimit parse_memory_limit(const std::string& text, const ProcessMemory& process);

/// Refuses (UsageError, exit 2) a run whose estimated peak memory exceeds the limit, with the estimate,
/// its largest terms and the keys that drive them. Also refuses device memory above `device_bytes`
/// (the GPU's, 0 = not checked).
/// `advice` ends the message (what to change; by default a run's keys and --memory-limit none); `what` names
/// the command's work ("run", "merge").
void check_memory(const MemoryEstimate& estimate, const MemoryLimit& limit, std::uint64_t device_bytes = 0,
                  const std::string& advice = "", const std::string& what = "run");

/// What a driver does instead of the default per point, and resumable pieces.
struct ExecuteHooks {
    /// Called after each point instead of finish_point() (a shard writes the per-instance values, an MPI rank
    /// gathers them).
    std::function<void(PointRecord&)> after_point;
    /// Resumable run: each point runs in pieces of `piece_instances` instances, finished pieces are saved to
    /// (and, when resuming, loaded from) the store (host/results/progress_store.hpp).
    const ProgressStore* progress = nullptr;
    std::uint64_t piece_instances = 0;
};

struct SimulateOptions {
    Backend backend = Backend::Cpu;
    unsigned threads = 1;
    std::function<void(std::uint64_t instance_rounds)> on_progress;
    std::function<bool()> interrupted;
    /// A shard (--shard): instances [first_instance, first_instance + instance_count) of every point; 0 = all.
    std::uint64_t first_instance = 0, instance_count = 0;
    ExecuteHooks hooks; ///< without after_point: finish_point() after each point
};

/// Instances per resumable piece: about 2^33 expert-rounds of work on the CPU (seconds to a minute on the
/// development VM), 2^38 on a GPU; a multiple of 16 (a SIMD group), at least 16. A learner that reads L_{t-1}
/// from the engine counts T + d ceil(log2 d) per instance, not T x d (pipeline.cpp piece_work: every piece
/// repeats the shared rows' O(T x d) work).
std::uint64_t auto_piece_instances(const config::Config& cfg, const std::vector<PointRecord>& recs, bool cuda);

/// Runs the points in order; after each, finish_point() checks that everything that would be written is
/// finite (NonFiniteResult otherwise) and condenses it. Returns false if interrupted (the records are
/// then incomplete).
/// The work (instance-rounds x row width) of a group of whole points saved as one piece when every point fits in
/// a piece: --piece-instances x the largest point's per-instance work, or the automatic piece's budget.
double group_work_budget(const config::Config& cfg, const std::vector<PointRecord>& recs, std::uint64_t piece, bool cuda);

bool simulate_points(const config::Config& cfg, std::vector<PointRecord>& recs, const SimulateOptions& options);

} // namespace dpr::api
