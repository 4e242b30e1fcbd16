#include "host/results/outputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "host/io/atomic_file.hpp"
#include "host/io/csv.hpp"
#include "host/results/mechanism_json.hpp"
#include "host/version.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr {
namespace {

std::string num(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (std::isnan(v)) return "nan";
    return io::format_double(v);
}

/// CSV field: quoted when it holds a comma, quote or newline.
std::string field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

nlohmann::json json_number(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf"; // JSON has no infinity
    if (std::isnan(v)) return nullptr;
    return v;
}

template <class T>
void release(std::vector<T>& v) {
    std::vector<T>().swap(v);
}

// ---- finish_point ---------------------------------------------------------------------------------

/// "point 3 (learner.eta = inf) of [learner] algorithm = "hedge"": which point, in the user's words.
std::string point_name(const PointRecord& r) {
    std::string swept;
    for (const auto& kv : r.point->swept)
        if (!kv.second.empty()) swept += (swept.empty() ? "" : ", ") + kv.first + " = " + kv.second;
    return "point " + std::to_string(r.point->index) + (swept.empty() ? "" : " (" + swept + ")") +
           ", [learner] algorithm = \"" + r.learner.name + "\", [adversary] kind = \"" + r.adversary.name + "\"";
}

[[noreturn]] void non_finite(const PointRecord& r, const std::string& what) {
    throw NonFiniteResult(point_name(r) + ": " + what +
                          ". No results were written: an accepted configuration must not produce a NaN or "
                          "infinite statistic, so this is a defect of the learner or adversary at these "
                          "values; please report it with the configuration");
}

bool ok(double v) {
    return std::isfinite(v);
}

} // namespace

void check_shared_comparator(const PointRecord& r) {
    const PointResult& o = r.result;
    for (std::size_t c = 0; c < o.checkpoints.size(); ++c)
        if (!ok(o.comparator[c]))
            non_finite(r, "the comparator (the best fixed decision's loss) at checkpoint t = " +
                              std::to_string(o.checkpoints[c]) + " is " + num(o.comparator[c]));
}

void check_instance_block(const PointRecord& r, const InstanceBlock& b) {
    const PointResult& o = r.result;
    const std::size_t nck = o.checkpoints.size();
    const std::size_t nd = r.learner.diagnostic_names.size();
    for (std::uint64_t k = 0; k < b.count; ++k) {
        const auto who = [&] { return "instance " + std::to_string(b.first + k); };
        if (b.first_nonfinite_round && b.first_nonfinite_round[k] != 0)
            non_finite(r, who() + ": the loss charged in round " + std::to_string(b.first_nonfinite_round[k]) +
                              " is not finite (the first such round), so its regret is not either");
        for (std::size_t c = 0; c < nck; ++c) {
            const std::size_t i = static_cast<std::size_t>(k) * nck + c;
            const auto at = [&] { return " at checkpoint t = " + std::to_string(o.checkpoints[c]) + " is "; };
            if (b.comparator && !ok(b.comparator[i])) non_finite(r, who() + ": the comparator" + at() + num(b.comparator[i]));
            if (!ok(b.regret[i])) non_finite(r, who() + ": the regret" + at() + num(b.regret[i]));
            if (!ok(b.realized[i])) non_finite(r, who() + ": the realized regret" + at() + num(b.realized[i]));
        }
        for (std::size_t j = 0; j < nd; ++j) {
            const double v = b.diagnostics[static_cast<std::size_t>(k) * nd + j];
            if (!ok(v)) non_finite(r, who() + ": the diagnostic " + r.learner.diagnostic_names[j] + " is " + num(v));
        }
    }
}

