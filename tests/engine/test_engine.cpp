// The simulation engine end to end: twins, a hand-computed regret, Hedge's bound,
// invariance to threads and to the number of instances, per-instance sequences.
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "host/engine/checkpoints.hpp"
#include "learners/simulate.hpp"

using dpr::test::simulate;

TEST(Engine, DpFtrlWithNoiseOffEqualsHedgeExactly) {
    // Same eta; epsilon = inf turns the tree noise off. Every instance and checkpoint must be bitwise
    // equal (A1: noise off = non-private FTRL = Hedge, docs/spec/checks.md §3.2).
    for (const char* adv : {"bernoulli", "halving", "switching"}) {
        const auto h = simulate("hedge", {{"eta", 0.07}}, adv, {}, 16, 777, 20);
        const auto p = simulate("dp-ftrl-experts", {{"eta", 0.07}, {"epsilon", dpr::kInf}}, adv, {}, 16, 777, 20);
        ASSERT_EQ(h.regret.size(), p.regret.size());
        for (std::size_t i = 0; i < h.regret.size(); ++i) EXPECT_EQ(h.regret[i], p.regret[i]) << adv << " " << i;
        EXPECT_TRUE(std::isinf(p.privacy.epsilon));
    }
}

TEST(Engine, DpFtrlWithNoiseDiffersFromHedgeAndReportsItsEpsilon) {
    const auto h = simulate("hedge", {{"eta", 0.07}}, "bernoulli", {}, 16, 777, 20);
    const auto p = simulate("dp-ftrl-experts", {{"eta", 0.07}, {"epsilon", 2.0}}, "bernoulli", {}, 16, 777, 20);
    EXPECT_NE(h.final_regret[0], p.final_regret[0]);
    EXPECT_DOUBLE_EQ(p.privacy.epsilon, 2.0); // Laplace, experts: paper == strict (Delta_1 = ||Y||_1 = d)
    EXPECT_STREQ(p.privacy.accountant, "pure-laplace");
    // lambda = d ceil(log2 T) / eps = 16 * 10 / 2 (A1 experts row)
    EXPECT_DOUBLE_EQ(p.privacy.noise_scale, 16.0 * 10.0 / 2.0);
}

namespace {

/// A point of Hedge (eta) against a hand-made loss matrix (the `file` adversary), checkpoints at every round.
dpr::PointJob hedge_job(const std::vector<double>& losses, std::uint32_t d, std::uint64_t T, double eta,
                        std::uint32_t instances) {
    using namespace dpr;
    Problem pb;
    pb.d = d;
    pb.T = T;
    static const auto ainfo = config::describe_all<adversaries::AllAdversaries>("adversary");
    KeyValues akv;
    for (const auto& c : ainfo)
        if (c.name == "file") {
            const int i = c.key_index("path");
            akv.given[i] = true;
            akv.str[i] = "hand-made";
            akv.list[i] = losses.data();
            akv.list_size[i] = static_cast<std::uint32_t>(losses.size());
        }
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    PointJob job;
    job.learner = resolve_learner("hedge", test::key_values(linfo, "hedge", {{"eta", eta}}), pb);
    job.adversary = resolve_adversary("file", akv, pb);
    job.shape.d = d;
    job.shape.T = T;
    job.shape.instances = instances;
    for (std::uint64_t t = 1; t <= T; ++t) job.shape.checkpoints.push_back(t);
    job.threads = 1;
    return job;
}

/// Hedge through the registry and CPU executor on a hand-made loss matrix: instance 0's regret at each round.
std::vector<double> hedge_on_matrix(const std::vector<double>& losses, std::uint32_t d, std::uint64_t T, double eta) {
    const dpr::PointResult o = dpr::run_point(hedge_job(losses, d, T, eta, 3));
    return std::vector<double>(o.regret.begin(), o.regret.begin() + static_cast<std::ptrdiff_t>(T));
}

/// The comparator run_point records (min_i L_t(i) at each round) for a `file` matrix, on `threads` threads.
std::vector<double> comparators_of(const std::vector<double>& losses, std::uint32_t d, std::uint64_t T,
                                   unsigned threads) {
    dpr::PointJob job = hedge_job(losses, d, T, 0.5, 2);
    job.threads = threads;
    return dpr::run_point(job).comparator;
}

} // namespace

