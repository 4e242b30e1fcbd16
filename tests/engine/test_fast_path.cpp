// The fast path's guarantees, for every learner of the registry (the suite is written once and run for each
// learner, instruction set, precision and lane layout -- Kokkos' TEST_EXECSPACE pattern over what the CPU has):
//   - every instruction set gives the bits of the generic (fallback) build;
//   - results do not depend on the thread count, also when threads share one large-d instance, nor on how the
//     rounds are cut into chunks;
//   - instance lanes compute each instance exactly as the serial oracle (SerialTeam) does, the bits a GPU thread
//     per instance computes; coordinate lanes agree with them to rounding, with the same discrete choices;
//   - a lockstep emulation of a 32-lane team (the GPU warp's code path) agrees with the serial oracle;
//   - float and double give the same regret distribution (statistical, with a meta-test of the power).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "host/cpu/cpu_isa.hpp"
#include "host/cpu/cpu_teams.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/sim/comparator.hpp"
#include "kernels/sim/instance_loop.hpp"
#include "learners/emu_team.hpp"
#include "learners/simulate.hpp"
#include "learners/solo.hpp"
#include "noise/stat_tests.hpp"

using namespace dpr;
using test::SimOptions;
using test::simulate;

namespace {

/// A learner with keys that make it private where it can be, and an adversary of its loss set.
struct Case {
    std::string learner;
    test::KeyList keys;
    std::string adversary;
    std::uint32_t dim = 0; ///< the problem's d for a learner that lives in a fixed dimension (net-oco: 2), else 0
    bool scalar = false;   ///< kInstanceLanes = false (SCRiBLe, the ENV21 learners): scalar code per instance
    std::string mechanism; ///< a prefix-sum learner's [learner] mechanism when not its default ("": the default)

    std::string what() const { return mechanism.empty() ? learner : learner + " mechanism=" + mechanism; }
};

/// Whether learner n's round is written over lane values (kInstanceLanes).
bool lr_info_lanes(const std::string& n) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    for (const auto& info : linfo)
        if (info.name == n) return info.instance_lanes;
    return true;
}

/// The choices of key `i` of learner n ("" when it has none).
const char* linfo_choices(const std::string& n, int i) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    for (const auto& info : linfo)
        if (info.name == n && i >= 0 && info.keys[i].choices) return info.keys[i].choices;
    return "";
}

/// The d a test runs case c at: its own, or the test's.
std::uint32_t dim_of(const Case& c, std::uint32_t d) { return c.dim ? c.dim : d; }

