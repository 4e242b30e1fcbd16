// What bounds the memory of a run or an audit, and what the command says when it does not fit (issue 47; docs/OUTPUTS.md
// "Before anything is simulated", Memory):
//   - the limits are read where the kernel keeps them: RLIMIT_AS (ulimit -v, a batch system's cap enforced that way),
//     the memory.max (cgroup v2) or memory.limit_in_bytes (v1) of the process's own cgroup and every cgroup above
//     it, MemAvailable; read_process_memory takes the files' paths, so that fake /proc and /sys contents test it;
//   - the hard limits (RLIMIT_AS, the cgroup) refuse whatever exceeds them, with no floor; the memory available
//     now refuses only an estimate above a floor (--memory-limit auto), so that a small audit is not refused
//     because MemAvailable dipped for a moment;
//   - under `ulimit -v`, `dpregret run` and `dpregret audit` refuse (exit 2) before simulating, naming RLIMIT_AS; with
//     --memory-limit none the allocation that fails is reported in a sentence that names what was being
//     allocated and the keys to reduce, not as a bare std::bad_alloc.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cli/run_cli.hpp"
#include "host/api/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/results/memory_estimate.hpp"

using dpr::test::CliResult;
using dpr::test::run_cli;
using dpr::test::TempDir;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20, kGiB = std::uint64_t{1} << 30;

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

/// A fake root holding proc/meminfo, proc/self/{status,cgroup} and sys/fs/cgroup/...: MemoryFiles pointing there.
struct FakeRoot {
    TempDir dir;
    void put(const std::string& rel, const std::string& text) const {
        const std::filesystem::path p = dir.path() / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << text;
    }
    dpr::MemoryFiles files() const {
        dpr::MemoryFiles f;
        f.meminfo = dir.file("proc/meminfo");
        f.self = dir.file("proc/self");
        f.cgroup_root = dir.file("sys/fs/cgroup");
        return f;
    }
};

const char* kMeminfo = "MemTotal:       16384000 kB\nMemFree:          100000 kB\nMemAvailable:    2048000 kB\n"
                       "Buffers:            1000 kB\n";
const char* kStatus = "Name:\tdpregret\nVmPeak:\t  300000 kB\nVmSize:\t  204800 kB\nVmRSS:\t   10240 kB\n";

} // namespace

// ---- reading the limits ------------------------------------------------------------------------------------------

TEST(MemoryLimits, ReadsMeminfoTheAddressSpaceInUseAndTheRlimit) {
    FakeRoot r;
    r.put("proc/meminfo", kMeminfo);
    r.put("proc/self/status", kStatus);
    r.put("proc/self/cgroup", "0::/\n");
    const dpr::ProcessMemory m = dpr::read_process_memory(r.files(), 512 * kMiB);
    EXPECT_EQ(m.mem_total, 16384000ull * 1024);
    EXPECT_EQ(m.mem_available, 2048000ull * 1024);
    EXPECT_EQ(m.address_space_used, 204800ull * 1024); // VmSize: what RLIMIT_AS counts, not the resident set
    EXPECT_EQ(m.resident, 10240ull * 1024);
    EXPECT_EQ(m.address_space, 512 * kMiB);
    EXPECT_EQ(m.cgroup_limit, 0u) << "no memory.max anywhere: no cgroup limit";
    // No limit given: none.
    EXPECT_EQ(dpr::read_process_memory(r.files(), 0).address_space, 0u);
}

