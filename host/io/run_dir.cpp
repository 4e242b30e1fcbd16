#include "host/io/run_dir.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include "host/io/error.hpp"

namespace dpr::io {

const char* const kRunFiles[4] = {"summary.csv", "final_regret.csv", "points.jsonl", "run.json"};

namespace fs = std::filesystem;

namespace {

/// Creates the missing components of `dir` (shallowest first), recording each one created.
void create_path(const fs::path& dir, std::vector<std::string>& created) {
    std::vector<fs::path> missing;
    std::error_code ec;
    for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
        missing.push_back(p);
        if (p == p.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        if (fs::create_directory(*it, ec)) created.push_back(it->string());
        else if (ec) throw IoError("--out " + dir.string() + ": cannot create the directory " + it->string() + " (" +
                                   ec.message() + ")");
    }
    if (!fs::is_directory(dir, ec)) throw IoError("--out " + dir.string() + ": exists and is not a directory");
}

/// Proves that a file can be created, written and removed in `dir`.
void probe(const fs::path& dir) {
    const fs::path p = dir / (".dpregret-probe." + std::to_string(static_cast<long long>(::getpid())));
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        const int err = errno;
        throw IoError("--out " + dir.string() + ": cannot create files in the directory (" + std::strerror(err) +
                      "); choose a writable directory");
    }
    const char byte = 0;
    const bool wrote = ::write(fd, &byte, 1) == 1;
    const int err = errno;
    ::close(fd);
    ::unlink(p.c_str());
    if (!wrote)
        throw IoError("--out " + dir.string() + ": cannot write into the directory (" + std::strerror(err) + ")");
}

/// True if `name` is <run file>.tmp.<pid> (or a probe file) of a process that no longer exists.
bool stale_temp(const std::string& name) {
    std::vector<std::string> prefixes = {".dpregret-probe."};
    for (const char* base : kRunFiles) prefixes.push_back(std::string(base) + ".tmp.");
    for (const std::string& prefix : prefixes) {
        if (name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string digits = name.substr(prefix.size());
        if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
            return false;
        const long long pid = std::stoll(digits);
        if (pid <= 0 || pid > 0x7fffffff) return true; // no process can have it
        return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    }
    return false;
}

/// Removes the stale temporary files in `dir`, recording their names.
void remove_stale(const std::string& dir, std::vector<std::string>& removed) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (e.is_regular_file(ec) && stale_temp(name) && fs::remove(e.path(), ec)) removed.push_back(name);
    }
}

} // namespace

OutputDirectory OutputDirectory::open(const std::string& dir) {
    OutputDirectory out;
    out.path_ = dir;
    std::error_code ec;
    if (fs::exists(fs::path(dir) / "run.json", ec))
        throw IoError("--out " + dir + " already holds a complete run (run.json); choose another directory");
    create_path(dir, out.created_);
    try {
        out.lock_ = DirectoryLock::acquire(dir, "--out");
        if (fs::exists(fs::path(dir) / "run.json", ec)) // completed while this process waited for the lock
            throw IoError("--out " + dir + " already holds a complete run (run.json); choose another directory");
        probe(dir);
        remove_stale(dir, out.stale_);
    } catch (...) {
        out.remove_created();
        throw;
    }
    return out;
}

OutputDirectory OutputDirectory::create_unique(const std::string& parent, const std::string& stem) {
    OutputDirectory out;
    create_path(parent, out.created_);
    try {
        std::error_code ec;
        for (unsigned k = 1; k < 100000; ++k) {
            const fs::path p = fs::path(parent) / (k == 1 ? stem : stem + "-" + std::to_string(k));
            if (fs::create_directory(p, ec)) { // false, no error: it exists (another run's): try the next
                out.path_ = p.string();
                out.created_.push_back(out.path_);
                out.lock_ = DirectoryLock::acquire(out.path_, "--out");
                probe(p);
                return out;
            }
            if (ec) throw IoError("cannot create the output directory " + p.string() + " (" + ec.message() + ")");
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
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw IoError(what + " " + dir + ": " + (fs::exists(dir, ec) ? "not a directory" : "no such directory"));
    out.lock_ = DirectoryLock::acquire(dir, what);
    remove_stale(dir, out.stale_);
    return out;
}

void OutputDirectory::remove_created() noexcept {
    lock_.release(); // its file would keep a created directory from being empty
    std::error_code ec;
    for (auto it = created_.rbegin(); it != created_.rend(); ++it)
        if (fs::is_empty(*it, ec) && !ec) fs::remove(*it, ec);
}

} // namespace dpr::io
