// Experiment files: parsing, --set overrides, validation and sweep expansion (docs/CONFIG.md).
#include "host/config/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include <toml++/toml.h>

#include "host/config/detail.hpp"
#include "kernels/domains/build.hpp"

namespace dpr::config {

namespace {
/// The name a setting is hashed under: a renamed key (KeySpec::alias) under its former name, so that its points keep
/// the streams they had before the rename.
std::string stream_name(const std::string& qualified, const Point& p, const ConfigInputs& in) {
    const std::size_t dot = qualified.find('.');
    const std::string sec = qualified.substr(0, dot), key = qualified.substr(dot + 1);
    const ComponentInfo* c = sec == "learner" && p.learner_index < in.learners.size() ? &in.learners[p.learner_index]
                             : sec == "adversary" && p.adversary_index < in.adversaries.size()
                                 ? &in.adversaries[p.adversary_index]
                                 : nullptr;
    const int i = c ? c->key_index(key) : -1;
    return i >= 0 && c->keys[i].alias ? sec + "." + c->keys[i].alias : qualified;
}
} // namespace

std::uint32_t point_stream_key(const Point& p, const ConfigInputs& in) {
    // FNV-1a (64-bit) of "key=value\n" over the point's settings, folded into 1 .. 2^32 - 1 (0 is the key of
    // common random numbers).
    std::uint64_t h = 0xcbf29ce484222325ull;
    const auto eat = [&](const std::string& text) {
        for (const unsigned char c : text) {
            h ^= c;
            h *= 0x100000001b3ull;
        }
    };
    for (const auto& [key, value] : p.settings) {
        eat(stream_name(key, p, in));
        eat("=");
        eat(value);
        eat("\n");
    }
    return static_cast<std::uint32_t>(1 + (h ^ (h >> 32)) % 0xFFFFFFFFull);
}

const std::vector<KeySpec>& run_keys() {
    static const std::vector<KeySpec> keys = {
        {"seed", KeyType::Int, "1", 0.0, 4294967295.0, nullptr,
         "run seed: the Philox key of every draw (docs/ARCHITECTURE.md §2); may be swept"},
        {"instances", KeyType::Int, "1000", 1.0, 4503599627370496.0, nullptr,
         "independent learner instances per point, ids 0 .. instances-1 (up to 2^52; one process runs at most "
         "2^32-1 of them: more need --shard or mpirun); cannot be swept"},
        {"rounds", KeyType::Int, "", 1.0, 4294967295.0, nullptr,
         "horizon T: rounds per instance; may be swept"},
        {"checkpoints", KeyType::Int, "16", 1.0, 1024.0, nullptr,
         "number of rounds at which regret is recorded (log-spaced, the last is T); cannot be swept"},
        {"common_random_numbers", KeyType::Bool, "true", 0.0, 1.0, nullptr,
         "true: every point uses the same noise streams (stream key 0); false: each point has its own, keyed by "
         "its resolved settings (adding, removing or reordering sweep values leaves the other points' numbers "
         "unchanged); cannot be swept"},
        {"precision", KeyType::Choice, "double", 0, 1, "double|float",
         "arithmetic of the noise, scores and weights (float: 24-bit uniforms, float32 math; cumulative losses "
         "and regret stay double; docs/RANDOMNESS.md). In float dp-ftrl-experts/-sphere/-cube, dp-mab and "
         "dp-scrible-* use lattice noise, whose report holds exactly; other private learners' reports assume exact "
         "noise and a float run warns (docs/spec/model.md §1.8); cannot be swept"},
        {"lanes", KeyType::Choice, "auto", 0, 2, "auto|instances|coordinates",
         "what the vector lanes hold: instances (small d) or the coordinates of one instance; auto decides from "
         "the learner and d (docs/RANDOMNESS.md); cannot be swept"},
        {"isa", KeyType::Choice, "auto", 0, 3, "auto|avx512|avx2|generic",
         "CPU instruction set of the kernels; auto = the best this CPU has (generic runs anywhere); cannot be "
         "swept"},
        {"team_threads", KeyType::Int, "0", 0.0, 1024.0, nullptr,
         "GPU threads per instance with coordinate lanes: 0 = auto from d, 32 (a warp), 256 or 1024 (a block); "
         "no other value; cannot be swept"},
        {"gpu_state", KeyType::Choice, "auto", 0, 3, "auto|global|shared|registers",
         "GPU: where an instance's state lives during a launch: shared = copied on chip (shared memory) for the "
         "launch's rounds, the arrays that fit; registers = a one-row state (hedge, d <= 1024, a warp per "
         "instance) in registers for the launch's rounds; global = device memory every round; auto = registers "
         "where they hold the state, else global (docs/GPU.md); the same bits either way; cannot be swept"},
    };
    return keys;
}

namespace {

using detail::Converted;
using detail::render;
using detail::render_brief;
using detail::Where;

const std::vector<std::string> kSections = {"run", "adversary", "learner"};
/// Combinations before merging; a larger sweep is almost certainly a mistake (and would not fit in memory).
constexpr std::size_t kMaxCombinations = 1000000;

enum RunKey { kSeed = 0, kInstances, kRounds, kCheckpoints, kCommonRandomNumbers, kPrecision, kLanes, kIsa, kTeamThreads, kGpuState };

/// One value of a key, with where it was given.
struct Value {
    const toml::node* node = nullptr;
    Where where;
};

/// One key that was given: its values (several for a sweep), converted for each component that declares it.
struct Axis {
    std::string section, key;
    std::vector<Value> values;
    bool swept = false;
    bool component_key = false; ///< declared by components (not a [run] or common key)
    /// converted[v][c]: value v for component c of the section (common keys: c = 0); empty where component
    /// c does not declare the key.
    std::vector<std::vector<std::optional<Converted>>> converted;

