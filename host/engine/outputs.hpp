#pragma once
// The files a run leaves in its output directory (DESIGN.md §4, §6; docs/OUTPUTS.md):
//   summary.csv       one row per point and checkpoint: regret statistics over instances
//   final_regret.csv  one row per point and instance: regret at t = T
//   run.json          resolved config per point, seed, version, commit, backend, device, threads,
//                     wall time, throughput and every point's privacy guarantee
// Each is written to a temporary file and renamed, run.json last: a directory with run.json is complete.
#include <string>
#include <vector>

#include "host/config/config.hpp"
#include "host/engine/point_runner.hpp"
#include "host/engine/registry.hpp"

namespace dpr {

struct PointRecord {
    const config::Point* point = nullptr;
    LearnerRuntime learner;
    AdversaryRuntime adversary;
    PointOutcome outcome;
};

struct RunMeta {
    std::string config_path;
    std::vector<std::string> overrides;
    std::string backend_requested;
    std::string device;         ///< "cpu: ..." or the GPU name
    unsigned threads = 1;
    double wall_seconds = 0.0;  ///< whole run, including loss generation and output
    std::string started_at;     ///< ISO 8601 UTC
};

void write_summary_csv(const std::string& path, const config::Config& cfg, const std::vector<PointRecord>& recs);
void write_final_regret_csv(const std::string& path, const std::vector<PointRecord>& recs);
void write_run_json(const std::string& path, const config::Config& cfg, const std::vector<PointRecord>& recs,
                    const RunMeta& meta);

} // namespace dpr
