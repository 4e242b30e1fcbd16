#include "host/api/run.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "host/api/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/io/error.hpp"

namespace dpr::api {
namespace {

config::Config load(const RunSpec& spec) {
    return load_config_for(spec, run_config_inputs(spec.arrays));
}

} // namespace

Plan plan(const RunSpec& spec) { return plan(load(spec), spec); }

Plan plan(config::Config loaded, const RunSpec& spec) {
    Plan p;
    p.config = std::move(loaded); // before resolving: the records point into p.config.points
    const config::Config& cfg = p.config;
    p.records = resolve_points(cfg);
    const std::uint64_t N = cfg.run.instances;
    if (spec.first_instance >= N || spec.instance_count > N - spec.first_instance)
        throw UsageError("instances [" + std::to_string(spec.first_instance) + ", " +
                              std::to_string(spec.first_instance + spec.instance_count) + ") are not a slice of [run] "
                              "instances = " + std::to_string(N));
    p.first_instance = spec.first_instance;
    p.instance_count = spec.instance_count ? spec.instance_count : N - spec.first_instance;
    check_instance_ids(p.first_instance, p.instance_count);
    bool per_instance = false;
    for (const auto& pt : cfg.points) per_instance |= pt.per_instance;
    try {
        p.backend = choose_backend(spec.backend, per_instance, &p.why_not_cuda);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    check_launch(cfg, p.backend);
    return p;
}

RunResult execute(Plan& plan, const RunSpec& spec, const ExecuteHooks& hooks) {
    RunResult out;
    SimulateOptions so;
    so.backend = plan.backend;
    so.threads = spec.threads ? spec.threads : std::max(1u, std::thread::hardware_concurrency());
    so.on_progress = spec.on_progress;
    so.interrupted = spec.interrupted;
    so.first_instance = plan.first_instance;
    so.instance_count = plan.instance_count;
    so.hooks = hooks;
    if (!so.hooks.after_point) so.hooks.after_point = [&](PointRecord& r) {
        finish_point(r, /*keep_instances=*/true); // checks every value and condenses: the rows of summary.csv
        out.points.push_back(std::move(r.result));
    };
    out.completed = simulate_points(plan.config, plan.records, so);
    return out;
}

RunResult run(const RunSpec& spec) {
    Plan p = plan(spec);
    RunResult out = execute(p, spec);
    out.config = std::move(p.config); // the records (not returned) pointed into it
    return out;
}

} // namespace dpr::api
