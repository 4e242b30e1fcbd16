#include "host/audit/one_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include <boost/math/special_functions/beta.hpp>
#include <fmt/format.h>

#include "host/audit/fitted_statistic.hpp"
#include "host/engine/point_runner.hpp"
#include "kernels/adversaries/common.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::audit {

static_assert(kCanarySub >= adversaries::kSubsUsed && kCanarySub <= rng::kMaxSub,
              "the canaries' coins need an adversary sub of their own");

namespace {

/// P[Bin(r, q) >= v].
double binomial_sf(std::uint64_t r, std::uint64_t v, double q) {
    if (v == 0) return 1.0;
    if (v > r) return 0.0;
    if (q <= 0.0) return 0.0;
    if (q >= 1.0) return 1.0;
    return boost::math::ibeta(static_cast<double>(v), static_cast<double>(r - v + 1), q);
}

/// max_{1 <= i <= v} P[v - i <= Bin(r, q) < v] / i: the terms P[Bin = k] from k = v - 1 downward, each from its
/// logarithm (recursed from the last: a first term that underflows must not hide the mass near the mode), summed,
/// and stopped once P[Bin < v] / i cannot beat the best.
double delta_factor(std::uint64_t r, std::uint64_t v, double q) {
    if (v == 0) return 0.0;
    const double below = v > r ? 1.0 : boost::math::ibetac(static_cast<double>(v), static_cast<double>(r - v + 1), q);
    if (!(below > 0.0)) return 0.0;
    const double rd = static_cast<double>(r), lq = std::log(q), l1q = std::log1p(-q);
    const auto log_pmf = [&](std::uint64_t k) {
        const double kd = static_cast<double>(k);
        return std::lgamma(rd + 1.0) - std::lgamma(kd + 1.0) - std::lgamma(rd - kd + 1.0) + kd * lq + (rd - kd) * l1q;
    };
    double best = 0.0, sum = 0.0;
    double lp = log_pmf(v - 1);
    for (std::uint64_t i = 1; i <= v; ++i) {
        const std::uint64_t k = v - i; // the term P[Bin = k]
        sum += std::exp(lp);
        best = std::max(best, sum / static_cast<double>(i));
        if (below / static_cast<double>(i + 1) <= best) break;
        if (k > 0) lp += std::log(static_cast<double>(k)) - std::log(rd - static_cast<double>(k) + 1.0) + l1q - lq;
    }
    return best;
}

} // namespace

double one_run_p_value(std::uint64_t m, std::uint64_t r, std::uint64_t v, double eps, double delta) {
    if (v > r || r > m) throw std::invalid_argument("one_run_p_value: needs v <= r <= m");
    const double q = 1.0 / (1.0 + std::exp(-eps));
    double p = binomial_sf(r, v, q);
    if (delta > 0.0) p += 2.0 * static_cast<double>(m) * delta * delta_factor(r, v, q);
    return std::min(1.0, p);
}

double one_run_epsilon_lb(std::uint64_t m, std::uint64_t r, std::uint64_t v, double delta, double alpha) {
    // The binomial tail alone already at alpha: not rejected, without delta's sum (O(v - r q) terms).
    const auto rejected = [&](double eps) {
        const double q = 1.0 / (1.0 + std::exp(-eps));
        return binomial_sf(r, v, q) < alpha && one_run_p_value(m, r, v, eps, delta) < alpha;
    };
    if (r == 0 || !rejected(0.0)) return 0.0;
    // Doubling ends: once q rounds to 1 (eps above about 37) the tail is 1 and nothing is rejected.
    double lo = 0.0, hi = 1.0;
    while (rejected(hi)) {
        lo = hi;
        hi *= 2.0;
    }
    for (int it = 0; it < 64 && hi - lo > 1e-9 * hi; ++it) {
        const double mid = 0.5 * (lo + hi);
        (rejected(mid) ? lo : hi) = mid;
    }
    return lo;
}

