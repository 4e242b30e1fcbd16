// The exponential mechanism drawn from a CDF shared by the instances of a point (kSharedDraw learners on a
// shared sequence; host/cpu/cpu_teams.hpp exp_mech_cdf and SharedCdfCache, kernels/mechanisms/exponential.hpp
// exp_mech_from_cdf): the shared path must give, bit for bit, the index each instance computes alone -- for
// both precisions, at the coefficients svt-experts and consistent-expert use, at widths that are and are not
// a multiple of the 16 lanes -- potential-svt-experts' log potential read off the same CDF must be the one it
// computes, and the cache must fill each round once, only when asked, whichever thread asks first.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "host/cpu/cpu_teams.hpp"
#include "kernels/core/team.hpp"
#include "kernels/learners/potential_svt_experts.hpp"
#include "kernels/learners/svt_experts.hpp"
#include "kernels/mechanisms/exponential.hpp"

namespace dpr {
namespace {

using learners::SvtExperts;

template <class R>
void expect_shared_equals_alone(std::uint32_t d, double eta, double lstar) {
    SvtExperts::Params p{};
    p.d = d;
    p.eta = eta;
    p.Lstar = lstar;
    std::vector<double> cum(d), cdf(d + 1);
    for (std::uint32_t i = 0; i < d; ++i) cum[i] = static_cast<double>((i * 2654435761u) % 97) * 0.37; // ties included
    cpu::exp_mech_cdf<16>(d, SvtExperts::shared_coefficient(p), cum.data(),
                          [&](auto x) { return SvtExperts::shared_score<R>(p, x); }, cdf.data());
    for (std::uint32_t k = 0; k < 40; ++k) {
        const SerialTeam<R> team{RngKey{11, 0}, k};
        for (std::uint32_t t = 1; t <= 25; ++t) {
            mech::ExpMechDraw draw;
            draw.round = t;
            const std::uint32_t alone = mech::exponential_mechanism(
                team, d, SvtExperts::shared_coefficient(p), draw,
                [&](std::uint32_t i) { return static_cast<R>(SvtExperts::shared_score<R>(p, cum[i])); });
            ASSERT_EQ(mech::exp_mech_from_cdf(team, d, cdf.data(), draw), alone)
                << "d = " << d << ", eta = " << eta << ", instance " << k << ", round " << t;
        }
    }
}

TEST(SharedDraw, TheSharedCdfGivesEachInstanceTheIndexItDrawsAlone) {
    for (std::uint32_t d : {2u, 16u, 37u, 1000u})
        for (double eta : {0.02, 1.0, 50.0, kInf}) {
            expect_shared_equals_alone<double>(d, eta, 0.0);
            expect_shared_equals_alone<float>(d, eta, 3.0); // L* above some scores: max(L, L*) makes ties
        }
}

using learners::PotentialSvtExperts;

/// potential-svt-experts' Params for the log potential over d experts at eta, and a row L_{t-1} with ties.
PotentialSvtExperts::Params potential(std::uint32_t d, double eta) {
    PotentialSvtExperts::Params p{};
    p.d = d;
    p.eta = eta;
    p.ln_d = std::log(static_cast<double>(d));
    return p;
}
std::vector<double> potential_row(std::uint32_t d) {
    std::vector<double> cum(d);
    for (std::uint32_t i = 0; i < d; ++i) cum[i] = 3.0 + static_cast<double>((i * 2654435761u) % 97) * 0.37;
    return cum;
}

TEST(SharedDraw, ThePotentialReadOffTheSharedCdfIsTheOneEachInstanceComputes) {
    // potential-svt-experts in double reads ln phi(t-1) off the round's shared CDF (its last running sum and
    // the min it keeps in cdf[d]); a one-lane team computes it with its own max-then-sum passes. The same
    // bits.
    int cases = 0;
    for (std::uint32_t d : {1u, 2u, 16u, 37u, 1000u})
        for (double eta : {1e-4, 0.02, 1.0, 50.0}) {
            const PotentialSvtExperts::Params p = potential(d, eta);
            const std::vector<double> cum = potential_row(d);
            std::vector<double> cdf(d + 1);
            cpu::exp_mech_cdf<16>(
                d, PotentialSvtExperts::shared_coefficient(p), cum.data(),
                [&](auto x) { return PotentialSvtExperts::shared_score<double>(p, x); }, cdf.data());
            EXPECT_EQ(cdf[d], *std::min_element(cum.begin(), cum.end()));
            const SerialTeam<double> team{RngKey{1, 0}, 0};
            const ScalarLossRow<double> row{cum.data(), cum.data(), cum.data()};
            const double alone = PotentialSvtExperts::log_potential(p, team, row);
            ASSERT_EQ(mech::exp_mech_log_total(cdf.data(), d, eta) - p.ln_d, alone)
                << "d = " << d << ", eta = " << eta;
            ++cases;
        }
    EXPECT_EQ(cases, 20);
}

TEST(SharedDraw, TheSharedLogPotentialOfTheExactSamplersIsTheOneEachInstanceComputes) {
    // potential-svt-experts with the exact samplers reads ln phi(t-1) as the round's shared scalar (made once per round
    // by the CPU executor, SharedCdfCache::scalar) where a shared sequence offers one; without it each instance runs
    // the same index-order loop on its lanes (a one-lane team here, and a 16-lane pack whose lanes all see the row).
    // The same bits, or runs with and without the cache would differ.
    int cases = 0;
    for (std::uint32_t d : {1u, 2u, 16u, 37u, 1000u})
        for (double eta : {1e-4, 0.02, 1.0, 50.0}) {
            const PotentialSvtExperts::Params p = potential(d, eta);
            const std::vector<double> cum = potential_row(d);
            cpu::SharedCdfCache cache;
            cache.reset(7, 1, d, 1, cum.data(), [](const void*, const double*, std::uint32_t, double*) {}, &p,
                        [](const void* ctx, const double* c, std::uint32_t dd) {
                            return PotentialSvtExperts::shared_scalar(*static_cast<const PotentialSvtExperts::Params*>(ctx),
                                                                      c, dd);
                        });
            const double* shared = cache.scalar(7);
            ASSERT_NE(shared, nullptr);
            const SerialTeam<double> team{RngKey{1, 0}, 0};
            const ScalarLossRow<double> row{cum.data(), cum.data(), cum.data()};
            ASSERT_EQ(*shared, PotentialSvtExperts::exact_log_potential(p, team, row)) << "d = " << d << ", eta = " << eta;
            const auto lanes = PotentialSvtExperts::log_potential_in_order<simd::Pack<double, 16>>(
                p, [&](std::uint32_t i) { return simd::Pack<double, 16>(cum[i]); });
            for (int l = 0; l < 16; ++l) ASSERT_EQ(lanes[l], *shared) << "lane " << l;
            ++cases;
        }
    EXPECT_EQ(cases, 20);
    // A learner without a shared scalar gets none.
    std::vector<double> cum(4, 1.0);
    cpu::SharedCdfCache plain;
    plain.reset(0, 1, 4, 5, cum.data(), [](const void*, const double*, std::uint32_t, double*) {}, nullptr);
    EXPECT_EQ(plain.scalar(0), nullptr);
}

struct Counted {
    std::atomic<int> fills[64];
};

TEST(SharedDraw, TheCacheFillsEachRoundOnceOnlyWhenAskedWhicheverThreadAsksFirst) {
    const std::uint32_t d = 8;
    const std::uint64_t t0 = 101, n = 64;
    std::vector<double> cum(n * d);
    for (std::size_t j = 0; j < cum.size(); ++j) cum[j] = static_cast<double>(j % 13);
    Counted counted;
    for (auto& f : counted.fills) f.store(0);
    cpu::SharedCdfCache cache;
    static const double* base = nullptr;
    base = cum.data();
    cache.reset(t0, n, d, std::uint64_t{d} + 1, cum.data(), [](const void* ctx, const double* c, std::uint32_t dd, double* out) {
        auto& cc = *static_cast<Counted*>(const_cast<void*>(ctx));
        cc.fills[(c - base) / dd].fetch_add(1);
        double acc = 0.0;
        for (std::uint32_t i = 0; i < dd; ++i) out[i] = acc = acc + c[i] + 1.0;
    }, &counted);
    // Two threads ask for the even rounds, in opposite orders, at the same time.
    std::vector<const double*> a(n), b(n);
    std::thread x([&] {
        for (std::uint64_t r = 0; r < n; r += 2) a[r] = cache.get(t0 + r);
    });
    std::thread y([&] {
        for (std::uint64_t r = n; r-- > 0;)
            if (r % 2 == 0) b[r] = cache.get(t0 + r);
    });
    x.join();
    y.join();
    for (std::uint64_t r = 0; r < n; ++r) {
        EXPECT_EQ(counted.fills[r].load(), r % 2 == 0 ? 1 : 0) << "round " << t0 + r;
        if (r % 2) continue;
        ASSERT_EQ(a[r], b[r]);
        double acc = 0.0;
        for (std::uint32_t i = 0; i < d; ++i) EXPECT_EQ(a[r][i], acc = acc + cum[r * d + i] + 1.0);
    }
}

} // namespace
} // namespace dpr
