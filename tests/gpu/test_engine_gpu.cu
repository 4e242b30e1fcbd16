// The CUDA executor against the CPU oracle, for every learner of the registry, both precisions and every launch
// policy (Ginkgo's IsEquivalentToRef; Kokkos' TEST_EXECSPACE pattern: one test body, instantiated per backend
// policy). The whole backend is built with --fmad=false (CMakeLists.txt) and both sides use the kernels' own
// exp/log (kernels/core/vmath.hpp), so:
//   - a thread per instance computes what the CPU's instance lanes compute: bit for bit (regret, realised regret,
//     diagnostics);
//   - a warp or a block per instance adds the coordinates in CUB's order, not the CPU's: charges agree to a
//     stated relative tolerance (1e-9 in double, 1e-4 in float), discrete choices (bandit arms, FTPL leaders,
//     SCRiBLe's directions) are the same -- realised regret to the same tolerance. One exception, in float
//     only: Exp3's arm (and DP-MAB's, which is Exp3's) is an inverse CDF over a float running sum whose
//     normaliser is itself an order-dependent float sum, so a uniform within a few float ulps of a CDF
//     boundary picks the neighbouring arm on one side, and that instance's path then differs (seen on an H200:
//     1-3 of 70 instances at d = 100 and 700, T = 200). For those two, in float, at least 90% of the instances
//     must agree entry for entry; in double every instance must (a flip needs a uniform within ~1e-16 of
//     a boundary);
//   - results do not depend on how the rounds are chunked;
//   - with per-instance sequences ([adversary] per_instance = true) a thread per instance again computes the CPU's
//     bits, comparators included;
//   - state kept on chip for a launch's rounds ([run] gpu_state = "shared", cuda/stage_plan.hpp) gives the bits of
//     state in device memory, in every launch mode, precision and chunking; so does a row kept in registers
//     (gpu_state = "registers").
// Skipped (not failed) without a device.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/gpu_test.hpp"
#include "host/config/component_info.hpp"
#include "host/engine/checkpoints.hpp"
#include "host/engine/point_runner.hpp"
#include "host/engine/registry.hpp"
#include "kernels/adversaries/registry.hpp"
#include "kernels/learners/registry.hpp"

using namespace dpr;