CanaryPlan canary_plan(std::uint64_t T, const OneRunRequest& request) {
    const std::uint64_t canaries = request.canaries, window = request.window;
    if (canaries < 1)
        throw std::invalid_argument("--canaries " + std::to_string(canaries) + ": needs at least 1 canary per trial");
    const std::uint64_t most = T >= 4 ? T / 2 - 1 : 0; // spacing floor(T / (m + 1)) >= 2
    if (canaries > most)
        throw std::invalid_argument("--canaries " + std::to_string(canaries) + ": [run] rounds = " + std::to_string(T) +
                                    " holds at most " + std::to_string(most) +
                                    " canaries (each needs a round of its own and a round before the next to be seen "
                                    "in: T >= 2 m + 2); give --canaries in [1, " + std::to_string(most) +
                                    "] or more [run] rounds");
    CanaryPlan p;
    p.canaries = canaries;
    p.fitted = request.fitted;
    p.spacing = T / (canaries + 1);
    const std::uint64_t widest = request.fitted ? std::min(p.spacing - 1, kMaxFittedWindow) : p.spacing - 1;
    if (window > widest)
        throw std::invalid_argument(
            "--window " + std::to_string(window) + ": " +
            (window > p.spacing - 1
                 ? "the canaries are " + std::to_string(p.spacing) + " rounds apart ([run] rounds = " +
                       std::to_string(T) + ", --canaries " + std::to_string(canaries) + "), so a window holds at most " +
                       std::to_string(p.spacing - 1) + " rounds without a canary"
                 : "a fitted score weighs at most 2 x " + std::to_string(kMaxFittedWindow) + " charges") +
            "; give --window in [1, " + std::to_string(widest) + "] (0 = the default)");
    p.window = window ? window : request.fitted ? std::min(p.spacing - 1, kDefaultFittedWindow) : p.spacing - 1;
    p.rounds_run = canaries * p.spacing + p.window;
    return p;
}

bool canary_keeps_base(std::uint32_t seed, std::uint32_t stream, std::uint32_t instance, std::uint64_t i) {
    const adversaries::SequenceCtx ctx{seed, stream, instance};
    return (rng::draw_block(adversaries::adversary_stream(ctx, kCanarySub, i + 1, 0)).v[0] >> 31) == 0;
}

namespace {

const CanaryAdversary* canary_self(const void* params) {
    const CanaryAdversary* p = nullptr;
    std::memcpy(&p, params, sizeof p);
    return p;
}

void fill_canary(const void* params, const adversaries::SequenceCtx& ctx, std::uint64_t t, double* out) {
    canary_self(params)->fill(ctx, t, out);
}

NeighbourSpec rule_spec(NeighbourSpec s) {
    if (s.rule == NeighbourRule::File)
        throw std::invalid_argument("[audit] neighbour = \"file\": a one-run audit changes m rounds by one rule; use "
                                    "neighbour = \"flip\", \"negate\", \"zero\" or \"negate-b\"");
    s.round = 0; // the NeighbourAdversary is used for its rule only
    return s;
}

} // namespace

CanaryAdversary::CanaryAdversary(const AdversaryRuntime& base, std::uint32_t d, const NeighbourSpec& rule,
                                 const CanaryPlan& plan)
    : base_(base), rt_(base), rule_(base, d, rule_spec(rule)), plan_(plan) {
    const CanaryAdversary* self = this;
    rt_.name = base.name + " (canaries)";
    rt_.params.assign(sizeof self, 0);
    std::memcpy(rt_.params.data(), &self, sizeof self);
    rt_.fill_fn = &fill_canary;
    rt_.epoch_fn = nullptr;       // canary rounds differ between trials and from their neighbours
    rt_.comparator_fn = nullptr;  // never read by an audit; the geometry's closed forms are well defined
    if (base.geometry == Geometry::Polytope)
        rt_.comparator_fn = [](const void*, const double*) { return 0.0; };
}

