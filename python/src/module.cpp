// dpregret._core: the Python extension over the core library (host/api/run.hpp). The package's Python layer
// (python/dpregret/__init__.py) turns configs into TOML text and these objects into a Result; this file only moves
// data across: a plan is made here (every input checked, ConfigError on bad input), simulated on a thread of its own
// while Python waits with the GIL released (so Ctrl-C and a progress bar work), and its records are read back as
// NumPy arrays (one copy) and as the very text and JSON the CLI writes (host/results/outputs.hpp).
#include <atomic>
#include <cmath>
#include <map>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>
#include <nlohmann/json.hpp>

#include "host/api/audit.hpp"
#include "host/api/audit_one_run.hpp"
#include "host/api/audit_search.hpp"
#include "host/api/audit_samples.hpp"
#include "host/api/errors.hpp"
#include "host/api/merge.hpp"
#include "host/api/pipeline.hpp"
#include "host/api/run.hpp"
#include "host/api/sample.hpp"
#include "host/backend/cuda_api.hpp"
#include "host/config/config.hpp"
#include "host/engine/loss_file.hpp"
#include "host/io/error.hpp"
#include "host/io/run_dir.hpp"
#include "host/results/memory_estimate.hpp"
#include "host/results/outputs.hpp"
#include "host/version.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpr::python {
namespace {

using Array = nb::ndarray<nb::numpy, double>;

/// A NumPy array that owns `v`'s storage (moved, not copied).
Array to_array(std::vector<double>&& v, std::initializer_list<std::size_t> shape) {
    auto* owned = new std::vector<double>(std::move(v));
    nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
    return Array(owned->data(), shape, owner);
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

Backend parse_backend(const std::string& b) {
    if (b == "auto") return Backend::Auto;
    if (b == "cpu") return Backend::Cpu;
    if (b == "cuda") return Backend::Cuda;
    throw UsageError("backend must be \"auto\", \"cpu\" or \"cuda\" (got \"" + b + "\")");
}

/// Work on a thread of its own while Python waits with the GIL released: start() runs work() (which polls
/// cancelled() and add()s its progress), wait() blocks at most a given time, finish() joins and rethrows what work() threw.
/// What derives plans in its constructor (every input checked) and sets total_ and warnings_.
class Worker {
public:
    Worker() = default;
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;
    virtual ~Worker() { stop(); }

    /// Cancels the work and waits for its thread: what derives from Worker calls it first in its destructor, before
    /// its members (which the work uses) go.
    void stop() {
        cancel_ = true;
        if (thread_.joinable()) {
            nb::gil_scoped_release release;
            thread_.join();
        }
    }

    void start() {
        if (thread_.joinable() || finished_) throw std::logic_error("this has already been started");
        thread_ = std::thread([this] {
            try {
                completed_ = work();
            } catch (...) {
                error_ = std::current_exception();
            }
            std::lock_guard<std::mutex> lock(m_);
            finished_ = true;
            cv_.notify_all();
        });
    }

    /// Waits up to `seconds` (the GIL released); true once the work has ended.
    bool wait(double seconds) {
        nb::gil_scoped_release release;
        std::unique_lock<std::mutex> lock(m_);
        return cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return finished_.load(); });
    }

    /// After wait() returned true: joins the thread and rethrows what the work threw; true if it ran to its end.
    bool finish() {
        if (!finished_) throw std::logic_error("the work has not ended yet (wait() first)");
        if (thread_.joinable()) {
            nb::gil_scoped_release release;
            thread_.join();
        }
        if (error_) std::rethrow_exception(error_);
        return completed_;
    }

    void cancel() { cancel_ = true; }
    std::uint64_t progress() const { return done_.load(); } ///< instance-rounds done
    std::uint64_t total() const { return total_; }          ///< instance-rounds in all
    const std::vector<std::string>& warnings() const { return warnings_; }

protected:
    /// The simulation, on the worker's thread: true if it ran to its end (false: cancelled).
    virtual bool work() = 0;
    bool cancelled() const { return cancel_.load(); }
    void add(std::uint64_t n) { done_ += n; }
    void check_done() const {
        if (!finished_ || !completed_ || error_) throw std::logic_error("the work has not completed");
    }

    std::uint64_t total_ = 0;
    std::vector<std::string> warnings_;

private:
    std::atomic<std::uint64_t> done_{0};
    std::atomic<bool> cancel_{false};
    std::thread thread_;
    std::mutex m_;
    std::condition_variable cv_;
    std::atomic<bool> finished_{false};
    bool completed_ = false;
    std::exception_ptr error_;
};