    std::string qualified() const { return section + "." + key; }
};

bool has_path_key(const ComponentInfo& c) {
    for (int i = 0; i < c.nkeys; ++i)
        if (c.keys[i].type == KeyType::Path) return true;
    return false;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
    return out;
}

bool contains(const std::vector<std::string>& items, const std::string& x) {
    return std::find(items.begin(), items.end(), x) != items.end();
}

class Loader {
  public:
    Loader(const ConfigInputs& inputs, std::string source, std::filesystem::path base_dir)
        : in_(inputs), source_(std::move(source)), base_dir_(std::move(base_dir)) {
        for (const auto& c : in_.adversaries) kind_choices_ += (kind_choices_.empty() ? "" : "|") + c.name;
        for (const auto& c : in_.learners)
            algorithm_choices_ += (algorithm_choices_.empty() ? "" : "|") + c.name;
        kind_spec_ = {"kind", KeyType::Choice, "", 0.0, 0.0, kind_choices_.c_str(), "the loss sequence"};
        algorithm_spec_ = {"algorithm",  KeyType::Choice, "", 0.0, 0.0, algorithm_choices_.c_str(),
                           "the learner"};
        d_spec_ = {"d", KeyType::Int, "", 1.0, 2147483648.0, nullptr, "number of experts / dimension"};
        sections_ = kSections;
        for (const SectionSchema& x : in_.extra_sections) sections_.push_back(x.name);
        for (std::size_t i = 0; i < sections_.size(); ++i) {
            section_list_ += (i ? ", [" : "[") + sections_[i] + "]";
            section_list_or_ += (i == 0 ? "[" : i + 1 == sections_.size() ? " or [" : ", [") + sections_[i] + "]";
        }
        per_instance_spec_ = {
            "per_instance",
            KeyType::Bool,
            "false",
            0.0,
            1.0,
            nullptr,
            "false: one loss sequence per point shared by all instances; true: one per instance"};
    }

    Config load(std::string_view text, const std::vector<std::string>& overrides) {
        try {
            root_ = toml::parse(text, source_);
        } catch (const toml::parse_error& e) {
            throw ConfigError("", position(e.source()) + ": invalid TOML: " + std::string(e.description()));
        }
        apply_aliases();
        for (const std::string& arg : overrides) apply_override(arg);
        check_sections();
        read_run();
        read_component_section(false);
        read_component_section(true);
        Config config;
        config.extra = read_extra_sections();
        config.source = source_;
        config.run = run_;
        for (const Axis& a : axes_)
            if (a.swept) config.swept_keys.push_back(a.qualified());
        config.points = expand();
        config.resolved_toml = resolved_toml();
        return config;
    }