void CanaryAdversary::fill(const adversaries::SequenceCtx& ctx, std::uint64_t t, double* out) const {
    // The base sequence is the shared one in every trial; only the canaries' coins are the trial's own.
    base_.fill(adversaries::SequenceCtx{ctx.seed, ctx.stream, adversaries::kSharedSequence}, t, out);
    if (t % plan_.spacing != 0) return;
    const std::uint64_t i = t / plan_.spacing - 1;
    if (i >= plan_.canaries) return;
    if (!canary_keeps_base(ctx.seed, ctx.stream, ctx.sequence, i)) rule_.apply_rule(out);
}

void CanaryAdversary::distance(std::uint32_t seed, std::uint32_t stream, double* l1, double* l2) const {
    const adversaries::SequenceCtx shared{seed, stream, adversaries::kSharedSequence};
    const std::uint64_t w = base_.row_width;
    std::vector<double> a(w), b(w);
    double m1 = 0.0, m2 = 0.0;
    for (std::uint64_t i = 0; i < plan_.canaries; ++i) {
        base_.fill(shared, plan_.round(i), a.data());
        b = a;
        rule_.apply_rule(b.data());
        double s1 = 0.0, s2 = 0.0;
        for (std::uint64_t j = 0; j < w; ++j) {
            s1 += std::fabs(a[j] - b[j]);
            s2 += (a[j] - b[j]) * (a[j] - b[j]);
        }
        m1 = std::max(m1, s1);
        m2 = std::max(m2, std::sqrt(s2));
    }
    *l1 = m1;
    *l2 = m2;
}

std::string GuessRule::describe() const {
    const char* hi = top_base ? "base" : "neighbour";
    const char* lo = top_base ? "neighbour" : "base";
    std::string s;
    if (top > 0) s += fmt::format("the highest {:g} of the scores guessed {}", top, hi);
    if (bottom > 0) s += fmt::format("{}the lowest {:g} guessed {}", s.empty() ? "" : ", ", bottom, lo);
    return s + ", the rest abstain";
}

std::uint64_t one_run_extra_bytes(std::uint64_t trials, std::uint64_t canaries) {
    // Both shares' scores and coins (9 bytes), and the larger share's ranking (a 4-byte index, an 8-byte count).
    if (trials == 0 || canaries == 0) return 0;
    const std::uint64_t n = trials * canaries;
    return n / trials == canaries && n <= ~std::uint64_t{0} / 21 ? n * 21 : ~std::uint64_t{0};
}

std::vector<std::uint64_t> one_run_checkpoints(const CanaryPlan& plan) {
    // Difference: C(t_i - w - 1), C(t_i - 1), C(t_i), C(t_i + w) for every canary. Fitted: every C(t) from
    // t_i - w - 1 to t_i + w. (C(0) = 0 is not one.)
    std::vector<std::uint64_t> cks;
    for (std::uint64_t i = 0; i < plan.canaries; ++i) {
        const std::uint64_t t = plan.round(i), lo = t > plan.window + 1 ? t - plan.window - 1 : 1;
        if (plan.fitted) {
            for (std::uint64_t u = lo; u <= t + plan.window; ++u) cks.push_back(u);
            continue;
        }
        if (t > plan.window + 1) cks.push_back(t - plan.window - 1);
        cks.push_back(t - 1);
        cks.push_back(t);
        cks.push_back(t + plan.window);
    }
    std::sort(cks.begin(), cks.end());
    cks.erase(std::unique(cks.begin(), cks.end()), cks.end());
    return cks;
}

std::uint64_t one_run_batch(const CanaryPlan& plan, std::uint64_t batch_key, std::uint64_t trials) {
    const std::uint64_t nck = one_run_checkpoints(plan).size();
    return std::max<std::uint64_t>(1, std::min({batch_key, trials, (std::uint64_t{1} << 22) / nck}));
}

