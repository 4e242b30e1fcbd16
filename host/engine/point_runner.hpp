#pragma once
// Runs one config point: all its instances over T rounds on the chosen backend, generating the
// shared loss sequence chunk by chunk once for all instances (DESIGN.md §3), and returns the regret
// of every instance at every checkpoint.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/backend/instance_engine.hpp"
#include "host/config/config.hpp"
#include "host/engine/registry.hpp"

namespace dpr {

enum class Backend { Auto, Cpu, Cuda };

struct PointJob {
    LearnerRuntime learner;
    AdversaryRuntime adversary;
    EngineShape shape;
    bool per_instance = false;
    Backend backend = Backend::Cpu;
    unsigned threads = 1;
    std::size_t chunk_bytes = std::size_t{32} << 20; ///< memory budget for one shared loss chunk
    /// Work budget of one chunk in expert-rounds (instances x rounds x d): bounds the time between
    /// progress updates and interrupt checks; 0 = backend default (CPU 2^27, at least 8 rounds; CUDA 2^34).
    std::uint64_t chunk_work = 0;
    std::function<void(std::uint64_t instance_rounds)> on_progress; ///< called after each chunk
    std::function<bool()> interrupted;                               ///< polled between chunks
    /// Also return the learner's own cumulative charged losses (PointOutcome::charged*), not only their
    /// difference to the comparator: `dpregret audit` forms its statistic from them.
    bool keep_charged = false;
};

struct PointOutcome {
    std::vector<std::uint64_t> checkpoints;
    std::uint32_t instances = 0;
    std::vector<double> regret;          ///< instances x checkpoints: cumulative <l_t,x_t> - comparator
    std::vector<double> realized_regret; ///< instances x checkpoints: cumulative l_t(i_t) - comparator
    std::vector<double> comparator;      ///< checkpoints (shared) or instances x checkpoints
    /// With PointJob::keep_charged, instances x checkpoints: sum_{s<=t} <l_s, x_s> and sum_{s<=t} l_s(i_s) exactly
    /// as the executor accumulated them (empty otherwise).
    std::vector<double> charged, charged_realized;
    std::vector<double> diagnostics;     ///< instances x learner.diagnostic_names.size()
    /// Per instance: the first round whose charged loss was not finite (0 = none).
    std::vector<std::uint64_t> first_nonfinite_round;
    std::string backend;                 ///< "cpu" or "cuda"
    std::string policy;                  ///< launch policy of the backend
    double wall_seconds = 0.0;
    bool completed = false;              ///< false if interrupted
};

/// Which backend `requested` resolves to for this job (throws UsageError-like std::invalid_argument
/// when "cuda" is requested but unusable).
Backend choose_backend(Backend requested, bool per_instance, std::string* why_not_cuda);

PointOutcome run_point(const PointJob& job);

/// The job of config point `p` as `dpregret run` runs it: its shape from [run] and the point (row width, T, seed,
/// stream, log-spaced checkpoints, precision, launch request) over all [run] instances from id 0, on the CPU with
/// one thread. Callers set the backend, threads and callbacks, and narrow the instances or rounds if they need.
PointJob make_point_job(const config::RunSettings& run, const config::Point& p, const LearnerRuntime& learner,
                        const AdversaryRuntime& adversary);

} // namespace dpr