namespace {

constexpr std::uint32_t kInstances = 70; ///< instances of every run()

struct Outcome {
    std::vector<double> expected, realized, diagnostics, comparators;
    std::string policy;
};

struct Case {
    std::string learner;
    KeyValues keys;
    std::string adversary;
    Geometry geometry;
};

std::vector<Case> cases(std::uint32_t d, std::uint64_t T) {
    const auto linfo = config::describe_all<learners::AllLearners>("learner");
    std::vector<Case> out;
    for (const std::string& n : learner_names()) {
        if ((n == "net-oco") != (d <= 2)) continue; // net-oco lives in d in {1, 2}; the others need d >= 2 experts
        Case c;
        c.learner = n;
        for (const auto& info : linfo)
            if (info.name == n) {
                const int e = info.key_index("epsilon"), dl = info.key_index("delta");
                if (e >= 0) c.keys.num[e] = 1.0, c.keys.given[e] = true;
                if (dl >= 0 && n.rfind("dp-ftpl", 0) == 0) c.keys.num[dl] = 1e-5, c.keys.given[dl] = true;
            }
        Problem pb;
        pb.d = d;
        pb.T = T;
        pb.seed = 5;
        const LearnerRuntime lr = resolve_learner(n, c.keys, pb);
        c.geometry = lr.geometry;
        c.adversary = c.geometry == Geometry::Simplex ? "bernoulli" : c.geometry == Geometry::Ball ? "unit-vectors" : "cube-coordinate";
        if (c.geometry == Geometry::Polytope) c.adversary = "bco-linear"; // ENV21: affine (a_t, b_t) rows, the simplex
        else if (!(lr.loss_families & loss_bit(LossFamily::Linear))) { // dp-ftrl-smooth: (a_t, b_t) rows
            c.adversary = "squared-realizable";
            for (const auto& info : linfo)
                if (info.name == n) {
                    const int dl = info.key_index("delta");
                    c.keys.num[dl] = 1e-5, c.keys.given[dl] = true;
                }
        }
        out.push_back(c);
    }
    return out;
}

Outcome run(const Case& c, std::uint32_t d, std::uint64_t T, bool gpu, Precision prec, const std::string& lanes,
            unsigned team_threads, std::uint64_t chunk, const std::string& gpu_state = "auto", bool own = false) {
    Problem pb;
    pb.d = d;
    pb.T = T;
    pb.seed = 5;
    const AdversaryRuntime ar = resolve_adversary(c.adversary, KeyValues{}, pb);
    pb.loss = ar.loss;
    // As the config layer resolves it: in float the learners take their float defaults (lattice noise and the exact
    // samplers, docs/spec/model.md §1.8-§1.11), so the device runs those paths too.
    pb.float_precision = prec == Precision::Float;
    const LearnerRuntime lr = resolve_learner(c.learner, c.keys, pb);
    const std::uint32_t w = static_cast<std::uint32_t>(ar.row_width); // d, or d + 1 for (a_t, b_t) rows
    EngineShape s;
    s.d = w;
    s.T = T;
    s.instances = kInstances;
    s.seed = pb.seed;
    s.checkpoints = log_checkpoints(T, 5);
    s.precision = prec;
    s.launch.lanes = lanes;
    s.launch.team_threads = team_threads;
    s.launch.gpu_state = gpu_state;
    std::vector<double> rows(T * w), cum(T * w, 0.0); // cum row t - 1 = L_{t-1} (kReadsCumulative learners)
    const adversaries::SequenceCtx sc{s.seed, 0, adversaries::kSharedSequence};
    for (std::uint64_t t = 1; t <= T; ++t) {
        ar.fill(sc, t, rows.data() + (t - 1) * w);
        if (t > 1)
            for (std::uint32_t i = 0; i < w; ++i) cum[(t - 1) * w + i] = cum[(t - 2) * w + i] + rows[(t - 2) * w + i];
    }
    // own: every instance plays its own sequence (adversary.per_instance), made by the executor.
    auto e = make_engine(gpu ? Backend::Cuda : Backend::Cpu,
                         {lr.index, lr.params.data(), lr.params.size(), s, 2, own ? &ar : nullptr});
    for (std::uint64_t t0 = 1; t0 <= T; t0 += chunk) {
        const std::uint64_t t1 = std::min<std::uint64_t>(T + 1, t0 + chunk);
        if (own) e->advance(t0, t1, nullptr, nullptr);
        else e->advance(t0, t1, rows.data() + (t0 - 1) * w, lr.reads_cumulative ? cum.data() + (t0 - 1) * w : nullptr);
    }
    Outcome o;
    e->results(o.expected, o.realized);
    e->diagnostics(o.diagnostics);
    e->comparators(o.comparators);
    o.policy = e->policy();
    return o;
}

void expect_close(const std::vector<double>& g, const std::vector<double>& c, double rel, const std::string& what) {
    ASSERT_EQ(g.size(), c.size()) << what;
    for (std::size_t i = 0; i < c.size(); ++i)
        EXPECT_NEAR(g[i], c[i], rel * (1.0 + std::fabs(c[i]))) << what << " entry " << i;
}

/// Instances (of `n`, `per` entries each in `g` and `c`) whose entries all agree within `rel`.
std::size_t agreeing_instances(const std::vector<double>& g, const std::vector<double>& c, std::size_t n,
                               double rel, std::vector<bool>& ok) {
    const std::size_t per = c.size() / n;
    ok.resize(n, true);
    for (std::size_t k = 0; k < n; ++k)
        for (std::size_t j = 0; j < per; ++j)
            if (!(std::fabs(g[k * per + j] - c[k * per + j]) <= rel * (1.0 + std::fabs(c[k * per + j])))) ok[k] = false;
    std::size_t a = 0;
    for (bool b : ok) a += b;
    return a;
}

/// Learners whose arm is an inverse CDF over a float running sum (Team::categorical): Exp3 and DP-MAB.
bool float_cdf_sampler(const std::string& n) { return n == "exp3" || n == "dp-mab"; }

/// Learners with scalar code per instance (kInstanceLanes = false: SCRiBLe, the ENV21 learners).
bool scalar_learner(const std::string& n) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    for (const auto& info : linfo)
        if (info.name == n) return !info.instance_lanes;
    return false;
}

} // namespace