namespace {

/// The canaries of a share: each one's score and coin (true = kept the base loss).
struct Scored {
    std::vector<double> score;
    std::vector<unsigned char> base;
};

/// The share's canaries ranked by score, ascending (ties by position: a fixed function of the output), and the
/// number of base coins among the first k, k = 0 .. n.
struct Ranked {
    std::vector<std::uint32_t> order;
    std::vector<std::uint64_t> base_prefix;
};
Ranked rank(const Scored& s) {
    Ranked r;
    r.order.resize(s.score.size());
    std::iota(r.order.begin(), r.order.end(), 0u);
    std::sort(r.order.begin(), r.order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return s.score[a] < s.score[b] || (s.score[a] == s.score[b] && a < b);
    });
    r.base_prefix.assign(r.order.size() + 1, 0);
    for (std::size_t k = 0; k < r.order.size(); ++k) r.base_prefix[k + 1] = r.base_prefix[k] + s.base[r.order[k]];
    return r;
}

struct Count {
    std::uint64_t guesses = 0, correct = 0;
};
/// The guesses of `rule` on n ranked canaries, and how many are right.
Count count(const GuessRule& rule, const Ranked& r) {
    const std::uint64_t n = r.order.size();
    const auto share = [n](double f) {
        return f > 0 ? std::min<std::uint64_t>(n, std::max<std::uint64_t>(1, std::llround(f * static_cast<double>(n)))) : 0;
    };
    std::uint64_t hi = share(rule.top), lo = share(rule.bottom);
    if (hi + lo > n) lo = n - hi;
    const std::uint64_t base_lo = r.base_prefix[lo], base_hi = r.base_prefix[n] - r.base_prefix[n - hi];
    Count c;
    c.guesses = hi + lo;
    c.correct = rule.top_base ? base_hi + (lo - base_lo) : (hi - base_hi) + base_lo;
    return c;
}

/// What check_one_run finds, kept for the run: the settings, the plan and the largest canary distances.
struct Checked {
    AuditSettings settings;
    CanaryPlan plan;
    double l1 = 0.0, l2 = 0.0;
};

Checked check(const AuditJob& job, const OneRunRequest& request) {
    const config::Config& cfg = *job.cfg;
    const config::Point& p = cfg.points.at(0);
    Checked out;
    out.settings = read_audit_settings(cfg, job.adversary, job.learner);
    const AuditSettings& s = out.settings;
    const auto refuse = [](const std::string& what) {
        throw std::invalid_argument(what + ": a two-sample audit's key; a one-run audit (--one-run) places its own "
                                           "canary rounds and scores each by the windows around it (docs/AUDITS.md "
                                           "\"One-run audits\"); leave it out");
    };
    if (s.round_given) refuse("[audit] round");
    if (!s.rounds.empty()) refuse("[audit] rounds");
    if (s.fitted) refuse("[audit] weights = \"fitted\"");
    if (!s.diagnostic.empty()) refuse("[audit] statistic = \"" + s.diagnostic + "\"");
    if (s.bound_requested == "gdp")
        throw std::invalid_argument("[audit] bound = \"gdp\": a one-run audit bounds eps at the claimed delta (SNJ23 "
                                    "Theorem 3); use bound = \"auto\" or \"eps-delta\"");
    if (p.per_instance)
        throw std::invalid_argument("[adversary] per_instance = true: a one-run audit's trials share one base sequence "
                                    "(only their canaries' coins are their own); use per_instance = false");
    out.plan = canary_plan(p.problem.T, request);
    const CanaryPlan& plan = out.plan;
    const CanaryAdversary adversary(job.adversary, static_cast<std::uint32_t>(p.problem.d), s.neighbour, plan);
    adversary.distance(static_cast<std::uint32_t>(p.problem.seed), static_cast<std::uint32_t>(p.stream), &out.l1,
                       &out.l2);
    if (!(out.l1 > 0.0))
        throw std::invalid_argument(std::string("[audit] neighbour = \"") + neighbour_rule_name(s.neighbour.rule) +
                                    "\" leaves every canary round of [adversary] kind = \"" + job.adversary.name +
                                    "\" as it is (its losses there are zero or fixed by the rule): no canary can be "
                                    "seen; choose another rule or adversary");
    if (s.planted != learners::Planted::None) {
        if (!job.allow_planted)
            throw std::invalid_argument("[audit] planted = \"" + s.planted_name +
                                        "\": planted bugs make a learner claim a privacy it does not have; they run only "
                                        "with --allow-planted");
        LearnerRuntime probe = job.learner;
        if (!plant_learner(probe, s.planted))
            throw std::invalid_argument("[audit] planted = \"" + s.planted_name + "\": learner \"" + job.learner.name +
                                        "\" has no such variant (docs/AUDITS.md lists them)");
    }
    const std::uint64_t M = cfg.run.instances;
    const std::uint64_t sel = static_cast<std::uint64_t>(std::ceil(s.selection * static_cast<double>(M)));
    // The fitted score needs 2 selection canaries of each coin. The coins are known before anything runs; with more
    // than 64 selection canaries a shortfall has probability below 2^-58 and is not looked for.
    if (plan.fitted && sel * request.canaries <= 64) {
        std::uint64_t kept = 0;
        for (std::uint64_t k = 0; k < sel; ++k)
            for (std::uint64_t i = 0; i < request.canaries; ++i)
                kept += canary_keeps_base(static_cast<std::uint32_t>(p.problem.seed), static_cast<std::uint32_t>(p.stream),
                                          static_cast<std::uint32_t>(k), i);
        if (kept < 2 || sel * request.canaries - kept < 2)
            throw std::invalid_argument("--score fitted: the selection share's " + std::to_string(sel * request.canaries) +
                                        " canaries hold " + std::to_string(kept) +
                                        " that keep the base loss; the fit needs 2 of each coin. Give more "
                                        "--canaries, [run] instances or [audit] selection, or --score difference");
    }
    if ((M - sel) * request.canaries > 0xFFFFFFFFull || sel * request.canaries > 0xFFFFFFFFull)
        throw std::invalid_argument("[run] instances x --canaries = " + std::to_string(M) + " x " +
                                    std::to_string(request.canaries) + ": a one-run audit ranks at most 2^32 - 1 canaries per "
                                    "share; give fewer");
    return out;
}

} // namespace

