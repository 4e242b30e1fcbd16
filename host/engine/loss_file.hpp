#pragma once
// Loss files for the `file` adversary: a (T, d) matrix of losses, as CSV (one row per round, one
// column per expert, optional header) or .npy (float32/float64, shape (T, d)), chosen by extension.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dpr {

/// The largest d a loss file may have: the maximum of [adversary] d.
inline constexpr std::uint64_t kMaxLossFileColumns = 2147483648ull;

/// Number of columns (experts) of the loss file at `path`, in [1, kMaxLossFileColumns]. Throws
/// io::IoError naming the file.
std::uint32_t loss_file_columns(const std::string& path);

/// The whole matrix, row-major, after checking that it has exactly T rows and d columns and that every
/// value lies in [lo, hi]; errors name the file, the row and column (1-based) and the valid range.
std::shared_ptr<const std::vector<double>> load_loss_file(const std::string& path, std::uint64_t T, std::uint32_t d,
                                                          double lo, double hi);

} // namespace dpr