const std::vector<Case>& all_cases() {
    static const std::vector<Case> cases = [] {
        std::vector<Case> v;
        static const auto linfo = config::describe_all<learners::AllLearners>("learner");
        for (const std::string& n : learner_names()) {
            Case c;
            c.learner = n;
            // Private learners are those with an epsilon key (it is required): eps = 1.
            bool priv = false;
            for (const auto& info : linfo)
                if (info.name == n) priv = info.key_index("epsilon") >= 0;
            const bool ftpl = n.rfind("dp-ftpl", 0) == 0;
            static const test::KeyList none = {}, eps = {{"epsilon", 1.0}}, eps_delta = {{"epsilon", 1.0}, {"delta", 1e-5}};
            c.keys = ftpl ? eps_delta : priv ? eps : none;
            Problem pb;
            pb.d = 4;
            pb.T = 16;
            const LearnerRuntime lr = resolve_learner(n, KeyValues{}, pb);
            const Geometry g = lr.geometry;
            c.adversary = g == Geometry::Simplex ? "bernoulli" : g == Geometry::Ball ? "unit-vectors" : "cube-coordinate";
            if (g == Geometry::Polytope) c.adversary = "bco-linear"; // ENV21 learners: affine losses on the simplex
            else if (!(lr.loss_families & loss_bit(LossFamily::Linear))) { // dp-ftrl-smooth: squared losses, delta
                c.adversary = "squared-realizable";
                c.keys = eps_delta; // (a static list: KeyList is an initializer_list)
            }
            c.scalar = !lr_info_lanes(n);
            if (n == "net-oco") c.dim = 2; // a rho-net of the disc (d in {1, 2})
            v.push_back(c);
            // Every learner built on prefix sums also with the mechanisms that are not its default (the seam's lane
            // kernels of docs/MECHANISMS.md §3.4-§3.5): Honaker under its default law, BLT with Gaussian noise.
            int noise = -1, mech = -1;
            for (const auto& info : linfo)
                if (info.name == n) noise = info.key_index("noise"), mech = info.key_index("mechanism");
            if (mech < 0) continue;
            const bool laplace = std::string(linfo_choices(n, noise)).rfind("laplace", 0) == 0;
            static const test::KeyList hon_eps = {{"epsilon", 1.0}, {"mechanism", 2.0}},
                                       hon_eps_delta = {{"epsilon", 1.0}, {"delta", 1e-5}, {"mechanism", 2.0}},
                                       blt_gauss = {{"epsilon", 1.0}, {"delta", 1e-5}, {"mechanism", 3.0}},
                                       blt_laplace_gauss = {{"epsilon", 1.0}, {"delta", 1e-5}, {"noise", 1.0},
                                                            {"mechanism", 3.0}};
            Case h = c, b = c;
            h.mechanism = "honaker";
            h.keys = c.keys.size() == 1 ? hon_eps : hon_eps_delta;
            b.mechanism = "blt";
            b.keys = laplace ? blt_laplace_gauss : blt_gauss;
            v.push_back(h);
            v.push_back(b);
            // Lattice noise (docs/spec/model.md §1.8) in both precisions, where the learner offers it.
            if (std::string(linfo_choices(n, noise)).find("discrete-laplace") != std::string::npos) {
                static const test::KeyList lattice = {{"epsilon", 1.0}, {"noise", 3.0}};
                Case l = c;
                l.mechanism = "padded, noise=discrete-laplace";
                l.keys = lattice;
                v.push_back(l);
            }
        }
        return v;
    }();
    return cases;
}

test::SimResult run(const Case& c, std::uint32_t d, std::uint64_t T, std::uint32_t n, unsigned threads,
                    const SimOptions& o, std::uint32_t first = 0) {
    return simulate(c.learner, c.keys, c.adversary, {}, dim_of(c, d), T, n, threads, 3, false, 6, first, o);
}

void expect_identical(const test::SimResult& a, const test::SimResult& b, const std::string& what) {
    EXPECT_EQ(a.regret, b.regret) << what << " | " << a.policy << " vs " << b.policy;
    EXPECT_EQ(a.realized_regret, b.realized_regret) << what;
    EXPECT_EQ(a.diagnostics, b.diagnostics) << what;
}

/// Learners with scalar code per instance: "instances" lanes cannot be honoured, and no lane comparison applies.
bool is_scalar(const Case& c) { return c.scalar; }

} // namespace

TEST(FastPath, EveryInstructionSetGivesTheFallbackBits) {
    if (!dpr::cpu::isa_supported(dpr::cpu::Isa::Generic))
        GTEST_SKIP() << "this build has no generic kernels (built: " << dpr::cpu::built_isas()
                     << "; DPREGRET_CPU_ISAS=native builds only this CPU's)";
    int compared = 0;
    for (const Case& c : all_cases())
        for (Precision prec : {Precision::Double, Precision::Float})
            for (std::uint32_t d : {12u, 200u}) { // instance lanes, coordinate lanes (auto)
                SimOptions o;
                o.precision = prec;
                o.isa = "generic";
                const auto ref = run(c, d, 48, 21, 2, o);
                for (cpu::Isa isa : {cpu::Isa::Avx512, cpu::Isa::Avx2}) {
                    if (!cpu::isa_supported(isa)) continue;
                    o.isa = cpu::isa_name(isa);
                    expect_identical(run(c, d, 48, 21, 2, o), ref, c.what() + " d=" + std::to_string(d) + " " + o.isa);
                    ++compared;
                }
            }
    RecordProperty("isa_comparisons", compared);
    if (compared == 0) GTEST_SKIP() << "this CPU has only the generic instruction set (nothing to compare)";
}

