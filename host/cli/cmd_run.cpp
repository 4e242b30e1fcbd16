// `dpregret run CONFIG.toml`: the path from an experiment file to regret distributions.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "host/backend/cuda_api.hpp"
#include "host/cli/errors.hpp"
#include "host/cli/run_pipeline.hpp"
#include "host/config/component_info.hpp"
#include "host/config/config.hpp"
#include "host/engine/checkpoints.hpp"
#include "host/engine/cpu_isa.hpp"
#include "host/engine/loss_file.hpp"
#include "host/engine/outputs.hpp"
#include "host/engine/point_runner.hpp"
#include "host/engine/registry.hpp"
#include "host/io/error.hpp"
#include "host/progress/interrupt.hpp"
#include "host/progress/progress.hpp"
#include "kernels/adversaries/registry.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::cli {
namespace {

struct RunOptions {
    std::string config;
    std::string out;
    std::vector<std::string> sets;
    std::string backend = "auto";
    std::string threads;
    bool quiet = false;
    bool list_keys = false;
};


std::string utc_now(const char* fmt) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, fmt, &tm);
    return buf;
}

/// Every key a run accepts: [run], then each adversary kind and each learner with defaults and ranges.
void print_keys() {
    const config::ConfigInputs in = run_config_inputs();
    std::cout << config::describe_run_keys() << "\n";
    for (const auto& c : in.adversaries) std::cout << config::describe_keys(c) << "\n";
    for (const auto& c : in.learners) std::cout << config::describe_keys(c) << "\n";
}

/// Handlers for SIGINT/SIGTERM for the whole command (installed before anything slow, so that an early
/// Ctrl-C also takes the clean path), removed on every exit path.
struct InterruptScope {
    InterruptScope() { install_interrupt_handlers(); }
    ~InterruptScope() { uninstall_interrupt_handlers(); }
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;
};

void run_command(const RunOptions& o) {
    const InterruptScope interrupt_scope;
    const auto t_start = std::chrono::steady_clock::now();
    const std::string started = utc_now("%Y-%m-%dT%H:%M:%SZ");
    config::Config cfg;
    try {
        cfg = config::load_config(o.config, o.sets, run_config_inputs());
    } catch (const config::ConfigError& e) {
        throw UsageError(e.what());
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }

    const Backend requested = o.backend == "cpu"    ? Backend::Cpu
                              : o.backend == "cuda" ? Backend::Cuda
                                                    : Backend::Auto;
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    if (!o.threads.empty()) {
        char* end = nullptr;
        const long v = std::strtol(o.threads.c_str(), &end, 10);
        if (!end || *end || v < 1 || v > 4096)
            throw UsageError("--threads must be an integer in [1, 4096] (got " + o.threads + ")");
        threads = static_cast<unsigned>(v);
    }

    // Resolve every point before running anything, so a bad combination fails fast.
    std::vector<PointRecord> recs = resolve_points(cfg);
    std::uint64_t total_work = 0;
    for (std::size_t i = 0; i < cfg.points.size(); ++i) {
        total_work += cfg.run.instances * cfg.points[i].problem.T;
        for (const std::string& w : cfg.points[i].warnings)
            std::cerr << "dpregret: warning: point " << i << ": " << w << "\n";
    }

    // Backend and output directory.
    std::string why_not_cuda;
    bool any_per_instance = false;
    for (const auto& p : cfg.points) any_per_instance |= p.per_instance;
    Backend backend;
    try {
        backend = choose_backend(requested, any_per_instance, &why_not_cuda);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    // The launch request: an instruction set this CPU lacks, or a GPU team size the CUDA backend does not have,
    // is a usage error before anything runs.
    if (backend == Backend::Cpu) {
        try {
            (void)cpu::resolve_isa(cfg.run.isa);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("[run] ") + e.what());
        }
    }
    if (cfg.run.team_threads != 0 && cfg.run.team_threads != 32 && cfg.run.team_threads != 256 &&
        cfg.run.team_threads != 1024)
        throw UsageError("[run] team_threads = " + std::to_string(cfg.run.team_threads) +
                         ": must be 0 (auto), 32 (a warp), 256 or 1024 (a block)");
    std::string device = "cpu: " + std::to_string(threads) + " threads";
    if (backend == Backend::Cuda) {
        const auto info = cuda_api::query_devices();
        device = info.name + " (sm_" + std::to_string(info.sm_major) + std::to_string(info.sm_minor) + ")";
    }
    const std::string dir = o.out.empty() ? "runs/" + utc_now("%Y%m%d-%H%M%S") : o.out;
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(fs::path(dir) / "run.json"))
        throw UsageError("--out " + dir +
                         " already holds a complete run (run.json); choose another directory");
    fs::create_directories(dir, ec);
    if (ec) throw UsageError("--out " + dir + ": cannot create the directory (" + ec.message() + ")");

    // Run the points.
    std::ostringstream sink; // --quiet: progress goes nowhere
    ProgressReporter::Options popt;
    popt.label = "run";
    if (o.quiet) popt.out = &sink;
    ProgressReporter bar(total_work, "instance-rounds", popt);
    for (std::size_t i = 0; i < cfg.points.size(); ++i) {
        const config::Point& p = cfg.points[i];
        PointJob job;
        job.learner = recs[i].learner;
        job.adversary = recs[i].adversary;
        job.shape.d = p.problem.d;
        job.shape.T = p.problem.T;
        job.shape.instances = static_cast<std::uint32_t>(cfg.run.instances); // < 2^32: check_instance_ids
        job.shape.seed = p.problem.seed;
        job.shape.stream = p.stream;
        job.shape.checkpoints = log_checkpoints(p.problem.T, cfg.run.checkpoints);
        job.shape.precision = cfg.run.precision == "float" ? Precision::Float : Precision::Double;
        job.shape.launch.lanes = cfg.run.lanes;
        job.shape.launch.isa = cfg.run.isa;
        job.shape.launch.team_threads = cfg.run.team_threads;
        job.per_instance = p.per_instance;
        job.backend = backend;
        job.threads = threads;
        job.on_progress = [&](std::uint64_t n) { bar.advance(n); };
        job.interrupted = [] { return interrupted(); };
        recs[i].outcome = run_point(job);
        if (!recs[i].outcome.completed) break;
    }
    bar.finish();
    if (interrupted()) {
        // Nothing that looks complete: no summary, no run.json; remove the directory if we made it empty.
        fs::remove(dir, ec);
        std::cerr << "dpregret: interrupted; no results were written\n";
        throw Interrupted();
    }

    RunMeta meta;
    meta.config_path = o.config;
    meta.overrides = o.sets;
    meta.backend_requested = o.backend;
    meta.device = device;
    meta.threads = threads;
    meta.started_at = started;
    write_summary_csv((fs::path(dir) / "summary.csv").string(), cfg, recs);
    write_final_regret_csv((fs::path(dir) / "final_regret.csv").string(), recs);
    meta.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    write_run_json((fs::path(dir) / "run.json").string(), cfg, recs, meta);
    if (!o.quiet) {
        double sim = 0;
        for (const auto& r : recs) sim += r.outcome.wall_seconds;
        std::cout << "dpregret: " << recs.size() << " point(s) x " << cfg.run.instances << " instances on "
                  << device << " in " << sim << " s; results in " << dir
                  << "/ (summary.csv, final_regret.csv, run.json)\n";
    }
}

} // namespace

