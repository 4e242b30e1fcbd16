#include "host/api/run.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "host/cli/errors.hpp"
#include "host/cli/run_pipeline.hpp"
#include "host/io/error.hpp"

namespace dpr::api {

RunResult run(const RunSpec& spec) {
    RunResult out;
    try {
        out.config = spec.config_path.empty()
                         ? config::parse_config(spec.toml_text, spec.source_name, spec.overrides, cli::run_config_inputs())
                         : config::load_config(spec.config_path, spec.overrides, cli::run_config_inputs());
    } catch (const config::ConfigError& e) {
        throw cli::UsageError(e.what());
    } catch (const io::IoError& e) {
        throw cli::UsageError(e.what());
    }
    const config::Config& cfg = out.config;
    std::vector<PointRecord> recs = cli::resolve_points(cfg);
    const std::uint64_t N = cfg.run.instances;
    if (spec.first_instance >= N || spec.instance_count > N - spec.first_instance)
        throw cli::UsageError("instances [" + std::to_string(spec.first_instance) + ", " +
                              std::to_string(spec.first_instance + spec.instance_count) + ") are not a slice of [run] "
                              "instances = " + std::to_string(N));
    const std::uint64_t count = spec.instance_count ? spec.instance_count : N - spec.first_instance;
    bool per_instance = false;
    for (const auto& p : cfg.points) per_instance |= p.per_instance;
    cli::SimulateOptions so;
    try {
        so.backend = choose_backend(spec.backend, per_instance, nullptr);
    } catch (const std::invalid_argument& e) {
        throw cli::UsageError(e.what());
    }
    cli::check_launch(cfg, so.backend);
    so.threads = spec.threads ? spec.threads : std::max(1u, std::thread::hardware_concurrency());
    so.on_progress = spec.on_progress;
    so.interrupted = spec.interrupted;
    so.first_instance = spec.first_instance;
    so.instance_count = count;
    so.after_point = [&](PointRecord& r) {
        PointResult pr;
        pr.point = *r.point;
        pr.learner = r.learner.name;
        pr.adversary = r.adversary.name;
        pr.privacy = r.learner.privacy;
        pr.first_instance = spec.first_instance;
        pr.instances = r.outcome.instances;
        pr.checkpoints = r.outcome.checkpoints;
        pr.regret = r.outcome.regret;
        pr.realized_regret = r.outcome.realized_regret;
        pr.comparator = r.outcome.comparator;
        pr.diagnostic_names = r.learner.diagnostic_names;
        pr.diagnostics = r.outcome.diagnostics;
        pr.backend = r.outcome.backend;
        pr.launch_policy = r.outcome.policy;
        pr.wall_seconds = r.outcome.wall_seconds;
        finish_point(r); // checks every value and condenses: the rows of summary.csv
        pr.summary = r.rows;
        out.points.push_back(std::move(pr));
    };
    out.completed = cli::simulate_points(cfg, recs, so);
    return out;
}

} // namespace dpr::api
