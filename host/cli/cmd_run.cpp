// `dpregret run CONFIG.toml`: the path from an experiment file to regret distributions.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <ctime>
#include <iostream>
#include <new>
#include <stdexcept>
#include <sstream>
#include <thread>

#include "host/api/run.hpp"
#include "host/backend/cuda_api.hpp"
#include "host/cli/args.hpp"
#include "host/cli/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/config/config.hpp"
#include "host/results/memory_estimate.hpp"
#include "host/results/outputs.hpp"
#include "host/engine/point_runner.hpp"
#include "host/results/progress_store.hpp"
#include "host/results/shards.hpp"
#include "host/version.hpp"
#include "kernels/rng/stream.hpp"
#include "host/io/error.hpp"
#include "host/io/run_dir.hpp"
#include "host/mpi/world.hpp"
#include "host/progress/interrupt.hpp"
#include "host/progress/progress.hpp"

namespace dpr::cli {
namespace {

struct RunOptions {
    std::string config;
    std::string out;
    std::vector<std::string> sets;
    std::string backend = "auto";
    std::string threads;
    bool quiet = false;
    bool list_keys = false;
    std::string memory_limit = "auto";
    std::string shard; ///< "I/K": write a shard directory (host/results/shards.hpp)
    std::string resume; ///< DIR of an unfinished run (host/results/progress_store.hpp)
    std::string piece_instances; ///< instances per resumable piece ("" = auto)
};

/// What `dpregret run --help` says the command does.
constexpr const char* kAbout =
    "Run an experiment file: config points x instances x T rounds of an online learner against an\n"
    "oblivious adversary, recording regret at log-spaced checkpoints (always including T).\n"
    "Every key of the file may be a list; the run is then the Cartesian product (a sweep).";

/// Every key a run accepts: [run], then each adversary kind and each learner with defaults and ranges.
void print_keys() {
    const config::ConfigInputs in = api::run_config_inputs();
    std::cout << config::describe_run_keys() << "\n";
    for (const auto& c : in.adversaries) std::cout << config::describe_keys(c) << "\n";
    for (const auto& c : in.learners) std::cout << config::describe_keys(c) << "\n";
}


/// After a failure: removes a shard's partial arrays (the pieces hold them) and, if no piece was finished, the
/// progress store; the directory goes if this run created it and it is empty. Returns "; the N finished piece(s)
/// are kept ... --resume DIR" when pieces were kept, "" otherwise.
std::string keep_finished_work(const std::optional<ProgressStore>& progress, const std::vector<std::string>& shard_files,
                               io::OutputDirectory& out) {
    for (const std::string& f : shard_files) out.dir().remove_file(f);
    const std::size_t done = progress ? progress->finished_pieces() : 0;
    if (progress && done == 0) progress->remove();
    out.remove_created();
    if (done == 0) return "";
    return "; the " + std::to_string(done) + " finished piece(s) are kept in " + out.path() + "/" +
           ProgressStore::kDirName + ": once the cause is removed, continue with dpregret run --resume " + out.path() +
           " (or remove " + out.path() + " to discard them)";
}

/// What a run starts from: the experiment file and its overrides, or, with --resume DIR, the unfinished run in DIR
/// (its directory locked before its .progress is read, so that a second --resume is refused) and the file and
/// overrides it was started with.
struct Source {
    api::ConfigSource file; ///< the experiment file and its --set overrides
    std::optional<ProgressStore> resumed;
    io::OutputDirectory resumed_dir;
    config::Config config;
    std::vector<InputFile> inputs; ///< the loss files' digests: part of the run's identity (input_digest.hpp)
};

Source load_source(const RunOptions& o) {
    Source src;
    src.file.config_path = o.config;
    src.file.overrides = o.sets;
    if (!o.resume.empty()) {
        if (!o.config.empty() || !o.sets.empty() || !o.shard.empty() || !o.out.empty() || !o.piece_instances.empty())
            throw UsageError("--resume DIR continues the run in DIR with its own config and settings; give no CONFIG, "
                             "--set, --shard, --out or --piece-instances with it");
        try {
            // Locked before its .progress is read; a directory without one is not locked, only told why not.
            if (!ProgressStore::exists(o.resume)) throw UsageError(ProgressStore::nothing_to_resume(o.resume));
            src.resumed_dir = io::OutputDirectory::resume(o.resume, "--resume");
            src.resumed = ProgressStore::open(src.resumed_dir.dir());
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        } catch (const io::IoError& e) {
            throw UsageError(e.what());
        }
        src.file.config_path = src.resumed->spec().absolute_path;
        src.file.overrides = src.resumed->spec().overrides;
    }
    try {
        src.config = api::load_config_for(src.file, api::run_config_inputs());
    } catch (const std::bad_alloc&) {
        throw std::runtime_error("out of memory while reading " + src.file.config_path +
                                 " (a sweep of many points, or a large loss file); split the sweep into several runs");
    }
    return src;
}

/// Digests the loss files; a resumed run must find its config and its files as they were.
void check_inputs(const RunOptions& o, Source& src) {
    if (src.resumed && src.config.resolved_toml != src.resumed->spec().resolved_toml)
        throw UsageError("--resume " + o.resume + ": " + src.resumed->spec().config_path +
                         " has changed since the run started (its resolved TOML differs from .progress/spec.json); "
                         "resuming needs the file the run was started from");
    try {
        src.inputs = digest_inputs(api::input_paths(src.config));
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }
    if (src.resumed) {
        const std::string change = input_change(src.resumed->spec().inputs, src.inputs);
        if (!change.empty())
            throw UsageError("--resume " + o.resume + ": " + change + " since the run started; its finished pieces "
                             "were computed from the old contents and resuming would mix two inputs in one result. "
                             "Restore the file, or remove " + o.resume + " to start over");
    }
}

/// The instances this process runs, and how it runs them: all of them (one process), a shard's (--shard I/K or
/// the resumed shard's), or an MPI rank's (shard r of R; rank 0 gathers and writes).
struct Slice {
    bool sharded = false;
    ShardSpec shard;
    bool ranked = false; ///< under mpirun with more than one rank
    bool root = true;    ///< rank 0, or the only process
    std::uint64_t first = 0, count = 0;
};

Slice slice_of(const RunOptions& o, const Source& src, unsigned* threads) {
    const config::Config& loaded = src.config;
    Slice sl;
    const std::string shard_text = src.resumed ? src.resumed->spec().shard : o.shard;
    sl.sharded = !shard_text.empty();
    if (sl.sharded) {
        try {
            sl.shard = parse_shard(shard_text);
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
        if (sl.shard.count > loaded.run.instances)
            throw UsageError("--shard " + shard_text + ": " + std::to_string(sl.shard.count) + " shards of [run] instances = " +
                             std::to_string(loaded.run.instances) + " would leave some empty; use at most " +
                             std::to_string(loaded.run.instances) + " shards");
        shard_range(sl.shard, loaded.run.instances, &sl.first, &sl.count);
    }
    // mpirun -n R: rank r runs the instances of shard r of R and rank 0 gathers them (host/mpi/world.hpp).
    const mpi::World& W = mpi::world();
    if (W.size > 1 && !W.active)
        throw UsageError("started by an MPI launcher as rank " + std::to_string(W.rank) + " of " + std::to_string(W.size) +
                         ", but this dpregret was built without MPI, so every rank would run the whole run; rebuild "
                         "with MPI (libopenmpi-dev, installed by scripts/deps.sh) or run one process");
    sl.ranked = W.active && W.size > 1;
    sl.root = W.rank == 0;
    if (sl.ranked) {
        if (sl.sharded || !o.resume.empty())
            throw UsageError("--shard and --resume are for single-process runs; under mpirun the ranks split the "
                             "instances themselves (docs/SCALING.md)");
        if (loaded.run.instances > 0xFFFFFFFFull)
            throw UsageError("[run] instances = " + std::to_string(loaded.run.instances) +
                             " under mpirun: rank 0 gathers every instance of a point, at most 4294967295; split the "
                             "run with --shard I/K instead (docs/SCALING.md)");
        if (static_cast<std::uint64_t>(W.size) > loaded.run.instances)
            throw UsageError(std::to_string(W.size) + " MPI ranks for [run] instances = " +
                             std::to_string(loaded.run.instances) + " would leave some idle; use at most " +
                             std::to_string(loaded.run.instances) + " ranks");
        shard_range(ShardSpec{static_cast<std::uint64_t>(W.rank), static_cast<std::uint64_t>(W.size)},
                    loaded.run.instances, &sl.first, &sl.count);
        if (o.threads.empty()) *threads = std::max(1u, std::thread::hardware_concurrency() / std::max(1, W.local_size));
    }
    return sl;
}

/// Prints every point's warnings and the first few guarantees above the request; returns the run's
/// instance-rounds (the progress bar's total).
std::uint64_t report_plan(const api::Plan& plan) {
    const config::Config& cfg = plan.config;
    std::uint64_t total_work = 0;
    std::size_t excess_points = 0; // points whose guarantee exceeds the request: the first few are printed
    for (std::size_t i = 0; i < cfg.points.size(); ++i) {
        total_work = sat_add(total_work, sat_mul(plan.instance_count, cfg.points[i].problem.T));
        for (const std::string& w : cfg.points[i].warnings)
            std::cerr << "dpregret: warning: point " << i << ": " << w << "\n";
        const std::string excess = api::privacy_excess(cfg.points[i], plan.records[i].learner.privacy);
        if (!excess.empty() && ++excess_points <= 3)
            std::cerr << "dpregret: warning: point " << i << ": " << excess << "\n";
    }
    if (excess_points > 3)
        std::cerr << "dpregret: warning: " << excess_points - 3 << " more point(s) guarantee more than they request; "
                  << "run.json gives every point's guarantee\n";
    const std::string in_float = api::float_privacy_warning(cfg, plan.records);
    if (!in_float.empty()) std::cerr << "dpregret: warning: " << in_float << "\n";
    return total_work;
}

/// The output directory, locked (a second process on it is refused, host/io/dir_lock.hpp) and checked for disk
/// space before anything is simulated. Under MPI rank 0 alone owns it; the other ranks learn whether it is
/// usable, and exit 2 with it when it is not.
io::OutputDirectory open_output(const RunOptions& o, Source& src, const Slice& sl, const api::Plan& plan) {
    io::OutputDirectory out;
    if (sl.ranked && !sl.root) {
        if (mpi::broadcast(0) == 0) {
            mpi::finalize();
            std::exit(kExitUsage);
        }
        return out;
    }
    try {
        const std::string stem = utc_now("%Y%m%d-%H%M%S") +
                                 (sl.sharded ? "-shard-" + std::to_string(sl.shard.index) + "-of-" +
                                                   std::to_string(sl.shard.count)
                                             : "");
        // Locked first, then looked at.
        if (src.resumed) out = std::move(src.resumed_dir);
        else if (o.out.empty()) out = io::OutputDirectory::create_unique("runs", stem);
        else out = io::OutputDirectory::open(o.out, sl.sharded ? io::OutputKind::Shard : io::OutputKind::Run);
        // Disk, like memory, before anything is simulated: a full disk would stop the run at its end.
        std::uint64_t disk =
            estimate_run_disk(plan.config, plan.records, plan.instance_count,
                              sl.ranked ? DiskRole::MpiRoot : sl.sharded ? DiskRole::Shard : DiskRole::Run);
        if (src.resumed) disk -= std::min(disk, src.resumed->stored_bytes()); // the finished pieces are there already
        const std::optional<std::uint64_t> free_disk = available_disk_bytes(out.path());
        if (!fits_on_disk(disk, free_disk))
            throw UsageError("this run needs about " + human_bytes(disk) + " of disk in " + out.path() +
                             (sl.ranked ? std::string(" (the result files of every rank's instances)")
                                        : std::string(" (its finished pieces, 8 bytes x instances x (2 x checkpoints + "
                                                      "diagnostics + 1) per point, and the result files)")) +
                             ", but " + human_bytes(*free_disk) +
                             " is free there. Free space, choose another --out, or reduce [run] instances, "
                             "checkpoints or the sweep");
    } catch (const io::IoError& e) {
        if (sl.ranked) (void)mpi::broadcast(0);
        out.remove_created();
        throw UsageError(e.what());
    } catch (...) {
        if (sl.ranked) (void)mpi::broadcast(0);
        out.remove_created();
        throw;
    }
    if (sl.ranked) (void)mpi::broadcast(1);
    return out;
}

/// The progress store of a resumable run or shard (not of an MPI rank): finished pieces survive a kill. A resumed
/// run keeps its own.
std::optional<ProgressStore> open_progress(const RunOptions& o, Source& src, const Slice& sl, const api::Plan& plan,
                                           std::uint64_t piece, io::OutputDirectory& out) {
    std::optional<ProgressStore> progress = std::move(src.resumed);
    if (progress || sl.ranked) return progress;
    const bool cuda = plan.backend == Backend::Cuda;
    ProgressSpec spec;
    spec.config_path = o.config;
    std::error_code ec;
    spec.absolute_path = std::filesystem::absolute(o.config, ec).string();
    if (ec) spec.absolute_path = o.config;
    spec.overrides = o.sets;
    spec.resolved_toml = plan.config.resolved_toml;
    spec.batch = piece ? piece : api::auto_piece_instances(plan.config, plan.records, cuda);
    spec.group_work = api::group_work_budget(plan.config, plan.records, piece, cuda);
    spec.backend_requested = o.backend;
    spec.shard = o.shard;
    spec.version = build_info().version;
    spec.git_commit = build_info().git_commit;
    spec.layout = static_cast<int>(rng::kStreamLayout);
    spec.inputs = src.inputs;
    try {
        progress = ProgressStore::create(out.dir(), spec);
    } catch (const io::IoError& e) {
        out.remove_created();
        throw UsageError(e.what());
    }
    return progress;
}

/// What each way of running does after a point: one process condenses it for the result files; a shard writes
/// its per-instance arrays (`shard_files`, removed again unless the shard completes); an MPI rank sends its
/// instances to rank 0, which condenses the point exactly as one process does, and every rank ends all of them
/// on an interrupt (the others would wait forever).
void set_driver_hooks(const Slice& sl, const config::Config& cfg, io::OutputDirectory& out,
                      std::vector<std::string>& shard_files, api::RunSpec& run_spec, api::ExecuteHooks& hooks) {
    hooks.after_point = [](PointRecord& r) { finish_point(r); }; // condensed for write_outputs, nothing copied
    if (sl.ranked) {
        run_spec.interrupted = [&out, root = sl.root] {
            if (!interrupted()) return false;
            if (root) {
                std::cerr << "dpregret: interrupted; no results were written\n";
                out.remove_created(); // an MPI run keeps no pieces: nothing of it stays
            }
            mpi::abort(128 + interrupt_signal());
        };
        hooks.after_point = [&cfg, root = sl.root](PointRecord& r) {
            PointResult& po = r.result;
            po.regret = mpi::gather(po.regret);
            po.realized_regret = mpi::gather(po.realized_regret);
            po.diagnostics = mpi::gather(po.diagnostics);
            if (r.point->per_instance) po.comparator = mpi::gather(po.comparator);
            const std::vector<double> bad =
                mpi::gather(std::vector<double>(po.first_nonfinite_round.begin(), po.first_nonfinite_round.end()));
            po.wall_seconds = mpi::max_all(po.wall_seconds);
            if (!root) {
                po = PointResult{};
                return;
            }
            po.instances = cfg.run.instances;
            po.first_nonfinite_round.assign(bad.begin(), bad.end());
            finish_point(r);
        };
    }
    if (sl.sharded) {
        hooks.after_point = [&out, &shard_files, first = sl.first](PointRecord& r) {
            check_point_finite(r, first); // messages name global instance ids
            for (std::string& f : write_shard_point(out.dir(), r)) shard_files.push_back(std::move(f));
        };
    }
}

/// The last line of a run or shard that completed.
void print_done(const Slice& sl, const api::Plan& plan, const std::string& device, const std::string& dir) {
    const config::Config& cfg = plan.config;
    const std::vector<PointRecord>& recs = plan.records;
    if (sl.sharded) {
        std::cout << "dpregret: shard " << sl.shard.index << "/" << sl.shard.count << " (instances " << sl.first << ".."
                  << sl.first + sl.count - 1 << " of " << cfg.run.instances << ") of " << recs.size()
                  << " point(s) in " << dir << "/; merge all " << sl.shard.count
                  << " with: dpregret merge SHARD_DIR... --out DIR\n";
        return;
    }
    double sim = 0;
    for (const auto& r : recs) sim += r.result.wall_seconds;
    std::cout << "dpregret: " << recs.size() << " point(s) x " << cfg.run.instances << " instances on " << device
              << " in " << sim << " s; results in " << dir << "/ (summary.csv, final_regret.csv, "
              << (recs.size() > kInlinePoints ? "points.jsonl, " : "") << "run.json)\n";
}

/// `dpregret run`: one process, a shard, an MPI rank or a resumed run — the same steps, in this order: what
/// the run is (source, slice, plan: every input checked), where it goes (memory, output directory, progress
/// store: before anything is simulated), then the simulation and the result files.
void run_command(const RunOptions& o) {
    const InterruptScope interrupt_scope;
    const auto t_start = std::chrono::steady_clock::now();
    const std::string started = utc_now("%Y-%m-%dT%H:%M:%SZ");
    Source src = load_source(o);
    const Backend requested = o.backend == "cpu"    ? Backend::Cpu
                              : o.backend == "cuda" ? Backend::Cuda
                                                    : Backend::Auto;
    unsigned threads = parse_threads(o.threads);
    const api::MemoryLimit memory_limit = api::parse_memory_limit(o.memory_limit);
    check_inputs(o, src);
    const std::uint64_t piece =
        o.piece_instances.empty() ? 0 : parse_integer("--piece-instances", o.piece_instances, 1, 4294967295ull);
    const Slice sl = slice_of(o, src, &threads);

    // The API's plan (host/api/run.hpp): every point resolved, the slice and its ids checked, the backend chosen
    // and the launch request checked -- everything that can refuse the input, before anything is simulated.
    const mpi::World& W = mpi::world();
    if (sl.ranked && requested != Backend::Cpu) (void)cuda_api::use_device(W.local_rank); // one GPU per rank
    api::RunSpec run_spec;
    run_spec.backend = requested;
    run_spec.threads = threads;
    if (sl.sharded || sl.ranked) {
        run_spec.first_instance = sl.first;
        run_spec.instance_count = sl.count;
    }
    api::Plan plan = api::plan(std::move(src.config), run_spec);
    const config::Config& cfg = plan.config;
    std::vector<PointRecord>& recs = plan.records;
    const bool cuda = plan.backend == Backend::Cuda;
    const std::uint64_t total_work = report_plan(plan);
    std::string device = "cpu: " + std::to_string(threads) + " threads";
    std::uint64_t device_bytes = 0;
    if (cuda) {
        const auto info = cuda_api::query_devices();
        device = info.name + " (sm_" + std::to_string(info.sm_major) + std::to_string(info.sm_minor) + ")";
        device_bytes = static_cast<std::uint64_t>(info.memory_gib * 1073741824.0);
    } else if (requested == Backend::Auto && !plan.why_not_cuda.empty() && !o.quiet &&
               cuda_api::query_devices().device_count > 0) {
        std::cerr << "dpregret: note: running on the CPU although a GPU is visible: " << plan.why_not_cuda << "\n";
    }

    // Memory, then the output directory: both before anything is simulated.
    const MemoryEstimate estimate =
        estimate_run_memory(cfg, recs, threads, PointJob::kDefaultChunkBytes, cuda, plan.instance_count);
    api::check_memory(estimate, memory_limit, device_bytes);
    io::OutputDirectory out = open_output(o, src, sl, plan);
    // A second signal ends the process at once: it still removes the lock file and the directory if this run
    // created it and it is empty; an MPI rank then exits with 128 + the signal for the launcher to report.
    set_interrupt_cleanup(out.lock_path(), out.created_leaf(), sl.ranked);
    const std::string& dir = out.path();
    for (const std::string& name : out.removed_stale())
        std::cerr << "dpregret: removed " << name << ", left in " << dir << " by a run that was killed\n";
    std::optional<ProgressStore> progress = open_progress(o, src, sl, plan, piece, out);

    // From here on, any way out but success leaves no result file and removes what this run created; an
    // interrupted run keeps its finished pieces for --resume.
    std::vector<std::string> shard_files; // removed again unless the shard completes
    const auto stopped = [&] {
        std::cerr << "dpregret: interrupted; no results were written"
                  << (progress ? "; continue with: dpregret run --resume " + dir : std::string()) << "\n";
        return Interrupted(interrupt_signal());
    };
    try {
        std::ostringstream sink; // --quiet: progress goes nowhere
        ProgressReporter::Options popt;
        popt.label = "run";
        if (o.quiet || !sl.root) popt.out = &sink;
        ProgressReporter bar(total_work, "instance-rounds", popt);
        run_spec.on_progress = [&](std::uint64_t n) { bar.advance(n); };
        run_spec.interrupted = [] { return interrupted(); };
        api::ExecuteHooks hooks;
        if (progress) {
            hooks.progress = &*progress;
            hooks.piece_instances = progress->spec().batch;
        }
        set_driver_hooks(sl, cfg, out, shard_files, run_spec, hooks);
        bool completed = false;
        try {
            completed = api::execute(plan, run_spec, hooks).completed;
        } catch (const std::exception& e) {
            if (!sl.ranked) throw;
            // One rank failed (a non-finite result, a device error): end them all, or the others wait forever.
            std::cerr << "dpregret: error (rank " << W.rank << "): " << e.what() << "\n";
            if (sl.root) out.remove_created();
            mpi::abort(dynamic_cast<const UsageError*>(&e) ? kExitUsage : kExitFailure);
        }
        if (sl.ranked && !sl.root) return; // rank 0 writes the results
        bar.finish();
        if (!completed || interrupted()) throw stopped();

        RunMeta meta;
        meta.config_path = progress ? progress->spec().config_path : o.config;
        if (progress) meta.config_absolute_path = progress->spec().absolute_path;
        meta.overrides = src.file.overrides;
        meta.backend_requested = o.backend;
        meta.device = sl.ranked ? device + " x " + std::to_string(W.size) + " MPI ranks" : device;
        meta.threads = threads;
        meta.started_at = started;
        meta.memory_estimate_bytes = estimate.host_bytes;
        meta.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        if (sl.sharded) {
            if (interrupted()) throw stopped();
            write_shard_manifest(out.dir(), cfg, recs, meta, sl.shard, sl.first, sl.count, src.inputs);
        } else if (!write_outputs(out.dir(), cfg, recs, meta, [] { return interrupted(); })) {
            throw stopped();
        }
    } catch (const std::bad_alloc&) {
        const std::string kept = keep_finished_work(progress, shard_files, out);
        throw std::runtime_error("out of memory while running (the estimate was " + human_bytes(estimate.host_bytes) +
                                 "); no results were written" + kept +
                                 ". Reduce [run] instances, [adversary] d or the sweep, or free memory");
    } catch (const Interrupted&) {
        out.remove_created(); // a kept .progress keeps the directory
        throw;
    } catch (...) {
        // A failure that may pass (disk full, a device error) must not cost the finished pieces; one that would
        // recur still leaves them to the user, who removes the directory (docs/OUTPUTS.md "After a crash").
        const std::string kept = keep_finished_work(progress, shard_files, out);
        if (!kept.empty()) std::cerr << "dpregret: " << kept.substr(2) << "\n";
        throw;
    }
    if (progress) progress->remove();
    // run.json is in place: the run is complete, whatever signal may still arrive.
    if (!o.quiet) print_done(sl, plan, device, dir);
}

} // namespace

void add_run_command(CLI::App& app) {
    auto opts = std::make_shared<RunOptions>();
    CLI::App* cmd = app.add_subcommand("run", kAbout);
    cmd->add_option("config", opts->config, "experiment file (TOML); see docs/CONFIG.md");
    cmd->add_flag("--list-keys", opts->list_keys,
                  "print every key of [run], each adversary kind and each learner (default, range, meaning) and exit");
    cmd->add_option("--out", opts->out,
                    "output directory (default runs/<UTC timestamp>[-N]/, a new directory for every run)");
    cmd->add_option("--set", opts->sets,
                    "override a key: --set learner.epsilon=[0.1,1] (VALUE is TOML; repeatable)");
    cmd->add_option("--backend", opts->backend, "auto (CUDA if a GPU is visible, else CPU), cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option("--threads", opts->threads,
                    "CPU threads (default: all cores); results do not depend on it");
    cmd->add_flag("--quiet", opts->quiet, "no progress bar or closing line");
    cmd->add_option("--resume", opts->resume,
                    "DIR: continue the unfinished run in DIR (killed or interrupted), recomputing only what it had "
                    "not finished; the results are byte-identical to an uninterrupted run's");
    cmd->add_option("--piece-instances", opts->piece_instances,
                    "instances per resumable piece of a point (default: about a minute of work); finished pieces "
                    "are kept in DIR/.progress until run.json is written");
    cmd->add_option("--shard", opts->shard,
                    "I/K: run only shard I of K (instances [I*N/K, (I+1)*N/K) of every point) and write a shard "
                    "directory; `dpregret merge` joins the K shards into the outputs of the unsharded run, byte for byte");
    add_memory_limit_option(cmd, opts->memory_limit, "a run");
    cmd->footer("\nOutputs (in --out): summary.csv (one row per point and checkpoint: mean, std, sem and\n"
                "quantiles of regret over instances), final_regret.csv (every instance's regret at T),\n"
                "run.json (resolved config, seed, version, commit, backend, threads, wall time, throughput,\n"
                "privacy guarantee per point). A sweep of more than 1000 points writes the per-point detail\n"
                "to points.jsonl instead of run.json. Interrupting (SIGINT: exit 130, SIGTERM: exit 143)\n"
                "before run.json is in place leaves no results behind.\n\n"
                "Example:\n"
                "  dpregret run experiments/quickstart.toml --out runs/quickstart --set run.instances=200\n");
    cmd->callback([opts] {
        if (opts->list_keys) return print_keys();
        if (opts->config.empty() && opts->resume.empty())
            throw UsageError("run needs an experiment file: dpregret run CONFIG.toml, or --resume DIR (see --help)");
        run_command(*opts);
    });
}

} // namespace dpr::cli
