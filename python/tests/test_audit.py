"""dpregret.audit against `dpregret audit`: the same bound, event and files; a planted bug is a VIOLATION."""
from __future__ import annotations

import json
import tomllib

import numpy as np
import pytest

import dpregret

AUDIT = """
[run]
instances = 4000
rounds = 2
[adversary]
kind = "file"
path = "base.csv"
[learner]
algorithm = "dp-ftrl-experts"
epsilon = 1
mechanism = "binary"
[audit]
round = 1
rounds = [2]
"""


@pytest.fixture
def audit_dir(tmp_path, monkeypatch):
    (tmp_path / "base.csv").write_text("0,1\n1,0\n")
    (tmp_path / "a.toml").write_text(AUDIT)
    monkeypatch.chdir(tmp_path)  # the file's loss path is relative
    return tmp_path


def test_the_audit_is_the_commands(audit_dir, cli):
    done = cli("audit", "a.toml", "--out", "cli", "--quiet", "--save-statistic", cwd=audit_dir)
    assert done.returncode == 0, done.stderr
    a = dpregret.audit("a.toml", progress=False, statistic=True, out="py")
    assert (audit_dir / "py" / "privacy_region.csv").read_bytes() == (audit_dir / "cli" / "privacy_region.csv").read_bytes()
    assert (audit_dir / "py" / "statistic.npy").read_bytes() == (audit_dir / "cli" / "statistic.npy").read_bytes()
    mine, theirs = (json.loads((audit_dir / d / "audit.json").read_text()) for d in ("py", "cli"))
    for j in (mine, theirs):
        del j["timing"]
    assert mine == theirs
    assert a.verdict == "consistent" and done.stdout.startswith("consistent: eps_lb = ")
    assert str(a).split(" trials per side in")[0] == done.stdout.split(" trials per side in")[0]  # the verdict line
    assert a.epsilon_lb == pytest.approx(theirs["epsilon_lb"]) and a.epsilon_lb <= a.claimed["epsilon"]
    assert a.trials == 4000 and a.confidence == 0.95
    assert a.event["k_numerator"] == theirs["event"]["k_numerator"]
    stat = a.statistic
    assert stat.shape == (2, 4000)
    np.testing.assert_array_equal(stat, np.load(audit_dir / "cli" / "statistic.npy"))
    region = a.region
    assert list(region) == ["threshold", "base_ge", "neighbour_ge", "base_le", "neighbour_le",
                            "f_base_ge", "f_neighbour_ge", "f_base_le", "f_neighbour_le"]
    assert np.all(np.diff(region["threshold"]) >= 0) and np.all((region["base_ge"] >= 0) & (region["base_ge"] <= 1))
    # The claimed curve at each fraction: a type-II error in [0, 1], non-increasing in the type-I error.
    f, a = region["f_base_ge"], region["base_ge"]
    assert np.all((f >= 0) & (f <= 1)) and np.all(np.diff(f[np.argsort(a)]) <= 1e-12)


def test_a_planted_bug_is_a_violation_and_needs_allow_planted(audit_dir):
    with pytest.raises(dpregret.ConfigError, match="allow"):
        dpregret.audit("a.toml", set={"audit.planted": "leaf-without-noise"}, progress=False)
    bad = dpregret.audit("a.toml", set={"audit.planted": "leaf-without-noise"}, allow_planted=True, progress=False)
    assert bad.verdict == "VIOLATION" and bad.epsilon_lb > bad.claimed["epsilon"]
    assert bad.info["learner"]["planted"] == "leaf-without-noise"


def test_audit_errors(audit_dir):
    with pytest.raises(dpregret.ConfigError, match="sweep"):
        dpregret.audit("a.toml", set={"learner.epsilon": [1, 2]}, progress=False)
    with pytest.raises(dpregret.ConfigError, match="round"):
        dpregret.audit("a.toml", set={"audit.round": 99}, progress=False)
    a = dpregret.audit("a.toml", progress=False)
    with pytest.raises(RuntimeError, match="not kept"):
        a.statistic
    a.save("o")
    with pytest.raises(dpregret.ConfigError, match="already holds audit.json of an audit"):
        a.save("o")
    with pytest.MonkeyPatch.context() as m:  # audit(out=) into a used directory is refused before simulating
        m.setattr(dpregret, "_wait", lambda *a, **k: pytest.fail("audit(out=) simulated first"))
        with pytest.raises(dpregret.ConfigError, match="already holds audit.json of an audit"):
            dpregret.audit("a.toml", out="o", progress=False)
    with pytest.warns(dpregret.DPRegretWarning, match="claims no privacy"):
        dpregret.audit("a.toml", set={"learner.epsilon": float("inf")}, progress=False)


def test_an_audit_of_losses_from_memory_is_the_audit_of_the_same_file(audit_dir):
    cfg = tomllib.loads(AUDIT)
    filed = dpregret.audit(cfg, progress=False, statistic=True)
    del cfg["adversary"]["path"]
    cfg["adversary"]["losses"] = np.array([[0.0, 1.0], [1.0, 0.0]])
    mem = dpregret.audit(cfg, progress=False, statistic=True)
    np.testing.assert_array_equal(mem.statistic, filed.statistic)
    assert mem.epsilon_lb == filed.epsilon_lb and mem.event == filed.event