/// Refuses an output directory that already holds a run's files (audit: an audit's audit.json), so that
/// save() never replaces finished results. lock_save_dir calls it: run(out=) and audit(out=) before simulating.
void check_save_dir(const std::string& dir, bool audit) {
    namespace fs = std::filesystem;
    static const std::vector<std::string> run_files = {"run.json", "summary.csv", "final_regret.csv",
                                                       "points.jsonl"};
    static const std::vector<std::string> audit_files = {"audit.json"};
    std::error_code ec;
    for (const std::string& name : audit ? audit_files : run_files) // a link there is refused by the lock's open
        if (fs::is_regular_file(fs::symlink_status(fs::path(dir) / name, ec)))
            throw UsageError(dir + " already holds " + name + " of " + (audit ? "an audit" : "a run") +
                             "; save into a new or empty directory");
}

/// save()'s directory, taken as `dpregret run` takes its --out (host/io/run_dir.hpp): created if missing and
/// locked, so that a second process saving there (or a command running there) is refused instead of mixing or
/// replacing files; checked again under the lock, in case the other process finished while this one waited.
io::OutputDirectory lock_save_dir(const std::string& dir, bool audit) {
    check_save_dir(dir, audit);
    io::OutputDirectory out;
    try {
        out = io::OutputDirectory::open(dir, audit ? io::OutputKind::Audit : io::OutputKind::Run, "directory");
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }
    check_save_dir(dir, audit);
    return out;
}

/// Refuses the locked `out` (removing what opening it created) when `need` bytes, the estimate of what will be written
/// into it, do not fit in the free space of its file system, as `dpregret run --out` does before simulating
/// (host/cli/cmd_run.cpp open_output): a full disk would otherwise refuse the files after the work.
void check_disk(io::OutputDirectory& out, std::uint64_t need, const std::string& what, const std::string& reduce) {
    const std::optional<std::uint64_t> free_disk = available_disk_bytes(out.path());
    if (fits_on_disk(need, free_disk)) return;
    out.remove_created();
    throw UsageError(what + " take about " + human_bytes(need) + " of disk in " + out.path() + ", but " +
                     human_bytes(*free_disk) + " is free there. " +
                     (reduce.empty() ? "Free space or choose another directory"
                                     : "Free space, choose another directory, or " + reduce));
}

/// The memory_limit argument checked as the core library reads it (host/api/pipeline.hpp parse_memory_limit), with a
/// message that names the argument rather than the command's flag.
void check_memory_limit(const std::string& text) {
    try {
        (void)api::parse_memory_limit(text);
    } catch (const UsageError&) {
        throw UsageError("memory_limit must be \"auto\", \"none\" or a size such as \"512M\", \"16G\", \"1.5T\" or "
                         "\"1000000\" (bytes; K, M, G, T are powers of 1024) (got \"" + text + "\")");
    }
}

/// Writes files into a locked directory on a thread of its own (a Worker), so that Python waits with the GIL
/// released and Ctrl-C can stop the writing: `write` polls `stop` between rows and returns false when it stopped,
/// leaving none of its files. The outcome is then one of two, and finish() says which: true, every file written (the
/// lock released); false or an exception, none written (what opening the directory created removed).
class Save : public Worker {
public:
    using Write = std::function<bool(const io::OutputDirectory& out, const std::function<bool()>& stop)>;
    Save(io::OutputDirectory out, Write write) : out_(std::move(out)), write_(std::move(write)) {}
    ~Save() override { stop(); }

private:
    bool work() override {
        bool written = false;
        try {
            written = write_(out_, [this] { return cancelled(); });
        } catch (...) {
            out_.remove_created();
            throw;
        }
        if (written) out_ = io::OutputDirectory(); // releases the lock
        else out_.remove_created();
        return written;
    }

    io::OutputDirectory out_;
    Write write_;
};

/// run(out=)/audit(out=)'s directory: taken (locked and checked) before anything is simulated, held until the
/// results are written into it or it is given up.
struct HeldOut {
    io::OutputDirectory dir;
    bool held = false;
    void check_free() const {
        if (held) throw std::logic_error("take_out: a directory is held already");
    }
    void take(io::OutputDirectory d) {
        dir = std::move(d);
        held = true;
    }
    io::OutputDirectory give() {
        if (!held) throw std::logic_error("save_out: no directory was taken (take_out)");
        held = false;
        return std::move(dir);
    }
    void release() {
        dir.remove_created();
        held = false;
    }
};

/// A loss matrix from memory ([adversary] losses of a dict config): float64, (T, d), C order, on the host.
/// The run reads it in place (host/engine/loss_file.hpp LossArray); the Python layer makes it so with
/// np.ascontiguousarray, which copies only an array that is not already, and copies an array in a file mapping (a
/// file truncated while the run reads it would end the process with SIGBUS).
using LossMatrix = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using LossMatrices = std::map<std::string, LossMatrix>;

