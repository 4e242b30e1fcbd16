// The privacy a user asks for (issue 48; docs/spec/model.md §1.5): with its default keys, every private learner of
// the registry (every learner with an epsilon key) reports a guarantee (run.json's privacy: the (eps, delta) its
// noise provably gives) of at most the requested epsilon and delta, at eps in {0.1, 1, 10}, two horizons and two
// dimensions. The calibrations that reproduce the papers stay available and report what they give: "paper" on the
// symmetric sets of dp-ftrl-cube/sphere and dp-scrible-ball/cube is exactly 2 eps (the factor-2 caveat), and DP-FTPL's
// strict Gaussian calibration stays within the request at eps >= 1 too (it gave 1.2 eps at eps = 10).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "host/api/run.hpp"

namespace dpr::test {
namespace {

/// An adversary whose loss set the learner takes (its decision set; squared losses for dp-ftrl-smooth).
std::string adversary_for(const config::ComponentInfo& l) {
    switch (l.geometry) {
    case Geometry::Simplex: return "bernoulli";
    case Geometry::Ball: return (l.loss_families & loss_bit(LossFamily::Linear)) ? "unit-vectors" : "squared-realizable";
    case Geometry::Cube: return "cube-coordinate";
    default: return "bco-linear";
    }
}

struct Sweep {
    int rc = -1;
    std::string err;
    nlohmann::json points; ///< run.json's points
};

/// `learner` with `extra` keys over eps x {64, 4096} rounds x `ds`, one instance per point. A learner that needs a
/// delta (Gaussian noise) gets delta = 1e-5.
Sweep sweep(const TempDir& dir, const config::ComponentInfo& l, const std::string& eps, const std::string& ds,
            const std::string& extra, int n) {
    Sweep s;
    for (const std::string delta : {std::string(), std::string("delta = 1e-5\n")}) {
        const std::string out = "o" + std::to_string(n) + (delta.empty() ? "a" : "b");
        dir.write("c.toml", "[run]\ninstances = 1\nrounds = [64, 4096]\n[adversary]\nkind = \"" + adversary_for(l) +
                                "\"\nd = " + ds + "\n[learner]\nalgorithm = \"" + l.name + "\"\nepsilon = " + eps +
                                "\n" + delta + extra);
        const CliResult r = run_cli(dir, "run c.toml --out " + out + " --quiet");
        s.rc = r.rc;
        s.err = r.err;
        if (r.rc == 0) {
            s.points = nlohmann::json::parse(slurp(dir.file(out + "/run.json"))).at("points");
            return s;
        }
        if (r.err.find("delta") == std::string::npos) return s; // refused for another reason
    }
    return s;
}

double number(const nlohmann::json& v) {
    return v.is_string() ? (v.get<std::string>() == "inf" ? INFINITY : NAN) : v.get<double>();
}

/// The requested value of `key` at a point (its resolved settings).
double requested(const nlohmann::json& point, const std::string& key) {
    for (const auto& [k, v] : point.at("settings").items())
        if (k == key) return std::stod(v.get<std::string>());
    return NAN;
}

TEST(PrivacyAsAsked, EveryPrivateLearnersDefaultsGiveAtMostTheRequest) {
    TempDir dir;
    int learners = 0, n = 0;
    for (const config::ComponentInfo& l : api::run_config_inputs().learners) {
        if (l.key_index("epsilon") < 0) continue;
        ++learners;
        Sweep s = sweep(dir, l, "[0.1, 1, 10]", "[2, 8]", "", ++n);
        if (s.rc == 2 && s.err.find("[adversary] d") != std::string::npos) s = sweep(dir, l, "[0.1, 1, 10]", "[1, 2]", "", ++n);
        ASSERT_EQ(s.rc, 0) << l.name << ": " << s.err;
        ASSERT_EQ(s.points.size(), 12u) << l.name;
        for (const nlohmann::json& p : s.points) {
            const nlohmann::json& priv = p.at("privacy");
            const double eps = number(priv.at("epsilon")), want = requested(p, "learner.epsilon");
            EXPECT_LE(eps, want * (1 + 1e-12)) << l.name << " at " << p.at("settings").dump() << ": " << priv.dump();
            const double want_delta = requested(p, "learner.delta");
            if (!std::isnan(want_delta))
                EXPECT_LE(number(priv.at("delta")), want_delta * (1 + 1e-12) + 1e-300) << l.name << ": " << priv.dump();
        }
    }
    EXPECT_GE(learners, 17) << "every private learner of the registry";
}

// The papers' calibrations stay available and report what they give: on the symmetric sets AS17's lambda =
// ||Y||_1 .../eps is replace-one 2 eps (docs/spec/as17.md §A1, §A3), exactly.
TEST(PrivacyAsAsked, ThePaperCalibrationOnSymmetricSetsReportsTwiceTheRequest) {
    TempDir dir;
    int n = 0;
    for (const config::ComponentInfo& l : api::run_config_inputs().learners) {
        if (l.name != "dp-ftrl-cube" && l.name != "dp-ftrl-sphere" && l.name != "dp-scrible-ball" &&
            l.name != "dp-scrible-cube")
            continue;
        ++n;
        const Sweep s = sweep(dir, l, "[0.1, 1, 10]", "[2, 8]", "calibration = \"paper\"\n", 100 + n);
        ASSERT_EQ(s.rc, 0) << l.name << ": " << s.err;
        for (const nlohmann::json& p : s.points)
            EXPECT_NEAR(number(p.at("privacy").at("epsilon")), 2 * requested(p, "learner.epsilon"),
                        1e-12 * requested(p, "learner.epsilon"))
                << l.name << ": " << p.at("privacy").dump();
    }
    EXPECT_EQ(n, 4);
}

// DP-FTPL's strict calibration used the classical Gaussian mechanism (valid for eps < 1) at every eps: 1.2 eps at
// eps = 10. It now takes the zCDP scale from eps = 1 on, and is unchanged below. Where the privacy term sets the
// noise (sigma_priv >= sigma_reg: "privacy-dominated"), strict is also tight: at least 0.98 of the request (the
// classical bound at eps just below 1 and the zCDP conversion above it are both exact inversions); where the regret
// term sets it, the guarantee is smaller and only the upper bound is asserted.
TEST(PrivacyAsAsked, StrictGaussianCalibrationStaysWithinTheRequestAtLargeEps) {
    TempDir dir;
    int n = 0, tight = 0;
    for (const config::ComponentInfo& l : api::run_config_inputs().learners) {
        if (l.name.rfind("dp-ftpl-", 0) != 0) continue;
        ++n;
        const Sweep s = sweep(dir, l, "[0.5, 1, 2, 10, 100]", "[2, 8]", "calibration = \"strict\"\n", 200 + n);
        ASSERT_EQ(s.rc, 0) << l.name << ": " << s.err;
        for (const nlohmann::json& p : s.points) {
            const double eps = number(p.at("privacy").at("epsilon")), want = requested(p, "learner.epsilon");
            EXPECT_LE(eps, want * (1 + 1e-12)) << l.name << ": " << p.at("privacy").dump();
            if (p.at("privacy").at("mechanism").get<std::string>().find("privacy-dominated") == std::string::npos)
                continue;
            EXPECT_GE(eps, 0.98 * want) << "strict is tight: " << l.name << ": " << p.at("privacy").dump();
            tight += want >= 1.0;
        }
    }
    EXPECT_EQ(n, 3);
    EXPECT_GE(tight, 3) << "some privacy-dominated points at eps >= 1, where the zCDP scale is used";
}

} // namespace
} // namespace dpr::test
