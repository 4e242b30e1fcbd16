#include "host/io/run_dir.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/io/error.hpp"

namespace dpr::io {

const char* const kRunFiles[4] = {"summary.csv", "final_regret.csv", "points.jsonl", "run.json"};
const char* const kAuditFiles[4] = {"statistic.npy", "privacy_region.csv", "audit.json", "pair.toml"};

namespace fs = std::filesystem;

namespace {

constexpr const char* kProbePrefix = ".dpregret-probe.";

bool all_digits(const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

/// p<digits>.<word>.npy: a shard's array of one point (host/results/outcome_files.hpp).
bool is_shard_array(const std::string& name) {
    if (name.size() < 7 || name[0] != 'p' || name.compare(name.size() - 4, 4, ".npy") != 0) return false;
    const std::size_t dot = name.find('.');
    return dot != std::string::npos && all_digits(name.substr(1, dot - 1)) && dot + 5 < name.size();
}

/// A result file's name (not a temporary file's).
bool is_result_name(const std::string& name) {
    for (const char* f : kRunFiles)
        if (name == f) return true;
    for (const char* f : kAuditFiles)
        if (name == f) return true;
    return name == kShardManifest || is_shard_array(name);
}

/// If `name` is <result file>.tmp.<digits> or a probe file, the pid it names (else -1).
long long temp_pid(const std::string& name) {
    std::string digits;
    if (name.compare(0, std::strlen(kProbePrefix), kProbePrefix) == 0) {
        digits = name.substr(std::strlen(kProbePrefix));
    } else {
        const std::size_t at = name.rfind(".tmp.");
        if (at == std::string::npos || !is_result_name(name.substr(0, at))) return -1;
        digits = name.substr(at + 5);
    }
    if (!all_digits(digits) || digits.size() > 18) return -1;
    return std::stoll(digits);
}

/// Creates the missing components of `dir` (shallowest first), recording each one created.
void create_path(const fs::path& dir, std::vector<std::string>& created, const std::string& what) {
    std::vector<fs::path> missing;
    std::error_code ec;
    for (fs::path p = dir; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path()) {
        missing.push_back(p);
        if (p == p.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        if (fs::create_directory(*it, ec))
            created.push_back(it->string());
        else if (ec)
            throw IoError(what + " " + dir.string() + ": cannot create the directory " + it->string() + " (" +
                          ec.message() + ")");
    }
    if (!fs::is_directory(dir, ec))
        throw IoError(what + " " + dir.string() + ": exists and is not a directory");
}

/// --out given as a link: followed only when the link is the user's own (or root's). A link that another user
/// placed at the path the user named would send every result file, and .lock, into a directory of that user's
/// choosing.
void check_out_link(const std::string& dir, const std::string& what) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return;
    if (st.st_uid == ::geteuid() || st.st_uid == 0) return;
    throw UnsafePathError(what + " " + dir + " is a symbolic link that belongs to another user (uid " +
                          std::to_string(st.st_uid) +
                          "); dpregret follows a link given as the output directory only "
                          "when you own it. Give the directory it points to, or another directory");
}

/// Proves that a file can be created, written and removed in `dir`.
void probe(const Dir& dir, const std::string& what) {
    const std::string name = kProbePrefix + std::to_string(static_cast<long long>(::getpid()));
    int err = 0;
    UniqueFd fd = dir.create_new(name, O_WRONLY, 0644, &err);
    if (!fd && err == EEXIST && dir.has_file(name)) { // a killed process with this pid left it
        dir.remove_file(name);
        fd = dir.create_new(name, O_WRONLY, 0644, &err);
    }
    if (!fd) {
        if (err == EEXIST) dir.require_regular_or_missing(name);
        throw IoError(what + " " + dir.path() + ": cannot create files in the directory (" +
                      std::strerror(err) + "); choose a writable directory");
    }
    const char byte = 0;
    const bool wrote = ::write(fd.get(), &byte, 1) == 1;
    const int werr = errno;
    fd.reset();
    dir.remove_file(name);
    if (!wrote)
        throw IoError(what + " " + dir.path() + ": cannot write into the directory (" + std::strerror(werr) +
                      ")");
}

/// UnsafePathError naming `name` in `dir` unless it is missing or what dpregret keeps there: a real directory
/// for .progress and .progress.removed, a regular file for everything else.
void check_entry(const Dir& dir, const std::string& name) {
    const EntryKind k = dir.kind(name);
    const bool is_dir = name == kProgressDirName || name == kProgressRemovedName;
    if (k == EntryKind::Missing || k == (is_dir ? EntryKind::Directory : EntryKind::Regular)) return;
    if (is_dir && k == EntryKind::Regular)
        throw UnsafePathError(dir.path_of(name) +
                              " is a regular file where dpregret keeps a directory of its own; "
                              "remove it, or choose another directory");
    if (is_dir)
        (void)dir.open_sub(name); // a link or a special file: UnsafePathError naming what it is
    else
        (void)dir.has_file(name); // likewise
}

/// UnsafePathError for the first link or special file at a name dpregret writes in `dir`.
void check_names(const Dir& dir) {
    for (const std::string& name : dir.names())
        if (is_output_name(name)) check_entry(dir, name);
}

/// Removes the stale temporary files in `dir` (regular files only), recording their names.
void remove_stale(const Dir& dir, std::vector<std::string>& removed) {
    for (const std::string& name : dir.names()) {
        const long long pid = temp_pid(name);
        if (pid < 0 || dir.kind(name) != EntryKind::Regular) continue;
        const bool gone =
            pid <= 0 || pid > 0x7fffffff || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
        if (gone && dir.remove_file(name)) removed.push_back(name);
    }
}

} // namespace

bool is_output_name(const std::string& name) {
    if (name == DirectoryLock::kFileName || name == kProgressDirName || name == kProgressRemovedName)
        return true;
    return is_result_name(name) || temp_pid(name) >= 0;
}

std::string results_in(const Dir& dir) {
    if (dir.has_file("run.json")) return "a complete run (run.json)";
    if (dir.has_file("audit.json")) return "a complete audit (audit.json)";
    if (dir.has_file(kShardManifest)) return "a complete shard (shard.json)";
    check_entry(dir, kProgressDirName);
    if (dir.kind(kProgressDirName) == EntryKind::Directory) return "an unfinished run (.progress/)";
    return "";
}

namespace {

/// Refuses a directory that holds results: they would mix with this command's (or be replaced by them).
void refuse_results(const Dir& dir, OutputKind kind, const std::string& what) {
    const std::string there = results_in(dir);
    if (there.empty()) return;
    const std::string& p = dir.path();
    if (there.find(kProgressDirName) != std::string::npos) {
        if (kind == OutputKind::Audit)
            throw IoError(what + " " + p + " holds " + there +
                          "; an audit's files would mix with its results. Choose "
                          "another directory");
        throw IoError(what + " " + p + " holds " + there +
                      " that no process is running: continue it with dpregret "
                      "run --resume " +
                      p + ", or remove " + dir.path_of(kProgressDirName) + " to start over");
    }
    throw IoError(what + " " + p + " already holds " + there +
                  "; results of different runs or kinds would mix in one "
                  "directory. Choose another directory");
}

} // namespace

OutputDirectory OutputDirectory::open(const std::string& dir, OutputKind kind, const std::string& what) {
    OutputDirectory out;
    out.path_ = dir;
    check_out_link(dir, what);
    {
        std::error_code ec;
        if (fs::is_directory(dir, ec)) { // a cheap first look, before anything is created or locked
            const Dir d = Dir::open(dir, what);
            const std::string there = results_in(d);
            if (!there.empty() && there.find(kProgressDirName) == std::string::npos)
                refuse_results(d, kind, what);
        }
    }
    create_path(dir, out.created_, what);
    try {
        out.dir_ = Dir::open(dir, what);
        out.lock_ = DirectoryLock::acquire(out.dir_, what);
        refuse_results(out.dir_, kind,
                       what); // again under the lock: another process may have finished in between
        check_names(out.dir_);
        probe(out.dir_, what);
        remove_stale(out.dir_, out.stale_);
    } catch (...) {
        out.remove_created();
        throw;
    }
    return out;
}

OutputDirectory OutputDirectory::create_unique(const std::string& parent, const std::string& stem) {
    OutputDirectory out;
    create_path(parent, out.created_, "--out");
    try {
        std::error_code ec;
        for (unsigned k = 1; k < 100000; ++k) {
            const fs::path p = fs::path(parent) / (k == 1 ? stem : stem + "-" + std::to_string(k));
            if (::mkdir(p.c_str(), 0777) == 0) {
                out.path_ = p.string();
                out.created_.push_back(out.path_);
                // A new directory, ours: opened without following a link that could have replaced it
                // meanwhile.
                const Dir parent_dir = Dir::open(parent, "--out");
                out.dir_ = parent_dir.open_sub(p.filename().string());
                out.lock_ = DirectoryLock::acquire(out.dir_, "--out");
                probe(out.dir_, "--out");
                return out;
            }
            const int err = errno;
            if (err != EEXIST)
                throw IoError("cannot create the output directory " + p.string() + " (" + std::strerror(err) +
                              ")");
        }
        throw IoError("cannot find a free output directory name under " + parent);
    } catch (...) {
        out.remove_created();
        throw;
    }
}

OutputDirectory OutputDirectory::resume(const std::string& dir, const std::string& what) {
    OutputDirectory out;
    out.path_ = dir;
    out.dir_ = Dir::open(dir, what);
    out.lock_ = DirectoryLock::acquire(out.dir_, what);
    check_names(out.dir_);
    remove_stale(out.dir_, out.stale_);
    return out;
}

void OutputDirectory::remove_created() noexcept {
    lock_.release(); // its file would keep a created directory from being empty
    // rmdir removes only an empty directory, and never follows a link.
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) ::rmdir(it->c_str());
}

} // namespace dpr::io
