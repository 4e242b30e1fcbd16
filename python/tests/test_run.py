"""dpregret.run against the `dpregret run` command: the same files byte for byte, the arrays equal to them, every
way of giving a config, in-memory losses, the errors, warnings and the optional dependencies."""
from __future__ import annotations

import csv
import pathlib
import sys
import tomllib
import warnings

import numpy as np
import pytest

import dpregret

# Learners of every family the CLI-equality test covers: experts (tree noise and Hedge), a bandit, an OLO learner on
# the ball, the sparse-vector learner, a bandit convex learner on a polytope.
CASES = {
    "experts": ("experiments/quickstart.toml", ["run.instances=40", "run.rounds=300"]),
    "bandit": ("experiments/as17_mab.toml", ["run.instances=30", "run.rounds=2000", "adversary.d=4"]),
    "ball": ("experiments/as17_fullinfo_sphere.toml", ["run.instances=20", "run.rounds=400"]),
    "svt": ("experiments/afkt23_tree.toml", ["run.instances=10", "run.rounds=512", "adversary.d=64"]),
    "polytope": ("experiments/env21_convex.toml", ["run.instances=8", "run.rounds=256"]),
}


def read_final(path: pathlib.Path) -> dict[str, list[str]]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return {name: [r[j] for r in rows[1:]] for j, name in enumerate(rows[0])}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_files_are_the_commands_byte_for_byte(case, cli, repo, tmp_path):
    config, sets = CASES[case]
    args = ["run", str(repo / config), "--out", str(tmp_path / "cli"), "--quiet", "--backend", "cpu"]
    for s in sets:
        args += ["--set", s]
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpregret.DPRegretWarning)
        r = dpregret.run(repo / config, set=sets, backend="cpu", progress=False)
    r.save(tmp_path / "py")
    for name in ("summary.csv", "final_regret.csv"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name

    # The arrays are the files' numbers: final_regret (points, instances) in file order, shortest round-trip text.
    cols = read_final(tmp_path / "cli" / "final_regret.csv")
    P, N = r.final_regret.shape
    assert P == len(r.points) and P * N == len(cols["regret"])
    np.testing.assert_array_equal(r.final_regret.ravel(), np.array(cols["regret"], dtype=float))
    np.testing.assert_array_equal(r.realized_regret.ravel(), np.array(cols["realized_regret"], dtype=float))
    assert list(r.diagnostics) == list(cols)[4:]
    for name, values in r.diagnostics.items():
        expected = np.array([float(v) if v else np.nan for v in cols[name]])
        np.testing.assert_array_equal(values.ravel(), expected)
    # The last checkpoint of every point's regret matrix is its final regret.
    for p in range(P):
        m = r.regret(p)
        assert m.shape == (N, len(r.checkpoints(p)))
        assert r.checkpoints(p)[-1] == r.points[p]["T"]
        np.testing.assert_array_equal(m[:, -1], r.final_regret[p])


def test_dict_toml_text_and_path_are_one_config(small_toml, tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(small_toml)
    as_dict = tomllib.loads(small_toml)
    runs = [dpregret.run(c, progress=False) for c in (path, str(path), small_toml, as_dict)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.final_regret, runs[0].final_regret)
    # Hedge has no epsilon: the sweep gives it one point (docs/CONFIG.md, "Sweeping `algorithm` or `kind`"), DP-FTRL two.
    assert runs[0].final_regret.shape == (3, 64)
    assert [p["algorithm"] for p in runs[0].points] == ["hedge", "dp-ftrl-experts", "dp-ftrl-experts"]


def test_overrides_as_a_dict_or_strings(small_toml):
    a = dpregret.run(small_toml, set={"learner.epsilon": [1.0], "run.instances": 16}, progress=False)
    b = dpregret.run(small_toml, set=["learner.epsilon=[1.0]", "run.instances=16"], progress=False)
    np.testing.assert_array_equal(a.final_regret, b.final_regret)
    assert a.final_regret.shape == (2, 16)
    assert a.points[1]["settings"]["learner.epsilon"] == "1"


def test_the_threads_do_not_change_the_results(small_toml):
    one = dpregret.run(small_toml, threads=1, progress=False)
    two = dpregret.run(small_toml, threads=2, progress=False)
    np.testing.assert_array_equal(one.final_regret, two.final_regret)


def test_the_privacy_and_run_info_are_run_jsons(small_toml, tmp_path):
    r = dpregret.run(small_toml, progress=False, out=tmp_path / "o")
    import json
    saved = json.loads((tmp_path / "o" / "run.json").read_text())
    assert [p["privacy"] for p in r.points] == [p["privacy"] for p in saved["points"]]
    assert [p["epsilon"] for p in r.privacy] == [float(p["privacy"]["epsilon"]) for p in saved["points"]]
    assert r.privacy[0]["epsilon"] == float("inf")  # Hedge: no privacy (run.json: "inf")
    dp = [i for i, p in enumerate(r.points) if p["algorithm"] == "dp-ftrl-experts"]
    assert [r.privacy[i]["epsilon"] for i in dp] == [0.5, 5.0]
    assert r.run_info["config"]["resolved_toml"] == saved["config"]["resolved_toml"]
    assert r.run_info["dpregret"]["version"] == dpregret.__version__


def test_losses_from_memory_equal_the_same_losses_from_a_file(cli, tmp_path):
    rng = np.random.default_rng(3)
    losses = rng.random((200, 5))
    np.save(tmp_path / "l.npy", losses)
    base = {"run": {"seed": 1, "instances": 12, "rounds": 200},
            "learner": {"algorithm": "dp-ftrl-experts", "epsilon": 2.0}}
    mem = dpregret.run({**base, "adversary": {"kind": "file", "losses": losses}}, progress=False)
    filed = dpregret.run({**base, "adversary": {"kind": "file", "path": str(tmp_path / "l.npy")}}, progress=False)
    np.testing.assert_array_equal(mem.final_regret, filed.final_regret)
    # A Fortran-ordered or float32 array is the same losses.
    fort = dpregret.run({**base, "adversary": {"kind": "file", "losses": np.asfortranarray(losses)}}, progress=False)
    np.testing.assert_array_equal(fort.final_regret, filed.final_regret)
    with pytest.raises(dpregret.ConfigError, match=r"losses must be a \(T, d\) array"):
        dpregret.run({**base, "adversary": {"kind": "file", "losses": losses[0]}}, progress=False)
    with pytest.raises(dpregret.ConfigError, match="row 3"):
        bad = losses.copy()
        bad[2, 1] = 1.5
        dpregret.run({**base, "adversary": {"kind": "file", "losses": bad}}, progress=False)


def test_losses_from_memory_are_read_in_place():
    # A 512 MiB float64 array: a copy anywhere (a temporary file read back, a std::vector) would raise the peak
    # resident memory by at least that much; the engine's loss chunks add about 100 MiB.
    script = """
import resource, sys, numpy as np, dpregret
T, d = 1 << 16, 1024
losses = np.full((T, d), 0.25)
losses[::7, ::3] = 0.75
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
r = dpregret.run({"run": {"instances": 1, "rounds": T, "checkpoints": 4},
                  "adversary": {"kind": "file", "losses": losses},
                  "learner": {"algorithm": "hedge"}}, backend="cpu", threads=1, progress=False)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(grown * 1024, losses.nbytes, r.final_regret[0, 0])
"""
    import subprocess
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    grown, nbytes, regret = done.stdout.split()
    assert np.isfinite(float(regret))
    assert int(grown) < 0.6 * int(nbytes), (int(grown) >> 20, "MiB more at peak for", int(nbytes) >> 20, "MiB")


@pytest.mark.parametrize("overrides, message", [
    (["learner.epsilom=1"], "epsilon"),                       # did-you-mean
    (["learner.epsilon=-1"], "epsilon"),                      # range
    (["run.rounds=0"], "rounds"),
    (["adversary.kind=\"nope\""], "kind"),
    (["run.instances"], "SECTION.KEY=VALUE"),
])
def test_bad_input_is_a_config_error_with_the_commands_message(small_toml, cli, tmp_path, overrides, message, capfd):
    cfg = tmp_path / "c.toml"
    cfg.write_text(small_toml)
    with pytest.raises(dpregret.ConfigError) as err:
        dpregret.run(cfg, set=overrides, progress=False)
    assert isinstance(err.value, ValueError)
    assert message in str(err.value)
    assert capfd.readouterr().err == ""  # the library prints nothing
    args = ["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"]
    for o in overrides:
        args += ["--set", o]
    done = cli(*args)
    assert done.returncode == 2
    assert str(err.value) in done.stderr  # the same message


def test_other_bad_calls(small_toml, tmp_path):
    with pytest.raises(dpregret.ConfigError, match="no such file|cannot open|not found|No such"):
        dpregret.run(tmp_path / "missing.toml", progress=False)
    with pytest.raises(dpregret.ConfigError, match="backend"):
        dpregret.run(small_toml, backend="tpu", progress=False)
    with pytest.raises(dpregret.ConfigError, match="threads"):
        dpregret.run(small_toml, threads=0, progress=False)
    with pytest.raises(TypeError, match="config must be"):
        dpregret.run(42, progress=False)
    with pytest.raises(TypeError, match=r"\[learner\] eta"):
        dpregret.run({"learner": {"eta": object()}}, progress=False)
    with pytest.raises(dpregret.ConfigError, match="line 2|:2:"):
        dpregret.run("[run]\ninstances = = 3\n", progress=False)
    r = dpregret.run(small_toml, set={"run.instances": 4}, progress=False)
    r.save(tmp_path / "o")
    with pytest.raises(dpregret.ConfigError, match="already holds"):
        r.save(tmp_path / "o")
    with pytest.raises(IndexError):
        r.regret(99)


def test_a_used_out_directory_is_refused_before_simulating(small_toml, tmp_path, monkeypatch):
    dpregret.run(small_toml, progress=False, out=tmp_path / "o")
    before = (tmp_path / "o" / "summary.csv").read_bytes()

    def simulated(*args, **kwargs):
        raise AssertionError("run(out=) simulated before refusing the directory")

    monkeypatch.setattr(dpregret, "_wait", simulated)
    with pytest.raises(dpregret.ConfigError, match="already holds run.json of a run"):
        dpregret.run(small_toml, progress=False, out=tmp_path / "o")
    assert (tmp_path / "o" / "summary.csv").read_bytes() == before


def test_save_takes_the_directory_lock_the_command_takes(small_toml, tmp_path):
    # A second process on the directory (here: the lock of docs/OUTPUTS.md held by another open file) is refused,
    # and nothing is written; once the lock is free, the save goes through.
    import fcntl
    r = dpregret.run(small_toml, progress=False)
    d = tmp_path / "o"
    d.mkdir()
    with open(d / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(dpregret.ConfigError, match="in use"):
            r.save(d)
        assert not (d / "run.json").exists() and not (d / "summary.csv").exists()
    r.save(d)
    assert (d / "run.json").exists() and not (d / ".lock").exists()


def test_a_path_with_an_equals_sign_is_a_path(small_toml, tmp_path):
    path = tmp_path / "eps=0.5.toml"
    path.write_text(small_toml)
    a = dpregret.run(str(path), progress=False)
    np.testing.assert_array_equal(a.final_regret, dpregret.run(small_toml, progress=False).final_regret)


def test_threads_beyond_the_commands_range_are_refused(small_toml):
    with pytest.raises(dpregret.ConfigError, match=r"threads must be an integer in 1..4096 \(got 5000\)"):
        dpregret.run(small_toml, threads=5000, progress=False)


def test_a_guarantee_above_the_request_is_a_warning():
    cfg = {"run": {"instances": 2, "rounds": 1024},
           "adversary": {"kind": "bco-linear", "set": "simplex", "d": 1024},
           "learner": {"algorithm": "private-bandit-fw", "epsilon": 1, "calibration": "paper"}}
    with pytest.warns(dpregret.DPRegretWarning, match=r"guarantees eps = 1.177 \(requested \[learner\] epsilon = 1\)"):
        r = dpregret.run(cfg, progress=False)
    assert r.privacy[0]["epsilon"] == pytest.approx(1.177, abs=1e-3)


def test_keys_are_the_list_keys_table():
    rows = dpregret.keys()
    ftrl = dpregret.keys("dp-ftrl-experts")
    assert {"section", "component", "key", "type", "default", "min", "max", "doc"} <= set(rows[0])
    eps = [r for r in ftrl if r["key"] == "epsilon"]
    assert len(eps) == 1 and eps[0]["type"] == "real" and eps[0]["min"] == 0 and eps[0]["min_exclusive"]
    assert {r["section"] for r in ftrl} == {"run", "learner"}
    assert any(r["key"] == "mechanism" and r["former_name"] == "tree" for r in ftrl)
    with pytest.raises(dpregret.ConfigError, match="no learner or adversary is called 'dp-frtl'"):
        dpregret.keys("dp-frtl")


def test_version_and_info():
    i = dpregret.info()
    assert dpregret.__version__ == i["version"]
    assert i["cpu_threads"] >= 1 and isinstance(i["cuda_compiled"], bool)


def test_summary_without_pandas_is_numpy_columns(small_toml, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    r = dpregret.run(small_toml, progress=False, out=tmp_path / "o")
    s = r.summary
    assert isinstance(s, dict)
    with open(tmp_path / "o" / "summary.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert list(s) == rows[0]
    np.testing.assert_array_equal(s["mean"], np.array([float(x[rows[0].index("mean")]) for x in rows[1:]]))
    assert s["t"].dtype == np.int64 and s["algorithm"][0] == "hedge"


def test_summary_with_pandas_is_a_dataframe(small_toml, tmp_path):
    pd = pytest.importorskip("pandas")
    r = dpregret.run(small_toml, progress=False, out=tmp_path / "o")
    assert isinstance(r.summary, pd.DataFrame)
    pd.testing.assert_frame_equal(r.summary, pd.read_csv(tmp_path / "o" / "summary.csv"))


def test_progress_bar_with_and_without_tqdm(small_toml, monkeypatch, capfd):
    pytest.importorskip("tqdm")
    dpregret.run(small_toml, progress=True)
    assert "dpregret run" in capfd.readouterr().err
    monkeypatch.setitem(sys.modules, "tqdm", None)
    dpregret.run(small_toml, progress=True)  # no bar and no error
    assert capfd.readouterr().err == ""


def test_other_python_threads_run_while_it_simulates(small_toml):
    # The GIL is released while the engine simulates: a Python thread counting meanwhile gets far.
    import threading
    count, stop = [0], threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    # One CPU thread, and a run made larger until it simulates for at least 0.2 s whatever the machine's speed.
    for instances in (2000, 20000, 200000):
        count[0] = 0
        stop.clear()
        t = threading.Thread(target=spin)
        t.start()
        try:
            r = dpregret.run(small_toml, set={"run.instances": instances, "run.rounds": 2048}, backend="cpu",
                             threads=1, progress=False)
        finally:
            stop.set()
            t.join()
        seconds = r.run_info["throughput"]["simulation_seconds"]
        if seconds >= 0.2:
            break
    assert seconds >= 0.2, seconds
    assert count[0] > 100000 * seconds, (count[0], seconds)  # a held GIL would leave it near 0


def test_a_run_that_would_not_fit_is_refused_before_it_starts(small_toml):
    with pytest.raises(dpregret.ConfigError, match="memory"):
        dpregret.run(small_toml, set={"run.instances": 1000000}, memory_limit="1M", progress=False)
    with pytest.raises(dpregret.ConfigError, match="memory-limit|memory limit|size"):
        dpregret.run(small_toml, memory_limit="lots", progress=False)
