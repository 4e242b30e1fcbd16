// One key's value: type and range checks against its KeySpec, the text of valid ranges, and the key
// tables of --help (docs/CONFIG.md "Values").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "host/config/config.hpp"
#include "host/config/detail.hpp"

namespace dpr::config {
namespace detail {

std::string format_number(double x) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    char buf[40];
    int precision = 1;
    for (; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, x);
        if (std::strtod(buf, nullptr) == x) break;
    }
    // %g switches to an exponent once it exceeds the precision: write 10 and 4294967295 out in full,
    // 1e10 and 1e-5 with an exponent.
    const int exponent = x == 0 ? 0 : static_cast<int>(std::floor(std::log10(std::fabs(x))));
    if (exponent >= precision && exponent < 10) std::snprintf(buf, sizeof buf, "%.*g", exponent + 1, x);
    // "1e+06" -> "1e6", "1e-07" -> "1e-7": the exponent as a person writes it.
    std::string s = buf;
    const std::size_t e = s.find('e');
    if (e != std::string::npos) {
        std::string mant = s.substr(0, e), exp = s.substr(e + 1);
        std::string sign;
        if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
            if (exp[0] == '-') sign = "-";
            exp.erase(0, 1);
        }
        while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
        s = mant + "e" + sign + exp;
    }
    return s;
}

namespace {
std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string integer_text(double x) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.0f", x);
    return buf;
}

std::vector<std::string> split_choices(const char* choices) {
    std::vector<std::string> out;
    if (choices == nullptr || *choices == '\0') return out;
    std::string cur;
    for (const char* p = choices; *p; ++p) {
        if (*p == '|') {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += *p;
        }
    }
    out.push_back(cur);
    return out;
}

/// "(0, inf]" / "[1, 1024]": the interval of a Real, Int or RealList key.
std::string interval(const KeySpec& spec) {
    const bool integer = spec.type == KeyType::Int;
    auto number = [&](double x) { return integer && std::isfinite(x) ? integer_text(x) : format_number(x); };
    std::string lo = (spec.min_exclusive || spec.min == -kInf) ? "(" : "[";
    lo += number(spec.min);
    // +inf itself is a valid Real (or list element) when max is +inf, so the interval is closed there.
    std::string hi = number(spec.max) + ((spec.max == kInf && integer) || spec.max_exclusive ? ")" : "]");
    return lo + ", " + hi;
}

bool in_range(const KeySpec& spec, double x) {
    if (std::isnan(x)) return false;
    if (std::isinf(x) && !(x > 0 && spec.max == kInf && spec.type != KeyType::Int)) return false;
    if (x < spec.min || x > spec.max) return false;
    if (spec.min_exclusive && x == spec.min) return false;
    if (spec.max_exclusive && x == spec.max) return false;
    return true;
}

/// A TOML number (or the string "inf") as a double; false if the node is not one.
bool number_of(const toml::node& node, double& x) {
    if (auto v = node.as_integer()) {
        x = static_cast<double>(v->get());
        return true;
    }
    if (auto v = node.as_floating_point()) {
        x = v->get();
        return true;
    }
    if (auto v = node.as_string()) {
        if (v->get() == "inf" || v->get() == "+inf") {
            x = kInf;
            return true;
        }
    }
    return false;
}
} // namespace

std::string render_brief(const toml::node& node) {
    std::string full = render(node);
    if (full.size() <= 160) return full;
    if (auto a = node.as_array()) {
        std::string out = "[";
        for (std::size_t i = 0; i < a->size() && out.size() < 120; ++i) out += (i ? ", " : "") + render(*a->get(i));
        return out + ", ... (" + std::to_string(a->size()) + " values in all)]";
    }
    return full.substr(0, 120) + "... (" + std::to_string(full.size()) + " characters in all)";
}

std::string render(const toml::node& node) {
    if (auto v = node.as_integer()) return std::to_string(v->get());
    if (auto v = node.as_floating_point()) return format_number(v->get());
    if (auto v = node.as_string()) return quote(v->get());
    if (auto v = node.as_boolean()) return v->get() ? "true" : "false";
    if (auto a = node.as_array()) {
        std::string out = "[";
        for (std::size_t i = 0; i < a->size(); ++i) out += (i ? ", " : "") + render(*a->get(i));
        return out + "]";
    }
    if (auto t = node.as_table()) {
        std::string out = "{";
        bool first = true;
        for (const auto& [k, v] : *t) {
            out += (first ? "" : ", ") + std::string(k.str()) + " = " + render(v);
            first = false;
        }
        return out + "}";
    }
    std::ostringstream os; // dates and times
    node.visit([&](const auto& v) { os << v; });
    return os.str();
}

