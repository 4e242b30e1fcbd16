#include "host/results/shards.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "host/results/outcome_files.hpp"
#include "host/io/atomic_file.hpp"
#include "host/io/durable.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "host/io/run_dir.hpp"
#include "host/version.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr {
namespace {

constexpr const char* kFormat = "dpregret-shard/1";

/// p<index>: the prefix of a point's arrays (host/results/outcome_files.hpp).
std::string point_prefix(std::size_t index) { return "p" + std::to_string(index); }

/// A shard directory, opened as the user gave it.
std::shared_ptr<const io::Dir> open_shard(const std::string& dir) {
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec))
        throw ShardError(dir + ": no such directory (give the directories that `dpregret run --shard I/K --out DIR` "
                               "wrote)");
    if (!std::filesystem::is_directory(dir, ec))
        throw ShardError(dir + ": not a directory (a shard is the directory `dpregret run --shard I/K --out DIR` "
                               "wrote)");
    try {
        return std::make_shared<const io::Dir>(io::Dir::open(dir, "merge:"));
    } catch (const io::IoError& e) {
        throw ShardError(e.what());
    }
}

nlohmann::json read_manifest(const io::Dir& dir) {
    const std::string path = dir.path_of(io::kShardManifest);
    std::optional<io::InFile> in;
    try {
        in.emplace(io::InFile::open(dir, io::kShardManifest));
    } catch (const io::UnsafePathError& e) {
        throw ShardError(e.what());
    } catch (const io::IoError&) {
        throw ShardError(path + ": cannot read it (not a complete shard: a shard directory gets shard.json last)");
    }
    try {
        return nlohmann::json::parse(in->stream());
    } catch (const nlohmann::json::exception& e) {
        throw ShardError(path + ": not valid JSON (" + std::string(e.what()) + ")");
    }
}

} // namespace

ShardSpec parse_shard(const std::string& text) {
    const auto fail = [&] {
        return std::invalid_argument("--shard must be I/K with integers 0 <= I < K <= 1000000 (shard I of K; got '" +
                                     text + "')");
    };
    const std::size_t slash = text.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) throw fail();
    const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
    if (a.find_first_not_of("0123456789") != std::string::npos || b.find_first_not_of("0123456789") != std::string::npos ||
        a.size() > 7 || b.size() > 7)
        throw fail();
    ShardSpec s;
    s.index = std::strtoull(a.c_str(), nullptr, 10);
    s.count = std::strtoull(b.c_str(), nullptr, 10);
    if (s.count == 0 || s.count > 1000000 || s.index >= s.count) throw fail();
    return s;
}

void shard_range(const ShardSpec& s, std::uint64_t N, std::uint64_t* first, std::uint64_t* count) {
    // N <= 2^52 and k <= 1e6: the products fit in 128 bits.
    const auto a = static_cast<std::uint64_t>(static_cast<unsigned __int128>(s.index) * N / s.count);
    const auto b = static_cast<std::uint64_t>(static_cast<unsigned __int128>(s.index + 1) * N / s.count);
    *first = a;
    *count = b - a;
}

std::vector<std::string> write_shard_point(const io::Dir& dir, PointRecord& r) {
    std::vector<std::string> paths = write_outcome_arrays(dir, point_prefix(r.point->index), r.result,
                                                          r.learner.diagnostic_names.size(), r.point->per_instance);
    PointResult& o = r.result;
    std::vector<double>().swap(o.regret);
    std::vector<double>().swap(o.realized_regret);
    std::vector<double>().swap(o.comparator);
    std::vector<double>().swap(o.diagnostics);
    std::vector<std::uint64_t>().swap(o.first_nonfinite_round);
    return paths;
}

