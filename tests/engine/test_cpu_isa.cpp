// The binary on CPUs without AVX-512, for real: `dpregret` runs under QEMU's user-mode emulation of a Haswell
// (AVX2, no AVX-512) and of a Nehalem (SSE4.2, no AVX), where any AVX-512 (AVX) instruction is an illegal
// instruction. It must pick the avx2 (generic) kernels, never execute an instruction of the other ISAs --
// which would happen if the linker had let a function compiled for AVX-512 stand in for a baseline one
// (host/cpu/cpu_isa.hpp) -- and write byte for byte the results of the native run. Skipped where QEMU is not
// installed (scripts/deps.sh installs qemu-user on x86-64).
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "host/cpu/cpu_isa.hpp"

using dpr::test::run_cli;
using dpr::test::slurp;
using dpr::test::TempDir;

namespace {

bool have_qemu() { return std::system("command -v qemu-x86_64 >/dev/null 2>&1") == 0; }

const char* kConfig = R"([run]
seed = 4
instances = 20
rounds = 64
checkpoints = 3

[adversary]
kind = "bernoulli"
d = 40

[learner]
algorithm = ["hedge", "dp-ftrl-experts", "dp-mab", "dp-ftpl-experts"]
epsilon = 1.0
delta = 1e-5
)";

std::string policy(const TempDir& dir, const std::string& out) {
    return nlohmann::json::parse(slurp(dir.file(out + "/run.json")))["points"][0]["launch_policy"];
}

} // namespace

TEST(CpuIsa, EmulatedCpusWithoutAvx512RunTheirOwnKernelsAndGiveTheSameBits) {
#if !defined(__x86_64__)
    GTEST_SKIP() << "x86-64 only";
#endif
    if (!have_qemu()) GTEST_SKIP() << "qemu-x86_64 is not installed (scripts/deps.sh installs qemu-user)";
    const std::string built = dpr::cpu::built_isas();
    if (built.find("avx2") == std::string::npos || built.find("generic") == std::string::npos)
        GTEST_SKIP() << "this build has kernels for " << built << " only; the emulated CPUs need avx2 and generic";
    TempDir dir;
    dir.write("c.toml", kConfig);
    for (const char* lanes : {"instances", "coordinates"}) {
        const std::string set = std::string(" --quiet --set run.lanes='\"") + lanes + "\"'";
        ASSERT_EQ(run_cli(dir, "run c.toml --out native_" + std::string(lanes) + set).rc, 0);
        for (const auto& [cpu, isa] : {std::pair<std::string, std::string>{"Haswell-v4", "avx2"},
                                       std::pair<std::string, std::string>{"Nehalem", "generic"}}) {
            const std::string out = cpu + "_" + lanes;
            const auto r = run_cli(dir, "run c.toml --out " + out + set, "qemu-x86_64 -cpu " + cpu);
            ASSERT_EQ(r.rc, 0) << cpu << ": " << r.err;
            EXPECT_NE(policy(dir, out).find("cpu " + isa + ","), std::string::npos) << policy(dir, out);
            EXPECT_EQ(slurp(dir.file(out + "/summary.csv")), slurp(dir.file("native_" + std::string(lanes) + "/summary.csv"))) << cpu;
            EXPECT_EQ(slurp(dir.file(out + "/final_regret.csv")),
                      slurp(dir.file("native_" + std::string(lanes) + "/final_regret.csv")))
                << cpu;
        }
    }
}

TEST(CpuIsa, AnInstructionSetTheCpuLacksIsRefused) {
    // Meta: the emulation really hides AVX-512 from the dispatcher (CPUID), so asking for it is a usage error
    // there; natively it depends on this machine.
#if !defined(__x86_64__)
    GTEST_SKIP() << "x86-64 only";
#endif
    if (!have_qemu()) GTEST_SKIP() << "qemu-x86_64 is not installed (scripts/deps.sh installs qemu-user)";
    const std::string built = dpr::cpu::built_isas();
    if (built.find("avx2") == std::string::npos)
        GTEST_SKIP() << "this build has kernels for " << built << " only; the emulated Haswell needs avx2";
    TempDir dir;
    dir.write("c.toml", kConfig);
    const auto r = run_cli(dir, "run c.toml --out x --quiet --set run.isa='\"avx512\"'", "qemu-x86_64 -cpu Haswell-v4");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("isa"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("avx2"), std::string::npos) << r.err; // the best this CPU has
}
