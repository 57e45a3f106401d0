"""Modelling specs: the schema and its messages, export to tasks, validate-specs, check on real tasks."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from orharbor import check
from orharbor.cli import main
from orharbor.exporter import ExportOptions
from orharbor.verifiers import contract
from orharbor.exporter.modelling import export_spec
from orharbor.modelling.spec import SpecError, load_spec, load_specs
from orharbor.modelling.validate import validate_specs

GOOD = """id: toy_lp
difficulty: easy
description: |
  A workshop makes chairs (1 hour, profit 30) and tables (3 hours, profit 70) with the hours in
  data.json. Write the maximum profit to profit.txt and the number of chairs to chairs.txt.
template: files/toy
golden_script: golden/toy_lp.py
required_outputs:
  profit.txt: {value: 2300, rel_tol: 1.0e-6}
  chairs.txt: "30"
hints:
  - {type: legit, text: "It is a linear programme.", why_legitimate: "names the model class only"}
tags: [lp]
"""

GOLDEN = """import json
from ortools.linear_solver import pywraplp
d = json.load(open("data.json"))
s = pywraplp.Solver.CreateSolver("GLOP")
c = s.NumVar(0, d["max_chairs"], "c")
t = s.NumVar(0, s.infinity(), "t")
s.Add(c + 3 * t <= d["hours"])
s.Maximize(30 * c + 70 * t)
s.Solve()
open("profit.txt", "w").write(f"{s.Objective().Value():.6f}\\n")
open("chairs.txt", "w").write(f"{round(c.solution_value())}\\n")
"""


@pytest.fixture
def toy(tmp_path) -> Path:
    """A folder with one valid spec, its data and its golden script."""
    (tmp_path / "files" / "toy").mkdir(parents=True)
    (tmp_path / "golden").mkdir()
    (tmp_path / "files" / "toy" / "data.json").write_text('{"hours": 90, "max_chairs": 30}')
    (tmp_path / "golden" / "toy_lp.py").write_text(GOLDEN)
    (tmp_path / "toy_lp.yaml").write_text(GOOD)
    return tmp_path


def test_a_valid_spec_loads_with_its_outputs_in_the_graders_shape(toy):
    spec = load_spec(toy / "toy_lp.yaml")
    assert spec.outputs == {
        "profit.txt": {"value": 2300.0, "rel_tol": 1e-6, "abs_tol": 1e-9},
        "chairs.txt": {"text": "30"},
    }
    assert spec.data_files == ("data.json",) and spec.golden_script.name == "toy_lp.py"


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("difficulty: easy", "difficulty: trivial", "difficulty: 'trivial' is not one of"),
        ("difficulty: easy\n", "", "difficulty: 'difficulty' is a required property"),
        ("id: toy_lp", "id: Toy LP", "id: 'Toy LP' does not match"),
        ("id: toy_lp", "id: other_lp", "id: 'other_lp' must equal the file name"),
        (
            "golden_script: golden/toy_lp.py",
            "golden_script: golden/missing.py",
            "golden_script: golden/missing.py does not",
        ),
        ("golden_script: golden/toy_lp.py", "golden_script: ../../etc/passwd.py", "points outside the spec's folder"),
        ("template: files/toy", "template: files/none", "template: files/none is not a folder"),
        ('chairs.txt: "30"', "chairs.txt: [30]", "required_outputs.chairs.txt: [30] is not valid"),
        ('chairs.txt: "30"', "chairs.txt: {value: 30, rel_tol: -1}", "required_outputs.chairs.txt"),
        ('chairs.txt: "30"', 'data.json: "30"', "required_outputs: data.json is also a template file"),
        ('chairs.txt: "30"', '../escape.txt: "30"', "required_outputs: '../escape.txt' does not match"),
        ("type: legit", "type: answer", "hints.0.type: 'answer' is not one of"),
        ("tags: [lp]", "tags: [lp]\nowner: me", "Additional properties are not allowed ('owner'"),
        ("description: |", "description: |\n  short\nx: |", "Additional properties"),
        ("id: toy_lp", "id: [toy_lp", "not valid YAML"),
    ],
)
def test_broken_specs_name_the_file_and_the_key(toy, old, new, message):
    path = toy / "toy_lp.yaml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)


def test_duplicate_ids_cannot_both_load(toy):
    (toy / "toy_lp.yml").write_text(GOOD)
    with pytest.raises(SpecError, match="toy_lp.yml: id: 'toy_lp' is also the id of toy_lp.yaml"):
        load_specs(toy)
    result = CliRunner().invoke(main, ["export", "--specs", str(toy), "--out", str(toy / "out")])
    assert result.exit_code == 1 and "is also the id of" in result.output


def test_validate_specs_reports_a_golden_script_that_disagrees(toy):
    (toy / "toy_lp.yaml").write_text(GOOD.replace("value: 2300", "value: 1900"))
    [result] = validate_specs(load_specs(toy), sandbox=False)
    assert not result.ok
    assert result.errors == ["profit.txt: golden script wrote '2300.000000', the spec expects 1900.0"]
    (toy / "golden" / "toy_lp.py").write_text("raise SystemExit('no solver')\n")
    [result] = validate_specs(load_specs(toy), sandbox=False)
    assert not result.ok and "exited with 1: no solver" in result.errors[0]


@pytest.mark.sandbox
def test_validate_specs_cli_runs_golden_scripts_in_the_sandbox(toy):
    ok = CliRunner().invoke(main, ["validate-specs", str(toy)])
    assert ok.exit_code == 0 and "toy_lp  ok" in ok.output and "1/1 specs valid" in ok.output
    (toy / "golden" / "toy_lp.py").write_text(GOLDEN.replace('"data.json"', '"/tests/task.json"'))
    bad = CliRunner().invoke(main, ["validate-specs", str(toy)])
    assert bad.exit_code == 1 and "FileNotFoundError" in bad.output


def test_shipped_specs_cover_the_modelling_families(shipped_specs):
    """At least 12 specs; LP, MIP and network models; every difficulty; data files in most."""
    assert len(shipped_specs) >= 12
    tags = {t for s in shipped_specs for t in s.tags}
    assert {"lp", "mip", "network"} <= tags, tags
    assert {s.difficulty for s in shipped_specs} == {"easy", "medium", "hard"}
    assert sum(bool(s.data_files) for s in shipped_specs) >= 8


def _imports(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_golden_scripts_solve_with_ortools_or_pyomo(shipped_specs):
    for spec in shipped_specs:
        assert _imports(spec.golden_script) & {"ortools", "pyomo"}, spec.id


@pytest.mark.sandbox
def test_every_shipped_golden_script_produces_its_outputs_in_the_sandbox(shipped_specs):
    results = validate_specs(shipped_specs, sandbox=True, jobs=2)
    assert [(r.spec, r.errors) for r in results if not r.ok] == []


def test_exported_spec_task_holds_data_oracle_and_sealed_tests(toy, tmp_path):
    spec = load_spec(toy / "toy_lp.yaml")
    task = export_spec(spec, tmp_path / "out", ExportOptions(), hints="none")
    assert (task / "environment" / "files" / "data.json").is_file()
    assert "COPY files/ /app/" in (task / "environment" / "Dockerfile").read_text()
    assert "ortools==" in (task / "environment" / "Dockerfile").read_text()
    instruction = (task / "instruction.md").read_text()
    assert spec.description.splitlines()[0] in instruction and "`/app/data.json`" in instruction
    assert "linear programme" not in instruction
    assert (
        "linear programme"
        in export_spec(spec, tmp_path / "hinted", ExportOptions(), "all").joinpath("instruction.md").read_text()
    )
    config = contract.load(str(task / "tests"))
    assert config.deliverables == ("/app/profit.txt", "/app/chairs.txt")
    assert config.outputs["chairs.txt"] == {"text": "30"}
    assert (task / "solution" / "toy_lp.py").read_text() == GOLDEN
    modes = {p.name: p.stat().st_mode & 0o777 for p in (task / "tests").iterdir()}
    assert modes["task.json"] == 0o600 and modes["orharbor.zip"] == 0o600
    for path in (task / "environment").rglob("*"):
        assert "2300" not in path.read_text() if path.is_file() else True


def test_every_modelling_task_ships_a_naive_answer_that_runs_and_scores_zero(exported_specs, exported_retail, tmp_path):
    """solution/naive/ holds /app-relative answer files, well-formed (executed 1) and wrong (reward 0.0);
    in a RetailOpt task a model.py that writes such an answer when the verifier runs it."""
    import sys

    from orharbor.verifiers.main import verify

    folders = [
        exported_specs["separate"],
        exported_specs["shared"],
        exported_retail["separate"],
        exported_retail["shared"],
    ]
    tasks = sorted(p.parent for folder in folders for p in folder.glob("*/task.toml"))
    assert len(tasks) >= 32
    for task in tasks:
        naive = task / "solution" / "naive"
        config = contract.load(str(task / "tests"))
        files = sorted(p.relative_to(naive).as_posix() for p in naive.rglob("*") if p.is_file())
        spec = isinstance(config, contract.SpecTask)
        answers = config.outputs if spec else ["model.py"]
        assert files == sorted(answers), task.name
        deliverable = naive if spec else naive / "model.py"
        reward, details = verify(
            str(task / "tests"), str(deliverable), workroot=str(tmp_path), python=sys.executable, drop_privileges=False
        )
        assert (reward, details["executed"], details["correct"]) == (0.0, 1, 0), (task.name, details)


def test_base_image_reaches_both_modelling_dockerfiles(toy, tmp_path):
    """The modelling exporter puts ExportOptions.base_image on the agent's and the verifier's FROM line."""
    task = export_spec(load_spec(toy / "toy_lp.yaml"), tmp_path / "out", ExportOptions(base_image="localhost/py:3.12"))
    for sub in ("environment", "tests"):
        assert (task / sub / "Dockerfile").read_text().count("FROM localhost/py:3.12\n") == 1


def test_modelling_instruction_says_the_answers_are_scored_when_the_time_is_up(toy, tmp_path):
    """The agent's timeout still scores whatever answer files are in /app then."""
    task = export_spec(load_spec(toy / "toy_lp.yaml"), tmp_path / "out", ExportOptions())
    text = " ".join((task / "instruction.md").read_text().split())
    assert "the state of your answer files in `/app` at that moment is scored" in text
    assert "after you finish" not in text


