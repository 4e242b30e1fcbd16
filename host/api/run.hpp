#pragma once
// The library API of a run (issue 11 item 1): an experiment in, its results out, no files and no process-wide
// state, for programs that embed dpregret (a notebook binding, a driver of its own).
//
//   dpr::api::RunSpec spec;
//   spec.config_path = "experiments/quickstart.toml";
//   spec.overrides = {"run.instances=200"};
//   const dpr::api::RunResult r = dpr::api::run(spec);
//   for (const auto& p : r.points)          // one per config point, in sweep order
//       p.regret[k * p.checkpoints.size() + c];  // instance p.first_instance + k at checkpoint c
//
// It is the pipeline `dpregret run` executes (host/cli/run_pipeline.hpp: load_config -> resolve_points ->
// simulate_points -> finish_point), so its numbers are those of the CLI's files: summary.csv is `summary`,
// final_regret.csv the last column of `regret`. A slice of the instances (first_instance, instance_count) gives
// exactly those instances' values of the whole run (shards, MPI ranks and resumed pieces are such slices).
// Bad input throws cli::UsageError (the CLI's exit code 2) with the message the CLI prints; a NaN or infinite
// statistic throws NonFiniteResult.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/config/config.hpp"
#include "host/engine/outputs.hpp"
#include "host/engine/point_runner.hpp"

namespace dpr::api {

struct RunSpec {
    std::string config_path;            ///< an experiment file (docs/CONFIG.md), or
    std::string toml_text;              ///< its text (when config_path is empty), named `source_name` in messages
    std::string source_name = "<text>";
    std::vector<std::string> overrides; ///< "section.key=VALUE", as --set
    Backend backend = Backend::Auto;
    unsigned threads = 0;               ///< 0: every core
    std::uint64_t first_instance = 0;   ///< a slice of [run] instances; count 0 = to the end
    std::uint64_t instance_count = 0;
    std::function<void(std::uint64_t instance_rounds)> on_progress;
    std::function<bool()> interrupted;  ///< polled between chunks; true stops the run (RunResult::completed false)
};

struct PointResult {
    config::Point point;                    ///< its resolved settings, swept values, problem (d, T, seed, stream)
    std::string learner, adversary;
    learners::PrivacyReport privacy;        ///< the (eps, delta) the learner provides
    std::uint64_t first_instance = 0;       ///< global id of row 0
    std::uint64_t instances = 0;
    std::vector<std::uint64_t> checkpoints;
    std::vector<double> regret;             ///< instances x checkpoints: cumulative <l_t, x_t> - comparator
    std::vector<double> realized_regret;    ///< instances x checkpoints: cumulative l_t(i_t) - comparator
    std::vector<double> comparator;         ///< checkpoints (shared sequence) or instances x checkpoints
    std::vector<std::string> diagnostic_names;
    std::vector<double> diagnostics;        ///< instances x diagnostic_names.size()
    std::vector<CheckpointRow> summary;     ///< the point's rows of summary.csv (over this slice's instances)
    std::string backend, launch_policy;
    double wall_seconds = 0.0;
};

struct RunResult {
    config::Config config;
    std::vector<PointResult> points;
    bool completed = false; ///< false if interrupted (points then holds those that finished)
};

/// Runs the spec (see the header).
RunResult run(const RunSpec& spec);

} // namespace dpr::api
