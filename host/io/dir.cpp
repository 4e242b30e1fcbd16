#include "host/io/dir.hpp"

#include <cerrno>
#include <cstring>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

// libstdc++'s std::basic_filebuf over a file descriptor: the standard library has no portable way to put a
// stream on a descriptor obtained with openat/O_NOFOLLOW. GCC and Clang on Linux both use libstdc++.
#if !defined(__GLIBCXX__)
#error "host/io/dir.cpp needs libstdc++ (__gnu_cxx::stdio_filebuf) to read files opened by descriptor"
#endif
#include <ext/stdio_filebuf.h>

namespace dpr::io {

namespace {

std::string errno_text(int err) {
    return err != 0 ? std::strerror(err) : "unknown error";
}

EntryKind kind_of(const struct stat& st) {
    if (S_ISREG(st.st_mode)) return EntryKind::Regular;
    if (S_ISDIR(st.st_mode)) return EntryKind::Directory;
    if (S_ISLNK(st.st_mode)) return EntryKind::Link;
    return EntryKind::Other;
}

std::string describe_mode(mode_t m) {
    if (S_ISLNK(m)) return "a symbolic link";
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
    if (S_ISREG(m)) return "a regular file";
    return "not a regular file";
}

/// The refusal of a link or special file where dpregret keeps one of its own files.
UnsafePathError unsafe(const std::string& path, const std::string& is) {
    return UnsafePathError(
        path + " is " + is +
        ", where dpregret keeps one of its own files; dpregret never follows a link or writes into "
        "a special file inside a directory it writes (someone with write access to the directory "
        "could point it at a file of yours). Remove " +
        path + ", or choose another directory");
}

} // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
}

void UniqueFd::reset(int fd) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

std::string describe_entry(int dir_fd, const std::string& name) {
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return "missing";
    return describe_mode(st.st_mode);
}

void require_regular_fd(int fd, const std::string& name) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        throw IoError("cannot inspect " + name + " (" + errno_text(err) + ")");
    }
    if (!S_ISREG(st.st_mode)) throw unsafe(name, describe_mode(st.st_mode));
}

Dir Dir::open(const std::string& path, const std::string& what) {
    const std::string p = path.empty() ? "." : path;
    const int fd = ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        struct stat st {};
        if (err == ENOTDIR || (::stat(p.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)))
            throw IoError(what + " " + path + ": not a directory");
        if (err == ENOENT) throw IoError(what + " " + path + ": no such directory");
        throw IoError(what + " " + path + ": cannot open the directory (" + errno_text(err) + ")");
    }
    return Dir(UniqueFd(fd), path);
}

std::string Dir::path_of(const std::string& name) const {
    if (path_.empty() || path_ == ".") return name;
    return path_.back() == '/' ? path_ + name : path_ + "/" + name;
}

Dir Dir::dup() const {
    const int fd = ::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        const int err = errno;
        throw IoError("cannot duplicate the descriptor of " + path_ + " (" + errno_text(err) + ")");
    }
    return Dir(UniqueFd(fd), path_);
}

