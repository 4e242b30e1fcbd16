#include "host/audit/epsilon_bound.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <boost/math/distributions/beta.hpp>
#include <fmt/format.h>

namespace dpr::audit {

namespace {

void check_args(std::uint64_t k, std::uint64_t n, double a) {
    if (n == 0 || k > n) throw std::invalid_argument(fmt::format("Clopper-Pearson: need 0 <= k <= n, n > 0 (k = {}, n = {})", k, n));
    if (!(a > 0.0 && a < 1.0)) throw std::invalid_argument(fmt::format("Clopper-Pearson: error a must be in (0, 1) (got {})", a));
}

/// Counts of {x >= t} and {x <= t} in a sorted sample.
std::uint64_t count_at_least(const std::vector<double>& s, double t) {
    return static_cast<std::uint64_t>(s.end() - std::lower_bound(s.begin(), s.end(), t));
}
std::uint64_t count_at_most(const std::vector<double>& s, double t) {
    return static_cast<std::uint64_t>(std::upper_bound(s.begin(), s.end(), t) - s.begin());
}
std::uint64_t count(const std::vector<double>& s, const ThresholdEvent& e) {
    return e.upper_tail ? count_at_least(s, e.threshold) : count_at_most(s, e.threshold);
}

} // namespace

double cp_lower(std::uint64_t k, std::uint64_t n, double a) {
    check_args(k, n, a);
    if (k == 0) return 0.0;
    const boost::math::beta_distribution<double> beta(static_cast<double>(k), static_cast<double>(n - k + 1));
    return boost::math::quantile(beta, a);
}

double cp_upper(std::uint64_t k, std::uint64_t n, double a) {
    check_args(k, n, a);
    if (k == n) return 1.0;
    const boost::math::beta_distribution<double> beta(static_cast<double>(k + 1), static_cast<double>(n - k));
    return boost::math::quantile(boost::math::complement(beta, a));
}

double epsilon_lower_bound(std::uint64_t k1, std::uint64_t n1, std::uint64_t k0, std::uint64_t n0, double delta,
                           double alpha) {
    if (!(alpha > 0.0 && alpha < 1.0)) throw std::invalid_argument(fmt::format("alpha must be in (0, 1) (got {})", alpha));
    if (!(delta >= 0.0 && delta < 1.0)) throw std::invalid_argument(fmt::format("delta must be in [0, 1) (got {})", delta));
    const double num = cp_lower(k1, n1, alpha / 2) - delta;
    const double den = cp_upper(k0, n0, alpha / 2);
    if (!(num > 0.0)) return 0.0;
    return std::max(0.0, std::log(num / den));
}

std::string ThresholdEvent::describe() const {
    return fmt::format("X {} {:.17g}, P[first] {} P[second]", upper_tail ? ">=" : "<=", threshold,
                       a_is_numerator ? "over" : "under");
}

AuditBound threshold_audit(const std::vector<double>& a, const std::vector<double>& b, double delta, double alpha,
                           int candidates) {
    if (a.size() < 4 || b.size() < 4) throw std::invalid_argument("threshold_audit: need at least 4 trials per side");
    if (candidates < 1) throw std::invalid_argument("threshold_audit: candidates must be >= 1");
    const auto half = [](const std::vector<double>& v, bool second) {
        const std::size_t m = v.size() / 2;
        std::vector<double> h(second ? v.begin() + static_cast<std::ptrdiff_t>(m) : v.begin(),
                              second ? v.end() : v.begin() + static_cast<std::ptrdiff_t>(m));
        std::sort(h.begin(), h.end());
        return h;
    };
    const std::vector<double> a1 = half(a, false), b1 = half(b, false), a2 = half(a, true), b2 = half(b, true);
    std::vector<double> pooled(a1);
    pooled.insert(pooled.end(), b1.begin(), b1.end());
    std::sort(pooled.begin(), pooled.end());
    AuditBound best;
    best.delta = delta;
    best.alpha = alpha;
    double best_score = -1.0;
    for (int i = 1; i <= candidates; ++i) {
        const std::size_t q = static_cast<std::size_t>(static_cast<double>(i) / (candidates + 1) * pooled.size());
        const double t = pooled[std::min(q, pooled.size() - 1)];
        for (bool upper : {true, false})
            for (bool a_num : {true, false}) {
                const ThresholdEvent e{upper, t, a_num};
                const std::vector<double>& num = a_num ? a1 : b1;
                const std::vector<double>& den = a_num ? b1 : a1;
                const double s = epsilon_lower_bound(count(num, e), num.size(), count(den, e), den.size(), delta, alpha);
                if (s > best_score) best_score = s, best.event = e;
            }
    }
    const std::vector<double>& num = best.event.a_is_numerator ? a2 : b2;
    const std::vector<double>& den = best.event.a_is_numerator ? b2 : a2;
    best.k1 = count(num, best.event);
    best.n1 = num.size();
    best.k0 = count(den, best.event);
    best.n0 = den.size();
    best.epsilon_lb = epsilon_lower_bound(best.k1, best.n1, best.k0, best.n0, delta, alpha);
    return best;
}

} // namespace dpr::audit