@pytest.mark.slow
@pytest.mark.sandbox
def test_check_scores_spec_tasks_oracle_one_naive_zero_nothing_zero(exported_specs):
    results = check.check_tasks(exported_specs["separate"], jobs=2)
    assert len(results) >= 12
    for r in results:
        assert r.ok, (r.task, r.problem_text())
        assert {p.policy: p.reward for p in r.policies} == {"oracle": 1.0, "naive": 0.0, "nothing": 0.0}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["separate", "shared"])
@pytest.mark.sandbox
def test_every_attack_on_a_spec_task_scores_zero(exported_specs, mode):
    task = exported_specs[mode] / "capacitated_facility_location"
    [result] = check.check_tasks(task, jobs=1, attacks=True)
    names = {p.policy for p in result.policies if p.attack}
    assert {"symlink-tests", "hedged-numbers", "snoop-expected", "reward-file"} <= names
    assert result.ok, result.problem_text()


@pytest.mark.sandbox
def test_without_sealed_tests_a_lingering_process_copies_the_expected_values(exported_specs, tmp_path):
    """The mutation that shows the seal and the collect hook are what stop a lingering snoop in shared mode."""
    task = tmp_path / "unsealed"
    shutil.copytree(exported_specs["shared"] / "capacitated_facility_location", task)
    for path in (task / "tests").rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (task / "tests").chmod(0o755)
    toml = task / "task.toml"  # and without the collect hook that ends the agent's processes first
    toml.write_text(toml.read_text().replace('command = "for round', 'command = "true" # '))
    [result] = check.check_tasks(task, jobs=1, attacks=True, only=("snoop-expected",))
    [snoop] = result.policies
    assert snoop.reward == 1.0
