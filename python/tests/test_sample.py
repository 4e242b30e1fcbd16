"""dpregret.sample against `dpregret sample`: the same draws bit for bit, the same meta, the same errors."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import dpregret

# (form, keyword arguments, the same as flags)
CASES = [
    ("laplace", dict(scale=2.0, n=5000, seed=3)),
    ("gaussian", dict(scale=0.5, n=5000)),
    ("exponential", dict(scale=1.5, n=3000, seed=9)),
    ("gumbel", dict(scale=1.0, loc=-2.5, n=3000)),
    ("gamma", dict(shape=0.3, scale=2.0, n=3000)),
    ("tree", dict(variant="binary", noise="gaussian", scale=1.0, T=100, n=50)),
    ("prefix", dict(mechanism="honaker", noise="laplace", scale=1.0, T=64, n=20, seed=4)),
    ("prefix", dict(mechanism="blt", noise="gaussian", scale=1.0, T=128, n=20, buffers=3)),
    ("expmech", dict(c=0.5, d=300, n=4000)),
]


def flags(kwargs: dict) -> list[str]:
    out = []
    for k, v in kwargs.items():
        out += ["--" + k, repr(v) if isinstance(v, float) else str(v)]
    return out


@pytest.mark.parametrize("form, kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_draws_are_the_commands_bit_for_bit(form, kwargs, cli, tmp_path):
    done = cli("sample", form, *flags(kwargs), "--out", str(tmp_path / "x.npy"))
    assert done.returncode == 0, done.stderr
    expected = np.load(tmp_path / "x.npy")
    got = dpregret.sample(form, **kwargs)
    assert got.shape == expected.shape and got.dtype == np.float64
    np.testing.assert_array_equal(got.view(np.uint64), expected.view(np.uint64))


def test_the_first_rows_do_not_depend_on_n():
    a = dpregret.sample("laplace", scale=1.0, n=10, seed=5)
    b = dpregret.sample("laplace", scale=1.0, n=1000, seed=5)
    np.testing.assert_array_equal(a, b[:10])
    assert not np.array_equal(a, dpregret.sample("laplace", scale=1.0, n=10, seed=6))


def test_prefix_meta_is_the_commands(cli, tmp_path):
    kw = dict(mechanism="blt", noise="gaussian", scale=2.0, T=256, n=4)
    done = cli("sample", "prefix", *flags(kw), "--out", str(tmp_path / "z.npy"), "--meta", str(tmp_path / "m.json"))
    assert done.returncode == 0, done.stderr
    z, meta = dpregret.sample("prefix", meta=True, **kw)
    assert meta == json.loads((tmp_path / "m.json").read_text())
    assert meta["mechanism"] == "blt" and len(meta["variance"]) == 256
    np.testing.assert_array_equal(z, np.load(tmp_path / "z.npy"))


def test_scores_from_an_array_equal_scores_from_a_file(tmp_path):
    scores = np.array([3.0, 0.0, 1.0, 7.5, 0.0])
    np.save(tmp_path / "s.npy", scores)
    a = dpregret.sample("expmech", c=2.0, scores=scores, n=2000, seed=1)
    b = dpregret.sample("expmech", c=2.0, scores=tmp_path / "s.npy", n=2000, seed=1)
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, 1.0, 2.0, 3.0, 4.0}
    # c = inf: uniform over the minimisers (indices 1 and 4)
    assert set(np.unique(dpregret.sample("expmech", c=float("inf"), scores=scores, n=500))) == {1.0, 4.0}


@pytest.mark.parametrize("form, kwargs, message", [
    ("laplace", dict(scale=-1.0, n=10), "--scale must be a finite number > 0 (got -1.0)"),
    ("laplace", dict(n=10), "missing --scale"),
    ("laplace", dict(scale=1.0, n=0), "--n must be an integer in [1, 4294967295] (got 0)"),
    ("gamma", dict(scale=1.0, n=10), "missing --shape"),
    ("prefix", dict(mechanism="blt", scale=1.0, T=10, n=1), "--mechanism blt needs --noise gaussian"),
    ("tree", dict(variant="nope", scale=1.0, T=10, n=1), "--variant must be one of: padded, binary, honaker"),
    ("expmech", dict(c=1.0, n=10), "missing --d or --scores"),
    ("laplace", dict(scale=1e308, n=10), "larger values give draws beyond the largest double"),
])
def test_bad_values_are_the_commands_errors(form, kwargs, message, cli, tmp_path):
    with pytest.raises(dpregret.ConfigError) as err:
        dpregret.sample(form, **kwargs)
    assert message in str(err.value)
    done = cli("sample", form, *flags(kwargs), "--out", str(tmp_path / "x.npy"))
    assert done.returncode == 2 and str(err.value) in done.stderr


def test_numpy_scalars_are_their_values():
    # np.float64 is a float whose repr is "np.float64(2.0)": the flag must be the number's text.
    a = dpregret.sample("laplace", scale=np.sqrt(np.float64(2.0)), n=50, seed=np.int64(3))
    np.testing.assert_array_equal(a, dpregret.sample("laplace", scale=2.0 ** 0.5, n=50, seed=3))


def test_other_bad_calls():
    with pytest.raises(dpregret.ConfigError, match=r"--T is not a flag of sample laplace \(its flags: --scale"):
        dpregret.sample("laplace", scale=1.0, n=10, T=5)
    with pytest.raises(dpregret.ConfigError, match="--sclae is not a flag of sample expmech"):
        dpregret.sample("expmech", c=1.0, d=4, n=10, sclae=1.0)
    with pytest.raises(dpregret.ConfigError, match="DISTRIBUTION must be one of: laplace"):
        dpregret.sample("laplacian", scale=1.0, n=10)
    with pytest.raises(dpregret.ConfigError, match="meta=True is a parameter of sample"):
        dpregret.sample("laplace", scale=1.0, n=10, meta=True)
    with pytest.raises(TypeError, match="scale must be a number"):
        dpregret.sample("laplace", scale=[1.0], n=10)
    with pytest.raises(dpregret.ConfigError, match="this sample needs about .* of memory"):
        dpregret.sample("tree", scale=1.0, T=4294967295, n=4294967295)


def test_draws_above_the_address_space_limit_are_refused_naming_it():
    # 2^31 draws (16 GiB) may fit in what the machine has free, but not under a 3 GiB RLIMIT_AS (ulimit -v): the
    # package's check follows the run's rule and refuses them naming the limit, instead of a MemoryError.
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); import dpregret\n"
            "try:\n    dpregret.sample('laplace', scale=1.0, n=2**31)\n"
            "except dpregret.ConfigError as e:\n    print('refused:', e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "refused: this sample needs about 16 GiB of memory" in done.stdout and "RLIMIT_AS" in done.stdout, done.stdout