def test_audit_out_is_taken_before_simulating(audit_dir, monkeypatch):
    # As for run(out=) (test_out_dir.py): a directory that cannot be created is refused before any work, and the
    # directory is locked from before the simulation until its files are written.
    import fcntl
    (audit_dir / "file").write_text("a regular file\n")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(dpregret, "_wait", lambda *a, **k: pytest.fail("audit(out=) simulated first"))
        with pytest.raises(dpregret.ConfigError, match="cannot create the directory"):
            dpregret.audit("a.toml", out="file/o", progress=False)
    wait = dpregret._wait
    checked = []

    def locked_then_wait(job, progress, label):
        assert job.progress() == 0
        with open(audit_dir / "o" / ".lock", "a") as other:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        checked.append(True)
        wait(job, progress, label)

    monkeypatch.setattr(dpregret, "_wait", locked_then_wait)
    a = dpregret.audit("a.toml", out="o", progress=False)
    assert checked and a.verdict == "consistent"
    assert sorted(p.name for p in (audit_dir / "o").iterdir()) == ["audit.json", "privacy_region.csv"]



def test_search_chooses_the_pair_as_the_command_does(tmp_path, monkeypatch, cli, repo):
    """audit(search=True) is `dpregret audit --search`: the tight cube pair given the weaker neighbour "zero" is
    searched, a negate pair is chosen, and the bound, the table of candidates and pair.toml are the command's."""
    text = (repo / "experiments/audits/dp_ftrl_cube_tight.toml").read_text() + 'neighbour = "zero"\n'
    (tmp_path / "data").mkdir()
    (tmp_path / "data/cube_two_rounds.csv").write_text((repo / "experiments/audits/data/cube_two_rounds.csv").read_text())
    (tmp_path / "z.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    a = dpregret.audit("z.toml", set={"run.instances": 100000}, search=True, progress=False, out="py")
    assert "negate" in a.search["chosen_pair"], a.search
    assert a.search["candidates"][0]["pair"].endswith("(the file's pair)")
    assert a.epsilon_lb >= 0.85
    done = cli("audit", "z.toml", "--search", "--out", "cli", "--quiet", "--set", "run.instances=100000", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    c = json.loads((tmp_path / "cli/audit.json").read_text())
    assert c["epsilon_lb"] == a.info["epsilon_lb"]
    assert c["search"]["candidates"] == a.search["candidates"]
    assert (tmp_path / "py/pair.toml").read_text() == (tmp_path / "cli/pair.toml").read_text()
    assert dpregret.audit("z.toml", set={"run.instances": 100000}, progress=False).search is None
    with pytest.raises(dpregret.ConfigError, match="only search=True"):
        dpregret.audit("z.toml", pilot=100, progress=False)
    with pytest.raises(TypeError, match="pilot"):
        dpregret.audit("z.toml", search=True, pilot=1.5, progress=False)


ONE_RUN = """
[run]
instances = 100
rounds = 8008
[adversary]
kind = "cube-drift"
d = 1
drift = 1
[learner]
algorithm = "dp-ftrl-cube"
epsilon = 1
mechanism = "binary"
calibration = "strict"
eta = 1e-6
[audit]
neighbour = "negate"
"""
BLT = {"learner.mechanism": "blt", "learner.noise": "gaussian", "learner.delta": 1e-6}


def test_a_one_run_audit_is_the_commands(tmp_path, cli):
    """audit(one_run=True) is `dpregret audit --one-run` (docs/AUDITS.md "One-run audits"): the same audit.json but
    its timing, the same verdict line; a planted BLT bug is a VIOLATION with every guess right."""
    (tmp_path / "o.toml").write_text(ONE_RUN)
    done = cli("audit", "o.toml", "--one-run", "--window", "7", "--out", "cli", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    a = dpregret.audit(tmp_path / "o.toml", progress=False, one_run=True, window=7, out=tmp_path / "py")
    mine, theirs = (json.loads((tmp_path / d / "audit.json").read_text()) for d in ("py", "cli"))
    for j in (mine, theirs):
        del j["timing"]
        del j["config"]  # the path as given differs
    assert mine == theirs
    assert not (tmp_path / "py" / "privacy_region.csv").exists()
    assert str(a).split(" trials in")[0] == done.stdout.split(" trials in")[0]
    assert a.verdict == "consistent" and a.event is None and a.curve is None
    assert a.canaries["per_trial"] == 1000 and a.canaries["window"] == 7 and a.trials == 100
    assert a.guesses["canaries"] == 80 * 1000 and a.guesses["correct"] <= a.guesses["guessed"]
    with pytest.raises(Exception, match="no privacy region"):
        a.region
    bad = dpregret.audit(tmp_path / "o.toml", progress=False, one_run=True, window=7, allow_planted=True,
                         set={**BLT, "audit.planted": "leaf-without-noise"})
    assert bad.verdict == "VIOLATION" and bad.guesses["correct"] == bad.guesses["guessed"]
    assert bad.epsilon_lb > 5 > bad.claimed["epsilon"]


def test_one_run_arguments_are_checked(tmp_path):
    (tmp_path / "o.toml").write_text(ONE_RUN)
    with pytest.raises(dpregret.ConfigError, match="only a one-run audit"):
        dpregret.audit(tmp_path / "o.toml", canaries=10)
    with pytest.raises(dpregret.ConfigError, match="only a one-run audit"):
        dpregret.audit(tmp_path / "o.toml", score="difference")
    with pytest.raises(TypeError, match="canaries must be a whole number"):
        dpregret.audit(tmp_path / "o.toml", one_run=True, canaries=10.5)
    with pytest.raises(TypeError, match="one_run must be True or False"):
        dpregret.audit(tmp_path / "o.toml", one_run="yes")
    with pytest.raises(dpregret.ConfigError, match="must be \"fitted\" or \"difference\""):
        dpregret.audit(tmp_path / "o.toml", one_run=True, score="sum")
    with pytest.raises(dpregret.ConfigError, match="--canaries 5000"):
        dpregret.audit(tmp_path / "o.toml", one_run=True, canaries=5000)
    with pytest.raises(dpregret.ConfigError, match="--search"):
        dpregret.audit(tmp_path / "o.toml", one_run=True, search=True)