  private:
    /// The document after --set: sections in schema order, keys in file order (overrides last), values
    /// in the shortest form that reads back exactly.
    std::string resolved_toml() const {
        std::string out;
        for (const std::string& sec : sections_) {
            const toml::table* t = section(sec);
            if (t == nullptr) continue;
            std::vector<std::pair<std::tuple<int, std::uint64_t, std::uint64_t, std::size_t>, std::string>>
                lines;
            for (const auto& [k, v] : *t) {
                const std::string key(k.str());
                const bool plain = !key.empty() && key.find_first_not_of(
                                                       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                       "0123456789_-") == std::string::npos;
                const auto& begin = k.source().begin;
                // Keys keep their place in the file (also when overridden); keys added by --set follow.
                const auto order = set_order_.find({sec, key});
                lines.push_back(
                    {{begin ? 0 : 1, begin.line, begin.column, order == set_order_.end() ? 0 : order->second},
                     (plain ? key : render(toml::value<std::string>(key))) + " = " + render(v)});
            }
            std::stable_sort(lines.begin(), lines.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            out += (out.empty() ? "[" : "\n[") + sec + "]\n";
            for (const auto& l : lines) out += l.second + "\n";
        }
        return out;
    }

    // ---- positions and subjects ----------------------------------------------------------------------
    std::string position(const toml::source_region& r) const {
        if (!r.begin) return source_;
        return source_ + ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
    }

    const std::string* set_arg(const std::string& section, const std::string& key) const {
        auto it = set_args_.find({section, key});
        return it == set_args_.end() ? nullptr : &it->second;
    }

    Where where_of(const std::string& section, const std::string& key, const toml::node& node) const {
        if (const std::string* arg = set_arg(section, key))
            return Where{"--set " + *arg + former_name_note(section, key), {}, &in_.memory_paths};
        return Where{position(node.source()) + former_name_note(section, key), base_dir_, &in_.memory_paths};
    }

    std::string key_position(const std::string& section, const toml::key& key) const {
        const std::string name(key.str());
        if (const std::string* arg = set_arg(section, name)) return "--set " + *arg + former_name_note(section, name);
        return position(key.source()) + former_name_note(section, name);
    }

    /// "; tree is the former name of mechanism" when the key was written under its former name, else "": a message
    /// names the key by its name, and the user, who wrote the other, must see that they are one key.
    std::string former_name_note(const std::string& section, const std::string& key) const {
        const auto it = written_as_.find({section, key});
        return it == written_as_.end() ? "" : "; " + it->second + " is the former name of " + key;
    }

    const toml::table* section(const std::string& name) const { return root_.get_as<toml::table>(name); }

    std::string section_position(const std::string& name) const {
        const toml::table* t = section(name);
        return t ? position(t->source()) : source_;
    }

    [[noreturn]] void missing(const std::string& section, const KeySpec& spec, const std::string& why = "",
                              const std::string& ctx = "") const {
        throw ConfigError(section + "." + spec.name,
                          "[" + section + "] " + spec.name + " (" + section_position(section) +
                              "): required key missing" + why + "; must be " + range_text(spec) + ctx);
    }

    // ---- former names of keys (KeySpec::alias) ---------------------------------------------------------
    /// The key of section `sec` whose former name is `key` (e.g. [learner] tree -> mechanism), or nullptr.
    const char* renamed_to(const std::string& sec, const std::string& key) const {
        if (sec != "adversary" && sec != "learner") return nullptr;
        for (const ComponentInfo& c : components(sec))
            for (int i = 0; i < c.nkeys; ++i)
                if (c.keys[i].alias != nullptr && key == c.keys[i].alias) return c.keys[i].name;
        return nullptr;
    }

    /// A key of the file written under its former name is read as the key (renamed in the document, keeping its
    /// position); the file giving both is refused. Runs before --set, which renames its own keys.
    void apply_aliases() {
        for (const std::string sec : {"adversary", "learner"}) {
            toml::table* t = root_.get_as<toml::table>(sec);
            if (t == nullptr) continue;
            std::vector<std::string> old_names;
            for (const auto& [k, v] : *t)
                if (renamed_to(sec, std::string(k.str()))) old_names.emplace_back(k.str());
            for (const std::string& old_name : old_names) {
                const char* name = renamed_to(sec, old_name);
                const auto old = t->find(old_name);
                if (const auto now = t->find(name); now != t->end())
                    throw ConfigError(sec + "." + name,
                                      "[" + sec + "] " + old_name + " (" + position(old->first.source()) + ") and [" +
                                          sec + "] " + name + " (" + position(now->first.source()) +
                                          ") are one key (" + old_name + " is the former name of " + name +
                                          "); give it once");
                toml::key renamed(std::string_view(name), toml::source_region(old->first.source()));
                t->insert(std::move(renamed), std::move(old->second));
                t->erase(old_name);
                written_as_[{sec, name}] = old_name;
            }
        }
    }

    // ---- --set ---------------------------------------------------------------------------------------
    static std::string trim(const std::string& s) {
        const auto b = s.find_first_not_of(" \t");
        if (b == std::string::npos) return "";
        return s.substr(b, s.find_last_not_of(" \t") - b + 1);
    }

    /// A word that is meant as a string although it is not quoted (--set adversary.kind=halving).
    static bool bare_word(const std::string& s) {
        if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_' || s[0] == '/'))
            return false;
        for (char c : s)
            if (std::isspace(static_cast<unsigned char>(c)) || std::strchr("\"'[]{},=#", c)) return false;
        return true;
    }

    void apply_override(const std::string& arg) {
        auto fail = [&](const std::string& why) { return ConfigError("", "--set " + arg + ": " + why); };
        const std::size_t eq = arg.find('=');
        const std::string lhs = trim(arg.substr(0, eq));
        const std::size_t dot = lhs.find('.');
        if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 == lhs.size() ||
            lhs.find('.', dot + 1) != std::string::npos)
            throw fail("expected SECTION.KEY=VALUE, e.g. --set learner.epsilon=0.5");
        const std::string sec = lhs.substr(0, dot), rhs = trim(arg.substr(eq + 1));
        const char* renamed = renamed_to(sec, lhs.substr(dot + 1));
        const std::string key = renamed ? std::string(renamed) : lhs.substr(dot + 1);
        if (!contains(sections_, sec)) {
            const std::string guess = did_you_mean(sec, sections_);
            throw fail("unknown section [" + sec + "]" +
                       (guess.empty() ? "" : "; did you mean [" + guess + "]?") +
                       " (sections: " + section_list_ + ")");
        }
        toml::table parsed;
        try {
            parsed = toml::parse("v = " + rhs, std::string_view("--set"));
        } catch (const toml::parse_error& e) {
            if (!bare_word(rhs))
                throw fail("cannot parse '" + rhs + "' as a TOML value (" + std::string(e.description()) +
                           ")");
            parsed = toml::table{{"v", rhs}};
        }
        toml::node* value = parsed.get("v");
        if (value == nullptr || parsed.size() != 1) throw fail("VALUE must be a single TOML value");
        toml::node* existing = root_.get(sec);
        if (existing == nullptr) root_.insert(sec, toml::table{});
        toml::table* table = root_.get_as<toml::table>(sec);
        if (table == nullptr) throw fail("[" + sec + "] in " + source_ + " is not a table");
        value->visit([&](auto&& v) { table->insert_or_assign(key, std::move(v)); });
        if (renamed) written_as_[{sec, key}] = lhs.substr(dot + 1);
        else written_as_.erase({sec, key}); // the value now comes from --set under the key's name
        set_args_[{sec, key}] = arg;
        set_order_.emplace(std::make_pair(sec, key), set_order_.size());
    }

    // ---- sections and keys ---------------------------------------------------------------------------
    const SectionSchema* extra_schema(const std::string& sec) const {
        for (const SectionSchema& x : in_.extra_sections)
            if (x.name == sec) return &x;
        return nullptr;
    }

    std::vector<std::string> common_keys(const std::string& sec) const {
        if (const SectionSchema* x = extra_schema(sec)) {
            std::vector<std::string> out;
            for (const KeySpec& k : x->keys) out.push_back(k.name);
            return out;
        }
        if (sec == "run") {
            std::vector<std::string> out;
            for (const KeySpec& k : run_keys()) out.push_back(k.name);
            return out;
        }
        if (sec == "adversary") return {"kind", "d", "per_instance"};
        return {"algorithm"};
    }

    const std::vector<ComponentInfo>& components(const std::string& sec) const {
        return sec == "learner" ? in_.learners : in_.adversaries;
    }

