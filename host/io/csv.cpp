#include "host/io/csv.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <fstream>
#include <istream>
#include <ostream>
#include <system_error>

#include "host/io/error.hpp"

namespace dpr::io {

namespace {

struct Field {
    std::string text;       ///< unquoted, trimmed
    std::size_t column = 1; ///< 1-based column of the field's first non-space character
    bool quoted = false;
};

[[noreturn]] void fail_at(const std::string& name, std::size_t line, std::size_t column,
                          const std::string& what) {
    throw IoError(name + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + what);
}

bool is_space(char c) {
    return c == ' ' || c == '\t';
}

/// Splits one physical line into fields (quoted fields may contain commas and "" escapes, not line
/// breaks).
std::vector<Field> split_line(const std::string& s, const std::string& name, std::size_t line_no) {
    std::vector<Field> fields;
    std::size_t i = 0;
    for (;;) {
        Field f;
        while (i < s.size() && is_space(s[i])) ++i;
        f.column = i + 1;
        if (i < s.size() && s[i] == '"') {
            f.quoted = true;
            ++i;
            for (;;) {
                if (i >= s.size()) fail_at(name, line_no, f.column, "unterminated quoted field");
                if (s[i] == '"') {
                    if (i + 1 < s.size() && s[i + 1] == '"') {
                        f.text.push_back('"');
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                f.text.push_back(s[i++]);
            }
            while (i < s.size() && is_space(s[i])) ++i;
            if (i < s.size() && s[i] != ',')
                fail_at(name, line_no, i + 1, "unexpected text after a quoted field");
        } else {
            const std::size_t start = i;
            while (i < s.size() && s[i] != ',') ++i;
            std::size_t end = i;
            while (end > start && is_space(s[end - 1])) --end;
            f.text = s.substr(start, end - start);
        }
        fields.push_back(std::move(f));
        if (i >= s.size()) break;
        ++i; // the comma
    }
    return fields;
}

enum class Parsed { Number, NotANumber, Overflow };

/// Parses a whole field as a double: optional sign, decimal or scientific notation, inf/nan. A value
/// below the smallest subnormal (1e-400) underflows to the nearest double (0 or a subnormal), as
/// strtod rounds it; one beyond the largest double (1e400) is Overflow, not a parse error.
Parsed parse_number(const std::string& t, double& out) {
    if (t.empty()) return Parsed::NotANumber;
    const char* first = t.data();
    const char* last = t.data() + t.size();
    if (*first == '+') {
        ++first; // from_chars rejects a leading '+', CSV writers may emit one
        if (first == last || *first == '+' || *first == '-') return Parsed::NotANumber;
    }
    const auto r = std::from_chars(first, last, out);
    if (r.ptr != last) return Parsed::NotANumber;
    if (r.ec == std::errc()) return Parsed::Number;
    if (r.ec != std::errc::result_out_of_range) return Parsed::NotANumber;
    // Out of range: from_chars leaves `out` unset; strtod (C locale) gives the rounded value with
    // ERANGE: +-HUGE_VAL on overflow, 0 or a subnormal on underflow.
    const std::string text(first, last);
    errno = 0;
    const double v = std::strtod(text.c_str(), nullptr);
    if (std::isinf(v)) return Parsed::Overflow;
    out = v;
    return Parsed::Number;
}

bool is_number(const std::string& t) {
    double v;
    return parse_number(t, v) != Parsed::NotANumber;
}

/// The UTF-8 byte order mark that some editors (and Excel) put at the start of a CSV file.
constexpr char kUtf8Bom[] = "\xEF\xBB\xBF";

/// Refuses input that is not text before parsing it line by line: a NUL byte in the first block (a
/// binary file, a .npy without its extension, UTF-16 text) would otherwise be read as one huge line.
void check_text(std::istream& in, const std::string& name) {
    char block[4096];
    in.read(block, sizeof block);
    const std::size_t n = static_cast<std::size_t>(in.gcount());
    in.clear();
    in.seekg(0);
    if (n >= 2 && ((block[0] == '\xFF' && block[1] == '\xFE') || (block[0] == '\xFE' && block[1] == '\xFF')))
        throw IoError(name + ": is UTF-16 text; save the CSV file as UTF-8 (or ASCII)");
    if (n >= 6 && std::memcmp(block, "\x93NUMPY", 6) == 0)
        throw IoError(name + ": is a NumPy .npy file; give it a name ending in .npy");
    const void* nul = std::memchr(block, '\0', n);
    if (nul != nullptr)
        throw IoError(name + ": is not a text (CSV) file: byte " +
                      std::to_string(static_cast<const char*>(nul) - block + 1) +
                      " is NUL; loss files are CSV text or .npy (by extension)");
}

std::string quote_if_needed(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string q = "\"";
    for (const char c : s) {
        if (c == '"') q.push_back('"');
        q.push_back(c);
    }
    return q + "\"";
}

} // namespace

std::string format_double(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

void CsvWriter::header(const std::vector<std::string>& names) {
    line_.clear();
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i) line_.push_back(',');
        line_ += quote_if_needed(names[i]);
    }
    line_.push_back('\n');
    os_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

void CsvWriter::row(const double* v, std::size_t count) {
    values(v, count, false);
    end_row();
}

void CsvWriter::end_row() {
    os_.put('\n');
}

void CsvWriter::values(const double* values, std::size_t count, bool continue_line) {
    line_.clear();
    char buf[32];
    for (std::size_t i = 0; i < count; ++i) {
        if (i || continue_line) line_.push_back(',');
        const double v = values[i];
        if (std::isfinite(v)) {
            const auto r = std::to_chars(buf, buf + sizeof buf, v);
            line_.append(buf, r.ptr);
        } else {
            line_ += format_double(v);
        }
    }
    os_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

Matrix read_csv_matrix(std::istream& in, const std::string& name, const CsvReadOptions& options) {
    Matrix m;
    std::string line;
    std::size_t line_no = 0;
    std::size_t first_data_line = 0; // line that fixed the number of columns
    bool header_decided = options.header == CsvHeader::Absent;
    if (in.tellg() == std::streampos(0)) check_text(in, name); // a seekable stream at its start
    while (std::getline(in, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line_no == 1 && line.compare(0, 3, kUtf8Bom) == 0) line.erase(0, 3);
        if (const std::size_t nul = line.find('\0'); nul != std::string::npos)
            fail_at(name, line_no, nul + 1, "a NUL byte: not a text (CSV) file");
        std::size_t k = 0;
        while (k < line.size() && is_space(line[k])) ++k;
        if (k == line.size() || line[k] == '#') continue; // blank line or comment
        std::vector<Field> fields = split_line(line, name, line_no);

        if (!header_decided) {
            header_decided = true;
            bool is_header = options.header == CsvHeader::Present;
            if (options.header == CsvHeader::Auto) {
                is_header = true;
                for (const Field& f : fields) {
                    if (is_number(f.text)) {
                        is_header = false;
                        break;
                    }
                }
            }
            if (is_header) {
                for (Field& f : fields) m.column_names.push_back(std::move(f.text));
                m.cols = m.column_names.size();
                first_data_line = line_no;
                continue;
            }
        }

        if (m.cols == 0) {
            m.cols = fields.size();
            first_data_line = line_no;
        } else if (fields.size() != m.cols) {
            fail_at(name, line_no, 1,
                    "expected " + std::to_string(m.cols) + " fields (as on line " +
                        std::to_string(first_data_line) + "), found " + std::to_string(fields.size()));
        }
        for (std::size_t j = 0; j < fields.size(); ++j) {
            double v = 0;
            const Field& f = fields[j];
            const Parsed parsed = parse_number(f.text, v);
            if (parsed == Parsed::Overflow)
                fail_at(name, line_no, f.column,
                        "field " + std::to_string(j + 1) + " is beyond the range of a double (|x| <= " +
                            format_double(std::numeric_limits<double>::max()) + "): '" + f.text + "'");
            if (parsed == Parsed::NotANumber) {
                fail_at(name, line_no, f.column,
                        f.text.empty()
                            ? "field " + std::to_string(j + 1) + " is empty (expected a number)"
                            : "field " + std::to_string(j + 1) + " is not a number: '" + f.text + "'");
            }
            if (!options.allow_nonfinite && !std::isfinite(v))
                fail_at(name, line_no, f.column,
                        "field " + std::to_string(j + 1) + " is not a finite number: '" + f.text + "'");
            m.values.push_back(v);
        }
        ++m.rows;
    }
    if (in.bad()) throw IoError(name + ": read error");
    if (m.rows == 0) throw IoError(name + ": no data rows (the file is empty or holds only a header)");
    return m;
}

Matrix read_csv_matrix(const std::string& path, const CsvReadOptions& options) {
    std::ifstream in(path, std::ios::binary);
    if (!in.is_open()) {
        const int err = errno;
        throw IoError(path + ": cannot open: " + (err ? std::strerror(err) : "unknown error"));
    }
    return read_csv_matrix(in, path, options);
}

} // namespace dpr::io
