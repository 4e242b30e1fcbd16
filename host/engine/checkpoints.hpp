#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

namespace dpr {

/// Log-spaced checkpoints t_k = ceil(T^{k/n}), k = 1..n, deduplicated; always ends with T.
inline std::vector<std::uint64_t> log_checkpoints(std::uint64_t T, std::uint32_t n) {
    std::vector<std::uint64_t> c;
    for (std::uint32_t k = 1; k <= n; ++k) {
        const double x = std::pow(static_cast<double>(T), static_cast<double>(k) / n);
        std::uint64_t t = static_cast<std::uint64_t>(std::ceil(x - 1e-9));
        if (t < 1) t = 1;
        if (t > T) t = T;
        if (c.empty() || t > c.back()) c.push_back(t);
    }
    if (c.empty() || c.back() != T) c.push_back(T);
    return c;
}

} // namespace dpr