EntryKind Dir::kind(const std::string& name) const {
    struct stat st {};
    if (::fstatat(fd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return EntryKind::Missing;
    return kind_of(st);
}

void Dir::require_regular_or_missing(const std::string& name) const {
    struct stat st {};
    if (::fstatat(fd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (!S_ISREG(st.st_mode)) throw unsafe(path_of(name), describe_mode(st.st_mode));
}

bool Dir::has_file(const std::string& name) const {
    struct stat st {};
    if (::fstatat(fd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
    if (!S_ISREG(st.st_mode)) throw unsafe(path_of(name), describe_mode(st.st_mode));
    return true;
}

std::vector<std::string> Dir::names() const {
    // fdopendir takes the descriptor it is given: list through a duplicate, rewound, so that this one stays
    // ours.
    const int fd = ::openat(fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        throw IoError("cannot list " + path_ + " (" + errno_text(err) + ")");
    }
    DIR* d = ::fdopendir(fd);
    if (!d) {
        const int err = errno;
        ::close(fd);
        throw IoError("cannot list " + path_ + " (" + errno_text(err) + ")");
    }
    std::vector<std::string> out;
    errno = 0;
    while (const struct dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
    }
    const int err = errno;
    ::closedir(d);
    if (err != 0) throw IoError("cannot list " + path_ + " (" + errno_text(err) + ")");
    return out;
}

Dir Dir::open_sub(const std::string& name) const {
    const int fd = ::openat(fd_.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (err == ENOENT) throw IoError(path_of(name) + ": no such directory");
        if (err == ELOOP || err == ENOTDIR) throw unsafe(path_of(name), describe_entry(fd_.get(), name));
        throw IoError("cannot open " + path_of(name) + " (" + errno_text(err) + ")");
    }
    return Dir(UniqueFd(fd), path_of(name));
}

bool Dir::make_sub(const std::string& name, mode_t mode) const {
    if (::mkdirat(fd_.get(), name.c_str(), mode) == 0) return true;
    const int err = errno;
    if (err == EEXIST) {
        if (kind(name) == EntryKind::Directory) return false;
        throw unsafe(path_of(name), describe_entry(fd_.get(), name));
    }
    throw IoError("cannot create the directory " + path_of(name) + " (" + errno_text(err) + ")");
}

UniqueFd Dir::open_read(const std::string& name) const {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; the descriptor is checked to be a regular file
    // next, for which O_NONBLOCK means nothing.
    UniqueFd fd(::openat(fd_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        const int err = errno;
        if (err == ELOOP) throw unsafe(path_of(name), "a symbolic link");
        if (err == ENOENT) throw IoError("cannot read " + path_of(name) + " (no such file)");
        throw IoError("cannot read " + path_of(name) + " (" + errno_text(err) + ")");
    }
    require_regular_fd(fd.get(), path_of(name));
    return fd;
}

UniqueFd Dir::create_new(const std::string& name, int flags, mode_t mode, int* error) const {
    UniqueFd fd(::openat(fd_.get(), name.c_str(), flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd) {
        const int err = errno;
        if (error) {
            *error = err;
            return fd;
        }
        throw IoError("cannot create " + path_of(name) + " (" + errno_text(err) + ")");
    }
    if (error) *error = 0;
    return fd;
}

void Dir::rename(const std::string& from, const std::string& to) const {
    require_regular_or_missing(to);
    if (::renameat(fd_.get(), from.c_str(), fd_.get(), to.c_str()) != 0) {
        const int err = errno;
        throw IoError("cannot rename " + path_of(from) + " to " + to + " (" + errno_text(err) + ")");
    }
}

bool Dir::remove_file(const std::string& name) const noexcept {
    return ::unlinkat(fd_.get(), name.c_str(), 0) == 0;
}

bool Dir::remove_empty_dir(const std::string& name) const noexcept {
    return ::unlinkat(fd_.get(), name.c_str(), AT_REMOVEDIR) == 0;
}

void Dir::remove_tree(const std::string& name) const noexcept {
    if (kind(name) != EntryKind::Directory) {
        remove_file(name);
        return;
    }
    try {
        // O_NOFOLLOW: a directory swapped for a link after the check above is not entered (open_sub refuses
        // it).
        const Dir sub = open_sub(name);
        for (const std::string& n : sub.names()) sub.remove_tree(n);
    } catch (const IoError&) {
        // what cannot be opened or listed stays; rmdir below then fails and leaves the name
    }
    remove_empty_dir(name);
}

void Dir::sync() const {
    if (::fsync(fd_.get()) != 0) {
        const int err = errno;
        if (err == EINVAL || err == EROFS) return;
        throw IoError("flushing the directory " + path_ + " to disk failed (" + errno_text(err) + ")");
    }
}

// ---- InFile

struct InFile::Buf {
    explicit Buf(int fd) : fb(fd, std::ios::in | std::ios::binary, 1 << 16) {}
    __gnu_cxx::stdio_filebuf<char> fb; // owns and closes the descriptor
};

InFile::InFile(UniqueFd fd, std::string path) : path_(std::move(path)) {
    struct stat st {};
    if (::fstat(fd.get(), &st) == 0) size_ = static_cast<std::uint64_t>(st.st_size);
    // The descriptor was opened with O_NONBLOCK (for FIFOs); a regular file reads the same without it, but
    // clear it anyway so that the stream sees ordinary blocking reads.
    const int fl = ::fcntl(fd.get(), F_GETFL);
    if (fl >= 0) (void)::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK);
    buf_ = std::make_unique<Buf>(fd.release());
    in_ = std::make_unique<std::istream>(&buf_->fb);
}

InFile::InFile(InFile&&) noexcept = default;
InFile& InFile::operator=(InFile&&) noexcept = default;
InFile::~InFile() = default;

InFile InFile::open(const Dir& dir, const std::string& name) {
    return InFile(dir.open_read(name), dir.path_of(name));
}

InFile InFile::open_path(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        const int err = errno;
        throw IoError(path + ": cannot open: " + errno_text(err));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        throw IoError(path + ": cannot open: it is " + describe_mode(st.st_mode) + ", not a regular file");
    return InFile(std::move(fd), path);
}

} // namespace dpr::io
