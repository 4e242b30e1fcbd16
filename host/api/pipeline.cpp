#include "host/api/pipeline.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include "host/api/errors.hpp"
#include "host/config/component_info.hpp"
#include "host/cpu/cpu_isa.hpp"
#include "host/engine/checkpoints.hpp"
#include "host/engine/loss_file.hpp"
#include "host/engine/registry.hpp"
#include "host/io/error.hpp"
#include "kernels/adversaries/common.hpp"
#include "kernels/adversaries/registry.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::api {

config::ConfigInputs run_config_inputs(const LossArrays& arrays) {
    config::ConfigInputs in;
    in.learners = config::describe_all<learners::AllLearners>("learner");
    in.adversaries = config::describe_all<adversaries::AllAdversaries>("adversary");
    for (const auto& [name, array] : arrays) in.memory_paths.push_back(name);
    in.file_dimension = [arrays](const std::string& path) {
        const auto it = arrays.find(path);
        if (it == arrays.end()) return loss_file_columns(path);
        if (it->second.cols < 1 || it->second.cols > kMaxLossFileColumns)
            throw io::IoError(path + ": has " + std::to_string(it->second.cols) +
                              " columns; d must be in 1.." + std::to_string(kMaxLossFileColumns) +
                              " ([adversary] d)");
        return static_cast<std::uint32_t>(it->second.cols);
    };
    in.file_values = [arrays](const std::string& path, const Problem& pb, Geometry loss_set) {
        const auto it = arrays.find(path);
        if (it == arrays.end()) {
            std::shared_ptr<const std::vector<double>> v = load_loss_file(path, pb.T, pb.d, loss_set);
            return config::LossValues{v, v->data(), v->size()};
        }
        const LossArray& a = it->second;
        check_loss_matrix(path, a.data, a.rows, a.cols, pb.T, pb.d, loss_set);
        return config::LossValues{nullptr, a.data,
                                  static_cast<std::size_t>(a.rows * a.cols)}; // read in place
    };
    return in;
}

config::Config load_config_for(const ConfigSource& source, const config::ConfigInputs& inputs) {
    try {
        return source.config_path.empty()
                   ? config::parse_config(source.toml_text, source.source_name, source.overrides, inputs)
                   : config::load_config(source.config_path, source.overrides, inputs);
    } catch (const config::ConfigError& e) {
        throw UsageError(e.what());
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }
}

std::vector<std::string> input_paths(const config::Config& cfg) {
    const config::ConfigInputs in = run_config_inputs();
    std::vector<std::string> paths;
    const auto collect = [&](const config::ComponentInfo& c, const KeyValues& v) {
        for (int k = 0; k < c.nkeys; ++k)
            if (c.keys[k].type == KeyType::Path && v.str[k] != nullptr &&
                std::find(paths.begin(), paths.end(), v.str[k]) == paths.end())
                paths.emplace_back(v.str[k]);
    };
    for (const config::Point& p : cfg.points) {
        collect(in.adversaries[p.adversary_index], p.adversary_values);
        collect(in.learners[p.learner_index], p.learner_values);
    }
    return paths;
}

std::string float_privacy_warning(const config::Config& cfg, const std::vector<PointRecord>& recs) {
    if (cfg.run.precision != "float") return "";
    // Lattice noise and the exact samplers (docs/spec/model.md §1.8-§1.10; PrivacyReport::as_run) are exact in float:
    // their report holds. Every other private learner's report is that of exact noise.
    std::vector<std::string> names;
    for (const PointRecord& r : recs) {
        const learners::PrivacyReport& pr = r.learner.privacy;
        if (!(std::isfinite(pr.epsilon) && pr.epsilon > 0) || pr.as_run) continue;
        if (std::find(names.begin(), names.end(), r.learner.name) == names.end()) names.push_back(r.learner.name);
    }
    if (names.empty()) return "";
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
    return "[run] precision = \"float\": the privacy reported for " + list + " (run.json) is that of exact noise, which "
           "their floating-point samplers do not give: a draw takes finitely many values (2^23 for a 24-bit "
           "Laplace draw) and the released values lie on a float lattice that can tell the neighbours apart (Mironov, CCS 2012; `dpregret audit` of "
           "experiments/audits/dp_ftrl_cube_tight.toml with the continuous sampler in float finds eps_lb = 1.9 where 1 "
           "is claimed, docs/AUDITS.md \"Set events\"). Use precision = \"double\" where the privacy guarantee matters, "
           "or lattice noise (noise = \"discrete-laplace\", the float default of dp-ftrl-experts, -sphere and -cube with "
           "Laplace nodes, of private-bandit-fw with Laplace nodes, of dp-mab and of dp-scrible-*: exact releases, "
           "docs/spec/model.md §1.8; noise = \"discrete-gaussian\" for Gaussian nodes, the float default of dp-ftpl-* and "
           "dp-ftrl-smooth and a key of dp-ftrl-* and private-bandit-fw, §1.11; and of svt-experts, adaptive-svt-experts, net-oco, potential-svt-experts and "
           "tree-experts: exact samplers, §1.8-§1.10)";
}

