#pragma once
// Runs one config point: all its instances over T rounds on the chosen backend, generating the
// shared loss sequence chunk by chunk once for all instances (docs/ARCHITECTURE.md §3), and returns the
// regret of every instance at every checkpoint.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/backend/instance_engine.hpp"
#include "host/config/config.hpp"
#include "host/engine/point_result.hpp"
#include "host/engine/registry.hpp"

namespace dpr {

/// The executor of `backend` (Cpu or Cuda: choose_backend resolves Auto) for the request: the one place that
/// names a factory.
std::unique_ptr<InstanceEngine> make_engine(Backend backend, const EngineRequest& request);

struct PointJob {
    LearnerRuntime learner;
    AdversaryRuntime adversary;
    EngineShape shape;
    bool per_instance = false;
    Backend backend = Backend::Cpu;
    unsigned threads = 1;
    static constexpr std::size_t kDefaultChunkBytes = std::size_t{32} << 20;
    std::size_t chunk_bytes = kDefaultChunkBytes; ///< memory budget for one shared loss chunk
    /// Work budget of one chunk in expert-rounds (instances x rounds x d): bounds the time between
    /// progress updates and interrupt checks; 0 = backend default (CPU 2^27, at least 8 rounds; CUDA 2^34).
    std::uint64_t chunk_work = 0;
    std::function<void(std::uint64_t instance_rounds)> on_progress; ///< called after each chunk
    std::function<bool()> interrupted;                               ///< polled between chunks
    /// Also return the learner's own cumulative charged losses (PointResult::charged*), not only their
    /// difference to the comparator: `dpregret audit` forms its statistic from them.
    bool keep_charged = false;
    /// The stream key of the shared loss sequence; -1: shape.stream. Differs from shape.stream when the
    /// instances run lie in a block of ids past the first (run_point_range).
    std::int64_t shared_stream = -1;
};

/// Which backend `requested` resolves to for this job (throws UsageError-like std::invalid_argument
/// when "cuda" is requested but unusable).
Backend choose_backend(Backend requested, bool per_instance, std::string* why_not_cuda);

PointResult run_point(const PointJob& job);

// ---- 64-bit instance ids (docs/RANDOMNESS.md §2 "Instance ids past 2^32") ----------------------------------
// The RNG counter's instance word is 32 bits and its last value is the shared sequence's, so a global instance id
// g is the pair (block h = g / (2^32 - 1), word w = g mod (2^32 - 1)): block 0 is every id below 2^32 - 1,
// unchanged; block h >= 1 runs its words under the stream key block_stream(stream, h), a 32-bit hash of
// (stream, h). Every instance of a point thus has its own (stream key, word) pair up to 2^52 instances, and the
// shared loss sequence stays keyed by the point's own stream.

inline constexpr std::uint64_t kIdsPerBlock = 0xFFFFFFFFull; ///< words 0 .. 2^32 - 2 of a block
inline constexpr std::uint64_t kMaxRunInstances = 1ull << 52; ///< [run] instances

/// The block and the counter word of global instance id g (never 0xFFFFFFFF, the shared sequence's word).
constexpr std::uint64_t instance_block(std::uint64_t g) { return g / kIdsPerBlock; }
constexpr std::uint32_t instance_word(std::uint64_t g) { return static_cast<std::uint32_t>(g % kIdsPerBlock); }

/// The stream key of block h of a point whose stream key is `stream` (h = 0: `stream` itself).
std::uint32_t block_stream(std::uint32_t stream, std::uint64_t h);

/// Instances [first, first + count) of `job`'s point, with global ids, in as many executor calls as id blocks
/// they span; the per-instance results concatenated in id order. count < 2^32 (one process's share).
PointResult run_point_range(PointJob job, std::uint64_t first, std::uint64_t count);

/// Appends the instances of `piece` (the next ids after those in `to`) to `to`; an empty `to` takes `piece` whole.
void append_outcome(PointResult& to, PointResult piece, bool per_instance_cmp);

/// The job of config point `p` as `dpregret run` runs it: its shape from [run] and the point (row width, T, seed,
/// stream, log-spaced checkpoints, precision, launch request), on the CPU with one thread. Callers set the instance
/// range (run_point_range does), the backend, threads and callbacks, and narrow the rounds if they need.
PointJob make_point_job(const config::RunSettings& run, const config::Point& p, const LearnerRuntime& learner,
                        const AdversaryRuntime& adversary);

} // namespace dpr