TEST(Engine, TheComparatorOfWideRowsIsTheMinimumOfTheRunningSumsOnAnyNumberOfThreads) {
    // d = 2^16 + 7: the running sums are split into two blocks of coordinates over the threads. The best expert
    // moves between the blocks (round 1: i = 3, then i = d - 2 in the second block), so a block summed for the
    // wrong rounds, or a checkpoint read before its block was added, gives a wrong minimum.
    const std::uint32_t d = (1u << 16) + 7;
    const std::uint64_t T = 4;
    std::vector<double> losses(d * T, 1.0);
    losses[0 * d + 3] = 0.0;                            // t = 1: L_1(3) = 0
    losses[1 * d + (d - 2)] = 0.0;                      // t = 2: L_2(3) = 1, L_2(d - 2) = 1
    losses[2 * d + (d - 2)] = 0.0;                      // t = 3: L_3(d - 2) = 1, the rest >= 2
    for (std::uint32_t i = 0; i < d; ++i) losses[3 * d + i] = (i % 5) * 0.25; // t = 4
    std::vector<double> want(T);
    std::vector<double> L(d, 0.0);
    for (std::uint64_t t = 0; t < T; ++t) {
        for (std::uint32_t i = 0; i < d; ++i) L[i] += losses[t * d + i];
        want[t] = *std::min_element(L.begin(), L.end());
    }
    EXPECT_EQ(want, (std::vector<double>{0.0, 1.0, 1.0, 1.25})); // t = 4: L(d - 2) = 1 + ((d - 2) % 5) / 4
    EXPECT_EQ(comparators_of(losses, d, T, 1), want);
    EXPECT_EQ(comparators_of(losses, d, T, 2), want);
}

TEST(Engine, HedgeRegretOnASmallMatrixMatchesTheHandComputation) {
    // d = 2, eta = ln 2 so that weights are powers of two. Losses (1,0), (0,1), (1,0):
    //   t=1: x = (1/2, 1/2), charged 1/2; L_1 = (1,0), min 0       -> regret 1/2
    //   t=2: x ∝ (1/2, 1) = (1/3, 2/3), charged 2/3; L_2 = (1,1)   -> regret 7/6 - 1 = 1/6
    //   t=3: x = (1/2, 1/2), charged 1/2; L_3 = (2,1)              -> regret 5/3 - 1 = 2/3
    const std::vector<double> losses = {1, 0, 0, 1, 1, 0};
    const auto r = hedge_on_matrix(losses, 2, 3, std::log(2.0));
    EXPECT_NEAR(r[0], 0.5, 1e-15);
    EXPECT_NEAR(r[1], 1.0 / 6.0, 1e-15);
    EXPECT_NEAR(r[2], 2.0 / 3.0, 1e-15);
}

TEST(Engine, HedgeWithInfiniteEtaIsFollowTheLeaderSplittingTies) {
    // eta = inf is the softmax's limit: x_t uniform over argmin L_{t-1} (hedge.hpp). It gave NaN regret
    // (inf * 0) before it was fixed. d = 3, losses (1,0,0), (0,1,0), (1,1,1):
    //   t=1: no leader yet, x = (1/3,1/3,1/3), charged 1/3; L_1 = (1,0,0)      -> regret 1/3
    //   t=2: leaders {2,3}, x = (0,1/2,1/2), charged 1/2; L_2 = (1,1,0)        -> regret 5/6
    //   t=3: leader {3}, x = (0,0,1), charged 1;         L_3 = (2,2,1), min 1 -> regret 5/6
    const std::vector<double> losses = {1, 0, 0, 0, 1, 0, 1, 1, 1};
    const auto r = hedge_on_matrix(losses, 3, 3, dpr::kInf);
    EXPECT_NEAR(r[0], 1.0 / 3.0, 1e-15);
    EXPECT_NEAR(r[1], 5.0 / 6.0, 1e-15);
    EXPECT_NEAR(r[2], 5.0 / 6.0, 1e-15);
    // The private learner with its noise off shares the limit (its twin, bitwise).
    const auto h = simulate("hedge", {{"eta", dpr::kInf}}, "bernoulli", {}, 8, 300, 6);
    const auto p = simulate("dp-ftrl-experts", {{"eta", dpr::kInf}, {"epsilon", dpr::kInf}}, "bernoulli", {}, 8, 300, 6);
    ASSERT_EQ(h.regret.size(), p.regret.size());
    for (std::size_t i = 0; i < h.regret.size(); ++i) {
        EXPECT_TRUE(std::isfinite(h.regret[i])) << i;
        EXPECT_EQ(h.regret[i], p.regret[i]) << i;
    }
}

TEST(Engine, HedgeRegretNeverExceedsItsBound) {
    // For losses in [0,1] and any eta: Regret_t <= ln d / eta + eta t / 8 at every t (C8). Checked at
    // every checkpoint, on every adversary, for three learning rates, over per-instance sequences.
    const std::uint32_t d = 32;
    const std::uint64_t T = 2000;
    for (double eta : {0.02, 0.1, 0.5})
        for (const char* adv : {"bernoulli", "realizable", "halving", "switching"}) {
            const auto r = simulate("hedge", {{"eta", eta}}, adv, {}, d, T, 30, 2, 3, /*per_instance=*/true, 12);
            const std::size_t nck = r.checkpoints.size();
            double worst = -1e300;
            for (std::uint32_t k = 0; k < r.instances; ++k)
                for (std::size_t c = 0; c < nck; ++c) {
                    const double bound = std::log(double(d)) / eta + eta * double(r.checkpoints[c]) / 8.0;
                    EXPECT_LE(r.regret[k * nck + c], bound) << adv << " eta=" << eta << " t=" << r.checkpoints[c];
                    worst = std::max(worst, r.regret[k * nck + c] / bound);
                }
            EXPECT_GT(worst, 0.0) << "regret should be positive somewhere on " << adv;
        }
    // The lower-bound adversary (Asi et al. Thm 5) needs its own epsilon key.
    const auto lb = simulate("hedge", {{"eta", 0.3}}, "lower-bound", {{"epsilon", 0.05}}, d, T, 30, 2, 3, true, 12);
    for (std::size_t i = 0; i < lb.regret.size(); ++i)
        EXPECT_LE(lb.regret[i], std::log(double(d)) / 0.3 + 0.3 * double(T) / 8.0);
}