// cgroup v2: the process's cgroup comes from /proc/self/cgroup ("0::/path"), and a limit set on an ancestor (a batch
// job's cgroup, above the step's and the task's, which say "max") bounds it too; the tightest room counts. Page cache
// that the kernel reclaims before the limit is hit (inactive_file of memory.stat) is not counted as used.
TEST(MemoryLimits, CgroupV2LimitIsTheTightestOnThePathToTheRoot) {
    FakeRoot r;
    r.put("proc/meminfo", kMeminfo);
    r.put("proc/self/status", kStatus);
    r.put("proc/self/cgroup", "0::/job_7/step_0/task_0\n");
    r.put("sys/fs/cgroup/memory.max", "max\n"); // the root: no limit
    r.put("sys/fs/cgroup/job_7/memory.max", "4294967296\n");
    r.put("sys/fs/cgroup/job_7/memory.current", "1073741824\n");
    r.put("sys/fs/cgroup/job_7/memory.stat", "anon 805306368\nfile 268435456\ninactive_file 134217728\n");
    r.put("sys/fs/cgroup/job_7/step_0/memory.max", "max\n");
    r.put("sys/fs/cgroup/job_7/step_0/task_0/memory.max", "max\n");
    r.put("sys/fs/cgroup/job_7/step_0/task_0/memory.current", "104857600\n");
    dpr::ProcessMemory m = dpr::read_process_memory(r.files(), 0);
    EXPECT_EQ(m.cgroup_limit, 4 * kGiB);
    EXPECT_EQ(m.cgroup_used, 1 * kGiB - 128 * kMiB);
    EXPECT_TRUE(contains(m.cgroup_file, "job_7/memory.max")) << m.cgroup_file;
    // A tighter room further down wins, even under a larger limit: 2 GiB with 1.9 GiB used leaves less than the job.
    r.put("sys/fs/cgroup/job_7/step_0/memory.max", "2147483648\n");
    r.put("sys/fs/cgroup/job_7/step_0/memory.current", "2040109465\n");
    m = dpr::read_process_memory(r.files(), 0);
    EXPECT_EQ(m.cgroup_limit, 2 * kGiB);
    EXPECT_EQ(m.cgroup_used, 2040109465u);
    EXPECT_TRUE(contains(m.cgroup_file, "step_0/memory.max")) << m.cgroup_file;
}

// cgroup v1: the memory controller's line of /proc/self/cgroup ("4:memory:/path") under sys/fs/cgroup/memory; a limit of
// 2^63 rounded to pages (9223372036854771712) means none.
TEST(MemoryLimits, CgroupV1LimitAndItsUnlimitedValue) {
    FakeRoot r;
    r.put("proc/meminfo", kMeminfo);
    r.put("proc/self/status", kStatus);
    r.put("proc/self/cgroup", "5:cpu,cpuacct:/slurm/uid_1/job_3\n4:memory:/slurm/uid_1/job_3\n0::/\n");
    r.put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    r.put("sys/fs/cgroup/memory/slurm/uid_1/job_3/memory.limit_in_bytes", "9223372036854771712\n");
    EXPECT_EQ(dpr::read_process_memory(r.files(), 0).cgroup_limit, 0u);
    r.put("sys/fs/cgroup/memory/slurm/uid_1/memory.limit_in_bytes", "1073741824\n");
    r.put("sys/fs/cgroup/memory/slurm/uid_1/memory.usage_in_bytes", "536870912\n");
    r.put("sys/fs/cgroup/memory/slurm/uid_1/memory.stat", "cache 300000000\ninactive_file 1\ntotal_inactive_file 268435456\n");
    const dpr::ProcessMemory m = dpr::read_process_memory(r.files(), 0);
    EXPECT_EQ(m.cgroup_limit, 1 * kGiB);
    EXPECT_EQ(m.cgroup_used, 256 * kMiB); // hierarchical total_inactive_file, not the cgroup's own inactive_file
}

// ---- the rule: what is refused ----------------------------------------------------------------------------------

namespace {

dpr::MemoryEstimate estimate_of(std::uint64_t bytes) {
    dpr::MemoryEstimate e;
    e.host_bytes = bytes;
    e.terms.push_back({"learner state of point 0: [run] instances = 1 x " + dpr::human_bytes(bytes), bytes});
    return e;
}

/// The message of check_memory's refusal, or "" if it passes.
std::string refusal(const dpr::MemoryEstimate& e, const dpr::api::MemoryLimit& limit) {
    try {
        dpr::api::check_memory(e, limit);
    } catch (const dpr::UsageError& err) {
        return err.what();
    }
    return "";
}

dpr::ProcessMemory machine(std::uint64_t total, std::uint64_t available) {
    dpr::ProcessMemory m;
    m.mem_total = total;
    m.mem_available = available;
    m.resident = 8 * kMiB;
    m.address_space_used = 100 * kMiB;
    return m;
}

} // namespace

