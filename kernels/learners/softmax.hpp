#pragma once
// One-pass ("online") softmax expectation (Milakov & Gimelshein 2018): for scores v_i and losses
// l_i, computes sum_i softmax(v)_i l_i while streaming over i once, keeping a running max so that
// exp never overflows whatever the noise scale (ALGORITHMS.md §5 "always subtract the max").
// Each team lane streams its share of coordinates; finish() combines the lanes.
#include <cmath>

#include "kernels/core/hd.hpp"
#include "kernels/core/params.hpp"

namespace dpr::learners {

struct OnlineSoftmax {
    double m = -kInf; ///< running max of the scores
    double s = 0.0;   ///< sum of exp(v_i - m)
    double wl = 0.0;  ///< sum of exp(v_i - m) l_i

    DPR_HD DPR_FORCEINLINE void push(double v, double l) {
        if (v > m) {
            const double r = std::exp(m - v); // 0 on the first push (m = -inf)
            s = s * r + 1.0;
            wl = wl * r + l;
            m = v;
        } else {
            const double w = std::exp(v - m);
            s += w;
            wl += w * l;
        }
    }

    /// sum_i softmax(v)_i l_i over all lanes of the team.
    template <class Team>
    DPR_HD double finish(Team& team) const {
        const double M = team.max(m);
        const double r = (m == -kInf) ? 0.0 : std::exp(m - M);
        const double S = team.sum(s * r);
        const double WL = team.sum(wl * r);
        return WL / S;
    }
};

} // namespace dpr::learners
