"""`harbor run` itself, on the shipped export, with orharbor's bubblewrap environment and no container engine.

The rewards are read from the job's result.json and each trial's result.json as
Harbor wrote them: the oracle scores 1.0 with no exception, and Harbor's nop agent
the failure reward (-1.0 for algorithm tasks, 0.0 for modelling tasks). The nop run
reaches the tasks by dataset name through the registry.json that export writes.
Harbor runs one task of each problem class and level and two specs, picked with
its own `-i` filter: every shipped task is run through Harbor's trial code, in both
verifier modes, by tests/test_check.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from orharbor import problem_modules
from orharbor.verifiers import contract
from orharbor.exporter.dataset_index import package_version

from harbor_runs import harbor_run as _harbor_run


@pytest.fixture(scope="module")
def shipped_export(tmp_path_factory) -> Path:
    """`orharbor export --out` with nothing else: every shipped row and spec."""
    out = tmp_path_factory.mktemp("ship") / "tasks"
    subprocess.run(
        [Path(sys.executable).with_name("orharbor"), "export", "--out", str(out)], check=True, capture_output=True
    )
    return out


def _kind(task: Path) -> str:
    return contract.load(str(task / "tests")).kind.family


def _one_per_class_and_level(tasks: dict[str, Path]) -> list[str]:
    """The first task of each (problem, level) and the first two modelling specs, by name."""
    picked: dict[object, str] = {}
    specs = []
    for name, task in sorted(tasks.items()):
        meta = tomllib.loads((task / "task.toml").read_text())["metadata"]
        if meta.get("kind") == "modelling":
            specs.append(name)
        else:
            picked.setdefault((meta["problem"], meta["level"]), name)
    return sorted(picked.values()) + specs[:2]


@pytest.mark.slow
@pytest.mark.sandbox
def test_harbor_run_scores_the_oracle_one_and_nop_the_failure_reward(shipped_export, tmp_path):
    """A task of each class and level, and specs: oracle 1.0, nop -1.0 (algorithm) or 0.0 (modelling), one key."""
    shipped = {p.name: p for p in shipped_export.iterdir() if (p / "task.toml").is_file()}
    names = _one_per_class_and_level(shipped)
    tasks = {name: shipped[name] for name in names}
    assert len(tasks) == 2 * len(problem_modules.names()) + 2 < len(shipped)
    only = [arg for name in names for arg in ("-i", name)]
    job, trials = _harbor_run(["-p", str(shipped_export), "-a", "oracle", *only], tmp_path, "oracle")
    [stats] = job["stats"]["evals"].values()
    assert job["n_total_trials"] == len(tasks) == len(trials) and stats["n_errors"] == 0
    assert stats["metrics"] == [{"mean": 1.0}]
    for trial in trials:
        assert trial["exception_info"] is None, trial["trial_name"]
        assert trial["verifier_result"]["rewards"] == {"reward": 1.0}, trial["trial_name"]

    by_name = ["-d", f"orharbor@{package_version()}", "--registry-path", str(shipped_export / "registry.json")]
    job, trials = _harbor_run([*by_name, "-a", "nop", *only], tmp_path, "nop")
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
