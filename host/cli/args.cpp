#include "host/cli/args.hpp"

#include <algorithm>
#include <ctime>
#include <thread>

#include <CLI/CLI.hpp>

#include "host/cli/errors.hpp"

namespace dpr::cli {


void require_given(const CLI::Option* option, const std::string& range) {
    if (option->count() == 0) throw UsageError("missing " + option->get_name() + ": must be " + range);
}

unsigned parse_threads(const std::string& text) {
    if (text.empty()) return std::max(1u, std::thread::hardware_concurrency());
    return static_cast<unsigned>(parse_integer("--threads", text, 1, 4096));
}

std::string utc_now(const char* fmt) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, fmt, &tm);
    return buf;
}

void add_memory_limit_option(CLI::App* cmd, std::string& into, const std::string& what) {
    cmd->add_option("--memory-limit", into,
                    "refuse " + what + " whose estimated peak memory exceeds this: auto (default: the memory "
                    "available now), none, or a size such as 16G");
}

} // namespace dpr::cli
