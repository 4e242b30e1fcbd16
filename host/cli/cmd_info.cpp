// `dpregret info`: what this binary is and what it can run on. The same facts go into every run.json.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "host/backend/cuda_api.hpp"
#include "host/cpu/cpu_isa.hpp"
#include "host/mpi/world.hpp"
#include "host/version.hpp"

namespace dpr::cli {

namespace {

constexpr const char* kInfoFooter = R"TXT(Prints, one per line:
  version     the project version (CMakeLists.txt)
  commit      the git commit the build was configured from
  build       whether the CUDA backend was compiled in, and for which GPU architectures (sm_XY)
  compiler    the host compiler
  cpu         the instruction sets the CPU kernels were compiled for (CMake option DPREGRET_CPU_ISAS) and
              the one this CPU runs ([run] isa = "auto")
  rng         the random number generator: counter-based Philox4x32-10, keyed by (seed, stream), with
              counters that say what a draw is for, so results do not depend on threads or GPUs
  gpu         whether a CUDA device is visible now: its name, compute capability and memory, or the
              reason none can be used (no driver, no device, built without CUDA)
Without a visible GPU every command still runs, on CPU threads, with the same results.

Examples:
  dpregret info
  dpregret info --json | python3 -c "import json,sys; print(json.load(sys.stdin)['gpu']['available'])")TXT";

/// The ISA this CPU runs, or null with the reason where this build has none for it.
std::optional<std::string> cpu_isa(std::string* why) {
    try {
        return std::string(cpu::isa_name(cpu::best_isa()));
    } catch (const std::runtime_error& e) {
        *why = e.what();
        return std::nullopt;
    }
}

nlohmann::json info_json(const BuildInfo& b, const cuda_api::DeviceInfo& d) {
    std::string why;
    const std::optional<std::string> isa = cpu_isa(&why);
    nlohmann::json gpu = {{"available", d.device_count > 0}, {"device_count", d.device_count}};
    if (d.device_count > 0) {
        gpu["name"] = d.name;
        gpu["compute_capability"] = fmt::format("{}.{}", d.sm_major, d.sm_minor);
        gpu["memory_gib"] = d.memory_gib;
    } else {
        gpu["reason"] = d.message;
    }
    return {{"version", b.version},
            {"git_commit", b.git_commit},
            {"cuda_compiled", b.cuda_compiled},
            {"cuda_archs", b.cuda_archs},
            {"compiler", b.compiler},
            {"rng", b.rng},
            {"mpi", mpi::built_with_mpi()},
            {"cpu_kernels", cpu::built_isas()},
            {"cpu_isa", isa ? nlohmann::json(*isa) : nlohmann::json(nullptr)},
            {"gpu", gpu}};
}

void print_info(std::ostream& os, const BuildInfo& b, const cuda_api::DeviceInfo& d) {
    os << "dpregret " << b.version << "\n";
    os << fmt::format("  {:<10} {}\n", "commit", b.git_commit);
    os << fmt::format("  {:<10} {}\n", "build",
                      b.cuda_compiled ? fmt::format("CUDA backend compiled (architectures: {})",
                                                    b.cuda_archs.empty() ? "default" : b.cuda_archs)
                                      : std::string("CPU only (built without CUDA)"));
    os << fmt::format("  {:<10} {}\n", "compiler", b.compiler);
    std::string why;
    const std::optional<std::string> isa = cpu_isa(&why);
    os << fmt::format("  {:<10} kernels for {}; {}\n", "cpu", cpu::built_isas(),
                      isa ? "this CPU runs " + *isa : "none runs here: " + why);
    os << fmt::format("  {:<10} {}\n", "rng", b.rng);
    os << fmt::format("  {:<10} {}\n", "mpi",
                      mpi::built_with_mpi() ? "built in: mpirun -n R dpregret run ... splits a run over R ranks"
                                            : "not built (no MPI found at configure time; --shard and merge still work)");
    if (d.device_count > 0) {
        os << fmt::format("  {:<10} {} (compute capability {}.{}, {:.1f} GiB){}\n", "gpu", d.name, d.sm_major,
                          d.sm_minor, d.memory_gib,
                          d.device_count > 1 ? fmt::format("; {} devices visible", d.device_count) : "");
    } else {
        os << fmt::format("  {:<10} none: {}\n", "gpu", d.message);
    }
}

} // namespace

void add_info_command(CLI::App& app) {
    CLI::App* sub = app.add_subcommand("info", "Print the version, git commit, build (CUDA or not), RNG and "
                                               "whether a GPU is visible.");
    sub->footer(kInfoFooter);
    auto json = std::make_shared<bool>(false);
    sub->add_flag("--json", *json, "Print the same facts as one JSON object");
    sub->callback([json] {
        const BuildInfo& b = build_info();
        const cuda_api::DeviceInfo d = cuda_api::query_devices();
        if (*json)
            std::cout << info_json(b, d).dump(2) << "\n";
        else
            print_info(std::cout, b, d);
        std::cout.flush();
        if (!std::cout) throw std::runtime_error("cannot write to standard output");
    });
}

} // namespace dpr::cli
