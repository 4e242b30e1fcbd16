#include "host/audit/learner_audit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "host/engine/loss_file.hpp"
#include "kernels/adversaries/common.hpp"

namespace dpr::audit {
namespace {

enum AuditKey { kRound = 0, kNeighbour, kCoordinate, kNeighbourPath, kRounds, kStatistic, kAlpha, kCandidates,
                kPlanted, kBatch, kAuditKeys };

std::string fmt_round_list(const std::vector<std::uint64_t>& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(r[i]);
    return "[" + s + (r.size() > 8 ? ", ...]" : "]");
}

} // namespace

const std::vector<KeySpec>& audit_keys() {
    static const std::vector<KeySpec> keys = {
        {"round", KeyType::Int, "1", 1.0, 4294967295.0, nullptr,
         "t0: the round in which the neighbouring sequences differ (replace-one, ALGORITHMS.md §0.4); with "
         "neighbour = \"file\" it is found in the file"},
        {"neighbour", KeyType::Choice, "auto", 0, 4, "auto|flip|negate|zero|file",
         "how l'_{t0} is made from l_{t0}: flip (losses in [0,1]^d: 1 - l), negate (symmetric loss sets and (a, b) "
         "families: -l), zero, or file (neighbour_path); auto = flip on the simplex, negate elsewhere"},
        {"coordinate", KeyType::Int, "-1", -1.0, 2147483647.0, nullptr,
         "flip: the coordinate flipped; -1 = every coordinate (L1 distance d, the experts calibrations' Delta_1)"},
        {"neighbour_path", KeyType::Path, "none", 0.0, 0.0, nullptr,
         "neighbour = \"file\": a T x d loss file (CSV or .npy, as [adversary] path) equal to the base sequence "
         "except in one round"},
        {"rounds", KeyType::RealList, "auto", 1.0, 4294967295.0, nullptr,
         "R: the rounds whose charged losses are summed into the statistic (t0 excluded: its loss differs between "
         "the sides); auto = every round but t0"},
        {"statistic", KeyType::Choice, "expected", 0, 3, "expected|realized|switches|last_switch_round",
         "what is observed: the sum over R of <l_t, x_t> (a function of the play x_t) or of l_t(i_t) (of the sampled "
         "action: for learners whose privacy covers only their actions); or, for the sparse-vector phase learners, "
         "the number of switches or the last switch round after round max R (functions of the switch times)"},
        {"alpha", KeyType::Real, "0.05", 0.0, 1.0, nullptr,
         "the bound holds with confidence 1 - alpha (Clopper-Pearson, alpha/2 per side)", true, true},
        {"candidates", KeyType::Int, "64", 2.0, 4096.0, nullptr,
         "thresholds tried on the selection half (quantiles of its pooled statistic), each in both directions "
         "and both orientations"},
        {"planted", KeyType::Choice, "none", 0, 5, learners::kPlantedNames,
         "a planted privacy bug (docs/AUDITS.md; needs --allow-planted): the learner keeps claiming the correct "
         "(eps, delta)"},
        {"batch", KeyType::Int, "65536", 1.0, 2147483647.0, nullptr,
         "instances per executor call (bounds memory; results do not depend on it)"},
    };
    return keys;
}

config::SectionSchema audit_section() { return config::SectionSchema{"audit", audit_keys()}; }

AuditSettings read_audit_settings(const config::Config& cfg, const AdversaryRuntime& base) {
    const config::Point& p = cfg.points.at(0);
    const config::SectionValues* sec = nullptr;
    for (const auto& x : cfg.extra)
        if (x.name == "audit") sec = &x;
    if (!sec) throw std::logic_error("read_audit_settings: the config was loaded without the [audit] section");
    const KeyValues& kv = sec->values;
    const std::uint64_t T = p.problem.T;
    AuditSettings s;
    s.round_given = kv.given[kRound];
    s.neighbour.round = static_cast<std::uint64_t>(kv.get(kRound, 1.0));
    const int rule = static_cast<int>(kv.get(kNeighbour, 0.0));
    const bool simplex = base.geometry == Geometry::Simplex && base.loss == LossFamily::Linear;
    s.neighbour.rule = rule == 1   ? NeighbourRule::Flip
                       : rule == 2 ? NeighbourRule::Negate
                       : rule == 3 ? NeighbourRule::Zero
                       : rule == 4 ? NeighbourRule::File
                                   : (simplex ? NeighbourRule::Flip : NeighbourRule::Negate);
    s.neighbour.coordinate = static_cast<std::int64_t>(kv.get(kCoordinate, -1.0));
    if (kv.given[kCoordinate] && s.neighbour.rule != NeighbourRule::Flip)
        throw std::invalid_argument("[audit] coordinate: only neighbour = \"flip\" uses it");
    if (s.neighbour.rule == NeighbourRule::File) {
        if (!kv.given[kNeighbourPath])
            throw std::invalid_argument("[audit] neighbour = \"file\" needs [audit] neighbour_path (a T x d loss file)");
        s.neighbour_path = kv.str[kNeighbourPath];
    } else if (kv.given[kNeighbourPath]) {
        throw std::invalid_argument("[audit] neighbour_path: only neighbour = \"file\" reads it");
    }
    if (s.neighbour.round > T)
        throw std::invalid_argument("[audit] round = " + std::to_string(s.neighbour.round) + ": must be in [1, " +
                                    std::to_string(T) + "] ([run] rounds)");
    const int stat = static_cast<int>(kv.get(kStatistic, 0.0));
    s.realized = stat == 1;
    if (stat == 2) s.diagnostic = "switches";
    if (stat == 3) s.diagnostic = "last_switch_round";
    s.alpha = kv.get(kAlpha, 0.05);
    s.candidates = static_cast<int>(kv.get(kCandidates, 64.0));
    const int planted = static_cast<int>(kv.get(kPlanted, 0.0));
    s.planted = static_cast<learners::Planted>(planted);
    {
        std::string names = learners::kPlantedNames;
        for (int i = 0; i < planted; ++i) names = names.substr(names.find('|') + 1);
        s.planted_name = names.substr(0, names.find('|'));
    }
    s.batch = static_cast<std::uint64_t>(kv.get(kBatch, 65536.0));
    if (kv.given[kRounds]) {
        for (std::uint64_t i = 0; i < kv.list_size[kRounds]; ++i) {
            const double r = kv.list[kRounds][i];
            if (r != std::floor(r) || r < 1 || r > static_cast<double>(T))
                throw std::invalid_argument("[audit] rounds: " + std::to_string(r) + " must be a whole round in [1, " +
                                            std::to_string(T) + "] ([run] rounds)");
            s.rounds.push_back(static_cast<std::uint64_t>(r));
        }
        std::sort(s.rounds.begin(), s.rounds.end());
        s.rounds.erase(std::unique(s.rounds.begin(), s.rounds.end()), s.rounds.end());
        if (s.rounds.empty()) throw std::invalid_argument("[audit] rounds: give at least one round");
    }
    return s;
}

AuditOutcome run_learner_audit(const AuditJob& job) {
    const config::Config& cfg = *job.cfg;
    if (cfg.points.size() != 1)
        throw std::invalid_argument("an audit runs one learner on one neighbouring pair, but the config is a sweep of " +
                                    std::to_string(cfg.points.size()) + " points (" +
                                    (cfg.swept_keys.empty() ? std::string("?") : cfg.swept_keys[0]) +
                                    " is a list); give one value per key");
    const config::Point& p = cfg.points[0];
    if (p.per_instance)
        throw std::invalid_argument("[adversary] per_instance = true: an audit compares two fixed neighbouring "
                                    "sequences; use one shared sequence (per_instance = false)");
    AuditOutcome o;
    o.learner = job.learner;
    o.adversary = job.adversary;
    o.settings = read_audit_settings(cfg, job.adversary);
    AuditSettings& s = o.settings;
    const std::uint64_t T = p.problem.T;
    const std::uint32_t d = p.problem.d;
    const adversaries::SequenceCtx shared_ctx{p.problem.seed, p.stream, adversaries::kSharedSequence};

    if (s.neighbour.rule == NeighbourRule::File) {
        s.neighbour.file_rows = load_loss_file(s.neighbour_path, T, d, job.adversary.geometry);
        const std::uint64_t t0 = differing_round(job.adversary, shared_ctx, *s.neighbour.file_rows, T);
        if (s.round_given && t0 != s.neighbour.round)
            throw std::invalid_argument("[audit] round = " + std::to_string(s.neighbour.round) +
                                        ", but the neighbour file differs from the base sequence in round " +
                                        std::to_string(t0));
        s.neighbour.round = t0;
    }
    const std::uint64_t t0 = s.neighbour.round;
    if (s.rounds.empty()) {
        for (std::uint64_t t = 1; t <= T; ++t)
            if (t != t0) s.rounds.push_back(t);
        if (s.rounds.empty())
            throw std::invalid_argument("[run] rounds = 1: no round but t0 = 1 to observe; an audit needs T >= 2");
    }
    if (std::binary_search(s.rounds.begin(), s.rounds.end(), t0))
        throw std::invalid_argument("[audit] rounds " + fmt_round_list(s.rounds) + " contains t0 = " +
                                    std::to_string(t0) +
                                    ": its loss differs between the sides, so its charge is no common function of the "
                                    "outputs; leave it out");
    std::size_t diag_index = 0;
    if (!s.diagnostic.empty()) {
        const auto& names = job.learner.diagnostic_names;
        const auto it = std::find(names.begin(), names.end(), s.diagnostic);
        if (it == names.end())
            throw std::invalid_argument("[audit] statistic = \"" + s.diagnostic + "\": learner \"" + job.learner.name +
                                        "\" does not record it (the sparse-vector phase learners svt-experts, "
                                        "adaptive-svt-experts and potential-svt-experts record switches; svt-experts "
                                        "also last_switch_round)");
        diag_index = static_cast<std::size_t>(it - names.begin());
    }
    const NeighbourAdversary neighbour(job.adversary, d, s.neighbour);
    neighbour.distance(shared_ctx, &o.l1, &o.l2);

    if (s.planted != learners::Planted::None) {
        if (!job.allow_planted)
            throw std::invalid_argument("[audit] planted = \"" + s.planted_name +
                                        "\": planted bugs make a learner claim a privacy it does not have; they run only "
                                        "with --allow-planted");
        if (!plant_learner(o.learner, s.planted))
            throw std::invalid_argument("[audit] planted = \"" + s.planted_name + "\": learner \"" + o.learner.name +
                                        "\" has no such variant (docs/AUDITS.md lists them: dp-ftrl-experts: half-noise, "
                                        "leaf-without-noise, reused-noise; svt-experts: no-threshold-noise, "
                                        "twice-temperature)");
    }

    const std::uint64_t M = cfg.run.instances;
    if (M < 2) throw std::invalid_argument("[run] instances = 1: an audit needs at least 2 trials per side (half select, half evaluate)");
    if (M > (std::uint64_t{adversaries::kSharedSequence} - 1) / 2)
        throw std::invalid_argument("[run] instances = " + std::to_string(M) +
                                    ": an audit uses 2 x instances ids (both sides), at most 2147483647 per side");

    // R as maximal runs [a, b] of consecutive rounds: S = sum over runs of C(b) - C(a - 1), C(0) = 0 the empty
    // sum, so checkpoints are needed only at the ends of the runs (two or three for the default R), not at every
    // round of R. A diagnostic is read after round max R.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
    for (std::uint64_t r : s.rounds) {
        if (!runs.empty() && runs.back().second + 1 == r) runs.back().second = r;
        else runs.emplace_back(r, r);
    }
    std::vector<std::uint64_t> cks;
    if (!s.diagnostic.empty()) cks.push_back(s.rounds.back());
    else
        for (const auto& [a, b] : runs) {
            if (a > 1) cks.push_back(a - 1);
            cks.push_back(b);
        }
    std::sort(cks.begin(), cks.end());
    cks.erase(std::unique(cks.begin(), cks.end()), cks.end());
    // Each run's two checkpoint columns (lo = -1: C(0) = 0), looked up once rather than per trial.
    const auto column = [&](std::uint64_t t) {
        return static_cast<std::ptrdiff_t>(std::lower_bound(cks.begin(), cks.end(), t) - cks.begin());
    };
    std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> run_columns;
    for (const auto& [ra, rb] : runs) run_columns.emplace_back(ra > 1 ? column(ra - 1) : -1, column(rb));
    o.rounds_run = cks.back();
    o.trials = M;

    const auto start = std::chrono::steady_clock::now();
    o.base.resize(M);
    o.neighbour.resize(M);
    for (int side = 0; side < 2; ++side) {
        std::vector<double>& out = side ? o.neighbour : o.base;
        PointJob pj = make_point_job(cfg.run, p, o.learner, side ? neighbour.runtime() : job.adversary);
        pj.per_instance = false;
        pj.shape.T = o.rounds_run;
        pj.shape.checkpoints = cks;
        pj.backend = job.backend;
        pj.threads = job.threads;
        pj.on_progress = job.on_progress;
        pj.interrupted = job.interrupted;
        pj.keep_charged = true;
        for (std::uint64_t first = 0; first < M; first += s.batch) {
            const std::uint64_t n = std::min(s.batch, M - first);
            pj.shape.instances = static_cast<std::uint32_t>(n);
            pj.shape.first_instance = static_cast<std::uint32_t>(side * M + first);
            const PointOutcome po = run_point(pj);
            if (!po.completed) return o;
            o.backend = po.backend;
            o.policy = po.policy;
            const std::vector<double>& C = s.realized ? po.charged_realized : po.charged;
            const std::size_t nck = cks.size();
            for (std::uint64_t k = 0; k < n; ++k) {
                if (po.first_nonfinite_round[k])
                    throw std::runtime_error("instance " + std::to_string(side * M + first + k) + " (" +
                                             (side ? "neighbour" : "base") + " side) charged a non-finite loss in round " +
                                             std::to_string(po.first_nonfinite_round[k]) + "; no audit is written");
                double stat = 0.0;
                if (!s.diagnostic.empty()) {
                    out[first + k] = po.diagnostics[k * o.learner.diagnostic_names.size() + diag_index];
                    continue;
                }
                const double* row = C.data() + k * nck;
                for (const auto& [lo, hi] : run_columns) stat += row[hi] - (lo >= 0 ? row[lo] : 0.0);
                out[first + k] = stat;
            }
        }
    }
    o.simulate_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    o.bound = threshold_audit(o.base, o.neighbour, o.learner.privacy.delta, s.alpha, s.candidates);
    o.completed = true;
    return o;
}

const char* verdict(const AuditOutcome& o) {
    return o.bound.epsilon_lb > o.learner.privacy.epsilon ? "VIOLATION" : "consistent";
}

std::vector<RegionRow> privacy_region(const std::vector<double>& base, const std::vector<double>& neighbour, int n) {
    std::vector<double> a(base), b(neighbour), pooled(base);
    pooled.insert(pooled.end(), neighbour.begin(), neighbour.end());
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::sort(pooled.begin(), pooled.end());
    std::vector<RegionRow> rows;
    if (pooled.empty()) return rows;
    const auto frac_ge = [](const std::vector<double>& v, double x) {
        return static_cast<double>(v.end() - std::lower_bound(v.begin(), v.end(), x)) / static_cast<double>(v.size());
    };
    const auto frac_le = [](const std::vector<double>& v, double x) {
        return static_cast<double>(std::upper_bound(v.begin(), v.end(), x) - v.begin()) / static_cast<double>(v.size());
    };
    double last = std::nan("");
    for (int i = 0; i < n; ++i) {
        const std::size_t idx = static_cast<std::size_t>((static_cast<double>(i) + 0.5) / n * static_cast<double>(pooled.size()));
        const double x = pooled[std::min(idx, pooled.size() - 1)];
        if (x == last) continue;
        last = x;
        rows.push_back({x, frac_ge(a, x), frac_ge(b, x), frac_le(a, x), frac_le(b, x)});
    }
    return rows;
}

} // namespace dpr::audit
