"""A losses array in a file mapping (np.memmap, np.load(mmap_mode=...)) whose file is truncated during the run: the
interpreter must not die of SIGBUS; the run reads a copy (docs/PYTHON.md "Losses from memory")."""
from __future__ import annotations

import signal
import subprocess
import sys

import numpy as np
import pytest

import dpregret

T, D, INSTANCES = 4096, 16, 200

CHILD = r"""
import mmap, os, sys, numpy as np, dpregret
path, out, T, instances, how = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
d = (os.path.getsize(path) - 128) // (8 * T)
if how == "np.load":
    losses = np.load(path, mmap_mode="r")
elif how == "np.memmap":  # the rows after the .npy header of 128 bytes
    losses = np.memmap(path, dtype=np.float64, mode="r", offset=128, shape=(T, d))
else:  # an mmap.mmap's buffer (shared, writable): no np.memmap in the array's bases
    with open(path, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
    losses = np.frombuffer(m, dtype=np.float64, offset=128).reshape(T, d)
wait = dpregret._wait

def truncate_then_wait(job, progress, label):
    # The run has been planned (its rows checked: every page of the file read) and is about to simulate, reading
    # every row again: the file loses them all now.
    os.truncate(path, 64)
    wait(job, progress, label)

dpregret._wait = truncate_then_wait
cfg = {"run": {"seed": 5, "instances": instances, "rounds": T, "checkpoints": 4},
       "adversary": {"kind": "file", "losses": losses},
       "learner": {"algorithm": "hedge"}}
try:
    r = dpregret.run(cfg, backend="cpu", progress=False)
except Exception as e:
    print("error:", type(e).__name__, e, flush=True)
    sys.exit(4)
np.save(out, r.final_regret)
print("done", os.path.getsize(path), flush=True)
"""


@pytest.mark.parametrize("how", ["np.load", "np.memmap", "mmap.mmap"])
def test_a_memmap_truncated_during_the_run_does_not_kill_the_interpreter(tmp_path, how):
    losses = np.random.default_rng(11).random((T, D))
    path = tmp_path / "losses.npy"
    np.save(path, losses)
    assert path.stat().st_size == 128 + losses.nbytes  # the rows follow a header of 128 bytes
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), str(tmp_path / "r.npy"), str(T), str(INSTANCES),
                           how], capture_output=True, text=True, timeout=600)
    assert done.returncode != -signal.SIGBUS, "the interpreter died of SIGBUS"
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert done.stdout.split() == ["done", "64"]  # truncated during the run
    # The run read the losses as they were when it started: its results are those of the same array in memory.
    expected = dpregret.run({"run": {"seed": 5, "instances": INSTANCES, "rounds": T, "checkpoints": 4},
                             "adversary": {"kind": "file", "losses": losses},
                             "learner": {"algorithm": "hedge"}}, backend="cpu", progress=False)
    np.testing.assert_array_equal(np.load(tmp_path / "r.npy"), expected.final_regret)
