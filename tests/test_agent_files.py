"""What the agent is handed is what is scored: a hand edit of an exported task's environment/ is caught.

The exporter records the agent's data files in tests/agent_files.json; ``check``
fails such a task without running its trials and ``verify`` refuses to score it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from orharbor import check
from orharbor.cli import main
from orharbor.exporter import export_row
from orharbor.exporter.agent_files import differences


@pytest.fixture(scope="module")
def tasks(tmp_path_factory, shipped_rows, shipped_specs, retail_rows) -> dict[str, Path]:
    """One task of each kind that hands the agent data files: level 1, level 2, a spec, a RetailOpt schema task."""
    from orharbor.exporter.modelling import export_retail, export_spec

    out = tmp_path_factory.mktemp("tasks")
    rows = {row["id"]: row for row in shipped_rows}
    spec = next(s for s in shipped_specs if s.data_files)
    retail = next(r for r in retail_rows if r["scenario_id"] == "retail_f1_base_v0")
    return {
        "level1": export_row(rows["jobshop-4x4-l1-s0"], out),
        "level2": export_row(rows["jobshop-4x4-l2-s0"], out),
        "spec": export_spec(spec, out),
        "retail": export_retail(retail, out, prompt="schema"),
    }


def _copy(task: Path, tmp_path: Path) -> Path:
    target = tmp_path / "tasks" / task.name
    shutil.copytree(task, target)
    return target


def _first_data_file(task: Path) -> Path:
    return next(p for p in sorted((task / "environment").rglob("*")) if p.is_file() and p.name != "Dockerfile")


def test_an_unedited_export_hands_the_agent_what_is_scored(tasks):
    for task in tasks.values():
        assert differences(task) == [], task


@pytest.mark.parametrize("kind", ["level1", "level2", "spec", "retail"])
def test_an_edited_data_file_is_named(tasks, tmp_path, kind):
    task = _copy(tasks[kind], tmp_path)
    edited = _first_data_file(task)
    edited.write_bytes(edited.read_bytes().replace(b"1", b"2", 1))
    [line] = differences(task)
    assert str(edited) in line and "differs from what was exported" in line


def test_added_and_removed_files_are_named_and_the_dockerfile_is_not_data(tasks, tmp_path):
    task = _copy(tasks["level2"], tmp_path)
    examples = task / "environment" / "examples"
    (examples / "example_1.json").unlink()
    (examples / "example_9.json").write_text("{}\n")
    (task / "environment" / "Dockerfile").write_text("FROM scratch\n")
    lines = differences(task)
    assert len(lines) == 2
    assert f"{examples / 'example_1.json'} is missing" in lines[0]
    assert f"{examples / 'example_9.json'} was added after export" in lines[1]


def test_a_task_without_the_record_cannot_be_proven(tasks, tmp_path):
    task = _copy(tasks["level1"], tmp_path)
    (task / "tests" / "agent_files.json").unlink()
    [line] = differences(task)
    assert "agent_files.json is missing" in line and "export the task again" in line


def test_verify_refuses_an_edited_instance_and_scores_the_unedited_one(tasks, tmp_path):
    """The scored instance is tests/instance.json: without the check, the edited task still scored 1.0."""
    task = _copy(tasks["level1"], tmp_path)
    solution = task / "solution" / "solution.json"
    ok = CliRunner().invoke(main, ["verify", str(task), "--solution", str(solution)])
    assert ok.exit_code == 0 and ok.stdout.startswith("reward 1.0000"), ok.output
    instance = task / "environment" / "instance.json"
    instance.write_text(instance.read_text().replace("1", "2", 1))
    refused = CliRunner().invoke(main, ["verify", str(task), "--solution", str(solution)])
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    [error] = [line for line in refused.output.splitlines() if line.startswith("Error:")]
    assert f"{instance} differs from what was exported" in error
    assert "reward" not in refused.output


@pytest.mark.sandbox
def test_check_fails_an_edited_task_without_running_its_trials(tasks, tmp_path):
    """The edited task fails naming its file, with no trial run; the unedited one beside it passes."""
    edited = _copy(tasks["level1"], tmp_path)
    unedited = _copy(tasks["level2"], tmp_path)
    instance = edited / "environment" / "instance.json"
    instance.write_text(instance.read_text().replace("1", "2", 1))
    results = {r.task: r for r in check.check_tasks(tmp_path / "tasks", jobs=2, only=("oracle",))}
    bad, good = results[edited.name], results[unedited.name]
    assert not bad.ok and bad.policies == [] and f"{instance} differs from what was exported" in bad.problem_text()
    assert good.ok and [p.reward for p in good.policies] == [1.0], good.problem_text()
    cli = CliRunner().invoke(main, ["check", str(edited)])
    assert cli.exit_code == 1 and f"FAILED {edited.name}: {instance} differs" in cli.output
