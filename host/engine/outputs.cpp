#include "host/engine/outputs.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "host/io/atomic_file.hpp"
#include "host/io/csv.hpp"
#include "host/stats/summary.hpp"
#include "host/version.hpp"
#include "kernels/rng/philox.hpp"
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

/// Mean, min and max over instances of every diagnostic of a point.
nlohmann::json diagnostics_json(const PointRecord& r) {
    nlohmann::json d = nlohmann::json::object();
    const std::size_t nd = r.learner.diagnostic_names.size();
    for (std::size_t j = 0; j < nd; ++j) {
        std::vector<double> v(r.outcome.instances);
        for (std::uint32_t k = 0; k < r.outcome.instances; ++k) v[k] = r.outcome.diagnostics[k * nd + j];
        const stats::Summary s = stats::summarize(v);
        d[r.learner.diagnostic_names[j]] = {{"mean", json_number(s.mean)}, {"min", json_number(s.min)},
                                            {"max", json_number(s.max)}};
    }
    return d;
}

} // namespace

void write_summary_csv(const std::string& path, const config::Config& cfg, const std::vector<PointRecord>& recs) {
    io::AtomicFile f(path);
    std::ostream& os = f.stream();
    os << "point,algorithm,epsilon,delta,d,T,t,instances,mean,std,sem,q05,q25,q50,q75,q95,"
          "q50_ci_low,q50_ci_high,realized_mean,realized_sem,comparator_mean";
    for (const std::string& k : cfg.swept_keys) os << "," << field(k);
    os << "\n";
    std::vector<double> col, rcol;
    for (const PointRecord& r : recs) {
        const PointOutcome& o = r.outcome;
        const std::size_t nck = o.checkpoints.size();
        const bool per_instance_cmp = o.comparator.size() != nck;
        for (std::size_t c = 0; c < nck; ++c) {
            col.resize(o.instances);
            rcol.resize(o.instances);
            double cmp = 0.0;
            for (std::uint32_t k = 0; k < o.instances; ++k) {
                col[k] = o.regret[static_cast<std::size_t>(k) * nck + c];
                rcol[k] = o.realized_regret[static_cast<std::size_t>(k) * nck + c];
                cmp += per_instance_cmp ? o.comparator[static_cast<std::size_t>(k) * nck + c] : 0.0;
            }
            cmp = per_instance_cmp ? cmp / o.instances : o.comparator[c];
            const stats::Summary s = stats::summarize(col);
            const stats::Moments rm = stats::ordered_moments(rcol.data(), rcol.size());
            const auto& q = s.quantiles;
            os << r.point->index << "," << field(r.learner.name) << "," << num(r.learner.privacy.epsilon) << ","
               << num(r.learner.privacy.delta) << "," << r.point->problem.d << "," << r.point->problem.T << ","
               << o.checkpoints[c] << "," << o.instances << "," << num(s.mean) << "," << num(s.stddev) << ","
               << num(s.standard_error) << "," << num(q[0].value) << "," << num(q[1].value) << "," << num(q[2].value)
               << "," << num(q[3].value) << "," << num(q[4].value) << "," << num(q[2].lower) << ","
               << num(q[2].upper) << "," << num(rm.mean) << "," << num(rm.standard_error()) << "," << num(cmp);
            for (const auto& kv : r.point->swept) os << "," << field(kv.second);
            os << "\n";
        }
    }
    f.commit();
}

void write_final_regret_csv(const std::string& path, const std::vector<PointRecord>& recs) {
    io::AtomicFile f(path);
    std::ostream& os = f.stream();
    // Diagnostics columns: the union of the learners' names, in order of first appearance.
    std::vector<std::string> names;
    for (const PointRecord& r : recs)
        for (const std::string& n : r.learner.diagnostic_names)
            if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    os << "point,instance,regret,realized_regret";
    for (const std::string& n : names) os << "," << field(n);
    os << "\n";
    for (const PointRecord& r : recs) {
        const PointOutcome& o = r.outcome;
        const std::size_t nck = o.checkpoints.size();
        const std::size_t nd = r.learner.diagnostic_names.size();
        for (std::uint32_t k = 0; k < o.instances; ++k) {
            const std::size_t idx = static_cast<std::size_t>(k) * nck + (nck - 1);
            os << r.point->index << "," << k << "," << num(o.regret[idx]) << "," << num(o.realized_regret[idx]);
            for (const std::string& n : names) {
                const auto it = std::find(r.learner.diagnostic_names.begin(), r.learner.diagnostic_names.end(), n);
                os << ",";
                if (it != r.learner.diagnostic_names.end())
                    os << num(o.diagnostics[k * nd + static_cast<std::size_t>(it - r.learner.diagnostic_names.begin())]);
            }
            os << "\n";
        }
    }
    f.commit();
}

