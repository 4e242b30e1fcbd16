#pragma once
// Helpers shared by the adversary tests: building KeyValues the way the host does, generating rows,
// and the chi-square p-value used by the statistical tests (false-alarm rate 1e-6 each).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>

#include <boost/math/distributions/chi_squared.hpp>
#include <gtest/gtest.h>

#include "kernels/adversaries/common.hpp"
#include "kernels/core/params.hpp"

namespace advtest {

using dpr::KeyValues;
using dpr::Problem;
using dpr::adversaries::SequenceCtx;

inline constexpr double kAlpha = 1e-6; ///< false-alarm rate of every statistical assertion

/// Index of `name` in A's keys, or -1 (works for keyless adversaries too).
template <class A>
int key_of(const char* name) {
    int i = 0;
    for (const dpr::KeySpec& k : A::kKeys) {
        if (std::strcmp(k.name, name) == 0) return i;
        ++i;
    }
    return -1;
}

/// KeyValues with the given numeric keys set (as the host does after its per-key checks); keys left
/// out are "not given".
template <class A>
KeyValues keys(std::initializer_list<std::pair<const char*, double>> set = {}) {
    KeyValues kv;
    for (const auto& [name, v] : set) {
        const int i = key_of<A>(name);
        EXPECT_GE(i, 0) << "no key " << name << " in " << A::kName;
        if (i < 0) continue;
        kv.num[i] = v;
        kv.given[i] = true;
    }
    return kv;
}

/// Sets list key `name` to `values` (which must outlive kv).
template <class A>
void set_list(KeyValues& kv, const char* name, const std::vector<double>& values) {
    const int i = key_of<A>(name);
    ASSERT_GE(i, 0);
    kv.given[i] = true;
    kv.list[i] = values.data();
    kv.list_size[i] = values.size();
}

inline SequenceCtx ctx(std::uint32_t seed, std::uint32_t sequence = dpr::adversaries::kSharedSequence,
                       std::uint32_t stream = 0) {
    return SequenceCtx{seed, stream, sequence};
}

/// Numbers per row of A: d, or d + 1 for the other loss families (kernels/core/sets.hpp), + A::row_extra.
template <class A>
std::size_t width(const typename A::Params& p) {
    return static_cast<std::size_t>(dpr::loss_row_width(dpr::LossFamilyOf<A>::value, p.d) +
                                    dpr::adversaries::row_extra<A>(p));
}

/// Rows t = 1..T of one sequence, row-major (T x width).
template <class A>
std::vector<double> matrix(const typename A::Params& p, const SequenceCtx& c) {
    const std::size_t w = width<A>(p);
    std::vector<double> m(static_cast<std::size_t>(p.T) * w);
    for (std::uint64_t t = 1; t <= p.T; ++t) A::fill(p, c, t, m.data() + (t - 1) * w);
    return m;
}

template <class A>
std::vector<double> row(const typename A::Params& p, const SequenceCtx& c, std::uint64_t t) {
    std::vector<double> r(width<A>(p));
    A::fill(p, c, t, r.data());
    return r;
}

/// Upper-tail p-value of Pearson's chi-square statistic for counts against equal expected counts.
inline double chi_square_uniform_pvalue(const std::vector<long>& counts) {
    double n = 0;
    for (long c : counts) n += static_cast<double>(c);
    const double e = n / static_cast<double>(counts.size());
    double x2 = 0;
    for (long c : counts) x2 += (static_cast<double>(c) - e) * (static_cast<double>(c) - e) / e;
    boost::math::chi_squared_distribution<double> dist(static_cast<double>(counts.size() - 1));
    return boost::math::cdf(boost::math::complement(dist, x2));
}

} // namespace advtest
