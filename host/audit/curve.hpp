#pragma once
// The (eps, delta) curve of an audit (docs/AUDITS.md "The (eps, delta) curve"; issue 49, item 4).
//
// A single event bounds eps at the claim's delta. The curve bounds eps at every delta of a grid,
// D = {0, 1e-9, 1e-8, ..., 1e-2}: for each delta_i its own event is chosen on the selection share (the same
// threshold and set families, scored for delta_i) and counted on the evaluation share, and
//     eps_lb(delta_i) = ln((CP_lower(k1, n1, a) - delta_i) / CP_upper(k0, n0, a)),   a = alpha / (2 |D|),
// so that with probability >= 1 - alpha every point holds at once (Bonferroni over the |D| points, alpha/2 per side
// of each). It is compared point by point with the claim's own curve: mu-GDP's eps(delta) (Dong, Roth & Su 2019,
// Cor. 2.13) for a learner that claims mu, else the claimed eps at every delta >= the claimed delta (no claim below
// it). A point above the claim's curve is a violation of the claim's trade-off that the single-delta bound may not
// show (a Gaussian learner with half its noise: its mu doubles, and at small delta its eps(delta) more than doubles).
// The curve has its own verdict; the audit's verdict stays that of its main bound (a second test at alpha would
// otherwise raise the false-alarm rate of the verdict).
#include <cstdint>
#include <string>
#include <vector>

#include "host/audit/epsilon_bound.hpp"
#include "kernels/learners/common.hpp"

namespace dpr::audit {

/// D: 0, 1e-9, 1e-8, ..., 1e-2.
const std::vector<double>& curve_deltas();

/// The specs that choose the curve's events: `base`'s candidates and gamma, eps-delta at each delta of D,
/// alpha / |D| each.
std::vector<SelectionSpec> curve_specs(const SelectionSpec& base, double alpha);

/// The claim's eps at delta (see the header): gdp_epsilon(mu, delta) when claim.gdp_mu > 0, else claim.epsilon for
/// delta >= claim.delta and +inf below.
double claimed_epsilon_at(const learners::PrivacyReport& claim, double delta);

struct CurvePoint {
    double delta = 0.0;
    AuditEvent event;
    std::uint64_t k1 = 0, n1 = 0, k0 = 0, n0 = 0;
    double epsilon_lb = 0.0;
    double claimed = 0.0; ///< claimed_epsilon_at(delta)
};

struct AuditCurve {
    double alpha = 0.05;      ///< the curve's simultaneous error; alpha / |D| per point
    std::string claim;        ///< "mu-GDP with mu = ..." or "(eps, delta) = (...)"
    std::vector<CurvePoint> points;
    bool violation = false;   ///< some eps_lb(delta) above the claim's curve
    bool empty() const { return points.empty(); }
};

/// Counts the curve's events on the evaluation shares: threshold events from the evaluation histograms (their
/// thresholds must be among the histograms' edges: add thresholds() to them), set events value by value.
class CurveTally {
  public:
    CurveTally() = default;
    explicit CurveTally(std::vector<AuditEvent> events); ///< one per delta of D, in its order
    /// The threshold events' thresholds (edges the evaluation histograms need).
    std::vector<double> thresholds() const;
    /// An evaluation value of side 0 (the first sample) or 1.
    void add(int side, double x) {
        for (std::size_t i : set_events_) set_hits_[side][i] += events_[i].contains(x);
    }
    /// The curve from the evaluation histograms and the claim.
    AuditCurve finish(const EdgeHistogram& eval0, const EdgeHistogram& eval1, const learners::PrivacyReport& claim,
                      double alpha) const;

  private:
    std::vector<AuditEvent> events_;
    std::vector<std::size_t> set_events_;
    std::vector<std::uint64_t> set_hits_[2];
};

} // namespace dpr::audit
