#include "host/io/npy.hpp"

#include <cctype>
#include <cstring>
#include <limits>
#include <ostream>

#include "host/io/atomic_file.hpp"
#include "host/io/error.hpp"

namespace dpr::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64; // NumPy >= 1.14 aligns the data to 64 bytes

constexpr bool kLittleEndianHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

template <class T>
void byteswap_inplace(T* v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        unsigned char* p = reinterpret_cast<unsigned char*>(v + i);
        for (std::size_t a = 0, b = sizeof(T) - 1; a < b; ++a, --b) std::swap(p[a], p[b]);
    }
}

// ---- a minimal parser for the header dict, a Python literal such as
//      {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
  public:
    HeaderParser(const std::string& text, const std::string& file) : s_(text), file_(file) {}

    struct Fields {
        bool has_descr = false, has_fortran = false, has_shape = false;
        std::string descr;
        bool fortran = false;
        Shape shape;
    };

    Fields parse() {
        Fields f;
        expect('{');
        for (;;) {
            skip_ws();
            if (peek() == '}') break;
            const std::string key = parse_string();
            expect(':');
            if (key == "descr") {
                skip_ws();
                if (peek() != '\'' && peek() != '"')
                    fail("structured (record) dtypes are not supported: expected float32 ('<f4') or "
                         "float64 ('<f8')");
                f.descr = parse_string();
                f.has_descr = true;
            } else if (key == "fortran_order") {
                f.fortran = parse_bool();
                f.has_fortran = true;
            } else if (key == "shape") {
                f.shape = parse_shape();
                f.has_shape = true;
            } else {
                fail("unexpected key '" + key + "' in the header");
            }
            skip_ws();
            if (peek() == ',') {
                ++i_;
                continue;
            }
            skip_ws();
            if (peek() != '}') fail("malformed header: expected ',' or '}' at offset " + std::to_string(i_));
        }
        ++i_;
        if (!f.has_descr) fail("the header has no 'descr' (dtype) entry");
        if (!f.has_fortran) fail("the header has no 'fortran_order' entry");
        if (!f.has_shape) fail("the header has no 'shape' entry");
        return f;
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw IoError(file_ + ": not a valid .npy file: " + what);
    }

  private:
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void skip_ws() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    void expect(char c) {
        skip_ws();
        if (peek() != c)
            fail(std::string("malformed header: expected '") + c + "' at offset " + std::to_string(i_));
        ++i_;
    }
    std::string parse_string() {
        skip_ws();
        const char q = peek();
        if (q != '\'' && q != '"')
            fail("malformed header: expected a quoted string at offset " + std::to_string(i_));
        ++i_;
        const std::size_t start = i_;
        while (i_ < s_.size() && s_[i_] != q) ++i_;
        if (i_ >= s_.size()) fail("malformed header: unterminated string");
        return s_.substr(start, i_++ - start);
    }
    bool parse_bool() {
        skip_ws();
        if (s_.compare(i_, 4, "True") == 0) {
            i_ += 4;
            return true;
        }
        if (s_.compare(i_, 5, "False") == 0) {
            i_ += 5;
            return false;
        }
        fail("malformed header: 'fortran_order' must be True or False");
    }
    Shape parse_shape() {
        Shape shape;
        skip_ws();
        if (peek() != '(') fail("malformed header: 'shape' must be a tuple of non-negative integers");
        ++i_;
        for (;;) {
            skip_ws();
            if (peek() == ')') break;
            if (!std::isdigit(static_cast<unsigned char>(peek())))
                fail("malformed header: 'shape' must be a tuple of non-negative integers");
            std::uint64_t v = 0;
            while (std::isdigit(static_cast<unsigned char>(peek()))) {
                const std::uint64_t d = static_cast<std::uint64_t>(s_[i_++] - '0');
                if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
                    fail("a dimension overflows 64 bits");
                v = v * 10 + d;
            }
            if (peek() == 'L') ++i_; // Python 2 long literal
            shape.push_back(v);
            skip_ws();
            if (peek() == ',') {
                ++i_;
                continue;
            }
            if (peek() != ')') fail("malformed header: 'shape' must be a tuple of non-negative integers");
        }
        ++i_;
        return shape;
    }

    const std::string& s_;
    const std::string& file_;
    std::size_t i_ = 0;
};