    /// Sections (other than `except`) in which `key` is a key of some registered component or common.
    std::vector<std::string> sections_knowing(const std::string& key, const std::string& except) const {
        std::vector<std::string> out;
        for (const std::string& sec : sections_) {
            if (sec == except) continue;
            bool known = contains(common_keys(sec), key);
            if (sec == "adversary" || sec == "learner")
                for (const auto& c : components(sec)) known = known || c.key_index(key) >= 0;
            if (known) out.push_back(sec);
        }
        return out;
    }

    void check_sections() const {
        for (const auto& [k, v] : root_) {
            const std::string name(k.str());
            const std::string where = position(k.source());
            if (contains(sections_, name)) {
                if (!v.is_table())
                    throw ConfigError(name, "[" + name + "] (" + where + "): must be a table (a [" + name +
                                                "] section header followed by its keys)");
                continue;
            }
            if (v.is_table()) {
                const std::string guess = did_you_mean(name, sections_);
                throw ConfigError(name, "[" + name + "] (" + where + "): unknown section" +
                                            (guess.empty() ? "" : "; did you mean [" + guess + "]?") +
                                            " (sections: " + section_list_ + ")");
            }
            const auto owners = sections_knowing(name, "");
            throw ConfigError(
                name, name + " (" + where + "): keys belong in a section (" + section_list_or_ + ")" +
                          (owners.empty() ? "" : "; did you mean [" + owners[0] + "] " + name + "?"));
        }
    }

    [[noreturn]] void unknown_key(const std::string& sec, const toml::key& k,
                                  const std::vector<std::string>& valid,
                                  const std::vector<std::size_t>& sweep) const {
        const std::string key(k.str());
        std::string msg = "[" + sec + "] " + key + " (" + key_position(sec, k) + "): ";
        std::vector<std::string> owners, mine;
        if (sec == "adversary" || sec == "learner") {
            for (std::size_t c = 0; c < components(sec).size(); ++c) {
                const auto& comp = components(sec)[c];
                if (comp.key_index(key) >= 0) owners.push_back("\"" + comp.name + "\"");
            }
            for (std::size_t c : sweep) mine.push_back("\"" + components(sec)[c].name + "\"");
        }
        const auto elsewhere = sections_knowing(key, sec);
        if (!owners.empty()) {
            msg += std::string("not a key of ") + (sec == "learner" ? "algorithm " : "kind ") +
                   join(mine, " or ") + " (it is a key of " + join(owners, ", ") + ")";
        } else if (!elsewhere.empty()) {
            msg += "unknown key in [" + sec + "]; did you mean [" + elsewhere[0] + "] " + key + "?";
        } else {
            const std::string guess = did_you_mean(key, valid);
            msg += guess.empty() ? "unknown key; valid keys are " + join(valid, ", ")
                                 : "unknown key; did you mean " + guess + "?";
        }
        throw ConfigError(sec + "." + key, msg);
    }

    /// The values of key `key` given as `node`: several if it is a sweep (a list; for a list-valued key a
    /// list of lists), else one.
    std::vector<Value> values_of(const std::string& sec, const std::string& key, const toml::node& node,
                                 bool list_valued, bool sweepable, const KeySpec& spec, bool& swept) const {
        const Where where = where_of(sec, key, node);
        swept = false;
        if (const toml::array* a = node.as_array()) {
            bool all_lists = !a->empty();
            for (const auto& e : *a) all_lists = all_lists && e.is_array();
            if (!list_valued || all_lists) {
                const std::string subject =
                    "[" + sec + "] " + key + " = " + render_brief(node) + " (" + where.text + "): ";
                if (!sweepable)
                    throw ConfigError(sec + "." + key, subject +
                                                           "cannot be swept (it applies to the whole run); "
                                                           "must be " +
                                                           range_text(spec));
                if (a->empty())
                    throw ConfigError(sec + "." + key,
                                      subject + "an empty list sweeps over no values; give at least one");
                swept = true;
                std::vector<Value> out;
                for (const auto& e : *a)
                    out.push_back(Value{&e, set_arg(sec, key) ? where : where_of(sec, key, e)});
                return out;
            }
        }
        return {Value{&node, where}};
    }

    Axis common_axis(const std::string& sec, const KeySpec& spec, const toml::node& node,
                     bool sweepable) const {
        Axis axis;
        axis.section = sec;
        axis.key = spec.name;
        axis.values =
            values_of(sec, spec.name, node, spec.type == KeyType::RealList, sweepable, spec, axis.swept);
        for (const Value& v : axis.values) {
            axis.converted.emplace_back();
            axis.converted.back().push_back(
                detail::convert(spec, *v.node, "[" + sec + "] " + spec.name, axis.qualified(), v.where));
        }
        return axis;
    }

    void read_run() {
        const toml::table* t = section("run");
        if (t)
            for (const auto& [k, v] : *t)
                if (!contains(common_keys("run"), std::string(k.str())))
                    unknown_key("run", k, common_keys("run"), {});
        const auto& keys = run_keys();
        for (int i = 0; i < static_cast<int>(keys.size()); ++i) {
            const toml::node* node = t ? t->get(keys[i].name) : nullptr;
            if (node == nullptr) {
                if (*keys[i].default_text == '\0') missing("run", keys[i]);
                continue;
            }
            const bool whole_run = i != kSeed && i != kRounds;
            Axis axis = common_axis("run", keys[i], *node, !whole_run);
            const double x = axis.converted[0][0]->num;
            if (i == kInstances)
                run_.instances = static_cast<std::uint64_t>(x);
            else if (i == kCheckpoints)
                run_.checkpoints = static_cast<std::uint32_t>(x);
            else if (i == kCommonRandomNumbers)
                run_.common_random_numbers = x != 0.0;
            else if (i == kPrecision)
                run_.precision = static_cast<int>(x) == 1 ? "float" : "double";
            else if (i == kLanes)
                run_.lanes = static_cast<int>(x) == 1 ? "instances" : static_cast<int>(x) == 2 ? "coordinates" : "auto";
            else if (i == kIsa)
                run_.isa = static_cast<int>(x) == 1 ? "avx512" : static_cast<int>(x) == 2 ? "avx2" : static_cast<int>(x) == 3 ? "generic" : "auto";
            else if (i == kTeamThreads)
                run_.team_threads = static_cast<unsigned>(x);
            else if (i == kGpuState)
                run_.gpu_state = static_cast<int>(x) == 1   ? "global"
                                 : static_cast<int>(x) == 2 ? "shared"
                                 : static_cast<int>(x) == 3 ? "registers"
                                                            : "auto";
            else
                axes_.push_back(std::move(axis));
        }
    }

