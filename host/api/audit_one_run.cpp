#include "host/api/audit_one_run.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "host/api/errors.hpp"
#include "host/io/atomic_file.hpp"
#include "host/io/error.hpp"
#include "host/io/run_dir.hpp"
#include "host/version.hpp"

namespace dpr::api {

audit::OneRunOutcome execute_one_run(AuditPlan& plan, const AuditSpec& spec) {
    plan.job.cfg = &plan.config; // the plan may have moved since plan_audit
    plan.job.on_progress = spec.on_progress;
    plan.job.interrupted = spec.interrupted;
    try {
        return audit::run_one_run_audit(plan.job, spec.one_run_request);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    } catch (const std::bad_alloc&) {
        throw std::runtime_error("out of memory while running the one-run audit: it keeps every canary's score (13 "
                                 "bytes each: [run] instances x --canaries) and one batch of learner states and "
                                 "checkpoint sums ([audit] batch); no results were written. Reduce [run] instances, "
                                 "--canaries or [audit] batch, or free memory");
    }
}

nlohmann::json one_run_json(const AuditPlan& plan, const audit::OneRunOutcome& o, const AuditSpec& spec,
                            const std::string& config_label, const std::string& started, double wall) {
    const config::Config& cfg = plan.config;
    const audit::AuditSettings& s = o.settings;
    const config::Point& p = cfg.points[0];
    const audit::CanaryPlan& c = o.plan;
    nlohmann::json j;
    j["verdict"] = audit::verdict(o);
    j["mode"] = "one-run";
    j["claimed"] = {{"epsilon", number_json(o.learner.privacy.epsilon)}, {"delta", o.learner.privacy.delta},
                    {"accountant", o.learner.privacy.accountant}, {"mechanism", o.learner.privacy.mechanism}};
    j["bound"] = {{"kind", "one-run"},
                  {"compared", "epsilon_lb against claimed.epsilon, at claimed.delta"},
                  {"analysis", "Steinke, Nasr & Jagielski (NeurIPS 2023), Theorem 3: p(eps) = P[Bin(r, q) >= v] + 2 m "
                               "delta max_i P[v - i <= Bin(r, q) < v] / i, q = e^eps / (1 + e^eps); epsilon_lb the "
                               "largest eps with p(eps) < 1 - confidence"}};
    j["epsilon_lb"] = number_json(o.epsilon_lb);
    j["p_value_at_claim"] = o.p_value_at_claim;
    j["confidence"] = 1.0 - s.alpha;
    j["canaries"] = {{"per_trial", c.canaries},
                     {"rounds", {{"first", c.round(0)}, {"spacing", c.spacing}, {"last", c.round(c.canaries - 1)}}},
                     {"window", c.window},
                     {"rounds_run", c.rounds_run},
                     {"coin", "canary i of trial k keeps the base loss when the top bit of the first word of the "
                              "adversary stream (seed, stream, k; sub 7, round i + 1) is 0"},
                     {"rule", audit::neighbour_rule_name(s.neighbour.rule)},
                     {"l1_distance_max", o.l1},
                     {"l2_distance_max", o.l2},
                     {"adversary", o.adversary.name}};
    const std::string charge = s.realized ? "l_t(i_t) (realized)" : "<l_t, x_t> (expected)";
    j["statistic"] = {{"observed", c.fitted ? "per canary: w . (c_{t-w} .. c_{t-1}, c_{t+1} .. c_{t+w}), c the charge " +
                                                  charge + ", w Fisher's direction fitted on the selection share"
                                            : "per canary: the sum of " + charge + " over the w rounds after it minus "
                                                  "the w rounds before it"},
                      {"score", c.fitted ? "fitted" : "difference"},
                      {"weights", o.weights},
                      {"rounds_run", c.rounds_run}};
    j["guesses"] = {{"rule", o.rule.describe()},
                    {"top_guessed", o.rule.top_base ? "base" : "neighbour"},
                    {"top", o.rule.top},
                    {"bottom", o.rule.bottom},
                    {"chosen_on", "trials [0, " + std::to_string(o.selection_trials) + ") (their coins read)"},
                    {"selection", {{"canaries", o.selection_trials * c.canaries},
                                   {"guesses", o.selection_guesses},
                                   {"correct", o.selection_correct},
                                   {"epsilon_lb", o.selection_epsilon_lb},
                                   {"delta", "the claim's, times evaluation canaries / selection canaries (the same "
                                             "2 m delta)"}}},
                    {"counted_on", "trials [" + std::to_string(o.selection_trials) + ", " + std::to_string(o.trials) + ")"},
                    {"canaries", o.evaluation_canaries},
                    {"guessed", o.guesses},
                    {"correct", o.correct}};
    j["trials"] = o.trials;
    j["seeds"] = {{"seed", p.problem.seed}, {"stream", p.stream}, {"instances", {0, o.trials - 1}}};
    j["learner"] = {{"algorithm", o.learner.name}, {"planted", s.planted_name}};
    add_audit_context(j, plan, spec, config_label, o.backend, o.policy);
    const double ir = static_cast<double>(o.trials) * static_cast<double>(c.rounds_run);
    j["timing"] = {{"started_at", started},
                   {"wall_seconds", wall},
                   {"simulate_seconds", o.simulate_seconds},
                   {"instance_rounds_per_second", o.simulate_seconds > 0 ? ir / o.simulate_seconds : 0.0}};
    const BuildInfo& bi = build_info();
    j["dpregret"] = {{"version", bi.version}, {"git_commit", bi.git_commit}, {"rng", bi.rng}};
    return j;
}

void write_one_run_files(const io::Dir& dir, const nlohmann::json& j) {
    io::AtomicFile json_file(dir, io::kAuditFiles[2]);
    json_file.stream() << j.dump(2) << "\n";
    json_file.commit();
}

std::string one_run_verdict_line(const audit::OneRunOutcome& o) {
    std::ostringstream line;
    line << audit::verdict(o) << ": eps_lb = " << o.epsilon_lb << " at " << 100 * (1 - o.settings.alpha)
         << "% confidence, claimed eps = " << o.learner.privacy.epsilon << ", delta = " << o.learner.privacy.delta
         << " (" << o.learner.name << (o.settings.planted_name != "none" ? ", planted " + o.settings.planted_name : "")
         << "; one run, " << o.plan.canaries << " canaries per trial: " << o.correct << " of " << o.guesses
         << " guesses right among " << o.evaluation_canaries << " canaries; " << o.trials << " trials in "
         << o.simulate_seconds << " s)";
    return line.str();
}

} // namespace dpr::api
