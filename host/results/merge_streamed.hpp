#pragma once
// dpregret merge --bounded-memory (docs/SCALING.md "Memory of the merge"): the outputs of a run
// from its shards without holding a point's per-instance values in memory.
//
// finish_point_streamed() does what merge_point() + finish_point() do, reading the shards' arrays in blocks of
// rows, in instance order:
//   - one pass over every array: the finiteness checks of finish_point (the same messages), the moments of the
//     regret and realised regret of each checkpoint (OrderedMoments, which give the same bits for any split of
//     the instances), the comparator's mean, and the mean, min and max of each diagnostic;
//   - StreamSelect::kPasses passes over the regret arrays: the order statistics summarize() reads (min, max, the
//     type-7 neighbours and the confidence bounds of every quantile level), exactly, by radix selection;
// and leaves final_regret.csv to read the shards again when it is written (PointRecord::stream_final). So
// summary.csv, final_regret.csv and run.json are those of the in-memory merge, byte for byte (tested): the
// quantiles have no rank error. Memory: the read blocks (B instances of each array: about 8 MiB per array of the
// widest, 20-60 MiB in all) plus the selection's histograms, at most 64 KiB per checkpoint per order statistic
// (22 of them) in one batch of checkpoints of at most `select_bytes`; a point may have up to 2^52 instances. The
// price is I/O: the regret arrays are read 2 + 5 x (batches) times, the realised regrets and diagnostics twice,
// the comparators and non-finite rounds once.
#include <cstddef>
#include <cstdint>

#include "host/results/outputs.hpp"
#include "host/results/shards.hpp"

namespace dpr {

/// Default bound on the selection histograms of one batch of checkpoints.
inline constexpr std::size_t kSelectBytes = std::size_t{256} << 20;

/// Fills r.result's metadata, r.result.summary, r.diagnostic_summary and r.stream_final from the shards of `set`, holding
/// O(blocks + histograms) memory whatever the number of instances. Throws ShardError for shards that do not fit
/// and NonFiniteResult for a value that would be written and is not finite.
/// expected: the instances the config asks for (ShardError before any pass if the shards hold another number);
/// read_rows: instances per read block (0: about 2^20 doubles of the widest array).
void finish_point_streamed(const ShardSet& set, PointRecord& r, std::uint64_t expected,
                           std::size_t select_bytes = kSelectBytes, std::uint64_t read_rows = 0);

} // namespace dpr
