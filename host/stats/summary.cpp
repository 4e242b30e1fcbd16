// Summaries of per-instance values: moments in a fixed tree, type-7 quantiles, order-statistic intervals.
#include "host/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/distributions/binomial.hpp>

namespace dpr::stats {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

// ---- Moments -------------------------------------------------------------------------------------------

void Moments::add(double x) {
    ++n;
    const double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
}

void Moments::merge(const Moments& later) {
    if (later.n == 0) return;
    if (n == 0) {
        *this = later;
        return;
    }
    const double na = static_cast<double>(n), nb = static_cast<double>(later.n);
    const double total = na + nb;
    const double delta = later.mean - mean;
    mean += delta * (nb / total);
    m2 += later.m2 + delta * delta * (na * nb / total);
    n += later.n;
}

double Moments::variance() const {
    return n < 2 ? kNaN : m2 / static_cast<double>(n - 1);
}
double Moments::stddev() const {
    return std::sqrt(variance());
}
double Moments::standard_error() const {
    return stddev() / std::sqrt(static_cast<double>(n));
}

// ---- OrderedMoments ------------------------------------------------------------------------------------

void OrderedMoments::push(const Node& node) {
    Node cur = node;
    // Merge with the left sibling while it is on top: the stack then never holds two siblings side by
    // side, which makes it the unique canonical decomposition of [begin, end).
    while (!nodes_.empty()) {
        const Node& top = nodes_.back();
        if (top.level != cur.level || (top.index & 1u) != 0 || top.index + 1 != cur.index) break;
        Node parent;
        parent.level = cur.level + 1;
        parent.index = top.index >> 1;
        parent.moments = top.moments;
        parent.moments.merge(cur.moments);
        nodes_.pop_back();
        cur = parent;
    }
    nodes_.push_back(cur);
}

void OrderedMoments::add(double x) {
    Node leaf;
    leaf.level = 0;
    leaf.index = end_;
    leaf.moments.n = 1;
    leaf.moments.mean = x;
    leaf.moments.m2 = 0.0;
    push(leaf);
    ++end_;
}

void OrderedMoments::add(const double* x, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) add(x[i]);
}

void OrderedMoments::append(const OrderedMoments& next) {
    if (next.begin_ != end_)
        throw std::invalid_argument("OrderedMoments::append: the next range starts at instance " +
                                    std::to_string(next.begin_) + ", not at " + std::to_string(end_));
    for (const Node& node : next.nodes_) push(node);
    end_ = next.end_;
}

OrderedMoments OrderedMoments::from_nodes(std::uint64_t begin, std::uint64_t end,
                                          const std::vector<Node>& nodes) {
    OrderedMoments out(begin);
    std::uint64_t at = begin;
    for (const Node& node : nodes) {
        if (node.level >= 64 || (node.index << node.level) != at ||
            node.moments.n != (std::uint64_t{1} << node.level))
            throw std::invalid_argument("OrderedMoments::from_nodes: nodes do not tile the range");
        out.push(node);
        at += std::uint64_t{1} << node.level;
    }
    if (at != end || out.nodes_.size() != nodes.size())
        throw std::invalid_argument("OrderedMoments::from_nodes: nodes are not the canonical decomposition");
    out.end_ = end;
    return out;
}

Moments OrderedMoments::total() const {
    Moments m;
    for (const Node& node : nodes_) m.merge(node.moments);
    return m;
}

Moments ordered_moments(const double* x, std::size_t count) {
    OrderedMoments acc;
    acc.add(x, count);
    return acc.total();
}

// ---- quantiles -----------------------------------------------------------------------------------------

double quantile_type7(const double* sorted, std::size_t count, double p) {
    if (count == 0) return kNaN;
    const double h = static_cast<double>(count - 1) * p;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    if (lo + 1 >= count) return sorted[count - 1];
    return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

RankInterval quantile_ci_ranks(std::uint64_t n, double p, double confidence) {
    RankInterval r;
    if (n == 0) return r;
    const double tail = (1.0 - confidence) / 2.0;
    const boost::math::binomial_distribution<double> binomial(static_cast<double>(n), p);
    auto F = [&](std::uint64_t k) { return boost::math::cdf(binomial, static_cast<double>(k)); };
    // Lower: the largest k in [0, n] with F(k) <= tail (F is non-decreasing; F(n) = 1); l = k + 1.
    if (F(0) <= tail) {
        std::uint64_t lo = 0, hi = n; // F(lo) <= tail < F(hi)
        while (hi - lo > 1) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            (F(mid) <= tail ? lo : hi) = mid;
        }
        r.lower = lo + 1;
    }
    // Upper: the smallest k with F(k) >= 1 - tail; u = k + 1 must be <= n.
    if (F(n - 1) >= 1.0 - tail) {
        std::uint64_t lo = 0, hi = n - 1; // answer in [0, n-1]
        if (F(0) >= 1.0 - tail) {
            hi = 0;
        } else {
            while (hi - lo > 1) { // F(lo) < 1 - tail <= F(hi)
                const std::uint64_t mid = lo + (hi - lo) / 2;
                (F(mid) >= 1.0 - tail ? hi : lo) = mid;
            }
        }
        r.upper = hi + 1;
    }
    return r;
}