/// The config's source, its arrays and the backend, as a run's and an audit's spec (api::RunSpec,
/// api::AuditSpec) take them. The arrays are `held` by the caller for as long as its plan reads them.
template <class Spec>
void set_source(Spec& spec, const std::string& config_path, const std::string& toml_text,
                const std::string& source_name, const std::vector<std::string>& overrides,
                const LossMatrices& arrays, const std::string& backend, LossMatrices& held) {
    spec.config_path = config_path;
    spec.toml_text = toml_text;
    spec.source_name = source_name;
    spec.overrides = overrides;
    held = arrays;
    for (const auto& [name, a] : held) spec.arrays[name] = LossArray{a.data(), a.shape(0), a.shape(1)};
    spec.backend = parse_backend(backend);
}

/// One run: planned on construction (every input checked), simulated by start() on a thread of its own.
class Job : public Worker {
public:
    Job(const std::string& config_path, const std::string& toml_text, const std::string& source_name,
        const std::vector<std::string>& overrides, const LossMatrices& arrays, const std::string& backend,
        unsigned threads, const std::string& memory_limit)
        : started_at_(utc_now()), t0_(std::chrono::steady_clock::now()) {
        set_source(spec_, config_path, toml_text, source_name, overrides, arrays, backend, arrays_);
        spec_.threads = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
        backend_requested_ = backend;
        config_label_ = config_path.empty() ? source_name : config_path;
        check_memory_limit(memory_limit);
        plan_ = api::plan(spec_);
        const config::Config& cfg = plan_.config;
        const bool cuda = plan_.backend == Backend::Cuda;
        device_ = "cpu: " + std::to_string(spec_.threads) + " threads";
        std::uint64_t device_bytes = 0;
        if (cuda) {
            const auto info = cuda_api::query_devices();
            device_ = info.name + " (sm_" + std::to_string(info.sm_major) + std::to_string(info.sm_minor) + ")";
            device_bytes = static_cast<std::uint64_t>(info.memory_gib * 1073741824.0);
        }
        const MemoryEstimate estimate = estimate_run_memory(
            cfg, plan_.records, spec_.threads, PointJob{}.chunk_bytes, cuda, plan_.instance_count,
            /*keep_instances=*/true); // Result.regret(p): work() keeps every point's arrays
        api::check_memory(estimate, api::parse_memory_limit(memory_limit), device_bytes,
                          "reduce [run] instances, [adversary] d or the sweep, or pass memory_limit=\"none\"");
        memory_estimate_ = estimate.host_bytes;
        for (std::size_t i = 0; i < cfg.points.size(); ++i) {
            total_ += plan_.instance_count * cfg.points[i].problem.T;
            for (const std::string& w : cfg.points[i].warnings)
                warnings_.push_back("point " + std::to_string(i) + ": " + w);
            const std::string excess = api::privacy_excess(cfg.points[i], plan_.records[i].learner.privacy);
            if (!excess.empty()) warnings_.push_back("point " + std::to_string(i) + ": " + excess);
        }
        const std::string in_float = api::float_privacy_warning(cfg, plan_.records);
        if (!in_float.empty()) warnings_.push_back(in_float);
    }

    ~Job() override {
        stop();
        out_.release(); // run(out=)'s directory, when nothing was written into it
    }

    std::string backend() const { return plan_.backend == Backend::Cuda ? "cuda" : "cpu"; }
    std::string why_not_cuda() const { return plan_.why_not_cuda; }
    std::uint64_t instances() const { return plan_.instance_count; }
    std::size_t point_count() const { return plan_.records.size(); }

    /// (points, instances): the regret (or realised regret) of every instance at t = T.
    Array final_values(bool realized) const {
        check_done();
        const std::size_t P = point_count(), N = instances();
        std::vector<double> v(P * N);
        for (std::size_t p = 0; p < P; ++p) {
            const auto& src = realized ? plan_.records[p].final_realized : plan_.records[p].final_regret;
            std::copy(src.begin(), src.end(), v.begin() + p * N);
        }
        return to_array(std::move(v), {P, N});
    }

    /// Point p's (instances, checkpoints) regret or realised regret.
    Array point_values(std::size_t p, bool realized) const {
        check_done();
        const PointResult& r = record(p).result;
        std::vector<double> v = realized ? r.realized_regret : r.regret;
        return to_array(std::move(v), {static_cast<std::size_t>(r.instances), r.checkpoints.size()});
    }

    std::vector<std::uint64_t> checkpoints(std::size_t p) const { return record(p).result.checkpoints; }

    /// final_regret.csv's diagnostic columns: their names (the union over the points, in order of first appearance).
    std::vector<std::string> diagnostic_names() const {
        std::vector<std::string> names;
        for (const PointRecord& r : plan_.records)
            for (const std::string& n : r.learner.diagnostic_names)
                if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
        return names;
    }

