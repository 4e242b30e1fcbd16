#include "host/engine/loss_file.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "host/io/csv.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"

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

std::shared_ptr<const std::vector<double>> load_loss_file(const std::string& path, std::uint64_t T, std::uint32_t d,
                                                          double lo, double hi) {
    io::Matrix m = read_matrix(path);
    if (m.rows != T || m.cols != d) {
        std::ostringstream os;
        os << path << ": has " << m.rows << " rows x " << m.cols << " columns, but the run needs T = " << T
           << " rows (one per round, [run] rounds) and d = " << d << " columns (one per expert)";
        throw io::IoError(os.str());
    }
    for (std::size_t r = 0; r < m.rows; ++r)
        for (std::size_t c = 0; c < m.cols; ++c) {
            const double v = m(r, c);
            if (!(v >= lo && v <= hi)) {
                std::ostringstream os;
                os << path << ": row " << r + 1 << ", column " << c + 1 << ": loss " << io::format_double(v)
                   << " is outside [" << io::format_double(lo) << ", " << io::format_double(hi) << "]";
                throw io::IoError(os.str());
            }
        }
    return std::make_shared<const std::vector<double>>(std::move(m.values));
}

} // namespace dpr
