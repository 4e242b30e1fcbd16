#include "host/audit/sample_audit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dpr::audit {
namespace {

void check_sample(const std::vector<double>& v, const char* name) {
    if (v.size() < 4)
        throw std::invalid_argument(std::string("sample ") + name + " has " + std::to_string(v.size()) +
                                    " values; an audit needs at least 4 per side (a selection and an evaluation share)");
    for (std::size_t i = 0; i < v.size(); ++i)
        if (!std::isfinite(v[i]))
            throw std::invalid_argument(std::string("sample ") + name + " value " + std::to_string(i) + " (0-based) is " +
                                        (std::isnan(v[i]) ? "nan" : v[i] > 0 ? "inf" : "-inf") +
                                        ": every value of the statistic must be finite");
    // A sorted sample (np.sort, a sorted CSV) makes the shares its tails: the bound would mean nothing. It is refused
    // when it is monotone with at least 10 steps between distinct values: trials in random order put 11 or more
    // distinct values in monotone order with probability at most 2/11! (5e-8), however many ties they have.
    int up = 0, down = 0;
    for (std::size_t i = 1; i < v.size() && (up == 0 || down == 0); ++i) up += v[i] > v[i - 1], down += v[i] < v[i - 1];
    if ((up == 0) != (down == 0)) {
        std::size_t steps = 0;
        for (std::size_t i = 1; i < v.size(); ++i) steps += v[i] != v[i - 1];
        if (steps >= 10)
            throw std::invalid_argument(std::string("sample ") + name + " is sorted (its values " +
                                        (up ? "ascend" : "descend") +
                                        "): the first share of each sample chooses the event and the rest count it, so "
                                        "the values must be in trial order (or shuffled)");
    }
}

} // namespace

std::uint64_t selection_size(double selection, std::uint64_t n) {
    return static_cast<std::uint64_t>(std::ceil(selection * static_cast<double>(n)));
}

