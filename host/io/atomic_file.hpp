#pragma once
// All-or-nothing output files (docs/OUTPUTS.md: bad input or a failure "leaves no output that looks
// complete"). An AtomicFile writes to `<path>.tmp.<pid>` in the destination's own directory (so the
// final rename never crosses a file system); commit() flushes, closes, fsyncs and renames it onto `path`, which
// POSIX makes atomic: readers see either the old file or the complete new one; then it fsyncs the directory, so
// that after commit() returns the file survives a crash of the machine as well (docs/OUTPUTS.md
// "Durability, locks and checksums"). If commit() is never
// reached (an exception, an early return), the destructor removes the temporary file.
//
//     io::AtomicFile out(path);          // throws IoError if the directory is missing or not writable
//     io::NpyWriter npy(out.stream(), {n});
//     ...                                // write; out.check() reports a failed write early
//     npy.finish();
//     out.commit();                      // only now does `path` appear (or get replaced)
//
// Not covered: a process killed by a signal leaves its `<path>.tmp.<pid>` behind (never `path`).
#include <fstream>
#include <string>

namespace dpr::io {

class AtomicFile {
  public:
    /// Creates `<path>.tmp.<pid>` (binary, truncating). Throws IoError naming `path` and the reason
    /// (missing directory, permission denied, `path` is a directory, ...). Nothing is left behind on
    /// failure.
    explicit AtomicFile(std::string path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    /// The stream to write to (the temporary file).
    std::ostream& stream() { return out_; }
    /// Throws IoError naming the file if a write has failed so far (e.g. disk full).
    void check() const;
    /// Flushes, closes and renames the temporary file onto path(). Throws IoError (and removes the
    /// temporary file) if any write, the close or the rename failed. Call at most once.
    void commit();

    const std::string& path() const { return path_; }
    const std::string& temp_path() const { return temp_path_; }
    bool committed() const { return committed_; }

  private:
    void discard() noexcept;

    std::string path_;
    std::string temp_path_;
    std::ofstream out_;
    bool committed_ = false;
};

} // namespace dpr::io
