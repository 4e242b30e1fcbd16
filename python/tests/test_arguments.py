"""Bad arguments of every public function and method: the package's ConfigError (a ValueError), a TypeError or an
IndexError with a sentence that names the argument and what it accepts -- never the extension module's
"incompatible function arguments" listing of C++ signatures."""
from __future__ import annotations

import numpy as np
import pytest

import dpregret

AUDIT = {"run": {"instances": 200, "rounds": 2},
         "adversary": {"kind": "file", "losses": np.array([[0.0, 1.0], [1.0, 0.0]])},
         "learner": {"algorithm": "dp-ftrl-experts", "epsilon": 1, "mechanism": "binary"},
         "audit": {"round": 1, "rounds": [2]}}

# (keyword arguments of run() and audit(), the exception, what its message says)
BAD = [
    (dict(memory_limit=10**9), TypeError, r'memory_limit must be a str: "auto", "none" or a size such as "8G".*'
                                          r"\(got int 1000000000\)"),
    (dict(memory_limit=None), TypeError, r"memory_limit must be a str.*\(got NoneType None\)"),
    (dict(memory_limit="lots"), dpregret.ConfigError, r'memory_limit must be "auto", "none" or a size such as '
                                                      r'"512M".*\(got "lots"\)'),
    (dict(backend=1), TypeError, r'backend must be "auto", "cpu" or "cuda" \(got int\)'),
    (dict(backend="tpu"), dpregret.ConfigError, r'backend must be "auto", "cpu" or "cuda" \(got "tpu"\)'),
    (dict(out=5), TypeError, r"out must be a path: a str or an os.PathLike such as pathlib.Path \(got int\)"),
    (dict(set=5), TypeError, r'set must be a dict \{"section.key": value\} or a list of "section.key=VALUE" strings '
                             r"\(got int\)"),
    (dict(set=[5]), TypeError, r"set: a list of overrides holds 'section.key=VALUE' strings \(got int\)"),
    (dict(threads="2"), dpregret.ConfigError, r"threads must be an integer in 1..4096 \(got '2'\)"),
    (dict(threads=1.0), dpregret.ConfigError, r"threads must be an integer in 1..4096 \(got 1.0\)"),
    (dict(threads=True), dpregret.ConfigError, r"threads must be an integer in 1..4096 \(got True\)"),
]


def _raw(e: BaseException) -> bool:
    return "incompatible function arguments" in str(e) or "Invoked with types" in str(e)


@pytest.mark.parametrize("fn", ["run", "audit"])
@pytest.mark.parametrize("kwargs, error, message", BAD, ids=[str(b[0]) for b in BAD])
def test_bad_arguments_of_run_and_audit(fn, kwargs, error, message, small_toml):
    config = small_toml if fn == "run" else AUDIT
    with pytest.raises(error, match=message) as e:
        getattr(dpregret, fn)(config, progress=False, **kwargs)
    assert not _raw(e.value)


@pytest.mark.parametrize("losses, error, message", [
    (None, TypeError, r"\[adversary\] losses must be a \(T, d\) array of numbers \(got NoneType of object\); a loss "
                      r"file is given as \[adversary\] path"),
    (np.array([["a", "b"], ["c", "d"]]), TypeError,
     r"losses must be a \(T, d\) array of numbers \(got ndarray of <U1\)"),
    ("losses.npy", TypeError, r"losses must be a \(T, d\) array of numbers \(got str of <U10\)"),
    ([[0.5, 0.5], [0.5]], TypeError, r"losses must be a \(T, d\) array of numbers \(got list\)"),
    (np.ones((2, 2), dtype=complex), TypeError,
     r"losses must be a \(T, d\) array of numbers \(got ndarray of complex128"),
    (0.5, dpregret.ConfigError, r"\[adversary\] losses must be a \(T, d\) array \(got shape \(\)\)"),
    (np.ones(2), dpregret.ConfigError, r"\[adversary\] losses must be a \(T, d\) array \(got shape \(2,\)\)"),
])
def test_losses_that_are_not_a_matrix_of_numbers(losses, error, message):
    with pytest.raises(error, match=message) as e:
        dpregret.run({"run": {"instances": 2, "rounds": 2}, "adversary": {"kind": "file", "losses": losses},
                      "learner": {"algorithm": "hedge"}}, progress=False)
    assert not _raw(e.value)


def test_numpy_integers_are_integers(small_toml):
    r = dpregret.run(small_toml, threads=np.int64(1), progress=False)
    np.testing.assert_array_equal(r.regret(np.int64(2)), r.regret(2))
    np.testing.assert_array_equal(r.checkpoints(np.uint8(1)), r.checkpoints(1))


def test_bad_arguments_of_result_methods(small_toml):
    r = dpregret.run(small_toml, progress=False)  # 3 points
    for method in (r.regret, r.checkpoints):
        for point in (-1, 3, 10**30):
            with pytest.raises(IndexError, match=rf"point {point} is not in 0..2: the run has 3 point\(s\)") as e:
                method(point)
            assert not _raw(e.value)
        for point in ("0", 1.0, None, True):
            with pytest.raises(TypeError, match=rf"point must be an int, a point's index in 0..2 "
                                                rf"\(got {type(point).__name__}\)") as e:
                method(point)
            assert not _raw(e.value)
    for directory in (None, 3, ["o"]):
        with pytest.raises(TypeError, match=rf"directory must be a path: a str or an os.PathLike .*"
                                            rf"\(got {type(directory).__name__}\)") as e:
            r.save(directory)
        assert not _raw(e.value)


def test_bad_arguments_of_audit_result_methods():
    a = dpregret.audit(AUDIT, progress=False)
    with pytest.raises(TypeError, match=r"directory must be a path: .*\(got int\)") as e:
        a.save(7)
    assert not _raw(e.value)


def test_audit_flags_are_booleans():
    # allow_planted="no" is a truthy string: taken as True it would plant the bug the user meant to refuse.
    for name in ("allow_planted", "statistic"):
        with pytest.raises(TypeError, match=rf"audit: {name} must be True or False \(got 'no'\)"):
            dpregret.audit(AUDIT, progress=False, **{name: "no"})
    assert dpregret.audit(AUDIT, progress=False, allow_planted=np.bool_(False)).verdict == "consistent"


def test_bad_arguments_of_sample_and_keys():
    with pytest.raises(TypeError, match=r"sample: form must be a str \(got int\)"):
        dpregret.sample(3, scale=1.0, n=10)
    with pytest.raises(TypeError, match=r"sample: n must be a number or a name \(got NoneType\)"):
        dpregret.sample("laplace", scale=1.0, n=None)
    with pytest.raises(TypeError, match=r"sample: seed takes a number or a name, not a bool"):
        dpregret.sample("laplace", scale=1.0, n=10, seed=True)
    with pytest.raises(TypeError, match=r"sample: scores must be a 1-d array of numbers or a path") as e:
        dpregret.sample("expmech", c=1.0, scores=["x", "y"], n=10)
    assert not _raw(e.value)
    with pytest.raises(dpregret.ConfigError, match=r"--n must be an integer in \[1, 4294967295\] \(got -1\)"):
        dpregret.sample("laplace", scale=1.0, n=-1)
    with pytest.raises(TypeError, match=r"keys: algorithm must be a learner's or an adversary kind's name, a str "
                                        r"\(got int\)") as e:
        dpregret.keys(5)
    assert not _raw(e.value)