namespace {

/// The first instance with a non-finite per-instance value, and what it is.
void check_instances(const PointRecord& r, std::uint64_t first = 0) {
    const PointResult& o = r.result;
    const bool per_instance_cmp = r.point->per_instance; // comparator: instances x checkpoints, else checkpoints
    if (!per_instance_cmp) check_shared_comparator(r);
    const bool bad_rounds = o.first_nonfinite_round.size() >= o.instances;
    check_instance_block(r, InstanceBlock{first, o.instances, o.regret.data(), o.realized_regret.data(),
                                          per_instance_cmp ? o.comparator.data() : nullptr, o.diagnostics.data(),
                                          bad_rounds ? o.first_nonfinite_round.data() : nullptr});
}

/// A statistic of the summary at checkpoint t that must be finite (those that may be NaN by
/// definition are skipped by the caller).
void check_stat(const PointRecord& r, std::uint64_t t, const char* name, double v) {
    if (!ok(v))
        non_finite(r, std::string("the ") + name + " over instances at checkpoint t = " + std::to_string(t) + " is " +
                          num(v) + " (the per-instance values are finite, but too large to summarise)");
}

} // namespace

void check_point_finite(const PointRecord& r, std::uint64_t first_instance) { check_instances(r, first_instance); }

void check_rows(const PointRecord& r) {
    for (const CheckpointRow& row : r.result.summary) {
        check_stat(r, row.t, "mean regret", row.regret.mean);
        if (row.regret.n >= 2) {
            check_stat(r, row.t, "standard deviation of the regret", row.regret.stddev);
            check_stat(r, row.t, "standard error of the mean regret", row.regret.standard_error);
            check_stat(r, row.t, "standard error of the mean realized regret", row.realized.standard_error());
        }
        for (const stats::QuantileEstimate& q : row.regret.quantiles) {
            check_stat(r, row.t, "regret quantile", q.value);
            if (q.lower_rank) check_stat(r, row.t, "lower confidence bound of a regret quantile", q.lower);
            if (q.upper_rank) check_stat(r, row.t, "upper confidence bound of a regret quantile", q.upper);
        }
        check_stat(r, row.t, "mean realized regret", row.realized.mean);
        check_stat(r, row.t, "mean comparator", row.comparator);
    }
}

void finish_point(PointRecord& r, bool keep_instances) {
    PointResult& o = r.result;
    check_instances(r);
    const std::size_t nck = o.checkpoints.size();
    const bool per_instance_cmp = r.point->per_instance;
    const std::size_t n = o.instances;
    std::vector<double> col(n), rcol(n);
    r.result.summary.assign(nck, CheckpointRow{});
    for (std::size_t c = 0; c < nck; ++c) {
        CheckpointRow& row = r.result.summary[c];
        row.t = o.checkpoints[c];
        double cmp = 0.0;
        for (std::size_t k = 0; k < n; ++k) {
            col[k] = o.regret[k * nck + c];
            rcol[k] = o.realized_regret[k * nck + c];
            if (per_instance_cmp) cmp += o.comparator[k * nck + c];
        }
        row.comparator = per_instance_cmp ? cmp / static_cast<double>(n) : o.comparator[c];
        row.regret = stats::summarize(col);
        row.realized = stats::ordered_moments(rcol.data(), rcol.size());
    }
    check_rows(r);
    r.final_regret.resize(n);
    r.final_realized.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
        r.final_regret[k] = o.regret[k * nck + nck - 1];
        r.final_realized[k] = o.realized_regret[k * nck + nck - 1];
    }
    if (keep_instances) return;
    release(o.regret);
    release(o.realized_regret);
    release(o.comparator);
    release(o.first_nonfinite_round);
}

std::string utf8_or_escaped(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    const auto* b = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    for (std::size_t i = 0; i < n;) {
        const unsigned char c = b[i];
        std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        bool valid = len > 0 && i + len <= n;
        for (std::size_t k = 1; valid && k < len; ++k) valid = (b[i + k] >> 6) == 0x2;
        if (valid && len > 1) { // no overlong forms, no surrogates, nothing above U+10FFFF
            std::uint32_t cp = c & (0x7F >> len);
            for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (b[i + k] & 0x3F);
            const std::uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
            valid = cp >= min_cp[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
        }
        if (valid) {
            out.append(s, i, len);
            i += len;
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned>(c));
            out += hex;
            ++i;
        }
    }
    return out;
}

