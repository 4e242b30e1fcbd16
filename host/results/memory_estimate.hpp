#pragma once
// Peak memory of a run, estimated from the resolved config before anything is simulated, so that a run
// that cannot fit is refused with the estimate (exit 2) instead of dying with std::bad_alloc hours in.
//
// What is counted (bytes; I = instances, C = checkpoints of the point, d, T, W = the learner's
// per-instance state LearnerRuntime::state_bytes, nd = its diagnostics). The config and the resolved
// points already exist when this runs: they are counted as what the process holds now (its resident set),
// and the rest is what the run will still allocate:
//
//   per point, kept until the output is written (summed over points):
//     results      I x (2 + nd) doubles (final regret, realised regret, diagnostics)
//                  + C summary rows (sizeof(CheckpointRow)) + the checkpoint list
//                  + with keep_instances (the Python package's Result.regret(p)): every instance's regret and
//                  realised regret at every checkpoint, its comparator when per instance, and its first
//                  non-finite round: I x ((2 + per_instance) x C + 1) doubles
//   per point, while it runs (the largest point counts, points run one after another):
//     state        I x W                                 (the executor's workspace arrays)
//     totals       I x sizeof(sim::InstanceTotals)
//     checkpoints  8 x I x C doubles: expected/realised in the executor, in CpuEngine, their copies in
//                  run_point and PointResult's regrets, all alive when run_point returns; and the
//                  diagnostics and first non-finite rounds twice (2 x I x (nd + 1))
//     loss chunk   chunk rows = min(T, chunk_bytes / 8d), rows padded to 16 lanes (pitch): the runner's
//                  rows and the executor's exact and real copies (3 x rows x pitch doubles) + d (L); with
//                  per-instance sequences threads x 2 x rows x pitch + I x (d + 3C) doubles instead
//     summary      2 x I doubles (finish_point's columns)
//   once:
//     loss files   T x d doubles per distinct file (held by the config; already loaded: not counted)
//     outputs      run.json with at most kInlinePoints points inline (4 KiB each); the other files are
//                  streamed
//
// The CPU executor's allocations are in host/cpu/cpu_engine.cpp and cpu_engine_impl.hpp; when they
// change, change point_memory() (memory_estimate.cpp). Arithmetic saturates at UINT64_MAX, so a d or an
// instance count whose state does not fit in 64 bits is refused too.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/config/config.hpp"
#include "host/results/outputs.hpp"

