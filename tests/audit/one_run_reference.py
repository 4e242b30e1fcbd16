#!/usr/bin/python3
"""Reference values for tests/audit/test_one_run.cpp OneRunBound.MatchesTheAuthorsFormula: the p-value of Steinke,
Nasr & Jagielski (NeurIPS 2023), Theorem 3, as their paper's appendix evaluates it, and eps_lb by bisection, with
SciPy's binomial (Debian's python3-scipy: run with /usr/bin/python3). An implementation independent of dpregret's
(host/audit/one_run.cpp uses Boost's incomplete beta and a log-space sum)."""
import math

import scipy.stats


def p_value(m, r, v, eps, delta):
    q = 1.0 / (1.0 + math.exp(-eps))
    tail = scipy.stats.binom.sf(v - 1, r, q)  # P[Bin(r, q) >= v]
    best, below = 0.0, 0.0
    for i in range(1, v + 1):  # max_i P[v - i <= Bin < v] / i
        below += scipy.stats.binom.pmf(v - i, r, q)
        best = max(best, below / i)
    return min(1.0, tail + 2.0 * m * delta * best)


def eps_lb(m, r, v, delta, alpha):
    lo, hi = 0.0, 1.0
    while p_value(m, r, v, hi, delta) < alpha:
        hi += 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if p_value(m, r, v, mid, delta) < alpha else (lo, mid)
    return lo


if __name__ == "__main__":
    cases = [(1000, 600, 600, 1e-5), (1000, 100, 100, 0.0), (100000, 2000, 1500, 0.0), (100000, 2000, 1500, 1e-6),
             (1000000, 10000, 6000, 1e-7), (5000, 5000, 2600, 0.0), (1000000, 1000, 1000, 1e-6),
             (1000000, 1000, 900, 1e-6), (1000000, 1000, 900, 0.0)]
    for m, r, v, delta in cases:
        print(m, r, v, delta, repr(eps_lb(m, r, v, delta, 0.05)), repr(p_value(m, r, v, 1.0, delta)))
