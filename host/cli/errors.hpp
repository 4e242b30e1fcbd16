#pragma once
// Errors a user can fix by changing the command line or an input file (docs/ARCHITECTURE.md §6): main() prints
// "dpregret: error: <what>" on stderr and exits with code 2, as it does for CLI11's own parse errors.
// Anything else that escapes a command (an I/O failure while writing results, a bug) exits with 1.
//
// The message should name the flag, key or file position and the valid range, e.g.
//     --scale must be a finite number > 0 (got -1)
#include "host/api/errors.hpp"

namespace dpr::cli {

using dpr::UsageError;
/// Exit code 128 + the signal (130 for SIGINT, 143 for SIGTERM), the shell's convention.
using dpr::Interrupted;

/// Exit codes of the `dpregret` executable.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1; ///< a run failed (I/O error, internal error)
inline constexpr int kExitUsage = 2;   ///< bad input: flags, config keys, input files
inline constexpr int kExitInterrupted = 130; ///< stopped by SIGINT (128 + 2); SIGTERM gives 143 (128 + 15)

} // namespace dpr::cli
