"""run(out=DIR) takes DIR before simulating, as `dpregret run --out` does: a directory that cannot be created or
written, one that another process holds, or one whose disk cannot take the result files is refused before any work,
and DIR stays locked until the files are in it. (audit(out=): test_audit.py.)"""
from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys

import pytest

import dpregret


@pytest.fixture
def no_simulation(monkeypatch):
    """Makes any simulation fail the test: a refusal must come before the work."""
    def simulated(job, *args, **kwargs):
        raise AssertionError(f"simulated ({job.progress()} of {job.total()} instance-rounds) before refusing the "
                             "output directory")

    monkeypatch.setattr(dpregret, "_wait", simulated)


def test_a_directory_that_cannot_be_created_is_refused_before_simulating(small_toml, tmp_path, no_simulation):
    (tmp_path / "file").write_text("a regular file, not a directory\n")
    with pytest.raises(dpregret.ConfigError, match=r"cannot create the directory .*file/o"):
        dpregret.run(small_toml, progress=False, out=tmp_path / "file" / "o")


@pytest.mark.skipif(os.geteuid() == 0, reason="root creates files in a directory without write permission")
def test_a_read_only_directory_is_refused_before_simulating(small_toml, tmp_path, no_simulation):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(dpregret.ConfigError, match="cannot create files in the directory"):
            dpregret.run(small_toml, progress=False, out=ro)
        with pytest.raises(dpregret.ConfigError, match="cannot create the directory"):
            dpregret.run(small_toml, progress=False, out=ro / "o")
        assert os.listdir(ro) == []
    finally:
        ro.chmod(0o755)


def test_a_directory_another_process_holds_is_refused_before_simulating(small_toml, tmp_path, no_simulation):
    d = tmp_path / "o"
    d.mkdir()
    with open(d / ".lock", "w") as held:  # the lock of docs/OUTPUTS.md, held by another open file
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(dpregret.ConfigError, match="in use"):
            dpregret.run(small_toml, progress=False, out=d)
    assert sorted(os.listdir(d)) == [".lock"]


def test_a_disk_without_room_for_the_result_files_is_refused_before_simulating(tmp_path, no_simulation):
    # final_regret.csv alone takes at least 64 bytes per instance and point (docs/OUTPUTS.md); a process runs at most
    # 2^32 - 1 instances, so enough points make the files larger than the free space, whatever the machine.
    st = os.statvfs(tmp_path)
    instances = 2**32 - 1
    points = st.f_bavail * st.f_frsize // (64 * instances) + 2
    cfg = {"run": {"instances": instances, "rounds": 1, "checkpoints": 1},
           "adversary": {"kind": "bernoulli", "d": 2},
           "learner": {"algorithm": "dp-ftrl-experts", "epsilon": [float(k + 1) for k in range(points)]}}
    with pytest.raises(dpregret.ConfigError, match=r"result files take about .* of disk in .*o, but .* is free there"):
        dpregret.run(cfg, progress=False, out=tmp_path / "o", memory_limit="none")
    assert not (tmp_path / "o").exists()  # what the refusal created is gone


SMALL_DISK_CHILD = r"""
import os, sys, numpy as np, dpregret
d = sys.argv[1]

def simulated(*args, **kwargs):
    raise AssertionError("simulated before refusing the output directory")

dpregret._wait = simulated
run = {"run": {"instances": 100000, "rounds": 64},
       "adversary": {"kind": "bernoulli", "d": 4},
       "learner": {"algorithm": "dp-ftrl-experts", "epsilon": [0.5, 5.0]}}
audit = {"run": {"instances": 100000, "rounds": 2},
         "adversary": {"kind": "file", "losses": np.array([[0.0, 1.0], [1.0, 0.0]])},
         "learner": {"algorithm": "dp-ftrl-experts", "epsilon": 1, "mechanism": "binary"},
         "audit": {"round": 1, "rounds": [2]}}
for name, call in (("run", lambda: dpregret.run(run, progress=False, out=os.path.join(d, "run"))),
                   ("audit", lambda: dpregret.audit(audit, progress=False, statistic=True,
                                                    out=os.path.join(d, "audit")))):
    try:
        call()
        print(name, "was not refused")
    except dpregret.ConfigError as e:
        print(name, "refused:", e)
print("left:", sorted(os.listdir(d)))
"""


def test_a_small_file_system_is_refused_before_simulating(tmp_path):
    # A 1 MiB tmpfs, mounted in a mount namespace of the child's own (unshare -rm: no privileges needed where user
    # namespaces are allowed; gone with the child). The run's result files (final_regret.csv: 2 x 100000 rows) and
    # the audit's statistic.npy (1.6 MB) do not fit: both are refused before simulating, leaving nothing there.
    mnt = tmp_path / "small"
    mnt.mkdir()
    mount = ["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o size=1m tmpfs "$1" && shift && exec "$@"', "sh", str(mnt)]
    try:
        probe = subprocess.run(mount + ["true"], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        pytest.skip("no unshare(1) here")
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs in a namespace here: {probe.stderr.strip()}")
    done = subprocess.run(mount + [sys.executable, "-c", SMALL_DISK_CHILD, str(mnt)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (done.stdout, done.stderr)
    lines = done.stdout.splitlines()
    assert len(lines) == 3, lines
    assert lines[0].startswith("run refused: this run's result files take about ") and "MiB of disk in" in lines[0]
    assert "is free there. Free space, choose another directory, or reduce [run] instances" in lines[0]
    assert re.match(r"audit refused: this audit's files \(statistic.npy 1.5[0-9]* MiB: 2 x 100000 trials x 8 bytes\) "
                    r"take about 1.[0-9]+ MiB of disk in .*/audit, but .* is free there", lines[1]), lines[1]
    assert lines[1].endswith("leave out statistic=True (the bound does not need it) or reduce [run] instances")
    assert lines[2] == "left: []"


def test_the_directory_is_locked_before_simulating_and_until_the_files_are_in_it(small_toml, tmp_path, monkeypatch):
    d = tmp_path / "o"
    wait = dpregret._wait
    checked = []

    def locked_then_wait(job, progress, label):
        assert job.progress() == 0
        with open(d / ".lock", "a") as other:  # a second process on the directory is refused from now on
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        checked.append(True)
        wait(job, progress, label)
        with open(d / ".lock", "a") as other:  # still held after the simulation, until the files are written
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)

    monkeypatch.setattr(dpregret, "_wait", locked_then_wait)
    r = dpregret.run(small_toml, progress=False, out=d)
    assert checked
    assert sorted(os.listdir(d)) == ["final_regret.csv", "run.json", "summary.csv"]  # the lock released and removed
    assert r.final_regret.shape == (3, 64)


def test_a_failed_run_gives_the_directory_up(small_toml, tmp_path, monkeypatch):
    # Any failure after the directory was taken (here: an error while simulating) removes what run(out=) created and
    # releases the lock, as an interrupted run does (test_interrupt.py).
    def failed(job, progress, label):
        raise RuntimeError("the simulation failed")

    monkeypatch.setattr(dpregret, "_wait", failed)
    with pytest.raises(RuntimeError, match="the simulation failed"):
        dpregret.run(small_toml, progress=False, out=tmp_path / "a" / "o")
    assert not (tmp_path / "a").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    with pytest.raises(RuntimeError, match="the simulation failed"):
        dpregret.run(small_toml, progress=False, out=mine)
    assert mine.is_dir() and os.listdir(mine) == []  # a directory the user made stays
