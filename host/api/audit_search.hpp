#pragma once
// Pair search for an audit (`dpregret audit FILE --search`; docs/AUDITS.md "Searching for the pair"; issue 49,
// item 2): the neighbouring pair and the statistic are chosen among a family of candidates by a pilot audit of each,
// so that a user need not hand-craft them.
//
// The family (pair_family), built from the audit file's own pair, which is always candidate 0:
//   t0         the file's round, 1 and ceil(T/2) (rounds below T: a later round must be observed)
//   neighbour  the file's rule; on the simplex flip of every coordinate, flip of coordinate 0 and zero; elsewhere
//              negate and zero (a file neighbour keeps its own round and rule)
//   rounds R   every round but t0 (auto), the next round [t0 + 1], the last round [T]
//   statistic  the file's, expected and realized; switches and last_switch_round for the learners that report them;
//              expected and realized also with fitted weights ([audit] weights, R = every round but t0, T >= 3)
// Each candidate is audited on a pilot of its own (pilot_trials per side, run.seed replaced by the pilot seed, so
// the pilot's trials are independent of the audit's) and scored by its lower bound divided by the claim (eps_lb /
// eps, or mu_lb / mu for Gaussian DP). The best (the earliest on ties) is then audited at the file's seed and
// [run] instances. Because the choice is made on independent trials, the audit's bound holds at its confidence
// 1 - alpha as it stands: the search costs pilot trials, not alpha.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "host/api/audit.hpp"

namespace dpr::api {

struct PairCandidate {
    std::vector<std::string> sets; ///< the overrides ("audit.round=1", ...) that make this pair from the file
    std::string describe;          ///< "t0 = 1, negate, R = [2], expected"
    double score = 0.0;            ///< pilot bound / claim (0 when refused)
    double epsilon_lb = 0.0, mu_lb = 0.0;
    std::string refused;           ///< why this candidate could not be audited ("" when it was)
};

struct PairSearch {
    std::uint64_t pilot_trials = 0; ///< per side
    std::uint64_t pilot_seed = 0;
    std::vector<PairCandidate> candidates;
    std::size_t chosen = 0;
    /// The overrides of the chosen pair (what --set would give), to add to the audit's own.
    const std::vector<std::string>& chosen_sets() const { return candidates.at(chosen).sets; }
};

/// The pilot seed of an audit at `seed`: seed + 2654435769 (mod 2^32).
std::uint64_t pilot_seed(std::uint64_t seed);

/// The default pilot (--pilot, the Python package's pilot=None): [run] instances / 50, at least 20000 and at most
/// [run] instances.
std::uint64_t default_pilot(std::uint64_t instances);

/// The candidates (only their sets and descriptions) for the audit `plan` of the file: see the header.
std::vector<PairCandidate> pair_family(const AuditPlan& plan);

/// Audits every candidate of pair_family on a pilot of `pilot_trials` per side (spec's backend, threads and memory
/// limit; never keeping statistics) and chooses the best. `on_candidate(i, n)` is called before candidate i of n;
/// spec.interrupted stops the search (then the result is empty). Throws UsageError when pilot_trials cannot make
/// an audit.
PairSearch search_pair(const AuditSpec& spec, const AuditPlan& plan, std::uint64_t pilot_trials,
                       const std::function<void(std::size_t, std::size_t)>& on_candidate = {});

/// audit.json's "search" object: the pilot, every candidate with its score, the chosen one.
nlohmann::json search_json(const PairSearch& s);

/// pair.toml: the audit's resolved TOML (the chosen pair included) with every loss-file path made absolute (from
/// the directory of `config_path`), so that `dpregret audit pair.toml` repeats the audit from anywhere.
std::string pair_toml(const AuditPlan& plan, const std::string& config_path);

} // namespace dpr::api