    /// The extra sections' keys: like [run]'s (unknown keys, types, ranges), none sweepable.
    std::vector<SectionValues> read_extra_sections() const {
        std::vector<SectionValues> out;
        for (const SectionSchema& x : in_.extra_sections) {
            SectionValues sv;
            sv.name = x.name;
            const toml::table* t = section(x.name);
            const std::vector<std::string> names = common_keys(x.name);
            if (t)
                for (const auto& [k, v] : *t)
                    if (!contains(names, std::string(k.str()))) unknown_key(x.name, k, names, {});
            for (int i = 0; i < static_cast<int>(x.keys.size()) && i < kMaxKeys; ++i) {
                const KeySpec& spec = x.keys[i];
                const toml::node* node = t ? t->get(spec.name) : nullptr;
                if (node == nullptr) {
                    if (*spec.default_text == '\0') missing(x.name, spec);
                    sv.settings.emplace_back(x.name + "." + spec.name, spec.default_text);
                    continue;
                }
                const Axis axis = common_axis(x.name, spec, *node, /*sweepable=*/false);
                const Converted& c = *axis.converted[0][0];
                if (c.automatic) { // "auto" for an auto key: the key left out
                    sv.settings.emplace_back(x.name + "." + spec.name, spec.default_text);
                    continue;
                }
                sv.values.num[i] = c.num;
                sv.values.given[i] = true;
                if (c.str) {
                    sv.values.str[i] = c.str->c_str();
                    sv.storage.push_back(c.str);
                }
                if (c.list) {
                    sv.values.list[i] = c.list->data();
                    sv.values.list_size[i] = c.list->size();
                    sv.storage.push_back(c.list);
                }
                sv.settings.emplace_back(x.name + "." + spec.name, c.text);
            }
            out.push_back(std::move(sv));
        }
        return out;
    }

    void read_component_section(bool learner) {
        const std::string sec = learner ? "learner" : "adversary";
        const auto& comps = components(sec);
        const KeySpec& selector = learner ? algorithm_spec_ : kind_spec_;
        const toml::table* t = section(sec);
        const toml::node* sel = t ? t->get(selector.name) : nullptr;
        if (sel == nullptr) missing(sec, selector);
        Axis sel_axis = common_axis(sec, selector, *sel, true);
        std::vector<std::size_t>& sweep = learner ? learner_sweep_ : adversary_sweep_;
        for (const auto& c : sel_axis.converted) {
            const auto idx = static_cast<std::size_t>(c[0]->num);
            if (std::find(sweep.begin(), sweep.end(), idx) == sweep.end()) sweep.push_back(idx);
        }
        // Valid keys: the common ones, then each swept component's in declaration order.
        std::vector<std::string> valid = common_keys(sec);
        const std::size_t ncommon = valid.size();
        for (std::size_t c : sweep)
            for (int i = 0; i < comps[c].nkeys; ++i)
                if (!contains(valid, comps[c].keys[i].name)) valid.push_back(comps[c].keys[i].name);
        if (t)
            for (const auto& [k, v] : *t)
                if (!contains(valid, std::string(k.str()))) unknown_key(sec, k, valid, sweep);

        (learner ? learner_axis_ : adversary_axis_) = axes_.size();
        axes_.push_back(std::move(sel_axis));
        if (!learner) {
            for (const KeySpec* spec : {&d_spec_, &per_instance_spec_})
                if (const toml::node* node = t->get(spec->name))
                    axes_.push_back(common_axis(sec, *spec, *node, true));
        }
        for (std::size_t k = ncommon; k < valid.size(); ++k) {
            const toml::node* node = t->get(valid[k]);
            if (node == nullptr) continue;
            bool list_valued = false;
            for (std::size_t c : sweep) {
                const int i = comps[c].key_index(valid[k]);
                list_valued = list_valued || (i >= 0 && comps[c].keys[i].type == KeyType::RealList);
            }
            std::size_t declaring = 0;
            for (std::size_t c : sweep) declaring += comps[c].key_index(valid[k]) >= 0 ? 1 : 0;
            Axis axis;
            axis.section = sec;
            axis.key = valid[k];
            axis.component_key = true;
            // The first declaring component's spec only matters for the message of an unsweepable key.
            axis.values = values_of(sec, valid[k], *node, list_valued, true, kind_spec_, axis.swept);
            for (const Value& v : axis.values) {
                axis.converted.emplace_back(comps.size());
                for (std::size_t c : sweep) {
                    const int i = comps[c].key_index(valid[k]);
                    if (i < 0) continue;
                    const std::string suffix =
                        declaring > 1 ? std::string(" for ") + selector.name + " \"" + comps[c].name + "\""
                                      : "";
                    axis.converted.back()[c] =
                        detail::convert(comps[c].keys[i], *v.node, "[" + sec + "] " + valid[k],
                                        axis.qualified(), v.where, suffix);
                }
            }
            axes_.push_back(std::move(axis));
        }
    }

