#pragma once
// Experiment files (docs/CONFIG.md): read a TOML file, apply `--set section.key=VALUE` overrides,
// validate every key against the [run] schema, the common [adversary]/[learner] keys and the keys the
// components declare (kernels/core/params.hpp), and expand sweeps into config points.
//
//   [run]        seed, instances, rounds (= T), checkpoints, common_random_numbers, precision, lanes, isa,
//                team_threads, gpu_state
//   [adversary]  kind, d, per_instance, and the keys of the chosen kind(s)
//   [learner]    algorithm, and the keys of the chosen algorithm(s)
//
// A list value is a sweep; the run is the Cartesian product of all sweeps, one Point per combination
// (for a KeyType::RealList key only a list of lists is a sweep). `algorithm` and `kind` may be swept:
// a key is then valid if some swept component declares it, is dropped from the points whose component
// does not, and points that become identical are merged.
//
// Every bad input throws ConfigError, whose message names the key, the value, where it was given
// (file:line:column, or the --set argument) and the valid range:
//     [learner] epsilon = -1 (config.toml:7:11): must be a number in (0, inf]
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/config/component_info.hpp"
#include "kernels/core/params.hpp"

namespace dpr::config {

/// Bad input in an experiment file or a --set override. what() is the complete message without a
/// prefix; the CLI prints "error: " + what() and exits with code 2 (docs/ARCHITECTURE.md §6).
class ConfigError : public std::runtime_error {
  public:
    ConfigError(std::string key, const std::string& message)
        : std::runtime_error(message), key_(std::move(key)) {}
    /// The key the message is about, "section.key" ("" for errors that concern no single key).
    const std::string& key() const { return key_; }

