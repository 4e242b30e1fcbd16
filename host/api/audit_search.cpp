#include "host/api/audit_search.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "host/api/errors.hpp"
#include "host/audit/neighbour.hpp"

namespace dpr::api {
namespace {

namespace fs = std::filesystem;

struct Rule {
    std::string name;          ///< [audit] neighbour
    std::int64_t coordinate;   ///< flip only; -1 = every coordinate
};

std::string rounds_text(const std::vector<std::uint64_t>& r, bool automatic) {
    if (automatic) return "auto";
    std::string s = "[";
    for (std::size_t i = 0; i < r.size(); ++i) s += (i ? ", " : "") + std::to_string(r[i]);
    return s + "]";
}

std::string describe(std::uint64_t t0, const Rule& rule, const std::string& rounds, const std::string& statistic) {
    std::string r = rule.name;
    if (rule.name == "flip") r += rule.coordinate < 0 ? " every coordinate" : " coordinate " + std::to_string(rule.coordinate);
    return "t0 = " + std::to_string(t0) + ", " + r + ", R = " + rounds + ", " + statistic;
}

const char* statistic_name(const audit::AuditSettings& s) {
    if (!s.diagnostic.empty()) return s.diagnostic == "switches" ? "switches" : "last_switch_round";
    return s.realized ? "realized" : "expected";
}

/// "expected", "expected, fitted weights", ...: a statistic and its weights as describe() shows them.
std::string statistic_text(const std::string& stat, bool fitted) { return fitted ? stat + ", fitted weights" : stat; }

/// The file's R is "auto" when it is not given (read_audit_settings leaves it empty) or is every round but t0.
bool rounds_are_auto(const audit::AuditSettings& s, std::uint64_t T) {
    return s.rounds.empty() || s.rounds.size() + 1 == T;
}

double score_of(const audit::AuditOutcome& a) {
    const learners::PrivacyReport& claim = a.learner.privacy;
    if (a.bound.kind == audit::BoundKind::Gdp) return claim.gdp_mu > 0 ? a.bound.mu_lb / claim.gdp_mu : a.bound.mu_lb;
    if (!(std::isfinite(claim.epsilon) && claim.epsilon > 0)) return a.bound.epsilon_lb;
    return a.bound.epsilon_lb / claim.epsilon;
}

} // namespace

std::uint64_t pilot_seed(std::uint64_t seed) { return (seed + 2654435769ull) % 4294967296ull; }

std::uint64_t default_pilot(std::uint64_t instances) {
    return std::min<std::uint64_t>(instances, std::max<std::uint64_t>(20000, instances / 50));
}

std::vector<PairCandidate> pair_family(const AuditPlan& plan) {
    const audit::AuditSettings file = audit::read_audit_settings(plan.config, plan.job.adversary, plan.job.learner);
    const std::uint64_t T = plan.config.points.at(0).problem.T;
    const bool simplex = plan.job.adversary.geometry == Geometry::Simplex && plan.job.adversary.loss == LossFamily::Linear;
    const std::uint64_t file_t0 = file.neighbour.round;
    const Rule file_rule{audit::neighbour_rule_name(file.neighbour.rule), file.neighbour.coordinate};
    const std::string file_stat = statistic_name(file);
    const std::string file_stat_text = statistic_text(file_stat, file.fitted);
    std::vector<PairCandidate> out;
    PairCandidate own;
    own.describe = describe(file_t0, file_rule, rounds_text(file.rounds, rounds_are_auto(file, T)), file_stat_text) +
                   " (the file's pair)";
    out.push_back(own);
    if (T < 2) return out; // one round: nothing after t0 to observe but the file's own statistic

    std::vector<std::uint64_t> t0s;
    std::vector<Rule> rules;
    if (file.neighbour.rule == audit::NeighbourRule::File) {
        t0s = {file_t0}; // the file fixes the round and the replacement
        rules = {file_rule};
    } else {
        for (std::uint64_t t : {file_t0, std::uint64_t{1}, (T + 1) / 2})
            if (t >= 1 && t < T && std::find(t0s.begin(), t0s.end(), t) == t0s.end()) t0s.push_back(t);
        if (simplex)
            rules = {{"flip", -1}, {"flip", 0}, {"zero", -1}};
        else
            rules = {{"negate", -1}, {"zero", -1}};
        const LossFamily fam = plan.job.adversary.loss;
        if (fam == LossFamily::Squared || fam == LossFamily::Absolute)
            rules.push_back({"negate-b", -1}); // (a, b) families: flips the residual's sign, which negate cannot
        const bool listed = std::any_of(rules.begin(), rules.end(), [&](const Rule& r) {
            return r.name == file_rule.name && (r.name != "flip" || r.coordinate == file_rule.coordinate);
        });
        if (!listed) rules.insert(rules.begin(), file_rule);
    }
    std::vector<std::string> stats = {"expected", "realized"};
    for (const char* d : {"switches", "last_switch_round"})
        if (std::find(plan.job.learner.diagnostic_names.begin(), plan.job.learner.diagnostic_names.end(), d) !=
            plan.job.learner.diagnostic_names.end())
            stats.push_back(d);
    if (std::find(stats.begin(), stats.end(), file_stat) == stats.end()) stats.push_back(file_stat);

    for (std::uint64_t t0 : t0s)
        for (const Rule& rule : rules) {
            // R: every round but t0, the next round, the last; a list equal to "every round but t0" (t0 + 1 = T = 2,
            // or t0 = 1 with T = 2) is not tried twice.
            std::vector<std::string> rounds = {"auto"};
            if (T > 2) rounds.push_back("[" + std::to_string(t0 + 1) + "]");
            if (T > t0 + 1) rounds.push_back("[" + std::to_string(T) + "]");
            for (const std::string& R : rounds)
                for (const std::string& stat : stats)
                    for (const bool fitted : {false, true}) {
                        // Fitted weights: the charged-loss statistics over several rounds (R = auto, T > 2).
                        if (fitted && (stat != "expected" && stat != "realized")) continue;
                        if (fitted && (R != "auto" || T < 3 || T - 1 > 512)) continue;
                        PairCandidate c;
                        c.describe = describe(t0, rule, R, statistic_text(stat, fitted));
                        if (c.describe + " (the file's pair)" == own.describe) continue;
                        if (file.neighbour.rule != audit::NeighbourRule::File) {
                            c.sets.push_back("audit.round=" + std::to_string(t0));
                            c.sets.push_back("audit.neighbour=\"" + rule.name + "\"");
                            if (rule.name == "flip") c.sets.push_back("audit.coordinate=" + std::to_string(rule.coordinate));
                        }
                        c.sets.push_back(R == "auto" ? "audit.rounds=\"auto\"" : "audit.rounds=" + R);
                        c.sets.push_back("audit.statistic=\"" + stat + "\"");
                        c.sets.push_back(std::string("audit.weights=\"") + (fitted ? "fitted" : "sum") + "\"");
                        out.push_back(std::move(c));
                    }
        }
    return out;
}

PairSearch search_pair(const AuditSpec& spec, const AuditPlan& plan, std::uint64_t pilot_trials,
                       const std::function<void(std::size_t, std::size_t)>& on_candidate) {
    PairSearch s;
    s.pilot_trials = pilot_trials;
    s.pilot_seed = pilot_seed(plan.config.points.at(0).problem.seed);
    s.candidates = pair_family(plan);
    const std::vector<std::string> pilot_sets = {"run.instances=" + std::to_string(pilot_trials),
                                                 "run.seed=" + std::to_string(s.pilot_seed)};
    double best = -1.0;
    for (std::size_t i = 0; i < s.candidates.size(); ++i) {
        if (spec.interrupted && spec.interrupted()) return PairSearch{};
        if (on_candidate) on_candidate(i, s.candidates.size());
        PairCandidate& c = s.candidates[i];
        AuditSpec ps = spec;
        ps.overrides.insert(ps.overrides.end(), c.sets.begin(), c.sets.end());
        ps.overrides.insert(ps.overrides.end(), pilot_sets.begin(), pilot_sets.end());
        ps.keep_statistic = false;
        ps.on_progress = {};
        audit::AuditOutcome a;
        try {
            AuditPlan pp = plan_audit(ps);
            a = execute_audit(pp, ps);
        } catch (const UsageError& e) {
            if (i == 0) // the file's own pair at the pilot's size: the pilot itself is wrong
                throw UsageError(std::string("--pilot ") + std::to_string(pilot_trials) + ": " + e.what());
            c.refused = e.what();
            continue;
        }
        if (!a.completed) return PairSearch{};
        c.epsilon_lb = a.bound.epsilon_lb;
        c.mu_lb = a.bound.mu_lb;
        c.score = score_of(a);
        if (c.score > best) {
            best = c.score;
            s.chosen = i;
        }
    }
    return s;
}

nlohmann::json search_json(const PairSearch& s) {
    nlohmann::json cands = nlohmann::json::array();
    for (const PairCandidate& c : s.candidates) {
        nlohmann::json j = {{"pair", c.describe}, {"sets", c.sets}};
        if (c.refused.empty()) {
            j["score"] = c.score;
            j["epsilon_lb"] = number_json(c.epsilon_lb);
            j["mu_lb"] = c.mu_lb;
        } else {
            j["refused"] = c.refused;
        }
        cands.push_back(std::move(j));
    }
    return {{"pilot_trials_per_side", s.pilot_trials},
            {"pilot_seed", s.pilot_seed},
            {"score", "the pilot's lower bound / the claim (eps_lb / eps, or mu_lb / mu)"},
            {"chosen", s.chosen},
            {"chosen_pair", s.candidates.empty() ? "" : s.candidates[s.chosen].describe},
            {"chosen_sets", s.candidates.empty() ? std::vector<std::string>{} : s.chosen_sets()},
            {"validity", "chosen on the pilot's own trials (run.seed = pilot_seed): the audit's bound holds at its "
                         "confidence without correction"},
            {"candidates", cands}};
}

std::string pair_toml(const AuditPlan& plan, const std::string& config_path) {
    toml::table t;
    try {
        t = toml::parse(plan.config.resolved_toml);
    } catch (const toml::parse_error& e) {
        throw std::logic_error(std::string("pair_toml: the resolved TOML does not parse: ") + e.what());
    }
    const fs::path base = fs::path(config_path).parent_path();
    const auto absolute = [&](const char* section, const char* key) {
        toml::table* sec = t[section].as_table();
        if (!sec) return;
        toml::value<std::string>* v = (*sec)[key].as_string();
        if (!v || v->get() == "none" || v->get().empty() || fs::path(v->get()).is_absolute()) return;
        v->get() = fs::absolute(base / v->get()).lexically_normal().string();
    };
    absolute("adversary", "path");
    absolute("audit", "neighbour_path");
    // The seed too, default or not: the file repeats this audit whatever a later version's default is.
    if (toml::table* run = t["run"].as_table(); run && !run->contains("seed"))
        run->insert("seed", static_cast<std::int64_t>(plan.config.points.at(0).problem.seed));
    std::ostringstream os;
    os << "# The pair `dpregret audit " << config_path << " --search` chose (audit.json \"search\"), with the file's\n"
       << "# other settings as resolved and its loss-file paths made absolute: `dpregret audit pair.toml` repeats\n"
       << "# the audit bit for bit.\n"
       << t << "\n";
    return os.str();
}

} // namespace dpr::api