std::string privacy_excess(const config::Point& p, const learners::PrivacyReport& privacy) {
    const auto requested = [&](const char* key, double& out) {
        for (const auto& [k, v] : p.settings)
            if (k == key) {
                char* end = nullptr;
                out = std::strtod(v.c_str(), &end);
                return end != v.c_str() && *end == '\0';
            }
        return false;
    };
    double eps = 0, delta = 0;
    const auto fmt = [](double x) {
        char b[32];
        std::snprintf(b, sizeof b, "%.4g", x);
        return std::string(b);
    };
    std::string what;
    if (requested("learner.epsilon", eps) && std::isfinite(privacy.epsilon) && privacy.epsilon > eps * (1 + 1e-9))
        what = "eps = " + fmt(privacy.epsilon) + " (requested [learner] epsilon = " + fmt(eps) + ")";
    // A delta below 2^-64 (lattice noise's truncation, docs/spec/model.md §1.8: about 1e-40 at typical settings) is
    // reported in run.json but not warned about: it is below the resolution of the 64-bit randomness of any sampler.
    if (requested("learner.delta", delta) && privacy.delta > delta * (1 + 1e-9) + 0x1.0p-64)
        what += (what.empty() ? "" : " and ") + ("delta = " + fmt(privacy.delta) + " (requested [learner] delta = " +
                                                 fmt(delta) + ")");
    if (what.empty()) return "";
    bool has_calibration = false;
    for (const auto& kv : p.settings) has_calibration = has_calibration || kv.first == "learner.calibration";
    return "[learner] algorithm = \"" + p.learner + "\" as configured guarantees " + what + ", more than requested (" +
           "calibration: " + privacy.calibration + "; accountant: " + privacy.accountant +
           "). run.json reports the guarantee (docs/OUTPUTS.md \"Privacy fields\"). Lower epsilon" +
           (has_calibration ? ", or choose a [learner] calibration that stays within the request (docs/KEYS.md)" : "");
}

void check_instance_ids(std::uint64_t first, std::uint64_t count) {
    constexpr std::uint64_t per_process = adversaries::kSharedSequence; // 2^32 - 1
    if (count == 0 || count > per_process)
        throw UsageError("[run] instances = " + std::to_string(count) +
                         (first ? " (from instance " + std::to_string(first) + ")" : std::string()) +
                         " in one process: a process runs at most 4294967295 instances of a point (its results alone "
                         "would take 64 GiB per checkpoint); split the run with --shard I/K or mpirun -n R "
                         "(docs/SCALING.md), up to 2^52 instances in all");
}

