"""docs/PYTHON.md's examples run as written, and examples/privacy_utility.py draws its figure."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_every_example_of_the_python_page_runs(repo, tmp_path, monkeypatch, capsys):
    blocks = python_blocks((repo / "docs" / "PYTHON.md").read_text())
    assert len(blocks) >= 5
    (tmp_path / "experiments").symlink_to(repo / "experiments")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for i, code in enumerate(blocks):
        exec(compile(code, f"docs/PYTHON.md block {i + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    # What the comments promise.
    assert "<dpregret.Result: 9 point(s) x 200 instances on" in out
    assert "(9, 200)" in out
    assert "['final_regret.csv', 'run.json', 'summary.csv']" in out
    assert "epsilon" in out and "epsilom" in out
    assert "consistent True" in out and "VIOLATION" in out
    assert "consistent 80000" in out  # the one-run audit (docs/AUDITS.md "One-run audits")
    assert "(200, 1024) blt 1024" in out
    assert "assert_private: VIOLATION: eps_lb = " in out  # the NumPy DP-FTRL's planted bug is caught


def test_the_example_draws_the_privacy_utility_plot(repo, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "pu.png"
    done = subprocess.run([sys.executable, str(repo / "examples" / "privacy_utility.py"), str(png)], cwd=repo,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
