#pragma once
// Validation of command-line values, shared by all subcommands so that every bad value is reported the
// same way: a UsageError naming the flag, its valid range and what was given, e.g.
//     --scale must be a finite number > 0 (got -1)
//     --n must be an integer in [1, 4294967295] (got 0)
// Flags are declared as strings in CLI11 (not as double/int) so that a value such as "abc", "1e999",
// "nan" or "-3" for an unsigned flag gets this message instead of a generic conversion error.
#include <cstdint>
#include <string>
#include <vector>

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

/// A finite number > 0.
double parse_positive_finite(const std::string& flag, const std::string& text);
/// Any finite number.
double parse_finite(const std::string& flag, const std::string& text);
/// A base-10 integer in [lo, hi]. `why_max` (if not empty) is appended to the message when the value is
/// above hi: the reason for the upper limit (e.g. a 32-bit RNG counter word).
std::uint64_t parse_integer(const std::string& flag, const std::string& text, std::uint64_t lo,
                            std::uint64_t hi, const std::string& why_max = "");
/// One of `choices` (exact, case-sensitive); returns its index.
std::size_t parse_choice(const std::string& flag, const std::string& text,
                         const std::vector<std::string>& choices);

/// --threads: an integer in [1, 4096]; "" = every core of this machine.
unsigned parse_threads(const std::string& text);

/// The current UTC time formatted by strftime (run directory names, run.json started_at).
std::string utc_now(const char* fmt);

/// Output formats chosen by the file's extension.
enum class OutputFormat { Npy, Csv };
/// .npy or .csv (case-insensitive); anything else is a UsageError naming the flag.
OutputFormat output_format(const std::string& flag, const std::string& path);

} // namespace dpr::cli