void add_run_command(CLI::App& app) {
    auto opts = std::make_shared<RunOptions>();
    CLI::App* cmd = app.add_subcommand(
        "run",
        "Run an experiment file: config points x instances x T rounds of an online learner against an\n"
        "oblivious adversary, recording regret at log-spaced checkpoints (always including T).\n"
        "Every key of the file may be a list; the run is then the Cartesian product (a sweep).");
    cmd->add_option("config", opts->config, "experiment file (TOML); see docs/CONFIG.md");
    cmd->add_flag("--list-keys", opts->list_keys,
                  "print every key of [run], each adversary kind and each learner (default, range, meaning) and exit");
    cmd->add_option("--out", opts->out, "output directory (default runs/<UTC timestamp>/)");
    cmd->add_option("--set", opts->sets,
                    "override a key: --set learner.epsilon=[0.1,1] (VALUE is TOML; repeatable)");
    cmd->add_option("--backend", opts->backend, "auto (CUDA if a GPU is visible, else CPU), cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option("--threads", opts->threads,
                    "CPU threads (default: all cores); results do not depend on it");
    cmd->add_flag("--quiet", opts->quiet, "no progress bar or closing line");
    cmd->footer(
        "\nOutputs (in --out): summary.csv (one row per point and checkpoint: mean, std, sem and quantiles "
        "of\n"
        "regret over instances), final_regret.csv (every instance's regret at T), run.json (resolved "
        "config,\n"
        "seed, version, commit, backend, threads, wall time, throughput, privacy guarantee per point).\n"
        "Interrupting (Ctrl-C) leaves no results behind.\n\n"
        "Example:\n  dpregret run experiments/quickstart.toml --out runs/quickstart --set "
        "run.instances=200\n");
    cmd->callback([opts] {
        if (opts->list_keys) return print_keys();
        if (opts->config.empty()) throw UsageError("run needs an experiment file: dpregret run CONFIG.toml (see --help)");
        run_command(*opts);
    });
}

} // namespace dpr::cli