    /// (points, instances) values of diagnostic `name`; NaN for the points whose learner does not report it (the
    /// empty cells of final_regret.csv).
    Array diagnostic(const std::string& name) const {
        check_done();
        const std::size_t P = point_count(), N = instances();
        std::vector<double> v(P * N, std::numeric_limits<double>::quiet_NaN());
        for (std::size_t p = 0; p < P; ++p) {
            const PointRecord& r = plan_.records[p];
            const auto& names = r.learner.diagnostic_names;
            const auto it = std::find(names.begin(), names.end(), name);
            if (it == names.end()) continue;
            const std::size_t j = it - names.begin(), nd = names.size();
            for (std::size_t k = 0; k < N; ++k) v[p * N + k] = r.result.diagnostics[k * nd + j];
        }
        return to_array(std::move(v), {P, N});
    }

    std::string summary_csv() const {
        check_done();
        std::ostringstream os;
        write_summary(os, plan_.config, plan_.records, [] { return false; });
        return os.str();
    }

    /// run.json's text (every point inline, whatever their number: points.jsonl is a file-size matter).
    std::string run_json_text() const {
        check_done();
        nlohmann::json j = run_json(plan_.config, plan_.records, meta());
        if (!j.contains("points")) {
            nlohmann::json points = nlohmann::json::array();
            for (const PointRecord& r : plan_.records) points.push_back(point_json(r));
            j["points"] = points;
            j.erase("points_file");
        }
        return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }

    /// Writes the CLI's files into `dir` (created if missing; refused if it already holds a run's files, or if they
    /// would not fit on its disk) by the Save it returns (start() it).
    std::unique_ptr<Save> save(const std::string& dir) const {
        check_done();
        io::OutputDirectory out = lock_save_dir(dir, /*audit=*/false);
        check_disk(out, disk_bytes(), "this run's result files", "reduce [run] instances, checkpoints or the sweep");
        return saver(std::move(out));
    }

    /// run(out=DIR): takes DIR before anything is simulated, as `dpregret run --out` does (host/cli/cmd_run.cpp
    /// open_output): created if missing, locked, proven writable, refused if it already holds a run or if the result
    /// files would not fit on its disk. Held until save_out() writes into it or release_out() gives it up.
    void take_out(const std::string& dir) {
        out_.check_free();
        io::OutputDirectory out = lock_save_dir(dir, /*audit=*/false);
        check_disk(out, disk_bytes(), "this run's result files", "reduce [run] instances, checkpoints or the sweep");
        out_.take(std::move(out));
    }
    /// The Save of the finished run into take_out()'s directory.
    std::unique_ptr<Save> save_out() {
        check_done();
        return saver(out_.give());
    }
    /// Gives take_out()'s directory up (the run failed or was stopped): the lock released, what it created removed.
    void release_out() { out_.release(); }

private:
    bool work() override {
        spec_.on_progress = [this](std::uint64_t n) { add(n); };
        spec_.interrupted = [this] { return cancelled(); };
        api::ExecuteHooks hooks;
        // Checked and condensed as for the CLI; the per-instance arrays stay for the caller.
        hooks.after_point = [](PointRecord& r) { finish_point(r, /*keep_instances=*/true); };
        const bool completed = api::execute(plan_, spec_, hooks).completed;
        wall_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        return completed;
    }

    /// The disk the result files take (summary.csv, final_regret.csv, run.json, points.jsonl): a run in the package
    /// writes no pieces (it is not resumable), so it writes what rank 0 of an MPI run writes.
    std::uint64_t disk_bytes() const {
        return estimate_run_disk(plan_.config, plan_.records, plan_.instance_count, DiskRole::MpiRoot);
    }
    std::unique_ptr<Save> saver(io::OutputDirectory out) const {
        return std::make_unique<Save>(std::move(out), [this](const io::OutputDirectory& out,
                                                             const std::function<bool()>& stop) {
            return write_outputs(out.dir(), plan_.config, plan_.records, meta(), stop);
        });
    }

    const PointRecord& record(std::size_t p) const {
        if (p >= plan_.records.size())
            throw nb::index_error(("point " + std::to_string(p) + " is not in 0.." +
                                   std::to_string(plan_.records.size() - 1)).c_str());
        return plan_.records[p];
    }
    RunMeta meta() const {
        RunMeta m;
        m.config_path = config_label_;
        m.overrides = spec_.overrides;
        m.backend_requested = backend_requested_;
        m.device = device_;
        m.threads = spec_.threads;
        m.wall_seconds = wall_seconds_;
        m.started_at = started_at_;
        m.memory_estimate_bytes = memory_estimate_;
        return m;
    }

    LossMatrices arrays_; ///< first: destroyed after the plan that points into them
    api::RunSpec spec_;
    api::Plan plan_;
    std::string started_at_, backend_requested_, config_label_, device_;
    std::chrono::steady_clock::time_point t0_;
    std::uint64_t memory_estimate_ = 0;
    double wall_seconds_ = 0.0;
    HeldOut out_; ///< take_out()'s directory, locked
};

