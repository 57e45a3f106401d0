"""Exporter: rows become self-contained Harbor task directories."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from orharbor import problem_modules
from orharbor.datasets.rows import RowError
from orharbor.exporter import ExportOptions, export_row
from orharbor.exporter.algorithm import demote_headings
from orharbor.exporter.task_dir import ExportOptionError
from orharbor.image_facts import BASE_IMAGE, ORTOOLS_PACKAGE
from orharbor.verifiers import contract
from orharbor.verifiers.main import verify, write_result


def _row(shipped_rows, level: int, size: str | None = None) -> dict:
    return next(r for r in shipped_rows if r["level"] == level and (size is None or r["size"] == size))


def _run_bundle(task: Path, deliverable: Path, logs: Path) -> dict:
    """Run the task's verifier with -I -S: no site-packages, so the standard library alone."""
    proc = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            str(task / "tests" / "verify.py"),
            "--deliverable",
            str(deliverable),
            "--logs-dir",
            str(logs),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads((logs / "reward.json").read_text())


def _details(logs: Path) -> dict:
    return json.loads((logs / "details.json").read_text())


def test_level1_verifier_bundle_runs_on_the_standard_library_alone(shipped_rows, tmp_path):
    """The tests/ bundle scores the oracle 1.0 and the naive solution 0.0 without site-packages."""
    task = export_row(_row(shipped_rows, 1), tmp_path)
    assert _run_bundle(task, task / "solution" / "solution.json", tmp_path / "a") == {"reward": 1.0}
    assert _run_bundle(task, task / "solution" / "naive" / "solution.json", tmp_path / "b") == {"reward": 0.0}
    assert _run_bundle(task, tmp_path / "missing.json", tmp_path / "c") == {"reward": -1.0}
    assert [_details(tmp_path / x)["feasible"] for x in "abc"] == [1, 1, 0]
    assert "does not exist" in _details(tmp_path / "c")["error"]


def test_level2_reward_json_holds_the_reward_alone(shipped_rows, tmp_path):
    """Level 2 too: reward.json is {"reward": x}; feasible and the per-instance rows go to details.json."""
    row = _row(shipped_rows, 2)
    task = export_row(row, tmp_path)
    reward, details = verify(
        str(task / "tests"),
        str(task / "solution" / "naive" / "solve.py"),
        workroot=str(tmp_path),
        python=sys.executable,
        drop_privileges=False,
    )
    write_result(str(tmp_path / "logs"), reward, details)
    assert json.loads((tmp_path / "logs" / "reward.json").read_text()) == {"reward": reward}
    details = _details(tmp_path / "logs")
    assert details["kind"] == "algorithm" and details["feasible"] == 1
    assert len(details["instances"]) == len(row["eval_seeds"])


def test_level2_oracle_program_answers_every_hidden_instance(shipped_rows, tmp_path):
    """solution/solve.py returns the stored reference of each eval instance, recognised by digest."""
    row = _row(shipped_rows, 2)
    task = export_row(row, tmp_path)
    config = contract.load(str(task / "tests"))
    assert len(config.cases) == len(row["eval_seeds"])
    for i, case in enumerate(config.cases):
        out = tmp_path / f"sol{i}.json"
        subprocess.run(
            [sys.executable, "-I", str(task / "solution" / "solve.py"), str(task / "tests" / case.instance), str(out)],
            check=True,
            timeout=60,
        )
        assert json.loads(out.read_text()) == row["eval_reference_solutions"][i]


def test_instruction_states_deliverable_budget_packages_and_reward(shipped_rows, tmp_path):
    """instruction.md says what to write where, the time budget, the packages and the formula."""
    one = (export_row(_row(shipped_rows, 1), tmp_path / "a") / "instruction.md").read_text()
    two = (
        export_row(_row(shipped_rows, 2), tmp_path / "b", ExportOptions(allow_ortools=True)) / "instruction.md"
    ).read_text()
    assert "/app/instance.json" in one and "/app/solution.json" in one and "30 minutes" in one
    assert "reward = (naive - objective) / (naive - reference)" in one
    assert "OR-Tools is not available" in one and "numpy and scipy" in one
    assert "/app/solve.py" in two and "60 minutes" in two and "numpy and scipy and ortools" in two
    assert "OR-Tools is not available" not in two and "mean of the per-instance rewards" in two
    assert one.count("\n# ") == 0 and one.startswith("# ")  # statement headings nest under the title


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "rostering", "jobshop"])
def test_instruction_names_the_class_s_own_reference_method(shipped_rows, tmp_path, problem):
    """The routing classes' references are OR-Tools routing, not CP-SAT; rostering's adds re-solving."""
    module = problem_modules.get(problem)
    for level in (1, 2):
        row = next(r for r in shipped_rows if r["problem"] == problem and r["level"] == level)
        text = " ".join((export_row(row, tmp_path / str(level)) / "instruction.md").read_text().split())
        assert f"seconds by the reference method: {module.REFERENCE}." in text
        assert ("CP-SAT" in text) == (problem not in ("cvrp", "vrptw"))
    assert ("guided local search" in module.REFERENCE) == (problem in ("cvrp", "vrptw"))
    assert ("re-solving" in module.REFERENCE) == (problem == "rostering")


