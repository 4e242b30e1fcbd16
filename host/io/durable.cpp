#include "host/io/durable.hpp"

#include <cstdio>
#include <vector>

#include <boost/crc.hpp>

#include "host/io/error.hpp"

namespace dpr::io {

std::string FileDigest::crc_text() const {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(crc32));
    return std::string("crc32:") + buf;
}

FileDigest digest(InFile& file) {
    std::istream& in = file.stream();
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
    if (in.bad()) throw IoError("reading '" + file.path() + "' failed (I/O error)");
    d.crc32 = crc.checksum();
    return d;
}

FileDigest digest_file(const Dir& dir, const std::string& name) {
    InFile f = InFile::open(dir, name);
    return digest(f);
}

FileDigest digest_file(const std::string& path) {
    InFile f = InFile::open_path(path);
    return digest(f);
}

std::uint32_t parse_crc_text(const std::string& text, const std::string& where) {
    const std::string prefix = "crc32:";
    if (text.size() != prefix.size() + 8 || text.compare(0, prefix.size(), prefix) != 0 ||
        text.find_first_not_of("0123456789abcdef", prefix.size()) != std::string::npos)
        throw IoError(where + ": checksum '" + text +
                      "' is not of the form crc32:xxxxxxxx (8 lowercase hex digits)");
    return static_cast<std::uint32_t>(std::stoul(text.substr(prefix.size()), nullptr, 16));
}

void check_digest(const Dir& dir, const std::string& name, const FileDigest& want) {
    const FileDigest got = digest_file(dir, name);
    const std::string path = dir.path_of(name);
    if (got.bytes != want.bytes)
        throw IoError(path + ": " + std::to_string(got.bytes) + " bytes, but " + std::to_string(want.bytes) +
                      " were written (truncated or replaced after dpregret wrote it)");
    if (got.crc32 != want.crc32)
        throw IoError(path + ": checksum " + got.crc_text() + ", but " + want.crc_text() +
                      " was recorded when it was written (the file was damaged or edited)");
}

} // namespace dpr::io
