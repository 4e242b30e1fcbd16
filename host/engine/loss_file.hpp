#pragma once
// Loss files for the `file`, `file-ball` and `file-cube` adversaries (kernels/adversaries/file.hpp): a
// (T, d) matrix of losses, as CSV (one row per round, one column per expert or coordinate, optional
// header) or .npy (float32/float64, shape (T, d)), chosen by extension.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/core/sets.hpp"

namespace dpr {

/// The largest d a loss file may have: the maximum of [adversary] d.
inline constexpr std::uint64_t kMaxLossFileColumns = 2147483648ull;

/// Number of columns (experts) of the loss file at `path`, in [1, kMaxLossFileColumns]. Throws
/// io::IoError naming the file.
std::uint32_t loss_file_columns(const std::string& path);

/// A (rows, cols) loss matrix, row-major, that the caller holds in memory (the Python package's arrays,
/// docs/PYTHON.md), standing for the loss file named by its key in the map below. Nothing here copies or owns
/// it: it must outlive every Config that reads it.
struct LossArray {
    const double* data = nullptr;
    std::uint64_t rows = 0, cols = 0;
};
using LossArrays = std::map<std::string, LossArray>;

/// load_loss_file's checks of a matrix already in memory (`name` stands for the file in the messages).
void check_loss_matrix(const std::string& name, const double* values, std::uint64_t rows, std::uint64_t cols,
                       std::uint64_t T, std::uint32_t d, Geometry loss_set);

/// The whole matrix, row-major, after checking that it has exactly T rows and d columns and that every
/// row lies in `loss_set` (kernels/core/sets.hpp): entries in [0, 1] for the simplex, ||l_t||_2 <= 1 for
/// the ball, ||l_t||_1 <= 1 for the cube (norms up to adversaries::kNormSlack above 1 are rounding).
/// Errors name the file, the row (1-based) and the column or the norm, with the value in its shortest
/// exact form, and the valid range.
std::shared_ptr<const std::vector<double>> load_loss_file(const std::string& path, std::uint64_t T, std::uint32_t d,
                                                          Geometry loss_set);

} // namespace dpr
