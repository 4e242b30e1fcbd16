#include "host/io/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <streambuf>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "host/io/error.hpp"

namespace dpr::io {

namespace {

std::string errno_text(int err) {
    return err != 0 ? std::strerror(err) : "unknown error";
}

} // namespace

/// The temporary file's stream buffer: a 64 KiB buffer over the descriptor that remembers why a write failed
/// (ENOSPC, EDQUOT, EIO, EFBIG), so that the error names the reason instead of "unknown error".
struct AtomicFile::Buf : std::streambuf {
    explicit Buf(int f) : fd(f), buf(1 << 16) { setp(buf.data(), buf.data() + buf.size()); }
    ~Buf() override { close(); }

    /// Writes out what is buffered; false (and `error` set) on failure.
    bool drain() {
        const char* p = pbase();
        while (p < pptr()) {
            const ssize_t n = ::write(fd, p, static_cast<std::size_t>(pptr() - p));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                error = n < 0 ? errno : EIO;
                return false;
            }
            p += n;
        }
        setp(buf.data(), buf.data() + buf.size());
        return true;
    }
    int_type overflow(int_type c) override {
        if (error || !drain()) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override { return error || !drain() ? -1 : 0; }
    /// Closes the descriptor (idempotent); false (and `error` set) if the close failed.
    bool close() {
        if (fd < 0) return true;
        const int rc = ::close(fd);
        fd = -1;
        if (rc != 0 && !error) error = errno;
        return rc == 0;
    }

    int fd;
    int error = 0;
    std::vector<char> buf;
};

AtomicFile::AtomicFile(const Dir& dir, std::string name) : dir_(dir.dup()), name_(std::move(name)) {
    path_ = dir_.path_of(name_);
    open_temp();
}

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
    namespace fs = std::filesystem;
    if (path.empty()) throw IoError("cannot write to an empty path");
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw IoError("cannot write '" + path + "': it is a directory");
    const fs::path p(path);
    const fs::path parent = p.parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
        throw IoError("cannot write '" + path + "': directory '" + parent.string() + "' does not exist");
    try {
        dir_ = Dir::open(parent.empty() ? std::string(".") : parent.string(), "the directory of");
    } catch (const UnsafePathError&) {
        throw;
    } catch (const IoError& e) {
        throw IoError("cannot write '" + path + "': " + e.what());
    }
    name_ = p.filename().string();
    open_temp();
}

void AtomicFile::open_temp() {
    if (name_.empty() || name_ == "." || name_ == ".." || name_.find('/') != std::string::npos)
        throw IoError("cannot write '" + path_ + "': not a file name");
    if (dir_.kind(name_) == EntryKind::Directory)
        throw IoError("cannot write '" + path_ + "': it is a directory");
    dir_.require_regular_or_missing(name_);
    temp_name_ = name_ + ".tmp." + std::to_string(static_cast<long long>(::getpid()));
    int err = 0;
    UniqueFd fd = dir_.create_new(temp_name_, O_WRONLY, 0666, &err);
    if (!fd && err == EEXIST) {
        // A regular file of that name is a temporary file of a killed process that had this pid: stale,
        // removed. Anything else (a link, a FIFO) was put there by someone else and is refused, naming it.
        if (!dir_.has_file(temp_name_)) throw IoError("cannot create " + temp_path() + " (it exists)");
        dir_.remove_file(temp_name_);
        fd = dir_.create_new(temp_name_, O_WRONLY, 0666, &err);
    }
    if (!fd) {
        if (err == EEXIST) dir_.require_regular_or_missing(temp_name_); // a link raced in: named as such
        throw IoError("cannot write '" + path_ + "': cannot create '" + temp_path() +
                      "': " + errno_text(err));
    }
    buf_ = std::make_unique<Buf>(fd.release());
    out_ = std::make_unique<std::ostream>(buf_.get());
}

AtomicFile::~AtomicFile() {
    if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
    out_.reset();
    buf_.reset(); // closes the descriptor
    if (!temp_name_.empty() && dir_.is_open()) dir_.remove_file(temp_name_);
}

void AtomicFile::check() const {
    if (out_ && out_->good()) return;
    const int err = buf_ ? buf_->error : 0;
    throw IoError("writing '" + path_ + "' failed: " + (err ? errno_text(err) : "disk full or I/O error"));
}

void AtomicFile::commit() {
    if (committed_) throw IoError("'" + path_ + "' was already committed");
    if (!buf_) throw IoError("'" + path_ + "' is not open");
    out_->flush();
    bool ok = out_->good() && buf_->error == 0;
    // The bytes are on disk before the name points to them.
    if (ok && ::fsync(buf_->fd) != 0) {
        buf_->error = errno;
        ok = false;
    }
    if (ok) ok = buf_->close();
    if (!ok) {
        const int err = buf_->error;
        discard();
        throw IoError("writing '" + path_ + "' failed: " + errno_text(err));
    }
    out_.reset();
    buf_.reset();
    try {
        dir_.rename(temp_name_, name_);
    } catch (...) {
        discard();
        throw;
    }
    committed_ = true;
    // The rename itself survives a crash of the node once the directory is flushed.
    dir_.sync();
}

void AtomicFile::remove_committed() noexcept {
    if (committed_) dir_.remove_file(name_);
}

} // namespace dpr::io
