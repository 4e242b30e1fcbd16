#pragma once
// The library API of a run: an experiment in, its results out, no files and no process-wide
// state, for programs that embed dpregret (a notebook binding, a driver of its own) -- and the layer under
// `dpregret run` itself, which adds the files, the memory check, shards, resume and MPI around it.
//
//   dpr::api::RunSpec spec;
//   spec.config_path = "experiments/quickstart.toml";
//   spec.overrides = {"run.instances=200"};
//   const dpr::api::RunResult r = dpr::api::run(spec);
//   for (const auto& p : r.points)          // one per config point, in sweep order
//       p.regret[k * p.checkpoints.size() + c];  // instance p.first_instance + k at checkpoint c
//
// run() is plan() then execute():
//   plan()     loads the config (or takes one already loaded), resolves every point's learner and adversary,
//              checks the slice of instances and their ids, chooses the backend and checks the launch request:
//              everything that can refuse the input, before anything is simulated;
//   execute()  runs the points in order (host/api/pipeline.hpp simulate_points), each condensed by
//              finish_point() into its rows of summary.csv, or handed to the driver's own per-point hook (a
//              shard writes its arrays, an MPI rank gathers them); finished pieces may be kept in a
//              ProgressStore for resuming.
// So its numbers are those of the CLI's files: summary.csv is `summary`, final_regret.csv the last column of
// `regret`. A slice of the instances (first_instance, instance_count) gives exactly those instances' values of the
// whole run (shards, MPI ranks and resumed pieces are such slices). Bad input throws cli::UsageError (the CLI's
// exit code 2) with the message the CLI prints; a NaN or infinite statistic throws NonFiniteResult.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/api/config_source.hpp"
#include "host/api/pipeline.hpp"
#include "host/config/config.hpp"
#include "host/engine/loss_file.hpp"
#include "host/engine/point_runner.hpp"
#include "host/results/outputs.hpp"
#include "host/results/progress_store.hpp"

namespace dpr::api {

/// An experiment (a ConfigSource: an experiment file, docs/CONFIG.md, or its text) and how to run it.
struct RunSpec : ConfigSource {
    Backend backend = Backend::Auto;
    unsigned threads = 0;               ///< 0: every core
    std::uint64_t first_instance = 0;   ///< a slice of [run] instances; count 0 = to the end
    std::uint64_t instance_count = 0;
    std::function<void(std::uint64_t instance_rounds)> on_progress;
    std::function<bool()> interrupted;  ///< polled between chunks; true stops the run (RunResult::completed false)
};

/// A point's result (host/engine/point_result.hpp): what the point is, its instances' regret at every checkpoint,
/// their diagnostics, the rows of summary.csv, how it ran.
using PointResult = dpr::PointResult;

struct RunResult {
    config::Config config;                  ///< as run() loaded it (empty from execute(): the plan holds it)
    std::vector<PointResult> points;
    bool completed = false; ///< false if interrupted (points then holds those that finished)
};

/// What plan() resolved; execute() runs it. Move-only: the records point into `config`.
struct Plan {
    config::Config config;
    std::vector<PointRecord> records;        ///< one per point; after execute() condensed by finish_point()
    Backend backend = Backend::Cpu;
    std::string why_not_cuda;                ///< with Backend::Auto and no usable GPU: why
    std::uint64_t first_instance = 0;        ///< the slice this process runs
    std::uint64_t instance_count = 0;        ///< resolved (never 0)

    Plan() = default;
    Plan(Plan&&) = default;
    Plan& operator=(Plan&&) = default;
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;
};

/// The first half of run(): loads spec's config, or takes `loaded` (a driver that read it already).
Plan plan(const RunSpec& spec);
Plan plan(config::Config loaded, const RunSpec& spec);

/// The second half: runs the plan's points with spec's threads, progress and interrupt callbacks (and the driver's
/// hooks, host/api/pipeline.hpp; without an after_point the points are collected into RunResult::points).
RunResult execute(Plan& plan, const RunSpec& spec, const ExecuteHooks& hooks = {});

/// Runs the spec (see the header): plan() then execute().
RunResult run(const RunSpec& spec);

} // namespace dpr::api