namespace {

/// Consistency that spans components: decision set vs loss set, RNG layout limits.
void check_point(const config::Point& p, const config::Config& cfg, const LearnerRuntime& lr,
                 const AdversaryRuntime& ar) {
    if (lr.geometry != ar.geometry)
        throw UsageError("[learner] algorithm = \"" + p.learner + "\" plays in the " +
                         geometry_name(lr.geometry) + ", but [adversary] kind = \"" + p.adversary +
                         "\" produces losses for the " + geometry_name(ar.geometry) +
                         "; choose a matching pair (docs/ADVERSARIES.md)");
    if ((lr.loss_families & loss_bit(ar.loss)) == 0)
        throw UsageError("[learner] algorithm = \"" + p.learner + "\" is not charged on " + loss_family_name(ar.loss) +
                         ", which [adversary] kind = \"" + p.adversary + "\" draws (docs/ADVERSARIES.md)");
    // The run's instances may exceed the 32-bit counter word (ids past it run in blocks under their own stream
    // keys, point_runner.hpp); what one process holds is checked by check_instance_ids where it is known.
    switch (rng::check_layout(p.problem.seed, std::min<std::uint64_t>(cfg.run.instances, rng::kMaxInstances),
                              p.problem.T, p.problem.d)) {
    case rng::LayoutError::Ok:
        break;
    case rng::LayoutError::Seed:
        throw UsageError("[run] seed must be an integer in [0, 4294967295]");
    case rng::LayoutError::Instances:
        throw UsageError("[run] instances must be at most 4294967295 (the instance field of the RNG counter, "
                         "whose last value is the shared loss sequence's)");
    case rng::LayoutError::Rounds:
        throw UsageError("[run] rounds must be below 2^32 (the round field of the RNG counter)");
    case rng::LayoutError::Elements:
        throw UsageError("[adversary] d must be at most 2^32 (the element field of the RNG counter)");
    }
}

} // namespace

std::vector<PointRecord> resolve_points(const config::Config& cfg) {
    std::vector<PointRecord> recs(cfg.points.size());
    for (std::size_t i = 0; i < cfg.points.size(); ++i) {
        const config::Point& p = cfg.points[i];
        PointRecord& r = recs[i];
        r.point = &p;
        r.learner = resolve_learner(p.learner, p.learner_values, p.problem);
        r.adversary = resolve_adversary(p.adversary, p.adversary_values, p.problem);
        check_point(p, cfg, r.learner, r.adversary);
    }
    return recs;
}

void check_launch(const config::Config& cfg, Backend backend) {
    if (backend == Backend::Cpu) {
        try {
            (void)cpu::resolve_isa(cfg.run.isa);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("[run] ") + e.what());
        }
    }
    if (cfg.run.team_threads != 0 && cfg.run.team_threads != 32 && cfg.run.team_threads != 256 &&
        cfg.run.team_threads != 1024)
        throw UsageError("[run] team_threads = " + std::to_string(cfg.run.team_threads) +
                         ": must be 0 (auto), 32 (a warp), 256 or 1024 (a block)");
}

MemoryLimit parse_memory_limit(const std::string& text) { return parse_memory_limit(text, read_process_memory()); }

MemoryLimit parse_memory_limit(const std::string& text, const ProcessMemory& pm) {
    MemoryLimit m;
    if (text == "none") {
        m.check = false;
        return m;
    }
    // The hard limits bound auto and an explicit size alike: the kernel enforces them whatever the option says. Each is
    // what the estimate may reach: the room left under it plus what this process holds (the estimate counts that).
    const std::uint64_t held = pm.resident;
    if (pm.address_space) { // RLIMIT_AS counts the mapped address space (VmSize), not the resident set
        const std::uint64_t room = pm.address_space > pm.address_space_used ? pm.address_space - pm.address_space_used : 0;
        m.address_space = sat_add(room, held);
        m.address_space_source = "RLIMIT_AS, the address-space limit of this process (ulimit -v, or a batch system's "
                                 "memory limit enforced that way), is " + human_bytes(pm.address_space) + ", of which " +
                                 human_bytes(pm.address_space_used) + " is mapped already";
    }
    if (pm.cgroup_limit) {
        const std::uint64_t room = pm.cgroup_limit > pm.cgroup_used ? pm.cgroup_limit - pm.cgroup_used : 0;
        m.cgroup = sat_add(room, held);
        m.cgroup_source = "the cgroup memory limit " + pm.cgroup_file + " is " + human_bytes(pm.cgroup_limit) + ", of " +
                          "which " + human_bytes(pm.cgroup_used) + " is used (not counting reclaimable page cache)";
    }
    if (text.empty() || text == "auto") {
        m.bytes = pm.mem_available;
        if (m.bytes == 0) {
            m.source = "unknown";
        } else { // the estimates count what this process holds already (resident_memory_bytes)
            m.bytes = sat_add(m.bytes, held);
            m.source = "MemAvailable in /proc/meminfo, plus the " + human_bytes(held) + " this process holds";
        }
        // MemAvailable is the memory free now; it moves by hundreds of MiB as other processes start and end (a
        // compiler, a page-cache flush), and refusing a small run on it made the answer depend on the moment. An
        // estimate below the floor, min(1 GiB, MemTotal / 4), is therefore not refused for it: what cannot fit is
        // refused by the hard limits above, and a machine whose other processes hold more than three quarters of it
        // still fails the allocation with a sentence (docs/OUTPUTS.md "Memory").
        m.floor = pm.mem_total ? std::min(kAutoMemoryFloor, pm.mem_total / 4) : 0;
        return m;
    }
    const auto fail = [&] {
        return UsageError("--memory-limit must be auto, none or a size such as 512M, 16G, 1.5T or 1000000 (bytes; "
                          "K, M, G, T are powers of 1024) (got " + text + ")");
    };
    const char* s = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s, &end);
    if (end == s || !std::isfinite(v) || v <= 0 || errno == ERANGE) throw fail();
    double scale = 1.0;
    const std::string suffix(end);
    if (suffix == "K" || suffix == "k") scale = 1024.0;
    else if (suffix == "M") scale = 1024.0 * 1024;
    else if (suffix == "G") scale = 1024.0 * 1024 * 1024;
    else if (suffix == "T") scale = 1024.0 * 1024 * 1024 * 1024;
    else if (!suffix.empty()) throw fail();
    const double bytes = v * scale;
    if (bytes >= 1.8e19) throw fail();
    m.bytes = static_cast<std::uint64_t>(bytes);
    m.source = "--memory-limit " + text;
    return m;
}

