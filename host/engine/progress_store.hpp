#pragma once
// Resumable runs (issue 11 item 4; docs/OUTPUTS.md "Resume"): a run keeps, in <out>/.progress/, every finished
// piece of work -- instances [b B, (b + 1) B) of one point -- as the per-instance arrays its outputs are computed
// from, each piece written atomically and marked done by a small JSON file written after its arrays. A run killed
// at any moment (SIGKILL included) is continued by `dpregret run --resume DIR`, which reloads the config the run
// was started from, loads the finished pieces and runs only the others. An instance's numbers depend only on
// (config, instance id), so the result files are byte-identical to an uninterrupted run's. B is chosen so that a
// piece is a bounded amount of work (at most ~1 minute on the development VM) and recorded in spec.json, so a
// resumed run cuts the points the same way. .progress is removed once run.json is in place.
#include <cstdint>
#include <string>
#include <vector>

#include "host/engine/point_runner.hpp"

namespace dpr {

/// What a resumed run must agree on with the run it continues.
struct ProgressSpec {
    std::string config_path;          ///< as given
    std::string absolute_path;        ///< what --resume reloads
    std::vector<std::string> overrides;
    std::string resolved_toml;
    std::uint64_t batch = 0;          ///< instances per piece
    std::string shard;                ///< "I/K" for a shard (--shard), "" for a whole run
    std::string backend_requested;
    std::string version, git_commit;
    int layout = 0;                   ///< rng::kStreamLayout
};

class ProgressStore {
  public:
    static constexpr const char* kDirName = ".progress";

    /// A fresh store in <out_dir>/.progress (spec.json written atomically). Throws io::IoError.
    static ProgressStore create(const std::string& out_dir, const ProgressSpec& spec);
    /// The store of an unfinished run; throws std::invalid_argument saying why DIR cannot be resumed (no
    /// .progress, another version or layout), removing temporary files a killed process left.
    static ProgressStore open(const std::string& out_dir);
    /// True if <out_dir>/.progress exists (an unfinished run).
    static bool exists(const std::string& out_dir);

    const ProgressSpec& spec() const { return spec_; }
    bool has(std::size_t point, std::uint64_t piece) const;
    /// Saves a finished piece (its arrays, then the done marker).
    void save(std::size_t point, std::uint64_t piece, const PointOutcome& o, std::size_t ndiag,
              bool per_instance_cmp) const;
    /// Loads a finished piece: `instances` rows (per_instance_cmp: the comparator has a row per instance).
    PointOutcome load(std::size_t point, std::uint64_t piece, std::uint64_t instances, std::size_t ncheck,
                      std::size_t ndiag, bool per_instance_cmp) const;
    /// Removes .progress (after run.json is in place).
    void remove() const noexcept;

  private:
    std::string prefix(std::size_t point, std::uint64_t piece) const; ///< of its arrays (outcome_files.hpp)
    std::string file(std::size_t point, std::uint64_t piece, const char* what) const;
    std::string dir_;
    ProgressSpec spec_;
};

} // namespace dpr
