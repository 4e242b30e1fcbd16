#pragma once
// Test helper: run one config point through the real engine (registry -> CPU executor -> regret),
// without TOML, so learner tests assert on what users get. Keys are given by name:
//   auto r = test::simulate("dp-ftrl-experts", {{"epsilon", 1.0}}, "bernoulli", {{"gap", 0.2}},
//                           /*d=*/8, /*T=*/1024, /*instances=*/200);
//   r.mean_regret(), r.sem_regret(), r.final_regret[k], r.diagnostic("max_noise_inf", k)
// Choice keys take the index of the choice ("padded|binary": 0 = padded).
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "host/config/component_info.hpp"
#include "host/engine/checkpoints.hpp"
#include "host/engine/point_runner.hpp"
#include "host/engine/registry.hpp"
#include "kernels/adversaries/registry.hpp"
#include "kernels/domains/build.hpp"
#include "kernels/learners/registry.hpp"

namespace dpr::test {

using KeyList = std::initializer_list<std::pair<const char*, double>>;

inline KeyValues key_values(const std::vector<config::ComponentInfo>& infos, const std::string& name, KeyList keys) {
    for (const auto& c : infos)
        if (c.name == name) {
            KeyValues kv;
            for (const auto& k : keys) {
                const int i = c.key_index(k.first);
                if (i < 0) throw std::invalid_argument(name + " has no key " + k.first);
                kv.num[i] = k.second;
                kv.given[i] = true;
            }
            return kv;
        }
    throw std::invalid_argument("no component " + name);
}

struct SimResult {
    std::vector<std::uint64_t> checkpoints;
    std::vector<double> regret;          ///< instances x checkpoints
    std::vector<double> realized_regret; ///< instances x checkpoints
    std::vector<double> final_regret;    ///< per instance, at T
    std::vector<double> final_realized;
    std::vector<double> diagnostics;     ///< instances x names
    std::vector<std::string> diagnostic_names;
    learners::PrivacyReport privacy;
    std::uint32_t instances = 0;
    std::string policy; ///< the engine's launch policy (which layout and ISA ran)

    static double mean(const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x;
        return s / static_cast<double>(v.size());
    }
    static double sem(const std::vector<double>& v) {
        const double m = mean(v);
        double s = 0;
        for (double x : v) s += (x - m) * (x - m);
        return std::sqrt(s / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
    }
    double mean_regret() const { return mean(final_regret); }
    double sem_regret() const { return sem(final_regret); }
    double mean_realized() const { return mean(final_realized); }
    double diagnostic(const std::string& name, std::uint32_t k) const {
        for (std::size_t j = 0; j < diagnostic_names.size(); ++j)
            if (diagnostic_names[j] == name) return diagnostics[k * diagnostic_names.size() + j];
        throw std::invalid_argument("no diagnostic " + name);
    }
    /// Diagnostic `name` of every instance, in instance order.
    std::vector<double> diagnostic_column(const std::string& name) const {
        std::vector<double> v;
        for (std::uint32_t k = 0; k < instances; ++k) v.push_back(diagnostic(name, k));
        return v;
    }
};

/// How the engine runs a point (EngineShape's precision and launch request, the chunking).
struct SimOptions {
    Precision precision = Precision::Double;
    std::string lanes = "auto";
    std::string isa = "auto";
    std::uint64_t chunk_work = 0; ///< 0 = the backend's default
};

/// SimOptions of precision p with a launch request (lanes "auto" | "instances" | "coordinates", isa "auto" | a name).
inline SimOptions in(Precision p, const char* lanes = "auto", const char* isa = "auto") {
    SimOptions o;
    o.precision = p;
    o.lanes = lanes;
    o.isa = isa;
    return o;
}

/// L's Params resolved from `keys` for d coordinates, T rounds, in float or double precision (as the config layer
/// resolves them).
template <class L>
typename L::Params resolved(KeyList keys, bool float_precision, std::uint32_t d, std::uint64_t T) {
    static const auto infos = config::describe_all<learners::AllLearners>("learner");
    Problem pb;
    pb.d = d;
    pb.T = T;
    pb.seed = 1;
    pb.float_precision = float_precision;
    return L::resolve(key_values(infos, L::kName, keys), pb);
}

/// Runs `instances` instances of `learner` against `adversary` (shared sequence unless per_instance).
inline SimResult simulate(const std::string& learner, KeyList lkeys, const std::string& adversary, KeyList akeys,
                          std::uint32_t d, std::uint64_t T, std::uint32_t instances, unsigned threads = 2,
                          std::uint32_t seed = 1, bool per_instance = false, std::uint32_t checkpoints = 8,
                          std::uint32_t first_instance = 0, const SimOptions& opt = SimOptions{}) {
    static const auto linfo = config::describe_all<learners::AllLearners>("learner");
    static const auto ainfo = config::describe_all<adversaries::AllAdversaries>("adversary");
    Problem pb;
    pb.d = d;
    pb.T = T;
    pb.seed = seed;
    pb.float_precision = opt.precision == Precision::Float; // as the config layer does
    PointJob job;
    const KeyValues akv = key_values(ainfo, adversary, akeys);
    // A Polytope adversary names the decision set (and a graph set the dimension), as the config layer does.
    domains::Domain dom;
    for (const auto& c : ainfo)
        if (c.name == adversary && c.domain) {
            const std::uint32_t implied = c.dimension(akv);
            if (implied != 0 && implied != domains::kInvalidDimension) pb.d = implied;
            Diagnostic diag;
            if (!c.domain(akv, pb.d, dom, diag)) throw std::invalid_argument(std::string("set: ") + diag.message);
            pb.domain = &dom;
        }
    job.adversary = resolve_adversary(adversary, akv, pb);
    pb.loss = job.adversary.loss; // as the config layer does (kernels/core/sets.hpp LossFamily)
    job.learner = resolve_learner(learner, key_values(linfo, learner, lkeys), pb);
    job.shape.d = static_cast<std::uint32_t>(job.adversary.row_width); // d, or d + 1 for (a_t, b_t) rows
    job.shape.T = T;
    job.shape.instances = instances;
    job.shape.first_instance = first_instance;
    job.shape.seed = seed;
    job.shape.checkpoints = log_checkpoints(T, checkpoints);
    job.shape.precision = opt.precision;
    job.shape.launch.lanes = opt.lanes;
    job.shape.launch.isa = opt.isa;
    job.chunk_work = opt.chunk_work;
    job.per_instance = per_instance;
    job.backend = Backend::Cpu;
    job.threads = threads;
    const PointResult o = run_point(job);
    SimResult r;
    r.checkpoints = o.checkpoints;
    r.regret = o.regret;
    r.realized_regret = o.realized_regret;
    r.instances = instances;
    const std::size_t nck = o.checkpoints.size();
    for (std::uint32_t k = 0; k < instances; ++k) {
        r.final_regret.push_back(o.regret[k * nck + nck - 1]);
        r.final_realized.push_back(o.realized_regret[k * nck + nck - 1]);
    }
    r.diagnostics = o.diagnostics;
    r.diagnostic_names = job.learner.diagnostic_names;
    r.privacy = job.learner.privacy;
    r.policy = o.launch_policy;
    return r;
}

} // namespace dpr::test
