#pragma once
// The contents of the files a run reads (loss files: the `path` key of the file adversaries) are part of the
// run's identity: a resumable run records them in .progress/spec.json and a shard in shard.json, and `run --resume`
// and `merge` refuse an input that changed in between, naming it (docs/OUTPUTS.md "Durability, locks and
// checksums"). Without this, rewriting L.npy between a kill and --resume, or between two shards, would silently
// mix two loss sequences in one result.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "host/io/durable.hpp"

namespace dpr {

struct InputFile {
    std::string path; ///< absolute, as the config resolved it
    io::FileDigest digest;
};

/// Each distinct path once, in sorted order, with its size and CRC-32. Throws io::IoError naming a file that cannot
/// be read.
std::vector<InputFile> digest_inputs(std::vector<std::string> paths);

/// [{"path": ..., "bytes": ..., "crc32": "crc32:..."}, ...]
nlohmann::json inputs_json(const std::vector<InputFile>& inputs);
/// The inverse; throws io::IoError naming `where` if the JSON is not of that form.
std::vector<InputFile> inputs_from_json(const nlohmann::json& j, const std::string& where);

/// "" if `now` has the same files with the same contents as `recorded`; otherwise what differs, naming the file
/// ("L.npy: 8128 bytes crc32:... then, 8128 bytes crc32:... now").
std::string input_change(const std::vector<InputFile>& recorded, const std::vector<InputFile>& now);

} // namespace dpr