CanaryPlan check_one_run(const AuditJob& job, const OneRunRequest& request) { return check(job, request).plan; }

OneRunOutcome run_one_run_audit(const AuditJob& job, const OneRunRequest& request) {
    const config::Config& cfg = *job.cfg;
    const config::Point& p = cfg.points.at(0);
    OneRunOutcome o;
    Checked checked = check(job, request);
    o.plan = checked.plan;
    o.settings = std::move(checked.settings);
    o.l1 = checked.l1;
    o.l2 = checked.l2;
    o.learner = job.learner;
    o.adversary = job.adversary;
    const AuditSettings& s = o.settings;
    const CanaryPlan& plan = o.plan;
    const CanaryAdversary adversary(job.adversary, static_cast<std::uint32_t>(p.problem.d), s.neighbour, plan);
    const std::uint32_t seed = static_cast<std::uint32_t>(p.problem.seed);
    const std::uint32_t stream = static_cast<std::uint32_t>(p.stream);
    if (s.planted != learners::Planted::None) plant_learner(o.learner, s.planted);

    const std::uint64_t M = cfg.run.instances;
    o.trials = M;
    o.selection_trials = static_cast<std::uint64_t>(std::ceil(s.selection * static_cast<double>(M)));
    o.evaluation_canaries = (M - o.selection_trials) * plan.canaries;

    const std::vector<std::uint64_t> cks = one_run_checkpoints(plan);
    const auto column = [&](std::uint64_t t) -> std::ptrdiff_t {
        if (t == 0) return -1;
        return std::lower_bound(cks.begin(), cks.end(), t) - cks.begin();
    };
    // Per canary, the columns of C(t) and C(t - 1) of each charge it is scored by: 2 w charges (fitted) or the two
    // windows' sums (difference: C(t_i + w) - C(t_i) and C(t_i - 1) - C(t_i - w - 1), weights +1 and -1).
    const std::uint64_t w = plan.window;
    const std::size_t nf = plan.fitted ? static_cast<std::size_t>(2 * w) : 2;
    std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> feature_cols(plan.canaries * nf);
    for (std::uint64_t i = 0; i < plan.canaries; ++i) {
        const std::uint64_t t = plan.round(i);
        auto* f = feature_cols.data() + i * nf;
        if (plan.fitted) {
            for (std::uint64_t j = 0; j < w; ++j) {
                f[j] = {column(t - w + j - 1), column(t - w + j)};   // c_{t - w + j}
                f[w + j] = {column(t + j), column(t + j + 1)};      // c_{t + 1 + j}
            }
        } else {
            f[0] = {column(t > w + 1 ? t - w - 1 : 0), column(t - 1)};
            f[1] = {column(t), column(t + w)};
        }
    }
    if (!plan.fitted) o.weights = {-1.0, 1.0};

    PointJob pj = make_point_job(cfg.run, p, o.learner, adversary.runtime());
    pj.per_instance = true;
    pj.shape.T = plan.rounds_run;
    pj.shape.checkpoints = cks;
    // Every canary's own charge out of the sums: a canary's loss moves its round's charge directly, and a sum that
    // held it would carry its coin in the rounding of every later checkpoint (a false VIOLATION otherwise:
    // docs/AUDITS.md "An exact statistic").
    pj.shape.uncharged = sim::UnchargedRounds{plan.spacing, plan.spacing, plan.round(plan.canaries - 1)};
    pj.backend = Backend::Cpu; // the canaries' rows come from this host object
    pj.threads = job.threads;
    pj.on_progress = job.on_progress;
    pj.interrupted = job.interrupted;
    pj.keep_charged = true;
    const std::uint64_t batch = one_run_batch(plan, s.batch, M);

    // The selection share's canaries keep their features until the direction is fitted; from then on every canary's
    // score is w . features.
    std::vector<double> sel_features;
    if (plan.fitted) sel_features.reserve(o.selection_trials * plan.canaries * nf);
    Scored shares[2];
    for (int k = 0; k < 2; ++k) {
        const std::uint64_t n = (k == 0 ? o.selection_trials : M - o.selection_trials) * plan.canaries;
        shares[k].score.reserve(n);
        shares[k].base.reserve(n);
    }
    const auto fit = [&] {
        // Fisher's direction between the canaries that kept the base loss and those that took the neighbour's.
        std::vector<double> a, b;
        const Scored& sel = shares[0];
        for (std::size_t c = 0; c < sel.base.size(); ++c)
            (sel.base[c] ? a : b).insert((sel.base[c] ? a : b).end(), sel_features.begin() + c * nf,
                                         sel_features.begin() + (c + 1) * nf);
        if (a.size() / nf < 2 || b.size() / nf < 2)
            throw std::invalid_argument("--one-run: the selection share has fewer than 2 canaries of a coin; give more "
                                        "[run] instances or [audit] selection");
        o.weights = fisher_direction(a, b, nf);
        for (std::size_t c = 0; c < sel.base.size(); ++c) {
            double z = 0.0;
            for (std::size_t j = 0; j < nf; ++j) z += o.weights[j] * sel_features[c * nf + j];
            shares[0].score[c] = z;
        }
        std::vector<double>().swap(sel_features);
    };
    std::vector<double> feat(nf);
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t b = 0; b < M; b += batch) {
        const std::uint64_t n = std::min(batch, M - b);
        pj.shape.instances = static_cast<std::uint32_t>(n);
        pj.shape.first_instance = static_cast<std::uint32_t>(b);
        const PointResult po = run_point(pj);
        if (!po.completed || (job.interrupted && job.interrupted())) return o;
        o.backend = po.backend;
        o.policy = po.launch_policy;
        const std::vector<double>& C = s.realized ? po.charged_realized : po.charged;
        const std::size_t nck = cks.size();
        for (std::uint64_t k = 0; k < n; ++k) {
            const std::uint64_t id = b + k;
            if (po.first_nonfinite_round[k])
                throw std::runtime_error("trial " + std::to_string(id) + " charged a non-finite loss in round " +
                                         std::to_string(po.first_nonfinite_round[k]) + "; no audit is written");
            if (plan.fitted && id == o.selection_trials) fit();
            const bool selection = id < o.selection_trials;
            const double* row = C.data() + k * nck;
            const auto at = [row](std::ptrdiff_t c) { return c >= 0 ? row[c] : 0.0; };
            Scored& to = shares[selection ? 0 : 1];
            for (std::uint64_t i = 0; i < plan.canaries; ++i) {
                const auto* f = feature_cols.data() + i * nf;
                double score = 0.0;
                for (std::size_t j = 0; j < nf; ++j) {
                    feat[j] = at(f[j].second) - at(f[j].first);
                    if (!std::isfinite(feat[j]))
                        throw std::runtime_error("trial " + std::to_string(id) + ": a charge around canary round " +
                                                 std::to_string(plan.round(i)) + " is not finite; no audit is written");
                }
                if (plan.fitted && selection) sel_features.insert(sel_features.end(), feat.begin(), feat.end());
                else
                    for (std::size_t j = 0; j < nf; ++j) score += o.weights[j] * feat[j];
                to.score.push_back(score);
                to.base.push_back(canary_keeps_base(seed, stream, static_cast<std::uint32_t>(id), i) ? 1 : 0);
            }
        }
    }
    if (plan.fitted && o.selection_trials == M) fit(); // no evaluation share (never with the key's range)
    o.simulate_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // The rule: on the selection share (its coins read), the rule whose own bound is largest, with the claimed delta
    // scaled so that its term 2 m delta is the evaluation's (a rule of few guesses that only a delta-free bound
    // favours would lose to that term there). Ties: at a bound of 0 the largest z of the right guesses, else the
    // first rule tried (the fewest guesses). Then counted once on the rest.
    const double claim_delta = o.learner.privacy.delta;
    {
        const Ranked sel = rank(shares[0]);
        const std::uint64_t n = sel.order.size();
        static constexpr double kFractions[] = {1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.02,
                                                0.05, 0.1,  0.2,  0.5,  1.0};
        double best = -1.0, best_z = -1e300;
        for (double f : kFractions)
            for (int shape = 0; shape < 3; ++shape)
                for (bool top_base : {true, false}) {
                    GuessRule rule;
                    rule.top_base = top_base;
                    rule.top = shape == 0 ? f / 2 : shape == 1 ? f : 0.0;
                    rule.bottom = shape == 0 ? f / 2 : shape == 2 ? f : 0.0;
                    const Count c = count(rule, sel);
                    if (c.guesses == 0) continue;
                    const double lb = one_run_epsilon_lb(
                        n, c.guesses, c.correct,
                        n ? claim_delta * static_cast<double>(o.evaluation_canaries) / static_cast<double>(n) : 0.0,
                        s.alpha);
                    const double r = static_cast<double>(c.guesses);
                    const double z = (static_cast<double>(c.correct) - r / 2) / std::sqrt(r);
                    if (lb > best || (lb == best && lb == 0.0 && z > best_z)) {
                        best = lb;
                        best_z = z;
                        o.rule = rule;
                        o.selection_epsilon_lb = lb;
                        o.selection_guesses = c.guesses;
                        o.selection_correct = c.correct;
                    }
                }
    }
    const Ranked ev = rank(shares[1]);
    const Count c = count(o.rule, ev);
    o.guesses = c.guesses;
    o.correct = c.correct;
    o.epsilon_lb = one_run_epsilon_lb(o.evaluation_canaries, c.guesses, c.correct, claim_delta, s.alpha);
    if (std::isfinite(o.learner.privacy.epsilon))
        o.p_value_at_claim =
            one_run_p_value(o.evaluation_canaries, c.guesses, c.correct, o.learner.privacy.epsilon, claim_delta);
    o.completed = true;
    return o;
}

const char* verdict(const OneRunOutcome& o) {
    return o.epsilon_lb > o.learner.privacy.epsilon ? "VIOLATION" : "consistent";
}

} // namespace dpr::audit
