#include "host/api/merge.hpp"

#include <chrono>
#include <new>
#include <stdexcept>

#include "host/api/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/results/memory_estimate.hpp"

namespace dpr::api {
namespace {

/// The in-memory merge's peak: one point's per-instance values, read and concatenated (twice), and every point's
/// final regrets and diagnostics kept for the output (docs/SCALING.md "Memory of the merge").
MemoryEstimate estimate_merge_memory(const config::Config& cfg, const std::vector<PointRecord>& recs) {
    const std::uint64_t N = cfg.run.instances, C = cfg.run.checkpoints + 1;
    std::uint64_t peak = 0, retained = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < recs.size(); ++i) {
        const std::uint64_t nd = recs[i].learner.diagnostic_names.size();
        const std::uint64_t point = sat_mul(16, sat_mul(N, 2 * C + (cfg.points[i].per_instance ? C : 0) + nd + 1));
        if (point > peak) peak = point, at = i;
        retained = sat_add(retained, sat_mul(8, sat_mul(N, 2 + nd)));
    }
    MemoryEstimate e;
    const std::uint64_t resident = resident_memory_bytes();
    e.host_bytes = sat_add(sat_add(peak, retained), resident);
    e.terms.push_back({"every instance's values of point " + std::to_string(at) + ", read and joined: " +
                           std::to_string(N) + " instances", peak});
    e.terms.push_back({"final regrets and diagnostics of " + std::to_string(recs.size()) + " point(s) kept for the output",
                       retained});
    e.terms.push_back({"held already: the config and the shards' manifests", resident});
    return e;
}

} // namespace

MergePlan plan_merge(const MergeSpec& spec) {
    MergePlan plan;
    try {
        plan.set = read_shards(spec.shards);
    } catch (const ShardError& e) {
        throw UsageError(e.what());
    }
    try {
        plan.config = config::load_config(plan.set.config_path, plan.set.overrides, run_config_inputs());
    } catch (const std::exception& e) {
        throw UsageError("cannot reload the shards' config " + plan.set.config_path + ": " + e.what());
    }
    if (plan.config.resolved_toml != plan.set.resolved_toml)
        throw UsageError(plan.set.config_path + " has changed since the shards ran (its resolved TOML differs from "
                         "shard.json's); merge needs the file the shards were started from");
    plan.records = resolve_points(plan.config);
    if (!spec.bounded_memory)
        check_memory(estimate_merge_memory(plan.config, plan.records), parse_memory_limit(spec.memory_limit), 0,
                     "Merge with dpregret merge --bounded-memory (Python: bounded_memory=True), which holds none of "
                     "them and writes the same bytes (docs/SCALING.md); --memory-limit none merges in memory anyway.",
                     "merge");
    return plan;
}

bool execute_merge(MergePlan& plan, const MergeSpec& spec, const io::Dir& out) {
    const auto t_start = std::chrono::steady_clock::now();
    const auto stopped = [&] { return spec.interrupted && spec.interrupted(); };
    try {
        for (PointRecord& r : plan.records) {
            if (stopped()) return false;
            try {
                if (spec.bounded_memory)
                    finish_point_streamed(plan.set, r, plan.config.run.instances, spec.select_bytes, spec.read_rows);
                else
                    merge_point(plan.set, r, plan.config.run.instances);
            } catch (const ShardError& e) {
                throw UsageError(e.what());
            }
            if (!spec.bounded_memory) finish_point(r);
        }
        RunMeta meta = plan.set.meta;
        meta.wall_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        try { // --bounded-memory reads final_regret.csv's rows from the shards again here
            return write_outputs(out, plan.config, plan.records, meta, stopped);
        } catch (const ShardError& e) {
            throw UsageError(e.what());
        }
    } catch (const std::bad_alloc&) {
        throw std::runtime_error("out of memory while merging in memory; no results were written. Merge with "
                                 "dpregret merge --bounded-memory, which holds no point's values in memory and writes "
                                 "the same bytes (docs/SCALING.md)");
    }
}

} // namespace dpr::api
