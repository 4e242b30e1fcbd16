#include "host/audit/epsilon_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <fmt/format.h>

namespace dpr::audit {

namespace {

void check_args(std::uint64_t k, std::uint64_t n, double a) {
    if (n == 0 || k > n) throw std::invalid_argument(fmt::format("Clopper-Pearson: need 0 <= k <= n, n > 0 (k = {}, n = {})", k, n));
    if (!(a > 0.0 && a < 1.0)) throw std::invalid_argument(fmt::format("Clopper-Pearson: error a must be in (0, 1) (got {})", a));
}

/// Clopper-Pearson at a real-valued count k in [0, n] (the selection's projections; integer k gives cp_lower/upper).
double cp_lower_real(double k, double n, double a) {
    if (!(k > 0.0)) return 0.0;
    if (k >= n) k = n;
    const boost::math::beta_distribution<double> beta(k, n - k + 1.0);
    return boost::math::quantile(beta, a);
}
double cp_upper_real(double k, double n, double a) {
    if (k >= n) return 1.0;
    if (k < 0.0) k = 0.0;
    const boost::math::beta_distribution<double> beta(k + 1.0, n - k);
    return boost::math::quantile(boost::math::complement(beta, a));
}

/// Phi^-1(p), -inf at 0 and +inf at 1.
double probit(double p) {
    if (!(p > 0.0)) return -std::numeric_limits<double>::infinity();
    if (!(p < 1.0)) return std::numeric_limits<double>::infinity();
    return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

/// The bound from a lower limit p1 of the numerator's probability and an upper limit p0 of the denominator's.
double bound_of_limits(BoundKind kind, double p1, double p0, double delta) {
    if (kind == BoundKind::Gdp) {
        const double mu = probit(p1) - probit(p0);
        return std::isfinite(mu) && mu > 0.0 ? mu : 0.0;
    }
    const double num = p1 - delta;
    if (!(num > 0.0)) return 0.0;
    return std::max(0.0, std::log(num / p0));
}

/// ln Phi(x): erfc directly where it does not underflow, else the asymptotic series (x < -30: relative error of
/// the truncation below 1e-9).
double log_phi(double x) {
    if (x > -30.0) return std::log(0.5 * boost::math::erfc(-x / std::sqrt(2.0)));
    const double x2 = x * x;
    return -0.5 * x2 - std::log(-x) - 0.5 * std::log(2.0 * M_PI) + std::log1p(-1.0 / x2 + 3.0 / (x2 * x2));
}

std::uint64_t count_at_least(const std::vector<double>& s, double t) {
    return static_cast<std::uint64_t>(s.end() - std::lower_bound(s.begin(), s.end(), t));
}
std::uint64_t count_at_most(const std::vector<double>& s, double t) {
    return static_cast<std::uint64_t>(std::upper_bound(s.begin(), s.end(), t) - s.begin());
}

} // namespace

double cp_lower(std::uint64_t k, std::uint64_t n, double a) {
    check_args(k, n, a);
    if (k == 0) return 0.0;
    return cp_lower_real(static_cast<double>(k), static_cast<double>(n), a);
}

double cp_upper(std::uint64_t k, std::uint64_t n, double a) {
    check_args(k, n, a);
    if (k == n) return 1.0;
    return cp_upper_real(static_cast<double>(k), static_cast<double>(n), a);
}

namespace {
void check_alpha_delta(double alpha, double delta) {
    if (!(alpha > 0.0 && alpha < 1.0)) throw std::invalid_argument(fmt::format("alpha must be in (0, 1) (got {})", alpha));
    if (!(delta >= 0.0 && delta < 1.0)) throw std::invalid_argument(fmt::format("delta must be in [0, 1) (got {})", delta));
}
} // namespace

double epsilon_lower_bound(std::uint64_t k1, std::uint64_t n1, std::uint64_t k0, std::uint64_t n0, double delta,
                           double alpha) {
    check_alpha_delta(alpha, delta);
    return bound_of_limits(BoundKind::EpsDelta, cp_lower(k1, n1, alpha / 2), cp_upper(k0, n0, alpha / 2), delta);
}

double gdp_mu_lower_bound(std::uint64_t k1, std::uint64_t n1, std::uint64_t k0, std::uint64_t n0, double alpha) {
    check_alpha_delta(alpha, 0.0);
    return bound_of_limits(BoundKind::Gdp, cp_lower(k1, n1, alpha / 2), cp_upper(k0, n0, alpha / 2), 0.0);
}

double gdp_delta(double mu, double eps) {
    if (!(mu > 0.0)) return 0.0;
    const double a = log_phi(-eps / mu + mu / 2), b = eps + log_phi(-eps / mu - mu / 2);
    return std::max(0.0, std::exp(a) - std::exp(b));
}

double gdp_epsilon(double mu, double delta) {
    if (!(mu > 0.0) || !(delta < 1.0)) return 0.0;
    if (gdp_delta(mu, 0.0) <= delta) return 0.0;
    double lo = 0.0, hi = 1.0;
    while (gdp_delta(mu, hi) > delta) {
        lo = hi;
        hi *= 2.0;
        if (hi > 1e6) return std::numeric_limits<double>::infinity(); // delta below what double arithmetic resolves
    }
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        (gdp_delta(mu, mid) > delta ? lo : hi) = mid;
    }
    return hi;
}

const char* bound_kind_name(BoundKind k) { return k == BoundKind::Gdp ? "gdp" : "eps-delta"; }

bool AuditEvent::contains(double x) const {
    if (kind == Kind::Set) return std::binary_search(set.begin(), set.end(), x);
    return upper_tail ? x >= threshold : x <= threshold;
}

std::string AuditEvent::describe() const {
    if (kind == Kind::Set)
        return fmt::format("X in S, {} values: {}; P[first] {} P[second]", set.size(), set_origin,
                           a_is_numerator ? "over" : "under");
    return fmt::format("X {} {:.17g}, P[first] {} P[second]", upper_tail ? ">=" : "<=", threshold,
                       a_is_numerator ? "over" : "under");
}

AuditBound bound_from_counts(BoundKind kind, const AuditEvent& e, std::uint64_t k1, std::uint64_t n1,
                             std::uint64_t k0, std::uint64_t n0, double delta, double alpha) {
    AuditBound b;
    b.kind = kind;
    b.event = e;
    b.k1 = k1, b.n1 = n1, b.k0 = k0, b.n0 = n0;
    b.delta = delta;
    b.alpha = alpha;
    if (kind == BoundKind::Gdp) {
        b.mu_lb = gdp_mu_lower_bound(k1, n1, k0, n0, alpha);
        b.epsilon_lb = gdp_epsilon(b.mu_lb, delta);
    } else {
        b.epsilon_lb = epsilon_lower_bound(k1, n1, k0, n0, delta, alpha);
    }
    return b;
}

void check_alpha_computable(double alpha, std::uint64_t n, BoundKind kind) {
    try {
        for (std::uint64_t k : {std::uint64_t{0}, std::uint64_t{1}, n / 2, n - 1, n})
            if (k <= n && n > 0) {
                const double lo = cp_lower(k, n, alpha / 2), up = cp_upper(k, n, alpha / 2);
                if (!(lo >= 0.0 && lo <= 1.0 && up >= 0.0 && up <= 1.0))
                    throw std::domain_error("Clopper-Pearson limit outside [0, 1]");
                if (kind == BoundKind::Gdp) (void)(probit(lo) - probit(up));
            }
    } catch (const std::exception& e) {
        throw std::invalid_argument(fmt::format(
            "[audit] alpha = {}: the Clopper-Pearson limits at confidence 1 - alpha for {} trials cannot be computed "
            "in double precision ({}); use alpha >= 1e-12 (the key's range)",
            alpha, n, e.what()));
    }
}

double kth_of_two(const std::vector<double>& a, const std::vector<double>& b, std::uint64_t k) {
    if (k >= a.size() + b.size()) throw std::out_of_range("kth_of_two: k beyond the samples");
    // Binary search on how many of the k + 1 smallest come from a.
    std::uint64_t lo = k + 1 > b.size() ? k + 1 - b.size() : 0, hi = std::min<std::uint64_t>(k + 1, a.size());
    while (lo < hi) {
        const std::uint64_t i = lo + (hi - lo) / 2; // take i from a, k + 1 - i from b
        const std::uint64_t j = k + 1 - i;
        if (j > 0 && i < a.size() && b[j - 1] > a[i]) lo = i + 1;
        else hi = i;
    }
    const std::uint64_t i = lo, j = k + 1 - i;
    if (i == 0) return b[j - 1];
    if (j == 0) return a[i - 1];
    return std::max(a[i - 1], b[j - 1]);
}

std::vector<double> candidate_thresholds(const std::vector<double>& a_sorted, const std::vector<double>& b_sorted,
                                         std::uint64_t n_eval, const SelectionSpec& s) {
    const std::uint64_t N = a_sorted.size() + b_sorted.size();
    std::vector<double> ts;
    if (N == 0) return ts;
    // Every distinct value when there are few (a discrete statistic): a merge walk that stops past `candidates`.
    {
        std::size_t i = 0, j = 0;
        bool few = true;
        while (i < a_sorted.size() || j < b_sorted.size()) {
            const double x = (j >= b_sorted.size() || (i < a_sorted.size() && a_sorted[i] <= b_sorted[j])) ? a_sorted[i++]
                                                                                                            : b_sorted[j++];
            if (ts.empty() || ts.back() != x) {
                if (ts.size() >= static_cast<std::size_t>(s.candidates)) {
                    few = false;
                    break;
                }
                ts.push_back(x);
            }
        }
        if (few) return ts;
        ts.clear();
    }
    const double n = static_cast<double>(N);
    const double qmin = std::min(0.5, std::max(s.min_expected / static_cast<double>(std::max<std::uint64_t>(n_eval, 1)), 1.0 / n));
    const int half = std::max(1, s.candidates / 2);
    for (int i = 0; i < half; ++i) {
        const double q = half == 1 ? 0.5 : qmin * std::pow(0.5 / qmin, static_cast<double>(i) / (half - 1));
        for (double r : {q * n, (1.0 - q) * n}) {
            const std::uint64_t k = std::min<std::uint64_t>(N - 1, static_cast<std::uint64_t>(std::max(0.0, std::floor(r))));
            ts.push_back(kth_of_two(a_sorted, b_sorted, k));
        }
    }
    std::sort(ts.begin(), ts.end());
    ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
    return ts;
}

AuditEvent select_event(const std::vector<double>& a_sorted, const std::vector<double>& b_sorted,
                            std::uint64_t n_eval, const SelectionSpec& s, double* score) {
    if (a_sorted.empty() || b_sorted.empty()) throw std::invalid_argument("select_event: empty selection share");
    const double ne = static_cast<double>(std::max<std::uint64_t>(n_eval, 1));
    const double na = static_cast<double>(a_sorted.size()), nb = static_cast<double>(b_sorted.size());
    const auto threshold_event = [](bool upper, double t, bool a_num) {
        AuditEvent e;
        e.upper_tail = upper;
        e.threshold = t;
        e.a_is_numerator = a_num;
        return e;
    };
    AuditEvent best = threshold_event(true, a_sorted[a_sorted.size() / 2], true);
    double best_score = -1.0;
    for (double t : candidate_thresholds(a_sorted, b_sorted, n_eval, s))
        for (bool upper : {true, false}) {
            const double ca = static_cast<double>(upper ? count_at_least(a_sorted, t) : count_at_most(a_sorted, t));
            const double cb = static_cast<double>(upper ? count_at_least(b_sorted, t) : count_at_most(b_sorted, t));
            for (bool a_num : {true, false}) {
                // Conservative rates of the selection share, projected onto the evaluation share's size.
                const double p1 = a_num ? cp_lower_real(ca, na, s.gamma) : cp_lower_real(cb, nb, s.gamma);
                const double p0 = a_num ? cp_upper_real(cb, nb, s.gamma) : cp_upper_real(ca, na, s.gamma);
                const double v = bound_of_limits(s.kind, cp_lower_real(p1 * ne, ne, s.alpha / 2),
                                                 cp_upper_real(p0 * ne, ne, s.alpha / 2), s.delta);
                if (v > best_score) best_score = v, best = threshold_event(upper, t, a_num);
            }
        }
    if (score) *score = std::max(0.0, best_score);
    return best;
}

namespace {

/// The sets select_set_event proposes from one side's building half X against the other's, Y.
enum class SetFamily { OnlyHere, SeenButHeavy };

/// Whether value x (seen at count `here` in X's building half, `there` in Y's) is in the family's set.
bool in_family(SetFamily f, std::uint64_t here, std::uint64_t there, std::uint64_t heavy) {
    if (here == 0) return false;
    return f == SetFamily::OnlyHere ? there == 0 : here < heavy;
}

/// Occurrences of x in a sorted run, advancing `at` (runs are walked in increasing x).
std::uint64_t count_and_advance(SortedValues v, std::size_t& at, double x) {
    while (at < v.n && v.p[at] < x) ++at;
    std::size_t end = at;
    while (end < v.n && v.p[end] == x) ++end;
    return end - at;
}

/// How many values of the sorted `sample` lie in the family's set built from (x_build, y_build).
std::uint64_t count_in_family(SetFamily f, SortedValues x_build, SortedValues y_build, SortedValues sample,
                              std::uint64_t heavy) {
    std::size_t ix = 0, iy = 0;
    std::uint64_t hits = 0;
    for (std::size_t i = 0; i < sample.n;) {
        const double v = sample.p[i];
        std::size_t j = i;
        while (j < sample.n && sample.p[j] == v) ++j;
        const std::uint64_t here = count_and_advance(x_build, ix, v), there = count_and_advance(y_build, iy, v);
        if (in_family(f, here, there, heavy)) hits += j - i;
        i = j;
    }
    return hits;
}

/// The family's set itself: the distinct values of x_build that belong to it.
std::vector<double> family_set(SetFamily f, SortedValues x_build, SortedValues y_build, std::uint64_t heavy) {
    std::vector<double> out;
    std::size_t iy = 0;
    for (std::size_t i = 0; i < x_build.n;) {
        const double v = x_build.p[i];
        std::size_t j = i;
        while (j < x_build.n && x_build.p[j] == v) ++j;
        if (in_family(f, j - i, count_and_advance(y_build, iy, v), heavy)) out.push_back(v);
        i = j;
    }
    return out;
}

} // namespace

AuditEvent select_set_event(SortedValues a_build, SortedValues b_build, SortedValues a_score, SortedValues b_score,
                            std::uint64_t n_eval, const SelectionSpec& s, double* score) {
    AuditEvent best;
    best.kind = AuditEvent::Kind::Set;
    double best_score = 0.0;
    if (a_score.n == 0 || b_score.n == 0) {
        if (score) *score = 0.0;
        return best;
    }
    const double ne = static_cast<double>(std::max<std::uint64_t>(n_eval, 1));
    const double na = static_cast<double>(a_score.n), nb = static_cast<double>(b_score.n);
    bool found = false;
    SetFamily best_family = SetFamily::OnlyHere;
    bool best_from_a = true;
    for (bool from_a : {true, false}) {
        const SortedValues xb = from_a ? a_build : b_build, yb = from_a ? b_build : a_build;
        const std::uint64_t heavy =
            std::max<std::uint64_t>(2, static_cast<std::uint64_t>(std::ceil(s.heavy_share * static_cast<double>(xb.n))));
        for (SetFamily f : {SetFamily::OnlyHere, SetFamily::SeenButHeavy}) {
            const double ca = static_cast<double>(count_in_family(f, xb, yb, a_score, heavy));
            const double cb = static_cast<double>(count_in_family(f, xb, yb, b_score, heavy));
            for (bool a_num : {true, false}) {
                const double p1 = a_num ? cp_lower_real(ca, na, s.gamma) : cp_lower_real(cb, nb, s.gamma);
                const double p0 = a_num ? cp_upper_real(cb, nb, s.gamma) : cp_upper_real(ca, na, s.gamma);
                const double v = bound_of_limits(s.kind, cp_lower_real(p1 * ne, ne, s.alpha / 2),
                                                 cp_upper_real(p0 * ne, ne, s.alpha / 2), s.delta);
                if (v > best_score) {
                    best_score = v;
                    found = true;
                    best_family = f;
                    best_from_a = from_a;
                    best.a_is_numerator = a_num;
                }
            }
        }
    }
    if (found) {
        const SortedValues xb = best_from_a ? a_build : b_build, yb = best_from_a ? b_build : a_build;
        const std::uint64_t heavy =
            std::max<std::uint64_t>(2, static_cast<std::uint64_t>(std::ceil(s.heavy_share * static_cast<double>(xb.n))));
        best.set = family_set(best_family, xb, yb, heavy);
        const char* side = best_from_a ? "first" : "second";
        best.set_origin =
            best_family == SetFamily::OnlyHere
                ? fmt::format("the values seen in the {} side's building half of the selection share and not in the "
                              "other's", side)
                : fmt::format("the values seen in the {} side's building half of the selection share, its heavy atoms "
                              "(at least {} of {} trials) excluded", side, heavy, xb.n);
    }
    if (score) *score = best_score;
    return best;
}

SelectionHalves split_selection(std::vector<double> trials) {
    SelectionHalves h;
    h.values = std::move(trials);
    h.half = h.values.size() / 2;
    std::sort(h.values.begin(), h.values.begin() + static_cast<std::ptrdiff_t>(h.half));
    std::sort(h.values.begin() + static_cast<std::ptrdiff_t>(h.half), h.values.end());
    return h;
}

void merge_halves(SelectionHalves& h) {
    std::inplace_merge(h.values.begin(), h.values.begin() + static_cast<std::ptrdiff_t>(h.half), h.values.end());
    h.half = 0; // no longer split
}

std::vector<AuditEvent> choose_events(SelectionHalves& a, SelectionHalves& b, std::uint64_t n_eval,
                                      const std::vector<SelectionSpec>& specs, std::vector<double>* scores) {
    std::vector<AuditEvent> sets(specs.size());
    std::vector<double> set_scores(specs.size(), 0.0);
    for (std::size_t i = 0; i < specs.size(); ++i)
        sets[i] = select_set_event(a.build(), b.build(), a.score(), b.score(), n_eval, specs[i], &set_scores[i]);
    merge_halves(a);
    merge_halves(b);
    std::vector<AuditEvent> out;
    if (scores) scores->clear();
    for (std::size_t i = 0; i < specs.size(); ++i) {
        double threshold_score = 0.0;
        AuditEvent threshold = select_event(a.values, b.values, n_eval, specs[i], &threshold_score);
        const bool take_set = set_scores[i] > threshold_score;
        if (scores) scores->push_back(take_set ? set_scores[i] : threshold_score);
        out.push_back(take_set ? std::move(sets[i]) : std::move(threshold));
    }
    return out;
}

AuditEvent choose_event(SelectionHalves& a, SelectionHalves& b, std::uint64_t n_eval, const SelectionSpec& s,
                        double* score) {
    std::vector<double> scores;
    std::vector<AuditEvent> e = choose_events(a, b, n_eval, {s}, &scores);
    if (score) *score = scores[0];
    return std::move(e[0]);
}

EdgeHistogram::EdgeHistogram(std::vector<double> edges) : edges_(std::move(edges)), counts_(2 * edges_.size() + 1, 0) {}

std::size_t EdgeHistogram::bin(double x) const {
    const auto it = std::lower_bound(edges_.begin(), edges_.end(), x);
    const std::size_t j = static_cast<std::size_t>(it - edges_.begin());
    return (it != edges_.end() && *it == x) ? 2 * j + 1 : 2 * j;
}

void EdgeHistogram::add_bins(const std::vector<std::uint64_t>& other) {
    if (other.size() != counts_.size()) throw std::logic_error("EdgeHistogram::add_bins: different edges");
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other[i];
}

std::uint64_t EdgeHistogram::at_least(std::size_t j) const {
    std::uint64_t c = 0;
    for (std::size_t i = 2 * j + 1; i < counts_.size(); ++i) c += counts_[i];
    return c;
}

std::uint64_t EdgeHistogram::at_most(std::size_t j) const {
    std::uint64_t c = 0;
    for (std::size_t i = 0; i <= 2 * j + 1; ++i) c += counts_[i];
    return c;
}

std::uint64_t EdgeHistogram::count(const AuditEvent& e) const {
    const auto it = std::lower_bound(edges_.begin(), edges_.end(), e.threshold);
    if (it == edges_.end() || *it != e.threshold) throw std::logic_error("EdgeHistogram::count: threshold is no edge");
    const std::size_t j = static_cast<std::size_t>(it - edges_.begin());
    return e.upper_tail ? at_least(j) : at_most(j);
}

std::uint64_t EdgeHistogram::total() const {
    std::uint64_t c = 0;
    for (std::uint64_t v : counts_) c += v;
    return c;
}

AuditBound two_sample_audit(const std::vector<double>& a, const std::vector<double>& b, double delta, double alpha,
                           int candidates, BoundKind kind, double selection) {
    if (a.size() < 4 || b.size() < 4) throw std::invalid_argument("two_sample_audit: need at least 4 trials per side");
    if (candidates < 1) throw std::invalid_argument("two_sample_audit: candidates must be >= 1");
    if (!(selection > 0.0 && selection < 1.0)) throw std::invalid_argument("two_sample_audit: selection must be in (0, 1)");
    const auto share = [&](const std::vector<double>& v) {
        const std::size_t m = std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(selection * static_cast<double>(v.size()))),
                                                      1, v.size() - 1);
        return split_selection(std::vector<double>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m)));
    };
    SelectionHalves a1 = share(a), b1 = share(b);
    SelectionSpec s;
    s.kind = kind;
    s.delta = delta;
    s.alpha = alpha;
    s.candidates = candidates;
    double score = 0.0;
    const std::size_t ma = a1.values.size(), mb = b1.values.size();
    const std::uint64_t n_eval = std::min(a.size() - ma, b.size() - mb);
    const AuditEvent e = choose_event(a1, b1, n_eval, s, &score);
    std::uint64_t ka = 0, kb = 0;
    for (std::size_t i = ma; i < a.size(); ++i) ka += e.contains(a[i]);
    for (std::size_t i = mb; i < b.size(); ++i) kb += e.contains(b[i]);
    const std::uint64_t na = a.size() - ma, nb = b.size() - mb;
    AuditBound r = e.a_is_numerator ? bound_from_counts(kind, e, ka, na, kb, nb, delta, alpha)
                                    : bound_from_counts(kind, e, kb, nb, ka, na, delta, alpha);
    r.selection_score = score;
    return r;
}

} // namespace dpr::audit
