#include "host/results/progress_store.hpp"

#include <cstdio>
#include <optional>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "host/io/atomic_file.hpp"
#include "host/io/dir.hpp"
#include "host/io/durable.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "host/version.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr {

namespace {

constexpr const char* kFormat = "dpregret-progress/1";

void write_json(const io::Dir& dir, const std::string& name, const nlohmann::json& j) {
    io::AtomicFile f(dir, name);
    f.stream() << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    f.commit();
}

/// std::invalid_argument naming the file when it cannot be read or parsed (a link or special file: UnsafePathError,
/// which the caller reports as such).
nlohmann::json read_json(const io::Dir& dir, const std::string& name) {
    const std::string path = dir.path_of(name);
    std::optional<io::InFile> f;
    try {
        f.emplace(io::InFile::open(dir, name));
    } catch (const io::UnsafePathError&) {
        throw;
    } catch (const io::IoError&) {
        throw std::invalid_argument("cannot read " + path);
    }
    try {
        return nlohmann::json::parse(f->stream());
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(path + ": not valid JSON (" + std::string(e.what()) + ")");
    }
}

} // namespace

std::string ProgressStore::piece_name(std::size_t point, std::uint64_t piece) {
    return "p" + std::to_string(point) + ".b" + std::to_string(piece);
}

std::string ProgressStore::group_name(std::size_t first_point) { return "g" + std::to_string(first_point); }

bool ProgressStore::exists(const std::string& out_dir) {
    struct stat st {};
    const std::string p = out_dir.empty() || out_dir.back() == '/' ? out_dir + kDirName : out_dir + "/" + kDirName;
    return ::lstat(p.c_str(), &st) == 0;
}

std::string ProgressStore::nothing_to_resume(const std::string& out_dir) {
    return "--resume " + out_dir + ": no unfinished run there (no " + std::string(kDirName) +
           "/; a completed run has run.json and nothing to resume)";
}

ProgressStore ProgressStore::create(const io::Dir& out, const ProgressSpec& spec) {
    ProgressStore s;
    s.out_ = out.dup();
    s.spec_ = spec;
    out.remove_tree(kRemovedName); // a finished run's store, its removal killed (remove()); links removed, not followed
    out.make_sub(kDirName);
    s.store_ = out.open_sub(kDirName);
    out.sync();
    write_json(s.store_, "spec.json",
               {{"format", kFormat},
                {"dpregret", {{"version", spec.version}, {"git_commit", spec.git_commit}}},
                {"rng_stream_layout", spec.layout},
                {"config", {{"path", spec.config_path}, {"absolute_path", spec.absolute_path},
                            {"overrides", spec.overrides}, {"resolved_toml", spec.resolved_toml}}},
                {"backend_requested", spec.backend_requested},
                {"instances_per_piece", spec.batch},
                {"group_work", spec.group_work},
                {"shard", spec.shard},
                {"inputs", inputs_json(spec.inputs)}});
    return s;
}

ProgressStore ProgressStore::open(const io::Dir& out) {
    ProgressStore s;
    const std::string& out_dir = out.path();
    if (out.kind(kDirName) == io::EntryKind::Missing) throw std::invalid_argument(nothing_to_resume(out_dir));
    s.out_ = out.dup();
    s.store_ = out.open_sub(kDirName); // a link or a file there: io::UnsafePathError
    const nlohmann::json j = read_json(s.store_, "spec.json");
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
    s.spec_.group_work = j.at("group_work").get<double>();
    s.spec_.shard = j.value("shard", "");
    try {
        s.spec_.inputs = inputs_from_json(j.at("inputs"), s.store_.path_of("spec.json"));
    } catch (const std::exception& e) {
        throw std::invalid_argument("--resume " + out_dir + ": " + e.what());
    }
    // Temporary files of the killed process (its pieces in flight): never complete, removed (a link is removed
    // itself).
    for (const std::string& name : s.store_.names())
        if (name.find(".tmp.") != std::string::npos) s.store_.remove_file(name);
    return s;
}