void write_run_json(const std::string& path, const config::Config& cfg, const std::vector<PointRecord>& recs,
                    const RunMeta& meta) {
    using nlohmann::json;
    const BuildInfo& b = build_info();
    json j;
    j["dpregret"] = {{"version", b.version}, {"git_commit", b.git_commit}, {"compiler", b.compiler},
                     {"cuda_compiled", b.cuda_compiled}, {"cuda_architectures", b.cuda_archs}};
    j["rng"] = b.rng;
    j["rng_stream_layout"] = rng::kStreamLayout;
    j["config"] = {{"path", meta.config_path}, {"overrides", meta.overrides}, {"resolved_toml", cfg.resolved_toml},
                   {"swept_keys", cfg.swept_keys}};
    j["run"] = {{"instances", cfg.run.instances}, {"checkpoints", cfg.run.checkpoints},
                {"common_random_numbers", cfg.run.common_random_numbers}, {"precision", cfg.run.precision},
                {"lanes", cfg.run.lanes}, {"isa", cfg.run.isa}, {"team_threads", cfg.run.team_threads}};
    j["backend"] = recs.empty() ? "cpu" : recs.front().outcome.backend;
    j["backend_requested"] = meta.backend_requested;
    j["device"] = meta.device;
    j["threads"] = meta.threads;
    j["started_at"] = meta.started_at;
    j["wall_seconds"] = meta.wall_seconds;

    double sim_seconds = 0, instance_rounds = 0, expert_rounds = 0;
    json points = json::array();
    for (const PointRecord& r : recs) {
        const config::Point& p = *r.point;
        const PointOutcome& o = r.outcome;
        sim_seconds += o.wall_seconds;
        const double ir = static_cast<double>(o.instances) * static_cast<double>(p.problem.T);
        instance_rounds += ir;
        expert_rounds += ir * p.problem.d;
        json settings = json::object();
        for (const auto& kv : p.settings) settings[kv.first] = kv.second;
        json swept = json::object();
        for (const auto& kv : p.swept) swept[kv.first] = kv.second;
        const auto& pr = r.learner.privacy;
        points.push_back({
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
            {"privacy",
             {{"epsilon", json_number(pr.epsilon)},
              {"delta", json_number(pr.delta)},
              {"accountant", pr.accountant},
              {"calibration", pr.calibration},
              {"mechanism", pr.mechanism},
              {"noise_scale", json_number(pr.noise_scale)}}},
            {"warnings", p.warnings},
            {"diagnostics", diagnostics_json(r)},
            {"checkpoints", o.checkpoints},
            {"backend", o.backend},
            {"launch_policy", o.policy},
            {"wall_seconds", o.wall_seconds},
            {"instance_rounds_per_second", o.wall_seconds > 0 ? ir / o.wall_seconds : 0.0},
            {"expert_rounds_per_second", o.wall_seconds > 0 ? ir * p.problem.d / o.wall_seconds : 0.0},
        });
    }
    j["points"] = points;
    j["throughput"] = {{"simulation_seconds", sim_seconds},
                       {"instance_rounds", instance_rounds},
                       {"instance_rounds_per_second", sim_seconds > 0 ? instance_rounds / sim_seconds : 0.0},
                       {"expert_rounds_per_second", sim_seconds > 0 ? expert_rounds / sim_seconds : 0.0}};
    io::AtomicFile f(path);
    f.stream() << std::setw(2) << j << "\n";
    f.commit();
}

} // namespace dpr
