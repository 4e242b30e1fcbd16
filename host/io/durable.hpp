#pragma once
// Durability and integrity of what dpregret writes (docs/OUTPUTS.md "Durability, locks and checksums"):
//
//   io::FileDigest d = io::digest_file(dir, name);  // size and CRC-32 of its bytes (recorded beside a piece)
//   io::check_digest(dir, name, d);                  // IoError naming the file unless it has those bytes
//
// (Flushing to disk: io::AtomicFile fsyncs what it writes and io::Dir::sync() a directory, host/io/dir.hpp.)
//
// The CRC-32 (Boost.CRC's crc_32_type: the polynomial of zlib, PNG and Ethernet) detects every burst of up to
// 32 damaged bits and any other accidental damage with probability 1 - 2^-32; it is a guard against torn
// writes, bad disks and edits, not against someone forging a file.
#include <cstdint>
#include <string>

#include "host/io/dir.hpp"

namespace dpr::io {

struct FileDigest {
    std::uint64_t bytes = 0;
    std::uint32_t crc32 = 0;
    /// "crc32:%08x" (what the JSON files record).
    std::string crc_text() const;
    bool operator==(const FileDigest& o) const { return bytes == o.bytes && crc32 == o.crc32; }
    bool operator!=(const FileDigest& o) const { return !(*this == o); }
};

/// Reads the whole file from where the stream is; throws IoError naming it if it cannot be read.
FileDigest digest(InFile& file);
/// `name` in `dir` (never through a link: host/io/dir.hpp).
FileDigest digest_file(const Dir& dir, const std::string& name);
/// A path the user gave (an input file).
FileDigest digest_file(const std::string& path);
/// Parses crc_text(); throws IoError naming `where` if `text` is not of that form.
std::uint32_t parse_crc_text(const std::string& text, const std::string& where);
/// IoError naming the file unless it exists and has exactly `want`'s size and CRC.
void check_digest(const Dir& dir, const std::string& name, const FileDigest& want);

} // namespace dpr::io