/// (thresholds, 9): an audit's privacy_region.csv columns threshold, base_ge, neighbour_ge, base_le, neighbour_le
/// and the claimed curve at each fraction, f_base_ge, f_neighbour_ge, f_base_le, f_neighbour_le (NaN where none).
Array region_array(const std::vector<audit::RegionRow>& region) {
    std::vector<double> v;
    v.reserve(region.size() * 9);
    for (const auto& r : region)
        for (double x : {r.threshold, r.base_ge, r.neighbour_ge, r.base_le, r.neighbour_le, r.f_base_ge,
                         r.f_neighbour_ge, r.f_base_le, r.f_neighbour_le})
            v.push_back(x);
    return to_array(std::move(v), {region.size(), 9});
}

/// One audit (host/api/audit.hpp): planned on construction, run by start() on a thread of its own.
class Audit : public Worker {
public:
    Audit(const std::string& config_path, const std::string& toml_text, const std::string& source_name,
          const std::vector<std::string>& overrides, const LossMatrices& arrays, const std::string& backend,
          unsigned threads, const std::string& memory_limit, bool allow_planted, bool keep_statistic, bool search,
          std::uint64_t pilot, bool one_run, std::uint64_t canaries, std::uint64_t window, bool fitted)
        : started_at_(utc_now()), t0_(std::chrono::steady_clock::now()), pilot_(pilot) {
        set_source(spec_, config_path, toml_text, source_name, overrides, arrays, backend, arrays_);
        spec_.backend_requested = backend;
        spec_.threads = threads;
        spec_.memory_limit = memory_limit;
        spec_.allow_planted = allow_planted;
        spec_.keep_statistic = keep_statistic;
        spec_.search = search;
        spec_.one_run = one_run; // audit(one_run=True): host/api/audit_one_run.hpp
        spec_.one_run_request = audit::OneRunRequest{canaries, window, fitted};
        config_label_ = config_path.empty() ? source_name : config_path;
        check_memory_limit(memory_limit);
        plan_ = api::plan_audit(spec_);
        total_ = plan_.work;
        warnings_ = plan_.warnings;
    }
    ~Audit() override {
        stop();
        out_.release(); // audit(out=)'s directory, when nothing was written into it
    }

    /// audit.json's text.
    std::string json_text() const {
        check_done();
        return audit_json().dump();
    }
    std::string verdict_line() const {
        check_done();
        return spec_.one_run ? api::one_run_verdict_line(one_run_) : api::audit_verdict_line(outcome_);
    }
    /// (2, trials): every trial's statistic, the base side's row then the neighbour's (only when kept).
    Array statistic() const {
        check_done();
        if (spec_.one_run) throw std::logic_error("a one-run audit keeps no per-trial statistic (its canaries' scores "
                                                  "are ranked, not stored)");
        if (outcome_.base.empty()) throw std::logic_error("the statistic was not kept (audit(..., statistic=True))");
        std::vector<double> v(outcome_.base);
        v.insert(v.end(), outcome_.neighbour.begin(), outcome_.neighbour.end());
        return to_array(std::move(v), {2, static_cast<std::size_t>(outcome_.trials)});
    }
    /// (thresholds, 9): privacy_region.csv's columns (region_array).
    Array region() const {
        check_done();
        if (spec_.one_run) throw std::logic_error("a one-run audit has no privacy region (its bound counts guesses)");
        return region_array(outcome_.region);
    }
    /// Writes the command's files into `dir` (created if missing; refused if it already holds an audit) by the Save
    /// it returns (start() it).
    std::unique_ptr<Save> save(const std::string& dir) const {
        check_done();
        io::OutputDirectory out = lock_save_dir(dir, /*audit=*/true);
        check_room(out);
        return saver(std::move(out));
    }
    /// audit(out=DIR): takes DIR before anything is simulated, as `dpregret audit --out` does: created if missing,
    /// locked, proven writable, refused if it already holds an audit or if its files would not fit on its disk
    /// (api::estimate_audit_disk). Held until save_out() or release_out().
    void take_out(const std::string& dir) {
        out_.check_free();
        io::OutputDirectory out = lock_save_dir(dir, /*audit=*/true);
        check_room(out);
        out_.take(std::move(out));
    }
    std::unique_ptr<Save> save_out() {
        check_done();
        return saver(out_.give());
    }
    void release_out() { out_.release(); }

private:
    bool work() override {
        spec_.interrupted = [this] { return cancelled(); };
        if (spec_.search) {
            // search=True (host/api/audit_search.hpp): the pilots, then the chosen pair planned as the audit.
            const std::uint64_t pilot = pilot_ ? pilot_ : api::default_pilot(plan_.config.run.instances);
            search_ = api::search_pair(spec_, plan_, pilot);
            if (search_.candidates.empty() || cancelled()) return false;
            spec_.overrides.insert(spec_.overrides.end(), search_.chosen_sets().begin(), search_.chosen_sets().end());
            plan_ = api::plan_audit(spec_);
        }
        spec_.on_progress = [this](std::uint64_t n) { add(n); };
        if (spec_.one_run) {
            one_run_ = api::execute_one_run(plan_, spec_);
            wall_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
            return one_run_.completed;
        }
        outcome_ = api::execute_audit(plan_, spec_);
        wall_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        return outcome_.completed;
    }
    /// api::check_audit_disk, in the package's words (statistic=True, not --save-statistic).
    void check_room(io::OutputDirectory& out) const {
        const api::AuditDiskEstimate e = api::estimate_audit_disk(plan_, spec_);
        if (!spec_.keep_statistic) return check_disk(out, e.total(), "this audit's files", "");
        check_disk(out, e.total(),
                   "this audit's files (statistic.npy " + human_bytes(e.statistic) + ": 2 x " +
                       std::to_string(plan_.config.run.instances) + " trials x 8 bytes)",
                   "leave out statistic=True (the bound does not need it) or reduce [run] instances");
    }
    /// write_audit_files cannot be stopped part way: a Ctrl-C during it lets it end, and Python then says that the
    /// files were written.
    std::unique_ptr<Save> saver(io::OutputDirectory out) const {
        const nlohmann::json j = audit_json();
        const std::string pair = spec_.search ? api::pair_toml(plan_, config_label_) : std::string();
        return std::make_unique<Save>(std::move(out), [this, j, pair](const io::OutputDirectory& out,
                                                                      const std::function<bool()>&) {
            if (spec_.one_run) api::write_one_run_files(out.dir(), j);
            else api::write_audit_files(out.dir(), outcome_, j, pair);
            return true;
        });
    }
    /// audit.json's object, with "search" after a search.
    nlohmann::json audit_json() const {
        if (spec_.one_run) return api::one_run_json(plan_, one_run_, spec_, config_label_, started_at_, wall_seconds_);
        nlohmann::json j = api::audit_json(plan_, outcome_, spec_, config_label_, started_at_, wall_seconds_);
        if (spec_.search) j["search"] = api::search_json(search_);
        return j;
    }

