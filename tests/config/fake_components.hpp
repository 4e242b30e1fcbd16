#pragma once
// Small stand-ins for learners and adversaries, declaring keys the way real components do
// (kernels/core/params.hpp), so that the config layer is tested independently of the real registries.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "host/config/component_info.hpp"
#include "host/config/config.hpp"
#include "kernels/core/type_list.hpp"

namespace dpr::config::test {

struct FakeHedge {
    static constexpr const char* kName = "hedge";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr KeySpec kKeys[] = {
        {"eta", KeyType::Real, "auto", 0.0, kInf, "", "learning rate", true},
    };
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
};

struct FakeDpFtrl {
    static constexpr const char* kName = "dp-ftrl-experts";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr KeySpec kKeys[] = {
        {"epsilon", KeyType::Real, "", 0.0, kInf, "", "privacy parameter", true},
        {"delta", KeyType::Real, "0", 0.0, 1.0, "", "privacy parameter delta", false, /*max_exclusive=*/true},
        {"eta", KeyType::Real, "auto", 0.0, kInf, "", "learning rate", true},
        {"tree", KeyType::Choice, "padded", 0, 1, "padded|binary", "tree variant"},
        {"noise", KeyType::Choice, "laplace", 0, 2, "laplace|gaussian|none", "node noise"},
    };
    static constexpr int kEpsilon = key_index(kKeys, "epsilon");
    static constexpr int kDelta = key_index(kKeys, "delta");
    static constexpr int kNoise = key_index(kKeys, "noise");
    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (kv.get(kNoise, 0) == 1 && !(kv.get(kDelta, 0) > 0))
            return diag.fail("delta", "noise = gaussian needs delta > 0");
        if (kv.num[kEpsilon] > 100 && std::isfinite(kv.num[kEpsilon])) {
            diag.warning_only = true;
            diag.fail("epsilon", "epsilon = %g gives almost no privacy", kv.num[kEpsilon]);
            return true;
        }
        if (pb.T < 2) return diag.fail("rounds", "needs at least 2 rounds");
        return true;
    }
};

struct FakeOgdBall {
    static constexpr const char* kName = "ogd-ball";
    static constexpr Geometry kGeometry = Geometry::Ball;
    static constexpr KeySpec kKeys[] = {
        {"eta", KeyType::Real, "auto", 0.0, kInf, "", "step size", true},
    };
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
};

struct FakeBernoulli {
    static constexpr const char* kName = "bernoulli";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr bool kSharedOnly = false;
    static constexpr KeySpec kKeys[] = {
        {"p", KeyType::Real, "0.5", 0.0, 1.0, nullptr, "loss probability"},
        {"gap", KeyType::Real, "0.1", 0.0, 1.0, nullptr, "gap of the best expert"},
        {"best", KeyType::Int, "auto", 0.0, 4294967294.0, nullptr, "index of the best expert"},
    };
    static constexpr int kP = key_index(kKeys, "p");
    static constexpr int kGap = key_index(kKeys, "gap");
    static bool check(const KeyValues& kv, const Problem&, Diagnostic& diag) {
        const double p = kv.get(kP, 0.5), gap = kv.get(kGap, 0.1);
        if (gap > p) return diag.fail("gap", "gap = %g exceeds p = %g", gap, p);
        return true;
    }
};

struct FakeSwitching {
    static constexpr const char* kName = "switching";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr KeySpec kKeys[] = {
        {"switch_at", KeyType::RealList, "auto", 1.0, 4294967295.0, nullptr, "switch rounds"},
        {"p", KeyType::Real, "0.5", 0.0, 1.0, nullptr, "loss probability"},
    };
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
};

struct FakeFile {
    static constexpr const char* kName = "file";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr bool kSharedOnly = true;
    static constexpr KeySpec kKeys[] = {
        {"path", KeyType::Path, "", 0.0, 1.0, nullptr, "loss matrix file"},
    };
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
};

struct FakeBallAdversary {
    static constexpr const char* kName = "ball-adv";
    static constexpr Geometry kGeometry = Geometry::Ball;
    static constexpr std::array<KeySpec, 0> kKeys{};
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
};

using FakeLearners = TypeList<FakeHedge, FakeDpFtrl, FakeOgdBall>;
using FakeAdversaries = TypeList<FakeBernoulli, FakeSwitching, FakeFile, FakeBallAdversary>;

inline ConfigInputs fake_inputs() {
    ConfigInputs in;
    in.learners = describe_all<FakeLearners>("learner");
    in.adversaries = describe_all<FakeAdversaries>("adversary");
    return in;
}

/// Parses `text` as "config.toml" with the fake components.
inline Config parse(const std::string& text, const std::vector<std::string>& sets = {},
                    const ConfigInputs& in = fake_inputs()) {
    return parse_config(text, "config.toml", sets, in);
}

/// The message of the ConfigError that parsing throws, or "(no error)".
inline std::string error_of(const std::string& text, const std::vector<std::string>& sets = {},
                            const ConfigInputs& in = fake_inputs()) {
    try {
        parse(text, sets, in);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "(no error)";
}

/// A minimal valid config; `extra_adversary` / `extra_learner` lines are appended to those sections.
inline std::string minimal(const std::string& extra_run = "", const std::string& extra_adversary = "",
                           const std::string& extra_learner = "", const std::string& algorithm = "\"hedge\"",
                           const std::string& kind = "\"bernoulli\"") {
    return "[run]\nrounds = 100\n" + extra_run + "[adversary]\nkind = " + kind + "\nd = 4\n" +
           extra_adversary + "[learner]\nalgorithm = " + algorithm + "\n" + extra_learner;
}

} // namespace dpr::config::test