AuditOutcome audit_two_samples(const std::vector<double>& a, const std::vector<double>& b, const SampleClaim& claim,
                               const SampleAuditSettings& st) {
    check_sample(a, "A");
    check_sample(b, "B");
    const bool gdp = claim.mu > 0.0;
    if (!(claim.mu >= 0.0) || std::isinf(claim.mu))
        throw std::invalid_argument("mu = " + std::to_string(claim.mu) + " must be a positive finite number");
    if (!(claim.delta >= 0.0 && claim.delta < 1.0))
        throw std::invalid_argument("delta = " + std::to_string(claim.delta) + " must be in [0, 1)");
    if (gdp && !(claim.delta > 0.0))
        throw std::invalid_argument("a Gaussian-DP claim (mu) needs delta in (0, 1): the eps of mu-GDP at delta is "
                                    "reported beside mu_lb");
    if (!gdp && !(claim.epsilon > 0.0))
        throw std::invalid_argument("epsilon must be > 0 (or state mu for a Gaussian-DP claim)");
    if (!(st.alpha > 0.0 && st.alpha < 1.0)) throw std::invalid_argument("alpha must be in (0, 1)");
    if (st.candidates < 1) throw std::invalid_argument("candidates must be >= 1");
    const std::uint64_t na = a.size(), nb = b.size();
    const std::uint64_t ma = st.selection > 0.0 && st.selection < 1.0 ? selection_size(st.selection, na) : 0;
    const std::uint64_t mb = st.selection > 0.0 && st.selection < 1.0 ? selection_size(st.selection, nb) : 0;
    if (ma < 1 || mb < 1 || ma >= na || mb >= nb)
        throw std::invalid_argument("selection = " + std::to_string(st.selection) + " leaves a share empty with " +
                                    std::to_string(na) + " and " + std::to_string(nb) +
                                    " values: it must be in (0, 1) with ceil(selection x n) in [1, n - 1] for both");
    const BoundKind kind = gdp ? BoundKind::Gdp : BoundKind::EpsDelta;
    check_alpha_computable(st.alpha, std::min(na - ma, nb - mb), kind);

    AuditOutcome o;
    o.learner.name = "samples";
    o.learner.privacy.delta = claim.delta;
    o.learner.privacy.gdp_mu = claim.mu;
    o.learner.privacy.epsilon = gdp && std::isinf(claim.epsilon) ? gdp_epsilon(claim.mu, claim.delta) : claim.epsilon;
    o.learner.privacy.accountant = "stated by the caller";
    o.learner.privacy.mechanism = "the caller's mechanism (two samples of its statistic)";
    o.settings.alpha = st.alpha;
    o.settings.candidates = st.candidates;
    o.settings.selection = st.selection;
    o.settings.bound = kind;
    o.settings.bound_requested = gdp ? "gdp" : "eps-delta";
    o.trials = std::min(na, nb);
    o.selection_trials = ma;

    // 1. The selection shares, in the order given, choose the event (both families; the halves end sorted whole).
    SelectionHalves sel[2] = {split_selection(std::vector<double>(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(ma))),
                              split_selection(std::vector<double>(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(mb)))};
    SelectionSpec spec;
    spec.kind = kind;
    spec.delta = claim.delta;
    spec.alpha = st.alpha;
    spec.candidates = st.candidates;
    std::vector<SelectionSpec> specs = {spec};
    for (const SelectionSpec& c : curve_specs(spec, st.alpha)) specs.push_back(c);
    std::vector<double> scores;
    std::vector<AuditEvent> events = choose_events(sel[0], sel[1], std::min(na - ma, nb - mb), specs, &scores);
    const double score = scores[0];
    const AuditEvent event = events[0];
    CurveTally curve(std::vector<AuditEvent>(events.begin() + 1, events.end()));
    const RegionPlan rp = region_plan(event, sel[0].values, sel[1].values, curve.thresholds());

    // 2. The rest are counted against it; every value joins the (descriptive) privacy region.
    const std::vector<double>* samples[2] = {&a, &b};
    const std::uint64_t m[2] = {ma, mb};
    EdgeHistogram eval[2] = {EdgeHistogram(rp.edges), EdgeHistogram(rp.edges)};
    EdgeHistogram all[2] = {EdgeHistogram(rp.edges), EdgeHistogram(rp.edges)};
    std::uint64_t in_set[2] = {0, 0};
    const bool set_event = event.kind == AuditEvent::Kind::Set;
    for (int side = 0; side < 2; ++side) {
        const std::vector<double>& v = *samples[side];
        for (std::size_t i = m[side]; i < v.size(); ++i) {
            eval[side].add(v[i]);
            if (set_event) in_set[side] += event.contains(v[i]);
            curve.add(side, v[i]);
        }
        for (double x : sel[side].values) all[side].add(x);
        all[side].add_bins(eval[side].counts());
    }
    const int num = event.a_is_numerator ? 0 : 1, den = 1 - num;
    const auto hits = [&](int side) { return set_event ? in_set[side] : eval[side].count(event); };
    o.bound = bound_from_counts(kind, event, hits(num), eval[num].total(), hits(den), eval[den].total(), claim.delta,
                                st.alpha);
    o.bound.selection_score = score;
    o.curve = curve.finish(eval[0], eval[1], o.learner.privacy, st.alpha);
    o.region = region_rows(rp, all[0], all[1], na, nb);
    // The claimed trade-off curve: G_mu for a mu claim, else f_(eps, delta) (tradeoff.hpp).
    const ClaimedTradeoff claimed = claim.mu > 0.0 ? ClaimedTradeoff::gaussian(claim.mu)
                                                   : ClaimedTradeoff::eps_delta(o.learner.privacy.epsilon, claim.delta);
    o.fdp = fdp_test(claimed, region_rows(rp, eval[0], eval[1], na - ma, nb - mb), na - ma, nb - mb, st.alpha);
    fill_claimed(claimed, o.region);
    o.fdp.exact_why = "audit-samples tests the claim as stated (G_mu for a mu, else f_(eps, delta))";
    o.backend = "none (samples given)";
    o.completed = true;
    return o;
}

} // namespace dpr::audit
