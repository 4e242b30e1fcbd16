// `dpregret merge SHARD_DIR... --out DIR`: the outputs of the unsharded run from its shards (host/engine/shards.hpp).
#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>

#include "host/cli/errors.hpp"
#include "host/cli/run_pipeline.hpp"
#include "host/config/config.hpp"
#include "host/engine/outputs.hpp"
#include "host/engine/shards.hpp"
#include "host/io/error.hpp"
#include "host/io/run_dir.hpp"
#include "host/progress/interrupt.hpp"

namespace dpr::cli {
namespace {

struct MergeOptions {
    std::vector<std::string> shards;
    std::string out;
    bool quiet = false;
};

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
        cfg = config::load_config(set.config_path, set.overrides, run_config_inputs());
    } catch (const std::exception& e) {
        throw UsageError("cannot reload the shards' config " + set.config_path + ": " + e.what());
    }
    if (cfg.resolved_toml != set.resolved_toml)
        throw UsageError(set.config_path + " has changed since the shards ran (its resolved TOML differs from "
                         "shard.json's); merge needs the file the shards were started from");
    std::vector<PointRecord> recs = resolve_points(cfg);
    io::OutputDirectory out;
    try {
        out = io::OutputDirectory::open(o.out);
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }
    try {
        for (PointRecord& r : recs) {
            if (interrupted()) throw Interrupted(interrupt_signal());
            try {
                merge_point(set, r);
            } catch (const ShardError& e) {
                throw UsageError(e.what());
            }
            if (r.outcome.instances != cfg.run.instances)
                throw UsageError("the shards hold " + std::to_string(r.outcome.instances) + " instances of point " +
                                 std::to_string(r.point->index) + ", the config " + std::to_string(cfg.run.instances));
            finish_point(r);
        }
        RunMeta meta = set.meta;
        meta.wall_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        if (!write_outputs(out.path(), cfg, recs, meta, [] { return interrupted(); })) {
            std::cerr << "dpregret: interrupted; no results were written\n";
            throw Interrupted(interrupt_signal());
        }
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
    CLI::App* cmd = app.add_subcommand(
        "merge",
        "Join the K shards of a run (dpregret run ... --shard I/K) into its outputs: summary.csv and\n"
        "final_regret.csv byte-identical to the unsharded run's, run.json equal but for timing and host\n"
        "fields. Refuses shards of different configs, seeds, versions or layouts, and missing or repeated\n"
        "shards (exit 2, with the reason).");
    cmd->add_option("shards", opts->shards, "the K shard directories, in any order")->required();
    cmd->add_option("--out", opts->out, "output directory (refused if it holds run.json)")->required();
    cmd->add_flag("--quiet", opts->quiet, "no closing line");
    cmd->footer("\nExample:\n  for i in 0 1 2; do dpregret run experiments/quickstart.toml --shard $i/3 --out s$i; done\n"
                "  dpregret merge s0 s1 s2 --out merged\n");
    cmd->callback([opts] { merge_command(*opts); });
}

} // namespace dpr::cli
