#pragma once
// Hedge / exponential weights (docs/spec/afkt23.md §C8), the non-private twin of DP-FTRL over the simplex:
//   x_t(i) = exp(-eta L_{t-1}(i)) / sum_j exp(-eta L_{t-1}(j)),   L_{t-1} = sum_{s<t} l_s,
// charged the expected loss <l_t, x_t>. With eta = sqrt(8 ln d / T), Regret_T <= sqrt(T ln d / 2);
// for any eta, Regret_T <= ln d / eta + eta T / 8 (losses in [0,1]).
//
// eta = inf is Follow The Leader: x_t is uniform over the coordinates where L_{t-1} is smallest (the limit of
// the softmax as eta -> inf; ties split evenly), computed without ever forming inf * 0.
//
// State: L[d] (double, exact); the scores are L itself in the run's precision (softmax_of_cumulative).

#include "kernels/learners/common.hpp"
#include "kernels/learners/softmax.hpp"

namespace dpr::learners {

struct Hedge : Learner<Geometry::Simplex> {
    static constexpr const char* kName = "hedge";
    static constexpr KeySpec kKeys[] = {
        {"eta", KeyType::Real, "auto", 0.0, kInf, "",
         "learning rate; auto = sqrt(8 ln d / T) (docs/spec/afkt23.md §C8); inf = follow the leader (uniform over the "
         "leaders)",
         true},
    };
    static constexpr int kEta = key_index(kKeys, "eta");
    static constexpr bool kInstanceLanes = true;
    /// L is reached only through the team's loop indices: on the GPU it can stay in registers (docs/GPU.md).
    static constexpr bool kRowInRegisters = true;

    struct Params : Dims {
        double eta;
    };

    static double default_eta(std::uint32_t d, std::uint64_t T) {
        // d = 1 gives eta = 0: one expert, nothing to learn, regret 0.
        return std::sqrt(8.0 * std::log(static_cast<double>(d)) / static_cast<double>(T));
    }
    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{dims(pb), kv.get(kEta, default_eta(pb.d, pb.T))};
    }
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
    static PrivacyReport privacy(const Params&) { return PrivacyReport{}; }

    /// L_{t-1} (double).
    DPR_HD static WorkspaceSpec workspace(const Params& p) { return WorkspaceSpec{}.add_double(1, p.d); }

    template <class Team, class WS>
    DPR_HD static void init(const Params& p, const Team& team, const WS& ws) {
        using D = typename Team::template lanes<double>;
        team.for_each(p.d, [&](auto i) { team.store(ws.dbl[0], i, D(0.0)); });
    }

    template <class Team, class WS, class Row>
    DPR_HD static RoundCharge<typename Team::template uni<double>> round(const Params& p, const Team& team, const WS& ws,
                                                                         std::uint64_t, const Row& row) {
        const auto e = softmax_of_cumulative(team, p.d, p.eta, row, ws.dbl[0]);
        return {e, e};
    }
};

} // namespace dpr::learners