void check_memory(const MemoryEstimate& e, const MemoryLimit& limit, std::uint64_t device_bytes,
                  const std::string& advice_given, const std::string& what) {
    std::string terms;
    for (const MemoryTerm& t : e.terms)
        if (t.bytes > 0) terms += "\n  " + human_bytes(t.bytes) + "  " + t.what;
    const std::string reduce = "\nReduce [run] instances, [adversary] d, [run] checkpoints or the number of points (or "
                               "split the sweep into several runs)";
    const std::string advice = !advice_given.empty() ? "\n" + advice_given : reduce + "; --memory-limit none runs it anyway.";
    // Above a hard limit --memory-limit none would only move the failure into the simulation: the advice is to raise it.
    const auto hard_advice = [&](const char* raise) { return !advice_given.empty() ? advice : reduce + ", or " + raise + "."; };
    if (!limit.check) return;
    // The hard limits first: what exceeds them cannot fit, whatever the machine has free.
    const std::uint64_t as_need = sat_add(e.host_bytes, e.address_space_extra);
    if (limit.address_space > 0 && as_need > limit.address_space)
        throw UsageError("this " + what + " needs about " + human_bytes(e.host_bytes) + " of memory" +
                         (e.address_space_extra ? " and " + human_bytes(e.address_space_extra) + " of thread stacks" : "") +
                         ", more address space than this process may map: " + limit.address_space_source +
                         " (room for about " + human_bytes(limit.address_space) + "). The largest parts:" + terms +
                         hard_advice("raise the limit (ulimit -v unlimited, or more memory from the batch system)"));
    if (limit.cgroup > 0 && e.host_bytes > limit.cgroup)
        throw UsageError("this " + what + " needs about " + human_bytes(e.host_bytes) + " of memory, more than its cgroup " +
                         "has left: " + limit.cgroup_source + " (room for about " + human_bytes(limit.cgroup) +
                         "). The largest parts:" + terms +
                         hard_advice("raise the cgroup's limit (more memory from the batch system)"));
    if (limit.bytes > 0 && e.host_bytes > limit.bytes && e.host_bytes > limit.floor)
        throw UsageError("this " + what + " needs about " + human_bytes(e.host_bytes) + " of memory, but " +
                         human_bytes(limit.bytes) + " is available (" + limit.source + "). The largest parts:" +
                         terms + advice);
    if (device_bytes > 0 && e.device_bytes > device_bytes)
        throw UsageError("this run needs about " + human_bytes(e.device_bytes) + " of GPU memory for the learner " +
                         "state, but the GPU has " + human_bytes(device_bytes) + ". The largest parts:" + terms +
                         "\nReduce [run] instances or [adversary] d, or use --backend cpu.");
}

