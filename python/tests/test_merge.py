"""dpregret.merge against `dpregret merge` (issue 51, item 3): the same bytes from the same shards."""
from __future__ import annotations

import json

import pytest

import dpregret

SWEEP = """
[run]
seed = 3
instances = 300
rounds = 256
checkpoints = 4
[adversary]
kind = "bernoulli"
d = 8
[learner]
algorithm = ["hedge", "dp-ftrl-experts"]
epsilon = [1.0, 4.0]
"""


def comparable(path) -> dict:
    """run.json without the fields that say when, where and how fast (docs/SCALING.md), and which build merged."""
    j = json.loads(path.read_text())
    for k in ("wall_seconds", "started_at", "device", "threads", "memory_estimate_bytes", "throughput"):
        j.pop(k, None)
    for k in ("cuda_compiled", "cuda_architectures"):  # the package is built without CUDA, the command with it
        j["dpregret"].pop(k, None)
    for p in j["points"]:
        for k in ("wall_seconds", "instance_rounds_per_second", "expert_rounds_per_second", "launch_policy"):
            p.pop(k, None)
    return j


@pytest.fixture
def shards(tmp_path, cli):
    (tmp_path / "c.toml").write_text(SWEEP)
    for i in range(3):
        done = cli("run", "c.toml", "--shard", f"{i}/3", "--out", f"s{i}", "--quiet", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    return tmp_path


@pytest.mark.parametrize("bounded", [False, True])
def test_merge_is_the_commands(shards, cli, bounded):
    args = ["merge", "s0", "s1", "s2", "--out", "cli", "--quiet"] + (["--bounded-memory"] if bounded else [])
    done = cli(*args, cwd=shards)
    assert done.returncode == 0, done.stderr
    dpregret.merge([shards / "s2", shards / "s0", shards / "s1"], shards / "py", bounded_memory=bounded)
    for name in ("summary.csv", "final_regret.csv"):
        assert (shards / "py" / name).read_bytes() == (shards / "cli" / name).read_bytes(), name
    assert comparable(shards / "py" / "run.json") == comparable(shards / "cli" / "run.json")
    # ... and the unsharded run's bytes.
    dpregret.run(str(shards / "c.toml"), progress=False, out=shards / "whole")
    assert (shards / "py" / "final_regret.csv").read_bytes() == (shards / "whole" / "final_regret.csv").read_bytes()


def test_merge_refuses_what_the_command_refuses(shards):
    with pytest.raises(dpregret.ConfigError, match="shard"):
        dpregret.merge([shards / "s0", shards / "s1"], shards / "two")  # a shard missing
    assert not (shards / "two").exists()
    with pytest.raises(dpregret.ConfigError):
        dpregret.merge([shards / "s0", shards / "s1", shards / "s2"], shards / "s0")  # into an input
    with pytest.raises(TypeError, match="list of shard directories"):
        dpregret.merge(str(shards / "s0"), shards / "x")