    LossMatrices arrays_; ///< first: destroyed after the plan that points into them
    api::AuditSpec spec_;
    api::AuditPlan plan_;
    audit::AuditOutcome outcome_;
    audit::OneRunOutcome one_run_; ///< one_run=True
    api::PairSearch search_;  ///< search=True: the pilots and the chosen pair
    std::string started_at_, config_label_;
    std::chrono::steady_clock::time_point t0_;
    double wall_seconds_ = 0.0;
    std::uint64_t pilot_ = 0; ///< search=True: trials per side of each pilot; 0 = api::default_pilot
    HeldOut out_; ///< take_out()'s directory, locked
};

const char* type_name(KeyType t) {
    switch (t) {
    case KeyType::Real: return "real";
    case KeyType::Int: return "int";
    case KeyType::Bool: return "bool";
    case KeyType::Choice: return "choice";
    case KeyType::Path: return "path";
    case KeyType::RealList: return "real list";
    }
    return "?";
}

nb::dict key_dict(const std::string& section, const std::string& component, const KeySpec& k) {
    nb::dict d;
    d["section"] = section;
    d["component"] = component;
    d["key"] = k.name;
    d["type"] = type_name(k.type);
    d["default"] = k.default_text ? k.default_text : "";
    d["required"] = k.default_text && !*k.default_text;
    d["min"] = k.min;
    d["max"] = k.max;
    d["min_exclusive"] = k.min_exclusive;
    d["max_exclusive"] = k.max_exclusive;
    d["choices"] = k.choices ? std::string(k.choices) : std::string();
    d["doc"] = k.doc ? k.doc : "";
    d["former_name"] = k.alias ? std::string(k.alias) : std::string();
    return d;
}

/// `dpregret run --list-keys` and `dpregret audit --list-keys` as rows: [run]'s keys, every adversary's and learner's,
/// then [audit]'s.
nb::list keys() {
    nb::list rows;
    for (const KeySpec& k : config::run_keys()) rows.append(key_dict("run", "", k));
    const config::ConfigInputs in = api::run_config_inputs();
    for (const auto& c : in.adversaries)
        for (int i = 0; i < c.nkeys; ++i) rows.append(key_dict("adversary", c.name, c.keys[i]));
    for (const auto& c : in.learners)
        for (int i = 0; i < c.nkeys; ++i) rows.append(key_dict("learner", c.name, c.keys[i]));
    for (const KeySpec& k : audit::audit_keys()) rows.append(key_dict("audit", "", k));
    return rows;
}