void put_run_meta(nlohmann::json& j, const RunMeta& meta) {
    j["backend_requested"] = meta.backend_requested;
    j["device"] = meta.device;
    j["threads"] = meta.threads;
    j["started_at"] = meta.started_at;
    j["wall_seconds"] = meta.wall_seconds;
    j["memory_estimate_bytes"] = meta.memory_estimate_bytes;
}

namespace {

/// Mean, min and max over instances of every diagnostic of a point.
/// run.json's "privacy" of a point: the learner's report and, for a prefix-sum learner, its mechanism's parameters
/// (docs/OUTPUTS.md; mechanism_json.hpp).
nlohmann::json privacy_json(const learners::PrivacyReport& pr) {
    nlohmann::json j{{"epsilon", json_number(pr.epsilon)},
                     {"delta", json_number(pr.delta)},
                     {"accountant", pr.accountant},
                     {"calibration", pr.calibration},
                     {"mechanism", pr.mechanism},
                     {"noise_scale", json_number(pr.noise_scale)},
                     {"gdp_mu", pr.gdp_mu > 0 ? json_number(pr.gdp_mu) : nlohmann::json(nullptr)}};
    if (pr.sensitivity_squared > 0) j["sensitivity_squared"] = pr.sensitivity_squared;
    if (pr.blt.buffers > 0) {
        nlohmann::json b;
        put_blt_json(b, pr.blt);
        j["blt"] = b;
    }
    return j;
}

nlohmann::json diagnostics_json(const PointRecord& r) {
    nlohmann::json d = nlohmann::json::object();
    const std::size_t nd = r.learner.diagnostic_names.size();
    for (std::size_t j = 0; j < nd; ++j) {
        DiagnosticSummary s;
        if (r.diagnostic_summary.size() == nd) { // kept by the bounded-memory merge
            s = r.diagnostic_summary[j];
        } else {
            std::vector<double> v(r.result.instances);
            for (std::uint64_t k = 0; k < r.result.instances; ++k) v[k] = r.result.diagnostics[k * nd + j];
            const stats::Summary full = stats::summarize(v);
            s = {full.mean, full.min, full.max};
        }
        d[r.learner.diagnostic_names[j]] = {{"mean", json_number(s.mean)}, {"min", json_number(s.min)},
                                            {"max", json_number(s.max)}};
    }
    return d;
}

} // namespace

nlohmann::json point_json(const PointRecord& r) {
    using nlohmann::json;
    const config::Point& p = *r.point;
    const PointResult& o = r.result;
    const double ir = static_cast<double>(o.instances) * static_cast<double>(p.problem.T);
    json settings = json::object();
    for (const auto& kv : p.settings) settings[kv.first] = utf8_or_escaped(kv.second);
    json swept = json::object();
    for (const auto& kv : p.swept) swept[kv.first] = utf8_or_escaped(kv.second);
    json warnings = json::array();
    for (const std::string& w : p.warnings) warnings.push_back(utf8_or_escaped(w));
    const auto& pr = r.learner.privacy;
    return {
        {"point", p.index},
        {"algorithm", p.learner},
        {"adversary", p.adversary},
        {"d", p.problem.d},
        {"T", p.problem.T},
        {"seed", p.problem.seed},
        {"stream", p.stream},
        {"per_instance", p.per_instance},
        {"settings", settings},
        {"swept", swept},
        {"privacy", privacy_json(pr)},
        {"warnings", warnings},
        {"diagnostics", diagnostics_json(r)},
        {"checkpoints", o.checkpoints},
        {"backend", o.backend},
        {"launch_policy", o.launch_policy},
        {"wall_seconds", o.wall_seconds},
        {"instance_rounds_per_second", o.wall_seconds > 0 ? ir / o.wall_seconds : 0.0},
        {"expert_rounds_per_second", o.wall_seconds > 0 ? ir * p.problem.d / o.wall_seconds : 0.0},
    };
}