    // ---- expansion -----------------------------------------------------------------------------------
    int find_axis(const std::string& sec, const std::string& key) const {
        for (std::size_t j = 0; j < axes_.size(); ++j)
            if (axes_[j].section == sec && axes_[j].key == key) return static_cast<int>(j);
        return -1;
    }

    std::size_t component_of(const Axis& axis, std::size_t ai, std::size_t li) const {
        return axis.section == "learner" ? li : ai;
    }

    /// The converted value of axis j at this combination, or nullptr if the key does not apply to it.
    const Converted* at(std::size_t j, const std::vector<std::size_t>& idx, std::size_t ai,
                        std::size_t li) const {
        const Axis& a = axes_[j];
        const auto& row = a.converted[idx[j]];
        const auto& c = a.component_key ? row[component_of(a, ai, li)] : row[0];
        return c ? &*c : nullptr;
    }

    std::vector<Point> expand() {
        std::size_t total = 1;
        for (const Axis& a : axes_) {
            if (total > kMaxCombinations / a.values.size())
                throw ConfigError("", "the sweep has more than " + std::to_string(kMaxCombinations) +
                                          " combinations; split it into several runs");
            total *= a.values.size();
        }
        std::vector<Point> points;
        std::unordered_set<std::string> seen;
        std::vector<std::size_t> idx(axes_.size(), 0);
        for (std::size_t n = 0; n < total; ++n) {
            const auto ai =
                static_cast<std::size_t>(axes_[adversary_axis_].converted[idx[adversary_axis_]][0]->num);
            const auto li =
                static_cast<std::size_t>(axes_[learner_axis_].converted[idx[learner_axis_]][0]->num);
            std::string signature;
            for (std::size_t j = 0; j < axes_.size(); ++j)
                if (const Converted* c = at(j, idx, ai, li))
                    signature += std::to_string(j) + "=" + c->identity + "\n";
            if (seen.insert(signature).second) points.push_back(build_point(idx, ai, li));
            for (std::size_t j = axes_.size(); j-- > 0;) { // odometer: the last axis varies fastest
                if (++idx[j] < axes_[j].values.size()) break;
                idx[j] = 0;
            }
        }
        std::map<std::uint32_t, std::size_t> streams;
        for (std::size_t p = 0; p < points.size(); ++p) {
            points[p].index = p;
            points[p].stream = run_.common_random_numbers ? 0u : point_stream_key(points[p], in_);
            if (run_.common_random_numbers) continue;
            const auto [it, fresh] = streams.emplace(points[p].stream, p);
            if (!fresh)
                throw ConfigError("run.common_random_numbers",
                                  "[run] common_random_numbers = false: points " + std::to_string(it->second) + " and " +
                                      std::to_string(p) + " hash to the same stream key " +
                                      std::to_string(points[p].stream) +
                                      " (a 1 in 4e9 coincidence per pair); run them in separate sweeps");
        }
        return points;
    }

    /// "[section] key = value (where)" for a key of this combination, or "[section] key (default: x)".
    std::string subject(const std::string& sec, const std::string& key, const std::vector<std::size_t>& idx,
                        std::size_t ai, std::size_t li, const std::string& default_text) const {
        const int j = find_axis(sec, key);
        if (j >= 0 && at(j, idx, ai, li)) {
            const Value& v = axes_[j].values[idx[j]];
            return "[" + sec + "] " + key + " = " + render_brief(*v.node) + " (" + v.where.text + ")";
        }
        return "[" + sec + "] " + key + (default_text.empty() ? "" : " (default: " + default_text + ")");
    }

    /// " (sweep point: learner.epsilon = 0.1, ...)" naming the swept values of this combination.
    std::string context(const std::vector<std::size_t>& idx, std::size_t ai, std::size_t li) const {
        std::vector<std::string> parts;
        for (std::size_t j = 0; j < axes_.size(); ++j)
            if (axes_[j].swept)
                if (const Converted* c = at(j, idx, ai, li))
                    parts.push_back(axes_[j].qualified() + " = " + c->text);
        return parts.empty() ? "" : " (sweep point: " + join(parts, ", ") + ")";
    }

    void fill(const std::string& sec, std::size_t ci, const std::vector<std::size_t>& idx, std::size_t ai,
              std::size_t li, KeyValues& kv, Point& point) const {
        const ComponentInfo& comp = components(sec)[ci];
        for (int i = 0; i < comp.nkeys; ++i) {
            const KeySpec& spec = comp.keys[i];
            const int j = find_axis(sec, spec.name);
            const Converted* c = j >= 0 ? at(j, idx, ai, li) : nullptr;
            if (c == nullptr || c->automatic) { // "auto" given for an auto key: the key left out
                if (spec.default_text == nullptr || *spec.default_text == '\0')
                    missing(sec, spec,
                            std::string(" (") + (sec == "learner" ? "algorithm" : "kind") + " \"" +
                                comp.name + "\" requires it)",
                            context(idx, ai, li));
                point.settings.emplace_back(sec + "." + spec.name, spec.default_text);
                continue;
            }
            kv.num[i] = c->num;
            kv.given[i] = true;
            if (c->str) {
                kv.str[i] = c->str->c_str();
                point.storage.push_back(c->str);
            }
            if (c->list) {
                kv.list[i] = c->list->data();
                kv.list_size[i] = c->list->size();
                point.storage.push_back(c->list);
            }
            point.settings.emplace_back(sec + "." + spec.name, c->text);
        }
    }

    /// Runs a file hook, reporting its failure against the path key.
    template <class F>
    auto call_hook(F&& f, const std::string& path_subject, const std::string& ctx) const -> decltype(f()) {
        try {
            return f();
        } catch (const ConfigError&) {
            throw;
        } catch (const std::exception& e) {
            throw ConfigError("adversary.path", path_subject + ": " + e.what() + ctx);
        }
    }

