#pragma once
// The library API of `dpregret merge` (docs/SCALING.md): the K shard directories of a run in, the unsharded run's
// outputs out. The layer under the command (host/cli/cmd_merge.cpp) and the Python package's dpregret.merge:
//
//   plan_merge()     opens and checks the shards (read_shards: the same run, every shard once), reloads their
//                    config and refuses one that changed, and checks the memory of an in-memory merge: everything
//                    that can refuse the input (UsageError), before the output directory is touched;
//   execute_merge()  joins every point (in memory, or --bounded-memory) and writes summary.csv, final_regret.csv
//                    (points.jsonl) and run.json into the output directory, run.json last.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/config/config.hpp"
#include "host/io/dir.hpp"
#include "host/results/merge_streamed.hpp"
#include "host/results/outputs.hpp"
#include "host/results/shards.hpp"

namespace dpr::api {

struct MergeSpec {
    std::vector<std::string> shards;     ///< the K shard directories, in any order
    bool bounded_memory = false;         ///< hold no point's per-instance values (several passes over the shards)
    std::uint64_t read_rows = 0;         ///< bounded: instances per read block (0: about 8 MiB of the widest array)
    std::size_t select_bytes = kSelectBytes; ///< bounded: memory of the selection's histograms
    std::string memory_limit = "auto";   ///< as --memory-limit (in-memory merges only)
    std::function<bool()> interrupted;   ///< polled between points and rows; true stops the merge (written false)
};

/// What plan_merge resolved. Move-only.
struct MergePlan {
    ShardSet set;
    config::Config config;
    std::vector<PointRecord> records;

    MergePlan() = default;
    MergePlan(MergePlan&&) = default;
    MergePlan& operator=(MergePlan&&) = default;
    MergePlan(const MergePlan&) = delete;
    MergePlan& operator=(const MergePlan&) = delete;
};

/// The first half (see the header). Throws UsageError.
MergePlan plan_merge(const MergeSpec& spec);

/// The second half, into `out` (a directory held by descriptor). True when every file was written; false when
/// spec.interrupted stopped it (then nothing that looks complete was written). UsageError for a shard that is damaged
/// or changed after plan_merge; std::runtime_error when an in-memory merge runs out of memory.
bool execute_merge(MergePlan& plan, const MergeSpec& spec, const io::Dir& out);

} // namespace dpr::api
