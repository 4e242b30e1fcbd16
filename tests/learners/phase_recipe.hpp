#pragma once
// The hand-driven rounds of the phase learners' exact-sampler recipe tests (test_svt_experts_exact.cpp,
// test_adaptive_svt_exact.cpp, test_potential_svt_exact.cpp): the loss pattern they feed and the documented rounding
// of the played loss onto the sparse vector's lattice (kernels/learners/svt_phase.hpp SvtPhase::lattice_loss), and the
// statistical comparison of their exact runs with the continuous ones, written once.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/core/team.hpp"
#include "kernels/mechanisms/exact_exponential.hpp"
#include "kernels/noise/discrete_laplace.hpp"
#include "kernels/rng/lanes.hpp"
#include "learners/simulate.hpp"
#include "noise/stat_tests.hpp"

namespace dpr::test {

/// Round t's losses: 1 where (i + t) % 3 == 0, else 0.25 for odd experts and 0 for even ones (every expert loses
/// often enough for phases to end, at different rates).
inline void recipe_losses(std::vector<double>& loss, std::uint64_t t) {
    for (std::uint32_t i = 0; i < loss.size(); ++i) loss[i] = (i + t) % 3 == 0 ? 1.0 : (i % 2 ? 0.25 : 0.0);
}

/// Round t's played loss rounded onto gamma Z with word 0 of (Lattice, sub 1, round t - 1, element 0) of the team's
/// instance, checked to be a lattice point within one step of the loss.
inline double recipe_lattice_loss(const SerialTeam<double>& team, double loss, double gamma, std::uint64_t t) {
    const std::uint32_t w = rng::instance_stream(team, rng::Purpose::Lattice, 1u, t - 1, 0u).block(0).w[0];
    const double r = noise::lattice_round(loss, gamma, w);
    EXPECT_EQ(std::fmod(r, gamma), 0.0) << "round " << t;
    EXPECT_LE(std::fabs(r - loss), gamma) << "round " << t;
    return r;
}

/// The expert the exact exponential mechanism of round t draws for the team's instance over score(i), i < d: the words
/// of (Exponential, sub 0, round t, element 0).
template <class Score>
std::uint32_t recipe_exact_expert(const SerialTeam<double>& team, const mech::ExactExpPlan& plan, std::uint32_t d,
                                  std::uint64_t t, Score&& score) {
    rng::StreamId id;
    id.seed = team.key().seed;
    id.stream = team.key().stream;
    id.instance = team.instance();
    id.purpose = rng::Purpose::Exponential;
    id.round = static_cast<std::uint32_t>(t);
    return mech::exact_exp_draw(plan, d, score, id);
}

/// The exact samplers' law (`exact`: a float run on them) is the continuous samplers' (`continuous`: a double run on
/// the continuous ones over disjoint instances of the same sequence): two-sample KS on the final regret and on the
/// diagnostic `column`, p > kAlpha each. Power: the same KS on the column tells `other` (a continuous run at another
/// noise level) apart from `exact`, p < kAlpha. Statistical.
inline void expect_exact_law_is_continuous(const SimResult& exact, const SimResult& continuous, const SimResult& other,
                                           const char* column, const char* power) {
    ASSERT_TRUE(exact.privacy.as_run);
    ASSERT_FALSE(continuous.privacy.as_run);
    std::vector<double> a = exact.final_regret, b = continuous.final_regret;
    const KsResult ks = ks_two_sample(a, b);
    EXPECT_GT(ks.p, kAlpha) << "the final regret's law: D = " << ks.d;
    std::vector<double> ca = exact.diagnostic_column(column), cb = continuous.diagnostic_column(column);
    EXPECT_GT(ks_two_sample(ca, cb).p, kAlpha) << "the law of " << column;
    std::vector<double> co = other.diagnostic_column(column);
    ca = exact.diagnostic_column(column);
    EXPECT_LT(ks_two_sample(ca, co).p, kAlpha) << "power: " << power;
}

} // namespace dpr::test
