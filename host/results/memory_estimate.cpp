#include "host/results/memory_estimate.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>

#include "kernels/sim/instance_loop.hpp"

namespace dpr {

std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
    return a > std::numeric_limits<std::uint64_t>::max() - b ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) {
    if (a == 0 || b == 0) return 0;
    return a > std::numeric_limits<std::uint64_t>::max() / b ? std::numeric_limits<std::uint64_t>::max() : a * b;
}

std::string human_bytes(std::uint64_t bytes) {
    if (bytes == std::numeric_limits<std::uint64_t>::max()) return "more than 16 EiB";
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 6) v /= 1024.0, ++u;
    char buf[64];
    if (u == 0) std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
    else std::snprintf(buf, sizeof buf, v < 1000.0 ? "%.3g %s" : "%.0f %s", v, units[u]); // not "1.01e+03 MiB"
    return buf;
}

namespace {

constexpr std::uint64_t kDouble = sizeof(double);
/// run.json's inline entry of one point (settings, privacy, checkpoints, ...), generously.
constexpr std::uint64_t kPointJsonBytes = 4096;
/// The CPU executor pads rows of d values to multiples of its SIMD lanes (host/cpu/cpu_engine_impl.hpp).
constexpr std::uint64_t kLanePad = 16;

std::string point_label(const PointRecord& r) {
    const config::Point& p = *r.point;
    std::string swept;
    for (const auto& kv : p.swept)
        if (!kv.second.empty()) swept += (swept.empty() ? "" : ", ") + kv.first + " = " + kv.second;
    return "point " + std::to_string(p.index) + " (" + (swept.empty() ? "" : swept + "; ") + "[learner] algorithm = \"" +
           r.learner.name + "\", [adversary] d = " + std::to_string(p.problem.d) + ")";
}

struct PointMemory {
    std::uint64_t retained = 0;
    std::uint64_t state = 0;     ///< I x W
    std::uint64_t transient = 0; ///< everything while it runs, state included
};

/// The engine's and the runner's allocations for one point (see the header; host/cpu/cpu_engine.cpp,
/// cpu_engine_impl.hpp and point_runner.cpp).
PointMemory point_memory(const config::Config& cfg, const PointRecord& r, unsigned threads, std::size_t chunk_bytes,
                         std::uint64_t instances, bool keep_instances) {
    const config::Point& p = *r.point;
    // d: numbers per loss row (the adversary's row width: d, d + 1 for the (a_t, b_t) families, more with row_extra)
    const std::uint64_t I = instances, T = p.problem.T;
    const std::uint64_t d = std::max<std::uint64_t>(r.adversary.row_width ? r.adversary.row_width : p.problem.d, 1);
    const std::uint64_t pitch = (d + kLanePad - 1) / kLanePad * kLanePad; // rows padded to SIMD lanes
    const std::uint64_t C = std::min<std::uint64_t>(cfg.run.checkpoints, T) + 1; // log_checkpoints() <= n (+ T)
    const std::uint64_t nd = r.learner.diagnostic_names.size();
    PointMemory m;
    m.retained = sat_add(sat_mul(sat_mul(I, 2 + nd), kDouble), sat_mul(C, sizeof(CheckpointRow) + kDouble));
    if (keep_instances) // regret, realised regret (and comparator) at every checkpoint, first non-finite round
        m.retained = sat_add(m.retained, sat_mul(sat_mul(I, sat_add(sat_mul(2 + p.per_instance, C), 1)), kDouble));
    m.state = sat_mul(I, r.learner.state_bytes);
    const std::uint64_t chunk_rows = std::max<std::uint64_t>(1, std::min<std::uint64_t>(T, chunk_bytes / (kDouble * d)));
    const std::uint64_t chunk = sat_mul(sat_mul(chunk_rows, pitch), kDouble); // one copy of a chunk's rows
    std::uint64_t t = m.state;
    t = sat_add(t, sat_mul(I, sizeof(sim::InstanceTotals<double, std::uint64_t>)));
    // expected/realised: the engine's, CpuEngine's copies, run_point's copies, PointResult's regrets.
    t = sat_add(t, sat_mul(sat_mul(8 * kDouble, I), C));
    t = sat_add(t, sat_mul(sat_mul(2 * kDouble, I), nd + 1)); // diagnostics and first non-finite rounds, twice
    if (p.per_instance) {
        // Each thread's own rows (exact and real copies) and each instance's running sum and comparators.
        t = sat_add(t, sat_mul(threads, sat_add(sat_mul(2, chunk), sat_mul(d, kDouble))));
        t = sat_add(t, sat_mul(sat_mul(I, sat_add(d, sat_mul(3, C))), kDouble));
    } else {
        // The runner's rows and running sum, the engine's exact and real copies of the rows.
        t = sat_add(t, sat_add(sat_mul(3, chunk), sat_mul(d, kDouble)));
    }
    t = sat_add(t, sat_mul(2 * kDouble, I)); // finish_point's columns
    m.transient = t;
    return m;
}

} // namespace

