#pragma once
// CSV (RFC 4180 subset: comma separator, optional double quotes, CR LF or LF line ends).
//
// Writing: numbers in the shortest form that reads back to the same double (std::to_chars), so a CSV
// holds exactly the values of the matching .npy file.
//
// Reading: a numeric matrix. Blank lines and lines starting with '#' are skipped; fields may be
// surrounded by spaces; a UTF-8 byte order mark at the start is ignored. A number too small for a
// double (1e-400) reads as the nearest double (0 or a subnormal), one too large (1e400) is an error.
// Input that is not text (a NUL byte in the first 4 KiB, UTF-16, a .npy under another name) is refused
// before parsing. Every error is an IoError of the form "file:line:column: what", with 1-based line and
// column (the column of the offending field's first character), e.g.
//     losses.csv:3:7: field 2 is not a number: 'abc'
//     losses.csv:4:1: expected 3 fields (as on line 2), found 2
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "host/io/matrix.hpp"

namespace dpr::io {

/// Shortest decimal text that parses back to exactly `v` ("nan", "inf", "-inf" for non-finite).
std::string format_double(double v);

/// Streams rows of numbers to a CSV file.
class CsvWriter {
  public:
    explicit CsvWriter(std::ostream& os) : os_(os) {}
    /// One header line; names containing ',', '"' or a line break are quoted.
    void header(const std::vector<std::string>& names);
    /// One line of `count` comma-separated numbers.
    void row(const double* values, std::size_t count);
    /// Part of a line: `count` comma-separated numbers, preceded by a comma when `continue_line` (a row
    /// longer than memory is written in slices); end the line with end_row().
    void values(const double* values, std::size_t count, bool continue_line);
    void end_row();

  private:
    std::ostream& os_;
    std::string line_;
};

enum class CsvHeader {
    Auto,    ///< the first data line is a header if none of its fields is a number
    Present, ///< the first data line is a header
    Absent,  ///< every line is data
};

struct CsvReadOptions {
    CsvHeader header = CsvHeader::Auto;
    bool allow_nonfinite = false; ///< accept nan/inf (otherwise they are errors naming the position)
};

/// Reads a rectangular numeric matrix from `path`. At least one data row is required.
Matrix read_csv_matrix(const std::string& path, const CsvReadOptions& options = {});
/// Same, from a stream; `name` is used in error messages in place of the file name.
Matrix read_csv_matrix(std::istream& in, const std::string& name, const CsvReadOptions& options = {});

} // namespace dpr::io