TEST(FastPath, ResultsDoNotDependOnThreadsOrChunking) {
    for (const Case& c : all_cases())
        for (Precision prec : {Precision::Double, Precision::Float})
            for (const char* lanes : {"instances", "coordinates"}) {
                if (is_scalar(c) && std::string(lanes) == "instances") continue; // scalar learners
                SimOptions o;
                o.precision = prec;
                o.lanes = lanes;
                const std::uint32_t d = 40;
                const auto one = run(c, d, 64, 19, 1, o);
                expect_identical(run(c, d, 64, 19, 2, o), one, c.what() + " 2 threads " + lanes);
                expect_identical(run(c, d, 64, 19, 3, o), one, c.what() + " 3 threads " + lanes);
                o.chunk_work = 1; // one round per chunk
                expect_identical(run(c, d, 64, 19, 2, o), one, c.what() + " chunks of one round " + lanes);
            }
}

TEST(FastPath, ThreadsSharingALargeInstanceGiveTheSameBits) {
    // d >= 2 kTile with fewer instances than threads: every thread works on every instance (its tiles), and
    // the reductions combine tiles in tile order -- the same bits as one thread alone.
    for (const char* name : {"hedge", "dp-ftrl-experts", "dp-ftpl-experts", "dp-mab", "dp-ftrl-sphere", "dp-ftpl-cube"})
        for (const Case& c : all_cases()) {
            if (c.learner != name) continue;
            const auto one = run(c, 5000, 40, 1, 1, SimOptions{});
            const auto two = run(c, 5000, 40, 1, 2, SimOptions{});
            const auto three = run(c, 5000, 40, 2, 3, SimOptions{});
            EXPECT_NE(two.policy.find("shared by 2 threads"), std::string::npos) << two.policy;
            expect_identical(two, one, c.what() + " shared by 2");
            EXPECT_EQ(three.regret[three.regret.size() / 2 - 1], one.regret.back()) << c.what() << " shared by 3";
        }
}

TEST(FastPath, AnInstanceIsTheSameAloneOrInAGroup) {
    // With instance lanes an instance shares a SIMD group with 15 others: its result must not depend on them.
    for (const Case& c : all_cases()) {
        if (is_scalar(c)) continue;
        SimOptions o;
        o.lanes = "instances";
        const auto many = run(c, 9, 80, 37, 2, o);
        const auto alone = run(c, 9, 80, 1, 1, o, 21); // instance 21 alone
        const std::size_t nck = many.checkpoints.size();
        for (std::size_t j = 0; j < nck; ++j) EXPECT_EQ(alone.regret[j], many.regret[21 * nck + j]) << c.what();
    }
}

namespace {

/// Instance k of learner L played by the serial oracle on the shared rows of adversary A: its regret at T.
template <class L>
void expect_engine_equals_serial(const Case& c, std::uint32_t d_test, std::uint64_t T, Precision prec) {
    const std::uint32_t d = dim_of(c, d_test);
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    static const auto ainfo = config::describe_all<adversaries::AllAdversaries>("adversary");
    Problem pb;
    pb.d = d;
    pb.T = T;
    pb.seed = 3;
    pb.float_precision = prec == Precision::Float; // as simulate() and the config layer set it
    const AdversaryRuntime ar = resolve_adversary(c.adversary, test::key_values(ainfo, c.adversary, {}), pb);
    pb.loss = ar.loss;
    const LearnerRuntime lr = resolve_learner(c.learner, test::key_values(linfo, c.learner, c.keys), pb);
    typename L::Params p;
    std::memcpy(&p, lr.params.data(), sizeof p);
    SimOptions o;
    o.precision = prec;
    o.lanes = "instances";
    const auto eng = run(c, d, T, 20, 2, o);
    const adversaries::SequenceCtx sc{3, 0, adversaries::kSharedSequence};
    const std::uint32_t W = static_cast<std::uint32_t>(ar.row_width); // d, or d + 1 (a_t, b_t)
    std::vector<double> row(W), Lsum(W, 0.0);
    for (std::uint32_t k : {0u, 7u, 19u}) {
        const auto go = [&](auto tag) {
            using R = decltype(tag);
            test::Solo<L, R> solo(p, 3, k);
            sim::CompensatedSum<double> e, r;
            for (std::uint64_t t = 1; t <= T; ++t) {
                ar.fill(sc, t, row.data());
                const RoundCharge<double> q = solo.round(t, row.data());
                e.add(q.expected);
                r.add(q.realized);
            }
            std::fill(Lsum.begin(), Lsum.end(), 0.0);
            for (std::uint64_t t = 1; t <= T; ++t) {
                ar.fill(sc, t, row.data());
                for (std::uint32_t i = 0; i < W; ++i) Lsum[i] += row[i];
            }
            const double cmp = ar.comparator(Lsum.data(), W);
            EXPECT_EQ(eng.final_regret[k], e.value() - cmp) << c.what() << " instance " << k;
            EXPECT_EQ(eng.final_realized[k], r.value() - cmp) << c.what() << " instance " << k;
        };
        if (prec == Precision::Float) go(float{});
        else go(double{});
    }
}

} // namespace