MemoryEstimate estimate_run_memory(const config::Config& cfg, const std::vector<PointRecord>& recs, unsigned threads,
                                   std::size_t chunk_bytes, bool cuda, std::uint64_t instances, bool keep_instances) {
    const std::uint64_t I = instances ? instances : cfg.run.instances;
    MemoryEstimate e;
    std::uint64_t retained = 0;
    std::size_t peak = 0;
    PointMemory peak_mem;
    for (std::size_t i = 0; i < recs.size(); ++i) {
        const PointMemory m = point_memory(cfg, recs[i], threads, chunk_bytes, I, keep_instances);
        retained = sat_add(retained, m.retained);
        if (m.transient > peak_mem.transient) peak = i, peak_mem = m;
    }
    const std::uint64_t outputs = sat_mul(std::min<std::uint64_t>(recs.size(), kInlinePoints), kPointJsonBytes);
    if (recs.empty()) return e;
    const PointRecord& pr = recs[peak];
    const std::string label = point_label(pr);
    // On the GPU the state and the checkpoint buffers of the running point are device memory.
    const std::uint64_t host_transient = cuda ? peak_mem.transient - peak_mem.state : peak_mem.transient;
    const std::uint64_t resident = resident_memory_bytes();
    e.host_bytes = sat_add(sat_add(sat_add(retained, host_transient), outputs), resident);
    if (cuda) e.device_bytes = peak_mem.state;
    // Each of the executor's threads - 1 workers (host/cpu/parallel.hpp) reserves a stack, and the command may start one
    // more (progress): address space, which RLIMIT_AS counts although little of it is touched.
    e.address_space_extra = sat_mul(std::max(threads, 1u), thread_stack_bytes());
    e.terms.push_back({std::string(cuda ? "device " : "") + "learner state of " + label + ": [run] instances = " +
                           std::to_string(I) + " x " + human_bytes(pr.learner.state_bytes),
                       peak_mem.state});
    e.terms.push_back({"loss chunks and per-checkpoint buffers of " + label, peak_mem.transient - peak_mem.state});
    e.terms.push_back({"results kept for the output of " + std::to_string(recs.size()) + " point(s) x " +
                           std::to_string(I) + " instances",
                       retained});
    e.terms.push_back({"run.json", outputs});
    e.terms.push_back({"held already: the config and its " + std::to_string(recs.size()) + " resolved point(s)", resident});
    std::stable_sort(e.terms.begin(), e.terms.end(), [](const MemoryTerm& a, const MemoryTerm& b) { return a.bytes > b.bytes; });
    return e;
}

