#pragma once
// [audit] weights = "fitted" (docs/AUDITS.md "Fitted weights"; issue 49, item 1, its general fallback): the
// statistic is w . c, c the per-round charged losses over the rounds R, with w Fisher's discriminant direction
// fitted on the selection shares of the two sides:
//     w = (S + lambda I)^-1 (mean_0 - mean_1),   S = (S_0 + S_1) / 2 the pooled sample covariance,
// lambda = 1e-9 tr(S) / p + 1e-300 (a ridge that keeps S + lambda I positive definite when a round's charge is constant;
// it moves w by a relative ~1e-9 otherwise). For two Gaussian clouds with a common covariance this is the
// Neyman-Pearson direction; otherwise it is the best linear one by Fisher's criterion. The direction depends on the
// selection shares only, which the evaluation counts never see, so the bound keeps its confidence.
#include <cstddef>
#include <vector>

namespace dpr::audit {

/// Fisher's direction (see the header) from two samples of p-vectors, a and b row-major (n_a x p, n_b x p; each
/// n >= 2). When it is not finite or all zero (equal means, a constant sample) the plain sum: w = (1, ..., 1).
std::vector<double> fisher_direction(const std::vector<double>& a, const std::vector<double>& b, std::size_t p);

} // namespace dpr::audit