/// A thread per instance computes the CPU's instance lanes, bit for bit. Also with per-instance sequences
/// (adversary.per_instance = true): the CUDA executor makes every instance's rows on the host with the CPU
/// executor's loop (host/backend/own_rows.hpp) and each instance reads its own, so the bits are the same again,
/// comparators included, whatever the chunking (GPU chunks of 7 rounds against the CPU's 128). A GPU that gave
/// every instance the rows of one would differ.
TEST(GpuEngine, ThreadPerInstanceEqualsCpuInstanceLanesBitwise) {
    DPR_REQUIRE_GPU();
    for (const bool own : {false, true}) {
        const std::uint64_t T = own ? 120 : 300;
        for (const std::uint32_t d : {24u, 2u})
        for (const Case& c : cases(d, T)) {
            if (scalar_learner(c.learner)) continue;
            for (Precision prec : {Precision::Double, Precision::Float}) {
                const Outcome cpu = run(c, d, T, false, prec, "instances", 0, 128, "auto", own);
                const Outcome gpu = run(c, d, T, true, prec, "instances", 0, own ? 7 : 128, "auto", own);
                const std::string what =
                    std::string(own ? "per-instance sequences: " : "") + c.learner + " | " + gpu.policy + " vs " + cpu.policy;
                EXPECT_EQ(gpu.expected, cpu.expected) << what;
                EXPECT_EQ(gpu.realized, cpu.realized) << what;
                EXPECT_EQ(gpu.diagnostics, cpu.diagnostics) << what;
                EXPECT_EQ(gpu.comparators, cpu.comparators) << what;
                if (!own) continue;
                const std::size_t nck = log_checkpoints(T, 5).size();
                ASSERT_EQ(cpu.comparators.size(), std::size_t{kInstances} * nck) << what;
                std::vector<double> last; // each instance's comparator at T: not all the same sequence
                for (std::size_t k = 0; k < kInstances; ++k) last.push_back(cpu.comparators[k * nck + nck - 1]);
                EXPECT_GT(std::count_if(last.begin(), last.end(), [&](double v) { return v != last[0]; }), 0) << what;
            }
        }
    }
}

/// Per-instance sequences go to the GPU when asked for; `auto` keeps them on the CPU, saying why, until the
/// device path has been timed (docs/GPU.md "Per-instance sequences").
TEST(GpuEngine, PerInstanceSequencesRunOnTheGpuWhenAskedFor) {
    DPR_REQUIRE_GPU();
    std::string why;
    EXPECT_EQ(choose_backend(Backend::Cuda, true, &why), Backend::Cuda);
    EXPECT_TRUE(why.empty()) << why;
    EXPECT_EQ(choose_backend(Backend::Auto, true, &why), Backend::Cpu);
    EXPECT_NE(why.find("per-instance"), std::string::npos) << why;
    EXPECT_EQ(choose_backend(Backend::Auto, false, &why), Backend::Cuda);
    EXPECT_TRUE(why.empty()) << why;
}