    void set_dimension(Point& p, const std::vector<std::size_t>& idx, std::size_t ai, std::size_t li) {
        const ComponentInfo& adv = in_.adversaries[ai];
        const int dj = find_axis("adversary", "d");
        const Converted* given = dj >= 0 ? at(dj, idx, ai, li) : nullptr;
        int path_key = -1;
        for (int i = 0; i < adv.nkeys && path_key < 0; ++i)
            if (adv.keys[i].type == KeyType::Path) path_key = i;
        // A graph set's dimension is its number of edges (kernels/domains/build.hpp).
        const std::uint32_t implied = adv.dimension ? adv.dimension(p.adversary_values) : 0u;
        if (path_key < 0 && implied != 0) {
            if (implied == domains::kInvalidDimension) { // check() names the key that is wrong
                p.problem.d = given ? static_cast<std::uint32_t>(given->num) : 0u;
                return;
            }
            if (given && given->num != static_cast<double>(implied))
                throw ConfigError("adversary.d", subject("adversary", "d", idx, ai, li, "") +
                                                     ": does not match the graph, which has " +
                                                     std::to_string(implied) +
                                                     " edges (d is the number of edges of a graph set; leave it out)" +
                                                     context(idx, ai, li));
            p.problem.d = implied;
            return;
        }
        if (path_key < 0) {
            if (given == nullptr) missing("adversary", d_spec_, "", context(idx, ai, li));
            p.problem.d = static_cast<std::uint32_t>(given->num);
            return;
        }
        const std::string path = p.adversary_values.str[path_key];
        const std::string path_subject = subject("adversary", adv.keys[path_key].name, idx, ai, li, "");
        const std::string ctx = context(idx, ai, li);
        p.problem.d = given ? static_cast<std::uint32_t>(given->num) : 0u;
        if (in_.file_dimension) {
            auto it = dimension_cache_.find(path);
            if (it == dimension_cache_.end())
                it =
                    dimension_cache_
                        .emplace(path, call_hook([&] { return in_.file_dimension(path); }, path_subject, ctx))
                        .first;
            if (given && given->num != static_cast<double>(it->second))
                throw ConfigError("adversary.d", subject("adversary", "d", idx, ai, li, "") +
                                                     ": does not match the file, which has d = " +
                                                     std::to_string(it->second) + " (" + path_subject + ")" +
                                                     ctx);
            p.problem.d = it->second;
        }
        if (in_.file_values) {
            const auto cache_key = std::make_tuple(path, p.problem.d, p.problem.T, adv.geometry);
            auto it = values_cache_.find(cache_key);
            if (it == values_cache_.end())
                it = values_cache_
                         .emplace(cache_key,
                                  call_hook([&] { return in_.file_values(path, p.problem, adv.geometry); },
                                            path_subject, ctx))
                         .first;
            if (it->second.data != nullptr) {
                p.adversary_values.list[path_key] = it->second.data;
                p.adversary_values.list_size[path_key] = it->second.size;
                if (it->second.owner) p.storage.push_back(it->second.owner);
            }
        }
    }

    void run_check(const std::string& sec, std::size_t ci, const KeyValues& kv, Point& p,
                   const std::vector<std::size_t>& idx, std::size_t ai, std::size_t li) const {
        const ComponentInfo& comp = components(sec)[ci];
        if (comp.check == nullptr) return;
        Diagnostic diag;
        const bool ok = comp.check(kv, p.problem, diag);
        const bool reported = diag.key != nullptr || diag.message[0] != '\0';
        if (ok && !reported) return;
        std::string who;
        const std::string selector = sec == "learner" ? "algorithm" : "kind";
        if (diag.key == nullptr) {
            who = subject(sec, selector, idx, ai, li, "");
        } else {
            const std::string key = diag.key;
            const int i = comp.key_index(key);
            if (i >= 0)
                who = subject(sec, key, idx, ai, li, comp.keys[i].default_text);
            else if (key == "d")
                who = subject("adversary", "d", idx, ai, li, std::to_string(p.problem.d));
            else if (key == "per_instance")
                who = subject("adversary", key, idx, ai, li, "false");
            else if (key == "rounds" || key == "seed")
                who = subject("run", key, idx, ai, li, key == "seed" ? "1" : "");
            else
                who = "[" + sec + "] " + key;
        }
        const std::string text =
            who + ": " + (diag.message[0] ? diag.message : "rejected by " + comp.name) + context(idx, ai, li);
        if (!ok && !diag.warning_only)
            throw ConfigError(diag.key ? sec + "." + diag.key : sec + "." + selector, text);
        p.warnings.push_back(text);
    }

