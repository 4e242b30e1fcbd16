#pragma once
// Durability and integrity of what dpregret writes (docs/OUTPUTS.md "Durability, locks and checksums"):
//
//   io::fsync_path(file);            // the file's bytes reach the disk (not only the page cache)
//   io::fsync_directory(dir);        // a rename or create in `dir` survives a crash of the node
//   io::FileDigest d = io::digest_file(path);   // size and CRC-32 of its bytes, e.g. to record beside a piece
//   io::check_digest(path, d);       // IoError naming the file if it no longer has those bytes
//
// The CRC-32 (Boost.CRC's crc_32_type: the polynomial of zlib, PNG and Ethernet) detects every burst of up to 32
// damaged bits and any other accidental damage with probability 1 - 2^-32; it is a guard against torn writes, bad
// disks and edits, not against someone forging a file.
#include <cstdint>
#include <string>

namespace dpr::io {

struct FileDigest {
    std::uint64_t bytes = 0;
    std::uint32_t crc32 = 0;
    /// "crc32:%08x" (what the JSON files record).
    std::string crc_text() const;
    bool operator==(const FileDigest& o) const { return bytes == o.bytes && crc32 == o.crc32; }
    bool operator!=(const FileDigest& o) const { return !(*this == o); }
};

/// Reads the whole file; throws IoError naming it if it cannot be read.
FileDigest digest_file(const std::string& path);
/// Parses crc_text(); throws IoError naming `where` if `text` is not of that form.
std::uint32_t parse_crc_text(const std::string& text, const std::string& where);
/// IoError naming the file unless it exists and has exactly `want`'s size and CRC.
void check_digest(const std::string& path, const FileDigest& want);

/// fsync(2) of a file or directory; throws IoError naming it on failure. fsync_directory ignores file systems that
/// cannot sync a directory (EINVAL: some network and FUSE file systems), as their renames are durable on return.
void fsync_path(const std::string& path);
void fsync_directory(const std::string& dir);

} // namespace dpr::io
