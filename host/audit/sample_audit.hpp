#pragma once
// `dpregret audit-samples`: the auditor on anyone's statistic (docs/AUDITS.md "Audits of anyone's samples").
//
// Input: two samples of one scalar statistic, `a` from a mechanism run on an input D and `b` from it run on a
// neighbouring input D', every value from independent randomness. The audit is the learner audit's without the
// simulation: the first ceil(selection n) values of each sample, in the order given, choose the event (threshold
// and set events, epsilon_bound.hpp choose_event), the rest are counted against it, and the bound (Clopper-Pearson
// (eps, delta) or Gaussian DP) is compared with the claim the caller states. On the statistic.npy that
// `dpregret audit --save-statistic` wrote (row 0 base, row 1 neighbour), with the learner's claim and the audit's
// alpha, candidates and selection, it gives that audit's event, counts and bound exactly.
//
// Validity rests on the caller: the values of each sample must be independent draws (one trial each), the two
// samples must come from neighbouring inputs, and the statistic must be the same function of the mechanism's
// output on both sides. The order of the values must not depend on the values: in a sorted file the shares are the
// sample's tails, neither is a sample of the law, and the bound means nothing.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "host/audit/learner_audit.hpp"

namespace dpr::audit {

/// The privacy the mechanism claims. eps-delta: epsilon (and delta); gdp: mu (epsilon then defaults to the eps of
/// mu-GDP at delta, the figure audit.json reports beside mu_lb).
struct SampleClaim {
    double epsilon = std::numeric_limits<double>::infinity();
    double delta = 0.0;
    double mu = 0.0; ///< > 0: a mu-Gaussian-DP claim, compared with mu_lb
};

struct SampleAuditSettings {
    double alpha = 0.05;
    int candidates = 64; ///< as [audit] candidates
    double selection = 0.2;
};

/// The audit of two samples as an AuditOutcome (learner.name "samples", learner.privacy the claim, settings.alpha,
/// candidates and selection, trials = the smaller sample, selection_trials = ceil(selection x size) of that
/// sample, the bound and the privacy region over all values), so that verdict() and api::write_audit_files apply
/// unchanged. Throws std::invalid_argument naming what is wrong: a sample with fewer than 4 values, a non-finite
/// value (with its position), a selection that leaves either share empty, a claim that is not positive.
AuditOutcome audit_two_samples(const std::vector<double>& a, const std::vector<double>& b, const SampleClaim& claim,
                               const SampleAuditSettings& settings);

/// ceil(selection x n): the values [0, that) of a sample of n choose the event.
std::uint64_t selection_size(double selection, std::uint64_t n);

} // namespace dpr::audit
