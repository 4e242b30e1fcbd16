"""dpregret.audit_samples against `dpregret audit-samples`, and dpregret.testing.assert_private (issue 50, item 2)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import dpregret
from dpregret.testing import assert_private


def test_audit_samples_is_the_commands(tmp_path, cli):
    rng = np.random.default_rng(1)
    a, b = rng.normal(1.0, 1.0, 200000), rng.normal(0.0, 1.0, 200000)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    done = cli("audit-samples", "a.npy", "b.npy", "--mu", "1", "--out", "cli", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    r = dpregret.audit_samples(a, b, mu=1.0, out=tmp_path / "py")
    assert (tmp_path / "py" / "privacy_region.csv").read_bytes() == (tmp_path / "cli" / "privacy_region.csv").read_bytes()
    mine, theirs = (json.loads((tmp_path / d / "audit.json").read_text()) for d in ("py", "cli"))
    for j in (mine, theirs):
        del j["timing"], j["samples"]
    assert mine == theirs
    assert str(r) == done.stdout.strip()
    # A shift of 1 with unit variance is exactly 1-GDP.
    assert r.verdict == "consistent" and 0.95 < r.mu_lb <= 1.0
    assert r.trials == 200000 and r.event["n_numerator"] == 160000
    assert set(r.region) == {"threshold", "base_ge", "neighbour_ge", "base_le", "neighbour_le",
                             "f_base_ge", "f_neighbour_ge", "f_base_le", "f_neighbour_le"}
    assert r.fdp["verdict"] == "consistent" and r.fdp["claim"].startswith("G_mu") and r.fdp == r.info["fdp"]
    assert dpregret.audit_samples(a, b, mu=0.9).verdict == "VIOLATION"
    assert r.curve["verdict"] == "consistent" and len(r.curve["points"]) == 9
    half = dpregret.audit_samples(rng.normal(2.0, 1.0, 200000), b, mu=1.0)  # half the noise: mu = 2
    assert half.curve["verdict"] == "VIOLATION" and "the (eps, delta) curve exceeds the claim" in str(half)
    assert half.fdp["verdict"] == "VIOLATION" and "falls below the claimed trade-off curve" in str(half)


def test_the_same_sample_twice_gives_zero_and_lists_are_accepted():
    x = list(np.random.default_rng(2).laplace(0.0, 1.0, 5000))
    r = dpregret.audit_samples(x, x, epsilon=1.0)
    assert r.epsilon_lb == 0.0 and r.verdict == "consistent"


def test_bad_samples_are_refused_naming_them():
    good = np.zeros(100)
    with pytest.raises(dpregret.ConfigError, match="needs the claim"):
        dpregret.audit_samples(good, good)
    with pytest.raises(dpregret.ConfigError, match="shape"):
        dpregret.audit_samples(np.zeros((10, 10)), good, epsilon=1)
    bad = np.zeros(100)
    bad[7] = np.nan
    with pytest.raises(dpregret.ConfigError, match="sample B value 7 .* is nan"):
        dpregret.audit_samples(good, bad, epsilon=1)
    with pytest.raises(dpregret.ConfigError, match="epsilon must be > 0"):
        dpregret.audit_samples(good, good, epsilon=0)
    with pytest.raises(dpregret.ConfigError, match="selection"):
        dpregret.audit_samples(good, good, epsilon=1, selection=1.0)
    with pytest.raises(TypeError, match="real numbers"):
        dpregret.audit_samples(["x"] * 10, good, epsilon=1)


def laplace_release(seed, value, scale):
    """A counting query released with Laplace noise: (1/scale)-DP for neighbours differing by 1."""
    return value + np.random.default_rng(seed).laplace(0.0, scale)


def test_assert_private_passes_a_private_mechanism_and_fails_a_planted_bug():
    r = assert_private(lambda s, v: laplace_release(s, v, 1.0), 0.0, 1.0, epsilon=1.0, trials=20000)
    assert r.verdict == "consistent" and r.epsilon_lb > 0.5
    with pytest.raises(AssertionError, match="VIOLATION"):
        assert_private(lambda s, v: laplace_release(s, v, 0.5), 0.0, 1.0, epsilon=1.0, trials=20000)
    with pytest.raises(ValueError, match="trials"):
        assert_private(lambda s, v: 0.0, 0.0, 1.0, epsilon=1.0, trials=3)