/// `dpregret sample FORM --flag value ...` into memory: (the draws, (n,) or (n, T); the --meta JSON text or "").
/// Refused when the draws would not fit in the memory available now.
nb::tuple sample(const std::string& form, const std::map<std::string, std::string>& flags) {
    const api::Sampler s = api::make_sampler({form, flags});
    const std::uint64_t values = s.n * s.cols; // both < 2^32
    // The run's memory rule (host/api/pipeline.hpp check_memory): the memory available now, and the hard limits
    // (RLIMIT_AS, the cgroup's) that MemAvailable does not show.
    MemoryEstimate e;
    e.terms.push_back({"the draws: " + std::to_string(s.n) + (s.vector ? "" : " x " + std::to_string(s.cols)) +
                           " values x 8 bytes",
                       sat_mul(8, values)});
    e.host_bytes = sat_mul(8, values);
    api::check_memory(e, api::parse_memory_limit("auto"), 0, std::string("Reduce n") + (s.vector ? "." : " or T."),
                      "sample");
    std::vector<double> v(values);
    {
        nb::gil_scoped_release release;
        api::draw_samples(s, v.data());
    }
    for (const double x : v)
        if (!std::isfinite(x)) throw std::logic_error("sample: a non-finite value was drawn");
    const std::size_t n = s.n, cols = s.cols;
    nb::object draws = s.vector ? nb::cast(to_array(std::move(v), {n})) : nb::cast(to_array(std::move(v), {n, cols}));
    return nb::make_tuple(draws, s.meta ? s.meta().dump() : std::string());
}

/// One audit of two samples (host/api/audit_samples.hpp; `dpregret audit-samples`): computed on construction (it
/// reads the two arrays once, in O(n log n) for the selection shares), with the Audit's accessors.
using Sample = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
class SampleAudit {
public:
    SampleAudit(const Sample& a, const Sample& b, double epsilon, double delta, double mu, double alpha,
                double selection, int candidates)
        : started_at_(utc_now()) {
        const auto t0 = std::chrono::steady_clock::now();
        samples_.a.assign(a.data(), a.data() + a.shape(0));
        samples_.b.assign(b.data(), b.data() + b.shape(0));
        samples_.a_label = "the array a";
        samples_.b_label = "the array b";
        audit::SampleClaim claim;
        claim.epsilon = epsilon;
        claim.delta = delta;
        claim.mu = mu;
        audit::SampleAuditSettings st;
        st.alpha = alpha;
        st.selection = selection;
        st.candidates = candidates;
        try {
            outcome_ = audit::audit_two_samples(samples_.a, samples_.b, claim, st);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("audit_samples: ") + e.what());
        }
        wall_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    std::string json_text() const { return api::samples_audit_json(outcome_, samples_, started_at_, wall_).dump(); }
    std::string verdict_line() const { return api::samples_verdict_line(outcome_); }
    Array statistic() const {
        throw std::logic_error("audit_samples keeps no statistic of its own: the samples are the caller's arrays");
    }
    Array region() const { return region_array(outcome_.region); }
    /// audit.json and privacy_region.csv into `dir` (created if missing; refused if it already holds an audit), by the
    /// Save it returns (start() it), as Audit::save.
    std::unique_ptr<Save> save(const std::string& dir) const {
        io::OutputDirectory out = lock_save_dir(dir, /*audit=*/true);
        return std::make_unique<Save>(std::move(out), [this](const io::OutputDirectory& o, const std::function<bool()>&) {
            api::write_audit_files(o.dir(), outcome_, nlohmann::json::parse(json_text()));
            return true;
        });
    }

private:
    api::Samples samples_;
    audit::AuditOutcome outcome_;
    std::string started_at_;
    double wall_ = 0.0;
};

/// `dpregret merge SHARD... --out DIR` (host/api/merge.hpp): the shards checked and the directory taken now, the
/// points joined and the files written by the Save it returns (start() it; cancel() stops it between points and rows,
/// leaving nothing that looks complete).
std::unique_ptr<Save> merge_shards(const std::vector<std::string>& shards, const std::string& dir, bool bounded_memory,
                                   const std::string& memory_limit) {
    check_memory_limit(memory_limit);
    auto spec = std::make_shared<api::MergeSpec>();
    spec->shards = shards;
    spec->bounded_memory = bounded_memory;
    spec->memory_limit = memory_limit;
    auto plan = std::make_shared<api::MergePlan>(api::plan_merge(*spec));
    io::OutputDirectory out = lock_save_dir(dir, /*audit=*/false);
    return std::make_unique<Save>(std::move(out), [spec, plan](const io::OutputDirectory& o, const std::function<bool()>& stop) {
        api::MergeSpec s = *spec;
        s.interrupted = stop;
        return api::execute_merge(*plan, s, o.dir());
    });
}

nb::dict info() {
    const BuildInfo& b = build_info();
    const auto dev = cuda_api::query_devices();
    nb::dict d;
    d["version"] = b.version;
    d["git_commit"] = b.git_commit;
    d["compiler"] = b.compiler;
    d["rng"] = b.rng;
    d["cuda_compiled"] = b.cuda_compiled;
    d["cuda_architectures"] = b.cuda_archs;
    d["gpu_count"] = dev.device_count;
    d["gpu"] = dev.name;
    d["cpu_threads"] = std::max(1u, std::thread::hardware_concurrency());
    return d;
}

} // namespace
} // namespace dpr::python