TEST(FastPath, InstanceLanesComputeWhatTheSerialOracleComputes) {
    // The serial team is the CPU oracle and what a GPU thread per instance runs: instance lanes must match it
    // bit for bit (the same operations in the same order, in every lane).
    for (const Case& c : all_cases()) {
        if (is_scalar(c)) continue;
        std::size_t i = 0;
        for_each_type(learners::AllLearners{}, [&](auto tag) {
            using L = typename decltype(tag)::type;
            if (learner_names()[i++] != c.learner) return;
            if constexpr (L::kInstanceLanes) {
                expect_engine_equals_serial<L>(c, 10, 90, Precision::Double);
                expect_engine_equals_serial<L>(c, 10, 90, Precision::Float);
            }
        });
    }
}

TEST(FastPath, CoordinateLanesAgreeWithInstanceLanesToRounding) {
    // Coordinate lanes add the coordinates in another order (16 lane sums folded by halving): the charges
    // agree to rounding, and the discrete choices (bandit arms, FTPL leaders) are the same.
    for (const Case& c : all_cases()) {
        if (is_scalar(c)) continue;
        SimOptions a, b;
        a.lanes = "instances";
        b.lanes = "coordinates";
        const auto x = run(c, 60, 200, 24, 2, a), y = run(c, 60, 200, 24, 2, b);
        ASSERT_EQ(x.regret.size(), y.regret.size());
        for (std::size_t j = 0; j < x.regret.size(); ++j) {
            const double scale = 1.0 + std::fabs(x.regret[j]);
            EXPECT_NEAR(x.regret[j], y.regret[j], 1e-9 * scale) << c.what() << " entry " << j;
            EXPECT_NEAR(x.realized_regret[j], y.realized_regret[j], 1e-9 * scale) << c.what() << " entry " << j;
        }
    }
}

TEST(FastPath, SharedDrawLearnersTakeInstanceLanesAtAnyDAndGiveTheCoordinateLanesBits) {
    // svt-experts, consistent-expert and potential-svt-experts draw from the CDF prepared once per round for
    // a shared sequence (potential-svt-experts also reads its log potential off it in double), so their state
    // and their per-round work are O(1) at any d: auto takes instance lanes above kInstanceLanesMaxD too, and
    // both layouts read the same CDF -- the same bits. svt-experts and potential-svt-experts in float draw with the
    // exact exponential mechanism (docs/spec/model.md §1.9) from the round's shared exact table on instance lanes and
    // with their own passes on coordinate lanes: exact draws, the same bits; potential-svt-experts' log potential is
    // then a double loop in index order per instance (docs/spec/afkt23.md §C4 "Exact samplers"), the same bits in
    // both layouts too. With noise = "laplace" in float it keeps its own O(d) float log potential, whose sum order
    // depends on the layout: auto keeps coordinate lanes for that.
    for (const char* name : {"svt-experts", "consistent-expert", "potential-svt-experts"})
        for (Precision prec : {Precision::Double, Precision::Float})
            for (const Case& c : all_cases()) {
                if (c.learner != name || !c.mechanism.empty()) continue;
                SimOptions automatic, coords;
                automatic.precision = coords.precision = prec;
                coords.lanes = "coordinates";
                const auto a = run(c, 1000, 300, 20, 2, automatic), b = run(c, 1000, 300, 20, 2, coords);
                EXPECT_NE(a.policy.find("instance lanes"), std::string::npos) << c.what() << ": " << a.policy;
                EXPECT_NE(b.policy.find("coordinate"), std::string::npos) << c.what() << ": " << b.policy;
                expect_identical(a, b, c.what() + " d = 1000");
            }
}