double quantile_ci_coverage(std::uint64_t n, double p, RankInterval ranks) {
    const boost::math::binomial_distribution<double> binomial(static_cast<double>(n), p);
    const double below =
        ranks.lower == 0 ? 0.0 : boost::math::cdf(binomial, static_cast<double>(ranks.lower - 1));
    const double upto =
        ranks.upper == 0 ? 1.0 : boost::math::cdf(binomial, static_cast<double>(ranks.upper - 1));
    return upto - below;
}

namespace {
/// Puts the order statistics of the given (sorted, 0-based, within [first, last)) ranks in place.
void select_ranks(std::vector<double>& v, std::size_t first, std::size_t last, const std::size_t* rank,
                  std::size_t nranks) {
    if (nranks == 0 || last - first < 2) return;
    const std::size_t mid = nranks / 2;
    std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(first),
                     v.begin() + static_cast<std::ptrdiff_t>(rank[mid]),
                     v.begin() + static_cast<std::ptrdiff_t>(last));
    select_ranks(v, first, rank[mid], rank, mid);
    select_ranks(v, rank[mid] + 1, last, rank + mid + 1, nranks - mid - 1);
}
} // namespace

std::vector<std::uint64_t> summary_ranks(std::uint64_t count, double confidence) {
    if (count == 0) return {};
    std::vector<std::uint64_t> ranks = {0, count - 1};
    for (const double p : kQuantileLevels) {
        const double h = static_cast<double>(count - 1) * p;
        const auto lo = static_cast<std::uint64_t>(std::floor(h));
        ranks.push_back(lo);
        if (lo + 1 < count) ranks.push_back(lo + 1);
        const RankInterval ci = quantile_ci_ranks(count, p, confidence);
        if (ci.lower) ranks.push_back(ci.lower - 1);
        if (ci.upper) ranks.push_back(ci.upper - 1);
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return ranks;
}

Summary summary_from_order_statistics(std::uint64_t count, const Moments& m, const std::vector<std::uint64_t>& ranks,
                                      const std::vector<double>& order_stat, double confidence) {
    Summary s;
    s.n = count;
    s.confidence = confidence;
    s.mean = count == 0 ? kNaN : m.mean;
    s.stddev = m.stddev();
    s.standard_error = m.standard_error();
    s.min = s.max = kNaN;
    for (std::size_t q = 0; q < kQuantileLevels.size(); ++q) {
        QuantileEstimate& e = s.quantiles[q];
        e.p = kQuantileLevels[q];
        e.value = e.lower = e.upper = kNaN;
    }
    if (count == 0) return s;
    const auto at = [&](std::uint64_t rank) { // rank is one of `ranks` by construction
        return order_stat[static_cast<std::size_t>(std::lower_bound(ranks.begin(), ranks.end(), rank) - ranks.begin())];
    };
    s.min = at(0);
    s.max = at(count - 1);
    for (std::size_t q = 0; q < kQuantileLevels.size(); ++q) {
        QuantileEstimate& e = s.quantiles[q];
        // type 7, as quantile_type7() computes it from the two neighbours
        const double h = static_cast<double>(count - 1) * e.p;
        const auto lo = static_cast<std::uint64_t>(std::floor(h));
        e.value = lo + 1 >= count ? at(count - 1) : at(lo) + (h - static_cast<double>(lo)) * (at(lo + 1) - at(lo));
        const RankInterval ci = quantile_ci_ranks(count, e.p, confidence);
        e.lower_rank = ci.lower;
        e.upper_rank = ci.upper;
        if (ci.lower) e.lower = at(ci.lower - 1);
        if (ci.upper) e.upper = at(ci.upper - 1);
    }
    return s;
}

Summary summarize(const double* x, std::size_t count, double confidence) {
    bool nan = count == 0;
    for (std::size_t i = 0; i < count && !nan; ++i) nan = std::isnan(x[i]);
    const Moments m = ordered_moments(x, count);
    if (nan) {
        Summary s = summary_from_order_statistics(0, m, {}, {}, confidence);
        s.n = count;
        s.stddev = m.stddev();
        s.standard_error = m.standard_error();
        return s;
    }
    // Only a few order statistics are needed: select them instead of sorting everything.
    const std::vector<std::uint64_t> r64 = summary_ranks(count, confidence);
    const std::vector<std::size_t> ranks(r64.begin(), r64.end());
    std::vector<double> v(count);
    for (std::size_t i = 0; i < count; ++i) v[i] = x[i] + 0.0; // -0 -> +0: which zero nth_element leaves is unspecified
    select_ranks(v, 0, count, ranks.data(), ranks.size());
    std::vector<double> order(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) order[i] = v[ranks[i]];
    return summary_from_order_statistics(count, m, r64, order, confidence);
}

} // namespace dpr::stats
