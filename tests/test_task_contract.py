"""The typed task contract (verifiers/contract.py): what the exporter writes is what every reader loads."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from orharbor.verifiers import contract
from orharbor.verifiers.main import SCORERS


def _tasks(*folders: Path) -> list[Path]:
    return sorted(p.parent for folder in folders for p in folder.glob("*/task.toml"))


def test_every_kind_has_a_class_and_a_scorer():
    """One table: a kind without its task class or its scorer cannot be exported or verified."""
    assert set(contract.KINDS) == set(contract.TASK_CLASSES) == set(SCORERS) == {"level1", "level2", "spec", "retail"}
    for name, kind in contract.KINDS.items():
        assert kind.name == name and kind.policies["nothing"] == kind.fail_reward
        assert kind.fail_reward == (-1.0 if kind.family == "algorithm" else 0.0)


def test_exported_task_json_round_trips_through_the_typed_classes(exported, exported_specs):
    """dump(load(task.json)) is the file's data, for every shipped task of every kind."""
    seen = set()
    for task in _tasks(exported["separate"], exported_specs["shared"]):
        data = json.loads((task / "tests" / "task.json").read_text())
        loaded = contract.load(str(task / "tests"))
        assert contract.dump(loaded) == data, task.name
        toml = tomllib.loads((task / "task.toml").read_text())
        assert loaded.task_id == task.name
        assert toml["metadata"] == {
            **loaded.metadata,
            "verifier_mode": toml["verifier"]["environment_mode"],
            "reward_scale": loaded.reward_scale,
        }
        if loaded.kind.deliverable is not None:
            assert loaded.deliverables == (loaded.kind.deliverable,)
        seen.add(loaded.KIND)
    assert seen == {"level1", "level2", "spec"}


def test_level2_tasks_carry_the_rows_time_limit_under_one_name(exported, shipped_rows):
    """solve_time_limit_s: the row's field, the task's run limit and the verifier's Limits are one name."""
    rows = {row["id"]: row for row in shipped_rows}
    for task in _tasks(exported["separate"]):
        loaded = contract.load(str(task / "tests"))
        if isinstance(loaded, contract.Level2Task):
            assert loaded.run.limits.solve_time_limit_s == float(rows[task.name]["solve_time_limit_s"])
            naive = json.loads((task / "solution" / "naive_answers.json").read_text())
            assert set(naive) == {case.instance_sha256 for case in loaded.cases}


def test_the_test_sh_fallback_scores_the_kinds_failure_reward(exported, exported_specs):
    for task in _tasks(exported["shared"], exported_specs["separate"]):
        reward = contract.load(str(task / "tests")).kind.fail_reward
        assert f"'{{\"reward\": {reward}}}'" in (task / "tests" / "test.sh").read_text(), task.name


@pytest.mark.parametrize(
    "data, message",
    [
        ([], "expected a JSON object"),
        ({"kind": "level1"}, "task.json format 1, but this orharbor reads format 2"),
        ({"format_version": 3, "kind": "level1"}, "task.json format 3"),
        ({"format_version": 2, "kind": "modelling"}, "unknown task kind 'modelling'"),
        ({"format_version": 2, "kind": ["spec"]}, "unknown task kind ['spec']"),
        ({"format_version": 2, "kind": "spec", "task_id": "t", "deliverables": ["/app/a"]}, "(spec: no 'outputs')"),
        (
            {
                "format_version": 2,
                "kind": "spec",
                "task_id": "t",
                "deliverables": ["/app/a"],
                "outputs": {},
                "grading": 1,
            },
            "(spec: unknown field 'grading')",
        ),
        (
            {
                "format_version": 2,
                "kind": "level2",
                "task_id": "t",
                "deliverables": [],
                "problem": "p",
                "cases": [],
                "run": {"python": "p", "uid": 1, "limits": {"wall_s": 5}},
            },
            "(run.limits: unknown field 'wall_s')",
        ),
        (
            {
                "format_version": 2,
                "kind": "level2",
                "task_id": "t",
                "deliverables": [],
                "problem": "p",
                "cases": [],
                "run": [1],
            },
            "(run is not a JSON object)",
        ),
    ],
    ids=["list", "format-1", "format-3", "old-kind", "list-kind", "missing", "unknown", "old-limit-name", "bad-run"],
)
def test_a_task_json_this_version_did_not_write_is_one_clear_error(data, message):
    with pytest.raises(contract.ContractError, match="re-export the task") as caught:
        contract.parse(data, "tests/task.json")
    assert message in str(caught.value) and str(caught.value).startswith("tests/task.json: ")


LEVEL2 = {
    "format_version": 2,
    "kind": "level2",
    "task_id": "t",
    "deliverables": ["/app/solve.py"],
    "problem": "p",
    "cases": [],
    "run": {"python": "p", "uid": 1, "limits": {"solve_time_limit_s": 5}},
}


def test_reference_workload_s_is_optional_and_a_number_above_zero():
    """A level-2 task.json written before the CPU calibration has none (the limit is not scaled); a value must
    be a positive number, or the task is refused."""
    assert contract.parse(LEVEL2).reference_workload_s is None
    assert contract.parse({**LEVEL2, "reference_workload_s": 0.25}).reference_workload_s == 0.25
    assert contract.dump(contract.parse({**LEVEL2, "reference_workload_s": 1}))["reference_workload_s"] == 1.0
    for bad in (0, -0.1, "0.25", True, float("inf"), [0.25]):
        with pytest.raises(contract.ContractError, match=re.escape(f"reference_workload_s is {bad!r}, not a")):
            contract.parse({**LEVEL2, "reference_workload_s": bad})


@pytest.mark.parametrize(
    "text, family, reward",
    [
        ("{not json", "algorithm", -1.0),
        ('{"format_version": 2, "kind": "spec"}', "modelling", 0.0),
        ('{"format_version": 2, "kind": "retail", "metadata": [1]}', "modelling", 0.0),
        ('{"format_version": 2, "kind": "level2"}', "algorithm", -1.0),
        ('["spec"]', "algorithm", -1.0),
        ('{"format_version": 2, "kind": ["spec"]}', "algorithm", -1.0),
    ],
)
def test_the_failure_reward_survives_a_damaged_task_json(tmp_path, text, family, reward):
    """The verifier's error paths still know what a broken run of this kind scores."""
    (tmp_path / "task.json").write_text(text)
    assert contract.fail_reward(str(tmp_path)) == (family, reward, None)
