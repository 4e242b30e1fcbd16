#include "host/io/csv.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
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

/// Parses a whole field as a double: optional sign, decimal or scientific notation, inf/nan.
bool parse_number(const std::string& t, double& out) {
    if (t.empty()) return false;
    const char* first = t.data();
    const char* last = t.data() + t.size();
    if (*first == '+') {
        ++first; // from_chars rejects a leading '+', CSV writers may emit one
        if (first == last || *first == '+' || *first == '-') return false;
    }
    const auto r = std::from_chars(first, last, out);
    return r.ec == std::errc() && r.ptr == last;
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

void CsvWriter::row(const double* values, std::size_t count) {
    line_.clear();
    char buf[32];
    for (std::size_t i = 0; i < count; ++i) {
        if (i) line_.push_back(',');
        const double v = values[i];
        if (std::isfinite(v)) {
            const auto r = std::to_chars(buf, buf + sizeof buf, v);
            line_.append(buf, r.ptr);
        } else {
            line_ += format_double(v);
        }
    }
    line_.push_back('\n');
    os_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

Matrix read_csv_matrix(std::istream& in, const std::string& name, const CsvReadOptions& options) {
    Matrix m;
    std::string line;
    std::size_t line_no = 0;
    std::size_t first_data_line = 0; // line that fixed the number of columns
    bool header_decided = options.header == CsvHeader::Absent;
    while (std::getline(in, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::size_t k = 0;
        while (k < line.size() && is_space(line[k])) ++k;
        if (k == line.size() || line[k] == '#') continue; // blank line or comment
        std::vector<Field> fields = split_line(line, name, line_no);

        if (!header_decided) {
            header_decided = true;
            bool is_header = options.header == CsvHeader::Present;
            if (options.header == CsvHeader::Auto) {
                is_header = true;
                double v;
                for (const Field& f : fields) {
                    if (parse_number(f.text, v)) {
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
            if (!parse_number(f.text, v)) {
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
