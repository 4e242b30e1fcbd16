#pragma once
// The neighbouring loss sequence of an audit (replace-one neighbours: docs/AUDITS.md "What is run"): the base
// sequence of the config's adversary with one round t0 replaced, by a documented rule or from a file.
//
//   flip    losses in [0,1]^d (simplex): l'_{t0}(j) = 1 - l_{t0}(j) for j = coordinate, or for every j
//           (coordinate = -1: the L1 distance is then d, the ||Y||_1 = Delta_1 of the experts calibrations)
//   negate  symmetric loss sets (ball, cube) and the (a_t, b_t) families: l'_{t0} = -l_{t0} (a and b negated,
//           so b = <a, c> keeps its zero at c): the largest replace-one change, 2 ||l_{t0}||
//   zero    l'_{t0} = 0, in every loss set
//   negate-b  the squared and absolute losses (a_t, b_t): b'_{t0} = -b_{t0}, a_{t0} kept (not the affine losses,
//           whose b = <a, x0> needs x0 in the decision set). Where
//           |<a, x>| < |b| this flips the sign of the residual <a, x> - b, so an absolute loss's gradient moves by
//           2 ||a||, the whole replace-one l2 sensitivity 2L of the learners on clipped gradients (dp-ftrl-smooth),
//           which negate cannot reach: (-a, -b) is the same squared or absolute loss
//   file    a T x d loss file (as the `file` adversaries read) that must differ from the base in exactly one
//           round, which becomes t0
// Numbers an adversary appends to its rows beyond its loss family's (row_extra: sufficient statistics of its
// comparator) are kept as they are; the audit never reads a comparator.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host/backend/adversary_runtime.hpp"

namespace dpr::audit {

enum class NeighbourRule { Flip, Negate, Zero, File, NegateB };

const char* neighbour_rule_name(NeighbourRule r);

struct NeighbourSpec {
    NeighbourRule rule = NeighbourRule::Flip;
    std::uint64_t round = 1;       ///< t0
    std::int64_t coordinate = -1;  ///< flip: the coordinate, -1 = all
    std::shared_ptr<const std::vector<double>> file_rows; ///< File: T x width
};

/// The base adversary with round t0 replaced, as an AdversaryRuntime the engine runs like any other (shared
/// sequences; the runtime points back at this object, which therefore never moves).
class NeighbourAdversary {
  public:
    /// Throws std::invalid_argument naming the [audit] key when the rule does not apply to the base's loss set.
    NeighbourAdversary(const AdversaryRuntime& base, std::uint32_t d, const NeighbourSpec& spec);
    NeighbourAdversary(const NeighbourAdversary&) = delete;
    NeighbourAdversary& operator=(const NeighbourAdversary&) = delete;

    const AdversaryRuntime& runtime() const { return rt_; }
    const NeighbourSpec& spec() const { return spec_; }
    /// ||l_{t0} - l'_{t0}||_1 and _2 over the family's numbers (what the neighbours' distance is), from the
    /// base's shared sequence with `ctx`.
    void distance(const adversaries::SequenceCtx& ctx, double* l1, double* l2) const;
    /// l_{t0} - l'_{t0} over the family's numbers (the pair's difference, whose norms distance() gives).
    std::vector<double> difference(const adversaries::SequenceCtx& ctx) const;

    void fill(const adversaries::SequenceCtx& ctx, std::uint64_t t, double* out) const;
    /// The rule applied to one base row in place (any round; not for neighbour = "file"): what fill() does to the
    /// row of round t0, and what a one-run audit's canaries do to theirs (host/audit/one_run.hpp).
    void apply_rule(double* row) const;

  private:
    AdversaryRuntime base_, rt_;
    std::uint32_t d_;
    std::uint64_t family_width_;
    NeighbourSpec spec_;
};

/// The one round in which `rows` (T x width, row-major) differs from the base's shared sequence with `ctx`;
/// throws std::invalid_argument naming the first two differing rounds, or saying that none differs.
std::uint64_t differing_round(const AdversaryRuntime& base, const adversaries::SequenceCtx& ctx,
                              const std::vector<double>& rows, std::uint64_t T);

} // namespace dpr::audit
