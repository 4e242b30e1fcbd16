"""Ctrl-C during dpregret.run: the run stops within a chunk, KeyboardInterrupt is raised, nothing is written. Ctrl-C
during Result.save: every file or none is written, and the KeyboardInterrupt says which."""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import dpregret

CHILD = r"""
import sys, time, dpregret
cfg = {"run": {"instances": 2000, "rounds": 10000000},
       "adversary": {"kind": "bernoulli", "d": 16},
       "learner": {"algorithm": "hedge"}}
print("go", flush=True)
try:
    dpregret.run(cfg, progress=False, out=sys.argv[1])
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


def _sigint_as_in_a_terminal():
    """The child's SIGINT at its default disposition, as in an interactive session: a shell without job control
    starts a background job (`scripts/test.sh &`) with SIGINT ignored, the child would inherit that, and a Python
    that starts with SIGINT ignored installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sigint_stops_the_run_and_writes_nothing(tmp_path):
    out = tmp_path / "o"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, preexec_fn=_sigint_as_in_a_terminal)
    assert child.stdout.readline().strip() == "go"
    time.sleep(1.5)  # well into the simulation (it would take hours; a chunk of rounds takes about 0.1 s)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    took = time.monotonic() - sent
    assert child.returncode == 3, (stdout, stderr)
    assert "interrupted" in stdout
    assert took < 10, f"the run took {took:.1f} s to stop"
    assert not out.exists()


SAVE_CHILD = r"""
import sys, dpregret
cfg = {"run": {"instances": 3000000, "rounds": 2, "checkpoints": 1},
       "adversary": {"kind": "bernoulli", "d": 2},
       "learner": {"algorithm": "hedge"}}
r = dpregret.run(cfg, progress=False)
print("saving", flush=True)
try:
    r.save(sys.argv[1])
except KeyboardInterrupt as e:
    print("interrupted:", e, flush=True)
    sys.exit(3)
print("saved", flush=True)
"""


def _writing(out) -> bool:
    """Whether a save is under way in `out`: one of its files is there under its temporary name."""
    try:
        return any(".tmp." in p.name for p in out.iterdir())
    except FileNotFoundError:
        return False


def test_sigint_during_a_save_leaves_every_file_or_none_and_says_which(tmp_path):
    out = tmp_path / "o"
    child = subprocess.Popen([sys.executable, "-c", SAVE_CHILD, str(out)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_as_in_a_terminal)
    assert child.stdout.readline().strip() == "saving"
    deadline = time.monotonic() + 120
    while not _writing(out):  # the save has started writing (final_regret.csv: 3e6 rows, about a second)
        assert child.poll() is None, "the save ended before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.001)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode in (0, 3), (child.returncode, stdout, stderr)
    if (out / "run.json").exists():
        # Every file complete; then the process either went on as saved, or its KeyboardInterrupt says so.
        json.loads((out / "run.json").read_text())
        with open(out / "final_regret.csv", newline="") as f:
            assert sum(1 for _ in csv.reader(f)) == 1 + 3000000
        with open(out / "summary.csv", newline="") as f:
            assert len(list(csv.reader(f))) == 2
        assert child.returncode == 0 or "written" in stdout, stdout
    else:
        # None of them, and the KeyboardInterrupt says so.
        assert child.returncode == 3, stdout
        assert "nothing was written" in stdout, stdout
        left = sorted(p.name for p in out.iterdir()) if out.exists() else []
        assert left == [], left


class _CtrlC:
    """A save (_core.Save) seen through a Ctrl-C at a chosen moment of Result.save's wait: `late`, once every file is
    written (too late to stop it); else before the writing has begun (the save starts cancelled)."""

    def __init__(self, save, late: bool):
        self.save, self.late, self.interrupted, self.started = save, late, False, False

    def start(self):
        if self.late:
            self.save.start()
            self.started = True

    def wait(self, seconds):
        if not self.interrupted:
            self.interrupted = True
            if self.late:
                while not self.save.wait(1.0):
                    pass
            raise KeyboardInterrupt
        if not self.started:  # cancel() came first: the writing stops at its first poll
            self.save.start()
            self.started = True
        return self.save.wait(seconds)

    def cancel(self):
        self.save.cancel()

    def finish(self):
        return self.save.finish()


@pytest.mark.parametrize("late", [True, False])
def test_the_keyboard_interrupt_of_a_save_says_whether_the_files_were_written(small_toml, tmp_path, monkeypatch, late):
    r = dpregret.run(small_toml, progress=False)
    write = dpregret._write
    monkeypatch.setattr(dpregret, "_write", lambda save, directory, label: write(_CtrlC(save, late), directory, label))
    out = tmp_path / "o"
    if late:
        with pytest.raises(KeyboardInterrupt, match=r"^Result.save: interrupted after the files were written: "
                                                    r".*/o holds them all$"):
            r.save(out)
        assert sorted(os.listdir(out)) == ["final_regret.csv", "run.json", "summary.csv"]  # and the lock released
    else:
        with pytest.raises(KeyboardInterrupt, match=r"^Result.save: interrupted; nothing was written into .*/o$"):
            r.save(out)
        assert not out.exists()  # created by the save, removed again