// --memory-limit auto: the memory available now moves as other processes start and end, so an estimate up to the floor
// (min(1 GiB, MemTotal / 4)) is never refused for it; above the floor it is. A wrong implementation that compares
// every estimate with MemAvailable refuses the 40 MiB audit at a moment when 10 MiB are available.
TEST(MemoryLimits, AutoDoesNotRefuseASmallEstimateWhenTheAvailableMemoryDips) {
    const dpr::api::MemoryLimit dip = dpr::api::parse_memory_limit("auto", machine(16 * kGiB, 10 * kMiB));
    EXPECT_EQ(refusal(estimate_of(40 * kMiB), dip), "");
    EXPECT_EQ(refusal(estimate_of(kGiB), dip), "");
    const std::string big = refusal(estimate_of(3 * kGiB), dip);
    EXPECT_TRUE(contains(big, "MemAvailable")) << big;
    // On a small machine the floor is a quarter of it: 600 MiB of a 2 GiB machine is refused when 100 MiB are available.
    const dpr::api::MemoryLimit small = dpr::api::parse_memory_limit("auto", machine(2 * kGiB, 100 * kMiB));
    EXPECT_EQ(refusal(estimate_of(400 * kMiB), small), "");
    EXPECT_NE(refusal(estimate_of(600 * kMiB), small), "");
    // An explicit size has no floor: the user said how much.
    EXPECT_NE(refusal(estimate_of(40 * kMiB), dpr::api::parse_memory_limit("16M", machine(16 * kGiB, 8 * kGiB))), "");
}

// The hard limits are what the kernel enforces: below the floor too, and with an explicit size larger than them.
TEST(MemoryLimits, HardLimitsRefuseWhatCannotFitWhateverTheFloorOrTheSize) {
    dpr::ProcessMemory m = machine(16 * kGiB, 8 * kGiB);
    m.address_space = 256 * kMiB; // ulimit -v 262144; 100 MiB of it mapped already
    for (const char* text : {"auto", "8G"}) {
        const dpr::api::MemoryLimit limit = dpr::api::parse_memory_limit(text, m);
        // The room is 156 MiB of address space (plus the 8 MiB resident that the estimate counts).
        EXPECT_EQ(refusal(estimate_of(100 * kMiB), limit), "") << text;
        const std::string msg = refusal(estimate_of(200 * kMiB), limit);
        EXPECT_TRUE(contains(msg, "RLIMIT_AS")) << text << ": " << msg;
        EXPECT_TRUE(contains(msg, "ulimit -v")) << msg;
        EXPECT_TRUE(contains(msg, "256 MiB")) << msg;
        EXPECT_TRUE(contains(msg, "[run] instances")) << msg; // which key to reduce
    }
    // Sizes between 1000 and 1023 of a unit are written as numbers, not "1.01e+03 MiB".
    EXPECT_EQ(dpr::human_bytes(1012 * kMiB), "1012 MiB");
    // Thread stacks are address space too: an estimate that fits alone but not with its threads' stacks is refused.
    dpr::MemoryEstimate e = estimate_of(100 * kMiB);
    e.address_space_extra = 70 * kMiB; // 170 MiB against the room of 156 + 8 MiB
    EXPECT_TRUE(contains(refusal(e, dpr::api::parse_memory_limit("auto", m)), "RLIMIT_AS"));
    // The cgroup: room = memory.max - what is used; a 1 GiB job with 900 MiB used refuses 200 MiB.
    dpr::ProcessMemory c = machine(16 * kGiB, 8 * kGiB);
    c.cgroup_limit = kGiB;
    c.cgroup_used = 900 * kMiB;
    c.cgroup_file = "/sys/fs/cgroup/job_7/memory.max";
    const std::string msg = refusal(estimate_of(200 * kMiB), dpr::api::parse_memory_limit("auto", c));
    EXPECT_TRUE(contains(msg, "/sys/fs/cgroup/job_7/memory.max")) << msg;
    EXPECT_EQ(refusal(estimate_of(100 * kMiB), dpr::api::parse_memory_limit("auto", c)), "");
    // none checks nothing.
    EXPECT_EQ(refusal(estimate_of(200 * kMiB), dpr::api::parse_memory_limit("none", m)), "");
}

// ---- through the binary, under `ulimit -v` -------------------------------------------------------------------------

