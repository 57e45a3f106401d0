"""`harbor run` itself, on the shipped export, with orharbor's bubblewrap environment and no container engine.

The rewards are read from the job's result.json and each trial's result.json as
Harbor wrote them: the oracle scores 1.0 on every task with no exception, and
Harbor's nop agent the failure reward (-1.0 for algorithm tasks, 0.0 for
modelling tasks). The nop run reaches the tasks by dataset name through the
registry.json that export writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orharbor.verifiers import contract
from orharbor.exporter.dataset_index import package_version

from harbor_runs import harbor_run as _harbor_run



@pytest.fixture(scope="module")
def shipped_export(tmp_path_factory) -> Path:
    """`orharbor export --out` with nothing else: every shipped row and spec."""
    out = tmp_path_factory.mktemp("ship") / "tasks"
    subprocess.run([Path(sys.executable).with_name("orharbor"), "export", "--out", str(out)], check=True,
                   capture_output=True)
    return out


def _kind(task: Path) -> str:
    return contract.load(str(task / "tests")).kind.family


@pytest.mark.slow
@pytest.mark.sandbox
def test_harbor_run_scores_the_oracle_one_and_nop_the_failure_reward(shipped_export, tmp_path):
    """Every shipped task: oracle 1.0, nop -1.0 (algorithm) or 0.0 (modelling), no exception, one reward key."""
    tasks = {p.name: p for p in shipped_export.iterdir() if (p / "task.toml").is_file()}
    job, trials = _harbor_run(["-p", str(shipped_export), "-a", "oracle"], tmp_path, "oracle")
    [stats] = job["stats"]["evals"].values()
    assert job["n_total_trials"] == len(tasks) == len(trials) and stats["n_errors"] == 0
    assert stats["metrics"] == [{"mean": 1.0}]
    for trial in trials:
        assert trial["exception_info"] is None, trial["trial_name"]
        assert trial["verifier_result"]["rewards"] == {"reward": 1.0}, trial["trial_name"]

    by_name = ["-d", f"orharbor@{package_version()}", "--registry-path", str(shipped_export / "registry.json")]
    job, trials = _harbor_run([*by_name, "-a", "nop"], tmp_path, "nop")
    assert job["n_total_trials"] == len(tasks) == len(trials)
    for trial in trials:
        task = tasks[trial["task_name"].removeprefix("orharbor/")]
        expected = -1.0 if _kind(task) == "algorithm" else 0.0
        assert trial["exception_info"] is None, trial["trial_name"]
        assert trial["verifier_result"]["rewards"] == {"reward": expected}, trial["trial_name"]

    # orharbor report reads the job folders `harbor run` itself wrote
    from click.testing import CliRunner

    from orharbor.cli import main

    result = CliRunner().invoke(main, ["report", str(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["trials"], data["skipped_trials"]) == (2 * len(tasks), 0)
    assert {(r["agent"], r["mean_reward"]) for r in data["algorithm"]} == {("oracle", 1.0), ("nop", -1.0)}
    assert {(r["agent"], r["accuracy"]) for r in data["modelling"]["by_family"]} == {("oracle", 1.0), ("nop", 0.0)}
