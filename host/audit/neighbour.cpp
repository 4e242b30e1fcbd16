#include "host/audit/neighbour.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace dpr::audit {
namespace {

const NeighbourAdversary* self_of(const void* params) {
    const NeighbourAdversary* p = nullptr;
    std::memcpy(&p, params, sizeof p);
    return p;
}

void fill_neighbour(const void* params, const adversaries::SequenceCtx& ctx, std::uint64_t t, double* out) {
    self_of(params)->fill(ctx, t, out);
}

} // namespace

const char* neighbour_rule_name(NeighbourRule r) {
    switch (r) {
    case NeighbourRule::Flip: return "flip";
    case NeighbourRule::Negate: return "negate";
    case NeighbourRule::Zero: return "zero";
    case NeighbourRule::File: return "file";
    case NeighbourRule::NegateB: return "negate-b";
    }
    return "?";
}

NeighbourAdversary::NeighbourAdversary(const AdversaryRuntime& base, std::uint32_t d, const NeighbourSpec& spec)
    : base_(base), rt_(base), d_(d), family_width_(loss_row_width(base.loss, d)), spec_(spec) {
    const std::string rule = std::string("[audit] neighbour = \"") + neighbour_rule_name(spec.rule) + "\"";
    if (base.loss == LossFamily::Distance && spec.rule != NeighbourRule::File)
        throw std::invalid_argument(rule + ": the losses ||x - c_t|| of [adversary] kind = \"" + base.name +
                                    "\" have no replace-one rule here (c_t must stay in the decision set); audit "
                                    "with a linear, affine or linear-model adversary");
    if (spec.rule == NeighbourRule::Flip && !(base.geometry == Geometry::Simplex && base.loss == LossFamily::Linear))
        throw std::invalid_argument(rule + ": flip needs losses in [0,1]^d (a simplex adversary); [adversary] kind = \"" +
                                    base.name + "\" draws for the " + geometry_name(base.geometry) +
                                    ": use neighbour = \"negate\" or \"zero\"");
    if (spec.rule == NeighbourRule::Negate && base.geometry == Geometry::Simplex && base.loss == LossFamily::Linear)
        throw std::invalid_argument(rule + ": -l is not in [0,1]^d; for the simplex use neighbour = \"flip\" or \"zero\"");
    // Affine losses <a, x> - b keep b = <a, x0> with x0 in the decision set; -b would leave the family.
    if (spec.rule == NeighbourRule::NegateB && base.loss != LossFamily::Squared && base.loss != LossFamily::Absolute)
        throw std::invalid_argument(rule + ": negates b_t of the squared and absolute losses (a_t, b_t), but "
                                           "[adversary] kind = \"" + base.name + "\" draws " +
                                    loss_family_name(base.loss) + ": use neighbour = \"negate\" or \"zero\"");
    if (spec.rule == NeighbourRule::Flip && spec.coordinate >= static_cast<std::int64_t>(d))
        throw std::invalid_argument("[audit] coordinate = " + std::to_string(spec.coordinate) +
                                    ": must be -1 (every coordinate) or in [0, " + std::to_string(d - 1) + "]");
    if (spec.rule == NeighbourRule::File && base.row_width != d)
        throw std::invalid_argument(rule + ": a loss file holds d numbers per round, but [adversary] kind = \"" +
                                    base.name + "\" has " + std::to_string(base.row_width) + " per round");
    const NeighbourAdversary* self = this;
    rt_.name = base.name + " (neighbour)";
    rt_.params.assign(sizeof self, 0);
    std::memcpy(rt_.params.data(), &self, sizeof self);
    rt_.fill_fn = &fill_neighbour;
    rt_.epoch_fn = nullptr;     // round t0 differs from its neighbours: no row repeats
    rt_.comparator_fn = nullptr; // never read by an audit; the closed forms of the geometry are well defined
    if (base.geometry == Geometry::Polytope)
        rt_.comparator_fn = [](const void*, const double*) { return 0.0; };
}

void NeighbourAdversary::fill(const adversaries::SequenceCtx& ctx, std::uint64_t t, double* out) const {
    if (spec_.rule == NeighbourRule::File) {
        std::memcpy(out, spec_.file_rows->data() + (t - 1) * d_, sizeof(double) * d_);
        return;
    }
    base_.fill(ctx, t, out);
    if (t == spec_.round) apply_rule(out);
}

void NeighbourAdversary::apply_rule(double* out) const {
    switch (spec_.rule) {
    case NeighbourRule::Flip:
        for (std::uint32_t j = 0; j < d_; ++j)
            if (spec_.coordinate < 0 || j == static_cast<std::uint64_t>(spec_.coordinate)) out[j] = 1.0 - out[j];
        break;
    case NeighbourRule::Negate:
        for (std::uint64_t j = 0; j < family_width_; ++j) out[j] = -out[j];
        break;
    case NeighbourRule::Zero:
        for (std::uint64_t j = 0; j < family_width_; ++j) out[j] = 0.0;
        break;
    case NeighbourRule::NegateB: // b_t is the family's last number (a_t, then b_t)
        out[family_width_ - 1] = -out[family_width_ - 1];
        break;
    case NeighbourRule::File:
        throw std::logic_error("NeighbourAdversary::apply_rule: a neighbour file replaces whole rows");
    }
}

std::vector<double> NeighbourAdversary::difference(const adversaries::SequenceCtx& ctx) const {
    std::vector<double> a(base_.row_width), b(base_.row_width);
    base_.fill(ctx, spec_.round, a.data());
    fill(ctx, spec_.round, b.data());
    std::vector<double> v(family_width_);
    for (std::uint64_t j = 0; j < family_width_; ++j) v[j] = a[j] - b[j];
    return v;
}

void NeighbourAdversary::distance(const adversaries::SequenceCtx& ctx, double* l1, double* l2) const {
    double s1 = 0, s2 = 0;
    for (double x : difference(ctx)) {
        s1 += std::fabs(x);
        s2 += x * x;
    }
    *l1 = s1;
    *l2 = std::sqrt(s2);
}

std::uint64_t differing_round(const AdversaryRuntime& base, const adversaries::SequenceCtx& ctx,
                              const std::vector<double>& rows, std::uint64_t T) {
    const std::uint64_t w = base.row_width;
    std::vector<double> row(w);
    std::uint64_t found = 0;
    for (std::uint64_t t = 1; t <= T; ++t) {
        base.fill(ctx, t, row.data());
        if (std::memcmp(row.data(), rows.data() + (t - 1) * w, sizeof(double) * w) == 0) continue;
        if (found)
            throw std::invalid_argument("[audit] neighbour_path: the file differs from the base sequence in rounds " +
                                        std::to_string(found) + " and " + std::to_string(t) +
                                        "; neighbours differ in exactly one round "
                                        "(replace-one, docs/spec/model.md §0.4)");
        found = t;
    }
    if (!found)
        throw std::invalid_argument("[audit] neighbour_path: the file equals the base sequence in every round; "
                                    "neighbours differ in exactly one round");
    return found;
}

} // namespace dpr::audit