TEST(FastPath, EmulatedWarpOf32LanesAgreesWithTheSerialOracle) {
    // The GPU's warp code path without a GPU: 32 CPU threads in lockstep as one team (strided loops, reductions
    // through shared slots, rank-0 writes, barriers). Same arms and points, charges to rounding.
    const std::uint32_t T = 40;
    for (const Case& c : all_cases()) {
        const std::uint32_t d = dim_of(c, 70);
        static const auto linfo = config::describe_all<learners::AllLearners>("learner");
        static const auto ainfo = config::describe_all<adversaries::AllAdversaries>("adversary");
        Problem pb;
        pb.d = d;
        pb.T = T;
        pb.seed = 3;
        const AdversaryRuntime ar = resolve_adversary(c.adversary, test::key_values(ainfo, c.adversary, {}), pb);
        pb.loss = ar.loss;
        const LearnerRuntime lr = resolve_learner(c.learner, test::key_values(linfo, c.learner, c.keys), pb);
        const std::uint32_t W = static_cast<std::uint32_t>(ar.row_width);
        std::vector<std::vector<double>> rows(T + 1, std::vector<double>(W)), cum(T + 1, std::vector<double>(W, 0.0));
        const adversaries::SequenceCtx sc{3, 0, adversaries::kSharedSequence};
        for (std::uint64_t t = 1; t <= T; ++t) {
            ar.fill(sc, t, rows[t].data());
            if (t > 1)
                for (std::uint32_t j = 0; j < W; ++j) cum[t][j] = cum[t - 1][j] + rows[t - 1][j]; // L_{t-1}
        }
        std::size_t i = 0;
        for_each_type(learners::AllLearners{}, [&](auto tag) {
            using L = typename decltype(tag)::type;
            if (learner_names()[i++] != c.learner) return;
            typename L::Params p;
            std::memcpy(&p, lr.params.data(), sizeof p);
            test::Solo<L> solo(p, 3, 4);
            std::vector<RoundCharge<double>> serial;
            for (std::uint64_t t = 1; t <= T; ++t) serial.push_back(solo.round(t, rows[t].data()));
            const auto lanes = test::run_emulated<L, double, std::vector<RoundCharge<double>>>(
                p, 32, 3, 4, [&](auto& team, auto& ws) {
                    L::init(p, team, ws);
                    std::vector<RoundCharge<double>> out;
                    for (std::uint64_t t = 1; t <= T; ++t)
                        out.push_back(L::round(p, team, ws, t,
                                               ScalarLossRow<double>{rows[t].data(), rows[t].data(), cum[t].data()}));
                    return out;
                });
            for (std::uint32_t lane = 0; lane < 32; ++lane)
                for (std::uint64_t t = 0; t < T; ++t) {
                    EXPECT_NEAR(lanes[lane][t].expected, serial[t].expected, 1e-11 * (1 + std::fabs(serial[t].expected)))
                        << c.what() << " lane " << lane << " round " << t + 1;
                    EXPECT_NEAR(lanes[lane][t].realized, serial[t].realized, 1e-11 * (1 + std::fabs(serial[t].realized)))
                        << c.what() << " lane " << lane << " round " << t + 1;
                }
        });
    }
}

// ---- float vs double ------------------------------------------------------------------------------------

