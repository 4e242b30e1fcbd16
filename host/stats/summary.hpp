#pragma once
// Summaries of per-instance values (docs/ARCHITECTURE.md §4): count, mean, standard deviation, standard error, and
// the 5/25/50/75/95% quantiles with distribution-free confidence intervals.
//
// Moments. Moments::add is Welford's update and Moments::merge is Chan, Golub & LeVeque's pairwise
// formula. Floating-point merges are not associative, so a result that must not depend on how the
// instances were split (threads, chunks, shards, GPUs) is accumulated with OrderedMoments: the values are
// the leaves of a fixed binary tree over the instance indices, each node is Chan's merge of its two
// children, and the total folds the canonical nodes of [0, n) from left to right. Any split of [0, n) into
// contiguous ranges, accumulated separately and appended in any grouping, gives bitwise the same
// (n, mean, M2) as one pass over [0, n) -- and the tree makes the rounding error O(log n) rather than O(n).
//
// Quantiles. The point estimate is Hyndman & Fan's type 7 (R's and NumPy's default): with the sorted values
// x_(1) <= ... <= x_(n) and h = (n - 1) p, Q(p) = x_(floor h + 1) + (h - floor h)(x_(floor h + 2) - x_(floor
// h + 1)). The confidence interval is for the population quantile q_p and uses order statistics only (e.g.
// Hahn & Meeker, Statistical Intervals, §5.2): with B ~ Binomial(n, p) and F its CDF,
//   P(x_(l) <= q_p <= x_(u)) = P(l <= B <= u - 1) = F(u - 1) - F(l - 1)
// for a continuous distribution (and at least that for a discrete one). We take equal tails:
//   l = 1 + max{k : F(k) <= a/2},  u = 1 + min{k : F(k) >= 1 - a/2},  a = 1 - confidence,
// so the coverage is at least `confidence`. A bound whose rank would fall outside [1, n] (n too small
// for p) is NaN, meaning unbounded on that side; the other bound alone still has coverage >= 1 - a/2.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dpr::stats {

/// Count, mean and sum of squared deviations from the mean (M2) of a set of values.
struct Moments {
    std::uint64_t n = 0;
    double mean = 0.0;
    double m2 = 0.0;

    /// Welford's update with one value.
    void add(double x);
    /// Chan et al.'s merge; *this holds the values that come first. Empty operands are exact no-ops.
    void merge(const Moments& later);
    /// Sample variance M2 / (n - 1); NaN for n < 2.
    double variance() const;
    /// Sample standard deviation; NaN for n < 2.
    double stddev() const;
    /// Standard error of the mean, stddev / sqrt(n); NaN for n < 2.
    double standard_error() const;
};

/// Moments of the values of the instances [begin, end), accumulated in a tree fixed by the instance
/// indices (see the header comment): the result does not depend on how [begin, end) was split.
class OrderedMoments {
  public:
    /// One node of the tree: the instances [index * 2^level, (index + 1) * 2^level).
    struct Node {
        std::uint32_t level = 0;
        std::uint64_t index = 0;
        Moments moments;
    };

    /// An empty range starting at instance `begin`.
    explicit OrderedMoments(std::uint64_t begin = 0) : begin_(begin), end_(begin) {}

    /// Adds the value of instance end(); end() advances by one.
    void add(double x);
    /// Adds the values of instances end(), ..., end() + count - 1.
    void add(const double* x, std::size_t count);
    /// Appends the range of `next`, which must start at end() (std::invalid_argument otherwise).
    void append(const OrderedMoments& next);

    std::uint64_t begin() const { return begin_; }
    std::uint64_t end() const { return end_; }
    /// The canonical nodes covering [begin, end), left to right (for serialising partial results).
    const std::vector<Node>& nodes() const { return nodes_; }
    /// Rebuilds an accumulator from nodes() of one (std::invalid_argument if they are not canonical).
    static OrderedMoments from_nodes(std::uint64_t begin, std::uint64_t end, const std::vector<Node>& nodes);