namespace {

/// `ulimit -v` (KiB) for the command run by run_cli's shell: the binary starts (it maps about 20 MiB before it
/// allocates, libraries included) and a small audit runs, but a run of a few GiB cannot fit.
constexpr int kLimitMiB = 1024;
const std::string kUlimit = "ulimit -v " + std::to_string(kLimitMiB * 1024) + " &&";

/// An audit of dp-ftrl-experts on a d-column loss file (two rows: a round and its neighbour's flip). At d = 2048 one
/// executor batch (65536 trials) of learner states is gigabytes, far over kLimitMiB; at d = 2 it is a few MiB.
void write_audit(const TempDir& dir, int d) {
    std::string row0, row1;
    for (int i = 0; i < d; ++i) {
        row0 += (i ? "," : "") + std::string(i % 2 ? "1" : "0");
        row1 += (i ? "," : "") + std::string(i % 2 ? "0" : "1");
    }
    dir.write("base.csv", row0 + "\n" + row1 + "\n");
    dir.write("a.toml", "[run]\ninstances = 100000\nrounds = 2\n[adversary]\nkind = \"file\"\npath = \"base.csv\"\n"
                        "[learner]\nalgorithm = \"dp-ftrl-experts\"\nepsilon = 1\n[audit]\nround = 1\n");
}

const char* kBigRun = "[run]\ninstances = 200000\nrounds = 4\n[adversary]\nkind = \"bernoulli\"\nd = 4096\n"
                      "[learner]\nalgorithm = \"hedge\"\n";

} // namespace

// Before: the audit below died with "dpregret: error: std::bad_alloc" under ulimit -v. Now it is refused before anything
// is simulated, exit 2, naming the limit, and no directory is left.
TEST(MemoryLimitsCli, AnAuditOverTheAddressSpaceLimitIsRefusedNamingIt) {
    TempDir dir;
    write_audit(dir, 2048);
    const CliResult r = run_cli(dir, "audit a.toml --out o --quiet --threads 1 --backend cpu", kUlimit);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "RLIMIT_AS")) << r.err;
    EXPECT_TRUE(contains(r.err, "ulimit -v")) << r.err;
    EXPECT_FALSE(contains(r.err, "std::bad_alloc")) << r.err;
    // The learner state is one executor batch of trials, named by the audit's key, not as a run's instance count.
    EXPECT_TRUE(contains(r.err, "[audit] batch = ")) << r.err;
    EXPECT_FALSE(contains(r.err, "[run] instances = ")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("o")));
    // A small audit under the same limit runs.
    TempDir small;
    write_audit(small, 2);
    const CliResult ok = run_cli(small, "audit a.toml --out o --quiet --threads 1 --backend cpu --set run.instances=2000",
                                 kUlimit);
    EXPECT_EQ(ok.rc, 0) << ok.err;
}

TEST(MemoryLimitsCli, ARunOverTheAddressSpaceLimitIsRefusedNamingIt) {
    TempDir dir;
    dir.write("c.toml", kBigRun);
    const CliResult r = run_cli(dir, "run c.toml --out o --quiet --threads 1 --backend cpu", kUlimit);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "RLIMIT_AS")) << r.err;
    EXPECT_TRUE(contains(r.err, "[run] instances")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("o")));
}

// With the check off (--memory-limit none) the allocation fails: the audit says, in a sentence, that it ran out of memory,
// what it was allocating and which keys to reduce; exit 1, no results, no directory.
TEST(MemoryLimitsCli, AnAllocationThatFailsAnywayIsASentenceNotABareBadAlloc) {
    TempDir dir;
    write_audit(dir, 2048);
    const CliResult a = run_cli(dir, "audit a.toml --out o --quiet --threads 1 --backend cpu --memory-limit none", kUlimit);
    EXPECT_EQ(a.rc, 1) << a.err;
    EXPECT_TRUE(contains(a.err, "out of memory")) << a.err;
    EXPECT_TRUE(contains(a.err, "[audit] batch")) << a.err;
    EXPECT_TRUE(contains(a.err, "[run] instances")) << a.err;
    EXPECT_NE(a.err, "dpregret: error: std::bad_alloc\n");
    EXPECT_FALSE(std::filesystem::exists(dir.file("o/audit.json")));
    dir.write("c.toml", kBigRun);
    const CliResult r = run_cli(dir, "run c.toml --out r --quiet --threads 1 --backend cpu --memory-limit none", kUlimit);
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "out of memory")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("r/run.json")));
}
