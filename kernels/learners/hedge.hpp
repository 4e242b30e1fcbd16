#pragma once
// Hedge / exponential weights (ALGORITHMS.md C8), the non-private twin of DP-FTRL over the simplex:
//   x_t(i) = exp(-eta L_{t-1}(i)) / sum_j exp(-eta L_{t-1}(j)),   L_{t-1} = sum_{s<t} l_s,
// charged the expected loss <l_t, x_t>. With eta = sqrt(8 ln d / T), Regret_T <= sqrt(T ln d / 2);
// for any eta, Regret_T <= ln d / eta + eta T / 8 (losses in [0,1]).
#include <cmath>
#include <cstdint>

#include "kernels/learners/common.hpp"
#include "kernels/learners/softmax.hpp"

namespace dpr::learners {

struct Hedge {
    static constexpr const char* kName = "hedge";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr KeySpec kKeys[] = {
        {"eta", KeyType::Real, "auto", 0.0, kInf, "",
         "learning rate; auto = sqrt(8 ln d / T) (ALGORITHMS.md C8)", true},
    };
    static constexpr int kEta = key_index(kKeys, "eta");

    struct Params {
        std::uint32_t d;
        std::uint64_t T;
        double eta;
    };

    static double default_eta(std::uint32_t d, std::uint64_t T) {
        // d = 1 gives eta = 0: one expert, nothing to learn, regret 0.
        return std::sqrt(8.0 * std::log(static_cast<double>(d)) / static_cast<double>(T));
    }
    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{pb.d, pb.T, kv.get(kEta, default_eta(pb.d, pb.T))};
    }
    static bool check(const KeyValues&, const Problem&, Diagnostic&) { return true; }
    static PrivacyReport privacy(const Params&) { return PrivacyReport{}; }

    DPR_HD static std::uint64_t workspace(const Params& p) { return p.d; } // L_{t-1}

    template <class Team>
    DPR_HD static void init(const Params& p, const InstanceCtx&, Team& team, double* ws) {
        team.for_each(p.d, [&](std::uint32_t i) { ws[i] = 0.0; });
    }

    template <class Team>
    DPR_HD static RoundResult round(const Params& p, const InstanceCtx&, Team& team, double* ws, std::uint64_t,
                                    const double* loss) {
        double* L = ws;
        OnlineSoftmax sm;
        team.for_each(p.d, [&](std::uint32_t i) {
            const double li = loss[i];
            sm.push(-p.eta * L[i], li);
            L[i] += li;
        });
        const double e = sm.finish(team);
        return RoundResult{e, e};
    }
};

} // namespace dpr::learners
