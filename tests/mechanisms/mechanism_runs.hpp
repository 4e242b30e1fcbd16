#pragma once
// Repeated runs of the privacy mechanisms that both their own statistical tests (test_sparse_exponential.cpp) and
// the audits of tests/audit/ sample: the exponential mechanism's draws and AboveThreshold's halting index on the
// neighbouring query streams of docs/spec/checks.md §3.1.
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/core/team.hpp"
#include "kernels/mechanisms/above_threshold.hpp"
#include "kernels/mechanisms/exponential.hpp"

namespace dpr::test {

/// n draws of the exponential mechanism Pr[i] ∝ exp(-c s(i)) (draw r at round r, instance 0).
inline std::vector<std::uint32_t> exp_mech_draws(const std::vector<double>& s, double c, std::uint32_t n,
                                                 std::uint32_t seed) {
    const SerialTeam<double> team{RngKey{seed, 0}, 0};
    std::vector<std::uint32_t> out(n);
    for (std::uint32_t r = 0; r < n; ++r) {
        mech::ExpMechDraw draw;
        draw.round = r;
        out[r] = mech::exponential_mechanism(team, static_cast<std::uint32_t>(s.size()), c, draw,
                                             [&](std::uint32_t j) { return s[j]; });
    }
    return out;
}

/// The halting index (1..m, m + 1 = never) of one AboveThreshold run over the queries q (asked at rounds 1..m).
inline std::uint32_t halt_index(mech::AboveThreshold& svt, double tau, const std::vector<double>& q) {
    svt.start(tau, 0);
    for (std::uint32_t i = 0; i < q.size(); ++i)
        if (svt.add_query(q[i], i + 1)) return i + 1;
    return static_cast<std::uint32_t>(q.size()) + 1;
}

/// Halting indices of `runs` AboveThreshold runs (eps, sensitivity 1, threshold 0; run k is instance k) over q;
/// `planted`: the threshold is not noised (the variant that is not eps-DP).
inline std::vector<std::uint32_t> halting_indices(double eps, const std::vector<double>& q, std::uint32_t runs,
                                                  std::uint32_t seed, bool planted) {
    std::vector<std::uint32_t> h(runs);
    mech::AboveThreshold svt;
    svt.key = RngKey{seed, 0};
    svt.scales = mech::svt_scales(eps, 1.0);
    svt.variant_no_threshold_noise = planted;
    for (std::uint32_t k = 0; k < runs; ++k) {
        svt.instance = k;
        h[k] = halt_index(svt, 0.0, q);
    }
    return h;
}

/// Queries 0, ..., 0, 100 (one far above the threshold 0; m of them) and the neighbouring stream shifted by the
/// sensitivity, q - 1.
inline std::pair<std::vector<double>, std::vector<double>> neighbouring_svt_queries(std::uint32_t m) {
    std::vector<double> q(m, 0.0), q2(m, -1.0);
    q[m - 1] = 100.0;
    q2[m - 1] = 99.0;
    return {q, q2};
}

} // namespace dpr::test