void write_shard_manifest(const io::Dir& dir, const config::Config& cfg, const std::vector<PointRecord>& recs,
                          const RunMeta& meta, const ShardSpec& shard, std::uint64_t first, std::uint64_t count,
                          const std::vector<InputFile>& inputs) {
    using nlohmann::json;
    const BuildInfo& b = build_info();
    json j;
    j["format"] = kFormat;
    j["dpregret"] = {{"version", b.version}, {"git_commit", b.git_commit}};
    j["rng_stream_layout"] = rng::kStreamLayout;
    j["shard"] = {{"index", shard.index}, {"count", shard.count}, {"first_instance", first}, {"instances", count},
                  {"total_instances", cfg.run.instances}};
    json overrides = json::array();
    for (const std::string& s : meta.overrides) overrides.push_back(utf8_or_escaped(s));
    std::error_code ec;
    const std::string abs = !meta.config_absolute_path.empty() ? meta.config_absolute_path
                                                               : std::filesystem::absolute(meta.config_path, ec).string();
    j["config"] = {{"path", utf8_or_escaped(meta.config_path)},
                   {"absolute_path", utf8_or_escaped(ec ? meta.config_path : abs)},
                   {"overrides", overrides},
                   {"resolved_toml", utf8_or_escaped(cfg.resolved_toml)}};
    put_run_meta(j, meta);
    j["inputs"] = inputs_json(inputs);
    json points = json::array();
    for (const PointRecord& r : recs) {
        json files = json::object();
        for (const char* suffix : kOutcomeSuffixes) {
            const io::FileDigest d = io::digest_file(dir, point_prefix(r.point->index) + suffix);
            files[suffix] = {{"bytes", d.bytes}, {"crc32", d.crc_text()}};
        }
        points.push_back({{"point", r.point->index},
                          {"backend", r.result.backend},
                          {"launch_policy", r.result.launch_policy},
                          {"wall_seconds", r.result.wall_seconds},
                          {"checkpoints", r.result.checkpoints},
                          {"files", files}});
    }
    j["points"] = points;
    io::AtomicFile f(dir, io::kShardManifest);
    f.stream() << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    f.commit();
}

