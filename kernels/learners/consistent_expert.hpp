#pragma once
// consistent-expert: "follow a random consistent expert", the non-private baseline of the realizable case
// (docs/spec/afkt23.md §C8; AFKT23's comparison point): start on a uniformly random expert; whenever the
// current expert has suffered loss, move to an expert drawn uniformly among those with the smallest
// cumulative loss (the consistent ones when L* = 0). With L* = 0 and a halving adversary its expected number
// of switches is O(log d) (each switch lands on a random survivor: half of them die in the next halving on
// average). Timing is Alg. 1's (AFKT23 Alg. 1 as printed; docs/spec/afkt23.md §C1): the test of round t reads
// the losses up to t - 1 and a firing test switches at t + 1, so a dead expert is played one round after its
// first loss: on halving each switch costs 2, not 1 (an O(log d) difference, the price of keeping it Alg. 1's
// exact eps = inf limit).
//
// It is svt-experts (kernels/learners/svt_experts.hpp) at its eps = inf limit with no switching budget:
// no sparse-vector noise (the switch test is q_t > 0, q_t the current expert's loss since it was chosen), the
// exponential mechanism at eta = inf (uniform over the minimisers of L_{t-1}: an inverse CDF over unit
// weights on them), the same randomness addresses: at the same seed, svt-experts with epsilon = inf and
// switch_budget = inf makes exactly the same plays (tests/learners/test_afkt23.cpp).
#include <array>
#include <cstdint>

#include "kernels/learners/svt_experts.hpp"

namespace dpr::learners {

struct ConsistentExpert : SvtExperts {
    static constexpr const char* kName = "consistent-expert";
    static constexpr std::array<KeySpec, 0> kKeys{};

    static Params resolve(const KeyValues&, const Problem& pb) {
        Params p{};
        static_cast<Dims&>(p) = dims(pb);
        p.epsilon = kInf;
        p.approx = false;
        p.delta = 0.0;
        p.beta = 1.0;
        p.Lstar = 0.0;
        p.strict = false;
        p.K = kInf;
        p.B = 0.0;
        p.eta = kInf;
        p.Lthr = 0.0;
        p.svt = mech::svt_scales(kInf, 1.0);
        return p;
    }
    static bool check(const KeyValues&, const Problem& pb, Diagnostic& diag) {
        if (pb.d < 2) return diag.fail("d", "consistent-expert needs d >= 2 experts (got %u)", pb.d);
        return true;
    }
    static PrivacyReport privacy(const Params&) { return PrivacyReport{}; }
};

} // namespace dpr::learners