namespace {

/// Float and double draw the same uniforms (24 vs 53 bits of them), so their regrets are paired: the mean of
/// the differences must be within 5 standard errors of 0 (or below 1e-4 of the regret scale, for learners
/// whose float and double runs nearly coincide), and the two final-regret samples must pass a two-sample KS
/// test at alpha = 1e-6.
bool same_law(const test::SimResult& f, const test::SimResult& d, std::string* why) {
    const std::size_t n = f.final_regret.size();
    double md = 0, s2 = 0, scale = 0;
    for (std::size_t k = 0; k < n; ++k) {
        const double x = f.final_regret[k] - d.final_regret[k];
        md += x;
        scale = std::max(scale, std::fabs(d.final_regret[k]));
    }
    md /= static_cast<double>(n);
    for (std::size_t k = 0; k < n; ++k) {
        const double x = f.final_regret[k] - d.final_regret[k] - md;
        s2 += x * x;
    }
    const double se = std::sqrt(s2 / static_cast<double>(n - 1) / static_cast<double>(n));
    double spread = 0;
    for (double x : d.final_regret) spread = std::max(spread, std::fabs(x - d.final_regret[0]));
    const bool close_means = std::fabs(md) <= 5.0 * se || std::fabs(md) <= 1e-4 * (1.0 + scale);
    if (spread <= 1e-9 * (1.0 + scale)) { // a deterministic learner: every instance has the same regret
        double worst = 0;
        for (std::size_t k = 0; k < n; ++k) worst = std::max(worst, std::fabs(f.final_regret[k] - d.final_regret[k]));
        *why = "deterministic: largest |float - double| " + std::to_string(worst);
        return worst <= 1e-4 * (1.0 + scale);
    }
    std::vector<double> a = f.final_regret, b = d.final_regret;
    const auto ks = test::ks_two_sample(a, b);
    *why = "mean difference " + std::to_string(md) + " (se " + std::to_string(se) + "), KS " + ks.str();
    return close_means && ks.p > test::kAlpha;
}

} // namespace

TEST(FastPath_Stat, FloatAndDoubleGiveTheSameRegretDistribution) {
    for (const Case& c : all_cases())
        for (const char* lanes : {"auto", "coordinates"}) {
            SimOptions f, d;
            f.precision = Precision::Float;
            f.lanes = d.lanes = lanes;
            const std::uint32_t dim = std::string(lanes) == "auto" ? 8u : 48u;
            const auto rf = run(c, dim, 512, 400, 2, f);
            const auto rd = run(c, dim, 512, 400, 2, d);
            std::string why;
            EXPECT_TRUE(same_law(rf, rd, &why)) << c.what() << " " << lanes << ": " << why;
            RecordProperty(c.what() + "_" + lanes, why);
        }
}

TEST(FastPath_Stat, MetaTheFloatDoubleTestRejectsADifferentNoiseScale) {
    // The comparison above has power: double against double with the node noise 10% larger is rejected.
    const test::KeyList base = {{"epsilon", 1.0}}, larger = {{"epsilon", 1.0 / 1.1}};
    const auto a = simulate("dp-ftrl-experts", base, "bernoulli", {}, 8, 512, 400, 2, 3, false, 6);
    const auto b = simulate("dp-ftrl-experts", larger, "bernoulli", {}, 8, 512, 400, 2, 3, false, 6);
    std::string why;
    EXPECT_FALSE(same_law(a, b, &why)) << why;
}

