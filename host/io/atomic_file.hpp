#pragma once
// All-or-nothing output files (docs/OUTPUTS.md: bad input or a failure "leaves no output that looks
// complete"). An AtomicFile writes to `<name>.tmp.<pid>` in the destination's own directory (so the
// final rename never crosses a file system); commit() flushes, fsyncs and closes it and renames it onto
// `name`, which POSIX makes atomic: readers see either the old file or the complete new one; then it fsyncs
// the directory, so that after commit() returns the file survives a crash of the machine as well
// (docs/OUTPUTS.md "Durability, locks and checksums"). If commit() is never reached (an exception, an early
// return), the destructor removes the temporary file.
//
//     io::AtomicFile out(dir, "summary.csv");   // dir: an io::Dir (host/io/dir.hpp), OutputDirectory::dir()
//     io::NpyWriter npy(out.stream(), {n});
//     ...                                       // write; out.check() reports a failed write early
//     npy.finish();
//     out.commit();                             // only now does `summary.csv` appear (or get replaced)
//
// Links (docs/OUTPUTS.md "Links and special files in an output directory"): the temporary file is created by
// the directory's descriptor with O_CREAT | O_EXCL | O_NOFOLLOW, so a link planted at `<name>.tmp.<pid>` is
// never written through, and commit() refuses (io::UnsafePathError) to rename onto a `name` that is a link or
// not a regular file. Not covered: a process killed by a signal leaves its `<name>.tmp.<pid>` behind (never
// `name`).
#include <memory>
#include <ostream>
#include <string>

#include "host/io/dir.hpp"

namespace dpr::io {

class AtomicFile {
  public:
    /// Creates `<name>.tmp.<pid>` in `dir` (a descriptor of its own is kept). Throws IoError naming the file
    /// and the reason (permission denied, `name` is a directory, ...), UnsafePathError for a link or special
    /// file at either name. Nothing is left behind on failure.
    AtomicFile(const Dir& dir, std::string name);
    /// A path the user named (`dpregret sample --out FILE`): its directory is opened as given, then as above.
    explicit AtomicFile(const std::string& path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    /// The stream to write to (the temporary file).
    std::ostream& stream() { return *out_; }
    /// Throws IoError naming the file if a write has failed so far (e.g. disk full).
    void check() const;
    /// Flushes, fsyncs, closes and renames the temporary file onto name(). Throws IoError (and removes the
    /// temporary file) if any write, the flush, the close or the rename failed. Call at most once.
    void commit();
    /// Removes the committed file again (a later file of the same set failed: write_outputs' all-or-nothing).
    void remove_committed() noexcept;

    /// The destination, as a path for messages (the directory's path and the name).
    const std::string& path() const { return path_; }
    const std::string& name() const { return name_; }
    std::string temp_path() const { return dir_.path_of(temp_name_); }
    bool committed() const { return committed_; }

  private:
    void open_temp();
    void discard() noexcept;

    Dir dir_;
    std::string name_, temp_name_, path_;
    struct Buf;
    std::unique_ptr<Buf> buf_;
    std::unique_ptr<std::ostream> out_;
    bool committed_ = false;
};

} // namespace dpr::io
