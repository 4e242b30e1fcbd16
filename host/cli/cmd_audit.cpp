// `dpregret audit CONFIG.toml`: an empirical eps lower bound for a whole online learner (docs/AUDITS.md).
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "host/api/audit.hpp"
#include "host/cli/args.hpp"
#include "host/cli/errors.hpp"
#include "host/config/config.hpp"
#include "host/io/error.hpp"
#include "host/io/run_dir.hpp"
#include "host/progress/interrupt.hpp"
#include "host/progress/progress.hpp"

namespace dpr::cli {
namespace {

struct AuditOptions {
    std::string config, out, backend = "auto", threads, memory_limit = "auto";
    std::vector<std::string> sets;
    bool quiet = false, allow_planted = false, list_keys = false, save_statistic = false;
};

/// What `dpregret audit --help` says the command does.
constexpr const char* kAbout =
    "Empirical DP audit of a learner: run it [run] instances times on a loss sequence D and as many\n"
    "times on its neighbour D' (round [audit] round replaced), observe a statistic of its released\n"
    "per-round outputs, and give a lower bound eps_lb on its eps at confidence 1 - alpha\n"
    "(Clopper-Pearson on an event, a threshold or a set of values, chosen on the first [audit] selection\n"
    "share of each side's trials, default 0.2, and counted on the rest). The verdict is VIOLATION when\n"
    "eps_lb exceeds the eps the learner claims, else consistent; exit code 0 either way.\n"
    "For learners with Gaussian noise the bound is on mu of Gaussian DP instead ([audit] bound).\n"
    "audit.json also has the (eps, delta) curve: eps_lb at delta = 0, 1e-9 .. 1e-2 against the claim's own\n"
    "curve, with its own verdict (docs/AUDITS.md).";

void audit_command(const AuditOptions& o) {
    const InterruptScope interrupt_scope;
    const auto t_start = std::chrono::steady_clock::now();
    const std::string started = utc_now("%Y-%m-%dT%H:%M:%SZ");
    api::AuditSpec spec;
    spec.config_path = o.config;
    spec.overrides = o.sets;
    spec.backend = o.backend == "cpu" ? Backend::Cpu : o.backend == "cuda" ? Backend::Cuda : Backend::Auto;
    spec.backend_requested = o.backend;
    spec.threads = parse_threads(o.threads);
    spec.memory_limit = o.memory_limit;
    spec.allow_planted = o.allow_planted;
    spec.keep_statistic = o.save_statistic;
    // The API's plan (host/api/audit.hpp): everything that can refuse the input, before the directory exists.
    api::AuditPlan plan = api::plan_audit(spec);
    for (const std::string& w : plan.warnings) std::cerr << "dpregret: warning: " << w << "\n";

    io::OutputDirectory out;
    try {
        out = o.out.empty() ? io::OutputDirectory::create_unique("runs", "audit-" + utc_now("%Y%m%d-%H%M%S"))
                            : io::OutputDirectory::open(o.out, io::OutputKind::Audit); // locked; refuses results
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }
    const std::string& dir = out.path();
    // A second signal ends the process at once: it must still remove the lock file, and the directory if this
    // audit created it (it holds nothing but the lock while the trials run).
    set_interrupt_cleanup(out.lock_path(), out.created_leaf());
    try {
        // Disk, like memory, before anything is simulated: --save-statistic at 1e8 trials writes 1.6 GB, and a
        // full disk found at the end would cost the whole audit.
        api::check_audit_disk(plan, spec, dir);
        std::ostringstream sink;
        ProgressReporter::Options popt;
        popt.label = "audit";
        if (o.quiet) popt.out = &sink;
        ProgressReporter bar(plan.work, "instance-rounds", popt);
        spec.on_progress = [&](std::uint64_t n) { bar.advance(n); };
        spec.interrupted = [] { return interrupted(); };
        const audit::AuditOutcome a = api::execute_audit(plan, spec);
        bar.finish();
        if (!a.completed || interrupted()) {
            std::cerr << "dpregret: interrupted; no results were written\n";
            throw Interrupted(interrupt_signal());
        }
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        api::write_audit_files(out.dir(), a, api::audit_json(plan, a, spec, o.config, started, wall));
        std::cout << api::audit_verdict_line(a) << "\n";
        if (!o.quiet)
            std::cout << "dpregret: audit in " << dir << "/ (audit.json, privacy_region.csv"
                      << (o.save_statistic ? ", statistic.npy" : "") << ")\n";
    } catch (...) {
        out.remove_created();
        throw;
    }
}

void print_audit_keys() {
    std::cout << "[audit] keys (dpregret audit; [run], [adversary] and [learner] as for dpregret run --list-keys):\n";
    for (const KeySpec& k : audit::audit_keys())
        std::cout << "  " << k.name << " = " << (*k.default_text ? k.default_text : "(required)") << "    "
                  << config::range_text(k) << "\n      " << k.doc << "\n";
}

} // namespace

void add_audit_command(CLI::App& app) {
    auto opts = std::make_shared<AuditOptions>();
    CLI::App* cmd = app.add_subcommand("audit", kAbout);
    cmd->add_option("config", opts->config, "audit file (TOML: [run], [adversary], [learner], [audit]); docs/AUDITS.md");
    cmd->add_flag("--list-keys", opts->list_keys, "print the [audit] keys (default, range, meaning) and exit");
    cmd->add_option("--out", opts->out, "output directory (default runs/audit-<UTC timestamp>[-N]/)");
    cmd->add_option("--set", opts->sets, "override a key: --set audit.round=3 (VALUE is TOML; repeatable)");
    cmd->add_option("--backend", opts->backend, "auto (CUDA if a GPU is visible, else CPU), cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option("--threads", opts->threads, "CPU threads (default: all cores); results do not depend on it");
    cmd->add_flag("--quiet", opts->quiet, "no progress bar; only the verdict line");
    cmd->add_flag("--save-statistic", opts->save_statistic,
                  "also write statistic.npy (every trial's statistic: 2 x trials doubles, 1.6 GB at 1e8 trials per "
                  "side); without it the evaluation trials are counted and never stored");
    add_memory_limit_option(cmd, opts->memory_limit, "an audit");
    cmd->add_flag("--allow-planted", opts->allow_planted,
                  "allow [audit] planted: run a learner with a planted privacy bug that still claims the correct eps "
                  "(to check that the auditor catches it)");
    cmd->footer(
        "\nOutputs (in --out): audit.json (verdict, claimed eps and delta, eps_lb, the event and its counts,\n"
        "the (eps, delta) curve, confidence, trials, seeds, settings, wall time, trials/s), privacy_region.csv (each side's tail\n"
        "frequencies over thresholds), statistic.npy (--save-statistic: 2 x trials, every trial's statistic).\n"
        "Plot: /usr/bin/python3 experiments/scripts/plot_audit.py DIR.\n\n"
        "Example:\n  dpregret audit experiments/audits/dp_ftrl_experts.toml --out runs/audit1 --set run.instances=100000\n");
    cmd->callback([opts] {
        if (opts->list_keys) return print_audit_keys();
        if (opts->config.empty()) throw UsageError("audit needs an audit file: dpregret audit CONFIG.toml (see --help)");
        audit_command(*opts);
    });
}

} // namespace dpr::cli
