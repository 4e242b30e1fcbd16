// host/io: .npy writer/reader, CSV writer/reader, AtomicFile. Every reader error must name the file
// (and for CSV the line:column) and say what is wrong; every writer must leave nothing behind on failure.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <csignal>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/io/atomic_file.hpp"
#include "host/io/csv.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "host/io/run_dir.hpp"

namespace fs = std::filesystem;
using namespace dpr::io;

namespace {

/// A fresh directory under the system temp dir, removed with everything in it at the end.
class TempDir {
  public:
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "dpregret_io_XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    std::vector<std::string> list() const {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

  private:
    fs::path path_;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void spit(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A .npy file written by hand (not by our writer): version, header dict and raw data bytes.
std::string handmade_npy(const std::string& dict, const std::string& data, int major = 1) {
    std::string h = dict;
    const std::size_t prefix = major == 1 ? 10 : 12;
    while ((prefix + h.size() + 1) % 64 != 0) h.push_back(' ');
    h.push_back('\n');
    std::string out("\x93NUMPY", 6);
    out.push_back(static_cast<char>(major));
    out.push_back(0);
    out.push_back(static_cast<char>(h.size() & 0xff));
    out.push_back(static_cast<char>((h.size() >> 8) & 0xff));
    if (major != 1) out.append(2, '\0');
    return out + h + data;
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

bool same_bits(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

/// Runs `f`, expects an IoError, and returns its message.
template <class F>
std::string io_error_of(F&& f) {
    try {
        f();
    } catch (const IoError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no IoError thrown";
    return "";
}

} // namespace

// ---- .npy writing ---------------------------------------------------------------------------------

TEST(NpyWrite, HeaderIsVersion1AlignedTo64AndNamesShape) {
    for (const Shape& shape : {Shape{}, Shape{7}, Shape{3, 4}, Shape{2, 3, 5}}) {
        const std::string h = npy_header_f8(shape);
        ASSERT_EQ(h.substr(0, 6), std::string("\x93NUMPY", 6));
        EXPECT_EQ(h[6], 1);
        EXPECT_EQ(h[7], 0);
        EXPECT_EQ(h.size() % 64, 0u) << "data must start 64-byte aligned";
        const std::size_t len = static_cast<unsigned char>(h[8]) | (static_cast<unsigned char>(h[9]) << 8);
        EXPECT_EQ(len + 10, h.size());
        EXPECT_EQ(h.back(), '\n');
        EXPECT_NE(h.find("'descr': '<f8'"), std::string::npos);
        EXPECT_NE(h.find("'fortran_order': False"), std::string::npos);
        EXPECT_NE(h.find("'shape': " + shape_string(shape)), std::string::npos);
    }
    EXPECT_EQ(shape_string({}), "()");
    EXPECT_EQ(shape_string({7}), "(7,)");
    EXPECT_EQ(shape_string({3, 4}), "(3, 4)");
}

TEST(NpyWrite, Float64RoundTripIsBitExact2D) {
    TempDir dir;
    const double denorm = std::numeric_limits<double>::denorm_min();
    const std::vector<double> v = {0.0,
                                   -0.0,
                                   1.0,
                                   -1.5,
                                   0.1,
                                   1e308,
                                   -1e-308,
                                   denorm,
                                   3.141592653589793,
                                   std::nextafter(1.0, 2.0),
                                   123456789.125,
                                   -2.5e-17};
    write_npy(dir.file("m.npy"), {3, 4}, v.data());
    EXPECT_EQ(dir.list(), std::vector<std::string>{"m.npy"}) << "no temporary file may remain";
    const Matrix m = read_npy_matrix(dir.file("m.npy"));
    ASSERT_EQ(m.rows, 3u);
    ASSERT_EQ(m.cols, 4u);
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_TRUE(same_bits(m.values[i], v[i])) << i;
    EXPECT_EQ(m(1, 2), v[6]);
    EXPECT_EQ(m.row(2)[3], v[11]);
    EXPECT_EQ(slurp(dir.file("m.npy")).size(), 128u + 12 * 8) << "64-aligned header of 128 bytes";
}

TEST(NpyWrite, AnyRankRoundTripsThroughReadNpy) {
    TempDir dir;
    std::vector<double> v(2 * 3 * 5);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5 * static_cast<double>(i) - 3.0;
    for (const Shape& shape : {Shape{30}, Shape{2, 15}, Shape{2, 3, 5}, Shape{0, 4}}) {
        const std::string path = dir.file("a.npy");
        write_npy(path, shape, v.data());
        const NpyArray a = read_npy(path);
        EXPECT_EQ(a.shape, shape);
        EXPECT_EQ(a.stored_as, NpyDtype::Float64);
        ASSERT_EQ(a.values.size(), shape_size(shape));
        for (std::size_t i = 0; i < a.values.size(); ++i) EXPECT_EQ(a.values[i], v[i]);
    }
}

TEST(NpyWrite, StreamingWriterChecksTheCount) {
    std::ostringstream os;
    NpyWriter w(os, {2, 2});
    const double row[2] = {1, 2};
    w.write(row, 2);
    EXPECT_THROW(w.finish(), IoError) << "2 of 4 values written";
    w.write(row, 2);
    EXPECT_THROW(w.write(row, 1), IoError) << "a fifth value exceeds the shape";
    EXPECT_NO_THROW(w.finish());
    EXPECT_EQ(w.written(), 4u);
}

TEST(NpyWrite, UnwritablePathLeavesNothing) {
    TempDir dir;
    const double v[1] = {1.0};
    const std::string msg = io_error_of([&] { write_npy(dir.file("missing/a.npy"), {1}, v); });
    EXPECT_NE(msg.find("missing/a.npy"), std::string::npos) << msg;
    EXPECT_TRUE(dir.list().empty());
}

// ---- .npy reading: files not written by us ---------------------------------------------------------

TEST(NpyRead, HandWrittenFloat32) {
    TempDir dir;
    const std::vector<float> f = {0.1f, -2.5f, 3e-38f, 1e30f, -0.0f, 7.0f};
    spit(dir.file("f32.npy"),
         handmade_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", bytes_of(f)));
    const Matrix m = read_npy_matrix(dir.file("f32.npy"));
    ASSERT_EQ(m.rows, 2u);
    ASSERT_EQ(m.cols, 3u);
    for (std::size_t i = 0; i < f.size(); ++i)
        EXPECT_TRUE(same_bits(m.values[i], static_cast<double>(f[i]))) << "float32 widens exactly, i=" << i;
    EXPECT_EQ(read_npy(dir.file("f32.npy")).stored_as, NpyDtype::Float32);
}

TEST(NpyRead, HandWrittenFloat64Version2KeysInAnyOrder) {
    TempDir dir;
    const std::vector<double> d = {1.25, -3.5, 8.0, 0.125};
    spit(dir.file("v2.npy"),
         handmade_npy("{\"shape\": (4, 1), \"fortran_order\": False, \"descr\": \"<f8\"}", bytes_of(d), 2));
    const Matrix m = read_npy_matrix(dir.file("v2.npy"));
    EXPECT_EQ(m.rows, 4u);
    EXPECT_EQ(m.cols, 1u);
    EXPECT_EQ(m.values, d);
    const NpyHeader h = read_npy_header(dir.file("v2.npy"));
    EXPECT_EQ(h.major, 2);
    EXPECT_EQ(h.data_offset % 64, 0u);
}

TEST(NpyRead, ErrorsNameTheFileAndTheProblem) {
    TempDir dir;
    const std::vector<double> six(6, 1.0);
    const std::string ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
    struct Case {
        std::string name, bytes, expect;
    };
    const std::vector<Case> cases = {
        {"magic.npy", "PK\x03\x04 this is a zip file, not an npy file.......", "magic"},
        {"short.npy", "\x93NUM", "too short"},
        {"int.npy",
         handmade_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", bytes_of(six)),
         "dtype '<i8' is not supported"},
        {"bigendian.npy",
         handmade_npy("{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }", bytes_of(six)),
         "big-endian"},
        {"fortran.npy",
         handmade_npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", bytes_of(six)),
         "Fortran-order"},
        {"oned.npy", handmade_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", bytes_of(six)),
         "expected a 2-D array (rows, cols), found shape (6,)"},
        {"threed.npy",
         handmade_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }", bytes_of(six)),
         "found shape (1, 2, 3)"},
        {"truncated.npy", handmade_npy(ok, bytes_of(six).substr(0, 40)), "truncated"},
        {"extra.npy", handmade_npy(ok, bytes_of(six) + "xx"), "2 unexpected bytes"},
        {"version.npy",
         [&] {
             std::string b = handmade_npy(ok, bytes_of(six));
             b[6] = 9;
             return b;
         }(),
         "unsupported format version 9.0"},
        {"nokey.npy", handmade_npy("{'descr': '<f8', 'shape': (2, 3), }", bytes_of(six)), "'fortran_order'"},
        {"garbled.npy",
         handmade_npy("{'descr': '<f8', 'fortran_order': False, 'shape': [2, 3], }", bytes_of(six)),
         "'shape' must be a tuple"},
    };
    for (const Case& c : cases) {
        const std::string path = dir.file(c.name);
        spit(path, c.bytes);
        const std::string msg = io_error_of([&] { read_npy_matrix(path); });
        EXPECT_NE(msg.find(path), std::string::npos) << c.name << ": " << msg;
        EXPECT_NE(msg.find(c.expect), std::string::npos) << c.name << ": " << msg;
    }
    const std::string missing = dir.file("nope.npy");
    const std::string msg = io_error_of([&] { read_npy(missing); });
    EXPECT_NE(msg.find(missing + ": cannot open"), std::string::npos) << msg;
}

// ---- CSV ---------------------------------------------------------------------------------------------

TEST(CsvWrite, ShortestDecimalsReadBackExactly) {
    std::mt19937_64 gen(12345);
    std::vector<double> v;
    while (v.size() < 20000) {
        const std::uint64_t bits = gen();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        if (std::isfinite(d)) v.push_back(d);
    }
    v.insert(v.end(), {0.0, -0.0, 0.1, 1.0 / 3.0, std::numeric_limits<double>::denorm_min(),
                       std::numeric_limits<double>::max(), -std::numeric_limits<double>::min()});
    std::stringstream ss;
    CsvWriter w(ss);
    w.header({"value"});
    for (const double d : v) w.row(&d, 1);
    const Matrix m = read_csv_matrix(ss, "mem.csv");
    EXPECT_EQ(m.column_names, std::vector<std::string>{"value"});
    ASSERT_EQ(m.rows, v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        ASSERT_TRUE(same_bits(m.values[i], v[i])) << format_double(v[i]);
    EXPECT_EQ(format_double(0.1), "0.1");
    EXPECT_EQ(format_double(-2.0), "-2");
    EXPECT_EQ(format_double(std::nan("")), "nan");
}

TEST(CsvRead, MatrixWithHeaderCommentsBlankLinesAndCrLf) {
    std::istringstream in("# losses, 3 experts\r\n"
                          "\"expert, a\",b,c\r\n"
                          "\r\n"
                          "1, 2.5 ,-3e-2\r\n"
                          "+4,5,6\r\n");
    const Matrix m = read_csv_matrix(in, "x.csv");
    EXPECT_EQ(m.column_names, (std::vector<std::string>{"expert, a", "b", "c"}));
    ASSERT_EQ(m.rows, 2u);
    ASSERT_EQ(m.cols, 3u);
    EXPECT_EQ(m.values, (std::vector<double>{1, 2.5, -0.03, 4, 5, 6}));
}

TEST(CsvRead, HeaderModes) {
    {
        std::istringstream in("1,2\n3,4\n");
        const Matrix m = read_csv_matrix(in, "x.csv"); // Auto: a numeric first line is data
        EXPECT_EQ(m.rows, 2u);
        EXPECT_TRUE(m.column_names.empty());
    }
    {
        std::istringstream in("1,2\n3,4\n");
        const Matrix m = read_csv_matrix(in, "x.csv", {CsvHeader::Present});
        EXPECT_EQ(m.rows, 1u);
        EXPECT_EQ(m.column_names, (std::vector<std::string>{"1", "2"}));
    }
    {
        std::istringstream in("a,b\n3,4\n");
        const std::string msg = io_error_of([&] { read_csv_matrix(in, "x.csv", {CsvHeader::Absent}); });
        EXPECT_EQ(msg, "x.csv:1:1: field 1 is not a number: 'a'");
    }
}

TEST(CsvRead, ErrorPositionsAreFileLineColumn) {
    struct Case {
        std::string text, expect;
    };
    const std::vector<Case> cases = {
        {"a,b,c\n1,2,3\n4,abc,6\n", "bad.csv:3:3: field 2 is not a number: 'abc'"},
        {"1,2,3\n4,5,  x7\n", "bad.csv:2:7: field 3 is not a number: 'x7'"},
        {"1,2,3\n4,,6\n", "bad.csv:2:3: field 2 is empty (expected a number)"},
        {"1,2,3\n\n# c\n4,5\n", "bad.csv:4:1: expected 3 fields (as on line 1), found 2"},
        {"x,y\n1,2\n3,4,5\n", "bad.csv:3:1: expected 2 fields (as on line 1), found 3"},
        {"1,2\n3,nan\n", "bad.csv:2:3: field 2 is not a finite number: 'nan'"},
        {"1,2\n3,1e999\n",
         "bad.csv:2:3: field 2 is beyond the range of a double (|x| <= 1.7976931348623157e+308): '1e999'"},
        {"1,2\n3,4 5\n", "bad.csv:2:3: field 2 is not a number: '4 5'"},
        {"1,\"2\n", "bad.csv:1:3: unterminated quoted field"},
        {"1,+-2\n", "bad.csv:1:3: field 2 is not a number: '+-2'"},
        {"a,b\n", "bad.csv: no data rows (the file is empty or holds only a header)"},
        {"", "bad.csv: no data rows (the file is empty or holds only a header)"},
    };
    for (const Case& c : cases) {
        std::istringstream in(c.text);
        EXPECT_EQ(io_error_of([&] { read_csv_matrix(in, "bad.csv"); }), c.expect) << c.text;
    }
    std::istringstream in("1,nan\n");
    CsvReadOptions allow;
    allow.allow_nonfinite = true;
    EXPECT_TRUE(std::isnan(read_csv_matrix(in, "ok.csv", allow).values[1]));
}

// 1e-400 is a valid number that underflows (like strtod, to the nearest double), not
// a parse error; a UTF-8 byte order mark is not part of the first field.
TEST(CsvRead, UnderflowIsTheNearestDoubleAndAByteOrderMarkIsIgnored) {
    std::istringstream in("\xEF\xBB\xBF" "0.5,1e-400\n-1e-400,4.9406564584124654e-324\n2e-320,1\n");
    const Matrix m = read_csv_matrix(in, "u.csv");
    ASSERT_EQ(m.rows, 3u);
    ASSERT_EQ(m.cols, 2u);
    EXPECT_EQ(m.values[0], 0.5);
    EXPECT_EQ(m.values[1], 0.0);
    EXPECT_EQ(m.values[2], 0.0);
    EXPECT_TRUE(std::signbit(m.values[2]));
    EXPECT_EQ(m.values[3], std::numeric_limits<double>::denorm_min());
    EXPECT_EQ(m.values[4], 2e-320); // a subnormal is exact, whichever path parses it
    std::istringstream header("\xEF\xBB\xBF" "a,b\n1,2\n");
    const Matrix h = read_csv_matrix(header, "h.csv");
    EXPECT_EQ(h.column_names, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(h.rows, 1u);
}

// Binary input is refused from its first block, not parsed as one enormous line (a
// 2 GB NUL-filled file used to take 19 s and 4.2 GB before "no data rows").
TEST(CsvRead, BinaryInputIsRefusedBeforeParsing) {
    TempDir dir;
    const std::string big = dir.file("zeros.csv");
    {
        std::ofstream f(big, std::ios::binary);
    }
    fs::resize_file(big, std::uintmax_t{1} << 28); // 256 MiB of NUL bytes (sparse)
    EXPECT_EQ(io_error_of([&] { read_csv_matrix(big); }),
              big + ": is not a text (CSV) file: byte 1 is NUL; loss files are CSV text or .npy (by extension)");
    spit(dir.file("u16.csv"), std::string("\xFF\xFE" "1\0,\0" "2\0\n\0", 10));
    EXPECT_EQ(io_error_of([&] { read_csv_matrix(dir.file("u16.csv")); }),
              dir.file("u16.csv") + ": is UTF-16 text; save the CSV file as UTF-8 (or ASCII)");
    const double one = 1.0;
    write_npy(dir.file("m.csv"), {1}, &one);
    EXPECT_EQ(io_error_of([&] { read_csv_matrix(dir.file("m.csv")); }),
              dir.file("m.csv") + ": is a NumPy .npy file; give it a name ending in .npy");
    // A NUL after the first block is still caught, at its line and column.
    spit(dir.file("late.csv"), std::string(5000, '#') + "\n1,2\n3," + std::string(1, '\0') + "\n");
    EXPECT_EQ(io_error_of([&] { read_csv_matrix(dir.file("late.csv")); }),
              dir.file("late.csv") + ":3:3: a NUL byte: not a text (CSV) file");
}

TEST(CsvRead, FromFileNamesThePath) {
    TempDir dir;
    spit(dir.file("l.csv"), "1,2\n3,q\n");
    EXPECT_EQ(io_error_of([&] { read_csv_matrix(dir.file("l.csv")); }),
              dir.file("l.csv") + ":2:3: field 2 is not a number: 'q'");
    EXPECT_NE(io_error_of([&] { read_csv_matrix(dir.file("none.csv")); }).find("cannot open"),
              std::string::npos);
}

// ---- AtomicFile ------------------------------------------------------------------------------------------

TEST(AtomicFile, CommitRenamesTheTemporaryFile) {
    TempDir dir;
    const std::string path = dir.file("out.bin");
    AtomicFile f(path);
    EXPECT_EQ(f.temp_path(), path + ".tmp." + std::to_string(::getpid()));
    f.stream() << "hello";
    EXPECT_EQ(dir.list(), std::vector<std::string>{"out.bin.tmp." + std::to_string(::getpid())})
        << "nothing at the final path before commit()";
    f.commit();
    EXPECT_TRUE(f.committed());
    EXPECT_EQ(dir.list(), std::vector<std::string>{"out.bin"});
    EXPECT_EQ(slurp(path), "hello");
    EXPECT_THROW(f.commit(), IoError);
}

TEST(AtomicFile, WithoutCommitNothingRemainsAndAnOldFileIsKept) {
    TempDir dir;
    const std::string path = dir.file("out.csv");
    {
        AtomicFile f(path);
        f.stream() << "partial";
    }
    EXPECT_TRUE(dir.list().empty());
    spit(path, "old");
    try {
        AtomicFile f(path);
        f.stream() << "new but failed";
        throw std::runtime_error("simulated failure");
    } catch (const std::runtime_error&) {
    }
    EXPECT_EQ(dir.list(), std::vector<std::string>{"out.csv"});
    EXPECT_EQ(slurp(path), "old");
    {
        AtomicFile f(path);
        f.stream() << "new";
        f.commit();
    }
    EXPECT_EQ(slurp(path), "new") << "commit replaces an existing file";
}

TEST(AtomicFile, UnwritableDestinationsThrowAndLeaveNothing) {
    TempDir dir;
    fs::create_directory(dir.file("sub.npy"));
    const std::string m1 = io_error_of([&] { AtomicFile f(dir.file("sub.npy")); });
    EXPECT_NE(m1.find("is a directory"), std::string::npos) << m1;
    const std::string m2 = io_error_of([&] { AtomicFile f(dir.file("nodir/x.npy")); });
    EXPECT_NE(m2.find("does not exist"), std::string::npos) << m2;
    // /proc refuses new files even for root.
    const std::string m3 = io_error_of([] { AtomicFile f("/proc/dpregret_test.npy"); });
    EXPECT_NE(m3.find("/proc/dpregret_test.npy"), std::string::npos) << m3;
    EXPECT_EQ(dir.list(), std::vector<std::string>{"sub.npy"});
    EXPECT_THROW(AtomicFile f(""), IoError);
}

// ---- the output directory on a disk that takes no more bytes ------------------------------------------------------

// A lock file that cannot be written (here: a file-size limit of 0, which fails the write with EFBIG as a full disk
// fails it with ENOSPC) refuses the run and leaves nothing behind: the directory open() created is removed, with no
// stray .lock in it. Run in a child process, whose limit does not touch the test runner.
TEST(OutputDirectory, AnUnwritableLockFileLeavesNoDirectoryBehind) {
    TempDir dir;
    const std::string out = dir.file("new/run");
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        std::signal(SIGXFSZ, SIG_IGN);
        rlimit lim{0, 0};
        if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(3);
        try {
            (void)OutputDirectory::open(out, OutputKind::Run);
        } catch (const IoError& e) {
            ::_exit(std::string(e.what()).find("cannot write the lock file") != std::string::npos ? 0 : 4);
        }
        ::_exit(5); // opened: the limit did not bite
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << "3: setrlimit failed, 4: another error, 5: no error";
    EXPECT_FALSE(fs::exists(dir.file("new"))) << "the directories open() created are removed";
}
