// `dpregret merge SHARD_DIR... --out DIR`: the outputs of the unsharded run from its shards (host/results/shards.hpp).
#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <new>
#include <stdexcept>

#include "host/cli/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/cli/args.hpp"
#include "host/config/config.hpp"
#include "host/results/memory_estimate.hpp"
#include "host/results/merge_streamed.hpp"
#include "host/results/outputs.hpp"
#include "host/results/shards.hpp"
#include "host/io/error.hpp"
#include "host/io/run_dir.hpp"
#include "host/progress/interrupt.hpp"

namespace dpr::cli {
namespace {

struct MergeOptions {
    std::vector<std::string> shards;
    std::string out;
    bool quiet = false;
    bool bounded_memory = false;
    std::uint64_t read_rows = 0;
    std::size_t select_mib = kSelectBytes >> 20;
    std::string memory_limit;
};

/// What `dpregret merge --help` says the command does.
constexpr const char* kAbout =
    "Join the K shards of a run (dpregret run ... --shard I/K) into its outputs: summary.csv and\n"
    "final_regret.csv byte-identical to the unsharded run's, run.json equal but for timing and host\n"
    "fields. Refuses shards of different configs, seeds, versions or layouts, and missing or repeated\n"
    "shards (exit 2, with the reason).";

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

void merge_command(const MergeOptions& o) {
    const InterruptScope interrupt_scope;
    const auto t_start = std::chrono::steady_clock::now();
    ShardSet set;
    try {
        set = read_shards(o.shards);
    } catch (const ShardError& e) {
        throw UsageError(e.what());
    }
    config::Config cfg;
    try {
        cfg = config::load_config(set.config_path, set.overrides, api::run_config_inputs());
    } catch (const std::exception& e) {
        throw UsageError("cannot reload the shards' config " + set.config_path + ": " + e.what());
    }
    if (cfg.resolved_toml != set.resolved_toml)
        throw UsageError(set.config_path + " has changed since the shards ran (its resolved TOML differs from "
                         "shard.json's); merge needs the file the shards were started from");
    std::vector<PointRecord> recs = api::resolve_points(cfg);
    const api::MemoryLimit memory_limit = api::parse_memory_limit(o.memory_limit);
    if (!o.bounded_memory)
        api::check_memory(estimate_merge_memory(cfg, recs), memory_limit, 0,
                     "Merge with dpregret merge --bounded-memory, which holds none of them and writes the same bytes "
                     "(docs/SCALING.md); --memory-limit none merges in memory anyway.",
                     "merge");
    io::OutputDirectory out;
    try {
        out = io::OutputDirectory::open(o.out, io::OutputKind::Run); // refuses a shard's directory: an input's
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }
    // A second signal ends the process at once: it still removes the lock file and a directory merge created.
    set_interrupt_cleanup(out.lock_path(), out.created_leaf());
    try {
        for (PointRecord& r : recs) {
            if (interrupted()) throw Interrupted(interrupt_signal());
            try {
                if (o.bounded_memory) finish_point_streamed(set, r, cfg.run.instances, o.select_mib << 20, o.read_rows);
                else merge_point(set, r, cfg.run.instances);
            } catch (const ShardError& e) {
                throw UsageError(e.what());
            }
            if (!o.bounded_memory) finish_point(r);
        }
        RunMeta meta = set.meta;
        meta.wall_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        bool written = false;
        try { // --bounded-memory reads final_regret.csv's rows from the shards again here
            written = write_outputs(out.dir(), cfg, recs, meta, [] { return interrupted(); });
        } catch (const ShardError& e) {
            throw UsageError(e.what());
        }
        if (!written) {
            std::cerr << "dpregret: interrupted; no results were written\n";
            throw Interrupted(interrupt_signal());
        }
    } catch (const std::bad_alloc&) {
        out.remove_created();
        throw std::runtime_error("out of memory while merging in memory; no results were written. Merge with "
                                 "dpregret merge --bounded-memory, which holds no point's values in memory and writes "
                                 "the same bytes (docs/SCALING.md)");
    } catch (...) {
        out.remove_created();
        throw;
    }
    if (!o.quiet)
        std::cout << "dpregret: merged " << set.dirs.size() << " shard(s) of " << recs.size() << " point(s) x "
                  << cfg.run.instances << " instances into " << out.path() << "/ (summary.csv, final_regret.csv, "
                  << (recs.size() > kInlinePoints ? "points.jsonl, " : "") << "run.json)\n";
}

} // namespace

void add_merge_command(CLI::App& app) {
    auto opts = std::make_shared<MergeOptions>();
    CLI::App* cmd = app.add_subcommand("merge", kAbout);
    cmd->add_option("shards", opts->shards, "the K shard directories, in any order")->required();
    cmd->add_option("--out", opts->out, "output directory (refused if it holds results of any kind: a run, an audit, a shard)")->required();
    CLI::Option* bounded = cmd->add_flag("--bounded-memory", opts->bounded_memory,
                  "keep no point's per-instance values in memory: read the shards in blocks, in several passes\n"
                  "(exact quantiles by radix selection: the same bytes as without it), for points of more than\n"
                  "2^32 - 1 instances or whose values exceed this machine's memory (docs/SCALING.md)");
    cmd->add_option("--read-rows", opts->read_rows,
                    "with --bounded-memory: instances per read block (default: about 8 MiB of the widest array)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40))
        ->needs(bounded);
    cmd->add_option("--select-mib", opts->select_mib,
                    "with --bounded-memory: memory for the selection's histograms (about 1.4 MiB per checkpoint;\n"
                    "fewer MiB, more passes over the shards)")
        ->capture_default_str()
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
        ->needs(bounded);
    add_memory_limit_option(cmd, opts->memory_limit, "an in-memory merge");
    cmd->add_flag("--quiet", opts->quiet, "no closing line");
    cmd->footer("\nExample:\n  for i in 0 1 2; do dpregret run experiments/quickstart.toml --shard $i/3 --out s$i; done\n"
                "  dpregret merge s0 s1 s2 --out merged\n"
                "  dpregret merge s0 s1 s2 --out merged --bounded-memory   # the same bytes, in bounded memory\n");
    cmd->callback([opts] { merge_command(*opts); });
}

} // namespace dpr::cli
