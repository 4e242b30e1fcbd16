#include "host/io/dir_lock.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/io/error.hpp"

namespace dpr::io {

namespace {

std::string holder_text() {
    char host[256] = {0};
    if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
    char when[32] = {0};
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return "pid " + std::to_string(static_cast<long long>(::getpid())) + " on host " + host + " since " +
           when;
}

std::string read_holder(int fd) {
    char buf[512];
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string s = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    return s.empty() ? "a process that has not written its pid yet" : s;
}

} // namespace

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& o) noexcept {
    if (this != &o) {
        release();
        fd_ = o.fd_;
        dir_ = std::move(o.dir_);
        path_ = std::move(o.path_);
        o.fd_ = -1;
    }
    return *this;
}

namespace {

/// True if `name` in `dir` is still the file open as `fd` (not removed, not replaced).
bool still_named(const Dir& dir, const char* name, int fd) {
    struct stat held {
    }, named{};
    return ::fstat(fd, &held) == 0 && ::fstatat(dir.fd(), name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
           held.st_ino == named.st_ino && held.st_dev == named.st_dev;
}

} // namespace

DirectoryLock DirectoryLock::acquire(const Dir& dir, const std::string& what) {
    const std::string path = dir.path_of(kFileName);
    const std::string& shown = dir.path();
    // Each attempt either creates .lock (O_EXCL: a file of our own, the only one we ever write into) or finds
    // one: held, it is refused; not held, it is a crashed holder's and is removed, and the next attempt
    // creates it. A holder that releases removes the file first; a process that opened the old file then
    // locks a file no longer named .lock, sees it and tries again. The retries end: each one follows another
    // holder's exit.
    for (int attempt = 0; attempt < 100; ++attempt) {
        int err = 0;
        UniqueFd fd = dir.create_new(kFileName, O_RDWR, 0644, &err);
        const bool created = static_cast<bool>(fd);
        if (!created) {
            if (err != EEXIST)
                throw IoError(what + " " + shown + ": cannot create files in the directory (" +
                              std::strerror(err) + ", creating its lock file " + kFileName +
                              "); choose a writable directory");
            fd = UniqueFd(::openat(dir.fd(), kFileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
            if (!fd) {
                const int oerr = errno;
                if (oerr == ENOENT) continue;              // its holder released it in between
                dir.require_regular_or_missing(kFileName); // a link (ELOOP): UnsafePathError naming it
                throw IoError(what + " " + shown + ": cannot open its lock file " + path + " (" +
                              std::strerror(oerr) + ")");
            }
            require_regular_fd(fd.get(), path); // a directory, a FIFO: UnsafePathError
        }
        if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
            const int ferr = errno;
            if (ferr == EWOULDBLOCK) {
                const std::string holder = read_holder(fd.get());
                throw IoError(
                    what + " " + shown + " is in use by another dpregret process (" + holder +
                    "); two processes on one directory would mix or delete each other's results. Wait for "
                    "it to finish, or choose another directory");
            }
            if (created) dir.remove_file(kFileName);
            throw IoError(
                what + " " + shown + ": cannot lock " + path + " (" + std::strerror(ferr) +
                "); the file system does not support flock (on Lustre mount with -o flock), so dpregret "
                "cannot keep a second process out of the directory");
        }
        if (!still_named(dir, kFileName, fd.get())) continue; // the holder we waited behind removed it: again
        if (!created) {
            // A crashed holder's file (the kernel released its lock): removed while we hold it, then created
            // anew.
            if (!dir.remove_file(kFileName)) {
                const int rerr = errno;
                throw IoError(what + " " + shown + ": cannot remove the stale lock file " + path + " (" +
                              std::strerror(rerr) +
                              "; a process that ended without releasing it left it); remove "
                              "it by hand if no dpregret process uses " +
                              shown);
            }
            continue;
        }
        const std::string text = holder_text() + "\n";
        if (::pwrite(fd.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
            const int werr = errno;
            dir.remove_file(
                kFileName); // held: no other process uses this file (release() does the same); a full
            //                             disk must not leave a stray .lock that keeps a new directory from
            //                             going
            throw IoError(what + " " + shown + ": cannot write the lock file " + path + " (" +
                          std::strerror(werr) + ")");
        }
        DirectoryLock lock;
        lock.fd_ = fd.release();
        lock.dir_ = dir.dup();
        lock.path_ = path;
        return lock;
    }
    throw IoError(what + " " + shown + ": could not lock " + path +
                  " after 100 attempts (other processes keep "
                  "taking and releasing it)");
}

void DirectoryLock::release() noexcept {
    if (fd_ < 0) return;
    if (still_named(dir_, kFileName, fd_)) dir_.remove_file(kFileName);
    ::close(fd_); // releases the flock
    fd_ = -1;
}

} // namespace dpr::io
