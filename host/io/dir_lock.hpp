#pragma once
// The exclusive lock of an output directory (docs/OUTPUTS.md "Durability, locks and checksums"): `run` (with
// or without --resume), `merge` and `audit` hold it on their output directory for the whole command, so that
// a second process on the same directory -- a Slurm array that forgot the task id in --out, a --resume
// started twice -- is refused instead of mixing or deleting results:
//
//   io::DirectoryLock lock = io::DirectoryLock::acquire(dir, "--out");  // IoError if another process
//   ...                                                                // holds it; released (and .lock
//                                                                      // removed) when `lock` is destroyed
//
// It is flock(2) on <dir>/.lock: the kernel releases it when the holder exits in any way (SIGKILL included),
// so a lock left by a crash is taken over by the next process without anyone removing a file. The holder
// writes its pid, host name and start time into the file; a refused process names them. flock works on local
// file systems and on NFS (Linux emulates it with POSIX byte-range locks); Lustre needs the `flock` mount
// option. A file system that refuses locks is reported as such.
//
// The directory may be shared with other users (docs/OUTPUTS.md "Links and special files in an output
// directory"), so dpregret never writes into a .lock it did not create: it creates the file by the
// directory's descriptor with O_CREAT | O_EXCL | O_NOFOLLOW, and writes its holder line only into that new
// file. An existing .lock is opened read-only without following a link (flock needs no write access): held,
// it names its holder; not held, it is a crashed holder's, and is removed and created anew. A .lock that is a
// link, a directory or a FIFO is refused with UnsafePathError (exit 2), naming it.
#include <string>

#include "host/io/dir.hpp"

namespace dpr::io {

class DirectoryLock {
  public:
    static constexpr const char* kFileName = ".lock";

    DirectoryLock() = default;
    /// Takes <dir>/.lock. Throws IoError "`what` DIR is in use by dpregret (pid P on host H since S)..." when
    /// another process holds it, UnsafePathError when .lock is a link or not a regular file, or IoError
    /// naming the reason when the lock cannot be taken at all.
    static DirectoryLock acquire(const Dir& dir, const std::string& what);
    ~DirectoryLock() { release(); }
    DirectoryLock(DirectoryLock&& o) noexcept
        : fd_(o.fd_), dir_(std::move(o.dir_)), path_(std::move(o.path_)) {
        o.fd_ = -1;
    }
    DirectoryLock& operator=(DirectoryLock&& o) noexcept;
    DirectoryLock(const DirectoryLock&) = delete;
    DirectoryLock& operator=(const DirectoryLock&) = delete;

    bool held() const { return fd_ >= 0; }
    /// <dir>/.lock while held, else "".
    std::string path() const { return held() ? path_ : std::string(); }
    /// Removes <dir>/.lock and releases the lock (idempotent). Removing before releasing is safe: a process
    /// that opened the old file and locks it afterwards sees that the name now points elsewhere (or nowhere)
    /// and retries.
    void release() noexcept;

  private:
    int fd_ = -1;
    Dir dir_; ///< the directory's own descriptor: .lock is removed by it, never by a path resolved again
    std::string path_;
};

} // namespace dpr::io
