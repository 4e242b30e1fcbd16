#include "host/io/dir_lock.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

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
    return "pid " + std::to_string(static_cast<long long>(::getpid())) + " on host " + host + " since " + when;
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
        path_ = std::move(o.path_);
        o.fd_ = -1;
    }
    return *this;
}

DirectoryLock DirectoryLock::acquire(const std::string& dir, const std::string& what) {
    const std::string path = (std::filesystem::path(dir) / kFileName).string();
    // A holder that releases removes the file first; a process that opened the old file then locks a file no longer
    // named .lock, sees it (fstat vs stat) and tries again. The retries end: each one follows another holder's exit.
    for (int attempt = 0; attempt < 100; ++attempt) {
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            const int err = errno;
            throw IoError(what + " " + dir + ": cannot create files in the directory (" + std::strerror(err) +
                          ", creating its lock file " + kFileName + "); choose a writable directory");
        }
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            if (err == EWOULDBLOCK) {
                const std::string holder = read_holder(fd);
                ::close(fd);
                throw IoError(what + " " + dir + " is in use by another dpregret process (" + holder +
                              "); two processes on one directory would mix or delete each other's results. Wait for "
                              "it to finish, or choose another directory");
            }
            ::close(fd);
            throw IoError(what + " " + dir + ": cannot lock " + path + " (" + std::strerror(err) +
                          "); the file system does not support flock (on Lustre mount with -o flock), so dpregret "
                          "cannot keep a second process out of the directory");
        }
        struct stat held {}, named {};
        if (::fstat(fd, &held) != 0 || ::stat(path.c_str(), &named) != 0 || held.st_ino != named.st_ino ||
            held.st_dev != named.st_dev) {
            ::close(fd); // the holder we waited behind removed it: lock the new one
            continue;
        }
        const std::string text = holder_text() + "\n";
        if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
            const int err = errno;
            ::unlink(path.c_str()); // held: no other process uses this file (release() does the same); a full disk
            ::close(fd);            // must not leave a stray .lock that keeps a new directory from being removed
            throw IoError(what + " " + dir + ": cannot write the lock file " + path + " (" + std::strerror(err) + ")");
        }
        DirectoryLock lock;
        lock.fd_ = fd;
        lock.path_ = path;
        return lock;
    }
    throw IoError(what + " " + dir + ": could not lock " + path + " after 100 attempts (other processes keep "
                  "taking and releasing it)");
}

void DirectoryLock::release() noexcept {
    if (fd_ < 0) return;
    ::unlink(path_.c_str());
    ::close(fd_); // releases the flock
    fd_ = -1;
}

} // namespace dpr::io