TEST(Engine, ResultsDoNotDependOnTheThreadCount) {
    const auto a = simulate("dp-ftrl-experts", {{"epsilon", 0.5}}, "bernoulli", {}, 24, 600, 37, 1);
    const auto b = simulate("dp-ftrl-experts", {{"epsilon", 0.5}}, "bernoulli", {}, 24, 600, 37, 2);
    const auto c = simulate("dp-ftrl-experts", {{"epsilon", 0.5}}, "bernoulli", {}, 24, 600, 37, 5);
    EXPECT_EQ(a.regret, b.regret);
    EXPECT_EQ(a.regret, c.regret);
    EXPECT_EQ(a.realized_regret, c.realized_regret);
}

TEST(Engine, AnInstanceDoesNotDependOnHowManyRunBesideIt) {
    // Instance 5 of a 10-instance run equals instance 5 of a 1000-instance run: streams are keyed by
    // instance id, never by thread or batch (docs/ARCHITECTURE.md §2).
    const auto small = simulate("dp-ftrl-experts", {{"epsilon", 1.0}}, "bernoulli", {}, 8, 256, 10);
    const auto large = simulate("dp-ftrl-experts", {{"epsilon", 1.0}}, "bernoulli", {}, 8, 256, 1000);
    EXPECT_EQ(small.final_regret[5], large.final_regret[5]);
    // ... and a range starting elsewhere (a shard) reproduces the same instances.
    const auto shard = simulate("dp-ftrl-experts", {{"epsilon", 1.0}}, "bernoulli", {}, 8, 256, 10, 2, 1, false, 8, 500);
    for (int k = 0; k < 10; ++k) EXPECT_EQ(shard.final_regret[k], large.final_regret[500 + k]);
    // Different instances do differ (the noise is not shared by mistake).
    EXPECT_NE(large.final_regret[5], large.final_regret[6]);
}

TEST(Engine, PerInstanceSequencesGiveEachInstanceItsOwnComparator) {
    // Hedge is deterministic: with one shared sequence all instances have the same regret; with
    // per-instance sequences they differ.
    const auto shared = simulate("hedge", {}, "bernoulli", {}, 8, 300, 6, 2, 1, false);
    const auto own = simulate("hedge", {}, "bernoulli", {}, 8, 300, 6, 2, 1, true);
    for (int k = 1; k < 6; ++k) EXPECT_EQ(shared.final_regret[k], shared.final_regret[0]);
    int distinct = 0;
    for (int k = 1; k < 6; ++k) distinct += own.final_regret[k] != own.final_regret[0];
    EXPECT_GE(distinct, 4);
}

TEST(Engine, CheckpointsAreLogSpacedAndEndAtT) {
    const auto c = dpr::log_checkpoints(4096, 12);
    ASSERT_FALSE(c.empty());
    EXPECT_EQ(c.back(), 4096u);
    EXPECT_EQ(c.front(), 2u); // ceil(4096^{1/12}) = 2
    for (std::size_t i = 1; i < c.size(); ++i) EXPECT_LT(c[i - 1], c[i]);
    EXPECT_EQ(dpr::log_checkpoints(1, 16), std::vector<std::uint64_t>{1});
    EXPECT_EQ(dpr::log_checkpoints(5, 1), std::vector<std::uint64_t>{5});
}

TEST(Engine_Stat, DpFtrlRegretShrinksAsEpsilonGrows) {
    // The privacy cost is additive and ~1/eps (§3.2): eps 0.1 -> 10 must cost clearly more regret,
    // by many standard errors, on the same sequence with common random numbers.
    const auto lo = simulate("dp-ftrl-experts", {{"epsilon", 0.1}}, "bernoulli", {{"gap", 0.2}}, 8, 2048, 200);
    const auto hi = simulate("dp-ftrl-experts", {{"epsilon", 10.0}}, "bernoulli", {{"gap", 0.2}}, 8, 2048, 200);
    const double se = std::hypot(lo.sem_regret(), hi.sem_regret());
    EXPECT_GT(lo.mean_regret() - hi.mean_regret(), 6 * se);
}