NpyHeader parse_header(std::istream& in, const std::string& path, std::uint64_t file_size) {
    const auto bad = [&](const std::string& what) -> IoError {
        return IoError(path + ": not a valid .npy file: " + what);
    };
    char pre[kMagicLen + 2];
    if (file_size < sizeof pre || !in.read(pre, sizeof pre)) throw bad("too short to hold a .npy header");
    if (std::memcmp(pre, kMagic, kMagicLen) != 0) throw bad("missing the \\x93NUMPY magic string");
    NpyHeader h;
    h.major = static_cast<unsigned char>(pre[6]);
    h.minor = static_cast<unsigned char>(pre[7]);
    std::uint64_t header_len = 0;
    std::size_t prefix = sizeof pre;
    if (h.major == 1) {
        unsigned char b[2];
        if (!in.read(reinterpret_cast<char*>(b), 2)) throw bad("truncated header");
        header_len = b[0] | (static_cast<std::uint64_t>(b[1]) << 8);
        prefix += 2;
    } else if (h.major == 2 || h.major == 3) {
        unsigned char b[4];
        if (!in.read(reinterpret_cast<char*>(b), 4)) throw bad("truncated header");
        header_len = b[0] | (static_cast<std::uint64_t>(b[1]) << 8) |
                     (static_cast<std::uint64_t>(b[2]) << 16) | (static_cast<std::uint64_t>(b[3]) << 24);
        prefix += 4;
    } else {
        throw bad("unsupported format version " + std::to_string(h.major) + "." + std::to_string(h.minor) +
                  " (supported: 1.0, 2.0, 3.0)");
    }
    if (prefix + header_len > file_size) throw bad("truncated header");
    std::string text(static_cast<std::size_t>(header_len), '\0');
    if (!in.read(text.data(), static_cast<std::streamsize>(header_len))) throw bad("truncated header");
    h.data_offset = prefix + static_cast<std::size_t>(header_len);

    HeaderParser parser(text, path);
    const HeaderParser::Fields f = parser.parse();
    const std::string& d = f.descr;
    if (d == "<f8" || (d == "=f8" && kLittleEndianHost) || d == "float64") {
        h.dtype = NpyDtype::Float64;
    } else if (d == "<f4" || (d == "=f4" && kLittleEndianHost) || d == "float32") {
        h.dtype = NpyDtype::Float32;
    } else if (d == ">f8" || d == ">f4") {
        throw IoError(path + ": big-endian data ('" + d +
                      "') is not supported; convert with arr.astype('<f8') before saving");
    } else {
        throw IoError(path + ": dtype '" + d +
                      "' is not supported: expected float32 ('<f4') or float64 ('<f8'); convert with "
                      "arr.astype(np.float64) before saving");
    }
    if (f.fortran)
        throw IoError(path + ": Fortran-order (column-major) arrays are not supported; save "
                             "np.ascontiguousarray(arr) instead");
    h.shape = f.shape;

    // The data must fill the rest of the file exactly.
    std::uint64_t n = 0;
    try {
        n = shape_size(h.shape);
    } catch (const IoError&) {
        throw bad("shape " + shape_string(h.shape) + " has more than 2^64 elements");
    }
    const std::uint64_t item = h.dtype == NpyDtype::Float64 ? 8 : 4;
    const char* dname = h.dtype == NpyDtype::Float64 ? "float64" : "float32";
    const std::uint64_t available = file_size - h.data_offset;
    if (n > available / item) {
        throw IoError(path + ": data truncated: shape " + shape_string(h.shape) + " of " + dname + " needs " +
                      std::to_string(n) + " x " + std::to_string(item) +
                      " bytes after the header, but only " + std::to_string(available) + " bytes follow it");
    }
    if (n * item != available) {
        throw IoError(path + ": " + std::to_string(available - n * item) +
                      " unexpected bytes after the data of shape " + shape_string(h.shape) + " (" + dname +
                      ")");
    }
    return h;
}

} // namespace

std::uint64_t shape_size(const Shape& shape) {
    std::uint64_t n = 1;
    for (const std::uint64_t d : shape) {
        if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / d)
            throw IoError("array shape " + shape_string(shape) + " overflows 64 bits");
        n *= d;
    }
    return n;
}