// ---- argmin semantics, identical for every team (an all-NaN argmin used to return
// 0xFFFFFFFF and DP-FTPL then read out of bounds) ----------------------------------------------------------
namespace {

using KeyTable = std::vector<double>;

/// argmin over keys by a CPU CoordTeam<double, 4> (keys padded to whole packs; the pad is masked out).
/// (largest = true: dpr::argmax over the same team.)
std::pair<double, std::uint32_t> coord_argmin(const KeyTable& keys, bool largest = false) {
    constexpr int W = 4;
    dpr::cpu::CoordTeam<double, W> team;
    KeyTable padded(keys);
    // a pad that would win if it were not masked
    padded.resize((keys.size() + W - 1) / W * W + W, largest ? 1e300 : -1e300);
    const auto body = [&](dpr::cpu::CoordIdx i) {
        dpr::ArgContrib<dpr::simd::Pack<double, W>, 1> c;
        c.key = dpr::simd::Pack<double, W>::load(padded.data() + i.base);
        c.max[0] = c.key;
        return c;
    };
    const auto n = static_cast<std::uint32_t>(keys.size());
    const auto r = largest ? dpr::argmax<1>(team, n, body) : team.argmin<1>(n, body);
    return {r.key, r.arg};
}

std::pair<double, std::uint32_t> serial_argmin(const KeyTable& keys, bool largest = false) {
    dpr::SerialTeam<double> team;
    const auto body = [&](std::uint32_t i) {
        dpr::ArgContrib<double, 1> c;
        c.key = keys[i];
        c.max[0] = keys[i];
        return c;
    };
    const auto n = static_cast<std::uint32_t>(keys.size());
    const auto r = largest ? dpr::argmax<1>(team, n, body) : team.argmin<1>(n, body);
    return {r.key, r.arg};
}

std::pair<double, std::uint32_t> warp_argmin(const KeyTable& keys, bool largest = false) {
    dpr::test::LaneGroup group(32);
    std::vector<std::pair<double, std::uint32_t>> out(32);
    std::vector<std::thread> threads;
    for (std::uint32_t lane = 0; lane < 32; ++lane)
        threads.emplace_back([&, lane] {
            dpr::test::EmuTeam<double> team;
            team.g = &group;
            team.lane = lane;
            const auto body = [&](std::uint32_t i) {
                dpr::ArgContrib<double, 1> c;
                c.key = keys[i];
                c.max[0] = keys[i];
                return c;
            };
            const auto n = static_cast<std::uint32_t>(keys.size());
            const auto r = largest ? dpr::argmax<1>(team, n, body) : team.argmin<1>(n, body);
            out[lane] = {r.key, r.arg};
        });
    for (auto& t : threads) t.join();
    for (const auto& o : out) EXPECT_EQ(o.second, out[0].second);
    return out[0];
}

} // namespace

TEST(FastPath, ArgminIsTheLowestIndexOfTheSmallestKeyNaNNeverWinsAndAllNaNIsInBounds) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    struct Case {
        KeyTable keys;
        bool nan_key;
        std::uint32_t arg;
    };
    std::vector<Case> cases = {
        {{3, 1, 2, 1, 5}, false, 1},                  // ties: the lowest index
        {{nan, 4, nan, 2, 2, nan}, false, 3},         // NaN is skipped, never wins
        {{nan, nan, nan}, true, 0},                   // all NaN: NaN key, index 0 (in bounds)
        {{7}, false, 0},
    };
    // Longer than a CPU tile (kTile) and than 32 lanes: the minimum in a later tile, tied across tiles.
    KeyTable big(3 * dpr::cpu::kTile + 5, 10.0);
    big[dpr::cpu::kTile + 17] = -2;
    big[2 * dpr::cpu::kTile + 1] = -2;
    big[0] = nan;
    cases.push_back({big, false, dpr::cpu::kTile + 17});
    cases.push_back({KeyTable(dpr::cpu::kTile + 3, nan), true, 0});
    // Tied minima whose lanes are not in index order (16-lane packs: index 18 in lane 2, index 5 in lane 5):
    // the fold across lanes must compare the indices, not keep the first lane.
    KeyTable crossed(40, 10.0);
    crossed[18] = crossed[5] = -1;
    cases.push_back({crossed, false, 5});
    for (const Case& c : cases)
        for (const auto& [name, r] : {std::pair{"serial", serial_argmin(c.keys)},
                                      std::pair{"coordinate lanes", coord_argmin(c.keys)},
                                      std::pair{"emulated warp", warp_argmin(c.keys)}}) {
            EXPECT_EQ(std::isnan(r.first), c.nan_key) << name << " n = " << c.keys.size();
            EXPECT_EQ(r.second, c.arg) << name << " n = " << c.keys.size();
            EXPECT_LT(r.second, c.keys.size()) << name;
        }
}

