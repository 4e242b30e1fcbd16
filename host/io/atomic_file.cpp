#include "host/io/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

#include "host/io/error.hpp"

#if !defined(__GLIBCXX__)
#error                                                                                                       \
    "host/io/atomic_file.cpp needs libstdc++ (__gnu_cxx::stdio_filebuf) to write a file opened by descriptor"
#endif
#include <ext/stdio_filebuf.h>

namespace dpr::io {

namespace {

std::string errno_text(int err) {
    return err != 0 ? std::strerror(err) : "unknown error";
}

} // namespace

struct AtomicFile::Buf {
    explicit Buf(int fd) : fb(fd, std::ios::out | std::ios::binary, 1 << 16) {}
    __gnu_cxx::stdio_filebuf<char> fb; // owns the descriptor until close()
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
    out_ = std::make_unique<std::ostream>(&buf_->fb);
}

AtomicFile::~AtomicFile() {
    if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
    out_.reset();
    if (buf_) {
        buf_->fb.close();
        buf_.reset();
    }
    if (!temp_name_.empty() && dir_.is_open()) dir_.remove_file(temp_name_);
}

void AtomicFile::check() const {
    if (!out_ || !out_->good()) throw IoError("writing '" + path_ + "' failed (disk full or I/O error)");
}

void AtomicFile::commit() {
    if (committed_) throw IoError("'" + path_ + "' was already committed");
    if (!buf_) throw IoError("'" + path_ + "' is not open");
    errno = 0;
    out_->flush();
    int err = errno;
    bool ok = out_->good();
    // The bytes are on disk before the name points to them.
    if (ok && ::fsync(buf_->fb.fd()) != 0) {
        err = errno;
        ok = false;
    }
    if (ok) {
        errno = 0;
        ok = buf_->fb.close() != nullptr;
        if (!ok) err = errno;
    }
    if (!ok) {
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
