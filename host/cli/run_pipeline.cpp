#include "host/cli/run_pipeline.hpp"

#include <string>

#include "host/cli/errors.hpp"
#include "host/config/component_info.hpp"
#include "host/engine/loss_file.hpp"
#include "host/engine/registry.hpp"
#include "kernels/adversaries/common.hpp"
#include "kernels/adversaries/registry.hpp"
#include "kernels/learners/registry.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::cli {

config::ConfigInputs run_config_inputs() {
    config::ConfigInputs in;
    in.learners = config::describe_all<learners::AllLearners>("learner");
    in.adversaries = config::describe_all<adversaries::AllAdversaries>("adversary");
    in.file_dimension = [](const std::string& path) { return loss_file_columns(path); };
    in.file_values = [](const std::string& path, const Problem& pb, Geometry loss_set) {
        return load_loss_file(path, pb.T, pb.d, loss_set);
    };
    return in;
}

void check_instance_ids(std::uint64_t first, std::uint64_t count) {
    constexpr std::uint64_t reserved = adversaries::kSharedSequence;
    if (count == 0 || first >= reserved || count > reserved - first)
        throw UsageError("[run] instances = " + std::to_string(count) +
                         (first ? " (from instance " + std::to_string(first) + ")" : std::string()) +
                         ": instance ids must lie in [0, 4294967294]; they are 32-bit RNG counter words and "
                         "4294967295 (0xFFFFFFFF) is the id of the shared loss sequence "
                         "(kernels/adversaries/common.hpp), so at most 4294967295 instances per point");
}

namespace {

/// Consistency that spans components: decision set vs loss set, RNG layout limits.
void check_point(const config::Point& p, const config::Config& cfg, const LearnerRuntime& lr,
                 const AdversaryRuntime& ar) {
    if (lr.geometry != ar.geometry)
        throw UsageError("[learner] algorithm = \"" + p.learner + "\" plays in the " +
                         geometry_name(lr.geometry) + ", but [adversary] kind = \"" + p.adversary +
                         "\" produces losses for the " + geometry_name(ar.geometry) +
                         "; choose a matching pair (docs/ADVERSARIES.md)");
    check_instance_ids(0, cfg.run.instances);
    switch (rng::check_layout(p.problem.seed, cfg.run.instances, p.problem.T, p.problem.d)) {
    case rng::LayoutError::Ok:
        break;
    case rng::LayoutError::Seed:
        throw UsageError("[run] seed must be an integer in [0, 4294967295]");
    case rng::LayoutError::Instances:
        throw UsageError("[run] instances must be at most 2^32 (the instance field of the RNG counter)");
    case rng::LayoutError::Rounds:
        throw UsageError("[run] rounds must be below 2^32 (the round field of the RNG counter)");
    case rng::LayoutError::Elements:
        throw UsageError("[adversary] d must be at most 2^32 (the element field of the RNG counter)");
    }
}

} // namespace

std::vector<PointRecord> resolve_points(const config::Config& cfg) {
    std::vector<PointRecord> recs(cfg.points.size());
    for (std::size_t i = 0; i < cfg.points.size(); ++i) {
        const config::Point& p = cfg.points[i];
        PointRecord& r = recs[i];
        r.point = &p;
        r.learner = resolve_learner(p.learner, p.learner_values, p.problem);
        r.adversary = resolve_adversary(p.adversary, p.adversary_values, p.problem);
        check_point(p, cfg, r.learner, r.adversary);
    }
    return recs;
}

} // namespace dpr::cli