TEST(FastPath, ArgmaxIsTheLowestIndexOfTheLargestKeyWithArgminsRules) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    struct Case {
        KeyTable keys;
        bool nan_key;
        std::uint32_t arg;
        double key;
    };
    std::vector<Case> cases = {
        {{3, 5, 2, 5, 1}, false, 1, 5},               // ties: the lowest index
        {{nan, 4, nan, 9, 9, nan}, false, 3, 9},      // NaN is skipped, never wins
        {{nan, nan, nan}, true, 0, nan},              // all NaN: NaN key, index 0 (in bounds)
        {{-0.0, 0.0, -1}, false, 0, 0.0},             // +0 and -0 tie: the lowest index
        {{-7}, false, 0, -7},
    };
    KeyTable big(3 * dpr::cpu::kTile + 5, -10.0);
    big[dpr::cpu::kTile + 17] = 2;
    big[2 * dpr::cpu::kTile + 1] = 2;
    big[0] = nan;
    cases.push_back({big, false, dpr::cpu::kTile + 17, 2});
    KeyTable crossed(40, -10.0); // tied maxima in lanes out of index order (see the argmin test)
    crossed[18] = crossed[5] = 1;
    cases.push_back({crossed, false, 5, 1});
    for (const Case& c : cases)
        for (const auto& [name, r] : {std::pair{"serial", serial_argmin(c.keys, true)},
                                      std::pair{"coordinate lanes", coord_argmin(c.keys, true)},
                                      std::pair{"emulated warp", warp_argmin(c.keys, true)}}) {
            EXPECT_EQ(std::isnan(r.first), c.nan_key) << name << " n = " << c.keys.size();
            if (!c.nan_key) EXPECT_EQ(r.first, c.key) << name << " n = " << c.keys.size();
            EXPECT_EQ(r.second, c.arg) << name << " n = " << c.keys.size();
        }
}

// private-bandit-fw's k-subsets oracle on instance lanes counts, for every coordinate, the coordinates before
// it (value, then index) instead of running select_smallest per instance. It must give each lane the vertex
// of the scalar oracle (domains::lo), ties included: lanes of few distinct values (many ties, +-0,
// infinities) and lanes of distinct values, for k from 1 to n - 1 and n up to the largest the lane path
// takes.
TEST(FastPath, KSubsetsOracleOnInstanceLanesIsTheScalarOracleTiesIncluded) {
    constexpr int W = 16;
    using L = dpr::learners::PrivateBanditFw;
    std::mt19937_64 rng(20261129);
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> few = {-1.0, -0.0, 0.0, 0.5, 2.0, inf, -inf};
    for (std::uint32_t n : {2u, 3u, 9u, 17u, 64u, L::kRankSelectMaxN}) {
        for (std::uint32_t k : {1u, n / 3 + 1, n / 2, n - 1}) {
            if (k < 1 || k >= n) continue;
            std::vector<double> g(std::size_t{n} * W), x(std::size_t{n} * W, -7.0);
            for (std::uint32_t lane = 0; lane < W; ++lane)
                for (std::uint32_t i = 0; i < n; ++i)
                    g[std::size_t{i} * W + lane] = lane % 2 == 0
                                                       ? few[rng() % (lane < 8 ? 2 : few.size())]
                                                       : std::ldexp(static_cast<double>(rng() >> 11), -53);
            const dpr::cpu::InstanceTeam<double, W> team{};
            L::rank_select(team, dpr::cpu::GroupView<double, W>{g.data(), n},
                           dpr::cpu::GroupView<double, W>{x.data(), n}, n, k);
            dpr::domains::Domain D;
            D.kind = dpr::domains::DomainKind::KSubsets;
            D.n = n;
            D.k = k;
            std::vector<double> v(n), want(n), scratch(dpr::domains::scratch_size(D));
            for (std::uint32_t lane = 0; lane < W; ++lane) {
                for (std::uint32_t i = 0; i < n; ++i) v[i] = g[std::size_t{i} * W + lane];
                dpr::domains::lo(D, v.data(), want.data(), scratch.data());
                for (std::uint32_t i = 0; i < n; ++i)
                    ASSERT_EQ(x[std::size_t{i} * W + lane], want[i])
                        << "n = " << n << " k = " << k << " lane " << lane << " coordinate " << i;
            }
        }
    }
}