namespace {

/// The first word of a one-line file such as memory.max; "" if there is no file.
std::string first_word(const std::string& path) {
    std::ifstream in(path);
    std::string s;
    in >> s;
    return s;
}

/// A number from a one-line file such as /sys/fs/cgroup/memory.max; false for "max", no file or no number.
bool read_number(const std::string& path, std::uint64_t& out) {
    const std::string s = first_word(path);
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
    try {
        out = std::stoull(s);
    } catch (...) {
        return false;
    }
    return true;
}

/// The value of `key` in a "key value [unit]" file (/proc/meminfo "MemAvailable:" in kB, memory.stat in bytes), times
/// `unit`; false if absent.
bool read_keyed(const std::string& path, const std::string& key, std::uint64_t unit, std::uint64_t& out) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string k;
        std::uint64_t v = 0;
        if (ls >> k >> v && k == key) {
            out = sat_mul(v, unit);
            return true;
        }
    }
    return false;
}

/// cgroup v1 reports "no limit" as 2^63 rounded down to pages; anything this large is no limit.
constexpr std::uint64_t kNoCgroupLimit = std::uint64_t{1} << 60;

/// "/a/b/c" -> {"/a/b/c", "/a/b", "/a", "/"}: a cgroup and its ancestors, whose limits all bound it.
std::vector<std::string> cgroup_ancestry(std::string path) {
    std::vector<std::string> out;
    while (!path.empty() && path.back() == '/') path.pop_back();
    while (!path.empty()) {
        out.push_back(path);
        const std::size_t slash = path.rfind('/');
        path = slash == std::string::npos ? std::string() : path.substr(0, slash);
    }
    out.push_back("");
    return out;
}

/// The tightest cgroup room on the way from the process's cgroup to the root of one hierarchy: for every directory
/// with a limit, room = limit - (usage - inactive page cache). Page cache on the inactive list is reclaimed before
/// the limit is enforced, so it is not counted as used (it is most of a long-running process's usage after it read
/// loss files).
void tightest_cgroup(ProcessMemory& m, const std::string& mount, const std::string& path, const char* limit_file,
                     const char* usage_file, std::initializer_list<const char*> inactive_keys) {
    for (const std::string& rel : cgroup_ancestry(path)) {
        const std::string dir = mount + rel;
        std::uint64_t limit = 0, usage = 0, inactive = 0;
        if (!read_number(dir + "/" + limit_file, limit) || limit >= kNoCgroupLimit) continue;
        (void)read_number(dir + "/" + usage_file, usage); // unknown usage: the whole limit is the room
        for (const char* key : inactive_keys)
            if (read_keyed(dir + "/memory.stat", key, 1, inactive)) break;
        const std::uint64_t used = usage > inactive ? usage - inactive : 0;
        const std::uint64_t room = limit > used ? limit - used : 0;
        const std::uint64_t best = m.cgroup_limit == 0 ? std::numeric_limits<std::uint64_t>::max()
                                   : m.cgroup_limit > m.cgroup_used ? m.cgroup_limit - m.cgroup_used
                                                                    : 0;
        if (room < best) {
            m.cgroup_limit = limit;
            m.cgroup_used = used;
            m.cgroup_file = dir + "/" + limit_file;
        }
    }
}

} // namespace

ProcessMemory read_process_memory(const MemoryFiles& f, std::uint64_t address_space_limit) {
    ProcessMemory m;
    (void)read_keyed(f.meminfo, "MemTotal:", 1024, m.mem_total);
    (void)read_keyed(f.meminfo, "MemAvailable:", 1024, m.mem_available);
    (void)read_keyed(f.self + "/status", "VmSize:", 1024, m.address_space_used);
    (void)read_keyed(f.self + "/status", "VmRSS:", 1024, m.resident);
    m.address_space = address_space_limit;
    // /proc/self/cgroup: "0::/path" (v2: the unified hierarchy, at the mount or, on hybrid systems, under unified/),
    // "N:...,memory,...:/path" (v1: the memory controller's hierarchy under memory/).
    std::ifstream in(f.self + "/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",", path = line.substr(b + 1);
        if (line.compare(0, a, "0") == 0 && controllers == ",,") {
            for (const char* mount : {"", "/unified"})
                tightest_cgroup(m, f.cgroup_root + mount, path, "memory.max", "memory.current", {"inactive_file"});
        } else if (controllers.find(",memory,") != std::string::npos) {
            tightest_cgroup(m, f.cgroup_root + "/memory", path, "memory.limit_in_bytes", "memory.usage_in_bytes",
                            {"total_inactive_file", "inactive_file"});
        }
    }
    return m;
}

