"""Privacy tests for learners written anywhere (docs/PYTHON.md "Auditing your own learner").

    from dpregret.testing import assert_private

    def test_my_learner_is_private():
        assert_private(lambda seed, losses: my_learner(seed, losses, epsilon=1.0),
                       d, d_prime, epsilon=1.0, trials=100_000)

assert_private runs the user's learner `trials` times on a loss sequence `d` and as many times on its neighbour
`d_prime`, each run with its own seed, and audits the two samples of the statistic it returns with dpregret's
auditor (dpregret.audit_samples: an event chosen on a selection share, counted on the rest, a Clopper-Pearson lower
bound). It fails (AssertionError) when the lower bound exceeds the claimed epsilon (or mu): evidence, at the stated
confidence, that the learner is not as private as it claims. Passing is not a proof of privacy; it says that this
pair and this statistic show nothing at this many trials.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import AuditResult, audit_samples

__all__ = ["assert_private"]


def assert_private(fn: Callable[[int, Any], float], d: Any, d_prime: Any, *, epsilon: float | None = None,
                   delta: float | None = None, mu: float | None = None, trials: int = 100_000, seed: int = 0,
                   alpha: float = 1e-3, out: str | None = None) -> AuditResult:
    """Audits `fn` on the neighbouring inputs `d`, `d_prime` and raises AssertionError on a violation.

    fn(seed, losses) -> float: the user's learner run once with randomness from `seed` on `losses`, returning a
    statistic of what it releases (for example the sum of its charged losses over the rounds after the one where
    d and d_prime differ). It must be the same function of the releases on both inputs, and must draw all of its
    randomness from `seed`. Run i on d gets seed `seed * 2 * trials + i`, on d_prime `seed * 2 * trials + trials +
    i`: every run has its own, and the audit is reproducible.
    epsilon, delta, mu, out: as for dpregret.audit_samples. alpha: 1 - the confidence of the bound, 1e-3 here (0.05
    for audit_samples): a test suite must not fail a correct learner whose claim is tight on the pair one seed in
    twenty; at 1e-3 that is at most one seed in a thousand, and a bug that doubles eps is still caught. Returns the
    AuditResult when it passes.
    """
    if not isinstance(trials, (int, np.integer)) or isinstance(trials, bool) or trials < 10:
        raise ValueError(f"assert_private: trials must be an integer >= 10 (got {trials!r})")
    base = int(seed) * 2 * int(trials)
    a = np.fromiter((fn(base + i, d) for i in range(trials)), dtype=np.float64, count=trials)
    b = np.fromiter((fn(base + trials + i, d_prime) for i in range(trials)), dtype=np.float64, count=trials)
    result = audit_samples(a, b, epsilon=epsilon, delta=delta, mu=mu, alpha=alpha, out=out)
    if result.verdict != "consistent":
        raise AssertionError(f"assert_private: {result} ({trials} trials per side, seed {seed})")
    return result