def test_allow_ortools_reaches_both_images(shipped_rows, tmp_path):
    """--allow-ortools puts the pinned ortools into the agent and the verifier image alike."""
    plain = export_row(_row(shipped_rows, 2), tmp_path / "a")
    allowed = export_row(_row(shipped_rows, 2), tmp_path / "b", ExportOptions(allow_ortools=True))
    for sub in ("environment", "tests"):
        assert ORTOOLS_PACKAGE not in (plain / sub / "Dockerfile").read_text()
        assert ORTOOLS_PACKAGE in (allowed / sub / "Dockerfile").read_text()


def test_shared_mode_has_no_verifier_image_and_allowlist_is_written(shipped_rows, tmp_path):
    """Shared mode writes no tests/Dockerfile nor [verifier.environment]; an allowlist lands in [agent]."""
    options = ExportOptions(verifier_mode="shared", agent_network="allowlist", allowed_hosts=("api.anthropic.com",))
    task = export_row(_row(shipped_rows, 1), tmp_path, options)
    assert not (task / "tests" / "Dockerfile").exists()
    config = tomllib.loads((task / "task.toml").read_text())
    assert config["verifier"]["environment_mode"] == "shared" and "environment" not in config["verifier"]
    assert config["agent"]["network_mode"] == "allowlist"
    assert config["agent"]["allowed_hosts"] == ["api.anthropic.com"]
    assert config["environment"]["network_mode"] == "public" and "allowed_hosts" not in config["environment"]
    assert "allowlist" in (task / "instruction.md").read_text()


def test_separate_verifier_environment_matches_the_agents_resources_offline(shipped_rows, tmp_path):
    """[verifier.environment] copies [environment]'s resources with no-network; [verifier] sets no network."""
    options = ExportOptions(cpus=3, memory_mb=5000, storage_mb=7000)
    config = tomllib.loads((export_row(_row(shipped_rows, 2), tmp_path, options) / "task.toml").read_text())
    environment, verifier = config["environment"], config["verifier"]
    assert verifier["environment"] == {**environment, "network_mode": "no-network"}
    assert (environment["cpus"], environment["memory_mb"], environment["storage_mb"]) == (3, 5000, 7000)
    assert environment["network_mode"] == "public" and "network_mode" not in verifier
    assert "network_mode" not in config["agent"]


@pytest.mark.parametrize("level", [1, 2])
def test_base_image_reaches_the_agent_and_verifier_dockerfiles(shipped_rows, tmp_path, level):
    """--base-image replaces the pinned default on both FROM lines."""
    image = "registry.example/python:3.12-local"
    task = export_row(_row(shipped_rows, level), tmp_path, ExportOptions(base_image=image))
    for sub in ("environment", "tests"):
        dockerfile = (task / sub / "Dockerfile").read_text()
        assert f"FROM {image}\n" in dockerfile and BASE_IMAGE not in dockerfile


def test_instruction_says_what_is_scored_when_the_time_is_up(shipped_rows, tmp_path):
    """Harbor verifies what is there at the agent's timeout: no '-1.0 for a timeout' of the agent's own."""
    one = (export_row(_row(shipped_rows, 1), tmp_path / "a") / "instruction.md").read_text()
    two = (export_row(_row(shipped_rows, 2), tmp_path / "b") / "instruction.md").read_text()
    flat_one, flat_two = " ".join(one.split()), " ".join(two.split())
    assert "the state of `/app/solution.json` at that moment is scored" in flat_one
    assert "the state of `/app/solve.py` at that moment is scored" in flat_two
    for text in (flat_one, flat_two):
        assert "running out of time costs nothing by itself" in text
        assert "timeout scores -1.0" not in text and "a crash or a timeout" not in text
    assert "a run that overruns it scores -1.0 for that instance" in flat_two


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"verifier_mode": "docker"}, "verifier mode"),
        ({"agent_network": "none"}, "agent network"),
        ({"agent_network": "allowlist"}, "allowed-hosts"),
        ({"base_image": ""}, "base image must be one image reference"),
        ({"base_image": "python:3.12 AS x"}, "base image must be one image reference"),
        ({"base_image": "python:3.12\nRUN curl evil"}, "base image must be one image reference"),
        ({"base_image": " python:3.12"}, "base image must be one image reference"),
    ],
)
def test_bad_export_options_are_refused(kwargs, message):
    """Options are validated when built, with the flag named."""
    with pytest.raises(ExportOptionError, match=message):
        ExportOptions(**kwargs)


def test_row_from_another_generator_version_is_refused(shipped_rows, tmp_path):
    """A row built by another generator version would silently mean another instance: refuse it."""
    row = dict(_row(shipped_rows, 1), generator_version=99)
    with pytest.raises(RowError, match="generator version 99"):
        export_row(row, tmp_path)


def test_row_without_reference_gets_one_at_export_time(tmp_path):
    """A bare row (seed only) is completed with reference and baseline when exported."""
    row = {
        "id": "jobshop-4x4-l1-s5",
        "problem": "jobshop",
        "size": "4x4",
        "level": 1,
        "instance_seed": 5,
        "generator_version": 1,
    }
    task = export_row(row, tmp_path, ExportOptions(reference_time_limit_s=2.0))
    config = contract.load(str(task / "tests"))
    assert config.reference <= config.naive
    assert _run_bundle(task, task / "solution" / "solution.json", tmp_path / "logs")["reward"] == 1.0


def test_demote_headings_leaves_code_blocks_alone():
    """Statement headings move one level down; '#' lines inside code fences do not."""
    text = "# Title\n\n```\n# not a heading\n```\n## Part"
    assert demote_headings(text) == "## Title\n\n```\n# not a heading\n```\n### Part"
