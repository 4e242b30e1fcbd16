#pragma once
// Validation of values given as text (command-line flags, the Python package's keyword arguments), shared by every
// front end so that every bad value is reported the same way: a UsageError naming the flag, its valid range and what
// was given, e.g.
//     --scale must be a finite number > 0 (got -1)
//     --n must be an integer in [1, 4294967295] (got 0)
// Values are taken as text (not as double/int) so that "abc", "1e999", "nan" or "-3" for an unsigned value get this
// message instead of a generic conversion error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dpr::api {

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

/// Output formats chosen by the file's extension.
enum class OutputFormat { Npy, Csv };
/// .npy or .csv (case-insensitive); anything else is a UsageError naming the flag.
OutputFormat output_format(const std::string& flag, const std::string& path);

} // namespace dpr::api