const char* type_name(KeyType type) {
    switch (type) {
    case KeyType::Real: return "real";
    case KeyType::Int: return "integer";
    case KeyType::Bool: return "bool";
    case KeyType::Choice: return "choice";
    case KeyType::Path: return "path";
    case KeyType::RealList: return "list of reals";
    }
    return "?";
}

bool accepts_auto(const KeySpec& spec) {
    return (spec.type == KeyType::Real || spec.type == KeyType::Int || spec.type == KeyType::RealList) &&
           spec.default_text != nullptr && std::string(spec.default_text) == "auto";
}

Converted convert(const KeySpec& spec, const toml::node& node, const std::string& subject,
                  const std::string& qualified, const Where& where, const std::string& suffix) {
    auto fail = [&](const std::string& why) -> ConfigError {
        return ConfigError(qualified, subject + " = " + render_brief(node) + " (" + where.text + "): " + why);
    };
    Converted c;
    // "auto" for a key whose default is auto is the default itself (docs/CONFIG.md "Values"); any other string for such a
    // key says that "auto" is accepted too.
    const auto text = node.as_string();
    if (accepts_auto(spec) && text && text->get() == "auto") {
        c.text = c.identity = "auto";
        c.automatic = true;
        return c;
    }
    const std::string must = "must be " + range_text(spec) + (accepts_auto(spec) && text ? " or \"auto\"" : "");
    switch (spec.type) {
    case KeyType::Real: {
        double x = 0;
        if (!number_of(node, x) || !in_range(spec, x)) throw fail(must + suffix);
        c.num = x;
        c.text = format_number(x);
        break;
    }
    case KeyType::Int: {
        double x = 0;
        bool ok = false;
        if (auto v = node.as_integer()) {
            x = static_cast<double>(v->get());
            ok = true;
        } else if (auto f = node.as_floating_point()) { // 1e6 is a float in TOML: accept integral ones
            x = f->get();
            ok = std::isfinite(x) && std::floor(x) == x;
        }
        if (!ok || !in_range(spec, x)) throw fail(must + suffix);
        c.num = x;
        c.text = integer_text(x);
        break;
    }
    case KeyType::Bool: {
        auto v = node.as_boolean();
        if (!v) throw fail(must + suffix);
        c.num = v->get() ? 1.0 : 0.0;
        c.text = v->get() ? "true" : "false";
        break;
    }
    case KeyType::Choice: {
        const std::vector<std::string> names = split_choices(spec.choices);
        auto v = node.as_string();
        if (!v) throw fail(must + suffix);
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (names[i] == v->get()) {
                c.num = static_cast<double>(i);
                c.str = std::make_shared<const std::string>(names[i]);
                c.text = names[i];
            }
        }
        if (!c.str) {
            const std::string guess = did_you_mean(v->get(), names);
            throw fail(must + suffix + (guess.empty() ? "" : "; did you mean \"" + guess + "\"?"));
        }
        break;
    }
    case KeyType::Path: {
        auto v = node.as_string();
        if (!v || v->get().empty()) throw fail(must + suffix);
        if (where.memory_paths != nullptr && std::find(where.memory_paths->begin(), where.memory_paths->end(),
                                                       v->get()) != where.memory_paths->end()) {
            c.str = std::make_shared<const std::string>(v->get()); // an array in memory: no file to look for
            c.text = v->get();
            c.identity = v->get();
            break;
        }
        std::filesystem::path p(v->get());
        if (p.is_relative() && !where.base_dir.empty()) p = where.base_dir / p;
        p = std::filesystem::absolute(p).lexically_normal();
        std::error_code ec;
        const std::filesystem::file_status st = std::filesystem::status(p, ec);
        if (std::filesystem::is_directory(st)) throw fail("is a directory, not a file: " + p.string());
        if (!std::filesystem::exists(st)) throw fail("no such file: " + p.string());
        if (!std::filesystem::is_regular_file(st)) throw fail("not a regular file: " + p.string());
        c.str = std::make_shared<const std::string>(p.string());
        c.text = v->get();
        c.identity = p.string();
        break;
    }
    case KeyType::RealList: {
        auto a = node.as_array();
        if (!a) throw fail(must + suffix);
        auto values = std::make_shared<std::vector<double>>();
        c.text = "[";
        for (std::size_t i = 0; i < a->size(); ++i) {
            double x = 0;
            if (!number_of(*a->get(i), x) || !in_range(spec, x))
                throw fail(must + suffix + " (element " + std::to_string(i + 1) + " is " +
                           render(*a->get(i)) + ")");
            values->push_back(x);
            c.text += (i ? ", " : "") + format_number(x);
        }
        c.text += "]";
        c.list = std::move(values);
        break;
    }
    }
    if (c.identity.empty()) c.identity = c.text;
    return c;
}

} // namespace detail

