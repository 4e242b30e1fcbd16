"""Result.save and AuditResult.save into a shared directory (docs/OUTPUTS.md "Links and special files in an output
directory"): a symbolic link at a name they write -- to a file or to a directory of the victim's -- is refused,
naming it, and its target is left exactly as it was; a directory of another kind of result is refused."""
from __future__ import annotations

import pytest

import dpregret

RUN = {"run": {"instances": 4, "rounds": 20}, "adversary": {"kind": "bernoulli", "d": 3},
       "learner": {"algorithm": "hedge"}}
AUDIT = {"run": {"instances": 1000, "rounds": 2}, "adversary": {"kind": "bernoulli", "d": 2},
         "learner": {"algorithm": "dp-ftrl-experts", "epsilon": 1}, "audit": {"round": 1}}


@pytest.fixture
def victims(tmp_path):
    thesis = tmp_path / "thesis.tex"
    thesis.write_text("my thesis\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("notes\n")

    def intact() -> bool:
        return (thesis.read_text() == "my thesis\n" and sorted(p.name for p in home.iterdir()) == ["notes.txt"]
                and (home / "notes.txt").read_text() == "notes\n")

    return [thesis, home], intact


@pytest.mark.parametrize("name", [".lock", "summary.csv", "final_regret.csv", "run.json", ".progress"])
def test_run_save_refuses_a_link_at_any_name_it_writes(tmp_path, victims, name):
    targets, intact = victims
    r = dpregret.run(RUN, progress=False)
    for target in targets:
        out = tmp_path / f"o-{target.name}"
        out.mkdir()
        (out / name).symlink_to(target)
        with pytest.raises(dpregret.ConfigError, match=f"{name} is a symbolic link"):
            r.save(out)
        assert sorted(p.name for p in out.iterdir()) == [name]
        assert intact()


@pytest.mark.parametrize("name", [".lock", "audit.json", "privacy_region.csv"])
def test_audit_save_refuses_a_link_at_any_name_it_writes(tmp_path, victims, name):
    targets, intact = victims
    a = dpregret.audit(AUDIT, progress=False)
    for target in targets:
        out = tmp_path / f"o-{target.name}"
        out.mkdir()
        (out / name).symlink_to(target)
        with pytest.raises(dpregret.ConfigError, match=f"{name} is a symbolic link"):
            a.save(out)
        assert intact()


def test_run_out_refuses_a_link_before_simulating(tmp_path, victims, monkeypatch):
    targets, intact = victims
    out = tmp_path / "o"
    out.mkdir()
    (out / ".lock").symlink_to(targets[0])

    def simulated(*args, **kwargs):
        raise AssertionError("run(out=) simulated before refusing the directory")

    monkeypatch.setattr(dpregret, "_wait", simulated)
    with pytest.raises(dpregret.ConfigError, match="is a symbolic link"):
        dpregret.run(RUN, progress=False, out=out)
    assert intact()


def test_results_of_different_kinds_never_share_a_directory(tmp_path):
    r = dpregret.run(RUN, progress=False)
    a = dpregret.audit(AUDIT, progress=False)
    r.save(tmp_path / "r")
    a.save(tmp_path / "a")
    with pytest.raises(dpregret.ConfigError, match="already holds"):
        r.save(tmp_path / "a")
    with pytest.raises(dpregret.ConfigError, match="already holds"):
        a.save(tmp_path / "r")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["audit.json", "privacy_region.csv"]