ShardSet read_shards(const std::vector<std::string>& dirs) {
    if (dirs.empty()) throw ShardError("merge needs at least one shard directory");
    const BuildInfo& b = build_info();
    std::vector<nlohmann::json> js;
    std::vector<std::shared_ptr<const io::Dir>> handles;
    for (const std::string& d : dirs) {
        handles.push_back(open_shard(d));
        js.push_back(read_manifest(*handles.back()));
    }
    const nlohmann::json& j0 = js[0];
    const std::uint64_t k = j0.at("shard").at("count").get<std::uint64_t>();
    std::vector<std::ptrdiff_t> slot(k, -1);
    for (std::size_t s = 0; s < js.size(); ++s) {
        const nlohmann::json& j = js[s];
        const std::string who = dirs[s] + ": ";
        if (j.value("format", "") != kFormat)
            throw ShardError(who + "not a shard of this format (" + j.value("format", "?") + ", expected " + kFormat + ")");
        const std::string ver = j.at("dpregret").at("version").get<std::string>();
        const std::string commit = j.at("dpregret").at("git_commit").get<std::string>();
        if (ver != b.version || commit != b.git_commit)
            throw ShardError(who + "written by dpregret " + ver + " (" + commit + "), this is " + b.version + " (" +
                             b.git_commit + "); merge shards with the binary that ran them");
        if (j.at("rng_stream_layout").get<int>() != static_cast<int>(rng::kStreamLayout))
            throw ShardError(who + "RNG stream layout " + j.at("rng_stream_layout").dump() + ", this binary's is " +
                             std::to_string(rng::kStreamLayout));
        if (j.at("config").at("resolved_toml") != j0.at("config").at("resolved_toml"))
            throw ShardError(who + "ran a different configuration than " + dirs[0] +
                             " (config.resolved_toml of shard.json differs: other keys, values or seed)");
        // The resolved TOML decides the results; the config's path and the spelling of --set do not.
        const std::string changed = input_change(inputs_from_json(j0.at("inputs"), dirs[0] + "/shard.json"),
                                                 inputs_from_json(j.at("inputs"), who + "shard.json"));
        if (!changed.empty())
            throw ShardError(who + "read other input files than " + dirs[0] + ": " + changed +
                             " between the two shards; shards of different inputs cannot be merged");
        const std::uint64_t kk = j.at("shard").at("count").get<std::uint64_t>();
        if (kk != k)
            throw ShardError(who + "is one of " + std::to_string(kk) + " shards, " + dirs[0] + " one of " + std::to_string(k));
        const std::uint64_t i = j.at("shard").at("index").get<std::uint64_t>();
        if (i >= k) throw ShardError(who + "shard index " + std::to_string(i) + " is not below its count " + std::to_string(k));
        if (slot[i] >= 0)
            throw ShardError(who + "is shard " + std::to_string(i) + "/" + std::to_string(k) + ", as is " +
                             dirs[static_cast<std::size_t>(slot[i])]);
        // The instance range must be the one shard i of k has: an edited range would leave gaps or overlaps.
        const std::uint64_t N = j0.at("shard").at("total_instances").get<std::uint64_t>();
        if (j.at("shard").at("total_instances").get<std::uint64_t>() != N)
            throw ShardError(who + "is a shard of " + j.at("shard").at("total_instances").dump() + " instances, " +
                             dirs[0] + " of " + std::to_string(N));
        std::uint64_t first = 0, count = 0;
        shard_range(ShardSpec{i, k}, N, &first, &count);
        if (j.at("shard").at("first_instance").get<std::uint64_t>() != first ||
            j.at("shard").at("instances").get<std::uint64_t>() != count)
            throw ShardError(who + "shard.json says instances [" + j.at("shard").at("first_instance").dump() + ", +" +
                             j.at("shard").at("instances").dump() + "), but shard " + std::to_string(i) + "/" +
                             std::to_string(k) + " of " + std::to_string(N) + " instances holds [" +
                             std::to_string(first) + ", +" + std::to_string(count) +
                             "): the shards would not tile the run's instances exactly (shard.json was edited)");
        slot[i] = static_cast<std::ptrdiff_t>(s);
    }
    std::string missing;
    std::uint64_t n_missing = 0;
    for (std::uint64_t i = 0; i < k; ++i)
        if (slot[i] < 0 && ++n_missing <= 8) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(k);
    if (n_missing > 8) missing += " and " + std::to_string(n_missing - 8) + " more";
    if (n_missing) throw ShardError("shards missing: " + missing + " (every shard of the run is needed)");
    ShardSet set;
    std::vector<std::string> devices;
    for (std::uint64_t i = 0; i < k; ++i) {
        const nlohmann::json& j = js[static_cast<std::size_t>(slot[i])];
        set.dirs.push_back(dirs[static_cast<std::size_t>(slot[i])]);
        set.handles.push_back(handles[static_cast<std::size_t>(slot[i])]);
        set.manifests.push_back(std::make_shared<const nlohmann::json>(j));
        const std::string dev = j.at("device").get<std::string>();
        if (std::find(devices.begin(), devices.end(), dev) == devices.end()) devices.push_back(dev);
        set.meta.wall_seconds += j.at("wall_seconds").get<double>();
        set.meta.threads = std::max(set.meta.threads, j.at("threads").get<unsigned>());
        set.meta.memory_estimate_bytes = std::max(set.meta.memory_estimate_bytes, j.at("memory_estimate_bytes").get<std::uint64_t>());
        const std::string st = j.at("started_at").get<std::string>();
        if (set.meta.started_at.empty() || st < set.meta.started_at) set.meta.started_at = st;
    }
    set.config_path = j0.at("config").at("absolute_path").get<std::string>();
    set.meta.config_path = j0.at("config").at("path").get<std::string>();
    for (const auto& o : j0.at("config").at("overrides")) set.overrides.push_back(o.get<std::string>());
    set.resolved_toml = j0.at("config").at("resolved_toml").get<std::string>();
    set.meta.overrides = set.overrides;
    set.meta.backend_requested = j0.at("backend_requested").get<std::string>();
    for (const std::string& d : devices) set.meta.device += (set.meta.device.empty() ? "" : "; ") + d;
    return set;
}

