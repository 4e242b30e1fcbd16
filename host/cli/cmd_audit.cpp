// `dpregret audit CONFIG.toml`: an empirical eps lower bound for a whole online learner (docs/AUDITS.md).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <ctime>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "host/audit/learner_audit.hpp"
#include "host/backend/cuda_api.hpp"
#include "host/cli/args.hpp"
#include "host/cli/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/results/memory_estimate.hpp"
#include "host/config/config.hpp"
#include "host/io/atomic_file.hpp"
#include "host/io/csv.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "host/io/run_dir.hpp"
#include "host/progress/interrupt.hpp"
#include "host/progress/progress.hpp"
#include "host/version.hpp"

namespace dpr::cli {
namespace {

struct AuditOptions {
    std::string config, out, backend = "auto", threads, memory_limit = "auto";
    std::vector<std::string> sets;
    bool quiet = false, allow_planted = false, list_keys = false, save_statistic = false;
};


nlohmann::json num(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (std::isnan(v)) return nullptr;
    return v;
}

config::ConfigInputs audit_inputs() {
    config::ConfigInputs in = api::run_config_inputs();
    in.extra_sections.push_back(audit::audit_section());
    return in;
}


void write_outputs(const std::string& dir, const AuditOptions& o, const config::Config& cfg,
                   const audit::AuditOutcome& a, const std::string& device, unsigned threads, const std::string& started,
                   double wall) {
    const audit::AuditSettings& s = a.settings;
    const audit::AuditBound& b = a.bound;
    const config::Point& p = cfg.points[0];
    nlohmann::json j;
    j["verdict"] = audit::verdict(a);
    j["claimed"] = {{"epsilon", num(a.learner.privacy.epsilon)}, {"delta", a.learner.privacy.delta},
                    {"gdp_mu", a.learner.privacy.gdp_mu > 0 ? nlohmann::json(a.learner.privacy.gdp_mu) : nlohmann::json(nullptr)},
                    {"accountant", a.learner.privacy.accountant}, {"mechanism", a.learner.privacy.mechanism}};
    j["bound"] = {{"kind", audit::bound_kind_name(b.kind)}, {"requested", s.bound_requested},
                  {"compared", b.kind == audit::BoundKind::Gdp ? "mu_lb against claimed.gdp_mu"
                                                               : "epsilon_lb against claimed.epsilon"}};
    j["epsilon_lb"] = num(b.epsilon_lb);
    if (b.kind == audit::BoundKind::Gdp) j["mu_lb"] = b.mu_lb;
    j["confidence"] = 1.0 - b.alpha;
    j["event"] = {{"describe", b.event.describe()},
                  {"tail", b.event.upper_tail ? "upper" : "lower"},
                  {"threshold", num(b.event.threshold)},
                  {"numerator_side", b.event.a_is_numerator ? "base" : "neighbour"},
                  {"k_numerator", b.k1}, {"n_numerator", b.n1}, {"k_denominator", b.k0}, {"n_denominator", b.n0},
                  {"selection_score", b.selection_score},
                  {"chosen_on", "trials [0, " + std::to_string(a.selection_trials) + ") of each side"},
                  {"counted_on", "trials [" + std::to_string(a.selection_trials) + ", " + std::to_string(a.trials) +
                                     ") of each side"}};
    j["trials_per_side"] = a.trials;
    j["seeds"] = {{"seed", p.problem.seed}, {"stream", p.stream},
                  {"base_instances", {0, a.trials - 1}}, {"neighbour_instances", {a.trials, 2 * a.trials - 1}}};
    j["learner"] = {{"algorithm", a.learner.name}, {"planted", s.planted_name}};
    j["neighbours"] = {{"rule", audit::neighbour_rule_name(s.neighbour.rule)},
                       {"round", s.neighbour.round},
                       {"coordinate", s.neighbour.coordinate},
                       {"l1_distance", a.l1},
                       {"l2_distance", a.l2},
                       {"adversary", a.adversary.name}};
    if (!s.neighbour_path.empty()) j["neighbours"]["path"] = s.neighbour_path;
    j["statistic"] = {{"observed", !s.diagnostic.empty() ? s.diagnostic + " after round max R"
                                   : s.realized ? "sum over R of l_t(i_t) (realized)" : "sum over R of <l_t, x_t> (expected)"},
                      {"rounds", s.rounds.size() <= 64 ? nlohmann::json(s.rounds) : nlohmann::json(std::to_string(s.rounds.size()) + " rounds")},
                      {"rounds_run", a.rounds_run}};
    nlohmann::json settings = nlohmann::json::object();
    for (const auto& kv : p.settings) settings[kv.first] = kv.second;
    for (const auto& x : cfg.extra)
        for (const auto& kv : x.settings) settings[kv.first] = kv.second;
    j["settings"] = settings;
    j["config"] = {{"path", o.config}, {"overrides", o.sets}, {"resolved_toml", cfg.resolved_toml}};
    j["backend"] = {{"requested", o.backend}, {"used", a.backend}, {"device", device}, {"threads", threads},
                    {"launch_policy", a.policy}, {"precision", cfg.run.precision}};
    j["timing"] = {{"started_at", started},
                   {"wall_seconds", wall},
                   {"simulate_seconds", a.simulate_seconds},
                   {"trials_per_second", a.simulate_seconds > 0 ? 2.0 * static_cast<double>(a.trials) / a.simulate_seconds : 0.0},
                   {"instance_rounds_per_second",
                    a.simulate_seconds > 0 ? 2.0 * static_cast<double>(a.trials) * static_cast<double>(a.rounds_run) / a.simulate_seconds : 0.0}};
    const BuildInfo& bi = build_info();
    j["dpregret"] = {{"version", bi.version}, {"git_commit", bi.git_commit}, {"rng", bi.rng}};

    // statistic.npy (--save-statistic: 2 x trials, base row then neighbour row), privacy_region.csv, then
    // audit.json last: its presence says the audit is complete.
    std::unique_ptr<io::AtomicFile> npy_file;
    if (o.save_statistic) {
        npy_file = std::make_unique<io::AtomicFile>(dir + "/statistic.npy");
        io::NpyWriter w(npy_file->stream(), {2, a.trials});
        w.write(a.base.data(), a.base.size());
        w.write(a.neighbour.data(), a.neighbour.size());
        w.finish();
    }
    io::AtomicFile region_file(dir + "/privacy_region.csv");
    region_file.stream() << "threshold,base_ge,neighbour_ge,base_le,neighbour_le\n";
    for (const auto& r : a.region)
        region_file.stream() << io::format_double(r.threshold) << "," << io::format_double(r.base_ge) << ","
                             << io::format_double(r.neighbour_ge) << "," << io::format_double(r.base_le) << ","
                             << io::format_double(r.neighbour_le) << "\n";
    io::AtomicFile json_file(dir + "/audit.json");
    json_file.stream() << j.dump(2) << "\n";
    if (npy_file) npy_file->commit();
    region_file.commit();
    json_file.commit();
}

void audit_command(const AuditOptions& o) {
    const InterruptScope interrupt_scope;
    const auto t_start = std::chrono::steady_clock::now();
    const std::string started = utc_now("%Y-%m-%dT%H:%M:%SZ");
    config::Config cfg;
    try {
        cfg = config::load_config(o.config, o.sets, audit_inputs());
    } catch (const config::ConfigError& e) {
        throw UsageError(e.what());
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }
    std::vector<PointRecord> recs = api::resolve_points(cfg);
    if (recs.size() != 1)
        throw UsageError("an audit runs one learner on one neighbouring pair, but the config is a sweep of " +
                         std::to_string(recs.size()) + " points (" + cfg.swept_keys.at(0) +
                         " is a list); give one value per key");
    for (const std::string& w : cfg.points[0].warnings) std::cerr << "dpregret: warning: " << w << "\n";
    unsigned threads = parse_threads(o.threads);
    const Backend requested = o.backend == "cpu" ? Backend::Cpu : o.backend == "cuda" ? Backend::Cuda : Backend::Auto;
    Backend backend;
    try {
        backend = choose_backend(requested, false, nullptr);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    api::check_launch(cfg, backend);
    std::string device = "cpu: " + std::to_string(threads) + " threads";
    if (backend == Backend::Cuda) {
        const auto info = cuda_api::query_devices();
        device = info.name + " (sm_" + std::to_string(info.sm_major) + std::to_string(info.sm_minor) + ")";
    }
    audit::AuditJob job;
    job.cfg = &cfg;
    job.learner = recs[0].learner;
    job.adversary = recs[0].adversary;
    job.backend = backend;
    job.threads = threads;
    job.allow_planted = o.allow_planted;
    job.keep_statistic = o.save_statistic;
    audit::AuditSettings settings;
    try {
        settings = audit::read_audit_settings(cfg, job.adversary, job.learner); // bad keys fail before the directory exists
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    // Memory before anything exists: one executor batch (as a run of that many instances) plus the audit's own.
    {
        const api::MemoryLimit limit = api::parse_memory_limit(o.memory_limit);
        const std::uint64_t M = cfg.run.instances;
        MemoryEstimate e = estimate_run_memory(cfg, recs, threads, PointJob{}.chunk_bytes, backend == Backend::Cuda,
                                               std::min<std::uint64_t>(settings.batch, M));
        const std::uint64_t sel = static_cast<std::uint64_t>(std::ceil(settings.selection * static_cast<double>(M)));
        const MemoryTerm sel_term{"the selection shares: 2 x " + std::to_string(sel) + " trials x 8 bytes ([audit] selection = " +
                                      io::format_double(settings.selection) + " of [run] instances)",
                                  audit::audit_extra_bytes(settings, M, false)};
        const MemoryTerm stat_term{"--save-statistic: 2 x " + std::to_string(M) + " trials x 8 bytes",
                                   audit::audit_extra_bytes(settings, M, o.save_statistic) - sel_term.bytes};
        for (const MemoryTerm& t : {sel_term, stat_term}) {
            e.host_bytes = sat_add(e.host_bytes, t.bytes);
            e.terms.push_back(t);
        }
        std::sort(e.terms.begin(), e.terms.end(), [](const MemoryTerm& x, const MemoryTerm& y) { return x.bytes > y.bytes; });
        std::uint64_t device_bytes = 0;
        if (backend == Backend::Cuda)
            device_bytes = static_cast<std::uint64_t>(cuda_api::query_devices().memory_gib * 1073741824.0);
        api::check_memory(e, limit, device_bytes);
    }
    if (std::isinf(job.learner.privacy.epsilon))
        std::cerr << "dpregret: warning: learner \"" << job.learner.name
                  << "\" as configured claims no privacy (eps = inf); the audit measures how distinguishable the "
                     "neighbours are, and cannot find a violation\n";

    io::OutputDirectory out;
    try {
        out = o.out.empty() ? io::OutputDirectory::create_unique("runs", "audit-" + utc_now("%Y%m%d-%H%M%S"))
                            : io::OutputDirectory::open(o.out); // locked: a second process is refused
        if (!o.out.empty() && std::filesystem::exists(std::filesystem::path(o.out) / "audit.json"))
            throw UsageError("--out " + o.out + " already holds a complete audit (audit.json); choose another directory");
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }
    const std::string& dir = out.path();
    try {
        std::ostringstream sink;
        ProgressReporter::Options popt;
        popt.label = "audit";
        if (o.quiet) popt.out = &sink;
        const std::uint64_t work = 2 * cfg.run.instances * cfg.points[0].problem.T;
        ProgressReporter bar(work, "instance-rounds", popt);
        job.on_progress = [&](std::uint64_t n) { bar.advance(n); };
        job.interrupted = [] { return interrupted(); };
        audit::AuditOutcome a;
        try {
            a = audit::run_learner_audit(job);
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        } catch (const io::IoError& e) {
            throw UsageError(e.what());
        }
        bar.finish();
        if (!a.completed || interrupted()) {
            std::cerr << "dpregret: interrupted; no results were written\n";
            throw Interrupted(interrupt_signal());
        }
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        write_outputs(dir, o, cfg, a, device, threads, started, wall);
        const audit::AuditBound& b = a.bound;
        std::ostringstream line;
        line << audit::verdict(a) << ": ";
        if (b.kind == audit::BoundKind::Gdp)
            line << "mu_lb = " << b.mu_lb << " against claimed mu = " << a.learner.privacy.gdp_mu << " (Gaussian DP), i.e. ";
        line << "eps_lb = " << b.epsilon_lb << " at " << 100 * (1 - b.alpha)
             << "% confidence, claimed eps = " << a.learner.privacy.epsilon << ", delta = " << a.learner.privacy.delta
             << " (" << a.learner.name << (a.settings.planted_name != "none" ? ", planted " + a.settings.planted_name : "")
             << "; event " << b.event.describe() << ": " << b.k1 << "/" << b.n1 << " vs " << b.k0 << "/" << b.n0
             << "; " << a.trials << " trials per side in " << a.simulate_seconds << " s)";
        std::cout << line.str() << "\n";
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
    CLI::App* cmd = app.add_subcommand(
        "audit",
        "Empirical DP audit of a learner: run it [run] instances times on a loss sequence D and as many\n"
        "times on its neighbour D' (round [audit] round replaced), observe a statistic of its released\n"
        "plays, and give a lower bound eps_lb on its eps at confidence 1 - alpha (Clopper-Pearson on a\n"
        "threshold event chosen on half the trials and counted on the other half). The verdict is\n"
        "VIOLATION when eps_lb exceeds the eps the learner claims, else consistent; exit code 0 either way.\n"
        "For learners with Gaussian noise the bound is on mu of Gaussian DP instead ([audit] bound).");
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
        "confidence, trials, seeds, settings, wall time, trials/s), privacy_region.csv (each side's tail\n"
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
