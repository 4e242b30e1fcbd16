#include "host/api/audit.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "host/api/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/backend/cuda_api.hpp"
#include "host/io/atomic_file.hpp"
#include "host/io/csv.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "host/io/run_dir.hpp"
#include "host/results/memory_estimate.hpp"
#include "host/version.hpp"

namespace dpr::api {
namespace {

nlohmann::json num(double v) { return number_json(v); }

/// Memory before anything exists: one executor batch (as a run of that many instances) plus the audit's own: the
/// selection shares (and --save-statistic's trials) of a two-sample audit, or a one-run audit's canaries and its batch's
/// checkpoint sums.
void check_audit_memory(const AuditPlan& p, const AuditSpec& spec, const audit::AuditSettings& settings) {
    const config::Config& cfg = p.config;
    const bool cuda = p.job.backend == Backend::Cuda;
    const MemoryLimit limit = parse_memory_limit(spec.memory_limit);
    const std::uint64_t M = cfg.run.instances;
    const std::uint64_t trials = spec.one_run ? audit::one_run_batch(p.canaries, settings.batch, M)
                                              : std::min<std::uint64_t>(settings.batch, M);
    // A one-run audit runs its trials with per-instance rows (each thread's row scratch, per-instance comparators).
    config::Config shaped = cfg;
    if (spec.one_run) shaped.points.at(0).per_instance = true;
    MemoryEstimate e = estimate_run_memory(shaped, p.records, p.threads, PointJob::kDefaultChunkBytes, cuda, trials);
    // The run's estimate names its instance count; here that is one executor batch of trials.
    const std::string batch = std::to_string(trials);
    for (MemoryTerm& t : e.terms) {
        for (const auto& [from, to] : {std::pair<std::string, std::string>{"[run] instances = " + batch,
                                                                           "[audit] batch = " + batch + " trials"},
                                       {" x " + batch + " instances", " x " + batch + " trials of a batch"}}) {
            const std::size_t at = t.what.find(from);
            if (at != std::string::npos) t.what.replace(at, from.size(), to);
        }
    }
    const std::uint64_t sel = static_cast<std::uint64_t>(std::ceil(settings.selection * static_cast<double>(M)));
    std::vector<MemoryTerm> own;
    if (!spec.one_run) {
        const MemoryTerm sel_term{"the selection shares: 2 x " + std::to_string(sel) +
                                      " trials x 8 bytes ([audit] selection = " + io::format_double(settings.selection) +
                                      " of [run] instances)",
                                  audit::audit_extra_bytes(settings, M, false)};
        own.push_back(sel_term);
        own.push_back({"--save-statistic: 2 x " + std::to_string(M) + " trials x 8 bytes",
                       audit::audit_extra_bytes(settings, M, spec.keep_statistic) - sel_term.bytes});
    } else {
        const std::uint64_t m = spec.one_run_request.canaries;
        own.push_back({"--one-run: " + std::to_string(M) + " trials x " + std::to_string(m) +
                           " canaries x 21 bytes (each one's score, coin and rank)",
                       audit::one_run_extra_bytes(M, m)});
        // fitted: the selection share's 2 w charges around each canary until the direction is fitted, then split by
        // coin and centred for the fit (three copies of 8 bytes each).
        if (p.canaries.fitted)
            own.push_back({"--score fitted: " + std::to_string(sel) + " selection trials x " + std::to_string(m) +
                               " canaries x 2 x " + std::to_string(p.canaries.window) + " charges x 24 bytes",
                           sat_mul(sat_mul(sel, m), 48 * p.canaries.window)});
        const std::uint64_t nck = audit::one_run_checkpoints(p.canaries).size();
        // The executor's sums and their copies in the batch's result: charged, realized, comparators and regrets,
        // per-instance (about 11 doubles per trial and checkpoint).
        own.push_back({"--one-run: one batch of " + batch + " trials x " + std::to_string(nck) +
                           " checkpoints x 11 sums x 8 bytes",
                       sat_mul(sat_mul(trials, nck), 88)});
        own.push_back({"--one-run: the canaries' feature columns and the checkpoints",
                       sat_mul(m, (p.canaries.fitted ? 2 * p.canaries.window : 2) * 16 + 8 * 4)});
    }
    for (const MemoryTerm& t : own) {
        e.host_bytes = sat_add(e.host_bytes, t.bytes);
        e.terms.push_back(t);
    }
    std::sort(e.terms.begin(), e.terms.end(), [](const MemoryTerm& x, const MemoryTerm& y) { return x.bytes > y.bytes; });
    std::uint64_t device_bytes = 0;
    if (cuda) device_bytes = static_cast<std::uint64_t>(cuda_api::query_devices().memory_gib * 1073741824.0);
    check_memory(e, limit, device_bytes,
                 spec.one_run ? "Reduce [run] instances or --canaries (every canary's score is kept), the --window of a "
                                "fitted score, [audit] batch or [adversary] d, or lift the limit with --memory-limit none."
                              : "Reduce [audit] batch (the executor batch), [run] instances (the selection shares) or "
                                "[adversary] d, leave out --save-statistic, or lift the limit with --memory-limit none.",
                 "audit");
}

} // namespace

config::ConfigInputs audit_config_inputs(const LossArrays& arrays) {
    config::ConfigInputs in = run_config_inputs(arrays);
    in.extra_sections.push_back(audit::audit_section());
    return in;
}

AuditPlan plan_audit(const AuditSpec& spec) {
    AuditPlan p;
    p.config = load_config_for(spec, audit_config_inputs(spec.arrays));
    const config::Config& cfg = p.config;
    p.records = resolve_points(cfg);
    if (p.records.size() != 1)
        throw UsageError("an audit runs one learner on one neighbouring pair, but the config is a sweep of " +
                         std::to_string(p.records.size()) + " points (" + cfg.swept_keys.at(0) +
                         " is a list); give one value per key");
    p.warnings = cfg.points[0].warnings;
    const std::string in_float = float_privacy_warning(cfg, p.records);
    if (!in_float.empty()) p.warnings.push_back(in_float);
    p.threads = spec.threads ? spec.threads : std::max(1u, std::thread::hardware_concurrency());
    Backend backend;
    try {
        backend = choose_backend(spec.backend, false, nullptr);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    check_launch(cfg, spec.one_run ? Backend::Cpu : backend); // a one-run audit runs on the CPU executor
    p.device = "cpu: " + std::to_string(p.threads) + " threads";
    if (backend == Backend::Cuda) {
        const auto info = cuda_api::query_devices();
        p.device = info.name + " (sm_" + std::to_string(info.sm_major) + std::to_string(info.sm_minor) + ")";
    }
    audit::AuditJob& job = p.job;
    job.cfg = &p.config;
    job.learner = p.records[0].learner;
    job.adversary = p.records[0].adversary;
    job.backend = backend;
    job.threads = p.threads;
    job.allow_planted = spec.allow_planted;
    job.keep_statistic = spec.keep_statistic;
    audit::AuditSettings settings;
    try {
        settings = audit::read_audit_settings(cfg, job.adversary, job.learner);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    if (spec.one_run) {
        if (spec.search) throw UsageError("--search chooses a two-sample audit's pair; a one-run audit (--one-run) has none");
        if (spec.keep_statistic)
            throw UsageError("--save-statistic keeps a two-sample audit's statistic; a one-run audit (--one-run) has "
                             "per-canary scores instead and writes audit.json only");
        if (backend == Backend::Cuda && spec.backend == Backend::Cuda)
            throw UsageError("--backend cuda: one-run audits run on the CPU executor only (their per-trial canary rows "
                             "have not been run on a device); use --backend cpu or auto");
        job.backend = Backend::Cpu;
        p.device = "cpu: " + std::to_string(p.threads) + " threads";
        try {
            p.canaries = audit::check_one_run(job, spec.one_run_request);
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
    }
    check_audit_memory(p, spec, settings);
    if (std::isinf(job.learner.privacy.epsilon))
        p.warnings.push_back("learner \"" + job.learner.name + "\" as configured claims no privacy (eps = inf); the "
                             "audit measures how distinguishable the neighbours are, and cannot find a violation");
    p.work = spec.one_run ? cfg.run.instances * p.canaries.rounds_run : 2 * cfg.run.instances * cfg.points[0].problem.T;
    return p;
}

namespace {

/// File systems hand out whole blocks: a 100-byte file takes 4 KiB of the free space statvfs reports.
constexpr std::uint64_t kBlockBytes = 4096;
std::uint64_t in_blocks(std::uint64_t bytes) {
    return sat_mul(bytes / kBlockBytes + (bytes % kBlockBytes != 0), kBlockBytes);
}

/// A string's length in audit.json: quoted and escaped exactly as nlohmann::json writes it.
std::uint64_t json_text_bytes(const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size();
}

/// NpyWriter's header for a 2 x N float64 array: the 10-byte preamble and the dict, padded to 64-byte alignment;
/// the dict with two 20-digit dimensions is under 118 bytes.
constexpr std::uint64_t kNpyHeaderBytes = 128;
/// privacy_region.csv: its header line and at most 200 rows (the region's thresholds, deduplicated), each a
/// threshold in shortest round-trip form (at most 24 characters: "-2.2250738585072014e-308"), four fractions and
/// four claimed type-II errors in [0, 1] (at most 22: "4.6566128752457969e-10"), 8 commas and a newline. A
/// continuous statistic writes about half of this (shorter fractions); the bound is what a disk must hold.
constexpr std::uint64_t kRegionBytes = 128 + 200 * (24 + 8 * 22 + 9);
/// audit.json without the texts counted below: about 60 keys with their numbers and indentation (under 2 KiB), R's
/// rounds when it lists them (at most 64 numbers, one per line: 1.2 KiB), the fitted weights (weights = "fitted": at
/// most 64 numbers of at most 24 characters, one per line: 2 KiB), the event's description and the launch policy.
constexpr std::uint64_t kJsonSkeletonBytes = 6144;
/// audit.json's "curve": 9 points of 10 fields (under 400 bytes with indentation) and an event description (under
/// 300 bytes: a set event's origin is the longest), and its own few fields.
/// And its "fdp" (the f-DP test, tradeoff.hpp): about 15 fields, the claim's description and a test's name (under
/// 2 KiB together).
constexpr std::uint64_t kCurveBytes = 8192 + 2048;

} // namespace

AuditDiskEstimate estimate_audit_disk(const AuditPlan& plan, const AuditSpec& spec) {
    const config::Config& cfg = plan.config;
    AuditDiskEstimate e;
    if (spec.keep_statistic)
        e.statistic = in_blocks(sat_add(kNpyHeaderBytes, sat_mul(2 * sizeof(double), cfg.run.instances)));
    e.region = in_blocks(kRegionBytes);
    std::uint64_t json = kJsonSkeletonBytes + kCurveBytes + json_text_bytes(cfg.resolved_toml) + json_text_bytes(spec.config_path) +
                         json_text_bytes(spec.source_name) + json_text_bytes(plan.device);
    for (const std::string& o : spec.overrides) json += 8 + json_text_bytes(o); // indentation, comma, newline
    // Every resolved setting, counted twice: a path among them (neighbour_path) is written again elsewhere.
    const auto add_settings = [&](const std::vector<std::pair<std::string, std::string>>& kv) {
        for (const auto& [k, v] : kv) json += 8 + json_text_bytes(k) + 2 * json_text_bytes(v);
    };
    add_settings(cfg.points.at(0).settings);
    for (const auto& x : cfg.extra) add_settings(x.settings);
    const LearnerRuntime& learner = plan.records.at(0).learner;
    json += json_text_bytes(learner.name) + json_text_bytes(learner.privacy.accountant) +
            json_text_bytes(learner.privacy.mechanism) + json_text_bytes(plan.records.at(0).adversary.name);
    if (spec.search) {
        // audit.json's "search": at most about 130 candidates of under 600 bytes each (their pairs, sets, scores).
        json += 130 * 600;
        // pair.toml: the resolved TOML, paths made absolute (each under 4 KiB), and its three comment lines.
        e.pair = in_blocks(json_text_bytes(cfg.resolved_toml) + 2 * 4096 + 512);
    }
    e.json = in_blocks(json);
    return e;
}

void check_audit_disk(const AuditPlan& plan, const AuditSpec& spec, const std::string& dir) {
    const AuditDiskEstimate e = estimate_audit_disk(plan, spec);
    const std::optional<std::uint64_t> free_disk = available_disk_bytes(dir);
    if (fits_on_disk(e.total(), free_disk)) return;
    const std::uint64_t M = plan.config.run.instances;
    std::string parts;
    if (spec.keep_statistic)
        parts = "statistic.npy " + human_bytes(e.statistic) + " (--save-statistic: 2 x " + std::to_string(M) +
                " trials x 8 bytes), ";
    parts += "privacy_region.csv " + human_bytes(e.region) + ", audit.json " + human_bytes(e.json);
    if (e.pair) parts += ", pair.toml " + human_bytes(e.pair);
    throw UsageError("this audit needs about " + human_bytes(e.total()) + " of disk in " + dir + " (" + parts +
                     "), but " + human_bytes(*free_disk) + " is free there. Free space or choose another --out" +
                     (spec.keep_statistic ? std::string(", or leave out --save-statistic (the bound does not need it) "
                                                        "or reduce [run] instances")
                                          : std::string()));
}

audit::AuditOutcome execute_audit(AuditPlan& plan, const AuditSpec& spec) {
    plan.job.cfg = &plan.config; // the plan may have moved since plan_audit
    plan.job.on_progress = spec.on_progress;
    plan.job.interrupted = spec.interrupted;
    try {
        return audit::run_learner_audit(plan.job);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    } catch (const std::bad_alloc&) {
        // What the audit allocates (docs/AUDITS.md "Memory and stopping"): one executor batch of learner states, the
        // selection shares, and with --save-statistic every trial's statistic. Name them with the keys that size them
        // (the estimate passed, or --memory-limit none skipped it: the limits moved or the estimate fell short).
        const config::Config& cfg = plan.config;
        const std::uint64_t M = cfg.run.instances;
        std::string batch = "[audit] batch", selection = "[audit] selection";
        try {
            const audit::AuditSettings s = audit::read_audit_settings(cfg, plan.job.adversary, plan.job.learner);
            batch += " = " + std::to_string(std::min<std::uint64_t>(s.batch, M));
            selection += " = " + io::format_double(s.selection);
        } catch (...) { // the settings were read by plan_audit; without them the keys are named bare
        }
        throw std::runtime_error(
            "out of memory while running the audit: it allocates one executor batch of learner states (" + batch +
            " trials x " + human_bytes(plan.job.learner.state_bytes) + " for [learner] algorithm = \"" +
            plan.job.learner.name + "\" at [adversary] d = " + std::to_string(cfg.points[0].problem.d) +
            "), the selection shares (" + selection + " of [run] instances = " + std::to_string(M) +
            ", 16 bytes per trial)" + (spec.keep_statistic ? " and every trial's statistic (--save-statistic)" : "") +
            "; no results were written. Reduce [audit] batch, [run] instances or [adversary] d" +
            (spec.keep_statistic ? ", or leave out --save-statistic" : "") +
            ", or free memory (the address-space limit, ulimit -v, counts too)");
    }
}

void add_audit_context(nlohmann::json& j, const AuditPlan& plan, const AuditSpec& spec, const std::string& config_label,
                       const std::string& backend_used, const std::string& launch_policy) {
    const config::Config& cfg = plan.config;
    nlohmann::json settings = nlohmann::json::object();
    for (const auto& kv : cfg.points.at(0).settings) settings[kv.first] = kv.second;
    for (const auto& x : cfg.extra)
        for (const auto& kv : x.settings) settings[kv.first] = kv.second;
    j["settings"] = settings;
    j["config"] = {{"path", config_label}, {"overrides", spec.overrides}, {"resolved_toml", cfg.resolved_toml}};
    j["backend"] = {{"requested", spec.backend_requested}, {"used", backend_used}, {"device", plan.device},
                    {"threads", plan.threads}, {"launch_policy", launch_policy}, {"precision", cfg.run.precision}};
}

nlohmann::json number_json(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (std::isnan(v)) return nullptr;
    return v;
}

nlohmann::json event_json(const audit::AuditBound& b, const std::string& first, const std::string& second,
                          const std::string& chosen_on, const std::string& counted_on) {
    const bool set_event = b.event.kind == audit::AuditEvent::Kind::Set;
    return {{"kind", b.event.kind_name()},
            {"describe", b.event.describe()},
            {"tail", set_event ? nlohmann::json(nullptr) : nlohmann::json(b.event.upper_tail ? "upper" : "lower")},
            {"threshold", set_event ? nlohmann::json(nullptr) : num(b.event.threshold)},
            {"set_size", set_event ? nlohmann::json(b.event.set.size()) : nlohmann::json(nullptr)},
            {"numerator_side", b.event.a_is_numerator ? first : second},
            {"k_numerator", b.k1}, {"n_numerator", b.n1}, {"k_denominator", b.k0}, {"n_denominator", b.n0},
            {"selection_score", b.selection_score},
            {"chosen_on", chosen_on},
            {"counted_on", counted_on}};
}

nlohmann::json curve_json(const audit::AuditCurve& c) {
    nlohmann::json points = nlohmann::json::array();
    for (const audit::CurvePoint& p : c.points)
        points.push_back({{"delta", p.delta},
                          {"epsilon_lb", num(p.epsilon_lb)},
                          {"claimed_epsilon", num(p.claimed)},
                          {"exceeds", p.epsilon_lb > p.claimed},
                          {"event", p.event.describe()},
                          {"k_numerator", p.k1}, {"n_numerator", p.n1},
                          {"k_denominator", p.k0}, {"n_denominator", p.n0}});
    return {{"verdict", c.violation ? "VIOLATION" : "consistent"},
            {"claim", c.claim},
            {"confidence", 1.0 - c.alpha},
            {"alpha_per_point", c.alpha / static_cast<double>(std::max<std::size_t>(1, c.points.size()))},
            {"points", points}};
}

std::string curve_note(const audit::AuditCurve& c) {
    for (const audit::CurvePoint& p : c.points)
        if (p.epsilon_lb > p.claimed)
            return fmt::format("; the (eps, delta) curve exceeds the claim at delta = {:g}: eps_lb = {:g} > {:g}", p.delta,
                               p.epsilon_lb, p.claimed);
    return "";
}

nlohmann::json fdp_json(const audit::FdpTest& t) {
    if (!t.tested) return {{"verdict", "not tested"}, {"claim", t.claim}};
    nlohmann::json j = {
        {"verdict", t.violation ? "VIOLATION" : "consistent"},
        {"claim", t.claim},
        {"exact_noise_curve", t.exact_why.empty()},
        {"why_not_exact", t.exact_why.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.exact_why)},
        {"confidence", 1.0 - t.alpha},
        {"band", {{"base", t.band0}, {"neighbour", t.band1},
                  {"method", "Dvoretzky-Kiefer-Wolfowitz (Massart): sqrt(ln(4 / alpha) / (2 n)) per side, every "
                             "threshold at once, over the evaluation trials"}}},
        {"worst", {{"threshold", num(t.threshold)},
                   {"test", t.test},
                   {"type1", t.type1},
                   {"type2", t.type2},
                   {"claimed_type2", t.claimed_type2},
                   {"claimed_type2_at_type1", t.point_claimed_type2},
                   {"margin", num(t.margin)},
                   {"compared", "claimed_type2 = f(type1 + band of the rejected side) against type2 + band of the "
                                "other side; a positive margin is a violation"}}}};
    return j;
}

std::string fdp_note(const audit::FdpTest& t) {
    if (!t.violation) return "";
    return fmt::format("; f-DP test VIOLATION, the privacy region falls below the claimed trade-off curve: {} at x = {:g} has type-I {:g} "
                       "and type-II {:g}, where the claim allows no less than {:g} (margin {:g} beyond the {:g}% "
                       "band)",
                       t.test, t.threshold, t.type1, t.type2, t.point_claimed_type2, t.margin, 100 * (1 - t.alpha));
}

nlohmann::json audit_json(const AuditPlan& plan, const audit::AuditOutcome& a, const AuditSpec& spec,
                          const std::string& config_label, const std::string& started, double wall) {
    const config::Config& cfg = plan.config;
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
    j["event"] = event_json(b, "base", "neighbour", "trials [0, " + std::to_string(a.selection_trials) + ") of each side",
                            "trials [" + std::to_string(a.selection_trials) + ", " + std::to_string(a.trials) +
                                ") of each side");
    j["curve"] = curve_json(a.curve);
    j["fdp"] = fdp_json(a.fdp);
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
    const std::string charge = s.realized ? "l_t(i_t) (realized)" : "<l_t, x_t> (expected)";
    j["statistic"] = {{"observed", !s.diagnostic.empty() ? s.diagnostic + " after round max R"
                                   : s.fitted ? "sum over R of w_t " + charge + ", w fitted on the selection shares (Fisher)"
                                              : "sum over R of " + charge},
                      {"weights", s.fitted ? "fitted" : "sum"},
                      {"rounds", s.rounds.size() <= 64 ? nlohmann::json(s.rounds) : nlohmann::json(std::to_string(s.rounds.size()) + " rounds")},
                      {"rounds_run", a.rounds_run}};
    if (s.fitted)
        j["statistic"]["fitted_weights"] =
            a.weights.size() <= 64 ? nlohmann::json(a.weights) : nlohmann::json(std::to_string(a.weights.size()) + " weights");
    add_audit_context(j, plan, spec, config_label, a.backend, a.policy);
    j["timing"] = {{"started_at", started},
                   {"wall_seconds", wall},
                   {"simulate_seconds", a.simulate_seconds},
                   {"trials_per_second", a.simulate_seconds > 0 ? 2.0 * static_cast<double>(a.trials) / a.simulate_seconds : 0.0},
                   {"instance_rounds_per_second",
                    a.simulate_seconds > 0 ? 2.0 * static_cast<double>(a.trials) * static_cast<double>(a.rounds_run) / a.simulate_seconds : 0.0}};
    const BuildInfo& bi = build_info();
    j["dpregret"] = {{"version", bi.version}, {"git_commit", bi.git_commit}, {"rng", bi.rng}};
    return j;
}

void write_audit_files(const io::Dir& dir, const audit::AuditOutcome& a, const nlohmann::json& j,
                       const std::string& pair_toml) {
    // statistic.npy, privacy_region.csv, then audit.json last: its presence says the audit is complete.
    std::unique_ptr<io::AtomicFile> npy_file;
    if (!a.base.empty()) {
        npy_file = std::make_unique<io::AtomicFile>(dir, io::kAuditFiles[0]);
        io::NpyWriter w(npy_file->stream(), {2, a.trials});
        w.write(a.base.data(), a.base.size());
        w.write(a.neighbour.data(), a.neighbour.size());
        w.finish();
    }
    io::AtomicFile region_file(dir, io::kAuditFiles[1]);
    region_file.stream() << "threshold,base_ge,neighbour_ge,base_le,neighbour_le,"
                            "f_base_ge,f_neighbour_ge,f_base_le,f_neighbour_le\n";
    const auto f = [](double v) { return std::isnan(v) ? std::string() : io::format_double(v); };
    for (const auto& r : a.region)
        region_file.stream() << io::format_double(r.threshold) << "," << io::format_double(r.base_ge) << ","
                             << io::format_double(r.neighbour_ge) << "," << io::format_double(r.base_le) << ","
                             << io::format_double(r.neighbour_le) << "," << f(r.f_base_ge) << ","
                             << f(r.f_neighbour_ge) << "," << f(r.f_base_le) << "," << f(r.f_neighbour_le) << "\n";
    std::unique_ptr<io::AtomicFile> pair_file;
    if (!pair_toml.empty()) {
        pair_file = std::make_unique<io::AtomicFile>(dir, io::kAuditFiles[3]);
        pair_file->stream() << pair_toml;
    }
    io::AtomicFile json_file(dir, io::kAuditFiles[2]);
    json_file.stream() << j.dump(2) << "\n";
    try {
        if (npy_file) npy_file->commit();
        region_file.commit();
        if (pair_file) pair_file->commit();
        json_file.commit();
    } catch (...) { // all or nothing: a file renamed before the failure goes again
        if (npy_file) npy_file->remove_committed();
        region_file.remove_committed();
        if (pair_file) pair_file->remove_committed();
        throw;
    }
}

std::string verdict_line(const audit::AuditOutcome& a, const std::string& context, const std::string& tail) {
    const audit::AuditBound& b = a.bound;
    std::ostringstream line;
    line << audit::verdict(a) << ": ";
    if (b.kind == audit::BoundKind::Gdp)
        line << "mu_lb = " << b.mu_lb << " against claimed mu = " << a.learner.privacy.gdp_mu << " (Gaussian DP), i.e. ";
    line << "eps_lb = " << b.epsilon_lb << " at " << 100 * (1 - b.alpha)
         << "% confidence, claimed eps = " << a.learner.privacy.epsilon << ", delta = " << a.learner.privacy.delta
         << " (" << context << "event " << b.event.describe() << ": " << b.k1 << "/" << b.n1 << " vs " << b.k0 << "/"
         << b.n0 << tail << ")" << curve_note(a.curve) << fdp_note(a.fdp);
    return line.str();
}

std::string audit_verdict_line(const audit::AuditOutcome& a) {
    std::ostringstream tail;
    tail << "; " << a.trials << " trials per side in " << a.simulate_seconds << " s";
    return verdict_line(a,
                        a.learner.name + (a.settings.planted_name != "none" ? ", planted " + a.settings.planted_name : "") +
                            "; ",
                        tail.str());
}

} // namespace dpr::api
