#include "host/cli/app.hpp"

#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "host/cli/errors.hpp"
#include "host/io/dir.hpp"
#include "host/version.hpp"

namespace dpr::cli {

namespace {

constexpr const char* kRootFooter =
    R"TXT(Exit codes: 0 success; 2 bad input (the message names the flag and its valid range, and no
output file is left behind); 1 any other failure.

Run `dpregret <command> --help` for what a command does, its flags and an example.
Version, commit, build and GPU visibility: `dpregret info`.)TXT";

} // namespace

void format_like_root(CLI::App& app) {
    app.get_formatter()->column_width(28);
}

int run_app(int argc, const char* const* argv, const std::function<void(CLI::App&)>& add_commands) {
    try {
        CLI::App app{"dpregret: Monte Carlo simulation of differentially private online learning "
                     "(GPU and CPU).",
                     "dpregret"};
        format_like_root(app);
        app.set_version_flag("--version", build_info().version);
        app.require_subcommand(0, 1); // at most one command; none is reported below
        app.footer(kRootFooter);
        add_commands(app);
        // An unknown command name is left over as an "extra" of the root (extras are allowed on the root
        // only: the commands were created before, so they do not inherit it) and reported here with the
        // list of commands, like a bad flag value.
        app.allow_extras();
        app.callback([&app] {
            if (!app.get_subcommands().empty()) return;
            std::string names;
            for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
                names += (names.empty() ? "" : ", ") + sub->get_name();
            const std::vector<std::string> rest = app.remaining();
            if (rest.empty())
                throw UsageError("missing COMMAND: must be one of: " + names + " (see 'dpregret --help')");
            if (!rest.front().empty() && rest.front()[0] == '-')
                throw UsageError("unexpected option '" + rest.front() + "' (see 'dpregret --help')");
            throw UsageError("COMMAND must be one of: " + names + " (got " + rest.front() + ")");
        });
        try {
            app.parse(argc, argv);
        } catch (const CLI::Success& e) { // --help, --version
            return app.exit(e);
        } catch (const CLI::ParseError& e) {
            std::cerr << "dpregret: error: " << e.what() << "\n";
            // Point at the help of the (sub)command that was being parsed.
            std::string cmd = "dpregret";
            for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
                sub = sub->get_subcommands().front();
                cmd += " " + sub->get_name();
            }
            std::cerr << "Run '" << cmd << " --help' for usage.\n";
            return kExitUsage;
        }
        return kExitOk;
    } catch (const UsageError& e) {
        std::cerr << "dpregret: error: " << e.what() << "\n";
        return kExitUsage;
    } catch (const io::UnsafePathError& e) { // a link or special file where dpregret writes: the user's to remove
        std::cerr << "dpregret: error: " << e.what() << "\n";
        return kExitUsage;
    } catch (const Interrupted& e) {
        return 128 + e.signal;
    } catch (const std::exception& e) {
        std::cerr << "dpregret: error: " << e.what() << "\n";
        return kExitFailure;
    } catch (...) {
        std::cerr << "dpregret: error: unknown exception\n";
        return kExitFailure;
    }
}

} // namespace dpr::cli
