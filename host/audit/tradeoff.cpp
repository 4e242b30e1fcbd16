#include "host/audit/tradeoff.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <boost/math/distributions/normal.hpp>
#include <fmt/format.h>

namespace dpr::audit {

namespace {

/// f_{eps,delta}(a), the trade-off function of (eps, delta)-DP (Dong, Roth & Su 2019, §2).
double f_eps_delta(double eps, double delta, double a) {
    if (a <= 0.0) return 1.0 - delta; // (also for eps = inf, where e^eps a would be inf x 0)
    return std::max({0.0, 1.0 - delta - std::exp(eps) * a, std::exp(-eps) * (1.0 - delta - a)});
}

/// One component Lap(0, 1) vs Lap(m, 1): the P-probabilities of its privacy loss rounded up to the grid j h,
/// as offsets from jlo (see the header of tradeoff.hpp).
std::vector<double> laplace_component(double m, double h, std::int64_t* jlo) {
    // ceil(l / h), nudged up so that a loss on a grid point is never rounded down by the division's error.
    const auto up = [h](double l) { return static_cast<std::int64_t>(std::ceil(l / h + 1e-9)); };
    const std::int64_t lo = up(-m), hi = up(m);
    std::vector<double> p(static_cast<std::size_t>(hi - lo + 1), 0.0);
    p.front() += 0.5;               // x <= 0: L = -m
    p.back() += 0.5 * std::exp(-m); // x >= m: L = m
    // 0 < x < m: L = 2x - m in (-m, m); the bin ((j-1)h, jh] holds x in ((l_lo + m) / 2, (l_hi + m) / 2].
    for (std::int64_t j = lo; j <= hi; ++j) {
        const double l_lo = std::max(static_cast<double>(j - 1) * h, -m),
                     l_hi = std::min(static_cast<double>(j) * h, m);
        if (!(l_hi > l_lo)) continue;
        const double x_lo = 0.5 * (l_lo + m), x_hi = 0.5 * (l_hi + m);
        // The bin of x_hi's loss rounds up to j or above; putting the mass at the bin's own j keeps it >= L
        // when j is up(l_hi) and the loss is below it. j >= up(l) for every l in the bin since l <= j h.
        p[static_cast<std::size_t>(j - lo)] += 0.5 * (std::exp(-x_lo) - std::exp(-x_hi));
    }
    *jlo = lo;
    return p;
}

} // namespace

ClaimedTradeoff ClaimedTradeoff::eps_delta(double epsilon, double delta) {
    ClaimedTradeoff t;
    t.kind_ = Kind::EpsDelta;
    t.epsilon_ = epsilon;
    t.delta_ = delta;
    t.describe_ = fmt::format("f_(eps, delta) of the claimed (eps, delta) = ({:g}, {:g})", epsilon, delta);
    return t;
}

ClaimedTradeoff ClaimedTradeoff::gaussian(double mu) {
    ClaimedTradeoff t;
    t.kind_ = Kind::Gaussian;
    t.mu_ = mu;
    t.describe_ = fmt::format("G_mu of mu-Gaussian-DP, mu = {:g}: Phi(Phi^-1(1 - a) - mu)", mu);
    return t;
}

ClaimedTradeoff ClaimedTradeoff::laplace(const std::vector<double>& m) {
    if (m.empty() || m.size() > kMaxLaplaceComponents)
        throw std::invalid_argument("ClaimedTradeoff::laplace: 1 to 128 components");
    double total = 0.0;
    for (double x : m) {
        if (!(x > 0.0) || !std::isfinite(x))
            throw std::invalid_argument("ClaimedTradeoff::laplace: m_i must be > 0");
        total += x;
    }
    if (!(total <= kMaxLaplaceEpsilon)) // e^L must stay finite in the suffix sums below
        throw std::invalid_argument("ClaimedTradeoff::laplace: the sum of m_i must be at most 700");
    ClaimedTradeoff t;
    t.kind_ = Kind::LaplaceComposition;
    t.epsilon_ = total;
    const double h = total / kGrid;
    // The rounded losses' distribution under P, by direct convolution (cost: grid x grid).
    std::int64_t jlo = 0;
    std::vector<double> dist = {1.0};
    for (double x : m) {
        std::int64_t lo = 0;
        const std::vector<double> c = laplace_component(x, h, &lo);
        std::vector<double> out(dist.size() + c.size() - 1, 0.0);
        for (std::size_t i = 0; i < dist.size(); ++i) {
            const double a = dist[i];
            if (a == 0.0) continue;
            for (std::size_t k = 0; k < c.size(); ++k) out[i + k] += a * c[k];
        }
        dist.swap(out);
        jlo += lo;
    }
    // delta(eps) = sum_j p_j (e^{l_j} - e^eps)_+ at eps = each grid loss l_j >= 0 (and 0): suffix sums.
    const std::int64_t n = static_cast<std::int64_t>(dist.size());
    std::vector<double> sp(dist.size() + 1, 0.0), sq(dist.size() + 1, 0.0);
    for (std::int64_t i = n - 1; i >= 0; --i) {
        const double l = static_cast<double>(jlo + i) * h;
        sp[i] = sp[i + 1] + dist[i];
        sq[i] = sq[i + 1] + dist[i] * std::exp(l);
    }
    for (std::int64_t i = std::max<std::int64_t>(0, -jlo - 1); i < n; ++i) {
        const double eps = std::max(0.0, static_cast<double>(jlo + i) * h);
        // Losses strictly above eps: indices > i (l_i <= eps for the first one, which is 0 or the grid
        // point).
        const double d = std::max(0.0, sq[i + 1] - std::exp(eps) * sp[i + 1]);
        t.eps_.push_back(eps);
        t.delta_of_eps_.push_back(std::min(1.0, d));
        t.exp_eps_.push_back(std::exp(eps));
    }
    t.describe_ =
        fmt::format("the composition of {} Laplace component(s) Lap(0, 1) vs Lap(m, 1), sum of m = {:g} "
                    "(privacy-loss grid {:g}, rounded up)",
                    m.size(), total, h);
    return t;
}

double ClaimedTradeoff::laplace_delta(double eps) const {
    // The grid's bound at the largest grid loss <= eps (delta decreases in eps, so it bounds delta(eps) too).
    const auto it = std::upper_bound(eps_.begin(), eps_.end(), eps);
    if (it == eps_.begin()) return 1.0;
    return delta_of_eps_[static_cast<std::size_t>(it - eps_.begin()) - 1];
}

double ClaimedTradeoff::beta(double a) const {
    a = std::clamp(a, 0.0, 1.0);
    switch (kind_) {
    case Kind::EpsDelta: return f_eps_delta(epsilon_, delta_, a);
    case Kind::Gaussian: {
        if (a <= 0.0) return 1.0;
        if (a >= 1.0) return 0.0;
        const boost::math::normal n;
        return boost::math::cdf(n, boost::math::quantile(boost::math::complement(n, a)) - mu_);
    }
    case Kind::LaplaceComposition: {
        // The composition is (sum m)-DP exactly, so f_(sum m, 0) is a valid lower bound too: where the curve
        // is that line (its ends), it is kept exact rather than the grid's rounding below it.
        double f = f_eps_delta(epsilon_, 0.0, a);
        for (std::size_t i = 0; i < eps_.size(); ++i) {
            const double rest = 1.0 - delta_of_eps_[i];
            f = std::max({f, rest - exp_eps_[i] * a, (rest - a) / exp_eps_[i]});
        }
        return f;
    }
    }
    return 0.0;
}

ClaimedTradeoff learner_tradeoff(const learners::PrivacyReport& claim, const std::vector<double>& difference,
                                 std::string* why) {
    why->clear();
    if (claim.gdp_mu > 0.0) return ClaimedTradeoff::gaussian(claim.gdp_mu);
    if (!claim.nodes_hold_losses) {
        *why = "the learner's release is not a tree of Laplace nodes over the loss vectors (its privacy report does "
               "not say nodes_hold_losses: AS17's dp-ftrl-experts, -sphere and -cube with continuous Laplace noise "
               "have that curve here)";
    } else if (std::strcmp(claim.accountant, "pure-laplace") != 0 || claim.blt.buffers != 0) {
        *why = std::string("its noise is not continuous Laplace on tree nodes (accountant ") +
               claim.accountant + ")";
    } else if (!(claim.noise_scale > 0.0) || !(claim.sensitivity_squared >= 1.0)) {
        *why = "no noisy node holds the loss";
    } else {
        const auto levels = static_cast<std::size_t>(std::llround(claim.sensitivity_squared));
        std::vector<double> m;
        double l1 = 0.0;
        for (double v : difference) {
            if (v == 0.0) continue;
            l1 += std::fabs(v);
            for (std::size_t k = 0; k < levels; ++k) m.push_back(std::fabs(v) / claim.noise_scale);
        }
        if (m.empty()) {
            *why = "the pair does not differ";
        } else if (static_cast<double>(levels) * l1 / claim.noise_scale > claim.epsilon * (1.0 + 1e-9)) {
            *why = fmt::format(
                "the pair's L1 distance {:g} exceeds the sensitivity the claim is calibrated for", l1);
        } else if (static_cast<double>(levels) * l1 / claim.noise_scale >
                   ClaimedTradeoff::kMaxLaplaceEpsilon) {
            *why = "the pair's privacy loss reaches beyond e^700 (no test of this size could see the curve)";
        } else if (m.size() > ClaimedTradeoff::kMaxLaplaceComponents) {
            *why = fmt::format(
                "the pair touches {} (node, coordinate) components; the exact curve is composed for at "
                "most {}",
                m.size(), ClaimedTradeoff::kMaxLaplaceComponents);
        } else {
            return ClaimedTradeoff::laplace(m);
        }
    }
    return ClaimedTradeoff::eps_delta(claim.epsilon, claim.delta);
}

void fill_claimed(const ClaimedTradeoff& f, std::vector<RegionRow>& region) {
    for (RegionRow& r : region) {
        r.f_base_ge = f.beta(r.base_ge);
        r.f_neighbour_ge = f.beta(r.neighbour_ge);
        r.f_base_le = f.beta(r.base_le);
        r.f_neighbour_le = f.beta(r.neighbour_le);
    }
}

FdpTest fdp_test(const ClaimedTradeoff& f, const std::vector<RegionRow>& region, std::uint64_t n0,
                 std::uint64_t n1, double alpha) {
    FdpTest t;
    t.claim = f.describe();
    t.alpha = alpha;
    if (region.empty() || n0 == 0 || n1 == 0) return t;
    t.tested = true;
    t.band0 = std::sqrt(std::log(4.0 / alpha) / (2.0 * static_cast<double>(n0)));
    t.band1 = std::sqrt(std::log(4.0 / alpha) / (2.0 * static_cast<double>(n1)));
    t.margin = -std::numeric_limits<double>::infinity();
    for (const RegionRow& r : region) {
        struct Test {
            const char* name;
            double a, b, e_null, e_alt;
        };
        const Test tests[4] = {
            {"reject the base side when S >= x", r.base_ge, 1.0 - r.neighbour_ge, t.band0, t.band1},
            {"reject the neighbour side when S >= x", r.neighbour_ge, 1.0 - r.base_ge, t.band1, t.band0},
            {"reject the base side when S <= x", r.base_le, 1.0 - r.neighbour_le, t.band0, t.band1},
            {"reject the neighbour side when S <= x", r.neighbour_le, 1.0 - r.base_le, t.band1, t.band0},
        };
        for (const Test& x : tests) {
            const double claimed = f.beta(x.a + x.e_null);
            const double margin = claimed - (x.b + x.e_alt);
            if (margin > t.margin) {
                t.margin = margin;
                t.threshold = r.threshold;
                t.test = x.name;
                t.type1 = x.a;
                t.type2 = x.b;
                t.claimed_type2 = claimed;
                t.point_claimed_type2 = f.beta(x.a);
            }
        }
    }
    t.violation = t.margin > 0.0;
    return t;
}

} // namespace dpr::audit