  private:
    std::string key_;
};

/// Settings of the whole run, which cannot be swept.
struct RunSettings {
    std::uint64_t instances = 1000;    ///< [run] instances: independent learner instances per point
    std::uint32_t checkpoints = 16;    ///< [run] checkpoints: rounds at which regret is recorded
    bool common_random_numbers = true; ///< [run] common_random_numbers (see Point::stream)
    std::string precision = "double";  ///< [run] precision: "double" or "float"
    std::string lanes = "auto";        ///< [run] lanes: "auto", "instances", "coordinates"
    std::string isa = "auto";          ///< [run] isa: "auto", "avx512", "avx2", "generic"
    unsigned team_threads = 0;         ///< [run] team_threads (GPU, coordinate lanes); 0 = auto
    std::string gpu_state = "auto";    ///< [run] gpu_state (GPU): "auto", "global", "shared", "registers"
};

/// One combination of a sweep: everything the engine needs to run one config point.
///
/// Point is freely copyable and movable. The strings and lists that the raw pointers in
/// learner_values / adversary_values (KeyValues::str, KeyValues::list) point into are immutable heap
/// objects owned through shared_ptr in `storage`, shared by all copies, so the pointers stay valid as
/// long as any copy of the Point lives. Do not write to those KeyValues' pointers.
struct Point {
    std::size_t index = 0;           ///< position in Config::points
    std::uint32_t stream = 0;        ///< RNG stream key: 0 for every point with common random numbers,
                                     ///< point_stream_key() without (docs/ARCHITECTURE.md §2)
    std::string learner;             ///< [learner] algorithm
    std::size_t learner_index = 0;   ///< its position in ConfigInputs::learners (= TypeList position)
    std::string adversary;           ///< [adversary] kind
    std::size_t adversary_index = 0; ///< its position in ConfigInputs::adversaries
    Problem problem;                 ///< d ([adversary] d or the file's), T ([run] rounds), seed ([run] seed)
    bool per_instance = false;       ///< [adversary] per_instance
    KeyValues learner_values;        ///< the learner's keys, indexed like its kKeys
    KeyValues adversary_values;      ///< the adversary's keys, indexed like its kKeys
    std::vector<std::string> warnings; ///< check() diagnostics marked warning_only, formatted like errors
    /// (key, value as text) for every key in Config::swept_keys, in that order; the text is "" where
    /// the key does not apply to this point (a learner key its algorithm does not declare).
    std::vector<std::pair<std::string, std::string>> swept;
    /// (key, value as text) for every key that applies to this point, in schema order: the given value,
    /// or for a key left out its default text ("auto" = computed by the component's resolve()).
    std::vector<std::pair<std::string, std::string>> settings;
    std::vector<std::shared_ptr<const void>> storage; ///< owns what KeyValues::str / ::list point into
};

/// A section of keys beyond [run], [adversary] and [learner] that one command adds (e.g. [audit] of `dpregret
/// audit`): a fixed schema, validated like [run] (unknown keys, types, ranges, positions), never swept.
struct SectionSchema {
    std::string name;          ///< "audit"
    std::vector<KeySpec> keys; ///< the KeySpec strings must outlive the load (static tables)
};

/// The values of an extra section, indexed like its schema's keys.
struct SectionValues {
    std::string name;
    KeyValues values;
    /// (section.key, value as text) for every key: the given value or its default text.
    std::vector<std::pair<std::string, std::string>> settings;
    std::vector<std::shared_ptr<const void>> storage; ///< owns what values.str / values.list point into
};

struct Config {
    std::string source; ///< the file name as given (parse_config: its source_name)
    RunSettings run;
    /// "section.key" of every swept key, in schema order: [run], [adversary] (kind, d, per_instance, then
    /// the swept kinds' keys in declaration order), [learner] (algorithm, then the algorithms' keys).
    std::vector<std::string> swept_keys;
    /// Nested loops over swept_keys (the last varies fastest), after merging points that are identical
    /// once the keys their component does not declare are dropped.
    std::vector<Point> points;
    /// The document after --set overrides as TOML: sections in schema order, keys in file order (keys
    /// added by --set after them), values in their shortest exact form. Reads back to the same points.
    std::string resolved_toml;
    /// One entry per ConfigInputs::extra_sections, in that order (defaults where the file has no such section).
    std::vector<SectionValues> extra;
};

/// The values file_values() gives for a path: `size` doubles at `data`, kept alive by `owner` (null when the
/// caller keeps them alive for as long as the Config is used: an array held in memory).
struct LossValues {
    std::shared_ptr<const void> owner;
    const double* data = nullptr;
    std::size_t size = 0;
};

/// What the config is validated against. learners/adversaries come from describe_all() over the
/// registries, or from small tables in tests.
struct ConfigInputs {
    std::vector<ComponentInfo> learners;
    std::vector<ComponentInfo> adversaries;
    /// For an adversary kind with a KeyType::Path key: the number of experts d read from the file
    /// (the path is resolved, see docs/CONFIG.md). Then [adversary] d may be left out; if it is given it
    /// must agree. Empty: d is taken from [adversary] d, or 0 when left out (the caller fills it in).
    /// May throw; the message is reported against the path key.
    std::function<std::uint32_t(const std::string& path)> file_dimension;
    /// Optional: the values of that file (row-major), passed to the adversary in KeyValues::list of its
    /// Path key with list_size = LossValues::size (e.g. the `file` adversary's T x d loss matrix). Called
    /// with the point's Problem once d is known and with the adversary's loss set, which every row must lie
    /// in; results are cached per (path, d, T, loss set). May throw.
    std::function<LossValues(const std::string& path, const Problem&, Geometry loss_set)> file_values;
    /// Path values that name no file but a matrix the caller holds in memory (the Python package's arrays,
    /// docs/PYTHON.md): accepted as given, without looking for a file; file_dimension and file_values answer
    /// for them.
    std::vector<std::string> memory_paths;
    /// Sections a command adds to the three above ([audit]); a file with such a section is refused by the
    /// commands that do not name it.
    std::vector<SectionSchema> extra_sections;
};

/// Version of how points get their stream keys, in run.json as `point_stream_keys`: 1 = point index + 1 (the first
/// contract), 2 = point_stream_key() (without common random numbers).
inline constexpr int kPointStreamKeys = 2;

/// The stream key of a point without common random numbers: a hash of its resolved settings (Point::settings,
/// every key that applies to it, given or default), in 1 .. 2^32 - 1, so that a point's numbers depend on what
/// it is, never on where it stands in a sweep. Two points of one sweep with the same key are refused. A renamed key
/// (KeySpec::alias) is hashed under its former name, so that renaming a key changes no point's stream.
std::uint32_t point_stream_key(const Point& p, const ConfigInputs& inputs);

/// Reads the TOML file at `path`, applies `overrides` ("section.key=VALUE", VALUE a TOML value; a bare
/// word is taken as a string) in order, validates and expands. Relative Path values in the file are
/// resolved against the file's directory, those from --set against the working directory.
Config load_config(const std::string& path, const std::vector<std::string>& overrides,
                   const ConfigInputs& inputs);

/// As load_config, for TOML text; positions in messages read "<source_name>:line:column".
Config parse_config(std::string_view toml_text, const std::string& source_name,
                    const std::vector<std::string>& overrides, const ConfigInputs& inputs);

/// The [run] schema: seed, instances, rounds, checkpoints, common_random_numbers.
const std::vector<KeySpec>& run_keys();

/// "a number in (0, inf]", "an integer in [1, 1024]", "true or false", "one of \"a\", \"b\"", ...:
/// what a value of this key must be (the text after "must be" in error messages).
std::string range_text(const KeySpec& spec);

/// The keys of a component as an aligned table (name, type, default, valid range, doc) for --help and
/// docs, headed by "[section] algorithm|kind = "name"" and its geometry.
std::string describe_keys(const ComponentInfo& component);
/// The same table for the [run] keys.
std::string describe_run_keys();

/// Levenshtein edit distance (insertions, deletions, substitutions; case-sensitive).
std::size_t levenshtein(std::string_view a, std::string_view b);
/// The candidate closest to `word` (case-insensitive Levenshtein) if it is close enough to be a likely
/// typo (distance <= max(2, |word| / 3) and < |word|), else "". Ties go to the earlier candidate.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

} // namespace dpr::config