std::uint64_t ProgressStore::stored_bytes() const {
    std::uint64_t n = 0;
    try {
        for (const std::string& name : store_.names()) {
            struct stat st {};
            if (::fstatat(store_.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                n += static_cast<std::uint64_t>(st.st_size);
        }
    } catch (const io::IoError&) {
        // an unreadable store counts as empty: the disk estimate then asks for all of it
    }
    return n;
}

std::size_t ProgressStore::finished_pieces() const {
    std::size_t n = 0;
    try {
        for (const std::string& name : store_.names())
            if (name != "spec.json" && name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) ++n;
    } catch (const io::IoError&) {
    }
    return n;
}

bool ProgressStore::has(const std::string& name) const {
    return store_.kind(name + ".json") != io::EntryKind::Missing;
}

namespace {

/// The values a piece stores of one point, in the order written: regret, realized, comparator, diagnostics,
/// first non-finite round (host/results/outcome_files.hpp's arrays).
std::uint64_t piece_values(const ProgressStore::PieceShape& s) {
    const std::uint64_t n = s.instances, c = s.ncheck;
    return 2 * n * c + (s.per_instance_cmp ? n * c : c) + n * s.ndiag + n;
}

} // namespace

void ProgressStore::save(const std::string& name, const std::vector<PieceShape>& shapes,
                         const std::vector<const PointResult*>& outcomes) const {
    std::uint64_t total = 0;
    for (const PieceShape& sh : shapes) total += piece_values(sh);
    const std::string array = name + ".npy";
    {
        io::AtomicFile f(store_, array);
        io::NpyWriter npy(f.stream(), {total});
        for (std::size_t k = 0; k < shapes.size(); ++k) {
            const PieceShape& sh = shapes[k];
            const PointResult& o = *outcomes[k];
            const std::uint64_t n = sh.instances, c = sh.ncheck;
            npy.write(o.regret.data(), n * c);
            npy.write(o.realized_regret.data(), n * c);
            npy.write(o.comparator.data(), sh.per_instance_cmp ? n * c : c);
            npy.write(o.diagnostics.data(), n * sh.ndiag);
            const std::vector<double> bad(o.first_nonfinite_round.begin(), o.first_nonfinite_round.end()); // < 2^53
            npy.write(bad.data(), n);
        }
        npy.finish();
        f.check();
        f.commit();
    }
    const io::FileDigest d = io::digest_file(store_, array);
    nlohmann::json entries = nlohmann::json::array();
    for (std::size_t k = 0; k < shapes.size(); ++k) {
        const PointResult& o = *outcomes[k];
        entries.push_back({{"point", shapes[k].point},
                           {"instances", shapes[k].instances},
                           {"checkpoints", o.checkpoints},
                           {"backend", o.backend},
                           {"launch_policy", o.launch_policy},
                           {"wall_seconds", o.wall_seconds}});
    }
    write_json(store_, name + ".json", {{"points", entries}, {"values", total}, {"bytes", d.bytes}, {"crc32", d.crc_text()}});
}

std::vector<PointResult> ProgressStore::load(const std::string& name, const std::vector<PieceShape>& shapes) const {
    const std::string marker = store_.path_of(name + ".json"), array = store_.path_of(name + ".npy");
    std::vector<PointResult> out;
    try {
        const nlohmann::json j = read_json(store_, name + ".json");
        const nlohmann::json& entries = j.at("points");
        std::uint64_t total = 0;
        for (const PieceShape& sh : shapes) total += piece_values(sh);
        if (entries.size() != shapes.size() || j.at("values").get<std::uint64_t>() != total)
            throw std::invalid_argument(marker + ": the piece does not fit the run (" + std::to_string(entries.size()) +
                                        " point(s), " + j.at("values").dump() + " values; expected " +
                                        std::to_string(shapes.size()) + " and " + std::to_string(total) + ")");
        io::FileDigest want;
        want.bytes = j.at("bytes").get<std::uint64_t>();
        want.crc32 = io::parse_crc_text(j.at("crc32").get<std::string>(), marker);
        io::check_digest(store_, name + ".npy", want);
        const io::NpyArray a = io::read_npy(store_, name + ".npy");
        if (a.shape != io::Shape{total})
            throw std::invalid_argument(array + ": shape " + io::shape_string(a.shape) + ", expected (" +
                                        std::to_string(total) + ",)");
        const double* v = a.values.data();
        const auto take = [&v](std::uint64_t n) {
            std::vector<double> x(v, v + n);
            v += n;
            return x;
        };
        for (std::size_t k = 0; k < shapes.size(); ++k) {
            const PieceShape& sh = shapes[k];
            const nlohmann::json& e = entries[k];
            PointResult o;
            o.instances = e.at("instances").get<std::uint64_t>();
            o.checkpoints = e.at("checkpoints").get<std::vector<std::uint64_t>>();
            if (e.at("point").get<std::size_t>() != sh.point || o.instances != sh.instances ||
                o.checkpoints.size() != sh.ncheck)
                throw std::invalid_argument(marker + ": entry " + std::to_string(k) + " is not point " +
                                            std::to_string(sh.point) + " with " + std::to_string(sh.instances) +
                                            " instances at " + std::to_string(sh.ncheck) + " checkpoints");
            o.backend = e.at("backend").get<std::string>();
            o.launch_policy = e.at("launch_policy").get<std::string>();
            o.wall_seconds = e.at("wall_seconds").get<double>();
            o.completed = true;
            const std::uint64_t n = sh.instances, c = sh.ncheck;
            o.regret = take(n * c);
            o.realized_regret = take(n * c);
            o.comparator = take(sh.per_instance_cmp ? n * c : c);
            o.diagnostics = take(n * sh.ndiag);
            const std::vector<double> bad = take(n);
            o.first_nonfinite_round.assign(bad.begin(), bad.end());
            out.push_back(std::move(o));
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(marker + ": damaged (" + std::string(e.what()) + ")");
    } catch (const std::invalid_argument&) {
        throw;
    } catch (const io::UnsafePathError&) {
        throw; // a link or special file in the store is refused, not recomputed around
    } catch (const std::runtime_error& e) { // io::IoError
        throw std::invalid_argument(e.what());
    }
    return out;
}

void ProgressStore::remove() const noexcept {
    // One rename takes the store out of the output directory, then its files go. A kill during the removal would
    // otherwise leave a .progress without spec.json beside a complete run.json: a directory that can neither be
    // resumed nor reused. Now a kill leaves the whole store (--resume recomputes nothing) or none of it, at worst
    // with .progress.removed beside the outputs, which the next run in the directory removes. Everything by the
    // output directory's descriptor: a link is removed itself, never followed.
    if (!out_.is_open()) return;
    out_.remove_tree(kRemovedName); // left by an earlier kill
    if (::renameat(out_.fd(), kDirName, out_.fd(), kRemovedName) != 0) {
        out_.remove_tree(kDirName);
        return;
    }
    try {
        out_.sync();
    } catch (const io::IoError&) {
        // The rename stands or the store is whole: either is a consistent directory.
    }
    out_.remove_tree(kRemovedName);
}

} // namespace dpr
