#include "host/engine/progress_store.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "host/engine/outcome_files.hpp"
#include "host/io/atomic_file.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "host/version.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr {
namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "dpregret-progress/1";

void write_json(const std::string& path, const nlohmann::json& j) {
    io::AtomicFile f(path);
    f.stream() << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    f.commit();
}

nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument("cannot read " + path);
    try {
        return nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(path + ": not valid JSON (" + std::string(e.what()) + ")");
    }
}

} // namespace

std::string ProgressStore::prefix(std::size_t point, std::uint64_t piece) const {
    return (fs::path(dir_) / ("p" + std::to_string(point) + ".b" + std::to_string(piece))).string();
}

std::string ProgressStore::file(std::size_t point, std::uint64_t piece, const char* what) const {
    return prefix(point, piece) + "." + what;
}

bool ProgressStore::exists(const std::string& out_dir) {
    std::error_code ec;
    return fs::is_directory(fs::path(out_dir) / kDirName, ec);
}

ProgressStore ProgressStore::create(const std::string& out_dir, const ProgressSpec& spec) {
    ProgressStore s;
    s.dir_ = (fs::path(out_dir) / kDirName).string();
    s.spec_ = spec;
    std::error_code ec;
    fs::create_directory(s.dir_, ec);
    if (ec) throw io::IoError("cannot create " + s.dir_ + ": " + ec.message());
    write_json((fs::path(s.dir_) / "spec.json").string(),
               {{"format", kFormat},
                {"dpregret", {{"version", spec.version}, {"git_commit", spec.git_commit}}},
                {"rng_stream_layout", spec.layout},
                {"config", {{"path", spec.config_path}, {"absolute_path", spec.absolute_path},
                            {"overrides", spec.overrides}, {"resolved_toml", spec.resolved_toml}}},
                {"backend_requested", spec.backend_requested},
                {"instances_per_piece", spec.batch},
                {"shard", spec.shard}});
    return s;
}

ProgressStore ProgressStore::open(const std::string& out_dir) {
    ProgressStore s;
    s.dir_ = (fs::path(out_dir) / kDirName).string();
    if (!exists(out_dir))
        throw std::invalid_argument("--resume " + out_dir + ": no unfinished run there (no " + std::string(kDirName) +
                                    "/; a completed run has run.json and nothing to resume)");
    const nlohmann::json j = read_json((fs::path(s.dir_) / "spec.json").string());
    if (j.value("format", "") != kFormat)
        throw std::invalid_argument("--resume " + out_dir + ": " + kDirName + "/spec.json is not of format " + kFormat);
    const BuildInfo& b = build_info();
    s.spec_.version = j.at("dpregret").at("version").get<std::string>();
    s.spec_.git_commit = j.at("dpregret").at("git_commit").get<std::string>();
    s.spec_.layout = j.at("rng_stream_layout").get<int>();
    if (s.spec_.version == b.version && s.spec_.git_commit == b.git_commit &&
        s.spec_.layout != static_cast<int>(rng::kStreamLayout))
        throw std::invalid_argument("--resume " + out_dir + ": the run's draws use RNG stream layout " +
                                    std::to_string(s.spec_.layout) + " (" + kDirName +
                                    "/spec.json), this binary's use layout " + std::to_string(rng::kStreamLayout) +
                                    " (docs/RANDOMNESS.md); its pieces cannot be continued with other draws");
    if (s.spec_.version != b.version || s.spec_.git_commit != b.git_commit)
        throw std::invalid_argument("--resume " + out_dir + ": the run was started by dpregret " + s.spec_.version + " (" +
                                    s.spec_.git_commit + "), this is " + b.version + " (" + b.git_commit +
                                    "); resume it with the binary that started it");
    const auto& c = j.at("config");
    s.spec_.config_path = c.at("path").get<std::string>();
    s.spec_.absolute_path = c.at("absolute_path").get<std::string>();
    s.spec_.overrides = c.at("overrides").get<std::vector<std::string>>();
    s.spec_.resolved_toml = c.at("resolved_toml").get<std::string>();
    s.spec_.backend_requested = j.at("backend_requested").get<std::string>();
    s.spec_.batch = j.at("instances_per_piece").get<std::uint64_t>();
    s.spec_.shard = j.value("shard", "");
    // Temporary files of the killed process (its pieces in flight): never complete, removed.
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(s.dir_, ec))
        if (e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path(), ec);
    return s;
}

bool ProgressStore::has(std::size_t point, std::uint64_t piece) const {
    std::error_code ec;
    return fs::exists(file(point, piece, "json"), ec);
}

void ProgressStore::save(std::size_t point, std::uint64_t piece, const PointOutcome& o, std::size_t ndiag,
                         bool per_instance_cmp) const {
    const std::uint64_t n = o.instances;
    write_outcome_arrays(prefix(point, piece), o, ndiag, per_instance_cmp);
    write_json(file(point, piece, "json"), {{"instances", n},
                                           {"checkpoints", o.checkpoints},
                                           {"backend", o.backend},
                                           {"launch_policy", o.policy},
                                           {"wall_seconds", o.wall_seconds}});
}

PointOutcome ProgressStore::load(std::size_t point, std::uint64_t piece, std::uint64_t instances, std::size_t ncheck,
                                 std::size_t ndiag, bool per_instance_cmp) const {
    const nlohmann::json j = read_json(file(point, piece, "json"));
    PointOutcome o;
    o.instances = j.at("instances").get<std::uint64_t>();
    o.checkpoints = j.at("checkpoints").get<std::vector<std::uint64_t>>();
    o.backend = j.at("backend").get<std::string>();
    o.policy = j.at("launch_policy").get<std::string>();
    o.wall_seconds = j.at("wall_seconds").get<double>();
    o.completed = true;
    if (o.instances != instances || o.checkpoints.size() != ncheck)
        throw std::invalid_argument(file(point, piece, "json") + ": the piece does not fit the run (" +
                                    std::to_string(o.instances) + " instances, expected " + std::to_string(instances) + ")");
    try {
        read_outcome_arrays(prefix(point, piece), instances, ncheck, ndiag, per_instance_cmp, o);
    } catch (const std::runtime_error& e) {
        throw std::invalid_argument(e.what());
    }
    return o;
}

void ProgressStore::remove() const noexcept {
    std::error_code ec;
    fs::remove_all(dir_, ec);
}


} // namespace dpr
