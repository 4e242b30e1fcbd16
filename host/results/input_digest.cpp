#include "host/results/input_digest.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "host/io/error.hpp"

namespace dpr {

std::vector<InputFile> digest_inputs(std::vector<std::string> paths) {
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    std::vector<InputFile> out;
    for (std::string& p : paths) {
        InputFile f;
        f.digest = io::digest_file(p);
        f.path = std::move(p);
        out.push_back(std::move(f));
    }
    return out;
}

nlohmann::json inputs_json(const std::vector<InputFile>& inputs) {
    nlohmann::json a = nlohmann::json::array();
    for (const InputFile& f : inputs)
        a.push_back({{"path", f.path}, {"bytes", f.digest.bytes}, {"crc32", f.digest.crc_text()}});
    return a;
}

std::vector<InputFile> inputs_from_json(const nlohmann::json& j, const std::string& where) {
    std::vector<InputFile> out;
    try {
        for (const auto& e : j) {
            InputFile f;
            f.path = e.at("path").get<std::string>();
            f.digest.bytes = e.at("bytes").get<std::uint64_t>();
            f.digest.crc32 = io::parse_crc_text(e.at("crc32").get<std::string>(), where);
            out.push_back(std::move(f));
        }
    } catch (const nlohmann::json::exception& e) {
        throw io::IoError(where + ": its list of input files is damaged (" + std::string(e.what()) + ")");
    }
    return out;
}

std::string input_change(const std::vector<InputFile>& recorded, const std::vector<InputFile>& now) {
    const auto text = [](const io::FileDigest& d) { return std::to_string(d.bytes) + " bytes " + d.crc_text(); };
    for (const InputFile& r : recorded) {
        const auto it = std::find_if(now.begin(), now.end(), [&](const InputFile& f) { return f.path == r.path; });
        if (it == now.end()) return r.path + " was an input then and is not one now";
        if (it->digest != r.digest)
            return r.path + " has changed (" + text(r.digest) + " then, " + text(it->digest) + " now)";
    }
    for (const InputFile& f : now)
        if (std::none_of(recorded.begin(), recorded.end(), [&](const InputFile& r) { return r.path == f.path; }))
            return f.path + " is an input now and was not one then";
    return "";
}

} // namespace dpr
