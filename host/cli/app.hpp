#pragma once
// The root of the `dpregret` command line. Each subcommand lives in its own file host/cli/cmd_<name>.cpp
// and exposes
//     void dpr::cli::add_<name>_command(CLI::App& app);
// which adds a CLI11 subcommand to `app` and registers a callback that does the work. main.cpp lists the
// commands (one line each) and hands them to run_app(), which owns parsing and the exit-code policy:
//     0  success, or --help / --version
//     2  bad input: any CLI11 parse error, or a UsageError thrown by a command (host/cli/errors.hpp)
//     1  any other exception (I/O failure while writing results, internal error)
// Errors are printed as "dpregret: error: <message>" on stderr.
#include <functional>
#include <iosfwd>

namespace CLI {
class App;
}

namespace dpr::cli {

/// Builds the root app, lets `add_commands` register the subcommands, parses argv, runs the selected
/// command's callback and maps the outcome to an exit code. Never throws.
int run_app(int argc, const char* const* argv, const std::function<void(CLI::App&)>& add_commands);

/// Applies the help layout shared by every command (column width, footer spacing).
void format_like_root(CLI::App& app);

} // namespace dpr::cli