TEST(GpuEngine, WarpAndBlockTeamsAgreeWithCpuToRounding) {
    DPR_REQUIRE_GPU();
    const std::uint64_t T = 200;
    for (const std::uint32_t d : {100u, 700u})
        for (const Case& c : cases(d, T))
            for (Precision prec : {Precision::Double, Precision::Float})
                for (unsigned tt : {32u, 256u, 1024u}) {
                    const Outcome cpu = run(c, d, T, false, prec, "coordinates", 0, 128);
                    const Outcome gpu = run(c, d, T, true, prec, "coordinates", tt, 128);
                    const double rel = prec == Precision::Double ? 1e-9 : 1e-4;
                    const std::string what = c.learner + " d=" + std::to_string(d) + " | " + gpu.policy;
                    if (prec == Precision::Float && float_cdf_sampler(c.learner)) {
                        const std::size_t n = kInstances;
                        ASSERT_EQ(gpu.expected.size(), cpu.expected.size()) << what;
                        ASSERT_EQ(gpu.realized.size(), cpu.realized.size()) << what;
                        ASSERT_EQ(gpu.diagnostics.size(), cpu.diagnostics.size()) << what;
                        std::vector<bool> ok;
                        agreeing_instances(gpu.expected, cpu.expected, n, rel, ok);
                        agreeing_instances(gpu.realized, cpu.realized, n, rel, ok);
                        const std::size_t a = agreeing_instances(gpu.diagnostics, cpu.diagnostics, n, rel, ok);
                        EXPECT_GE(a, n * 9 / 10) << what << ": only " << a << " of " << n << " instances agree";
                        continue;
                    }
                    expect_close(gpu.expected, cpu.expected, rel, what + " expected");
                    expect_close(gpu.realized, cpu.realized, rel, what + " realized (arms)");
                    expect_close(gpu.diagnostics, cpu.diagnostics, rel, what + " diagnostics");
                }
}

// SCRiBLe on the simplex runs its round on one thread as a one-lane team when its lanes are coordinates (a
// warp): the same bits as a thread per instance (kernels/learners/scrible_lanes.hpp, ScribleLanes::round).
TEST(GpuEngine, TheScribleSimplexGivesTheSameBitsOnAThreadOrAWarp) {
    DPR_REQUIRE_GPU();
    const std::uint32_t d = 40;
    const std::uint64_t T = 120;
    int ran = 0;
    for (const Case& c : cases(d, T)) {
        if (c.learner.find("scrible-simplex") == std::string::npos) continue;
        const Outcome a = run(c, d, T, true, Precision::Double, "instances", 0, 50);
        const Outcome b = run(c, d, T, true, Precision::Double, "coordinates", 32, 50);
        EXPECT_EQ(a.expected, b.expected) << c.learner << " | " << a.policy << " vs " << b.policy;
        EXPECT_EQ(a.realized, b.realized) << c.learner;
        EXPECT_EQ(a.diagnostics, b.diagnostics) << c.learner;
        ++ran;
    }
    EXPECT_EQ(ran, 2); // scrible-simplex and dp-scrible-simplex
}

TEST(GpuEngine, ResultsDoNotDependOnChunking) {
    DPR_REQUIRE_GPU();
    const std::uint32_t d = 64;
    const std::uint64_t T = 150;
    for (const Case& c : cases(d, T))
        for (const char* lanes : {"instances", "coordinates"}) {
            const Outcome a = run(c, d, T, true, Precision::Double, lanes, 0, 150);
            const Outcome b = run(c, d, T, true, Precision::Double, lanes, 0, 7);
            EXPECT_EQ(a.expected, b.expected) << c.learner << " " << lanes;
            EXPECT_EQ(a.realized, b.realized) << c.learner << " " << lanes;
        }
}

