"""orharbor check: the Harbor trial flow in a bubblewrap sandbox, on real exported tasks."""

from __future__ import annotations

import json
import tomllib
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from orharbor import check
from orharbor.cli import main


@pytest.mark.parametrize("mode", ["separate", "shared"])
def test_every_shipped_task_is_solvable_by_its_reference(exported, mode):
    """Oracle scores 1.0, naive its formula value (0.0), no deliverable -1.0, on every shipped task."""
    results = check.check_tasks(exported[mode], jobs=2)
    assert len(results) == len(list(exported[mode].glob("*/task.toml")))
    failures = [f"{r.task}: {r.problem_text()}" for r in results if not r.ok]
    assert not failures, failures
    for r in results:
        rewards = {p.policy: p.reward for p in r.policies}
        assert rewards["oracle"] == 1.0 and rewards["nothing"] == -1.0
        assert rewards["naive"] == pytest.approx(0.0)
        assert r.mode == mode


def _copy_task(exported, name_part: str, tmp_path: Path) -> Path:
    source = next(p.parent for p in exported["separate"].glob("*/task.toml") if name_part in p.parent.name)
    target = tmp_path / "tasks" / source.name
    shutil.copytree(source, target)
    return target


def test_check_fails_when_the_oracle_does_not_reach_the_reference(exported, tmp_path):
    """A task whose stored reference is better than its oracle fails, naming the oracle policy."""
    task = _copy_task(exported, "-l1-", tmp_path)
    config_path = task / "tests" / "task.json"
    config = json.loads(config_path.read_text())
    config["reference"] -= 1
    config_path.write_text(json.dumps(config))
    [result] = check.check_tasks(task, jobs=1)
    assert not result.ok
    assert "oracle scored" in result.problem_text() and "expected 1" in result.problem_text()


def test_check_fails_when_the_verifier_writes_no_reward(exported, tmp_path):
    """A test.sh that never writes reward.json is reported as such."""
    task = _copy_task(exported, "-l2-", tmp_path)
    (task / "tests" / "test.sh").write_text("#!/bin/bash\nexit 0\n")
    [result] = check.check_tasks(task, jobs=1)
    assert not result.ok and "no reward.json" in result.problem_text()


def test_check_cli_prints_a_table_and_exits_nonzero_on_failure(exported, tmp_path):
    """`orharbor check` prints one row per task and exits 1 naming a failed task."""
    good = _copy_task(exported, "-l1-", tmp_path)
    runner = CliRunner()
    ok = runner.invoke(main, ["check", str(good.parent), "-j", "1"])
    assert ok.exit_code == 0, ok.output
    assert good.name in ok.output and "1/1 tasks passed" in ok.output
    (good / "solution" / "solve.sh").write_text("#!/bin/bash\nexit 3\n")
    bad = runner.invoke(main, ["check", str(good.parent), "-j", "1"])
    assert bad.exit_code == 1
    assert f"FAILED {good.name}" in bad.output and "`bash /solution/solve.sh` failed (exit 3)" in bad.output


def test_missing_bubblewrap_is_a_clear_error(monkeypatch, tmp_path):
    """Without bwrap, check says how to install it instead of crashing."""
    monkeypatch.setattr(check.shutil, "which", lambda name: None)
    with pytest.raises(check.SandboxUnavailable, match="apt-get install -y bubblewrap"):
        check.check_tasks(tmp_path)
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 1 and "bubblewrap" in result.output


def test_an_empty_folder_has_no_tasks_to_check(tmp_path):
    """Pointing check at a folder without tasks is an error, not a silent pass."""
    with pytest.raises(check.SandboxUnavailable, match="no task directories"):
        check.check_tasks(tmp_path)


def test_artifact_collection_skips_symlinks_like_harbor(tmp_path):
    """A deliverable that is a symlink is not carried into the verifier (Harbor's tar data filter)."""
    real = tmp_path / "secret.json"
    real.write_text("{}")
    link = tmp_path / "solution.json"
    link.symlink_to(real)
    target = tmp_path / "verifier" / "app" / "solution.json"
    check.collect_artifact(link, target)
    assert not target.exists()
    check.collect_artifact(real, target)
    assert target.read_text() == "{}"


def test_a_crashing_verifier_still_leaves_reward_minus_one(exported, tmp_path):
    """If Python itself fails, test.sh writes reward -1.0 rather than nothing."""
    task = _copy_task(exported, "-l1-", tmp_path)
    (task / "tests" / "verify.py").write_text("raise SystemExit(7)\n")
    [result] = check.check_tasks(task, jobs=1)
    oracle = next(p for p in result.policies if p.policy == "oracle")
    assert oracle.reward == -1.0 and not result.ok


def test_solve_py_can_use_numpy_and_scipy_under_the_limits(exported, tmp_path):
    """A level-2 solve.py that imports numpy and scipy runs under the verifier's limits and is scored."""
    from orharbor.policies import Policy

    task = next(p.parent for p in exported["separate"].glob("*-l2-*/task.toml"))
    naive = (task / "solution" / "naive" / "solve.py").read_text()
    program = ("import numpy, scipy.optimize, scipy.sparse\n"
               "assert numpy.linalg.norm(numpy.ones(4)) == 2.0\n"
               "assert abs(scipy.optimize.minimize_scalar(lambda x: (x - 3) ** 2).x - 3) < 1e-6\n" + naive)
    config = tomllib.loads((task / "task.toml").read_text())
    policy = Policy("numpy-scipy", 0.0, files={"solve.py": program.encode()})
    bwrap = check.require_bwrap()
    venv = check.build_venv(tmp_path / "venv", check.SOLVER_PACKAGES)
    value, error, crashed = check.run_policy(task, policy, config, bwrap, venv)
    assert (value, error, crashed) == (0.0, None, False)
