#include "host/audit/learner_audit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "host/audit/fitted_statistic.hpp"
#include "host/engine/loss_file.hpp"
#include "host/results/memory_estimate.hpp"
#include "kernels/adversaries/common.hpp"

namespace dpr::audit {
namespace {

enum AuditKey { kRound = 0, kNeighbour, kCoordinate, kNeighbourPath, kRounds, kStatistic, kAlpha, kCandidates,
                kPlanted, kBatch, kBound, kSelection, kWeights, kAuditKeys };

/// weights = "fitted": the most rounds in R (one weight each; the selection shares keep |R| doubles per trial).
constexpr std::uint64_t kMaxFittedRounds = 512;

/// Fewest trials per side in each share: below it no threshold test says anything.
constexpr std::uint64_t kMinShareTrials = 10;

std::string fmt_real(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

/// Most trials per side: both sides' instance ids (2 x instances) must stay below adversaries::kSharedSequence.
constexpr std::uint64_t kMaxTrialsPerSide = (std::uint64_t{adversaries::kSharedSequence} - 1) / 2;

/// The selection share of m trials per side, computed exactly as the audit computes it.
std::uint64_t selection_share(double selection, std::uint64_t m) {
    return static_cast<std::uint64_t>(std::ceil(selection * static_cast<double>(m)));
}

/// Whether m trials per side leave kMinShareTrials in both shares.
bool shares_fit(double selection, std::uint64_t m) {
    const std::uint64_t sel = selection_share(selection, m);
    return sel >= kMinShareTrials && sel <= m && m - sel >= kMinShareTrials;
}

/// The first m at which `ok`, false up to some m and true from there on, holds, starting from a guess near it.
template <class Ok>
std::uint64_t first_true(std::uint64_t guess, const Ok& ok) {
    while (guess > 0 && ok(guess - 1)) --guess;
    while (!ok(guess)) ++guess;
    return guess;
}

/// The fewest trials per side that leave kMinShareTrials in both shares; kMaxTrialsPerSide + 1 when no instance
/// count an audit allows does. In closed form, because a search upwards from 20 took 150 s at selection = 1e-9 and
/// never ended at 1e-300 (deaf to Ctrl-C meanwhile): the selection share ceil(s m) reaches 10 once s m > 9, and
/// the evaluation share m - ceil(s m) never shrinks as m grows (s < 1), so each condition holds from its
/// real-arithmetic bound on; a few steps of the exact test around that bound absorb the rounding of s m.
std::uint64_t min_instances(double selection) {
    const double s = selection;
    if (!(s > 0.0 && s < 1.0)) return kMaxTrialsPerSide + 1;
    const double sel_bound = static_cast<double>(kMinShareTrials - 1) / s;
    if (!(sel_bound < static_cast<double>(kMaxTrialsPerSide))) return kMaxTrialsPerSide + 1;
    const std::uint64_t m_sel = first_true(static_cast<std::uint64_t>(sel_bound) + 1, [s](std::uint64_t m) {
        return selection_share(s, m) >= kMinShareTrials;
    });
    const std::uint64_t m_eval =
        first_true(static_cast<std::uint64_t>(std::ceil(static_cast<double>(kMinShareTrials) / (1.0 - s))),
                   [s](std::uint64_t m) {
                       const std::uint64_t sel = selection_share(s, m);
                       return sel <= m && m - sel >= kMinShareTrials;
                   });
    return std::min(kMaxTrialsPerSide + 1, std::max({2 * kMinShareTrials, m_sel, m_eval}));
}

/// x rounded to two significant digits, up or down, as "%g" prints it (so that the value a message suggests is
/// the value the user types).
double round2(double x, bool up) {
    const double p = std::pow(10.0, std::floor(std::log10(x)) - 1.0);
    const double r = (up ? std::ceil(x / p) : std::floor(x / p)) * p;
    return std::strtod(fmt_real(r).c_str(), nullptr);
}

/// The selections, within the key's range (0, 0.9], that leave kMinShareTrials in both shares of m trials per
/// side: [*lo, *hi] with two-digit ends that work. False when none does (m < 20).
bool selection_range(std::uint64_t m, double* lo, double* hi) {
    constexpr double kMaxSelection = 0.9; // the key's range (audit_keys)
    if (m < 2 * kMinShareTrials) return false;
    const double md = static_cast<double>(m);
    double a = round2(static_cast<double>(kMinShareTrials) / md, true);
    for (int i = 0; i < 8 && !shares_fit(a, m); ++i) a = round2(a * (1 + 1e-3), true);
    double b = std::min(kMaxSelection, round2((md - static_cast<double>(kMinShareTrials)) / md, false));
    for (int i = 0; i < 8 && !shares_fit(b, m); ++i) b = round2(b * (1 - 1e-3), false);
    if (!shares_fit(a, m) || !shares_fit(b, m) || a > b) return false;
    *lo = a;
    *hi = b;
    return true;
}

/// Why m trials per side at this selection leave too few trials in a share, and what would work.
std::string too_few_trials(double selection, std::uint64_t m) {
    const std::string need = "an audit needs at least " + std::to_string(kMinShareTrials) +
                             " trials per side in the selection share ([audit] selection = " + fmt_real(selection) +
                             " of them) and " + std::to_string(kMinShareTrials) + " in the evaluation share (the rest)";
    double lo = 0, hi = 0;
    const bool here = selection_range(m, &lo, &hi);
    const std::string with_these = here ? "with [run] instances = " + std::to_string(m) + ", [audit] selection in [" +
                                              fmt_real(lo) + ", " + fmt_real(hi) + "]"
                                        : std::string();
    const std::uint64_t fewest = min_instances(selection);
    if (fewest > kMaxTrialsPerSide) {
        // No instance count helps: the selection itself is the problem.
        double any_lo = 0, any_hi = 0;
        selection_range(kMaxTrialsPerSide, &any_lo, &any_hi);
        return "[audit] selection = " + fmt_real(selection) + " is too small: the event is chosen on ceil(selection x " +
               "[run] instances) trials per side, which must be at least " + std::to_string(kMinShareTrials) +
               ", and even the most instances an audit allows (" + std::to_string(kMaxTrialsPerSide) +
               " per side) give fewer. Use [audit] selection in [" + fmt_real(any_lo) + ", " + fmt_real(any_hi) + "]" +
               (here ? " (" + with_these + ")" : std::string()) + "; the default is 0.2";
    }
    return "[run] instances = " + std::to_string(m) + ": " + need + "; with this selection that takes instances >= " +
           std::to_string(fewest) + (here ? ", or " + with_these : std::string()) +
           " (an audit that can find anything takes 1e5 or more)";
}

std::string fmt_round_list(const std::vector<std::uint64_t>& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(r[i]);
    return "[" + s + (r.size() > 8 ? ", ...]" : "]");
}

} // namespace

const std::vector<KeySpec>& audit_keys() {
    static const std::vector<KeySpec> keys = {
        {"round", KeyType::Int, "1", 1.0, 4294967295.0, nullptr,
         "t0: the round in which the neighbouring sequences differ (replace-one, docs/spec/model.md §0.4); with "
         "neighbour = \"file\" it is found in the file"},
        {"neighbour", KeyType::Choice, "auto", 0, 5, "auto|flip|negate|zero|file|negate-b",
         "how l'_{t0} is made from l_{t0}: flip (losses in [0,1]^d: 1 - l), negate (symmetric loss sets and (a, b) "
         "families: -l), zero, file (neighbour_path), or negate-b (squared and absolute losses: b negated, a kept; "
         "flips an absolute loss's gradient, which negate cannot); auto = flip on the simplex, negate elsewhere"},
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
        {"alpha", KeyType::Real, "0.05", 1e-12, 1.0, nullptr,
         "the bound holds with confidence 1 - alpha (Clopper-Pearson, alpha/2 per side)", false, true},
        {"candidates", KeyType::Int, "64", 2.0, 4096.0, nullptr,
         "thresholds tried on the selection share (pooled quantiles at tail probabilities from 50 expected "
         "evaluation counts to 1/2, or every distinct value when there are fewer), each in both tails and both "
         "orientations"},
        {"planted", KeyType::Choice, "none", 0, 8, learners::kPlantedNames,
         "a planted privacy bug (docs/AUDITS.md; needs --allow-planted): the learner keeps claiming the correct "
         "(eps, delta)"},
        {"batch", KeyType::Int, "65536", 1.0, 2147483647.0, nullptr,
         "instances per executor call (bounds memory; results do not depend on it)"},
        {"bound", KeyType::Choice, "auto", 0, 2, "auto|eps-delta|gdp",
         "eps-delta: eps_lb = ln((p1 - delta) / p0) against the claimed eps; gdp: mu_lb = Phi^-1(p1) - "
         "Phi^-1(p0) against the claimed mu of Gaussian DP (learners with Gaussian noise: mu = sqrt(2 rho)); "
         "auto = gdp when the learner claims a mu, else eps-delta"},
        {"selection", KeyType::Real, "0.2", 0.0, 0.9, nullptr,
         "share of each side's trials (the first ids) that chooses the event; the rest count it without being "
         "stored", true, false},
        {"weights", KeyType::Choice, "sum", 0, 1, "sum|fitted",
         "how the charged losses over R make the statistic: sum = their plain sum; fitted = w . c, c the per-round "
         "charges, w Fisher's discriminant direction fitted on the selection shares (at most 512 rounds in R; "
         "docs/AUDITS.md \"Fitted weights\")"},
    };
    return keys;
}

config::SectionSchema audit_section() { return config::SectionSchema{"audit", audit_keys()}; }

std::uint64_t audit_extra_bytes(const AuditSettings& s, std::uint64_t trials, bool keep_statistic) {
    const std::uint64_t sel = static_cast<std::uint64_t>(std::ceil(s.selection * static_cast<double>(trials)));
    // Both selection shares, and half of one more: the buffer that merges a share's sorted halves, or, after it, a
    // set event's values (at most the distinct values of one building half).
    std::uint64_t selection = sat_add(sat_mul(2 * sizeof(double), sel), sat_mul(sizeof(double), sel / 2 + 1));
    // weights = "fitted": both selection shares' per-round charges until the direction is fitted.
    if (s.fitted) selection = sat_add(selection, sat_mul(sat_mul(2 * sizeof(double), sel), s.fitted_rounds));
    return sat_add(selection, keep_statistic ? sat_mul(2 * sizeof(double), trials) : 0);
}

AuditSettings read_audit_settings(const config::Config& cfg, const AdversaryRuntime& base, const LearnerRuntime& learner) {
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
                       : rule == 5 ? NeighbourRule::NegateB
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
    s.selection = kv.get(kSelection, 0.2);
    s.fitted = static_cast<int>(kv.get(kWeights, 0.0)) == 1;
    if (s.fitted && !s.diagnostic.empty())
        throw std::invalid_argument("[audit] weights = \"fitted\": statistic = \"" + s.diagnostic +
                                    "\" is one number per trial, with no rounds to weigh; use weights = \"sum\"");
    const int bound = static_cast<int>(kv.get(kBound, 0.0));
    s.bound_requested = bound == 1 ? "eps-delta" : bound == 2 ? "gdp" : "auto";
    const double mu = learner.privacy.gdp_mu;
    if (bound == 2 && !(mu > 0.0))
        throw std::invalid_argument("[audit] bound = \"gdp\": learner \"" + learner.name + "\" as configured claims no "
                                    "Gaussian-DP mu (its noise is not Gaussian: accountant \"" +
                                    learner.privacy.accountant + "\"); use bound = \"eps-delta\" or \"auto\"");
    s.bound = bound == 1 ? BoundKind::EpsDelta : bound == 2 || mu > 0.0 ? BoundKind::Gdp : BoundKind::EpsDelta;
    const std::uint64_t M = cfg.run.instances;
    if (M > kMaxTrialsPerSide)
        throw std::invalid_argument("[run] instances = " + std::to_string(M) +
                                    ": an audit uses 2 x instances ids (both sides), at most " +
                                    std::to_string(kMaxTrialsPerSide) + " per side");
    if (!shares_fit(s.selection, M)) throw std::invalid_argument(too_few_trials(s.selection, M));
    const std::uint64_t sel = selection_share(s.selection, M);
    check_alpha_computable(s.alpha, M - sel, s.bound);
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
    if (s.fitted) {
        s.fitted_rounds = s.rounds.empty() ? (T > 1 ? T - 1 : 0) : s.rounds.size();
        if (s.fitted_rounds > kMaxFittedRounds)
            throw std::invalid_argument("[audit] weights = \"fitted\": R has " + std::to_string(s.fitted_rounds) +
                                        " rounds, at most " + std::to_string(kMaxFittedRounds) +
                                        " can be weighed (one weight each); give [audit] rounds");
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
    o.settings = read_audit_settings(cfg, job.adversary, job.learner);
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
    const std::vector<double> difference = neighbour.difference(shared_ctx);

    if (s.planted != learners::Planted::None) {
        if (!job.allow_planted)
            throw std::invalid_argument("[audit] planted = \"" + s.planted_name +
                                        "\": planted bugs make a learner claim a privacy it does not have; they run only "
                                        "with --allow-planted");
        if (!plant_learner(o.learner, s.planted))
            throw std::invalid_argument("[audit] planted = \"" + s.planted_name + "\": learner \"" + o.learner.name +
                                        "\" has no such variant (docs/AUDITS.md lists them: dp-ftrl-experts, -sphere, -cube and "
                                        "dp-ftrl-smooth: half-noise, "
                                        "nine-tenths-noise, leaf-without-noise, reused-noise, blt-short-sensitivity (mechanism = \"blt\", T >= 3), float-lattice "
                                        "(lattice noise: dp-ftrl-experts, -sphere, -cube, dp-ftrl-smooth); "
                                        "svt-experts: no-threshold-noise, twice-temperature)");
    }

    const std::uint64_t M = cfg.run.instances;

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
    else if (s.fitted) // each round's own charge: C(r) - C(r - 1)
        for (std::uint64_t r : s.rounds) {
            if (r > 1) cks.push_back(r - 1);
            cks.push_back(r);
        }
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
    std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> run_columns, round_columns;
    for (const auto& [ra, rb] : runs) run_columns.emplace_back(ra > 1 ? column(ra - 1) : -1, column(rb));
    if (s.fitted)
        for (std::uint64_t r : s.rounds) round_columns.emplace_back(r > 1 ? column(r - 1) : -1, column(r));
    const std::size_t p_fit = round_columns.size();
    // weights = "fitted": the selection trials' per-round charges (side by side, trial-major) until w is fitted;
    // from then on every trial's statistic is w . c.
    std::vector<double> sel_vectors[2];
    std::vector<double>& w = o.weights;
    o.rounds_run = cks.back();
    o.trials = M;

    const std::uint64_t ms = static_cast<std::uint64_t>(std::ceil(s.selection * static_cast<double>(M)));
    o.selection_trials = ms;
    const auto start = std::chrono::steady_clock::now();
    const auto stopped = [&] { return job.interrupted && job.interrupted(); };

    // Trials [first, first + count) of `side` (ids side * M + ...), in batches; consume(batch_first, stats) gets
    // each batch's statistics in instance order. False when interrupted.
    PointJob pjs[2] = {make_point_job(cfg.run, p, o.learner, job.adversary),
                       make_point_job(cfg.run, p, o.learner, neighbour.runtime())};
    for (PointJob& pj : pjs) {
        pj.per_instance = false;
        pj.shape.T = o.rounds_run;
        pj.shape.checkpoints = cks;
        pj.shape.uncharged = sim::UnchargedRounds::one(t0);
        pj.backend = job.backend;
        pj.threads = job.threads;
        pj.on_progress = job.on_progress;
        pj.interrupted = job.interrupted;
        pj.keep_charged = true;
    }
    std::vector<double> stats;
    const auto simulate = [&](int side, std::uint64_t first, std::uint64_t count, const auto& consume) {
        PointJob& pj = pjs[side];
        for (std::uint64_t b = first; b < first + count; b += s.batch) {
            const std::uint64_t n = std::min(s.batch, first + count - b);
            pj.shape.instances = static_cast<std::uint32_t>(n);
            pj.shape.first_instance = static_cast<std::uint32_t>((job.common_ids ? 0 : side * M) + b);
            const PointResult po = run_point(pj);
            if (!po.completed || stopped()) return false;
            o.backend = po.backend;
            o.policy = po.launch_policy;
            const std::vector<double>& C = s.realized ? po.charged_realized : po.charged;
            const std::size_t nck = cks.size();
            stats.resize(n);
            for (std::uint64_t k = 0; k < n; ++k) {
                if (po.first_nonfinite_round[k])
                    throw std::runtime_error("instance " + std::to_string(side * M + b + k) + " (" +
                                             (side ? "neighbour" : "base") + " side) charged a non-finite loss in round " +
                                             std::to_string(po.first_nonfinite_round[k]) + "; no audit is written");
                double stat = 0.0;
                if (!s.diagnostic.empty()) {
                    stat = po.diagnostics[k * o.learner.diagnostic_names.size() + diag_index];
                } else if (s.fitted) {
                    const double* row = C.data() + k * nck;
                    std::vector<double>& keep = sel_vectors[side];
                    for (std::size_t j = 0; j < p_fit; ++j) {
                        const auto [lo, hi] = round_columns[j];
                        const double c = row[hi] - (lo >= 0 ? row[lo] : 0.0);
                        if (w.empty()) keep.push_back(c);
                        else stat += w[j] * c;
                        if (!std::isfinite(c)) stat = c;
                    }
                } else {
                    const double* row = C.data() + k * nck;
                    for (const auto& [lo, hi] : run_columns) stat += row[hi] - (lo >= 0 ? row[lo] : 0.0);
                }
                if (!std::isfinite(stat))
                    throw std::runtime_error("instance " + std::to_string(side * M + b + k) + " (" +
                                             (side ? "neighbour" : "base") + " side): its statistic is not finite (" +
                                             std::to_string(stat) + "); no audit is written");
                stats[k] = stat;
            }
            if (job.keep_statistic) std::copy(stats.begin(), stats.end(), (side ? o.neighbour : o.base).begin() + static_cast<std::ptrdiff_t>(b));
            consume(b, stats);
        }
        return true;
    };
    if (job.keep_statistic) {
        o.base.resize(M);
        o.neighbour.resize(M);
    }

    // 1. The selection shares, stored in trial order, then each half sorted (the two sides in parallel): the first
    //    half of each builds the set events, the second scores them (epsilon_bound.hpp select_set_event).
    std::vector<double> sel_trials[2];
    for (int side = 0; side < 2; ++side) {
        sel_trials[side].reserve(ms);
        if (!simulate(side, 0, ms, [&](std::uint64_t, const std::vector<double>& v) {
                sel_trials[side].insert(sel_trials[side].end(), v.begin(), v.end());
            }))
            return o;
    }
    if (s.fitted) {
        // The direction from the two selection shares alone; then their statistics, as every later trial's.
        w = fisher_direction(sel_vectors[0], sel_vectors[1], p_fit);
        for (int side = 0; side < 2; ++side) {
            for (std::uint64_t k = 0; k < ms; ++k) {
                double stat = 0.0;
                for (std::size_t j = 0; j < p_fit; ++j) stat += w[j] * sel_vectors[side][k * p_fit + j];
                sel_trials[side][k] = stat;
            }
            if (job.keep_statistic)
                std::copy(sel_trials[side].begin(), sel_trials[side].end(), (side ? o.neighbour : o.base).begin());
            std::vector<double>().swap(sel_vectors[side]);
        }
    }
    SelectionHalves sel[2];
    {
        std::thread other([&] { sel[1] = split_selection(std::move(sel_trials[1])); });
        sel[0] = split_selection(std::move(sel_trials[0]));
        other.join();
    }
    if (stopped()) return o;

    // 2. The event (the best threshold or set event; the halves end merged, each share sorted whole), and the
    //    thresholds of the privacy region (pooled quantiles of the selection shares).
    SelectionSpec spec;
    spec.kind = s.bound;
    spec.delta = o.learner.privacy.delta;
    spec.alpha = s.alpha;
    spec.candidates = s.candidates;
    // The main event and the (eps, delta) curve's, one per delta (curve.hpp), chosen together on the same shares.
    std::vector<SelectionSpec> specs = {spec};
    for (const SelectionSpec& c : curve_specs(spec, s.alpha)) specs.push_back(c);
    std::vector<double> scores;
    std::vector<AuditEvent> events = choose_events(sel[0], sel[1], M - ms, specs, &scores);
    const double score = scores[0];
    const AuditEvent event = events[0];
    CurveTally curve(std::vector<AuditEvent>(events.begin() + 1, events.end()));
    const RegionPlan rp = region_plan(event, sel[0].values, sel[1].values, curve.thresholds());
    const std::vector<double>& edges = rp.edges;

    // 3. The evaluation shares, counted streaming; the selection shares join the region's (descriptive) counts.
    EdgeHistogram eval[2] = {EdgeHistogram(edges), EdgeHistogram(edges)};
    EdgeHistogram all[2] = {EdgeHistogram(edges), EdgeHistogram(edges)};
    std::uint64_t in_set[2] = {0, 0}; // a set event's evaluation counts
    const bool set_event = event.kind == AuditEvent::Kind::Set;
    for (int side = 0; side < 2; ++side) {
        if (!simulate(side, ms, M - ms, [&](std::uint64_t, const std::vector<double>& v) {
                for (double x : v) {
                    eval[side].add(x);
                    if (set_event) in_set[side] += event.contains(x);
                    curve.add(side, x);
                }
            }))
            return o;
        for (double x : sel[side].values) all[side].add(x);
        all[side].add_bins(eval[side].counts());
        std::vector<double>().swap(sel[side].values);
    }
    o.simulate_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    const int num = event.a_is_numerator ? 0 : 1, den = 1 - num;
    const auto hits = [&](int side) { return set_event ? in_set[side] : eval[side].count(event); };
    o.bound = bound_from_counts(s.bound, event, hits(num), eval[num].total(), hits(den), eval[den].total(),
                                o.learner.privacy.delta, s.alpha);
    o.bound.selection_score = score;
    o.curve = curve.finish(eval[0], eval[1], o.learner.privacy, s.alpha);
    o.region = region_rows(rp, all[0], all[1], M, M);
    // The claimed trade-off curve for this pair (of the correct learner, also when a bug is planted) and the test
    // of the whole region against it (tradeoff.hpp).
    std::string exact_why;
    const ClaimedTradeoff claimed = learner_tradeoff(o.learner.privacy, difference, &exact_why);
    o.fdp = fdp_test(claimed, region_rows(rp, eval[0], eval[1], M - ms, M - ms), M - ms, M - ms, s.alpha);
    fill_claimed(claimed, o.region);
    o.fdp.exact_why = exact_why;
    o.completed = true;
    return o;
}

RegionPlan region_plan(const AuditEvent& event, const std::vector<double>& sorted0, const std::vector<double>& sorted1,
                       const std::vector<double>& more) {
    RegionPlan r;
    if (event.kind == AuditEvent::Kind::Threshold) r.edges.push_back(event.threshold);
    r.edges.insert(r.edges.end(), more.begin(), more.end());
    const double pooled = static_cast<double>(sorted0.size() + sorted1.size());
    for (int i = 0; i < RegionPlan::kRegionRows; ++i)
        r.thresholds.push_back(
            kth_of_two(sorted0, sorted1, static_cast<std::uint64_t>((i + 0.5) / RegionPlan::kRegionRows * pooled)));
    r.edges.insert(r.edges.end(), r.thresholds.begin(), r.thresholds.end());
    std::sort(r.edges.begin(), r.edges.end());
    r.edges.erase(std::unique(r.edges.begin(), r.edges.end()), r.edges.end());
    return r;
}

std::vector<RegionRow> region_rows(const RegionPlan& plan, const EdgeHistogram& all0, const EdgeHistogram& all1,
                                   std::uint64_t n0, std::uint64_t n1) {
    std::vector<RegionRow> rows;
    double last = std::nan("");
    const double m0 = static_cast<double>(n0), m1 = static_cast<double>(n1);
    for (double x : plan.thresholds) {
        if (x == last) continue;
        last = x;
        const std::size_t j =
            static_cast<std::size_t>(std::lower_bound(plan.edges.begin(), plan.edges.end(), x) - plan.edges.begin());
        rows.push_back({x, static_cast<double>(all0.at_least(j)) / m0, static_cast<double>(all1.at_least(j)) / m1,
                        static_cast<double>(all0.at_most(j)) / m0, static_cast<double>(all1.at_most(j)) / m1});
    }
    return rows;
}

const char* verdict(const AuditOutcome& o) {
    if (o.bound.kind == BoundKind::Gdp) return o.bound.mu_lb > o.learner.privacy.gdp_mu ? "VIOLATION" : "consistent";
    return o.bound.epsilon_lb > o.learner.privacy.epsilon ? "VIOLATION" : "consistent";
}

} // namespace dpr::audit
