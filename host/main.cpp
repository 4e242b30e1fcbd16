// The `dpregret` executable: one CLI11 app with one subcommand per file host/cli/cmd_<name>.cpp.
//
// To add a command `foo`: write host/cli/cmd_foo.cpp defining
//     void dpr::cli::add_foo_command(CLI::App& app);
// (it adds the subcommand, its flags and its callback; see host/cli/cmd_info.cpp for a small one) and
// add X(foo) to DPREGRET_COMMANDS below. Parsing, error messages and exit codes live in run_app()
// (host/cli/app.hpp). Commands appear in `dpregret --help` in this order.
#include <CLI/CLI.hpp>

#include <csignal>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "host/cli/app.hpp"
#include "host/mpi/world.hpp"

#define DPREGRET_COMMANDS(X) X(run) X(merge) X(audit) X(audit_samples) X(sample) X(info)

namespace dpr::cli {
#define DPREGRET_DECLARE_COMMAND(name) void add_##name##_command(CLI::App& app);
DPREGRET_COMMANDS(DPREGRET_DECLARE_COMMAND)
#undef DPREGRET_DECLARE_COMMAND
} // namespace dpr::cli

int main(int argc, char** argv) {
    // A reader that goes away (`dpregret audit a.toml 2>&1 | head -1`, a closed ssh session, a log pipe) must not
    // end the job: with SIGPIPE's default action the next progress line or closing line would kill the process,
    // losing hours of simulation with no message. Ignored, such a write fails with EPIPE instead; the progress
    // reporter then stops printing (host/progress/progress.hpp) and the results are written all the same. The
    // Python interpreter ignores SIGPIPE likewise, so the package gets the same behaviour.
    std::signal(SIGPIPE, SIG_IGN);
#if defined(__GLIBC__)
    // An audit runs its trials in batches ([audit] batch), each allocating and freeing the same few-MB engine and
    // result buffers. glibc served some of them with mmap and gave them back at every free, so each batch
    // page-faulted and zeroed its memory anew (dp_ftrl_experts_tight at 1e7 trials per side: 741k page faults,
    // 7.4 s of CPU). Kept on the heap below 64 MiB and not trimmed below 64 MiB, a batch reuses the last one's
    // pages: 13k page faults, 5.3 s, peak RSS 57 -> 59 MB (docs/BENCHMARKS.md "Audits: trials per second").
    // Larger buffers are still mapped and unmapped as before.
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
    dpr::mpi::init(&argc, &argv); // only under an MPI launcher (host/mpi/world.hpp)
    const int rc = dpr::cli::run_app(argc, argv, [](CLI::App& app) {
#define DPREGRET_ADD_COMMAND(name) dpr::cli::add_##name##_command(app);
        DPREGRET_COMMANDS(DPREGRET_ADD_COMMAND)
#undef DPREGRET_ADD_COMMAND
    });
    dpr::mpi::finalize();
    return rc;
}