std::string range_text(const KeySpec& spec) {
    switch (spec.type) {
    case KeyType::Real:
        return "a number in " + detail::interval(spec);
    case KeyType::Int:
        return "an integer in " + detail::interval(spec);
    case KeyType::Bool:
        return "true or false";
    case KeyType::Choice: {
        const auto names = detail::split_choices(spec.choices);
        if (names.empty()) return "a string";
        std::string out = "one of ";
        for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", \"" : "\"") + names[i] + "\"";
        return out;
    }
    case KeyType::Path:
        return "the path of a file (a string)";
    case KeyType::RealList:
        return "a list of numbers in " + detail::interval(spec);
    }
    return "?";
}

namespace {
std::string short_range(const KeySpec& spec) {
    switch (spec.type) {
    case KeyType::Real:
    case KeyType::Int:
        return detail::interval(spec);
    case KeyType::Bool:
        return "true|false";
    case KeyType::Choice:
        return spec.choices ? spec.choices : "";
    case KeyType::Path:
        return "file";
    case KeyType::RealList:
        return "list in " + detail::interval(spec);
    }
    return "";
}

std::string key_table(const KeySpec* keys, int n) {
    if (n == 0) return "  (no keys of its own)\n";
    std::vector<std::vector<std::string>> rows = {{"key", "type", "default", "valid", "meaning"}};
    for (int i = 0; i < n; ++i) {
        const KeySpec& k = keys[i];
        const std::string def =
            (k.default_text == nullptr || *k.default_text == '\0') ? "required" : k.default_text;
        std::string doc = k.doc ? k.doc : "";
        if (k.alias) doc += std::string(" (former name: ") + k.alias + ", still accepted)";
        rows.push_back({k.name, detail::type_name(k.type), def, short_range(k), doc});
    }
    std::size_t width[4] = {0, 0, 0, 0};
    for (const auto& r : rows)
        for (int c = 0; c < 4; ++c) width[c] = std::max(width[c], r[c].size());
    std::string out;
    for (const auto& r : rows) {
        std::string line = " ";
        for (int c = 0; c < 4; ++c) line += " " + r[c] + std::string(width[c] - r[c].size() + 1, ' ');
        line += " " + r[4];
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}
} // namespace

std::string describe_keys(const ComponentInfo& component) {
    const bool learner = component.section == "learner";
    // Components of the convex linear-model loss families (kernels/core/sets.hpp) say which losses they take/draw.
    std::string losses;
    if (learner && component.loss_families != loss_bit(LossFamily::Linear)) {
        for (LossFamily f : {LossFamily::Linear, LossFamily::Squared, LossFamily::Absolute, LossFamily::Affine,
                             LossFamily::Distance})
            if (component.loss_families & loss_bit(f)) losses += (losses.empty() ? "" : " or ") + std::string(loss_family_name(f));
        losses = "; charged on " + losses;
    } else if (!learner && component.loss != LossFamily::Linear) {
        losses = std::string("; draws ") + loss_family_name(component.loss) +
                 (component.loss == LossFamily::Distance ? ", rows (c_t, 0)" : ", rows (a_t, b_t)");
    }
    std::string out = "[" + component.section + "] " + (learner ? "algorithm" : "kind") + " = \"" +
                      component.name + "\"  (" + (learner ? "decision set: " : "loss set: ") +
                      geometry_name(component.geometry) + losses +
                      (component.shared_only ? "; per_instance = false only" : "") + ")\n";
    return out + key_table(component.keys, component.nkeys);
}

std::string describe_run_keys() {
    const auto& keys = run_keys();
    return "[run]\n" + key_table(keys.data(), static_cast<int>(keys.size()));
}

} // namespace dpr::config
