#include "host/audit/curve.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace dpr::audit {

const std::vector<double>& curve_deltas() {
    static const std::vector<double> d = {0.0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2};
    return d;
}

std::vector<SelectionSpec> curve_specs(const SelectionSpec& base, double alpha) {
    std::vector<SelectionSpec> out;
    const double each = alpha / static_cast<double>(curve_deltas().size());
    for (double delta : curve_deltas()) {
        SelectionSpec s = base;
        s.kind = BoundKind::EpsDelta;
        s.delta = delta;
        s.alpha = each;
        out.push_back(s);
    }
    return out;
}

double claimed_epsilon_at(const learners::PrivacyReport& claim, double delta) {
    if (claim.gdp_mu > 0.0) return delta > 0.0 ? gdp_epsilon(claim.gdp_mu, delta) : std::numeric_limits<double>::infinity();
    return delta >= claim.delta ? claim.epsilon : std::numeric_limits<double>::infinity();
}

CurveTally::CurveTally(std::vector<AuditEvent> events) : events_(std::move(events)) {
    for (std::size_t i = 0; i < events_.size(); ++i)
        if (events_[i].kind == AuditEvent::Kind::Set) set_events_.push_back(i);
    set_hits_[0].assign(events_.size(), 0);
    set_hits_[1].assign(events_.size(), 0);
}

std::vector<double> CurveTally::thresholds() const {
    std::vector<double> t;
    for (const AuditEvent& e : events_)
        if (e.kind == AuditEvent::Kind::Threshold) t.push_back(e.threshold);
    return t;
}

AuditCurve CurveTally::finish(const EdgeHistogram& eval0, const EdgeHistogram& eval1,
                              const learners::PrivacyReport& claim, double alpha) const {
    AuditCurve c;
    c.alpha = alpha;
    c.claim = claim.gdp_mu > 0.0 ? fmt::format("mu-GDP with mu = {:.17g}", claim.gdp_mu)
                                 : fmt::format("(eps, delta) = ({:.17g}, {:.17g})", claim.epsilon, claim.delta);
    const double each = alpha / static_cast<double>(curve_deltas().size());
    const EdgeHistogram* eval[2] = {&eval0, &eval1};
    for (std::size_t i = 0; i < events_.size() && i < curve_deltas().size(); ++i) {
        const AuditEvent& e = events_[i];
        const bool set = e.kind == AuditEvent::Kind::Set;
        const auto hits = [&](int side) { return set ? set_hits_[side][i] : eval[side]->count(e); };
        const int num = e.a_is_numerator ? 0 : 1, den = 1 - num;
        CurvePoint p;
        p.delta = curve_deltas()[i];
        p.event = e;
        p.k1 = hits(num), p.n1 = eval[num]->total(), p.k0 = hits(den), p.n0 = eval[den]->total();
        p.epsilon_lb = epsilon_lower_bound(p.k1, p.n1, p.k0, p.n0, p.delta, each);
        p.claimed = claimed_epsilon_at(claim, p.delta);
        c.violation = c.violation || p.epsilon_lb > p.claimed;
        c.points.push_back(std::move(p));
    }
    return c;
}

} // namespace dpr::audit
