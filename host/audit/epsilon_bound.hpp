#pragma once
// The statistics of an empirical DP audit (docs/AUDITS.md "The bound"): a lower bound on the privacy parameter of a
// mechanism from how often an event happens on two neighbouring inputs, at a stated confidence, and the
// threshold-event search that picks the event on a selection share of the trials and counts it on the rest (no
// selection bias). This is the statistical core; host/audit/learner_audit.hpp applies it to whole learners
// (`dpregret audit`).
//
// Two bounds from the same counts (k1 of n1 trials in the event on the numerator side, k0 of n0 on the other; the
// probabilities p1 >= CP_lower(k1, n1, alpha/2) and p0 <= CP_upper(k0, n0, alpha/2) together with probability
// >= 1 - alpha, Bonferroni):
//   eps-delta: every (eps, delta)-DP mechanism has p1 <= e^eps p0 + delta for every event, so
//       eps_lb = ln((CP_lower(k1, n1, alpha/2) - delta) / CP_upper(k0, n0, alpha/2)),   0 when the numerator <= 0.
//   gdp: a mu-Gaussian-DP mechanism (Dong, Roth & Su 2019, Def. 2.6) has, for the test that rejects on the event,
//       type II error 1 - p1 >= Phi(Phi^-1(1 - p0) - mu), i.e. mu >= Phi^-1(p1) - Phi^-1(p0), so
//       mu_lb = Phi^-1(CP_lower(k1, n1, alpha/2)) - Phi^-1(CP_upper(k0, n0, alpha/2)),     0 when negative;
//       reported also as eps(delta) of mu_lb-GDP at the claim's delta (their Cor. 2.13).
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
/// mu_lb of the header (Gaussian DP) for the same counts.
double gdp_mu_lower_bound(std::uint64_t k1, std::uint64_t n1, std::uint64_t k0, std::uint64_t n0, double alpha);

/// delta(eps) of mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth & Su 2019, Cor. 2.13).
double gdp_delta(double mu, double eps);
/// The smallest eps >= 0 with gdp_delta(mu, eps) <= delta (0 for mu = 0), to a relative 1e-12.
double gdp_epsilon(double mu, double delta);

/// Which bound an audit computes (`[audit] bound`).
enum class BoundKind { EpsDelta, Gdp };
const char* bound_kind_name(BoundKind k);

/// An event on a scalar statistic X: {X >= threshold} (upper tail) or {X <= threshold}; `a_is_numerator`: the
/// bound puts the first sample's probability in the numerator (p1), else the second's.
struct ThresholdEvent {
    bool upper_tail = true;
    double threshold = 0.0;
    bool a_is_numerator = true;
    std::string describe() const;
};

struct AuditBound {
    BoundKind kind = BoundKind::EpsDelta;
    double epsilon_lb = 0.0;   ///< eps-delta: the bound; gdp: eps(delta) of mu_lb-GDP
    double mu_lb = 0.0;        ///< gdp only
    ThresholdEvent event;      ///< chosen on the selection share
    double selection_score = 0.0; ///< the bound the selection share projected for the event
    std::uint64_t k1 = 0, n1 = 0, k0 = 0, n0 = 0; ///< evaluation counts (numerator side 1, denominator side 0)
    double delta = 0.0, alpha = 0.05;
};

/// The bound of `kind` from evaluation counts (epsilon_lb and mu_lb filled as AuditBound says).
AuditBound bound_from_counts(BoundKind kind, const ThresholdEvent& e, std::uint64_t k1, std::uint64_t n1,
                             std::uint64_t k0, std::uint64_t n0, double delta, double alpha);

/// Throws std::invalid_argument naming `[audit] alpha` when a bound at confidence 1 - alpha cannot be computed
/// for counts out of n trials (Boost's beta quantile fails for alpha far below 1e-100 at large n).
void check_alpha_computable(double alpha, std::uint64_t n, BoundKind kind);

/// How the event is chosen (docs/AUDITS.md "Choosing the event").
struct SelectionSpec {
    BoundKind kind = BoundKind::EpsDelta;
    double delta = 0.0, alpha = 0.05;
    int candidates = 256;       ///< thresholds tried (each in both tails and both orientations)
    double min_expected = 50.0; ///< the grid reaches tail probabilities down to min_expected / n_eval
    double gamma = 0.05;        ///< one-sided error of the selection counts' conservative projections
};

/// The k-th smallest (0-based) of the union of two sorted samples.
double kth_of_two(const std::vector<double>& a, const std::vector<double>& b, std::uint64_t k);

/// Candidate thresholds from the sorted selection samples: every distinct value when there are at most
/// `candidates`, else pooled order statistics at tail probabilities q geometric from max(min_expected / n_eval,
/// 1 / pooled size) to 1/2, mirrored (q and 1 - q); sorted, distinct.
std::vector<double> candidate_thresholds(const std::vector<double>& a_sorted, const std::vector<double>& b_sorted,
                                         std::uint64_t n_eval, const SelectionSpec& s);

/// Chooses the event on the sorted selection samples: each candidate threshold, both tails, both orientations,
/// scored by the bound that `n_eval` evaluation trials per side would give if they showed the selection's
/// conservative rates (CP_lower of the numerator's count, CP_upper of the denominator's, each at error gamma: a
/// rate seen in a few selection trials is not trusted). Returns the event with the highest score (the first in
/// grid order on ties) and sets *score.
ThresholdEvent select_event(const std::vector<double>& a_sorted, const std::vector<double>& b_sorted,
                            std::uint64_t n_eval, const SelectionSpec& s, double* score = nullptr);

/// Counts of a stream of values against sorted distinct `edges`, in 2E + 1 bins: bin 2j + 1 holds x == edges[j],
/// bin 2j the values strictly between edges[j-1] and edges[j]. Tail counts at every edge follow exactly, so the
/// trials themselves need not be kept.
class EdgeHistogram {
  public:
    EdgeHistogram() = default;
    explicit EdgeHistogram(std::vector<double> edges); ///< sorted, distinct, finite
    std::size_t bin(double x) const;
    void add(double x) { ++counts_[bin(x)]; }
    void add_bins(const std::vector<std::uint64_t>& other); ///< adds another histogram's counts (same edges)
    std::uint64_t at_least(std::size_t j) const;          ///< #{x >= edges[j]}
    std::uint64_t at_most(std::size_t j) const;           ///< #{x <= edges[j]}
    std::uint64_t count(const ThresholdEvent& e) const;   ///< e.threshold must be an edge
    std::uint64_t total() const;
    const std::vector<double>& edges() const { return edges_; }
    const std::vector<std::uint64_t>& counts() const { return counts_; }

  private:
    std::vector<double> edges_;
    std::vector<std::uint64_t> counts_;
};

/// The threshold audit of two in-memory samples `a` (statistic under D) and `b` (under D'): the first
/// ceil(selection * size) values of each are the selection share (select_event), the rest are counted against the
/// chosen event. Samples in given order (the caller's trials are independent, so the shares are too).
AuditBound threshold_audit(const std::vector<double>& a, const std::vector<double>& b, double delta, double alpha,
                           int candidates = 256, BoundKind kind = BoundKind::EpsDelta, double selection = 0.2);

} // namespace dpr::audit
