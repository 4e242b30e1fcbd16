// `dpregret merge SHARD_DIR... --out DIR`: the outputs of the unsharded run from its shards (host/results/shards.hpp).
#include <CLI/CLI.hpp>

#include <iostream>

#include "host/cli/errors.hpp"
#include "host/api/merge.hpp"
#include "host/cli/args.hpp"
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

void merge_command(const MergeOptions& o) {
    const InterruptScope interrupt_scope;
    api::MergeSpec spec;
    spec.shards = o.shards;
    spec.bounded_memory = o.bounded_memory;
    spec.read_rows = o.read_rows;
    spec.select_bytes = o.select_mib << 20;
    spec.memory_limit = o.memory_limit;
    spec.interrupted = [] { return interrupted(); };
    // The API's plan (host/api/merge.hpp): everything that can refuse the input, before the directory exists.
    api::MergePlan plan = api::plan_merge(spec);
    io::OutputDirectory out;
    try {
        out = io::OutputDirectory::open(o.out, io::OutputKind::Run); // refuses a shard's directory: an input's
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }
    // A second signal ends the process at once: it still removes the lock file and a directory merge created.
    set_interrupt_cleanup(out.lock_path(), out.created_leaf());
    try {
        if (!api::execute_merge(plan, spec, out.dir()) || interrupted()) {
            std::cerr << "dpregret: interrupted; no results were written\n";
            throw Interrupted(interrupt_signal());
        }
    } catch (...) {
        out.remove_created();
        throw;
    }
    if (!o.quiet)
        std::cout << "dpregret: merged " << plan.set.dirs.size() << " shard(s) of " << plan.records.size()
                  << " point(s) x " << plan.config.run.instances << " instances into " << out.path()
                  << "/ (summary.csv, final_regret.csv, " << (plan.records.size() > kInlinePoints ? "points.jsonl, " : "")
                  << "run.json)\n";
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
