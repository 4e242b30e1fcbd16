#pragma once
// Validation of command-line values, shared by all subcommands so that every bad value is reported the
// same way (host/api/values.hpp: a UsageError naming the flag, its valid range and what was given). Flags are
// declared as strings in CLI11 (not as double/int) so that a value such as "abc", "1e999", "nan" or "-3" for an
// unsigned flag gets that message instead of a generic conversion error.
#include <cstdint>
#include <string>
#include <vector>

#include "host/api/values.hpp"

namespace CLI {
class App;
class Option;
}

namespace dpr::cli {

/// The --memory-limit option of `run`, `audit` and `merge` ("refuse a(n) <what> whose estimated peak memory ...";
/// parsed by api::parse_memory_limit).
void add_memory_limit_option(CLI::App* cmd, std::string& into, const std::string& what);

/// Throws UsageError("missing <flag>: must be <range>") if the option was not given.
void require_given(const CLI::Option* option, const std::string& range);

// The values' parsers are the library's (host/api/values.hpp): every front end reports a bad value alike.
using api::parse_choice;
using api::parse_finite;
using api::parse_integer;
using api::parse_positive_finite;

/// --threads: an integer in [1, 4096]; "" = every core of this machine.
unsigned parse_threads(const std::string& text);

/// The current UTC time formatted by strftime (run directory names, run.json started_at).
std::string utc_now(const char* fmt);

using api::OutputFormat;
using api::output_format;

} // namespace dpr::cli