namespace dpr {

struct MemoryTerm {
    std::string what;         ///< "learner state of point 3: 1 instance x 5.5 GiB ([adversary] d = ...)"
    std::uint64_t bytes = 0;
};

struct MemoryEstimate {
    std::uint64_t host_bytes = 0;   ///< the total above
    std::uint64_t device_bytes = 0; ///< with the CUDA backend: state + checkpoint buffers of the largest point
    std::vector<MemoryTerm> terms;  ///< the contributions, largest first
    /// Address space the run maps besides host_bytes: its threads' stacks (threads x thread_stack_bytes()), reserved
    /// but barely touched. Only RLIMIT_AS, which counts mappings, sees it.
    std::uint64_t address_space_extra = 0;
};

/// Estimates the run `recs` of `cfg` with `threads` CPU threads and loss chunks of at most `chunk_bytes`
/// (PointJob::chunk_bytes); `cuda`: the learner state lives on the device.
/// `instances`: what this process runs of each point (a shard's or rank's share); 0 = [run] instances.
/// `keep_instances`: finish_point keeps the per-instance arrays of every point (finish_point(r, true)).
MemoryEstimate estimate_run_memory(const config::Config& cfg, const std::vector<PointRecord>& recs, unsigned threads,
                                   std::size_t chunk_bytes, bool cuda, std::uint64_t instances = 0,
                                   bool keep_instances = false);

/// What a process writes into its output directory: a run's pieces and results, a shard's pieces and arrays, or
/// (rank 0 of an MPI run) the results of every rank and no pieces.
enum class DiskRole { Run, Shard, MpiRoot };

/// Disk a process writes into its output directory, estimated like the memory (docs/OUTPUTS.md "Before anything
/// is simulated"): its finished pieces, 8 x I x (2C + C' + nd + 1) bytes per point (C' = C for per-instance
/// sequences, else 0) -- twice for a shard, whose arrays coexist with the pieces until it completes, none for
/// MPI rank 0 -- plus the result files while the pieces still exist: final_regret.csv at 24 bytes per number of
/// each row ((2 + nd) per instance and point, plus the swept values), summary.csv at 400 bytes per point and
/// checkpoint, run.json. I = `instances` (this process's share; 0 = [run] instances); MPI rank 0 writes the
/// results of all [run] instances.
std::uint64_t estimate_run_disk(const config::Config& cfg, const std::vector<PointRecord>& recs, std::uint64_t instances,
                                DiskRole role);
/// Free space for an unprivileged user in the file system of `dir` (statvfs f_bavail x f_frsize); nullopt if it
/// cannot be read. 0 is a full file system, not "unknown".
std::optional<std::uint64_t> available_disk_bytes(const std::string& dir);
/// Whether `need` bytes fit in `free` bytes; where the free space is unknown, assumed to (every write still checks
/// its errors). A full file system (free = 0) fits nothing.
bool fits_on_disk(std::uint64_t need, std::optional<std::uint64_t> free);

/// What this process holds now (resident set, /proc/self/statm); 0 if unknown. estimate_run_memory counts it (the
/// config and its resolved points: about 4 KiB per point of a sweep), and an automatic limit adds it to the memory
/// available, so that the estimate is of the process's peak.
std::uint64_t resident_memory_bytes();

/// What bounds the memory of this process (docs/OUTPUTS.md "Memory"): the machine's, the address-space limit, the
/// cgroup's. 0 in a field = unknown or no limit.
struct ProcessMemory {
    std::uint64_t mem_total = 0;          ///< MemTotal of /proc/meminfo
    std::uint64_t mem_available = 0;      ///< MemAvailable of /proc/meminfo: what can be taken now without swapping
    std::uint64_t resident = 0;           ///< VmRSS of /proc/self/status: what this process holds
    std::uint64_t address_space = 0;      ///< RLIMIT_AS (soft; ulimit -v, a batch system's cap enforced that way)
    std::uint64_t address_space_used = 0; ///< VmSize of /proc/self/status: the mapped address space RLIMIT_AS counts
    /// The cgroup limit that leaves the least room, over the process's cgroup and its ancestors (a batch job's limit
    /// is often on the job's cgroup, above the step's): memory.max (v2) or memory.limit_in_bytes (v1).
    std::uint64_t cgroup_limit = 0;
    std::uint64_t cgroup_used = 0; ///< that cgroup's usage less its inactive page cache, which is reclaimed first
    std::string cgroup_file;       ///< the file that holds cgroup_limit
};

/// Where read_process_memory looks; the defaults are this process's. Tests point them at fake contents.
struct MemoryFiles {
    std::string meminfo = "/proc/meminfo";
    std::string self = "/proc/self";             ///< its status (VmSize, VmRSS) and cgroup (the cgroup's path)
    std::string cgroup_root = "/sys/fs/cgroup";  ///< v2 at the root or under unified/, v1 under memory/
};

/// Reads the files of `files`; `address_space_limit` is RLIMIT_AS's soft limit (0 = none).
ProcessMemory read_process_memory(const MemoryFiles& files, std::uint64_t address_space_limit);
/// This process's: the default files and getrlimit(RLIMIT_AS).
ProcessMemory read_process_memory();

/// The stack a new thread reserves (glibc: RLIMIT_STACK, 8 MiB by default).
std::uint64_t thread_stack_bytes();

/// Memory the run may still take: MemAvailable of /proc/meminfo, lowered to the room left under the
/// cgroup's memory limit if there is one. `source` (if not null) says which. 0 if unknown.
std::uint64_t available_memory_bytes(std::string* source = nullptr);

/// "15.7 GiB", "640 MiB", "12 KiB", "17 bytes".
std::string human_bytes(std::uint64_t bytes);

/// a + b and a * b, saturating at UINT64_MAX.
std::uint64_t sat_add(std::uint64_t a, std::uint64_t b);
std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b);

} // namespace dpr
