#include "host/engine/loss_file.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "host/io/csv.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "kernels/adversaries/file.hpp"

namespace dpr {
namespace {

bool is_npy(const std::string& path) {
    std::string ext = path.size() >= 4 ? path.substr(path.size() - 4) : "";
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext == ".npy";
}

io::Matrix read_matrix(const std::string& path) {
    return is_npy(path) ? io::read_npy_matrix(path) : io::read_csv_matrix(path);
}

} // namespace

std::uint32_t loss_file_columns(const std::string& path) {
    std::uint64_t cols = 0;
    if (is_npy(path)) {
        const io::NpyHeader h = io::read_npy_header(path);
        if (h.shape.size() != 2)
            throw io::IoError(path + ": a loss file must be a 2-D array of shape (T, d), found " +
                              io::shape_string(h.shape));
        cols = h.shape[1];
        if (cols == 0)
            throw io::IoError(path + ": has shape " + io::shape_string(h.shape) +
                              ": a loss file needs d >= 1 columns (one per expert or coordinate)");
    } else {
        cols = io::read_csv_matrix(path).cols;
    }
    if (cols > kMaxLossFileColumns)
        throw io::IoError(path + ": has " + std::to_string(cols) + " columns; d must be at most " +
                          std::to_string(kMaxLossFileColumns) + " ([adversary] d)");
    return static_cast<std::uint32_t>(cols);
}

void check_loss_matrix(const std::string& name, const double* values, std::uint64_t rows, std::uint64_t cols,
                       std::uint64_t T, std::uint32_t d, Geometry loss_set) {
    if (rows != T || cols != d) {
        std::ostringstream os;
        os << name << ": has " << rows << " rows x " << cols << " columns, but the run needs T = " << T
           << " rows (one per round, [run] rounds) and d = " << d
           << " columns (one per expert or coordinate, [adversary] d)";
        throw io::IoError(os.str());
    }
    for (std::uint64_t r = 0; r < rows; ++r) {
        const double* row = values + r * cols;
        if (loss_set == Geometry::Simplex) {
            for (std::uint64_t c = 0; c < cols; ++c)
                if (!(row[c] >= 0.0 && row[c] <= 1.0))
                    throw io::IoError(name + ": row " + std::to_string(r + 1) + ", column " +
                                      std::to_string(c + 1) + ": loss " + io::format_double(row[c]) +
                                      " is outside [0, 1] (experts and bandit losses lie in [0, 1]^d)");
            continue;
        }
        const double norm = adversaries::loss_row_norm(loss_set, row, d);
        if (!(norm <= 1.0 + adversaries::kNormSlack)) {
            const bool ball = loss_set == Geometry::Ball;
            const std::string norm_name = ball ? "||l||_2" : "||l||_1";
            throw io::IoError(
                name + ": row " + std::to_string(r + 1) + ": " + norm_name + " = " + io::format_double(norm) +
                (std::isnan(norm) ? " (a value is NaN)" : " exceeds 1") + "; the losses of the " +
                (ball ? "unit l2 ball" : "cube [-1,1]^d") + " learners must have " + norm_name + " <= 1");
        }
    }
}

std::shared_ptr<const std::vector<double>> load_loss_file(const std::string& path, std::uint64_t T,
                                                          std::uint32_t d, Geometry loss_set) {
    io::Matrix m = read_matrix(path);
    check_loss_matrix(path, m.values.data(), m.rows, m.cols, T, d, loss_set);
    return std::make_shared<const std::vector<double>>(std::move(m.values));
}

} // namespace dpr