namespace {

constexpr double kPieceWorkCpu = 0x1p33, kPieceWorkCuda = 0x1p38;

/// Point k's work per instance: T x row width.
double point_work(const config::Config& cfg, const std::vector<PointRecord>& recs, std::size_t k) {
    return static_cast<double>(cfg.points[k].problem.T) *
           static_cast<double>(std::max<std::uint64_t>(1, recs[k].adversary.row_width));
}

double largest_point_work(const config::Config& cfg, const std::vector<PointRecord>& recs) {
    double w = 1.0;
    for (std::size_t k = 0; k < recs.size(); ++k) w = std::max(w, point_work(cfg, recs, k));
    return w;
}

} // namespace

double group_work_budget(const config::Config& cfg, const std::vector<PointRecord>& recs, std::uint64_t piece,
                         bool cuda) {
    if (piece) return static_cast<double>(piece) * largest_point_work(cfg, recs);
    return cuda ? kPieceWorkCuda : kPieceWorkCpu;
}

namespace {

/// Point k's work per instance as the pieces of a resumable run are sized. Every piece of a point repeats the
/// point's shared work -- its loss rows, their running sums and the copies into the engine's lane buffers,
/// O(T x d) -- so pieces must be large where that work dominates. A learner that reads L_{t-1} from the
/// engine (kReadsCumulative: the sparse-vector experts of AFKT23 §3, docs/spec/afkt23.md) does O(1) work per
/// instance-round plus an O(d) exponential-mechanism pass at each switch, of which it makes O(log d): its
/// work per instance is about T + d ceil(log2 d), not point_work's T x d. (Sized by point_work, svt-experts
/// at d = 2^16, T = 2048 ran in pieces of 64 instances, so a run of 100 made its shared rows twice and ran at
/// 0.6x the library's speed: docs/BENCHMARKS.md.)
double piece_work(const config::Config& cfg, const std::vector<PointRecord>& recs, std::size_t k) {
    if (!recs[k].learner.reads_cumulative || cfg.points[k].per_instance) return point_work(cfg, recs, k);
    const double d = static_cast<double>(std::max<std::uint64_t>(2, recs[k].adversary.row_width));
    return static_cast<double>(cfg.points[k].problem.T) + d * std::ceil(std::log2(d));
}

} // namespace

std::uint64_t auto_piece_instances(const config::Config& cfg, const std::vector<PointRecord>& recs, bool cuda) {
    const double budget = cuda ? kPieceWorkCuda : kPieceWorkCpu;
    double per_instance = 1.0; // the largest point's work per instance
    for (std::size_t k = 0; k < recs.size(); ++k)
        per_instance = std::max(per_instance, piece_work(cfg, recs, k));
    const double b = std::floor(budget / per_instance / 16.0) * 16.0;
    if (b < 16.0) return 16;
    return b >= static_cast<double>(cfg.run.instances) ? std::max<std::uint64_t>(cfg.run.instances, 1)
                                                       : static_cast<std::uint64_t>(b);
}

namespace {

/// The end of the group of whole points that starts at point i (simulate_points): as many consecutive points as
/// fit in `budget` (instance-rounds x row width, ProgressSpec::group_work), at most 4096 points and 2^23 stored
/// values (64 MiB). Depends only on the config and the store's spec, so a resumed run groups alike.
std::size_t group_end(const config::Config& cfg, const std::vector<PointRecord>& recs, std::size_t i, std::uint64_t N,
                      double budget) {
    double used = 0.0, values = 0.0;
    std::size_t j = i;
    while (j < recs.size() && j - i < 4096) {
        const double nck = static_cast<double>(cfg.run.checkpoints), nd = static_cast<double>(recs[j].learner.diagnostic_names.size());
        const double w = static_cast<double>(N) * point_work(cfg, recs, j), v = static_cast<double>(N) * (3.0 * nck + nd + 1.0) + nck;
        if (j > i && (used + w > budget || values + v > 0x1p23)) break;
        used += w;
        values += v;
        ++j;
    }
    return j;
}

/// A finished piece, or nothing (and a warning naming the damage) if it is damaged: it is then computed again.
std::vector<PointResult> load_or_warn(const ProgressStore& store, const std::string& name,
                                       const std::vector<ProgressStore::PieceShape>& shapes) {
    try {
        return store.load(name, shapes);
    } catch (const std::invalid_argument& e) {
        std::cerr << "dpregret: warning: a finished piece is damaged and is computed again: " << e.what() << "\n";
        return {};
    }
}

} // namespace