NB_MODULE(_core, m) {
    using dpr::python::Job;
    m.doc() = "dpregret's core library (use the `dpregret` package, not this module)";
    nb::exception<dpr::UsageError>(m, "ConfigError", PyExc_ValueError);
    nb::exception<dpr::NonFiniteResult>(m, "NonFiniteResult", PyExc_ArithmeticError);
    nb::exception<dpr::io::IoError>(m, "IoError", PyExc_OSError);

    using dpr::python::Worker;
    nb::class_<Worker>(m, "Worker")
        .def("start", &Worker::start)
        .def("wait", &Worker::wait, "seconds"_a)
        .def("cancel", &Worker::cancel)
        .def("finish", &Worker::finish)
        .def("progress", &Worker::progress)
        .def("total", &Worker::total)
        .def("warnings", &Worker::warnings);
    using dpr::python::Save;
    nb::class_<Save, Worker>(m, "Save");
    nb::class_<Job, Worker>(m, "Job")
        .def(nb::init<const std::string&, const std::string&, const std::string&,
                      const std::vector<std::string>&, const dpr::python::LossMatrices&, const std::string&,
                      unsigned, const std::string&>(),
             "config_path"_a, "toml_text"_a, "source_name"_a, "overrides"_a, "arrays"_a, "backend"_a,
             "threads"_a, "memory_limit"_a)
        .def("backend", &Job::backend)
        .def("why_not_cuda", &Job::why_not_cuda)
        .def("instances", &Job::instances)
        .def("point_count", &Job::point_count)
        .def("final_values", &Job::final_values, "realized"_a)
        .def("point_values", &Job::point_values, "point"_a, "realized"_a)
        .def("checkpoints", &Job::checkpoints, "point"_a)
        .def("diagnostic_names", &Job::diagnostic_names)
        .def("diagnostic", &Job::diagnostic, "name"_a)
        .def("summary_csv", &Job::summary_csv)
        .def("run_json", &Job::run_json_text)
        .def("save", &Job::save, "dir"_a, nb::keep_alive<0, 1>())
        .def("take_out", &Job::take_out, "dir"_a)
        .def("save_out", &Job::save_out, nb::keep_alive<0, 1>())
        .def("release_out", &Job::release_out);
    using dpr::python::Audit;
    nb::class_<Audit, Worker>(m, "Audit")
        .def(nb::init<const std::string&, const std::string&, const std::string&,
                      const std::vector<std::string>&, const dpr::python::LossMatrices&, const std::string&,
                      unsigned, const std::string&, bool, bool, bool, std::uint64_t, bool, std::uint64_t,
                      std::uint64_t, bool>(),
             "config_path"_a, "toml_text"_a, "source_name"_a, "overrides"_a, "arrays"_a, "backend"_a,
             "threads"_a, "memory_limit"_a, "allow_planted"_a, "keep_statistic"_a, "search"_a, "pilot"_a,
             "one_run"_a, "canaries"_a, "window"_a, "fitted"_a)
        .def("json", &Audit::json_text)
        .def("verdict_line", &Audit::verdict_line)
        .def("statistic", &Audit::statistic)
        .def("region", &Audit::region)
        .def("save", &Audit::save, "dir"_a, nb::keep_alive<0, 1>())
        .def("take_out", &Audit::take_out, "dir"_a)
        .def("save_out", &Audit::save_out, nb::keep_alive<0, 1>())
        .def("release_out", &Audit::release_out);
    using dpr::python::SampleAudit;
    nb::class_<SampleAudit>(m, "SampleAudit")
        .def(nb::init<const dpr::python::Sample&, const dpr::python::Sample&, double, double, double, double, double, int>(),
             "a"_a, "b"_a, "epsilon"_a, "delta"_a, "mu"_a, "alpha"_a, "selection"_a, "candidates"_a)
        .def("json", &SampleAudit::json_text)
        .def("verdict_line", &SampleAudit::verdict_line)
        .def("statistic", &SampleAudit::statistic)
        .def("region", &SampleAudit::region)
        .def("save", &SampleAudit::save, "dir"_a, nb::keep_alive<0, 1>());
    m.def("merge", &dpr::python::merge_shards, "shards"_a, "dir"_a, "bounded_memory"_a, "memory_limit"_a);
    m.def("keys", &dpr::python::keys);
    m.def("sample", &dpr::python::sample, "form"_a, "flags"_a);
    m.def("sample_forms", &dpr::api::sample_forms);
    m.def("info", &dpr::python::info);
    m.attr("__version__") =
        dpr::build_info().version; // without info()'s GPU query, so that import stays cheap
}
