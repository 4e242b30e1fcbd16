#pragma once
// Shards of a run and their exact merge (docs/SCALING.md):
//
//   dpregret run CONFIG.toml --shard 2/7 --out s2    instances [floor(2N/7), floor(3N/7)) of every point
//   dpregret merge s0 s1 ... s6 --out DIR              summary.csv and final_regret.csv byte-identical to the
//                                                      unsharded run's; run.json equal but for timing and host
//
// An instance's numbers depend only on (config, instance id) (docs/RANDOMNESS.md), so a shard runs its instances
// with their global ids and keeps every per-instance value the outputs are computed from: per point, the arrays
// p<index>.{regret,realized,comparator,diagnostics,nonfinite}.npy of host/results/outcome_files.hpp,
// and shard.json, written last (a directory with shard.json is a complete shard): the format, version, commit,
// RNG layout, the config path, overrides and resolved TOML, the shard's index, count and instance range, and per
// point the backend, launch policy and simulation time. merge concatenates the arrays in instance order and then
// runs exactly the code a run runs after its points (finish_point, write_outputs), so quantiles stay exact. It
// holds every instance's values of one point at a time: 8 x instances x (2 x checkpoints + diagnostics) bytes.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "host/config/config.hpp"
#include "host/io/dir.hpp"
#include "host/results/input_digest.hpp"
#include "host/results/outputs.hpp"

namespace dpr {

struct ShardSpec {
    std::uint64_t index = 0; ///< i, 0-based
    std::uint64_t count = 1; ///< k
};

/// "I/K" with 0 <= I < K; throws std::invalid_argument naming --shard and the valid form.
ShardSpec parse_shard(const std::string& text);

/// Shard i of k of N instances: [floor(i N / k), floor((i + 1) N / k)).
void shard_range(const ShardSpec& s, std::uint64_t N, std::uint64_t* first, std::uint64_t* count);

/// Bad shards given to merge: different configs, versions, layouts, missing or repeated indices, incomplete
/// shards. The CLI reports it with exit code 2.
struct ShardError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Writes a finished point's per-instance arrays into the shard directory (each file atomically) and releases
/// them from the record; returns the file names written (in `dir`).
std::vector<std::string> write_shard_point(const io::Dir& dir, PointRecord& r);

/// Writes shard.json last: the shard is complete. It records the size and CRC-32 of every point's arrays (read back
/// from `dir`) and the digests of the run's input files, which merge verifies.
void write_shard_manifest(const io::Dir& dir, const config::Config& cfg, const std::vector<PointRecord>& recs,
                          const RunMeta& meta, const ShardSpec& shard, std::uint64_t first, std::uint64_t count,
                          const std::vector<InputFile>& inputs);

/// What merge needs from a set of shards, after checking that they belong together.
struct ShardSet {
    std::vector<std::string> dirs; ///< in shard order 0 .. k-1, as given
    /// The same directories, held by descriptor (host/io/dir.hpp): every file of a shard is read from here, never
    /// through a link, so a shard directory opened once cannot be swapped for another during the merge.
    std::vector<std::shared_ptr<const io::Dir>> handles;
    std::string config_path;     ///< the absolute path merge reloads (meta.config_path: as the shards were given it)
    std::vector<std::string> overrides;
    std::string resolved_toml;
    RunMeta meta; ///< timing and host fields of the merged run.json (see docs/SCALING.md)
    /// Per shard (in shard order), its shard.json as read_shards() parsed it: scan_point() reads each point's entry
    /// from here instead of parsing the file again for every point.
    std::vector<std::shared_ptr<const nlohmann::json>> manifests;
};

/// Opens every directory and reads its shard.json, and checks that they are the k shards of one run of this binary's
/// version and layout: the same resolved configuration (however its --set overrides were spelled), the same input
/// file contents, and instance ranges that tile [0, N) exactly (ShardError with the reason otherwise).
ShardSet read_shards(const std::vector<std::string>& dirs);

/// One shard's arrays of one point: host/results/outcome_files.hpp's files named `prefix`<suffix> in `dir`.
struct ShardPiece {
    std::shared_ptr<const io::Dir> dir;
    std::string prefix; ///< "p<point>"
    std::uint64_t instances = 0;
};

/// Reads what every shard's shard.json says of point r (checkpoints, backend, launch policy, wall time) into
/// r.result, with the shared comparator when the sequence is shared (checked equal across the shards), verifies
/// the size and checksum of each of the point's arrays, and returns where each shard's arrays are, in instance
/// order. ShardError if the shards disagree or an array is not what its shard wrote.
std::vector<ShardPiece> scan_point(const ShardSet& set, PointRecord& r);

/// Fills every record's outcome with the shards' per-instance values, concatenated in instance order (the
/// records come from resolve_points on the shards' config). ShardError if a shard's arrays do not fit, or if the
/// point has more than 2^32 - 1 instances (the bounded-memory merge, host/results/merge_streamed.hpp, takes those),
/// or another number than `expected` (the config's), before reading any array.
void merge_point(const ShardSet& set, PointRecord& r, std::uint64_t expected);

/// ShardError unless the shards hold `expected` instances of point r (the config's [run] instances).
void check_instance_total(const std::vector<ShardPiece>& pieces, const PointRecord& r, std::uint64_t expected);

} // namespace dpr
