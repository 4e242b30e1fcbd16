#include "host/io/durable.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <boost/crc.hpp>

#include "host/io/error.hpp"

namespace dpr::io {

std::string FileDigest::crc_text() const {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(crc32));
    return std::string("crc32:") + buf;
}

FileDigest digest_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError("cannot read '" + path + "' (" + std::strerror(errno) + ")");
    boost::crc_32_type crc;
    std::vector<char> buf(1u << 20);
    FileDigest d;
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        const std::streamsize n = in.gcount();
        if (n <= 0) break;
        crc.process_bytes(buf.data(), static_cast<std::size_t>(n));
        d.bytes += static_cast<std::uint64_t>(n);
    }
    if (in.bad()) throw IoError("reading '" + path + "' failed (I/O error)");
    d.crc32 = crc.checksum();
    return d;
}

std::uint32_t parse_crc_text(const std::string& text, const std::string& where) {
    const std::string prefix = "crc32:";
    if (text.size() != prefix.size() + 8 || text.compare(0, prefix.size(), prefix) != 0 ||
        text.find_first_not_of("0123456789abcdef", prefix.size()) != std::string::npos)
        throw IoError(where + ": checksum '" + text + "' is not of the form crc32:xxxxxxxx (8 lowercase hex digits)");
    return static_cast<std::uint32_t>(std::stoul(text.substr(prefix.size()), nullptr, 16));
}

void check_digest(const std::string& path, const FileDigest& want) {
    const FileDigest got = digest_file(path);
    if (got.bytes != want.bytes)
        throw IoError(path + ": " + std::to_string(got.bytes) + " bytes, but " + std::to_string(want.bytes) +
                      " were written (truncated or replaced after dpregret wrote it)");
    if (got.crc32 != want.crc32)
        throw IoError(path + ": checksum " + got.crc_text() + ", but " + want.crc_text() +
                      " was recorded when it was written (the file was damaged or edited)");
}

namespace {

void sync_fd_of(const std::string& path, int flags, bool directory) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        throw IoError("cannot open '" + path + "' to flush it to disk (" + std::strerror(err) + ")");
    }
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0 && !(directory && (err == EINVAL || err == EROFS)))
        throw IoError("flushing '" + path + "' to disk failed (" + std::strerror(err) + ")");
}

} // namespace

void fsync_path(const std::string& path) { sync_fd_of(path, O_RDONLY, false); }

void fsync_directory(const std::string& dir) { sync_fd_of(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY, true); }

} // namespace dpr::io