// gpu_state = "shared" moves the staged arrays to shared memory and changes nothing else: the same bits as device
// memory for every learner, in a thread per instance (d = 24), a warp (d = 100) and a block of 256 (d = 700), both
// precisions, with chunks of another length (so staging in and out between launches is exercised too).
TEST(GpuEngine, StateOnChipGivesTheBitsOfStateInDeviceMemory) {
    DPR_REQUIRE_GPU();
    const std::uint64_t T = 130;
    int on_chip = 0;
    for (const auto& [d, lanes, tt] : {std::tuple<std::uint32_t, const char*, unsigned>{24u, "instances", 0u},
                                       {100u, "coordinates", 32u}, {700u, "coordinates", 256u}, {2u, "instances", 0u}})
        for (const Case& c : cases(d, T))
            for (Precision prec : {Precision::Double, Precision::Float}) {
                const Outcome a = run(c, d, T, true, prec, lanes, tt, 128, "global");
                const Outcome b = run(c, d, T, true, prec, lanes, tt, 37, "shared");
                const std::string what = c.learner + " d=" + std::to_string(d) + " | " + b.policy;
                on_chip += b.policy.find("state on chip") != std::string::npos;
                EXPECT_NE(a.policy.find("state in device memory"), std::string::npos) << a.policy;
                EXPECT_EQ(a.expected, b.expected) << what;
                EXPECT_EQ(a.realized, b.realized) << what;
                EXPECT_EQ(a.diagnostics, b.diagnostics) << what;
            }
    EXPECT_GT(on_chip, 40) << "the shared-memory path ran in too few cases to be tested";
}

TEST(GpuEngine, StateInRegistersGivesTheBitsOfTheWarpInDeviceMemory) {
    // gpu_state = "registers": Hedge's L in registers for a launch's rounds and each round's loss row loaded into
    // registers at its start (RegWarpTeam, K = 8, 16, 32 slots per lane) computes what the warp computes with L in
    // device memory, chunked differently (d = 100 and 300 test the bounds of a partial row, d = 1024 the full-row
    // kernel). A learner that does not opt in falls back to device memory, says why, and gives the same bits too;
    // "auto" chooses the registers wherever they can hold the row.
    DPR_REQUIRE_GPU();
    const std::uint64_t T = 130;
    std::vector<std::string> opted; // every learner with kRowInRegisters (Hedge at least)
    for_each_type(learners::AllLearners{}, [&](auto tag) {
        using L = typename decltype(tag)::type;
        if (learners::RowInRegisters<L>::value) opted.push_back(L::kName);
    });
    ASSERT_FALSE(opted.empty());
    const auto opts_in = [&](const std::string& n) { return std::find(opted.begin(), opted.end(), n) != opted.end(); };
    int in_registers = 0;
    for (const std::uint32_t d : {100u, 300u, 1000u, 1024u})
        for (const Case& c : cases(d, T)) {
            if (!opts_in(c.learner) && c.learner != "dp-ftrl-experts") continue; // dp-ftrl-experts: a control
            for (Precision prec : {Precision::Double, Precision::Float}) {
                const Outcome b = run(c, d, T, true, prec, "coordinates", 32, 37, "registers");
                const Outcome a = run(c, d, T, true, prec, "coordinates", 32, 128, "global");
                const Outcome u = run(c, d, T, true, prec, "coordinates", 32, 64, "auto");
                const std::string what = c.learner + " d=" + std::to_string(d) + " | " + b.policy;
                const bool regs = b.policy.find("state in registers") != std::string::npos;
                in_registers += regs;
                EXPECT_EQ(regs, opts_in(c.learner)) << what;
                if (!regs) EXPECT_NE(b.policy.find("gpu_state = registers: needs"), std::string::npos) << what;
                EXPECT_EQ(a.expected, b.expected) << what;
                EXPECT_EQ(a.realized, b.realized) << what;
                EXPECT_EQ(a.diagnostics, b.diagnostics) << what;
                // auto puts the row in registers wherever it can (docs/GPU.md), with the same bits
                EXPECT_EQ(u.policy.find("state in registers") != std::string::npos, regs) << u.policy;
                EXPECT_EQ(u.policy.find("gpu_state = registers"), std::string::npos) << "auto is no request: " << u.policy;
                EXPECT_EQ(a.expected, u.expected) << what;
                EXPECT_EQ(a.realized, u.realized) << what;
            }
        }
    EXPECT_EQ(in_registers, static_cast<int>(opted.size()) * 4 * 2) << "the register path ran in fewer cases than planned";
}