namespace {

/// JSON text that never throws on bad UTF-8 (strings are escaped by utf8_or_escaped first; anything
/// left is replaced by U+FFFD).
std::string dump(const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Polls `stop` every kPollRows rows of a file.
constexpr std::size_t kPollRows = 4096;

} // namespace

bool write_summary(std::ostream& os, const config::Config& cfg, const std::vector<PointRecord>& recs,
                   const std::function<bool()>& stop) {
    os << "point,algorithm,epsilon,delta,d,T,t,instances,mean,std,sem,q05,q25,q50,q75,q95,"
          "q50_ci_low,q50_ci_high,realized_mean,realized_sem,comparator_mean";
    for (const std::string& k : cfg.swept_keys) os << "," << field(k);
    os << "\n";
    std::size_t lines = 0;
    for (const PointRecord& r : recs) {
        for (const CheckpointRow& row : r.result.summary) {
            if (++lines % kPollRows == 0 && stop()) return false;
            const stats::Summary& s = row.regret;
            const auto& q = s.quantiles;
            os << r.point->index << "," << field(r.learner.name) << "," << num(r.learner.privacy.epsilon) << ","
               << num(r.learner.privacy.delta) << "," << r.point->problem.d << "," << r.point->problem.T << ","
               << row.t << "," << r.result.instances << "," << num(s.mean) << "," << num(s.stddev) << ","
               << num(s.standard_error) << "," << num(q[0].value) << "," << num(q[1].value) << ","
               << num(q[2].value) << "," << num(q[3].value) << "," << num(q[4].value) << "," << num(q[2].lower)
               << "," << num(q[2].upper) << "," << num(row.realized.mean) << ","
               << num(row.realized.standard_error()) << "," << num(row.comparator);
            for (const auto& kv : r.point->swept) os << "," << field(kv.second);
            os << "\n";
        }
    }
    return true;
}

bool write_final_regret(std::ostream& os, const std::vector<PointRecord>& recs, const std::function<bool()>& stop) {
    // Diagnostics columns: the union of the learners' names, in order of first appearance.
    std::vector<std::string> names;
    for (const PointRecord& r : recs)
        for (const std::string& n : r.learner.diagnostic_names)
            if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    os << "point,instance,regret,realized_regret";
    for (const std::string& n : names) os << "," << field(n);
    os << "\n";
    std::size_t lines = 0;
    for (const PointRecord& r : recs) {
        const std::size_t nd = r.learner.diagnostic_names.size();
        std::vector<std::ptrdiff_t> column(names.size(), -1); // diagnostic index of each column, or -1
        for (std::size_t c = 0; c < names.size(); ++c) {
            const auto it = std::find(r.learner.diagnostic_names.begin(), r.learner.diagnostic_names.end(), names[c]);
            if (it != r.learner.diagnostic_names.end()) column[c] = it - r.learner.diagnostic_names.begin();
        }
        const FinalRowFn row = [&](std::uint64_t k, double regret, double realized, const double* diag) {
            if (++lines % kPollRows == 0 && stop()) return false;
            os << r.point->index << "," << k << "," << num(regret) << "," << num(realized);
            for (const std::ptrdiff_t j : column) {
                os << ",";
                if (j >= 0) os << num(diag[j]);
            }
            os << "\n";
            return true;
        };
        if (r.stream_final) {
            if (!r.stream_final(row)) return false;
            continue;
        }
        for (std::uint64_t k = 0; k < r.result.instances; ++k)
            if (!row(k, r.final_regret[k], r.final_realized[k], r.result.diagnostics.data() + k * nd)) return false;
    }
    return true;
}

nlohmann::json run_json(const config::Config& cfg, const std::vector<PointRecord>& recs, const RunMeta& meta) {
    using nlohmann::json;
    const BuildInfo& b = build_info();
    json j;
    j["dpregret"] = {{"version", b.version}, {"git_commit", b.git_commit}, {"compiler", b.compiler},
                     {"cuda_compiled", b.cuda_compiled}, {"cuda_architectures", b.cuda_archs}};
    j["rng"] = b.rng;
    j["rng_stream_layout"] = rng::kStreamLayout;
    j["point_stream_keys"] = config::kPointStreamKeys;
    json overrides = json::array();
    for (const std::string& o : meta.overrides) overrides.push_back(utf8_or_escaped(o));
    j["config"] = {{"path", utf8_or_escaped(meta.config_path)},
                   {"overrides", overrides},
                   {"resolved_toml", utf8_or_escaped(cfg.resolved_toml)},
                   {"swept_keys", cfg.swept_keys}};
    j["run"] = {{"instances", cfg.run.instances}, {"checkpoints", cfg.run.checkpoints},
                {"common_random_numbers", cfg.run.common_random_numbers}, {"precision", cfg.run.precision},
                {"lanes", cfg.run.lanes}, {"isa", cfg.run.isa}, {"team_threads", cfg.run.team_threads},
                {"gpu_state", cfg.run.gpu_state}};
    j["backend"] = recs.empty() ? "cpu" : recs.front().result.backend;
    put_run_meta(j, meta);

    double sim_seconds = 0, instance_rounds = 0, expert_rounds = 0;
    for (const PointRecord& r : recs) {
        const double ir = static_cast<double>(r.result.instances) * static_cast<double>(r.point->problem.T);
        sim_seconds += r.result.wall_seconds;
        instance_rounds += ir;
        expert_rounds += ir * r.point->problem.d;
    }
    j["point_count"] = recs.size();
    if (recs.size() <= kInlinePoints) {
        json points = json::array();
        for (const PointRecord& r : recs) points.push_back(point_json(r));
        j["points"] = points;
    } else {
        j["points_file"] = "points.jsonl";
    }
    j["throughput"] = {{"simulation_seconds", sim_seconds},
                       {"instance_rounds", instance_rounds},
                       {"instance_rounds_per_second", sim_seconds > 0 ? instance_rounds / sim_seconds : 0.0},
                       {"expert_rounds_per_second", sim_seconds > 0 ? expert_rounds / sim_seconds : 0.0}};
    return j;
}

bool write_outputs(const io::Dir& dir, const config::Config& cfg, const std::vector<PointRecord>& recs,
                   const RunMeta& meta, const std::function<bool()>& stop_fn) {
    const std::function<bool()> stop = stop_fn ? stop_fn : [] { return false; };
    // Every file is written in full to its temporary name before any is renamed; the AtomicFile
    // destructors remove the temporary files on every early exit.
    std::vector<std::unique_ptr<io::AtomicFile>> files;
    auto open = [&](const char* name) -> std::ostream& {
        files.push_back(std::make_unique<io::AtomicFile>(dir, name));
        return files.back()->stream();
    };
    if (!write_summary(open("summary.csv"), cfg, recs, stop)) return false;
    files.back()->check();
    if (stop() || !write_final_regret(open("final_regret.csv"), recs, stop)) return false;
    files.back()->check();
    if (recs.size() > kInlinePoints) {
        std::ostream& os = open("points.jsonl");
        for (std::size_t i = 0; i < recs.size(); ++i) {
            if ((i + 1) % kPollRows == 0 && stop()) return false;
            os << dump(point_json(recs[i]), -1) << "\n";
        }
        files.back()->check();
    }
    if (stop()) return false;
    open("run.json") << dump(run_json(cfg, recs, meta), 2) << "\n";
    if (stop()) return false;

    // Rename run.json last. A failure or a signal between the renames removes what was renamed.
    std::size_t committed = 0;
    auto undo = [&] {
        for (std::size_t i = 0; i < committed; ++i) files[i]->remove_committed();
    };
    try {
        for (; committed + 1 < files.size(); ++committed) files[committed]->commit();
        if (stop()) {
            undo();
            return false;
        }
        files.back()->commit();
    } catch (...) {
        undo();
        throw;
    }
    return true;
}

} // namespace dpr
