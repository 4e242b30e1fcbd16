#pragma once
// NumPy .npy files (format versions 1.0-3.0,
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
//
// Writing: float64 ('<f8'), C order, any number of dimensions; the header is padded so that the data
// starts at a multiple of 64 bytes, as NumPy itself does. NpyWriter streams the data, so an N x T
// result never has to be held in memory; write_npy() writes a whole array atomically.
//
// Reading: float32 or float64, little-endian, C order. read_npy() returns any shape; read_npy_matrix()
// requires a 2-D array (rows, cols), the form of loss files ((T, N) = rounds x experts). Every error
// is an IoError whose message names the file and what is wrong with it (bad magic, unsupported dtype
// or version, Fortran order, wrong number of dimensions, truncated or oversized data).
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "host/io/dir.hpp"
#include "host/io/matrix.hpp"

namespace dpr::io {

using Shape = std::vector<std::uint64_t>;

/// Number of elements of `shape` (1 for a 0-d array). Throws IoError on 64-bit overflow.
std::uint64_t shape_size(const Shape& shape);
/// Python's spelling of a shape tuple: "()", "(3,)", "(3, 4)".
std::string shape_string(const Shape& shape);

/// The complete header (magic, version, length, dict, padding) of a float64 C-order array.
std::string npy_header_f8(const Shape& shape);

/// Streams a float64 array: the header is written by the constructor, then exactly shape_size(shape)
/// values in C order through write(), then finish().
class NpyWriter {
  public:
    NpyWriter(std::ostream& os, Shape shape);
    /// Appends `count` values. Throws IoError if that exceeds the declared shape.
    void write(const double* values, std::size_t count);
    /// Throws IoError unless exactly shape_size(shape) values were written.
    void finish();

    std::uint64_t expected() const { return expected_; }
    std::uint64_t written() const { return written_; }

  private:
    std::ostream& os_;
    Shape shape_;
    std::uint64_t expected_;
    std::uint64_t written_ = 0;
};

/// Writes `data` (shape_size(shape) values, C order) as one .npy array to a stream.
void write_npy(std::ostream& os, const Shape& shape, const double* data);
/// Writes `data` to `path` atomically (AtomicFile): on any error no file is left behind.
void write_npy(const std::string& path, const Shape& shape, const double* data);
/// The same for `name` in a directory held by descriptor (never through a link: host/io/dir.hpp).
void write_npy(const Dir& dir, const std::string& name, const Shape& shape, const double* data);

enum class NpyDtype { Float32, Float64 };

/// What a .npy header declares.
struct NpyHeader {
    int major = 1, minor = 0; ///< format version
    NpyDtype dtype = NpyDtype::Float64;
    Shape shape;
    std::size_t data_offset = 0; ///< bytes from the start of the file to the first value
};

/// An array read from a .npy file, widened to double (exact for float32).
struct NpyArray {
    Shape shape;
    NpyDtype stored_as = NpyDtype::Float64;
    std::vector<double> values; ///< C order
};

/// Parses and validates the header of `path` (does not read the data, but checks that the file size
/// matches the declared shape). Useful to memory-map a large file.
NpyHeader read_npy_header(const std::string& path);
/// The same for an open file (host/io/dir.hpp), read from its start; the stream is left after the header.
NpyHeader read_npy_header(InFile& file);
/// Reads a float32/float64 little-endian C-order array of any shape.
NpyArray read_npy(const std::string& path);
NpyArray read_npy(InFile& file);
/// `name` in a directory held by descriptor: never a link or a special file (UnsafePathError).
NpyArray read_npy(const Dir& dir, const std::string& name);
/// Reads a 2-D float32/float64 array as a (rows, cols) matrix; any other number of dimensions is an
/// error naming the shape found.
Matrix read_npy_matrix(const std::string& path);

} // namespace dpr::io
