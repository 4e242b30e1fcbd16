#pragma once
// How a learner or adversary declares its configuration keys, so that the host's config layer can
// read, validate and document them generically and adding a component never touches the config code.
//
// A component (kernels/learners/*.hpp, kernels/adversaries/*.hpp) provides
//   static constexpr const char* kName;                 the TOML value of `algorithm` / `kind`
//   static constexpr KeySpec kKeys[] = {...};            its own keys (besides the common ones)
//   static Params resolve(const KeyValues&, const Problem&);      defaults filled in, no checks
//   static bool check(const KeyValues&, const Problem&, Diagnostic&);  consistency; false = error
// The host fills KeyValues in the order of kKeys, having checked each key's type and range already.
// Nothing here allocates or throws, so these headers compile unchanged under nvcc.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include "kernels/core/sets.hpp"

namespace dpr {

namespace domains {
struct Domain; // kernels/domains/domain.hpp
}

enum class KeyType : std::uint8_t {
    Real,   ///< finite double in [min, max]; "inf" allowed only if max is +inf
    Int,    ///< integer in [min, max]
    Bool,
    Choice, ///< one of `choices` ("a|b|c"); KeyValues::num holds its index
    Path,   ///< a file path (host reads the file); KeyValues::str holds it
    RealList, ///< a list of reals (e.g. switching rounds); host passes it via KeyValues::list
};

inline constexpr double kInf = std::numeric_limits<double>::infinity();

struct KeySpec {
    const char* name;
    KeyType type;
    const char* default_text; ///< "" = required; "auto" = computed by resolve() (doc says how)
    double min;
    double max;
    const char* choices;      ///< for Choice: "padded|binary"
    const char* doc;          ///< one line: meaning, units, formula of the default
    bool min_exclusive = false; ///< the valid range is (min, max] rather than [min, max]
    bool max_exclusive = false; ///< the valid range is [min, max) (or (min, max))
    /// A former name of the key, still accepted in experiment files and --set (the config layer reads it as `name`;
    /// outputs, --list-keys and messages use `name`). nullptr: none.
    const char* alias = nullptr;
};

inline constexpr int kMaxKeys = 24;

/// The size of the problem as a component's Params carry it (p.d, p.T in device code): the Params of the
/// learners and adversaries derive from it, and resolve() copies it from the Problem with dims(pb).
struct Dims {
    std::uint32_t d; ///< number of experts / dimension
    std::uint64_t T; ///< rounds
};

/// Values of a component's keys, indexed like its kKeys. `given[i]` is false when the user left key
/// i out (then resolve() uses the default).
struct KeyValues {
    double num[kMaxKeys] = {};
    bool given[kMaxKeys] = {};
    const char* str[kMaxKeys] = {};
    const double* list[kMaxKeys] = {};
    std::uint64_t list_size[kMaxKeys] = {}; ///< 64-bit: a T x d loss file may hold more than 2^32 values

    double get(int i, double fallback) const { return given[i] ? num[i] : fallback; }
};

/// What every component may depend on: the settings common to all points' components
/// ([adversary] d, [run] rounds and seed). Privacy parameters are the private learners' own keys.
struct Problem {
    std::uint32_t d = 0;         ///< number of experts / dimension
    std::uint64_t T = 0;         ///< rounds
    std::uint32_t seed = 0;
    LossFamily loss = LossFamily::Linear; ///< the adversary's loss family (kernels/core/sets.hpp)
    /// Geometry::Polytope: the decision set the adversary's keys name (kernels/domains/build.hpp), built by the
    /// config layer and owned by the point; null elsewhere. A Polytope learner given none (a test's bare
    /// Problem) plays on the adversaries' default set, the simplex of dimension d.
    const domains::Domain* domain = nullptr;
    /// [run] precision = "float": the learners' lanes are float. A learner may choose its noise by it (lattice noise
    /// is the default of AS17's tree learners in float, docs/spec/model.md §1.8).
    bool float_precision = false;
};

/// The Dims of a component's Params: Problem's d and T.
inline constexpr Dims dims(const Problem& pb) { return Dims{pb.d, pb.T}; }

/// A consistency error (or warning) found by check(): which key, and why.
struct Diagnostic {
    const char* key = nullptr;
    char message[256] = {};
    bool warning_only = false;   ///< the value is accepted; the host prints and records the warning

    /// Fills the diagnostic as an error (a warning sets warning_only after it): an error found after a warning
    /// is never taken for one.
    template <class... A>
    bool fail(const char* k, const char* fmt, A... args) {
        key = k;
        warning_only = false;
        std::snprintf(message, sizeof message, fmt, args...);
        return false;
    }
};

/// Index of key `name` in a spec array (-1 if absent); constexpr so components can name their keys.
template <std::size_t N>
constexpr int key_index(const KeySpec* keys, const char* name) {
    for (std::size_t i = 0; i < N; ++i) {
        const char* a = keys[i].name;
        const char* b = name;
        while (*a && *a == *b) ++a, ++b;
        if (*a == *b) return static_cast<int>(i);
    }
    return -1;
}
template <std::size_t N>
constexpr int key_index(const KeySpec (&keys)[N], const char* name) {
    return key_index<N>(&keys[0], name);
}
template <std::size_t N>
constexpr int key_index(const std::array<KeySpec, N>& keys, const char* name) {
    return key_index<N>(keys.data(), name);
}

} // namespace dpr
