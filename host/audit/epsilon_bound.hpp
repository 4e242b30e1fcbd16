#pragma once
// The statistics of an empirical DP audit (issue 10 items 3-4; TESTING.md "what trusted auditors do"): a lower
// bound on the eps of a mechanism from how often an event happens on two neighbouring inputs, at a stated
// confidence, and the threshold-event search that picks the event on one half of the trials and evaluates it on
// the other (no selection bias). This is the statistical core; host/audit/learner_audit.hpp applies it to whole
// learners (`dpregret audit`).
//
// For an (eps, delta)-DP mechanism M and neighbours D, D', every event E has P[M(D) in E] <= e^eps P[M(D') in E] +
// delta, so eps >= ln((p1 - delta) / p0) with p1 = P[M(D) in E], p0 = P[M(D') in E]. With k1 of n1 and k0 of n0
// trials in E, the bound at confidence 1 - alpha replaces p1 by its one-sided Clopper-Pearson lower bound and p0 by
// its upper bound, each at error alpha / 2 (Bonferroni):
//     eps_lb = ln((CP_lower(k1, n1, alpha/2) - delta) / CP_upper(k0, n0, alpha/2)),   0 when the numerator <= 0.
// Clopper-Pearson: CP_lower(k, n, a) = the a-quantile of Beta(k, n - k + 1) (0 for k = 0), CP_upper(k, n, a) = the
// (1 - a)-quantile of Beta(k + 1, n - k) (1 for k = n); exact (conservative) for every n. Boost.Math's beta quantile.
#include <cstdint>
#include <string>
#include <vector>

namespace dpr::audit {

/// One-sided Clopper-Pearson lower bound of a binomial proportion: P[p < cp_lower(k, n, a)] <= a.
double cp_lower(std::uint64_t k, std::uint64_t n, double a);
/// One-sided Clopper-Pearson upper bound: P[p > cp_upper(k, n, a)] <= a.
double cp_upper(std::uint64_t k, std::uint64_t n, double a);

/// eps_lb of the header for an event seen k1 of n1 times on one side and k0 of n0 times on the other.
double epsilon_lower_bound(std::uint64_t k1, std::uint64_t n1, std::uint64_t k0, std::uint64_t n0, double delta,
                           double alpha);

/// An event on a scalar statistic X: {X >= threshold} (upper tail) or {X <= threshold}; `a_is_numerator`: the
/// bound puts the first sample's probability in the numerator (p1), else the second's.
struct ThresholdEvent {
    bool upper_tail = true;
    double threshold = 0.0;
    bool a_is_numerator = true;
    std::string describe() const;
};

struct AuditBound {
    double epsilon_lb = 0.0;   ///< on the evaluation half
    ThresholdEvent event;      ///< chosen on the selection half
    std::uint64_t k1 = 0, n1 = 0, k0 = 0, n0 = 0; ///< evaluation counts (numerator side 1, denominator side 0)
    double delta = 0.0, alpha = 0.05;
};

/// The threshold audit: samples `a` (statistic under D) and `b` (under D') are each cut in two halves (first
/// half: selection, second: evaluation). On the selection halves every event {X >= t}, {X <= t} with t at
/// `candidates` quantiles of the pooled selection samples, in both directions (a over b and b over a), is scored
/// by its eps_lb; the best is counted on the evaluation halves and its eps_lb returned. Samples in given order
/// (the caller's trials are independent, so the halves are too).
AuditBound threshold_audit(const std::vector<double>& a, const std::vector<double>& b, double delta, double alpha,
                           int candidates = 64);

} // namespace dpr::audit
