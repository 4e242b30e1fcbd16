// CUDA executor: the same round loop as the CPU (kernels/sim/instance_loop.hpp) with a warp per
// instance (d >= 32) or a thread per instance (d < 32), chosen from d (DESIGN.md §5). Instance state
// lives in global memory, coalesced across the warp's lanes; noise is regenerated from counters,
// never stored. One kernel launch per loss chunk.
#include <cstring>
#include <stdexcept>
#include <string>

#include "cuda/buffer.cuh"
#include "cuda/check.cuh"
#include "cuda/team.cuh"
#include "host/backend/cuda_api.hpp"
#include "kernels/core/team.hpp"
#include "kernels/core/type_list.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/sim/instance_loop.hpp"

namespace dpr::cuda_api {
namespace {

struct LaunchPolicy {
    bool warp_per_instance;
    unsigned threads_per_block;
    std::string describe() const {
        return std::string("cuda: ") + (warp_per_instance ? "one warp (32 lanes) per instance" : "one thread per instance") +
               ", " + std::to_string(threads_per_block) + " threads per block";
    }
};

template <class L, bool kWarp>
__global__ void advance_kernel(typename L::Params p, std::uint32_t seed, std::uint32_t stream, std::uint32_t first,
                               std::uint32_t instances, double* ws, std::uint64_t W, sim::InstanceTotals* acc,
                               std::uint64_t t0, std::uint64_t t1, const double* rows, std::uint32_t d,
                               const std::uint64_t* ck, std::uint32_t nck, double* out_exp, double* out_real) {
    const std::uint64_t gid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::uint64_t k = kWarp ? gid / 32 : gid;
    if (k >= instances) return;
    const learners::InstanceCtx ctx{seed, stream, static_cast<std::uint32_t>(first + k)};
    sim::InstanceTotals a = acc[k];
    if constexpr (kWarp) {
        cuda::WarpTeam team{static_cast<std::uint32_t>(threadIdx.x % 32)};
        sim::advance<L>(p, ctx, team, ws + k * W, a, t0, t1, rows, d, ck, nck, out_exp + k * nck, out_real + k * nck);
        if (team.rank() == 0) acc[k] = a;
    } else {
        SerialTeam team;
        sim::advance<L>(p, ctx, team, ws + k * W, a, t0, t1, rows, d, ck, nck, out_exp + k * nck, out_real + k * nck);
        acc[k] = a;
    }
}

template <class L, bool kWarp>
__global__ void init_kernel(typename L::Params p, std::uint32_t seed, std::uint32_t stream, std::uint32_t first,
                            std::uint32_t instances, double* ws, std::uint64_t W) {
    const std::uint64_t gid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::uint64_t k = kWarp ? gid / 32 : gid;
    if (k >= instances) return;
    const learners::InstanceCtx ctx{seed, stream, static_cast<std::uint32_t>(first + k)};
    if constexpr (kWarp) {
        cuda::WarpTeam team{static_cast<std::uint32_t>(threadIdx.x % 32)};
        L::init(p, ctx, team, ws + k * W);
    } else {
        SerialTeam team;
        L::init(p, ctx, team, ws + k * W);
    }
}

template <class L>
class CudaEngine final : public InstanceEngine {
public:
    CudaEngine(const typename L::Params& p, const EngineShape& s)
        : p_(p), s_(s), nck_(static_cast<std::uint32_t>(s.checkpoints.size())), W_(L::workspace(p)) {
        policy_ = LaunchPolicy{s.d >= 32, 256};
        ws_.resize(static_cast<std::size_t>(s.instances) * W_);
        acc_.resize(s.instances);
        acc_.zero(); // InstanceTotals is all-zero initialised
        exp_.resize(static_cast<std::size_t>(s.instances) * nck_);
        real_.resize(exp_.size());
        exp_.zero();
        real_.zero();
        ck_.upload(s.checkpoints);
        if (policy_.warp_per_instance) init_kernel<L, true><<<blocks(), policy_.threads_per_block>>>(p_, s_.seed, s_.stream, s_.first_instance, s_.instances, ws_.data(), W_);
        else init_kernel<L, false><<<blocks(), policy_.threads_per_block>>>(p_, s_.seed, s_.stream, s_.first_instance, s_.instances, ws_.data(), W_);
        DPR_CUDA_CHECK_LAUNCH();
    }

