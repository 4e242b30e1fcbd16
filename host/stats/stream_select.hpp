#pragma once
// Exact order statistics of values that do not fit in memory (dpregret merge --bounded-memory; docs/SCALING.md).
//
// Radix selection over passes: every pass visits every value of every column once, in any order, and fixes the
// next digit of each wanted order statistic's 64-bit key, the double's bits mapped to an unsigned integer whose
// order is the numbers' (negative values complemented, the sign bit of the others set; -0 is taken as +0, as
// summarize() does). After kPasses passes (digits of 12, 13, 13, 13 and 13 bits) every key is complete and the
// value is exact: there is no rank error. Memory: one histogram of 2^13 counts per column per distinct digit
// prefix of its wanted ranks, at most ranks.size() x 64 KiB per column, whatever the number of values.
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dpr::stats {

class StreamSelect {
  public:
    static constexpr int kPasses = 5;

    /// The order statistics of 0-based ranks `ranks` (each < count) of each of `columns` columns of `count` values.
    StreamSelect(std::size_t columns, std::uint64_t count, std::vector<std::uint64_t> ranks);

    /// Whether the values are known (after kPasses passes).
    bool done() const { return pass_ == kPasses; }
    /// Call before each pass's add() calls.
    void begin_pass();
    /// One value of column `c` (in the pass under way). Values must be finite.
    void add(std::size_t c, double x) {
        assert(in_pass_ && c < cols_.size()); // between begin_pass() and end_pass()
        Column& col = cols_[c];
        const std::uint64_t k = key(x);
        const std::uint64_t prefix = known_bits_ == 0 ? 0 : k >> (64 - known_bits_);
        std::size_t g = 0;
        if (col.prefixes.size() > 1) { // few prefixes (<= the ranks): a short binary search
            std::size_t lo = 0, hi = col.prefixes.size();
            while (hi - lo > 1) {
                const std::size_t mid = (lo + hi) / 2;
                (col.prefixes[mid] <= prefix ? lo : hi) = mid;
            }
            g = lo;
        }
        if (col.prefixes[g] != prefix) return;
        const std::uint64_t digit = (k >> (64 - known_bits_ - kWidth[pass_])) & ((std::uint64_t{1} << kWidth[pass_]) - 1);
        ++col.hist[(g << kMaxWidth) + digit];
    }
    /// Call after each pass: fixes the next digit of every wanted rank. Throws std::logic_error if a group of values
    /// (those sharing a wanted rank's known digits) did not hold as many values as the previous pass counted there
    /// (`count` in the first pass): values skipped or added twice.
    void end_pass();

    /// The value of rank ranks[i] in column c (after done()).
    double value(std::size_t c, std::size_t i) const;

    /// The order-preserving key of a finite double (-0 as +0) and back.
    static std::uint64_t key(double x);
    static double from_key(std::uint64_t k);

  private:
    static constexpr int kMaxWidth = 13;
    static constexpr std::array<int, kPasses> kWidth = {12, 13, 13, 13, 13};

    struct Column {
        std::vector<std::uint64_t> prefix_of;   ///< per wanted rank: its key's known top bits
        std::vector<std::uint64_t> rank_within; ///< per wanted rank: its rank among the values with that prefix
        std::vector<std::uint64_t> group_size;  ///< per wanted rank: how many values have that prefix
        std::vector<std::uint64_t> prefixes;    ///< distinct prefixes, ascending (this pass's groups)
        std::vector<std::uint64_t> hist;        ///< prefixes.size() x 2^kMaxWidth counts
    };

    std::vector<std::uint64_t> ranks_;
    std::vector<Column> cols_;
    std::uint64_t count_;
    int pass_ = 0;
    int known_bits_ = 0;
    bool in_pass_ = false;
};

} // namespace dpr::stats
