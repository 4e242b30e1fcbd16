#pragma once
// Directories held by descriptor, and the files in them opened without following links (docs/OUTPUTS.md
// "Links and special files in an output directory").
//
// An output directory may be shared: a group's project directory, a scratch `runs/`, a path under /tmp.
// Anyone who can create a file there can put a symbolic link where dpregret is about to write (`.lock ->
// ~/thesis.tex`, `summary.csv.tmp.<pid> -> ~/.bashrc`) or swap a subdirectory for a link to one of the
// victim's directories. So every name inside a directory that dpregret writes is reached from the directory's
// descriptor (openat and friends), never through a path string that the file system resolves again:
//
//   io::Dir out = io::Dir::open("runs/x", "--out");       // the user's directory (a link to it is followed)
//   io::Dir store = out.open_sub(".progress");            // a subdirectory: refused if it is a link
//   io::InFile f = io::InFile::open(store, "spec.json");  // a regular file, never a link, FIFO or device
//   io::UniqueFd t = out.create_new("x.tmp.1", O_WRONLY); // O_CREAT | O_EXCL | O_NOFOLLOW
//   out.rename("x.tmp.1", "x");                           // refused if "x" is a link or not a regular file
//   out.remove_tree(".progress.removed");                 // removes links themselves, never their targets
//
// A link or a non-regular file found where dpregret reads or writes one of its own files is refused with
// UnsafePathError, which names it; the CLI reports it as bad input (exit 2). The user's own path (--out DIR,
// a shard directory given to merge) is opened as given: a link *to* that directory is the user's choice, and
// followed.
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "host/io/error.hpp"

namespace dpr::io {

/// A symbolic link, a directory, a FIFO, a device or a socket where dpregret reads or writes one of its own
/// files (or a link to the output directory that belongs to another user). Following it could write outside
/// the directory or hang; the message names it and says what to do. Exit code 2 in the CLI.
struct UnsafePathError : IoError {
    using IoError::IoError;
};

/// An owned file descriptor, closed on destruction.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    ~UniqueFd() { reset(); }
    UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
    UniqueFd& operator=(UniqueFd&& o) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;

    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    int release() noexcept {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    void reset(int fd = -1) noexcept;

  private:
    int fd_ = -1;
};

/// What a name in a directory is, without following it (fstatat with AT_SYMLINK_NOFOLLOW).
enum class EntryKind { Missing, Regular, Directory, Link, Other };

/// "a symbolic link", "a directory", "a FIFO", ...: for messages.
std::string describe_entry(int dir_fd, const std::string& name);

class Dir {
  public:
    Dir() = default;
    /// Opens the directory `path` as the user gave it (`what` names the option in messages: "--out",
    /// "merge"). Throws IoError naming it if it is missing, not a directory or not readable.
    static Dir open(const std::string& path, const std::string& what);

    bool is_open() const { return static_cast<bool>(fd_); }
    int fd() const { return fd_.get(); }
    /// The path the directory was opened as (for messages and for what is printed to the user).
    const std::string& path() const { return path_; }
    /// path()/name, for messages.
    std::string path_of(const std::string& name) const;
    /// A second descriptor of the same directory (for an object that outlives this one).
    Dir dup() const;

    EntryKind kind(const std::string& name) const;
    /// UnsafePathError naming path_of(name) unless `name` is missing or a regular file.
    void require_regular_or_missing(const std::string& name) const;
    /// True if `name` is a regular file; false if missing; UnsafePathError if it is anything else.
    bool has_file(const std::string& name) const;
    /// The names in the directory (not "." or ".."), unsorted. Throws IoError if it cannot be read.
    std::vector<std::string> names() const;

    /// The subdirectory `name`: UnsafePathError if it is a link or not a directory, IoError if missing.
    Dir open_sub(const std::string& name) const;
    /// mkdirat: true if created, false if a directory of that name exists; UnsafePathError if the name is a
    /// link or a file, IoError on any other failure.
    bool make_sub(const std::string& name, mode_t mode = 0755) const;

    /// An existing regular file, read-only: UnsafePathError if it is a link or not a regular file (a FIFO is
    /// not waited on), IoError naming it if it is missing or unreadable.
    UniqueFd open_read(const std::string& name) const;
    /// A new file, opened with `flags` (O_WRONLY or O_RDWR) | O_CREAT | O_EXCL | O_NOFOLLOW: nothing of that
    /// name may exist, not even a dangling link. On failure: IoError naming it, or, with `error` given, an
    /// empty UniqueFd and the errno in *error (EEXIST: the name exists, in whatever form).
    UniqueFd create_new(const std::string& name, int flags, mode_t mode = 0644, int* error = nullptr) const;

    /// renameat within the directory. `to` must be missing or a regular file (UnsafePathError otherwise;
    /// rename would replace a link, not follow it, but a link where dpregret writes was put there by someone
    /// else and is reported). IoError naming both on failure.
    void rename(const std::string& from, const std::string& to) const;
    /// unlinkat of a file or link (a link is removed itself). True if it was removed.
    bool remove_file(const std::string& name) const noexcept;
    /// rmdir of an empty subdirectory. True if it was removed.
    bool remove_empty_dir(const std::string& name) const noexcept;
    /// Removes `name` and, if it is a directory, everything in it, depth first, never following a link (a
    /// link is removed itself). Best effort: what cannot be removed stays.
    void remove_tree(const std::string& name) const noexcept;
    /// fsync of the directory: a rename or create in it survives a crash of the node. File systems that
    /// cannot sync a directory (EINVAL, EROFS: some network and FUSE file systems) are skipped, as their
    /// renames are durable on return. IoError naming it on another failure.
    void sync() const;

  private:
    Dir(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
    UniqueFd fd_;
    std::string path_;
};

/// A regular file opened for reading by descriptor, with a std::istream over it (seekable).
class InFile {
  public:
    /// `name` in `dir`: never a link or a non-regular file (UnsafePathError), IoError if missing or
    /// unreadable.
    static InFile open(const Dir& dir, const std::string& name);
    /// A path the user gave (a loss file, a config): links are followed, but it must be a regular file (a
    /// FIFO or a directory is refused with IoError naming it instead of hanging or failing later).
    static InFile open_path(const std::string& path);

    InFile(InFile&&) noexcept;
    InFile& operator=(InFile&&) noexcept;
    ~InFile();

    std::istream& stream() { return *in_; }
    const std::string& path() const { return path_; }
    /// The file's size when it was opened.
    std::uint64_t size() const { return size_; }

  private:
    InFile(UniqueFd fd, std::string path);
    struct Buf;
    std::unique_ptr<Buf> buf_;
    std::unique_ptr<std::istream> in_;
    std::string path_;
    std::uint64_t size_ = 0;
};

/// `name` (a path, for messages) of a regular file opened as `fd`: UnsafePathError unless it is one.
void require_regular_fd(int fd, const std::string& name);

} // namespace dpr::io
