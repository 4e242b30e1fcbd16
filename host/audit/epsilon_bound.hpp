#pragma once
// The statistics of an empirical DP audit (docs/AUDITS.md "The bound"): a lower bound on the privacy parameter of a
// mechanism from how often an event happens on two neighbouring inputs, at a stated confidence, and the event
// search that picks the event on a selection share of the trials and counts it on the rest (no selection bias).
// Two families of events: thresholds {X >= x} / {X <= x}, and sets {X in S} of values seen on the selection share
// (docs/AUDITS.md "Set events"), which see what no threshold can: a mechanism whose outputs under D and D' fall on
// different subsets of a grid (the floating-point attack of Mironov, CCS 2012). This is the statistical core; host/audit/learner_audit.hpp applies it to whole learners
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

/// An event on a scalar statistic X: a threshold, {X >= threshold} (upper tail) or {X <= threshold}, or a set,
/// {X in set} for a finite set of values; `a_is_numerator`: the bound puts the first sample's probability in the
/// numerator (p1), else the second's.
struct AuditEvent {
    enum class Kind { Threshold, Set };
    Kind kind = Kind::Threshold;
    bool upper_tail = true;  ///< threshold events
    double threshold = 0.0;  ///< threshold events
    std::vector<double> set; ///< set events: sorted, distinct (filled for the event chosen, see select_set_event)
    std::string set_origin;  ///< set events: how the set was chosen, for audit.json
    bool a_is_numerator = true;
    /// X in the event.
    bool contains(double x) const;
    std::string describe() const;
    const char* kind_name() const { return kind == Kind::Set ? "set" : "threshold"; }
};

struct AuditBound {
    BoundKind kind = BoundKind::EpsDelta;
    double epsilon_lb = 0.0;   ///< eps-delta: the bound; gdp: eps(delta) of mu_lb-GDP
    double mu_lb = 0.0;        ///< gdp only
    AuditEvent event;      ///< chosen on the selection share
    double selection_score = 0.0; ///< the bound the selection share projected for the event
    std::uint64_t k1 = 0, n1 = 0, k0 = 0, n0 = 0; ///< evaluation counts (numerator side 1, denominator side 0)
    double delta = 0.0, alpha = 0.05;
};

/// The bound of `kind` from evaluation counts (epsilon_lb and mu_lb filled as AuditBound says).
AuditBound bound_from_counts(BoundKind kind, const AuditEvent& e, std::uint64_t k1, std::uint64_t n1,
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
    /// Set events: a value that makes up at least this share of a building half (and at least 2 trials) is a
    /// heavy atom (a clip bound, a value the mechanism takes with large probability on both sides), left out of the
    /// "seen, heavy atoms excluded" sets.
    double heavy_share = 1e-3;
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
AuditEvent select_event(const std::vector<double>& a_sorted, const std::vector<double>& b_sorted,
                            std::uint64_t n_eval, const SelectionSpec& s, double* score = nullptr);

/// Set events (docs/AUDITS.md "Set events"), chosen on a selection share split in two halves per side, each sorted:
/// the building halves propose the sets, the scoring halves score them (a set built from a sample always holds that
/// sample, so it is scored on other trials). For each side X (with Y the other): S = the values seen in X's
/// building half and not in Y's ("seen only under X"), and S = the values seen in X's building half but its heavy
/// atoms; each in both orientations, scored as select_event scores thresholds. Returns the best event with its set
/// filled (empty with *score = 0 when no set scores above 0: a continuous statistic, whose values do not repeat).
struct SortedValues { ///< a sorted run of values held elsewhere
    const double* p = nullptr;
    std::size_t n = 0;
};
AuditEvent select_set_event(SortedValues a_build, SortedValues b_build, SortedValues a_score, SortedValues b_score,
                            std::uint64_t n_eval, const SelectionSpec& s, double* score = nullptr);

/// A side's selection share in trial order, split for the two event families: the first half (`build`) and the rest
/// (`score`), each sorted; merge_halves() then makes the whole share sorted (for the thresholds) in place.
struct SelectionHalves {
    std::vector<double> values; ///< [0, half) and [half, size) sorted separately; all sorted after merge_halves()
    std::size_t half = 0;
    SortedValues build() const { return {values.data(), half}; }
    SortedValues score() const { return {values.data() + half, values.size() - half}; }
};
/// Sorts the two halves of a selection share given in trial order.
SelectionHalves split_selection(std::vector<double> trials);
void merge_halves(SelectionHalves& h);

/// The event a selection share chooses among both families: the best threshold event (select_event, on the whole
/// shares) and the best set event (select_set_event, on their halves), the higher score winning (the threshold on
/// ties). `a` and `b` are split_selection's output; they end merged (sorted whole).
AuditEvent choose_event(SelectionHalves& a, SelectionHalves& b, std::uint64_t n_eval, const SelectionSpec& s,
                        double* score = nullptr);

/// choose_event for several specs on the same shares, each scoring its own event (the (eps, delta) curve chooses one
/// per delta): every spec's set event is selected on the halves before they are merged, then every spec's threshold.
/// choose_event is this with one spec. `scores` (if given) receives each event's selection score.
std::vector<AuditEvent> choose_events(SelectionHalves& a, SelectionHalves& b, std::uint64_t n_eval,
                                      const std::vector<SelectionSpec>& specs, std::vector<double>* scores = nullptr);

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
    std::uint64_t count(const AuditEvent& e) const;   ///< e.threshold must be an edge
    std::uint64_t total() const;
    const std::vector<double>& edges() const { return edges_; }
    const std::vector<std::uint64_t>& counts() const { return counts_; }

  private:
    std::vector<double> edges_;
    std::vector<std::uint64_t> counts_;
};

/// The audit of two in-memory samples `a` (statistic under D) and `b` (under D'): the first ceil(selection * size)
/// values of each are the selection share (choose_event: threshold and set events), the rest are counted against the
/// chosen event. Samples in given order (the caller's trials are independent, so the shares are too).
AuditBound two_sample_audit(const std::vector<double>& a, const std::vector<double>& b, double delta, double alpha,
                           int candidates = 256, BoundKind kind = BoundKind::EpsDelta, double selection = 0.2);

} // namespace dpr::audit
