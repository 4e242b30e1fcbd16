"""Shared fixtures: the repository, the `dpregret` command the package is compared with, small configs."""
from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def cli_path() -> pathlib.Path:
    """The command built from this clone (scripts/test.sh builds it first); DPREGRET_CLI overrides."""
    return pathlib.Path(os.environ.get("DPREGRET_CLI", REPO / "build" / "dpregret"))


@pytest.fixture(scope="session")
def cli():
    path = cli_path()
    if not path.is_file():
        pytest.fail(f"the CLI-equality tests need the dpregret command at {path} "
                    "(scripts/build.sh dpregret, or set DPREGRET_CLI)")

    def run(*args: str, cwd: pathlib.Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(path), *args], cwd=cwd, capture_output=True, text=True)

    return run


@pytest.fixture
def repo() -> pathlib.Path:
    return REPO


# A small sweep: two learners x two epsilons, 64 instances of 512 rounds (under a second).
SMALL = """
[run]
seed = 7
instances = 64
rounds = 512
checkpoints = 6

[adversary]
kind = "bernoulli"
d = 8
p = 0.5
gap = 0.1

[learner]
algorithm = ["hedge", "dp-ftrl-experts"]
epsilon = [0.5, 5.0]
"""


@pytest.fixture
def small_toml() -> str:
    return SMALL
