// `dpregret audit CONFIG.toml`: an empirical eps lower bound for a whole online learner (docs/AUDITS.md).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "host/api/audit.hpp"
#include "host/api/audit_one_run.hpp"
#include "host/api/audit_search.hpp"
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
    bool quiet = false, allow_planted = false, list_keys = false, save_statistic = false, search = false;
    std::uint64_t pilot = 0; ///< --pilot: trials per side of each candidate of --search; 0 = the default
    bool one_run = false;
    std::uint64_t canaries = 0, window = 0; ///< --canaries (0 = not given: 1000), --window (0 = the default)
    std::string score;                       ///< --score ("" = not given: fitted)
    bool window_given = false;               ///< --window given (0 included)
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
    "curve, with its own verdict (docs/AUDITS.md).\n"
    "With --one-run each trial is instead one run with --canaries canary rounds in it, and eps_lb comes\n"
    "from how many canaries' coins the plays give away (Steinke, Nasr & Jagielski 2023).";

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
    spec.search = o.search;
    if (o.pilot && !o.search) throw UsageError("--pilot " + std::to_string(o.pilot) + ": only --search runs pilots");
    if ((o.canaries || o.window_given || !o.score.empty()) && !o.one_run)
        throw UsageError(std::string(o.canaries ? "--canaries" : o.window_given ? "--window" : "--score") +
                         ": only a one-run audit (--one-run) has canaries");
    spec.one_run = o.one_run;
    if (o.canaries) spec.one_run_request.canaries = o.canaries;
    spec.one_run_request.window = o.window;
    spec.one_run_request.fitted = o.score != "difference";
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
        // Runs `execute` (the API's execute_audit or execute_one_run) under a progress bar over the plan's work; an
        // interrupted audit writes nothing.
        const auto simulate = [&](const char* label, const auto& execute) {
            std::ostringstream sink;
            ProgressReporter::Options popt;
            popt.label = label;
            if (o.quiet) popt.out = &sink;
            ProgressReporter bar(plan.work, "instance-rounds", popt);
            spec.on_progress = [&](std::uint64_t n) { bar.advance(n); };
            spec.interrupted = [] { return interrupted(); };
            auto outcome = execute();
            bar.finish();
            if (!outcome.completed || interrupted()) {
                std::cerr << "dpregret: interrupted; no results were written\n";
                throw Interrupted(interrupt_signal());
            }
            return outcome;
        };
        if (o.one_run) {
            const audit::OneRunOutcome a = simulate("one-run audit", [&] { return api::execute_one_run(plan, spec); });
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
            api::write_one_run_files(out.dir(), api::one_run_json(plan, a, spec, o.config, started, wall));
            std::cout << api::one_run_verdict_line(a) << "\n";
            if (!o.quiet) std::cout << "dpregret: audit in " << dir << "/ (audit.json)\n";
            return;
        }
        // --search (host/api/audit_search.hpp): every candidate pair audited on a pilot with its own seed, then the
        // best one audited as the file asks.
        std::optional<api::PairSearch> search;
        if (o.search) {
            const std::uint64_t pilot = o.pilot ? o.pilot : api::default_pilot(plan.config.run.instances);
            spec.interrupted = [] { return interrupted(); };
            std::ostringstream search_sink;
            ProgressReporter::Options sopt;
            sopt.label = "search (" + std::to_string(pilot) + " pilot trials per side)";
            if (o.quiet) sopt.out = &search_sink;
            std::unique_ptr<ProgressReporter> sbar;
            search = api::search_pair(spec, plan, pilot, [&](std::size_t i, std::size_t n) {
                if (!sbar) sbar = std::make_unique<ProgressReporter>(n, "pairs", sopt);
                if (i > 0) sbar->advance(1);
            });
            if (sbar) {
                sbar->advance(1);
                sbar->finish();
            }
            if (search->candidates.empty() || interrupted()) {
                std::cerr << "dpregret: interrupted; no results were written\n";
                throw Interrupted(interrupt_signal());
            }
            spec.overrides.insert(spec.overrides.end(), search->chosen_sets().begin(), search->chosen_sets().end());
            plan = api::plan_audit(spec);
            if (!o.quiet)
                std::cerr << "dpregret: search: chose " << search->candidates[search->chosen].describe << " (pilot score "
                          << search->candidates[search->chosen].score << " of the claim)\n";
        }
        const audit::AuditOutcome a = simulate("audit", [&] { return api::execute_audit(plan, spec); });
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        nlohmann::json j = api::audit_json(plan, a, spec, o.config, started, wall);
        if (search) j["search"] = api::search_json(*search);
        api::write_audit_files(out.dir(), a, j, search ? api::pair_toml(plan, o.config) : std::string());
        std::cout << api::audit_verdict_line(a) << "\n";
        if (!o.quiet)
            std::cout << "dpregret: audit in " << dir << "/ (audit.json, privacy_region.csv"
                      << (o.save_statistic ? ", statistic.npy" : "") << (search ? ", pair.toml" : "") << ")\n";
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
    cmd->add_flag("--search", opts->search,
                  "choose the neighbouring pair and the statistic: audit each candidate of a family (t0, the "
                  "neighbour rule, the rounds R, the statistic; the file's own pair first) on a pilot with its own "
                  "seed, then audit the best as the file asks; writes pair.toml (the chosen audit, to repeat it) and "
                  "audit.json's \"search\" (docs/AUDITS.md \"Searching for the pair\")");
    cmd->add_option("--pilot", opts->pilot,
                    "--search: trials per side of each candidate's pilot (default [run] instances / 50, at least 20000)")
        ->check(CLI::Range(std::uint64_t{2}, std::uint64_t{4294967295}));
    cmd->add_flag("--one-run", opts->one_run,
                  "one-run audit (Steinke, Nasr & Jagielski 2023): each trial is one run of [run] rounds in which "
                  "--canaries rounds, evenly spaced, keep the base loss or take the [audit] neighbour rule's by a coin "
                  "of their own; each canary is scored by the charged losses of the --window rounds on each side of "
                  "it (--score), the coins are guessed from the scores (the rule chosen on the [audit] selection share "
                  "of the trials) and eps_lb comes from the right guesses (docs/AUDITS.md \"One-run audits\"). "
                  "Writes audit.json only");
    cmd->add_option("--canaries", opts->canaries, "--one-run: canary rounds per trial (default 1000; at most [run] "
                                                  "rounds / 2 - 1)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{2147483647}));
    cmd->add_option("--window", opts->window,
                    "--one-run: w, the rounds on each side of a canary that score it (0 = the default: min(spacing - 1, "
                    "8) for --score fitted, at most 32; the canaries' spacing - 1 for difference)");
    cmd->add_option("--score", opts->score,
                    "--one-run: how a canary's 2 w charges make its score: fitted (Fisher's direction fitted on the "
                    "selection share, the default) or difference (the after window's sum minus the before window's)")
        ->check(CLI::IsMember({"fitted", "difference"}));
    cmd->add_flag("--allow-planted", opts->allow_planted,
                  "allow [audit] planted: run a learner with a planted privacy bug that still claims the correct eps "
                  "(to check that the auditor catches it)");
    cmd->footer(
        "\nOutputs (in --out): audit.json (verdict, claimed eps and delta, eps_lb, the event and its counts,\n"
        "the (eps, delta) curve, the f-DP test of the region against the claimed trade-off curve, confidence,\n"
        "trials, seeds, settings, wall time, trials/s), privacy_region.csv (each side's tail frequencies over\n"
        "thresholds and the claimed curve at each), statistic.npy (--save-statistic: 2 x trials, every trial's statistic).\n"
        "Plot: /usr/bin/python3 experiments/scripts/plot_audit.py DIR.\n\n"
        "With --search also pair.toml (the chosen audit, paths absolute: dpregret audit pair.toml repeats it).\n\n"
        "Examples:\n  dpregret audit experiments/audits/dp_ftrl_experts.toml --out runs/audit1 --set run.instances=100000\n"
        "  dpregret audit experiments/audits/dp_mab.toml --search --out runs/audit2\n"
        "  dpregret audit experiments/audits/one_run/dp_ftrl_cube.toml --one-run --canaries 1000 --out runs/audit3\n");
    cmd->callback([opts, cmd] {
        opts->window_given = cmd->count("--window") > 0;
        if (opts->list_keys) return print_audit_keys();
        if (opts->config.empty()) throw UsageError("audit needs an audit file: dpregret audit CONFIG.toml (see --help)");
        audit_command(*opts);
    });
}

} // namespace dpr::cli