    /// The moments of all values: the canonical nodes merged from left to right.
    Moments total() const;

  private:
    void push(const Node& node);

    std::uint64_t begin_ = 0, end_ = 0;
    std::vector<Node> nodes_;
};

/// Moments of x[0..count) as instances 0..count-1 (OrderedMoments), so equal to any split of them.
Moments ordered_moments(const double* x, std::size_t count);

/// The probability levels of Summary::quantiles.
inline constexpr std::array<double, 5> kQuantileLevels = {0.05, 0.25, 0.50, 0.75, 0.95};

struct QuantileEstimate {
    double p = 0.0;               ///< probability level
    double value = 0.0;           ///< type-7 sample quantile
    double lower = 0.0;           ///< x_(lower_rank): lower confidence bound for q_p; NaN if unavailable
    double upper = 0.0;           ///< x_(upper_rank): upper confidence bound for q_p; NaN if unavailable
    std::uint64_t lower_rank = 0; ///< 1-based rank of the lower bound; 0 if unavailable
    std::uint64_t upper_rank = 0; ///< 1-based rank of the upper bound; 0 if unavailable
};

struct Summary {
    std::uint64_t n = 0;
    double mean = 0.0;           ///< NaN for n = 0
    double stddev = 0.0;         ///< sample standard deviation; NaN for n < 2
    double standard_error = 0.0; ///< stddev / sqrt(n); NaN for n < 2
    double min = 0.0, max = 0.0; ///< NaN for n = 0
    double confidence = 0.95;    ///< of the quantile intervals
    std::array<QuantileEstimate, kQuantileLevels.size()> quantiles{};
};

/// Summary of x[0..count), taken as the values of instances 0..count-1 in that order. If any value is
/// NaN, the mean is NaN and so are min, max and every quantile and bound (ranks 0). An order statistic that is
/// a zero is reported as +0, whichever zeros the values hold.
Summary summarize(const double* x, std::size_t count, double confidence = 0.95);
inline Summary summarize(const std::vector<double>& x, double confidence = 0.95) {
    return summarize(x.data(), x.size(), confidence);
}

/// The 0-based ranks whose order statistics summarize() reads for `count` values, ascending and distinct: 0 and
/// count - 1 (min, max), floor(h) and floor(h) + 1 of every level (type 7) and the ranks of its interval bounds.
std::vector<std::uint64_t> summary_ranks(std::uint64_t count, double confidence = 0.95);

/// summarize() of `count` finite values from their moments in instance order (ordered_moments) and their order
/// statistics: order_stat[i] is the value of rank ranks[i], ranks = summary_ranks(count, confidence), -0 taken as +0.
/// For values read in passes (host/stats/stream_select.hpp); summarize() itself goes through it.
Summary summary_from_order_statistics(std::uint64_t count, const Moments& m, const std::vector<std::uint64_t>& ranks,
                                      const std::vector<double>& order_stat, double confidence = 0.95);

/// Type-7 quantile of sorted (ascending) values; NaN for count = 0.
double quantile_type7(const double* sorted, std::size_t count, double p);

/// 1-based ranks (l, u) of the order-statistic interval for the p-quantile of n values at the given
/// confidence (see the header comment); 0 for a side that is unavailable.
struct RankInterval {
    std::uint64_t lower = 0;
    std::uint64_t upper = 0;
};
RankInterval quantile_ci_ranks(std::uint64_t n, double p, double confidence = 0.95);

/// P(x_(l) <= q_p <= x_(u)) for n values from a continuous distribution: F(u - 1) - F(l - 1) with
/// B ~ Binomial(n, p); an unavailable side counts as unbounded.
double quantile_ci_coverage(std::uint64_t n, double p, RankInterval ranks);

} // namespace dpr::stats
