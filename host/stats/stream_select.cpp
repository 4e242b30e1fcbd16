#include "host/stats/stream_select.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dpr::stats {

std::uint64_t StreamSelect::key(double x) {
    x += 0.0; // -0 -> +0 (round to nearest), as summarize() does, so that both report the same zero
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return (b >> 63) ? ~b : b | (std::uint64_t{1} << 63);
}

double StreamSelect::from_key(std::uint64_t k) {
    const std::uint64_t b = (k >> 63) ? k & ~(std::uint64_t{1} << 63) : ~k;
    double x;
    std::memcpy(&x, &b, sizeof x);
    return x;
}

StreamSelect::StreamSelect(std::size_t columns, std::uint64_t count, std::vector<std::uint64_t> ranks)
    : ranks_(std::move(ranks)), cols_(columns), count_(count) {
    for (const std::uint64_t r : ranks_)
        if (r >= count) throw std::invalid_argument("StreamSelect: rank " + std::to_string(r) + " of " + std::to_string(count) + " values");
    for (Column& c : cols_) {
        c.prefix_of.assign(ranks_.size(), 0);
        c.rank_within = ranks_;
        c.group_size.assign(ranks_.size(), count);
    }
    if (ranks_.empty()) pass_ = kPasses;
}

void StreamSelect::begin_pass() {
    if (done()) throw std::logic_error("StreamSelect: every pass is done");
    for (Column& c : cols_) {
        c.prefixes = c.prefix_of;
        std::sort(c.prefixes.begin(), c.prefixes.end());
        c.prefixes.erase(std::unique(c.prefixes.begin(), c.prefixes.end()), c.prefixes.end());
        c.hist.assign(c.prefixes.size() << kMaxWidth, 0);
    }
    in_pass_ = true;
}

void StreamSelect::end_pass() {
    const int w = kWidth[pass_];
    for (Column& c : cols_) {
        for (std::size_t i = 0; i < ranks_.size(); ++i) {
            const std::size_t g = static_cast<std::size_t>(
                std::lower_bound(c.prefixes.begin(), c.prefixes.end(), c.prefix_of[i]) - c.prefixes.begin());
            const std::uint64_t* h = c.hist.data() + (g << kMaxWidth);
            const std::uint64_t digits = std::uint64_t{1} << w;
            std::uint64_t total = 0;
            for (std::uint64_t d = 0; d < digits; ++d) total += h[d];
            if (total != c.group_size[i])
                throw std::logic_error("StreamSelect: pass " + std::to_string(pass_ + 1) + " saw " + std::to_string(total) +
                                       " values of a group that holds " + std::to_string(c.group_size[i]) +
                                       " (each value must be added once per pass)");
            std::uint64_t below = 0, d = 0;
            while (below + h[d] <= c.rank_within[i]) below += h[d++]; // stops: rank_within < group_size = total
            c.rank_within[i] -= below;
            c.group_size[i] = h[d];
            c.prefix_of[i] = (c.prefix_of[i] << w) | d;
        }
    }
    in_pass_ = false;
    known_bits_ += w;
    ++pass_;
}

double StreamSelect::value(std::size_t c, std::size_t i) const {
    if (!done()) throw std::logic_error("StreamSelect: value() before the last pass");
    return from_key(cols_[c].prefix_of[i]);
}

} // namespace dpr::stats
