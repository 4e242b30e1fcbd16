#pragma once
// A small statistical-test toolkit for the sampler, stream and mechanism tests (docs/ARCHITECTURE.md §7,
// "Randomness and samplers"). Every test here runs at a stated false-alarm rate, kAlpha = 1e-6
// unless a caller says otherwise, on fixed seeds, so a failure is a finding, not bad luck.
//
//   ks_one_sample    Kolmogorov-Smirnov D_n = sup |F_n - F| against an exact CDF, p-value from the
//                    asymptotic Kolmogorov law with Stephens' finite-n correction (see below)
//   ks_two_sample    two-sample KS, same law with the effective size n m / (n + m)
//   chi_square_gof   Pearson chi-square goodness of fit; every bin with positive probability must
//                    expect >= 5 counts, a count in a bin of probability 0 is an outright failure
//   wilson_interval  Wilson score interval for a binomial proportion at confidence 1 - alpha
//   pearson          sample correlation coefficient
//   detect_stream_reuse   flags noise vectors that share randomness (identical, shifted, repeated
//                    or perfectly correlated draws), the bug class Tumult Core's "noise repeated
//                    200x" test catches
//   draw_samples     one sample per element stream StreamId{seed, purpose Test, element = i},
//                    filled by a few threads (the result does not depend on the thread count)
//
// Kolmogorov p-value. Boost 1.74 (the version we build against) has no
// kolmogorov_smirnov_distribution (it arrived in Boost 1.75), so the survival function of the
// Kolmogorov distribution K = lim sqrt(n) D_n is computed from its two classical series:
//     P(K > x) = 2 sum_{j>=1} (-1)^{j-1} exp(-2 j^2 x^2)                     (x >= 1, alternating)
//     P(K <= x) = sqrt(2 pi) / x sum_{j>=1} exp(-(2j-1)^2 pi^2 / (8 x^2))    (x < 1)
// (Kolmogorov 1933; e.g. Marsaglia, Tsang & Wang, J. Stat. Softw. 8(18), 2003). Both converge
// to double precision within a handful of terms in their ranges. The finite-n argument is
// x = (sqrt(n) + 0.12 + 0.11 / sqrt(n)) D (Stephens 1970; Numerical Recipes' `probks`). The error of
// the asymptotic law is O(1/sqrt(n)) and the correction removes most of it; our tests use n >= 1e5,
// where the difference from the exact finite-n law is far below anything that moves a decision at
// alpha = 1e-6 (the meta-tests sit at p < 1e-30, the accepted samples at p > 0.1).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/poisson.hpp>

#include "kernels/rng/stream.hpp"
#include "kernels/rng/uniform.hpp"