    void advance(std::uint64_t t0, std::uint64_t t1, const double* losses) override {
        if (!losses) throw std::logic_error("CudaEngine: per-instance sequences are not supported on the CUDA backend");
        rows_.upload(losses, (t1 - t0) * s_.d);
        if (policy_.warp_per_instance)
            advance_kernel<L, true><<<blocks(), policy_.threads_per_block>>>(p_, s_.seed, s_.stream, s_.first_instance, s_.instances, ws_.data(), W_, acc_.data(), t0, t1, rows_.data(), s_.d, ck_.data(), nck_, exp_.data(), real_.data());
        else
            advance_kernel<L, false><<<blocks(), policy_.threads_per_block>>>(p_, s_.seed, s_.stream, s_.first_instance, s_.instances, ws_.data(), W_, acc_.data(), t0, t1, rows_.data(), s_.d, ck_.data(), nck_, exp_.data(), real_.data());
        DPR_CUDA_CHECK_LAUNCH();
        DPR_CUDA_CHECK(cudaDeviceSynchronize());
    }

    void results(std::vector<double>& expected, std::vector<double>& realized) override {
        exp_.download(expected);
        real_.download(realized);
    }
    void comparators(std::vector<double>& out) override { out.clear(); }
    void diagnostics(std::vector<double>& out) override {
        // Diagnostics are a few scalars per instance kept in the workspace: read it back once.
        constexpr std::size_t n = learners::DiagnosticCount<L>::value;
        out.assign(static_cast<std::size_t>(s_.instances) * n, 0.0);
        if constexpr (n > 0) {
            std::vector<double> ws;
            ws_.download(ws);
            for (std::uint64_t k = 0; k < s_.instances; ++k) L::diagnostics(p_, ws.data() + k * W_, out.data() + k * n);
        }
    }
    void first_nonfinite_rounds(std::vector<std::uint64_t>& out) override {
        std::vector<sim::InstanceTotals> acc;
        acc_.download(acc);
        out.resize(acc.size());
        for (std::size_t k = 0; k < acc.size(); ++k) out[k] = acc[k].first_nonfinite_round;
    }
    std::string policy() const override { return policy_.describe(); }

private:
    unsigned blocks() const {
        const std::uint64_t threads = static_cast<std::uint64_t>(s_.instances) * (policy_.warp_per_instance ? 32 : 1);
        return static_cast<unsigned>((threads + policy_.threads_per_block - 1) / policy_.threads_per_block);
    }

    typename L::Params p_;
    EngineShape s_;
    std::uint32_t nck_;
    std::uint64_t W_;
    LaunchPolicy policy_{};
    cuda::DeviceBuffer<double> ws_, exp_, real_, rows_;
    cuda::DeviceBuffer<sim::InstanceTotals> acc_;
    cuda::DeviceBuffer<std::uint64_t> ck_;
};

} // namespace

std::unique_ptr<InstanceEngine> make_cuda_engine(std::size_t learner_index, const void* params,
                                                 std::size_t params_bytes, const EngineShape& shape) {
    const DeviceInfo info = query_devices();
    if (info.device_count == 0) throw Unavailable(info.message);
    std::unique_ptr<InstanceEngine> out;
    std::size_t i = 0;
    for_each_type(learners::AllLearners{}, [&](auto tag) {
        using L = typename decltype(tag)::type;
        if (i++ == learner_index) {
            if (params_bytes != sizeof(typename L::Params)) throw std::logic_error("make_cuda_engine: params size mismatch");
            typename L::Params p;
            std::memcpy(&p, params, sizeof p);
            out = std::make_unique<CudaEngine<L>>(p, shape);
        }
    });
    if (!out) throw std::logic_error("make_cuda_engine: learner index out of range");
    return out;
}

} // namespace dpr::cuda_api