bool simulate_points(const config::Config& cfg, std::vector<PointRecord>& recs, const SimulateOptions& o) {
    // The instances this process runs: [first, first + N), global ids (run_point_range maps them to RNG words).
    const std::uint64_t first = o.first_instance, N = o.instance_count ? o.instance_count : cfg.run.instances;
    check_instance_ids(first, N);
    const auto job_for = [&](std::size_t k) {
        PointJob job = make_point_job(cfg.run, cfg.points[k], recs[k].learner, recs[k].adversary);
        job.backend = o.backend;
        job.threads = o.threads;
        job.on_progress = o.on_progress;
        job.interrupted = o.interrupted;
        return job;
    };
    // A point's result is complete: it says what the point is, and goes to the caller's hook (or is condensed).
    const auto finished = [&](PointRecord& r) {
        PointResult& res = r.result;
        res.point = *r.point;
        res.learner = r.learner.name;
        res.adversary = r.adversary.name;
        res.privacy = r.learner.privacy;
        res.diagnostic_names = r.learner.diagnostic_names;
        res.first_instance = first;
        if (o.hooks.after_point) o.hooks.after_point(r);
        else finish_point(r);
    };
    for (std::size_t i = 0; i < cfg.points.size(); ++i) {
        const config::Point& p = cfg.points[i];
        PointJob job = job_for(i);
        if (o.hooks.progress && N <= o.hooks.piece_instances) {
            // Whole points, grouped: points [i, j) are saved as one piece (ProgressStore::group_name), so that a
            // sweep of many small points writes two files per group, not several per point.
            const std::size_t j = group_end(cfg, recs, i, N, o.hooks.progress->spec().group_work);
            std::vector<PointJob> jobs;
            std::vector<ProgressStore::PieceShape> shapes;
            for (std::size_t k = i; k < j; ++k) {
                jobs.push_back(k == i ? job : job_for(k));
                shapes.push_back({k, N, jobs.back().shape.checkpoints.size(), recs[k].learner.diagnostic_names.size(),
                                  cfg.points[k].per_instance});
            }
            const std::string name = ProgressStore::group_name(i);
            std::vector<PointResult> loaded;
            if (o.hooks.progress->has(name)) loaded = load_or_warn(*o.hooks.progress, name, shapes);
            if (!loaded.empty()) {
                for (std::size_t k = i; k < j; ++k) {
                    recs[k].result = std::move(loaded[k - i]);
                    if (o.on_progress) o.on_progress(N * cfg.points[k].problem.T);
                }
            } else {
                std::vector<const PointResult*> done;
                for (std::size_t k = i; k < j; ++k) {
                    recs[k].result = run_point_range(jobs[k - i], first, N);
                    if (!recs[k].result.completed) return false;
                    done.push_back(&recs[k].result);
                }
                o.hooks.progress->save(name, shapes, done);
            }
            for (std::size_t k = i; k < j; ++k) finished(recs[k]);
            i = j - 1; // the loop's ++i moves to the next group
            continue;
        }
        if (o.hooks.progress) {
            // In pieces of B instances, each saved when done (or loaded, when resuming).
            const std::uint64_t B = o.hooks.piece_instances;
            const std::size_t nck = job.shape.checkpoints.size(), nd = recs[i].learner.diagnostic_names.size();
            PointResult all;
            for (std::uint64_t b = 0; b * B < N; ++b) {
                const std::uint64_t n = std::min(B, N - b * B);
                const std::vector<ProgressStore::PieceShape> shape = {{i, n, nck, nd, p.per_instance}};
                const std::string name = ProgressStore::piece_name(i, b);
                std::vector<PointResult> loaded;
                if (o.hooks.progress->has(name)) loaded = load_or_warn(*o.hooks.progress, name, shape);
                PointResult piece;
                if (!loaded.empty()) {
                    piece = std::move(loaded[0]);
                    if (o.on_progress) o.on_progress(n * p.problem.T);
                } else {
                    piece = run_point_range(job, first + b * B, n);
                    if (!piece.completed) return false;
                    o.hooks.progress->save(name, shape, {&piece});
                }
                append_outcome(all, std::move(piece), p.per_instance);
            }
            recs[i].result = std::move(all);
        } else {
            recs[i].result = run_point_range(job, first, N);
        }
        if (!recs[i].result.completed) return false;
        finished(recs[i]);
    }
    return true;
}

} // namespace dpr::api