ProcessMemory read_process_memory() {
    struct rlimit rl {};
    std::uint64_t as = 0;
    if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) as = static_cast<std::uint64_t>(rl.rlim_cur);
    return read_process_memory(MemoryFiles{}, as);
}

std::uint64_t thread_stack_bytes() {
    // glibc reserves RLIMIT_STACK (8 MiB by default) for every thread's stack; pthread_attr_getstacksize of fresh
    // attributes says what it will use.
    pthread_attr_t attr;
    std::size_t size = 0;
    if (::pthread_attr_init(&attr) == 0) {
        (void)::pthread_attr_getstacksize(&attr, &size);
        ::pthread_attr_destroy(&attr);
    }
    return size ? size : std::uint64_t{8} << 20;
}

std::uint64_t resident_memory_bytes() {
    std::ifstream in("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    if (!(in >> size >> resident)) return 0;
    const long page = ::sysconf(_SC_PAGESIZE);
    return sat_mul(resident, page > 0 ? static_cast<std::uint64_t>(page) : 4096);
}

std::uint64_t available_memory_bytes(std::string* source) {
    const ProcessMemory m = read_process_memory();
    std::uint64_t avail = m.mem_available;
    if (avail && source) *source = "MemAvailable in /proc/meminfo";
    if (m.cgroup_limit) {
        const std::uint64_t room = m.cgroup_limit > m.cgroup_used ? m.cgroup_limit - m.cgroup_used : 0;
        if (avail == 0 || room < avail) {
            avail = room;
            if (source) *source = "the room left under the cgroup memory limit (" + m.cgroup_file + ")";
        }
    }
    return avail;
}

std::uint64_t estimate_run_disk(const config::Config& cfg, const std::vector<PointRecord>& recs, std::uint64_t instances,
                                DiskRole role) {
    // An MPI run's rank 0 writes no pieces and gathers every rank's instances into the result files.
    const bool mpi_root = role == DiskRole::MpiRoot;
    const std::uint64_t I = instances && !mpi_root ? instances : cfg.run.instances;
    std::uint64_t pieces = 0, outputs = 0;
    for (std::size_t i = 0; i < recs.size() && i < cfg.points.size(); ++i) {
        const std::uint64_t C = cfg.run.checkpoints, nd = recs[i].learner.diagnostic_names.size();
        const std::uint64_t per_instance = 2 * C + (cfg.points[i].per_instance ? C : 0) + nd + 1;
        pieces = sat_add(pieces, sat_add(sat_mul(8, sat_mul(I, per_instance)), 8 * C + 4096));
        const std::uint64_t row = 24 * (2 + nd + cfg.points[i].swept.size()) + 16;
        outputs = sat_add(outputs, sat_add(sat_mul(I, row), 400 * C + 4096));
    }
    if (mpi_root) return outputs;
    return sat_add(role == DiskRole::Shard ? sat_mul(2, pieces) : pieces, outputs);
}

std::optional<std::uint64_t> available_disk_bytes(const std::string& dir) {
    struct statvfs st {};
    if (::statvfs(dir.c_str(), &st) != 0) return std::nullopt;
    return sat_mul(static_cast<std::uint64_t>(st.f_bavail), static_cast<std::uint64_t>(st.f_frsize));
}

bool fits_on_disk(std::uint64_t need, std::optional<std::uint64_t> free) { return !free || need <= *free; }

} // namespace dpr