namespace dpr::test {

/// False-alarm rate of every statistical test unless stated otherwise (OpenDP's convention).
inline constexpr double kAlpha = 1e-6;

// ---- Kolmogorov-Smirnov -------------------------------------------------------------------------

/// P(K > x) for the Kolmogorov distribution K (the limit law of sqrt(n) D_n).
inline double kolmogorov_sf(double x) {
    if (!(x > 0.0)) return 1.0;
    if (x < 1.0) {
        // Theta-function form of the CDF; the alternating series converges slowly here.
        const double pi = 3.14159265358979323846;
        const double w = pi * pi / (8.0 * x * x);
        double cdf = 0.0;
        for (int j = 1; j <= 20; ++j) {
            const double t = std::exp(-(2.0 * j - 1.0) * (2.0 * j - 1.0) * w);
            cdf += t;
            if (t < 1e-18 * cdf) break;
        }
        cdf *= std::sqrt(2.0 * pi) / x;
        return std::clamp(1.0 - cdf, 0.0, 1.0);
    }
    double sf = 0.0;
    for (int j = 1; j <= 100; ++j) {
        const double t = std::exp(-2.0 * j * j * x * x);
        sf += (j % 2 == 1) ? t : -t;
        if (t <= 1e-18 * sf || t == 0.0) break;
    }
    return std::clamp(2.0 * sf, 0.0, 1.0);
}

/// p-value of a KS statistic d from a sample of (effective) size n.
inline double ks_pvalue(double d, double n) {
    const double s = std::sqrt(n);
    return kolmogorov_sf((s + 0.12 + 0.11 / s) * d);
}

struct KsResult {
    double d = 0; ///< sup |F_n - F|
    double p = 1; ///< asymptotic p-value (see the header comment)
    double n = 0; ///< (effective) sample size
    std::string str() const {
        std::ostringstream o;
        o.precision(6);
        o << "D = " << d << ", sqrt(n) D = " << std::sqrt(n) * d << ", p = " << p << " (n = " << n << ")";
        return o.str();
    }
};

/// One-sample KS statistic of `sorted` (ascending) against the continuous CDF `cdf`. The CDF is
/// evaluated on a few threads (it must be a pure function); the statistic does not depend on them.
template <class Cdf>
KsResult ks_one_sample_sorted(const std::vector<double>& sorted, Cdf&& cdf) {
    const std::size_t n = sorted.size();
    if (n == 0) throw std::invalid_argument("ks_one_sample: empty sample");
    const double nd = static_cast<double>(n);
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t threads = std::min<std::size_t>(std::min(hw, 8u), std::max<std::size_t>(1, n / 65536));
    std::vector<double> dmax(threads, 0.0);
    std::vector<char> bad(threads, 0);
    auto work = [&](std::size_t t) {
        double d = 0.0;
        for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
            const double f = cdf(sorted[i]);
            if (!(f >= 0.0 && f <= 1.0)) bad[t] = 1;
            // Both one-sided gaps at the jump of F_n at x_(i).
            d = std::max(d, std::max(static_cast<double>(i + 1) / nd - f, f - static_cast<double>(i) / nd));
        }
        dmax[t] = d;
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    for (char b : bad)
        if (b) throw std::domain_error("ks_one_sample: CDF outside [0, 1]");
    const double d = *std::max_element(dmax.begin(), dmax.end());
    return KsResult{d, ks_pvalue(d, nd), nd};
}

/// One-sample KS test; sorts `sample` in place.
template <class Cdf>
KsResult ks_one_sample(std::vector<double>& sample, Cdf&& cdf) {
    std::sort(sample.begin(), sample.end());
    return ks_one_sample_sorted(sample, cdf);
}

/// Two-sample KS test; sorts both samples in place. Ties are stepped over together.
inline KsResult ks_two_sample(std::vector<double>& a, std::vector<double>& b) {
    if (a.empty() || b.empty()) throw std::invalid_argument("ks_two_sample: empty sample");
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
    std::size_t i = 0, j = 0;
    double d = 0.0;
    while (i < a.size() && j < b.size()) {
        const double x = std::min(a[i], b[j]);
        while (i < a.size() && a[i] == x) ++i;
        while (j < b.size() && b[j] == x) ++j;
        d = std::max(d, std::abs(static_cast<double>(i) / na - static_cast<double>(j) / nb));
    }
    const double ne = na * nb / (na + nb);
    return KsResult{d, ks_pvalue(d, ne), ne};
}

// ---- chi-square goodness of fit -----------------------------------------------------------------

struct ChiSquareResult {
    double stat = 0;
    double p = 1;
    int dof = 0;
    double min_expected = 0;
    std::string str() const {
        std::ostringstream o;
        o.precision(6);
        o << "chi2 = " << stat << " on " << dof << " dof, p = " << p << " (min expected " << min_expected
          << ")";
        return o.str();
    }
};

/// Pearson chi-square of `observed` counts against cell probabilities `probs` (normalised here).
/// Cells of probability 0 are not cells of the test: any count there gives stat = inf, p = 0.
/// Throws std::invalid_argument if a positive cell expects fewer than 5 counts (pool cells first).
inline ChiSquareResult chi_square_gof(const std::vector<std::uint64_t>& observed, std::vector<double> probs) {
    if (observed.size() != probs.size() || observed.empty())
        throw std::invalid_argument("chi_square_gof: observed and probs differ in size");
    double total_p = 0.0;
    std::uint64_t total_n = 0;
    for (std::size_t i = 0; i < probs.size(); ++i) {
        if (!(probs[i] >= 0.0)) throw std::invalid_argument("chi_square_gof: negative probability");
        total_p += probs[i];
        total_n += observed[i];
    }
    if (!(total_p > 0.0) || total_n == 0) throw std::invalid_argument("chi_square_gof: nothing to test");
    ChiSquareResult r;
    r.min_expected = std::numeric_limits<double>::infinity();
    int cells = 0;
    bool impossible = false;
    for (std::size_t i = 0; i < probs.size(); ++i) {
        if (probs[i] == 0.0) {
            impossible |= observed[i] != 0;
            continue;
        }
        const double e = static_cast<double>(total_n) * probs[i] / total_p;
        r.min_expected = std::min(r.min_expected, e);
        const double diff = static_cast<double>(observed[i]) - e;
        r.stat += diff * diff / e;
        ++cells;
    }
    if (r.min_expected < 5.0)
        throw std::invalid_argument("chi_square_gof: a cell expects fewer than 5 counts");
    r.dof = cells - 1;
    if (impossible) {
        r.stat = std::numeric_limits<double>::infinity();
        r.p = 0.0;
    } else if (r.dof == 0) {
        r.p = 1.0;
    } else {
        r.p = boost::math::cdf(boost::math::complement(boost::math::chi_squared(r.dof), r.stat));
    }
    return r;
}

/// chi_square_gof's p-value for integer draws (`counts` by value) against a law on the integers: cells of width w over
/// [-lim, lim), each of probability mass(lo, hi) = P(lo <= n <= hi), and the two tails n < -lim and n >= lim of
/// probabilities below and above.
template <class Mass>
double chi_square_integer_cells(const std::map<std::int64_t, std::uint64_t>& counts, std::int64_t w, std::int64_t lim,
                                Mass mass, double below, double above) {
    std::vector<std::uint64_t> obs;
    std::vector<double> probs;
    std::uint64_t n_below = 0, n_above = 0;
    for (const auto& [k, c] : counts) {
        if (k < -lim) n_below += c;
        if (k >= lim) n_above += c;
    }
    obs.push_back(n_below);
    probs.push_back(below);
    for (std::int64_t lo = -lim; lo < lim; lo += w) {
        std::uint64_t c = 0;
        for (auto it = counts.lower_bound(lo); it != counts.end() && it->first < lo + w; ++it) c += it->second;
        obs.push_back(c);
        probs.push_back(mass(lo, lo + w - 1));
    }
    obs.push_back(n_above);
    probs.push_back(above);
    return chi_square_gof(obs, probs).p;
}

// ---- binomial proportion ------------------------------------------------------------------------

struct Interval {
    double lo = 0, hi = 1;
    bool contains(double x) const { return lo <= x && x <= hi; }
};

/// Wilson score interval for k successes in n trials, two-sided confidence 1 - alpha.
inline Interval wilson_interval(std::uint64_t k, std::uint64_t n, double alpha = kAlpha) {
    if (n == 0 || k > n) throw std::invalid_argument("wilson_interval: need 0 <= k <= n, n > 0");
    const double z = boost::math::quantile(boost::math::complement(boost::math::normal(), alpha / 2));
    const double nd = static_cast<double>(n), ph = static_cast<double>(k) / nd, z2 = z * z;
    const double denom = 1.0 + z2 / nd;
    const double centre = (ph + z2 / (2.0 * nd)) / denom;
    const double half = z / denom * std::sqrt(ph * (1.0 - ph) / nd + z2 / (4.0 * nd * nd));
    return Interval{std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

// ---- correlation and stream reuse ---------------------------------------------------------------

/// Pearson correlation of equally long x and y (two-pass, so large means cost no precision).
inline double pearson(const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size() || x.size() < 2) throw std::invalid_argument("pearson: bad sizes");
    const double n = static_cast<double>(x.size());
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
    mx /= n, my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double a = x[i] - mx, b = y[i] - my;
        sxy += a * b, sxx += a * a, syy += b * b;
    }
    if (sxx == 0.0 || syy == 0.0) return 1.0; // a constant vector: degenerate, treat as dependent
    return sxy / std::sqrt(sxx * syy);
}

struct ReuseFinding {
    bool reused = false;
    std::string why; ///< the first piece of evidence, for the failure message
};

/// Flags randomness shared between, or repeated inside, noise vectors that the caller claims are
/// independent draws of a continuous distribution with finite variance. Two checks:
///  1. Exact repeats, in any position of any vector: with values resolved to at least
///     `resolution_bits` bits (53-bit uniforms through a near-injective transform give ~52), two
///     independent draws coincide with probability <= 2^-resolution_bits, so the count of
///     coinciding pairs among N values is at most Poisson(N(N-1)/2 2^-bits) under independence;
///     the test fires above that law's 1 - alpha/2 quantile. Catches identical vectors, a vector
///     reused with an index shift (element off by one) and a short sequence repeated many times.
///  2. Aligned dependence between two vectors of equal length n >= 1000: |pearson(x, y)| or
///     |pearson(|x|, |y|)| above z / sqrt(n), z the normal quantile at alpha / 2 split over all
///     2 * pairs tests (Bonferroni). Catches the same uniforms through a different scale or sign
///     (r = +-1) and partial sharing.
/// The total false-alarm rate is at most alpha.
inline ReuseFinding detect_stream_reuse(const std::vector<std::vector<double>>& vectors,
                                        double alpha = kAlpha, int resolution_bits = 48) {
    ReuseFinding f;
    // 1. exact repeats
    struct Tagged {
        double x;
        std::uint32_t vec, idx;
    };
    std::vector<Tagged> all;
    for (std::size_t v = 0; v < vectors.size(); ++v)
        for (std::size_t i = 0; i < vectors[v].size(); ++i)
            all.push_back({vectors[v][i], static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(i)});
    std::sort(all.begin(), all.end(), [](const Tagged& a, const Tagged& b) { return a.x < b.x; });
    std::uint64_t repeats = 0;
    std::size_t first = 0;
    for (std::size_t i = 1; i < all.size(); ++i) {
        if (all[i].x == all[i - 1].x) {
            if (repeats++ == 0) first = i;
        }
    }
    const double nd = static_cast<double>(all.size());
    const double lambda = std::max(nd * (nd - 1.0) / 2.0 * std::ldexp(1.0, -resolution_bits), 1e-300);
    // Smallest c with P(Poisson(lambda) >= c) <= alpha / 2.
    const boost::math::poisson pois(lambda);
    std::uint64_t c = 1;
    while (boost::math::cdf(boost::math::complement(pois, static_cast<double>(c - 1))) > alpha / 2) ++c;
    if (repeats >= c) {
        std::ostringstream o;
        o << repeats << " repeated values among " << all.size() << " (independent draws: at most " << c - 1
          << " at false-alarm rate " << alpha / 2 << "); e.g. vector " << all[first - 1].vec << "["
          << all[first - 1].idx << "] == vector " << all[first].vec << "[" << all[first].idx
          << "] == " << all[first].x;
        f.reused = true;
        f.why = o.str();
        return f;
    }
    // 2. aligned dependence
    std::size_t pairs = 0;
    for (std::size_t a = 0; a < vectors.size(); ++a)
        for (std::size_t b = a + 1; b < vectors.size(); ++b)
            if (vectors[a].size() == vectors[b].size() && vectors[a].size() >= 1000) ++pairs;
    if (pairs == 0) return f;
    const double z = boost::math::quantile(
        boost::math::complement(boost::math::normal(), alpha / 2 / (2.0 * static_cast<double>(pairs)) / 2));
    auto absv = [](const std::vector<double>& x) {
        std::vector<double> y(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = std::abs(x[i]);
        return y;
    };
    for (std::size_t a = 0; a < vectors.size(); ++a) {
        for (std::size_t b = a + 1; b < vectors.size(); ++b) {
            const auto& x = vectors[a];
            const auto& y = vectors[b];
            if (x.size() != y.size() || x.size() < 1000) continue;
            const double lim = z / std::sqrt(static_cast<double>(x.size()));
            const double r = pearson(x, y), ra = pearson(absv(x), absv(y));
            if (std::abs(r) > lim || std::abs(ra) > lim) {
                std::ostringstream o;
                o << "vectors " << a << " and " << b << " are dependent: pearson = " << r
                  << ", pearson of |.| = " << ra << ", limit " << lim << " (z = " << z << ")";
                f.reused = true;
                f.why = o.str();
                return f;
            }
        }
    }
    return f;
}

// ---- drawing samples ----------------------------------------------------------------------------

/// The id of sample i: StreamId{seed, purpose Test, element = i} (one stream per sample).
inline rng::StreamId test_stream(std::uint32_t seed, std::uint32_t element) {
    rng::StreamId id;
    id.seed = seed;
    id.purpose = rng::Purpose::Test;
    id.element = element;
    return id;
}

/// out[i] = draw(WordStream(test_stream(seed, i))) for i < n, on a few threads. Each sample owns
/// its stream, so the result is the same for any thread count.
template <class T, class Draw>
std::vector<T> draw_samples(std::uint32_t seed, std::size_t n, Draw&& draw) {
    std::vector<T> out(n);
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t threads = std::min<std::size_t>(std::min(hw, 8u), std::max<std::size_t>(1, n / 65536));
    auto work = [&](std::size_t t) {
        const std::size_t lo = n * t / threads, hi = n * (t + 1) / threads;
        for (std::size_t i = lo; i < hi; ++i) {
            rng::WordStream ws(test_stream(seed, static_cast<std::uint32_t>(i)));
            out[i] = draw(ws);
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    return out;
}

/// n draws of N(mean, 1) from std::mt19937_64(seed): a sample of a known law for the auditor's tests (not the engine's
/// randomness, which these tests must not share).
inline std::vector<double> normal_sample(double mean, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> z(mean, 1.0);
    std::vector<double> v(n);
    for (double& x : v) x = z(rng);
    return v;
}

} // namespace dpr::test
