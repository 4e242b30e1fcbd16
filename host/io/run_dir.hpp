#pragma once
// The output directory of a run, a shard, a merge or an audit (docs/OUTPUTS.md), settled before anything is
// simulated so that no work is lost to a directory that cannot take the results:
//
//   OutputDirectory out = OutputDirectory::open("runs/x", OutputKind::Run);   // --out runs/x
//   OutputDirectory out = OutputDirectory::create_unique("runs", s);          // default: runs/<s>[-N]
//   ... simulate, write through out.dir() (an io::Dir: by descriptor, never through a link) ...
//   out.remove_created();                                                      // after a failure or a signal
//
// open() creates the missing components of the path, opens the directory by descriptor, takes its exclusive
// lock (host/io/dir_lock.hpp: a second process on the directory is refused), and refuses a directory that
// already holds results of any kind -- a complete run (run.json), audit (audit.json) or shard (shard.json),
// or an unfinished run
// (.progress/) -- naming what is there, so that results of different kinds never mix in one directory. It
// refuses a link or a special file at any name dpregret writes there (docs/OUTPUTS.md "Links and special
// files in an output directory"), proves that a file can be created (a probe file, removed at once), and
// removes the temporary files
// (<result file>.tmp.<pid>) that a killed process left there, if that process is gone. create_unique() makes
// a directory that no other run uses: mkdir is atomic, so two runs started in the same second get <s> and
// <s>-2. resume() locks an existing directory without creating anything. remove_created() releases the lock
// and removes only what this process created, and only if it is empty: a directory the user made stays. The
// lock is held until remove_created() or the object's destruction.
#include <string>
#include <vector>

#include "host/io/dir.hpp"
#include "host/io/dir_lock.hpp"

namespace dpr::io {

/// What a command writes into its output directory.
enum class OutputKind { Run, Shard, Audit };

class OutputDirectory {
  public:
    /// Throws IoError naming the directory and the reason, UnsafePathError for a link or special file where
    /// dpregret writes (and for --out itself when it is a link that belongs to another user). `what` names
    /// the directory in messages: the option ("--out") or, for a library caller, its argument.
    static OutputDirectory open(const std::string& dir, OutputKind kind, const std::string& what = "--out");
    static OutputDirectory create_unique(const std::string& parent, const std::string& stem);
    /// An existing directory (`dpregret run --resume DIR`), locked; nothing created. `what` names the option.
    static OutputDirectory resume(const std::string& dir, const std::string& what);

    const std::string& path() const { return path_; }
    /// The directory, held by descriptor: every file inside it is reached from here.
    const Dir& dir() const { return dir_; }
    /// The deepest directory open() / create_unique() created ("" if none: the directory existed).
    std::string created_leaf() const { return created_.empty() ? std::string() : created_.back(); }
    /// The lock file's path while the lock is held, else "".
    std::string lock_path() const { return lock_.path(); }
    /// Stale temporary files removed by open(), file names.
    const std::vector<std::string>& removed_stale() const { return stale_; }
    /// Releases the lock, then removes the directories that open() / create_unique() created, deepest first,
    /// if they are empty.
    void remove_created() noexcept;

  private:
    std::string path_;
    Dir dir_;
    std::vector<std::string> created_; ///< deepest last
    std::vector<std::string> stale_;
    DirectoryLock lock_;
};

/// The file names a run writes (and whose `.tmp.<pid>` versions a killed run may leave).
extern const char* const kRunFiles[4];
/// The file names an audit writes: statistic.npy, privacy_region.csv, audit.json (its completion marker, written
/// last) and pair.toml (--search only, written before audit.json).
extern const char* const kAuditFiles[4];
/// A complete shard's manifest (host/results/shards.hpp); its arrays are p<point>.<array>.npy.
inline constexpr const char* kShardManifest = "shard.json";
/// A resumable run's finished pieces (host/results/progress_store.hpp), and what it is renamed to when
/// removed.
inline constexpr const char* kProgressDirName = ".progress";
inline constexpr const char* kProgressRemovedName = ".progress.removed";

/// What `dir` already holds of dpregret's results ("a complete run (run.json)", "an unfinished run
/// (.progress/)",
/// ...), "" if nothing: the reason open() refuses it.
std::string results_in(const Dir& dir);

/// True if dpregret writes or removes a file of this name in an output directory: .lock, .progress,
/// .progress.removed, probe files, the result files of a run, an audit or a shard, and their `.tmp.<pid>`
/// files.
bool is_output_name(const std::string& name);

} // namespace dpr::io
