#include "host/io/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include "host/io/durable.hpp"
#include "host/io/error.hpp"

namespace dpr::io {

namespace {

std::string errno_text(int err) {
    return err != 0 ? std::strerror(err) : "unknown error";
}

} // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
    namespace fs = std::filesystem;
    if (path_.empty()) throw IoError("cannot write to an empty path");
    std::error_code ec;
    if (fs::is_directory(path_, ec)) throw IoError("cannot write '" + path_ + "': it is a directory");
    const fs::path parent = fs::path(path_).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
        throw IoError("cannot write '" + path_ + "': directory '" + parent.string() + "' does not exist");
    temp_path_ = path_ + ".tmp." + std::to_string(static_cast<long long>(::getpid()));
    errno = 0;
    out_.open(temp_path_, std::ios::binary | std::ios::out | std::ios::trunc);
    if (!out_.is_open()) {
        const int err = errno;
        throw IoError("cannot write '" + path_ + "': cannot create '" + temp_path_ + "': " + errno_text(err));
    }
}

AtomicFile::~AtomicFile() {
    if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
    if (out_.is_open()) out_.close();
    if (!temp_path_.empty()) std::remove(temp_path_.c_str());
}

void AtomicFile::check() const {
    if (!out_.good()) throw IoError("writing '" + path_ + "' failed (disk full or I/O error)");
}

void AtomicFile::commit() {
    if (committed_) throw IoError("'" + path_ + "' was already committed");
    errno = 0;
    out_.flush();
    const bool wrote = out_.good();
    out_.close();
    const int err = errno;
    if (!wrote || out_.fail()) {
        discard();
        throw IoError("writing '" + path_ + "' failed: " + errno_text(err));
    }
    try {
        fsync_path(temp_path_); // the bytes are on disk before the name points to them
    } catch (const IoError&) {
        discard();
        throw;
    }
    if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
        const int rerr = errno;
        discard();
        throw IoError("cannot rename '" + temp_path_ + "' to '" + path_ + "': " + errno_text(rerr));
    }
    committed_ = true;
    // The rename itself survives a crash of the node once the directory is flushed.
    fsync_directory(std::filesystem::path(path_).parent_path().string());
}

} // namespace dpr::io