    Point build_point(const std::vector<std::size_t>& idx, std::size_t ai, std::size_t li) {
        Point p;
        p.adversary = in_.adversaries[ai].name;
        p.adversary_index = ai;
        p.learner = in_.learners[li].name;
        p.learner_index = li;
        for (std::size_t j = 0; j < axes_.size(); ++j) {
            const Converted* c = at(j, idx, ai, li);
            if (axes_[j].swept) p.swept.emplace_back(axes_[j].qualified(), c ? c->text : "");
        }
        auto number = [&](const char* sec, const char* key, double fallback) {
            const int j = find_axis(sec, key);
            const Converted* c = j >= 0 ? at(j, idx, ai, li) : nullptr;
            return c ? c->num : fallback;
        };
        p.problem.seed = static_cast<std::uint32_t>(number("run", "seed", 1.0));
        p.problem.T = static_cast<std::uint64_t>(number("run", "rounds", 0.0));
        p.problem.float_precision = run_.precision == "float";
        p.per_instance = number("adversary", "per_instance", 0.0) != 0.0;
        p.settings.emplace_back("run.seed", std::to_string(p.problem.seed));
        p.settings.emplace_back("run.rounds", std::to_string(p.problem.T));
        p.settings.emplace_back("adversary.kind", p.adversary);

        fill("adversary", ai, idx, ai, li, p.adversary_values, p);
        set_dimension(p, idx, ai, li);
        p.settings.insert(p.settings.begin() + 3, {"adversary.d", std::to_string(p.problem.d)});
        p.settings.insert(p.settings.begin() + 4,
                          {"adversary.per_instance", p.per_instance ? "true" : "false"});
        p.settings.emplace_back("learner.algorithm", p.learner);
        fill("learner", li, idx, ai, li, p.learner_values, p);

        const ComponentInfo& adv = in_.adversaries[ai];
        const ComponentInfo& lrn = in_.learners[li];
        if (adv.geometry != lrn.geometry) {
            // A loss file can be read for every loss set: name the file kind of the learner's.
            std::string hint;
            if (has_path_key(adv))
                for (const ComponentInfo& c : in_.adversaries)
                    if (c.geometry == lrn.geometry && has_path_key(c))
                        hint += (hint.empty() ? "; for a loss file of this set use kind = \"" : " or \"") + c.name +
                                "\"";
            throw ConfigError("learner.algorithm",
                              subject("learner", "algorithm", idx, ai, li, "") + ": plays on the " +
                                  geometry_name(lrn.geometry) + ", but " +
                                  subject("adversary", "kind", idx, ai, li, "") + " draws losses for the " +
                                  geometry_name(adv.geometry) + "; pair components of the same geometry" + hint +
                                  context(idx, ai, li));
        }
        if ((lrn.loss_families & loss_bit(adv.loss)) == 0)
            throw ConfigError("learner.algorithm",
                              subject("learner", "algorithm", idx, ai, li, "") + " is not charged on " +
                                  loss_family_name(adv.loss) + ", which " +
                                  subject("adversary", "kind", idx, ai, li, "") + " draws" +
                                  (adv.loss == LossFamily::Linear
                                       ? std::string("; it takes the convex linear-model losses of the "
                                                     "squared-realizable / absolute-realizable adversaries")
                                       : std::string("; pair it with a learner for convex losses "
                                                     "(dp-ftrl-smooth) or a linear-loss adversary")) +
                                  " (docs/ADVERSARIES.md)" + context(idx, ai, li));
        p.problem.loss = adv.loss;
        if (adv.shared_only && p.per_instance)
            throw ConfigError(
                "adversary.per_instance",
                subject("adversary", "per_instance", idx, ai, li, "") + ": kind \"" + adv.name +
                    "\" has one loss sequence shared by all instances; per_instance must be false" +
                    context(idx, ai, li));
        run_check("adversary", ai, p.adversary_values, p, idx, ai, li);
        if (adv.domain) { // the decision set the adversary's keys name, for the learner (Problem::domain)
            auto dom = std::make_shared<domains::Domain>();
            Diagnostic diag;
            if (!adv.domain(p.adversary_values, p.problem.d, *dom, diag))
                throw ConfigError("adversary." + std::string(diag.key ? diag.key : "set"),
                                  subject("adversary", diag.key ? diag.key : "set", idx, ai, li, "") + ": " +
                                      diag.message + context(idx, ai, li));
            p.problem.domain = dom.get();
            p.storage.push_back(std::move(dom));
        }
        run_check("learner", li, p.learner_values, p, idx, ai, li);
        if (run_.lanes == "instances" && !lrn.instance_lanes)
            p.warnings.push_back("[run] lanes = \"instances\": " + lrn.name +
                                 " runs scalar code per instance (no lane-parallel round), so this point runs with "
                                 "coordinate lanes (run.json launch_policy says what ran)" +
                                 context(idx, ai, li));
        return p;
    }

    const ConfigInputs& in_;
    std::string source_;
    std::filesystem::path base_dir_;
    toml::table root_;
    std::map<std::pair<std::string, std::string>, std::string>
        set_args_; ///< (section, key) -> --set argument
    std::map<std::pair<std::string, std::string>, std::size_t> set_order_; ///< (section, key) -> first --set
    /// (section, key) -> the former name (KeySpec::alias) the value was written under, in the file or in --set.
    std::map<std::pair<std::string, std::string>, std::string> written_as_;
    std::string kind_choices_, algorithm_choices_;
    std::vector<std::string> sections_; ///< kSections, then the extra sections
    std::string section_list_;          ///< "[run], [adversary], [learner]" (and the extra ones)
    std::string section_list_or_;       ///< "[run], [adversary] or [learner]"
    KeySpec kind_spec_{}, algorithm_spec_{}, d_spec_{}, per_instance_spec_{};
    RunSettings run_;
    std::vector<Axis> axes_;
    std::size_t adversary_axis_ = 0, learner_axis_ = 0;
    std::vector<std::size_t> adversary_sweep_, learner_sweep_; ///< swept components, first appearance order
    std::map<std::string, std::uint32_t> dimension_cache_;
    std::map<std::tuple<std::string, std::uint32_t, std::uint64_t, Geometry>, LossValues> values_cache_;
};

} // namespace

Config parse_config(std::string_view toml_text, const std::string& source_name,
                    const std::vector<std::string>& overrides, const ConfigInputs& inputs) {
    Loader loader(inputs, source_name, std::filesystem::path(source_name).parent_path());
    return loader.load(toml_text, overrides);
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides,
                   const ConfigInputs& inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw ConfigError("", "cannot read config file " + path + ": it is a directory (give a .toml file)");
    std::ifstream file(path, std::ios::binary);
    if (!file) throw ConfigError("", "cannot read config file " + path + ": " + std::strerror(errno));
    std::ostringstream text;
    text << file.rdbuf();
    return parse_config(text.str(), path, overrides, inputs);
}

} // namespace dpr::config
