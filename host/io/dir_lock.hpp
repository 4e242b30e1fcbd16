#pragma once
// The exclusive lock of an output directory (docs/OUTPUTS.md "Durability, locks and checksums"): `run` (with or
// without --resume), `merge` and `audit` hold it on their output directory for the whole command, so that a second
// process on the same directory -- a Slurm array that forgot the task id in --out, a --resume started twice -- is
// refused instead of mixing or deleting results:
//
//   io::DirectoryLock lock = io::DirectoryLock::acquire("runs/x", "--out");   // IoError if another process has it
//   ...                                                                       // released (and .lock removed)
//                                                                             // when `lock` is destroyed
//
// It is flock(2) on <dir>/.lock: the kernel releases it when the holder exits in any way (SIGKILL included), so a
// lock left by a crash is taken over by the next process without anyone removing a file. The holder writes its pid,
// host name and start time into the file; a refused process names them. flock works on local file systems and on
// NFS (Linux emulates it with POSIX byte-range locks); Lustre needs the `flock` mount option. A file system
// that refuses locks is reported as such.
#include <string>

namespace dpr::io {

class DirectoryLock {
  public:
    static constexpr const char* kFileName = ".lock";

    DirectoryLock() = default;
    /// Takes <dir>/.lock (dir must exist). Throws IoError "`what` DIR is in use by dpregret (pid P on host H since
    /// S)..." when another process holds it, or naming the reason when the lock cannot be taken at all.
    static DirectoryLock acquire(const std::string& dir, const std::string& what);
    ~DirectoryLock() { release(); }
    DirectoryLock(DirectoryLock&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
    DirectoryLock& operator=(DirectoryLock&& o) noexcept;
    DirectoryLock(const DirectoryLock&) = delete;
    DirectoryLock& operator=(const DirectoryLock&) = delete;

    bool held() const { return fd_ >= 0; }
    /// <dir>/.lock while held, else "".
    std::string path() const { return held() ? path_ : std::string(); }
    /// Removes <dir>/.lock and releases the lock (idempotent). Removing before releasing is safe: a process that
    /// opened the old file and locks it afterwards sees that the name now points elsewhere (or nowhere) and retries.
    void release() noexcept;

  private:
    int fd_ = -1;
    std::string path_;
};

} // namespace dpr::io
