// The CUDA executor is equivalent to the CPU oracle (Ginkgo's IsEquivalentToRef): same learners, same
// seeds, both launch policies (thread per instance for d < 32, warp per instance otherwise). Warp
// reductions sum in a different order than the serial loop, so cumulative losses agree to a stated
// relative tolerance of 1e-9, not bitwise.
#include <cmath>
#include <vector>

#include "gpu/gpu_test.hpp"
#include "host/engine/cpu_engine.hpp"
#include "host/engine/checkpoints.hpp"
#include "host/engine/registry.hpp"

using namespace dpr;

namespace {

void compare(const char* learner, std::uint32_t d, double epsilon) {
    Problem pb;
    pb.d = d;
    pb.T = 300;
    pb.seed = 5;
    KeyValues lkv;
    if (std::string(learner) != "hedge") {
        lkv.num[0] = epsilon; // dp-ftrl-experts key 0 = epsilon
        lkv.given[0] = true;
    }
    const LearnerRuntime lr = resolve_learner(learner, lkv, pb);
    KeyValues akv;
    const AdversaryRuntime ar = resolve_adversary("bernoulli", akv, pb);
    EngineShape s;
    s.d = d;
    s.T = pb.T;
    s.instances = 50;
    s.seed = pb.seed;
    s.checkpoints = log_checkpoints(pb.T, 5);
    std::vector<double> rows(pb.T * d);
    const adversaries::SequenceCtx sc{s.seed, 0, adversaries::kSharedSequence};
    for (std::uint64_t t = 1; t <= pb.T; ++t) ar.fill(sc, t, rows.data() + (t - 1) * d);

    auto cpu = make_cpu_engine(lr.index, lr.params.data(), s, 2, nullptr);
    auto gpu = cuda_api::make_cuda_engine(lr.index, lr.params.data(), lr.params.size(), s);
    for (std::uint64_t t0 = 1; t0 <= pb.T; t0 += 128) {
        const std::uint64_t t1 = std::min<std::uint64_t>(pb.T + 1, t0 + 128);
        cpu->advance(t0, t1, rows.data() + (t0 - 1) * d);
        gpu->advance(t0, t1, rows.data() + (t0 - 1) * d);
    }
    std::vector<double> ce, cr, ge, gr;
    cpu->results(ce, cr);
    gpu->results(ge, gr);
    ASSERT_EQ(ce.size(), ge.size());
    for (std::size_t i = 0; i < ce.size(); ++i) EXPECT_NEAR(ge[i], ce[i], 1e-9 * std::fabs(ce[i])) << learner << " d=" << d << " i=" << i;
}

} // namespace

TEST(GpuEngine, HedgeMatchesCpuThreadPerInstance) { DPR_REQUIRE_GPU(); compare("hedge", 8, 0); }
TEST(GpuEngine, HedgeMatchesCpuWarpPerInstance) { DPR_REQUIRE_GPU(); compare("hedge", 100, 0); }
TEST(GpuEngine, DpFtrlMatchesCpuThreadPerInstance) { DPR_REQUIRE_GPU(); compare("dp-ftrl-experts", 8, 1.0); }
TEST(GpuEngine, DpFtrlMatchesCpuWarpPerInstance) { DPR_REQUIRE_GPU(); compare("dp-ftrl-experts", 100, 0.5); }
