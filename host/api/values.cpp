#include "host/api/values.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "host/api/errors.hpp"

namespace dpr::api {
namespace {

std::string shown(const std::string& text) {
    return text.empty() ? "''" : text;
}

bool only_space_after(const char* p) {
    while (*p && std::isspace(static_cast<unsigned char>(*p))) ++p;
    return *p == '\0';
}

} // namespace

double parse_finite(const std::string& flag, const std::string& text) {
    const char* s = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s, &end);
    // strtod reports overflow ("1e999") as ERANGE with +-HUGE_VAL; underflow to 0 or a denormal is
    // fine (the value is still the nearest double).
    const bool ok =
        end != s && only_space_after(end) && std::isfinite(v) && !(errno == ERANGE && std::isinf(v));
    if (!ok) throw UsageError(flag + " must be a finite number (got " + shown(text) + ")");
    return v;
}

double parse_positive_finite(const std::string& flag, const std::string& text) {
    const char* s = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s, &end);
    const bool ok = end != s && only_space_after(end) && std::isfinite(v) && v > 0.0;
    if (!ok) throw UsageError(flag + " must be a finite number > 0 (got " + shown(text) + ")");
    return v;
}

std::uint64_t parse_integer(const std::string& flag, const std::string& text, std::uint64_t lo,
                            std::uint64_t hi, const std::string& why_max) {
    const auto fail = [&](bool too_big = false) -> UsageError {
        std::string msg = flag + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                          "] (got " + shown(text) + ")";
        if (too_big && !why_max.empty()) msg += ": " + why_max;
        return UsageError(msg);
    };
    std::size_t i = 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i < text.size() && text[i] == '+') ++i;
    if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) throw fail();
    std::uint64_t v = 0;
    bool overflow = false;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        const std::uint64_t d = static_cast<std::uint64_t>(text[i] - '0');
        if (v > (UINT64_MAX - d) / 10) overflow = true; // beyond 2^64: certainly out of range
        if (overflow) continue;
        v = v * 10 + d;
    }
    if (!only_space_after(text.c_str() + i)) throw fail();
    if (overflow || v > hi) throw fail(true);
    if (v < lo) throw fail();
    return v;
}

std::size_t parse_choice(const std::string& flag, const std::string& text,
                         const std::vector<std::string>& choices) {
    const auto it = std::find(choices.begin(), choices.end(), text);
    if (it != choices.end()) return static_cast<std::size_t>(it - choices.begin());
    std::string list;
    for (std::size_t i = 0; i < choices.size(); ++i) list += (i ? ", " : "") + choices[i];
    throw UsageError(flag + " must be one of: " + list + " (got " + shown(text) + ")");
}

OutputFormat output_format(const std::string& flag, const std::string& path) {
    const auto ends_with = [&](const char* ext) {
        const std::size_t n = std::char_traits<char>::length(ext);
        if (path.size() <= n) return false;
        for (std::size_t k = 0; k < n; ++k)
            if (std::tolower(static_cast<unsigned char>(path[path.size() - n + k])) != ext[k]) return false;
        const char before = path[path.size() - n - 1];
        return before != '/'; // "dir/.npy" has no file name
    };
    if (ends_with(".npy")) return OutputFormat::Npy;
    if (ends_with(".csv")) return OutputFormat::Csv;
    throw UsageError(flag + " must be a file name ending in .npy (float64 NumPy array) or .csv (got " +
                     shown(path) + ")");
}

} // namespace dpr::api