std::string shape_string(const Shape& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

std::string npy_header_f8(const Shape& shape) {
    std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape_string(shape) + ", }";
    // Version 1.0 has a 2-byte header length; 2.0 a 4-byte one (only for enormous numbers of dims).
    const bool v1 = dict.size() + 1 + kMagicLen + 4 + kAlign <= 65535;
    const std::size_t prefix = kMagicLen + 2 + (v1 ? 2 : 4);
    const std::size_t total = (prefix + dict.size() + 1 + kAlign - 1) / kAlign * kAlign;
    dict.append(total - prefix - dict.size() - 1, ' ');
    dict.push_back('\n');
    std::string out(kMagic, kMagicLen);
    out.push_back(static_cast<char>(v1 ? 1 : 2));
    out.push_back(0);
    const std::uint64_t len = dict.size();
    out.push_back(static_cast<char>(len & 0xff));
    out.push_back(static_cast<char>((len >> 8) & 0xff));
    if (!v1) {
        out.push_back(static_cast<char>((len >> 16) & 0xff));
        out.push_back(static_cast<char>((len >> 24) & 0xff));
    }
    return out + dict;
}

NpyWriter::NpyWriter(std::ostream& os, Shape shape)
    : os_(os), shape_(std::move(shape)), expected_(shape_size(shape_)) {
    const std::string header = npy_header_f8(shape_);
    os_.write(header.data(), static_cast<std::streamsize>(header.size()));
}

void NpyWriter::write(const double* values, std::size_t count) {
    if (count > expected_ - written_)
        throw IoError("npy writer: " + std::to_string(written_ + count) + " values written, but shape " +
                      shape_string(shape_) + " holds " + std::to_string(expected_));
    if constexpr (kLittleEndianHost) {
        os_.write(reinterpret_cast<const char*>(values),
                  static_cast<std::streamsize>(count * sizeof(double)));
    } else {
        std::vector<double> tmp(values, values + count);
        byteswap_inplace(tmp.data(), tmp.size());
        os_.write(reinterpret_cast<const char*>(tmp.data()),
                  static_cast<std::streamsize>(count * sizeof(double)));
    }
    written_ += count;
}

void NpyWriter::finish() {
    if (written_ != expected_)
        throw IoError("npy writer: " + std::to_string(written_) + " values written, but shape " +
                      shape_string(shape_) + " needs " + std::to_string(expected_));
    os_.flush();
}

void write_npy(std::ostream& os, const Shape& shape, const double* data) {
    NpyWriter w(os, shape);
    w.write(data, static_cast<std::size_t>(w.expected()));
    w.finish();
}

void write_npy(const std::string& path, const Shape& shape, const double* data) {
    AtomicFile out(path);
    write_npy(out.stream(), shape, data);
    out.commit();
}

void write_npy(const Dir& dir, const std::string& name, const Shape& shape, const double* data) {
    AtomicFile out(dir, name);
    write_npy(out.stream(), shape, data);
    out.commit();
}

NpyHeader read_npy_header(InFile& f) {
    f.stream().clear();
    f.stream().seekg(0);
    return parse_header(f.stream(), f.path(), f.size());
}

NpyHeader read_npy_header(const std::string& path) {
    InFile f = InFile::open_path(path);
    return read_npy_header(f);
}

NpyArray read_npy(InFile& f) {
    const NpyHeader h = read_npy_header(f);
    std::istream& in = f.stream();
    const std::string& path = f.path();
    NpyArray a;
    a.shape = h.shape;
    a.stored_as = h.dtype;
    const std::size_t n = static_cast<std::size_t>(shape_size(h.shape));
    a.values.resize(n);
    in.seekg(static_cast<std::streamoff>(h.data_offset));
    if (h.dtype == NpyDtype::Float64) {
        if (!in.read(reinterpret_cast<char*>(a.values.data()), static_cast<std::streamsize>(n * 8)))
            throw IoError(path + ": read error in the data");
        if constexpr (!kLittleEndianHost) byteswap_inplace(a.values.data(), n);
    } else {
        std::vector<float> v(n);
        if (!in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * 4)))
            throw IoError(path + ": read error in the data");
        if constexpr (!kLittleEndianHost) byteswap_inplace(v.data(), n);
        for (std::size_t i = 0; i < n; ++i) a.values[i] = static_cast<double>(v[i]);
    }
    return a;
}

NpyArray read_npy(const std::string& path) {
    InFile f = InFile::open_path(path);
    return read_npy(f);
}

NpyArray read_npy(const Dir& dir, const std::string& name) {
    InFile f = InFile::open(dir, name);
    return read_npy(f);
}

Matrix read_npy_matrix(const std::string& path) {
    // Check the header first so that a wrong shape is reported before reading any data.
    const NpyHeader h = read_npy_header(path);
    if (h.shape.size() != 2)
        throw IoError(path + ": expected a 2-D array (rows, cols), found shape " + shape_string(h.shape) +
                      " (" + std::to_string(h.shape.size()) + "-D)");
    NpyArray a = read_npy(path);
    Matrix m;
    m.rows = static_cast<std::size_t>(a.shape[0]);
    m.cols = static_cast<std::size_t>(a.shape[1]);
    m.values = std::move(a.values);
    return m;
}

} // namespace dpr::io