std::vector<ShardPiece> scan_point(const ShardSet& set, PointRecord& r) {
    PointResult& o = r.result;
    o = PointResult{};
    const std::size_t p = r.point->index;
    std::vector<ShardPiece> pieces;
    for (std::size_t s = 0; s < set.dirs.size(); ++s) {
        const std::string& dir = set.dirs[s];
        const nlohmann::json& j = *set.manifests[s];
        const nlohmann::json& points = j.at("points");
        const nlohmann::json* pj = nullptr;
        if (p < points.size() && points[p].at("point").get<std::size_t>() == p) pj = &points[p]; // written in order
        else
            for (const auto& x : points)
                if (x.at("point").get<std::size_t>() == p) pj = &x;
        if (!pj) throw ShardError(dir + ": shard.json has no point " + std::to_string(p));
        const auto cks = pj->at("checkpoints").get<std::vector<std::uint64_t>>();
        if (s == 0) {
            o.checkpoints = cks;
            o.backend = pj->at("backend").get<std::string>();
            o.launch_policy = pj->at("launch_policy").get<std::string>();
        } else {
            if (cks != o.checkpoints) throw ShardError(dir + ": point " + std::to_string(p) + " has other checkpoints");
            const std::string be = pj->at("backend").get<std::string>();
            if (be != o.backend && o.backend.find(be) == std::string::npos) o.backend += "+" + be;
            const std::string pol = pj->at("launch_policy").get<std::string>();
            if (o.launch_policy.find(pol) == std::string::npos) o.launch_policy += " | " + pol;
        }
        o.wall_seconds += pj->at("wall_seconds").get<double>();
        pieces.push_back({set.handles[s], point_prefix(p), j.at("shard").at("instances").get<std::uint64_t>()});
        const io::Dir& shard_dir = *pieces.back().dir;
        try { // every array exactly as the shard wrote it: no flipped bit, no swapped or truncated file
            const nlohmann::json& files = pj->at("files");
            for (const char* suffix : kOutcomeSuffixes) {
                const nlohmann::json& d = files.at(suffix);
                io::FileDigest want;
                want.bytes = d.at("bytes").get<std::uint64_t>();
                want.crc32 = io::parse_crc_text(d.at("crc32").get<std::string>(), dir + "/shard.json");
                io::check_digest(shard_dir, pieces.back().prefix + suffix, want);
            }
        } catch (const nlohmann::json::exception& e) {
            throw ShardError(dir + "/shard.json: point " + std::to_string(p) + ": its array checksums are damaged (" +
                             e.what() + ")");
        } catch (const io::IoError& e) {
            throw ShardError(std::string(e.what()) + "; run this shard again");
        }
        if (!r.point->per_instance) {
            std::vector<double> cmp;
            try {
                const io::NpyArray a = io::read_npy(shard_dir, pieces.back().prefix + ".comparator.npy");
                if (a.shape != io::Shape{o.checkpoints.size()})
                    throw ShardError(shard_dir.path_of(pieces.back().prefix + ".comparator.npy") + ": shape " + io::shape_string(a.shape) +
                                     ", expected " + io::shape_string({o.checkpoints.size()}));
                cmp = a.values;
            } catch (const io::IoError& e) {
                throw ShardError(e.what());
            }
            if (s == 0) o.comparator = std::move(cmp);
            else if (cmp != o.comparator)
                throw ShardError(dir + ": point " + std::to_string(p) + "'s shared comparator differs from shard 0's");
        }
    }
    o.completed = true;
    return pieces;
}

void check_instance_total(const std::vector<ShardPiece>& pieces, const PointRecord& r, std::uint64_t expected) {
    std::uint64_t total = 0;
    for (const ShardPiece& p : pieces) total += p.instances;
    if (total != expected)
        throw ShardError("the shards hold " + std::to_string(total) + " instances of point " + std::to_string(r.point->index) +
                         ", the config " + std::to_string(expected));
}

void merge_point(const ShardSet& set, PointRecord& r, std::uint64_t expected) {
    const std::vector<ShardPiece> pieces = scan_point(set, r);
    check_instance_total(pieces, r, expected);
    PointResult& o = r.result;
    const std::size_t nd = r.learner.diagnostic_names.size();
    const std::uint64_t total = expected;
    if (total > 0xFFFFFFFFull)
        throw ShardError("the shards hold " + std::to_string(total) + " instances of point " + std::to_string(r.point->index) +
                         ", more than 4294967295; merging them in memory would need every instance's values (at least "
                         "64 GiB per checkpoint): use dpregret merge --bounded-memory");
    for (const ShardPiece& p : pieces) {
        PointResult piece;
        try {
            read_outcome_arrays(*p.dir, p.prefix, p.instances, o.checkpoints.size(), nd, r.point->per_instance, piece);
        } catch (const std::runtime_error& e) {
            throw ShardError(e.what());
        }
        const auto cat = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
        cat(o.regret, piece.regret);
        cat(o.realized_regret, piece.realized_regret);
        cat(o.diagnostics, piece.diagnostics);
        cat(o.first_nonfinite_round, piece.first_nonfinite_round);
        if (r.point->per_instance) cat(o.comparator, piece.comparator);
    }
    o.instances = total;
}

} // namespace dpr
