#pragma once
// A point's per-instance results as .npy files, the one format of shard directories (host/results/shards.hpp) and
// of a resumable run's finished pieces (host/results/progress_store.hpp):
//   <prefix>.regret.npy       instances x checkpoints, float64 (cumulative <l_t,x_t> - comparator)
//   <prefix>.realized.npy     instances x checkpoints (cumulative l_t(i_t) - comparator)
//   <prefix>.comparator.npy   checkpoints (a shared sequence) or instances x checkpoints (per-instance sequences)
//   <prefix>.diagnostics.npy  instances x the learner's diagnostics
//   <prefix>.nonfinite.npy    instances: the first round whose charged loss was not finite (0 = none)
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "host/engine/point_runner.hpp"
#include "host/io/dir.hpp"

namespace dpr {

/// The files write_outcome_arrays writes, after the prefix.
inline constexpr const char* kOutcomeSuffixes[] = {".regret.npy", ".realized.npy", ".comparator.npy",
                                                   ".diagnostics.npy", ".nonfinite.npy"};
inline constexpr std::size_t kOutcomeArrays = sizeof kOutcomeSuffixes / sizeof kOutcomeSuffixes[0];

/// Writes `o`'s arrays into `dir` (by descriptor), each file atomically; returns the file names written.
std::vector<std::string> write_outcome_arrays(const io::Dir& dir, const std::string& prefix, const PointResult& o,
                                              std::size_t ndiag, bool per_instance_cmp);

/// Reads the arrays of `instances` instances at `ncheck` checkpoints into `o` (its other fields untouched). Throws
/// std::runtime_error naming the file when one is missing, unreadable or of another shape (io::UnsafePathError
/// when it is a link or a special file).
void read_outcome_arrays(const io::Dir& dir, const std::string& prefix, std::uint64_t instances, std::size_t ncheck,
                         std::size_t ndiag, bool per_instance_cmp, PointResult& o);

} // namespace dpr
