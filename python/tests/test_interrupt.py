"""Ctrl-C during dpregret.run: the run stops within a chunk, KeyboardInterrupt is raised, nothing is written."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

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
