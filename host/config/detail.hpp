#pragma once
// Internals of host/config shared by its .cpp files (not part of the public API): converting one TOML
// value to a key's type with range checks, and rendering numbers and values as text.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "kernels/core/params.hpp"

namespace dpr::config::detail {

/// Shortest decimal text that reads back as exactly x ("0.1", "1", "1e-300", "inf", "-inf", "nan").
std::string format_number(double x);

/// A TOML value as the user would write it: 1, -0.5, inf, "text", true, [1, 2], {...}.
std::string render(const toml::node& node);
/// render() for messages: a value longer than about 160 characters is cut after its first elements and says how
/// many values it holds ("[0, 1, 1, 2, ... (2200 values in all)]"), so that a long list is not echoed whole.
std::string render_brief(const toml::node& node);

/// Where a value was given: "file:line:column", or "--set ARG" for an override.
struct Where {
    std::string text;
    std::filesystem::path base_dir; ///< relative Path values are resolved against it
    const std::vector<std::string>* memory_paths = nullptr; ///< ConfigInputs::memory_paths: taken as given
};

/// One key's value, converted and checked against its KeySpec.
struct Converted {
    double num = 0.0;                                ///< Real, Int, Bool (0/1), Choice index
    std::shared_ptr<const std::string> str;          ///< Path (resolved) and Choice (the name)
    std::shared_ptr<const std::vector<double>> list; ///< RealList
    std::string text;                                ///< for Point::swept / settings
    std::string identity;                            ///< equal identities = the same value (merging)
    /// The string "auto" given for a key whose default is "auto" (computed by the component): read as the key left
    /// out, so that writing the documented default means what leaving it out means.
    bool automatic = false;
};

/// Whether `spec` is a number or list whose default is "auto" (the component computes it): it accepts "auto".
bool accepts_auto(const KeySpec& spec);

/// Converts `node` for `spec`, throwing ConfigError
///   "<subject> = <value> (<where>): must be <range_text(spec)><suffix>"
/// on a wrong type or out-of-range value. `subject` is "[section] key"; `qualified` is "section.key".
Converted convert(const KeySpec& spec, const toml::node& node, const std::string& subject,
                  const std::string& qualified, const Where& where, const std::string& suffix = "");

/// Text of a KeySpec's type: "real", "integer", "bool", "choice", "path", "list of reals".
const char* type_name(KeyType type);

} // namespace dpr::config::detail
