#pragma once
// Resumable runs (docs/OUTPUTS.md "Resume"): a run keeps, in <out>/.progress/, every finished
// piece of work -- instances [b B, (b + 1) B) of one point -- as the per-instance arrays its outputs are computed
// from (one array file per piece), each piece written atomically and marked done by a small JSON file written after
// its array. A sweep whose points each fit in a piece saves groups of whole points instead (group_name), so that
// 10^4 small points make a few dozen files, not six per point. A run killed
// at any moment (SIGKILL included) is continued by `dpregret run --resume DIR`, which reloads the config the run
// was started from, loads the finished pieces and runs only the others. An instance's numbers depend only on
// (config, instance id), so the result files are byte-identical to an uninterrupted run's. B is chosen so that a
// piece is a bounded amount of work (at most ~1 minute on the development VM) and recorded in spec.json, so a
// resumed run cuts the points the same way. .progress is removed once run.json is in place.
//
// Every file is written durably (io::AtomicFile: fsync, rename, fsync of the directory), and a piece's marker
// records the size and CRC-32 of each of its arrays: a piece whose marker or arrays are torn, truncated or
// damaged fails load() and is computed again by the resumed run; it never costs the other pieces.
//
// The store and every file in it are reached by descriptor from the output directory's (host/io/dir.hpp): a
// .progress, spec.json or piece that is a link or a special file is refused (io::UnsafePathError), never followed.
#include <cstdint>
#include <string>
#include <vector>

#include "host/engine/point_runner.hpp"
#include "host/io/dir.hpp"
#include "host/io/run_dir.hpp"
#include "host/results/input_digest.hpp"

namespace dpr {

/// What a resumed run must agree on with the run it continues.
struct ProgressSpec {
    std::string config_path;          ///< as given
    std::string absolute_path;        ///< what --resume reloads
    std::vector<std::string> overrides;
    std::string resolved_toml;
    std::uint64_t batch = 0;          ///< instances per piece
    double group_work = 0;            ///< work (instance-rounds x row width) of a group of whole points
    std::string shard;                ///< "I/K" for a shard (--shard), "" for a whole run
    std::string backend_requested;
    std::string version, git_commit;
    int layout = 0;                   ///< rng::kStreamLayout
    std::vector<InputFile> inputs;    ///< the loss files read, with their contents' digests
};

class ProgressStore {
  public:
    static constexpr const char* kDirName = io::kProgressDirName;
    /// What remove() renames .progress to before deleting its files (left only if killed in between).
    static constexpr const char* kRemovedName = io::kProgressRemovedName;

    /// A fresh store in <out>/.progress (spec.json written atomically). Throws io::IoError.
    static ProgressStore create(const io::Dir& out, const ProgressSpec& spec);
    /// The store of an unfinished run; throws std::invalid_argument saying why the directory cannot be resumed (no
    /// .progress, another version or layout), removing temporary files a killed process left.
    static ProgressStore open(const io::Dir& out);
    /// True if <out_dir>/.progress exists, in whatever form (an unfinished run; open() checks what it is).
    static bool exists(const std::string& out_dir);
    /// Why `--resume out_dir` has nothing to continue (no .progress there).
    static std::string nothing_to_resume(const std::string& out_dir);

    const ProgressSpec& spec() const { return spec_; }

    /// What a piece holds of one point, as load() must find it.
    struct PieceShape {
        std::size_t point = 0;
        std::uint64_t instances = 0;
        std::size_t ncheck = 0, ndiag = 0;
        bool per_instance_cmp = false; ///< the comparator has a row per instance
    };
    /// "p<point>.b<piece>": instances [piece B, (piece + 1) B) of a point larger than a piece.
    static std::string piece_name(std::size_t point, std::uint64_t piece);
    /// "g<first>": the whole points [first, first + n) of a run whose points each fit in a piece.
    static std::string group_name(std::size_t first_point);

    bool has(const std::string& name) const;
    /// The bytes of the files in the store.
    std::uint64_t stored_bytes() const;
    /// The number of finished pieces (done markers) in the store.
    std::size_t finished_pieces() const;
    /// Saves a finished piece: one array file <name>.npy (every outcome's arrays, concatenated in the order of
    /// host/results/outcome_files.hpp), then the done marker <name>.json with the file's size and CRC-32.
    void save(const std::string& name, const std::vector<PieceShape>& shapes,
              const std::vector<const PointResult*>& outcomes) const;
    /// Loads a finished piece, one outcome per shape. Throws std::invalid_argument naming the file and the damage
    /// when the marker or the array file does not match what was written (the caller computes the piece again).
    std::vector<PointResult> load(const std::string& name, const std::vector<PieceShape>& shapes) const;
    /// Removes .progress (after run.json is in place) in one atomic step: renamed to .progress.removed, then
    /// deleted. An observer, or a kill, never finds a .progress without its spec.json.
    void remove() const noexcept;

  private:
    io::Dir out_;   ///< the output directory
    io::Dir store_; ///< its .progress
    ProgressSpec spec_;
};

} // namespace dpr
