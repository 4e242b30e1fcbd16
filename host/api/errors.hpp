#pragma once
// The library's errors (host/api/): what a front end catches. The CLI maps them to exit codes
// (host/cli/errors.hpp): UsageError -> 2, Interrupted -> 128 + the signal; anything else -> 1.
#include <stdexcept>

namespace dpr {

/// Bad input a user can fix by changing the command line, a key or an input file. The message names the
/// flag, key or file position and the valid range, e.g. "--scale must be a finite number > 0 (got -1)".
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// A run stopped by SIGINT/SIGTERM after cleaning up; it has already said so on stderr.
struct Interrupted : std::runtime_error {
    explicit Interrupted(int signal_number = 2) : std::runtime_error("interrupted"), signal(signal_number) {}
    int signal;
};

} // namespace dpr
