#pragma once
// The files a run leaves in its output directory (docs/ARCHITECTURE.md §4, §6; docs/OUTPUTS.md):
//   summary.csv       one row per point and checkpoint: regret statistics over instances
//   final_regret.csv  one row per point and instance: regret at t = T
//   points.jsonl      only for sweeps of more than kInlinePoints points: one JSON object per point (the
//                     per-point detail that run.json holds inline for smaller runs)
//   run.json          resolved config, seed, version, commit, backend, device, threads, wall time,
//                     throughput and (inline, up to kInlinePoints) every point's privacy guarantee
// All are written to temporary files first and renamed only when every one is complete, run.json last:
// a directory with run.json is complete, and a failure or a signal before that leaves none of them.
//
// After a point has run, finish_point() checks that every value that would be written is finite, keeps
// what the files need (the summary rows, every instance's final regret, the diagnostics) and releases
// the per-checkpoint, per-instance results, so that a long sweep keeps O(instances) per point.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "host/config/config.hpp"
#include "host/engine/point_runner.hpp"
#include "host/engine/registry.hpp"
#include "host/io/dir.hpp"
#include "host/stats/summary.hpp"

namespace dpr {

/// A point produced a statistic that is NaN or infinite; nothing of the run may be written. what()
/// names the point (and its swept values), the first bad instance and its first bad round or checkpoint.
struct NonFiniteResult : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// One row of summary.csv.
/// Mean, min and max of one diagnostic over a point's instances (run.json's point "diagnostics").
struct DiagnosticSummary {
    double mean = 0.0, min = 0.0, max = 0.0;
};

/// One row of final_regret.csv: the instance id, its regret and realised regret at T, its diagnostics (the
/// learner's, in order). Returns false to stop.
using FinalRowFn = std::function<bool(std::uint64_t instance, double regret, double realized, const double* diagnostics)>;

struct PointRecord {
    const config::Point* point = nullptr;
    LearnerRuntime learner;
    AdversaryRuntime adversary;
    /// As returned by run_point(), labelled by the pipeline; finish_point() fills its summary and (unless asked to
    /// keep them) releases its regret, realized_regret, comparator and first_nonfinite_round vectors (diagnostics
    /// and the scalars stay).
    PointResult result;
    std::vector<double> final_regret;      ///< per instance, at t = T
    std::vector<double> final_realized;    ///< per instance, at t = T
    /// Set by finish_point_streamed() (dpregret merge --bounded-memory), which keeps no per-instance values: the
    /// diagnostics' summaries, and final_regret.csv's rows read again from the shards (false: stopped).
    std::vector<DiagnosticSummary> diagnostic_summary;
    std::function<bool(const FinalRowFn&)> stream_final;
};

/// Checks and condenses a point that has run (see the header). Throws NonFiniteResult if a value that
/// would be written is NaN or infinite: the regret or realised regret of an instance at a checkpoint, a
/// comparator, a diagnostic, or a summary statistic (mean, std, sem, quantiles; std and sem may be NaN
/// only for one instance, a median bound only where n is too small for it, as docs/OUTPUTS.md says).
/// keep_instances: the per-instance vectors stay (the library returns them to its caller).
void finish_point(PointRecord& r, bool keep_instances = false);

/// Instances [first, first + count) of a point, row-major as in PointResult (comparator null when shared).
struct InstanceBlock {
    std::uint64_t first = 0, count = 0;
    const double* regret = nullptr;
    const double* realized = nullptr;
    const double* comparator = nullptr;
    const double* diagnostics = nullptr;
    const std::uint64_t* first_nonfinite_round = nullptr;
};

/// finish_point()'s checks in pieces, for a point whose values are read in blocks: the shared comparator, the
/// per-instance values of one block, and the summary statistics of the filled rows. Throw NonFiniteResult.
void check_shared_comparator(const PointRecord& r);
void check_instance_block(const PointRecord& r, const InstanceBlock& b);
void check_rows(const PointRecord& r);

/// The per-instance part of finish_point()'s check (regret, realised regret, comparators, diagnostics, the
/// first non-finite round), without condensing: a shard checks what it writes (its ids from first_instance on).
void check_point_finite(const PointRecord& r, std::uint64_t first_instance = 0);

/// Sweeps with more points than this get points.jsonl instead of run.json's inline points[].
inline constexpr std::size_t kInlinePoints = 1000;

struct RunMeta {
    std::string config_path;
    std::string config_absolute_path; ///< where config_path resolved when the run started ("": resolve it now)
    std::vector<std::string> overrides;
    std::string backend_requested;
    std::string device;         ///< "cpu: ..." or the GPU name
    unsigned threads = 1;
    double wall_seconds = 0.0;  ///< whole run, including loss generation and output
    std::string started_at;     ///< ISO 8601 UTC
    std::uint64_t memory_estimate_bytes = 0; ///< host/results/memory_estimate.hpp, for run.json
};

/// Writes every output file of a finished run into `dir` (which must exist) as described above and
/// returns true once run.json is in place. `stop` is polled between rows and between files; when it
/// returns true the writing is abandoned and false is returned, with none of the files left (neither
/// temporary nor renamed). Throws io::IoError on a write failure, also leaving none of them.
/// `dir` is the output directory held by descriptor (io::OutputDirectory::dir()): no file is written through a link.
bool write_outputs(const io::Dir& dir, const config::Config& cfg, const std::vector<PointRecord>& recs,
                   const RunMeta& meta, const std::function<bool()>& stop);

/// The text of summary.csv and of final_regret.csv for finished records (write_outputs writes them to files); false
/// when `stop` returned true (polled every few thousand rows).
bool write_summary(std::ostream& os, const config::Config& cfg, const std::vector<PointRecord>& recs,
                   const std::function<bool()>& stop);
bool write_final_regret(std::ostream& os, const std::vector<PointRecord>& recs, const std::function<bool()>& stop);

/// run.json's object (points inline up to kInlinePoints, else named points.jsonl), and one point's object of its
/// points[] (a line of points.jsonl): what a front end shows of a run without writing it.
nlohmann::json run_json(const config::Config& cfg, const std::vector<PointRecord>& recs, const RunMeta& meta);
nlohmann::json point_json(const PointRecord& r);

/// Text that is valid UTF-8: `s` unchanged if it is, else every byte that is not part of a valid UTF-8
/// sequence written as the four characters \xNN (e.g. a path given as raw bytes). For JSON output.
std::string utf8_or_escaped(const std::string& s);

/// How the run was made (RunMeta: backend requested, device, threads, start, wall time, memory estimate) into a
/// run.json or shard.json object.
void put_run_meta(nlohmann::json& j, const RunMeta& meta);

} // namespace dpr
