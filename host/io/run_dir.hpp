#pragma once
// The output directory of a run (docs/OUTPUTS.md), settled before anything is simulated so that no work
// is lost to a directory that cannot take the results:
//
//   OutputDirectory out = OutputDirectory::open("runs/x");            // --out runs/x
//   OutputDirectory out = OutputDirectory::create_unique("runs", s);  // default: runs/<s>[-N]
//   ... simulate, write ...
//   out.remove_created();                                              // after a failure or a signal
//
// open() creates the missing components of the path, takes the directory's exclusive lock (host/io/dir_lock.hpp:
// a second process on the directory is refused), refuses a directory that already holds a complete run (run.json),
// proves that a file can be created there (a probe file, removed at once), and
// removes the temporary files (<result file>.tmp.<pid>) that a killed run left there, if that process is
// gone. create_unique() makes a directory that no other run uses: mkdir is atomic, so two runs started in
// the same second get <s> and <s>-2. resume() locks an existing directory without creating anything.
// remove_created() releases the lock and removes only what this process created, and only if it is empty: a
// directory the user made stays. The lock is held until remove_created() or the object's destruction.
#include <string>
#include <vector>

#include "host/io/dir_lock.hpp"

namespace dpr::io {

class OutputDirectory {
  public:
    /// Throws IoError naming the directory and the reason.
    static OutputDirectory open(const std::string& dir);
    static OutputDirectory create_unique(const std::string& parent, const std::string& stem);
    /// An existing directory (`dpregret run --resume DIR`), locked; nothing created. `what` names the option.
    static OutputDirectory resume(const std::string& dir, const std::string& what);

    const std::string& path() const { return path_; }
    /// The deepest directory open() / create_unique() created ("" if none: the directory existed).
    std::string created_leaf() const { return created_.empty() ? std::string() : created_.back(); }
    /// The lock file's path while the lock is held, else "".
    std::string lock_path() const { return lock_.path(); }
    /// Stale temporary files removed by open(), file names.
    const std::vector<std::string>& removed_stale() const { return stale_; }
    /// Releases the lock, then removes the directories that open() / create_unique() created, deepest first, if
    /// they are empty.
    void remove_created() noexcept;

  private:
    std::string path_;
    std::vector<std::string> created_; ///< deepest last
    std::vector<std::string> stale_;
    DirectoryLock lock_;
};

/// The file names a run writes (and whose `.tmp.<pid>` versions a killed run may leave).
extern const char* const kRunFiles[4];

} // namespace dpr::io
