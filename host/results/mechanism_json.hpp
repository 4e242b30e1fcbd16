#pragma once
// The parameters of a noisy-prefix mechanism as JSON (docs/MECHANISMS.md §3.5), one form for run.json's "privacy"
// and for `dpregret sample prefix --meta`: buffers, theta, omega (the BLT C), inverse_theta, inverse_omega (C^-1),
// the same near 1 as one_minus_theta / one_minus_inverse_theta (full digits), and fitted_steps (the table entry's
// n). Null values for the tree mechanisms, which have no buffers.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/mechanisms/blt.hpp"

namespace dpr {

inline void put_blt_json(nlohmann::json& j, const mech::BltNoise& m) {
    if (m.buffers == 0) {
        for (const char* k : {"buffers", "theta", "omega", "inverse_theta", "inverse_omega", "one_minus_theta",
                              "one_minus_inverse_theta", "fitted_steps"})
            j[k] = nullptr;
        return;
    }
    std::vector<double> theta, omega, inv_theta, inv_omega, u, mu;
    for (std::uint32_t b = 0; b < m.buffers; ++b) {
        theta.push_back(1.0 - m.u[b]);
        omega.push_back(m.omega[b]);
        inv_theta.push_back(1.0 - m.inv_mu[b]);
        inv_omega.push_back(m.inv_omega[b]);
        u.push_back(m.u[b]);
        mu.push_back(m.inv_mu[b]);
    }
    j["buffers"] = m.buffers;
    j["theta"] = theta;
    j["omega"] = omega;
    j["inverse_theta"] = inv_theta;
    j["inverse_omega"] = inv_omega;
    j["one_minus_theta"] = u;
    j["one_minus_inverse_theta"] = mu;
    j["fitted_steps"] = std::uint64_t{1} << m.fitted_log2;
}

} // namespace dpr
