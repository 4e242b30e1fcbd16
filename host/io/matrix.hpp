#pragma once
// A dense row-major matrix of doubles: what the .npy and CSV readers return.
#include <cstddef>
#include <string>
#include <vector>

namespace dpr::io {

struct Matrix {
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::vector<double> values;            ///< rows * cols values, row-major (C order)
    std::vector<std::string> column_names; ///< CSV header fields if the file had a header, else empty

    double operator()(std::size_t r, std::size_t c) const { return values[r * cols + c]; }
    const double* row(std::size_t r) const { return values.data() + r * cols; }
};

} // namespace dpr::io
