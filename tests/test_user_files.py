"""What the user sees and keeps (issue 12, items 8-11).

- ``verify`` scores as the task would: a level-2 solve.py runs under the task's
  interpreter rules, spec tasks take a folder, usage and task errors are one
  clear line, output is a summary or JSON, a failed run shows its stderr (at level 2: the
  run on the public example);
- no command loses a user's file: existing targets are refused without
  ``--force``, every file and task folder is written beside its target and
  renamed into place;
- nothing is wrong silently: invalid instances, MODEL_INVALID, empty inputs,
  every bad spec;
- the README says what the commands do.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import shutil
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from orharbor import problem_modules
from orharbor.cli import main
from orharbor.exporter import ExportOptions, export_row
from orharbor.files import WouldReplace, atomic_path, replace_dir, write_atomically

REPO = Path(__file__).resolve().parents[1]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result, message: str, code: int = 1) -> None:
    """A clean failure: the exit code, one 'Error:' line holding ``message``, no traceback."""
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0], result.output


def shipped_row(shipped_rows, task_id: str) -> dict:
    return next(row for row in shipped_rows if row["id"] == task_id)


@pytest.fixture(scope="module")
def l2_tasks(tmp_path_factory, shipped_rows) -> dict[str, Path]:
    """The shipped 4x4 job shop level-2 task, exported without and with --allow-ortools."""
    row = shipped_row(shipped_rows, "jobshop-4x4-l2-s0")
    return {
        "plain": export_row(row, tmp_path_factory.mktemp("plain")),
        "ortools": export_row(row, tmp_path_factory.mktemp("ortools"), ExportOptions(allow_ortools=True)),
    }


@pytest.fixture(scope="module")
def l1_task(tmp_path_factory, shipped_rows) -> Path:
    return export_row(shipped_row(shipped_rows, "jobshop-4x4-l1-s0"), tmp_path_factory.mktemp("l1"))


def naive_program(task: Path) -> str:
    return (task / "solution" / "naive" / "solve.py").read_text()


# ------------------------------------------------------------------ 8. verify scores as the task would


@pytest.mark.sandbox
def test_verify_runs_solve_py_under_the_tasks_interpreter_not_this_one(l2_tasks, tmp_path):
    """solve.py importing OR-Tools: every run fails on a task without --allow-ortools (although OR-Tools
    is installed here), and scores the naive 0.0 on a task that allows it."""
    solve = tmp_path / "solve.py"
    solve.write_text("import ortools\n" + naive_program(l2_tasks["plain"]))
    plain = run("verify", l2_tasks["plain"], "--solution", solve, "--json")
    assert plain.exit_code == 0, plain.output
    details = json.loads(plain.stdout)
    assert details["reward"] == -1.0
    assert all(row["feasible"] == 0 and "stderr_tail" not in row for row in details["instances"])
    assert "No module named 'ortools'" in details["example"]["stderr_tail"]  # hidden runs keep no output
    allowed = json.loads(run("verify", l2_tasks["ortools"], "--solution", solve, "--json").stdout)
    assert allowed["reward"] == 0.0 and all(row["feasible"] for row in allowed["instances"])


PROBE = """import os, sys
try:
    import numpy, scipy
    have = "numpy+scipy"
except ImportError as exc:
    have = f"missing {exc.name}"
try:
    import ortools
    have += " ortools"
except ImportError:
    pass
print(f"uid={os.getuid()} prefix={sys.prefix} has={have}", file=sys.stderr)
sys.exit(1)
"""


def _probe_line(result) -> str:
    assert result.exit_code == 0, result.output
    return next(line.strip() for line in result.stdout.splitlines() if line.strip().startswith("uid="))


@pytest.mark.slow
def test_verify_as_another_user_runs_solve_py_as_that_user_under_a_venv_of_the_tasks_packages(
    l2_tasks, tmp_path, monkeypatch
):
    """Not root: solve.py runs as the caller, with numpy and scipy importable and ortools not."""
    solve = tmp_path / "solve.py"
    solve.write_text(PROBE)
    real_uid = os.getuid()
    monkeypatch.setattr(os, "geteuid", lambda: 4321)
    line = _probe_line(run("verify", l2_tasks["plain"], "--solution", solve))
    assert line.startswith(f"uid={real_uid} ") and line.endswith("has=numpy+scipy")
    assert not line.split("prefix=")[1].startswith(os.path.realpath(sys.prefix))  # not this venv
    with_ortools = _probe_line(run("verify", l2_tasks["ortools"], "--solution", solve))
    assert with_ortools.endswith("has=numpy+scipy ortools")


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can drop to the task's uid")
@pytest.mark.sandbox
def test_verify_as_root_drops_solve_py_to_the_tasks_unprivileged_uid(l2_tasks, tmp_path):
    """Root: solve.py runs as the task's solver uid, under the venv at the task's own path."""
    solve = tmp_path / "solve.py"
    solve.write_text(PROBE)
    config = json.loads((l2_tasks["plain"] / "tests" / "task.json").read_text())
    line = _probe_line(run("verify", l2_tasks["plain"], "--solution", solve))
    assert line == f"uid={config['run']['uid']} prefix=/opt/orharbor-solver has=numpy+scipy"


@pytest.mark.sandbox
def test_verify_refuses_when_it_cannot_reproduce_the_tasks_interpreter(l2_tasks, tmp_path, monkeypatch):
    """A package the task's venv needs is missing here, no bubblewrap as root, or the task names another
    interpreter: a refusal, never a score under some other interpreter."""
    solve = tmp_path / "solve.py"
    solve.write_text(naive_program(l2_tasks["plain"]))
    monkeypatch.setattr("orharbor.harbor_env.sandbox.SOLVER_PACKAGES", ("numpy", "orharbor-no-such-package"))
    one_error_line(run("verify", l2_tasks["plain"], "--solution", solve), "cannot build the task's solver interpreter")
    monkeypatch.undo()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr("orharbor.harbor_env.sandbox.shutil.which", lambda name: None)
    one_error_line(
        run("verify", l2_tasks["plain"], "--solution", solve),
        "as root, verify runs the task's program only in a bubblewrap sandbox",
    )
    monkeypatch.undo()
    task = tmp_path / "task"
    shutil.copytree(l2_tasks["plain"], task)
    config = json.loads((task / "tests" / "task.json").read_text())
    config["run"]["python"] = "/usr/bin/python3"
    (task / "tests" / "task.json").write_text(json.dumps(config))
    one_error_line(run("verify", task, "--solution", solve), "verify cannot reproduce that interpreter")


@pytest.mark.sandbox
def test_verify_shows_the_stderr_of_the_public_example_run(l2_tasks, tmp_path):
    """A buggy solve.py: each hidden run gives a fixed reason, and its traceback appears once, under the
    run on the public example (a hidden run's output is never kept: it could spell out its instance)."""
    solve = tmp_path / "solve.py"
    solve.write_text("def solve(n):\n    return n / 0\n\nsolve(1)\n")
    result = run("verify", l2_tasks["plain"], "--solution", solve)
    assert result.exit_code == 0, result.output
    runs = len(json.loads((l2_tasks["plain"] / "tests" / "task.json").read_text())["cases"])
    assert result.stdout.count("solve.py exited with 1 and wrote no solution") == runs + 1
    assert result.stdout.count("ZeroDivisionError: division by zero") == 1
    assert result.stdout.count("solve.py stderr (last") == 1
    assert "  public example (not scored): solve.py exited with 1" in result.stdout
    assert "line 2, in solve" in result.stdout


@pytest.mark.sandbox
def test_verify_prints_a_summary_or_json_never_both(l2_tasks):
    """Level 2: a readable summary by default (no JSON line); --json is one JSON document, nothing else."""
    oracle = l2_tasks["plain"] / "solution" / "solve.py"
    text = run("verify", l2_tasks["plain"], "--solution", oracle)
    assert text.exit_code == 0
    lines = text.stdout.splitlines()
    assert lines[0].startswith("reward 1.0000") and not any(line.lstrip().startswith(("{", "[")) for line in lines)
    assert len([line for line in lines if line.startswith("  instance ")]) == 3
    details = json.loads(run("verify", l2_tasks["plain"], "--solution", oracle, "--json").stdout)
    assert details["reward"] == 1.0 and len(details["instances"]) == 3


def test_verify_spec_task_takes_the_folder_of_outputs(shipped_specs, tmp_path):
    """A spec task grades several files: --solution is their folder; a file is a usage error."""
    from orharbor.exporter.modelling import export_spec

    spec = next(s for s in shipped_specs if len(s.outputs) > 1)
    task = export_spec(spec, tmp_path / "tasks")
    answers = tmp_path / "answers"
    answers.mkdir()
    for name, expected in spec.outputs.items():
        (answers / name).write_text((expected["text"] if "text" in expected else repr(expected["value"])) + "\n")
    result = run("verify", task, "--solution", answers)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("reward 1.0000  (executed 1, correct 1)")
    one = answers / next(iter(spec.outputs))
    usage = run("verify", task, "--solution", one)
    one_error_line(usage, "pass the folder holding the output files", code=2)
    assert all(name in usage.output for name in spec.outputs)


@pytest.mark.sandbox
def test_verify_retail_task_runs_model_py_under_the_modelling_stack(retail_rows, tmp_path):
    """A RetailOpt task whose verifier runs model.py: verify runs it too (the oracle scores 1.0), under the
    modelling image's packages; a model that crashes scores 0.0 and shows its stderr."""
    from orharbor.exporter.modelling import export_retail

    row = next(r for r in retail_rows if r["scenario_id"] == "retail_f1_base_v0")
    task = export_retail(row, tmp_path / "tasks")
    assert json.loads((task / "tests" / "task.json").read_text())["run"]["argv"][0] == "model.py"
    oracle = run("verify", task, "--solution", task / "solution" / "model.py")
    assert oracle.exit_code == 0 and oracle.stdout.startswith("reward 1.0000  (executed 1, correct 1)"), oracle.output
    crash = tmp_path / "model.py"
    crash.write_text("import pyomo, highspy, numpy, scipy, ortools\nraise SystemExit('no model yet')\n")
    result = run("verify", task, "--solution", crash)
    assert result.stdout.startswith("reward 0.0000  (executed 0, correct 0)"), result.output
    assert "model.py stderr (last 1 lines):\n    no model yet" in result.stdout


def test_verify_a_folder_where_a_file_is_scored_is_a_usage_error(l1_task, tmp_path):
    one_error_line(run("verify", l1_task, "--solution", tmp_path), "pass solution.json", code=2)


def test_verify_a_missing_solution_is_a_usage_error_not_a_score(l1_task, tmp_path):
    """--solution nosuch.json: exit 2 naming the path; no reward printed."""
    result = run("verify", l1_task, "--solution", tmp_path / "nosuch.json")
    one_error_line(result, "does not exist", code=2)
    assert "reward" not in result.output


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"task_id": "x", "problem": "jobshop", "level": 1,', "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"task_id": "x"}', "task.json format 1, but this orharbor reads format 2; re-export the task"),
        (
            '{"format_version": 2, "kind": "level1", "task_id": "x", "deliverables": ["/app/solution.json"]}',
            "not an orharbor task.json (level1: no 'problem')",
        ),
        ('{"format_version": 2, "kind": "level3"}', "unknown task kind 'level3'"),
        (
            '{"format_version": 2, "kind": "level1", "task_id": "x", "deliverables": ["/app/solution.json"], '
            '"problem": "nosuch", "instance": "instance.json", "instance_sha256": "", "naive": 2, "reference": 1}',
            "a broken task",
        ),
    ],
    ids=["truncated", "list", "format-1", "no-problem", "unknown-kind", "unknown-problem"],
)
def test_verify_a_corrupt_task_json_is_one_clear_error(l1_task, tmp_path, text, message):
    task = tmp_path / "task"
    shutil.copytree(l1_task, task)
    (task / "tests" / "task.json").write_text(text)
    one_error_line(run("verify", task, "--solution", task / "solution" / "solution.json"), message)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"cases": None}, "not an orharbor task.json (level2: no 'cases')"),
        (
            {"run": {"python": "/opt/orharbor-solver/bin/python3", "uid": 65534, "limits": {"nonsense": 1}}},
            "not an orharbor task.json (run.limits: unknown field 'nonsense')",
        ),
        ({"cases": [1]}, "not an orharbor task.json (cases is not a JSON object)"),
    ],
    ids=["no-cases", "bad-limits", "bad-case"],
)
def test_verify_a_broken_level2_task_json_is_one_clear_error(l2_tasks, tmp_path, change, message):
    task = tmp_path / "task"
    shutil.copytree(l2_tasks["plain"], task)
    config = json.loads((task / "tests" / "task.json").read_text())
    config.update(change)
    (task / "tests" / "task.json").write_text(json.dumps({k: v for k, v in config.items() if v is not None}))
    one_error_line(run("verify", task, "--solution", task / "solution" / "solve.py"), message)


# ------------------------------------------------------------------ 9. never lose a user's files


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and p.name != ".gitattributes")


def test_export_refuses_an_existing_task_folder_before_writing_anything(tmp_path):
    """A task folder of the same id (with the user's edits) is refused; no other task is written."""
    out = tmp_path / "tasks"
    mine = out / "jobshop-4x4-l1-s0"
    mine.mkdir(parents=True)
    (mine / "notes.md").write_text("my edits\n")
    result = run("export", "--problem", "jobshop", "--out", out)
    one_error_line(result, f"{mine} already exists; pass --force to replace it (nothing was written)")
    assert sorted(p.name for p in out.iterdir()) == ["jobshop-4x4-l1-s0"]
    assert (mine / "notes.md").read_text() == "my edits\n"


def test_export_force_replaces_the_task_folder_and_keeps_the_others(tmp_path):
    """--force: the same-named task is replaced (the user's file goes), other folders stay, no leftovers."""
    out = tmp_path / "tasks"
    assert run("export", "--problem", "jobshop", "--out", out).exit_code == 0
    task = out / "jobshop-4x4-l1-s0"
    (task / "notes.md").write_text("my edits\n")
    (out / "my-own-task").mkdir()
    inode = task.stat().st_ino
    again = run("export", "--problem", "jobshop", "--out", out)
    one_error_line(again, "pass --force to replace them")
    assert (task / "notes.md").exists()
    forced = run("export", "--problem", "jobshop", "--out", out, "--force")
    assert forced.exit_code == 0, forced.output
    assert not (task / "notes.md").exists() and (task / "task.toml").is_file()
    assert task.stat().st_ino != inode  # a new folder renamed into place, not rewritten in place
    assert (out / "my-own-task").is_dir() and _hidden(out) == []


def test_export_that_fails_leaves_the_old_task_folder_as_it_was(tmp_path, monkeypatch):
    """A task whose writing fails midway: the folder it would replace is untouched, nothing half-written."""
    out = tmp_path / "tasks"
    assert run("export", "--problem", "jobshop", "--out", out).exit_code == 0
    task = out / "jobshop-4x4-l1-s0"
    (task / "notes.md").write_text("my edits\n")
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))

    def broken(*args, **kwargs):
        raise OSError(errno.ENOSPC, "disk full (simulated)")

    monkeypatch.setattr("orharbor.exporter.algorithm.instruction", broken)
    one_error_line(run("export", "--problem", "jobshop", "--out", out, "--force"), "disk full (simulated)")
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    assert (task / "notes.md").read_text() == "my edits\n"


def test_export_library_refuses_to_replace_a_task_unless_forced(shipped_rows, tmp_path):
    row = shipped_row(shipped_rows, "wtardiness-n8-l1-s0")
    task = export_row(row, tmp_path)
    (task / "notes.md").write_text("mine")
    with pytest.raises(WouldReplace, match="pass --force"):
        export_row(row, tmp_path)
    assert (task / "notes.md").exists()
    assert not (export_row(row, tmp_path, force=True) / "notes.md").exists()


def test_modelling_exporters_refuse_to_replace_a_task_unless_forced(shipped_specs, retail_rows, tmp_path):
    """export_spec and export_retail keep a user's task folder as export_row does (they used to delete it)."""
    from orharbor.exporter.modelling import export_retail, export_spec

    row = next(r for r in retail_rows if r["scenario_id"] == "retail_f1_base_v0")
    for export in (
        lambda **kw: export_spec(shipped_specs[0], tmp_path, **kw),
        lambda **kw: export_retail(row, tmp_path, **kw),
    ):
        task = export()
        (task / "notes.md").write_text("mine")
        with pytest.raises(WouldReplace, match="pass --force"):
            export()
        assert (task / "notes.md").read_text() == "mine"
        assert not (export(force=True) / "notes.md").exists()
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


@pytest.fixture(scope="module")
def retail_file(tmp_path_factory, retail_v0) -> Path:
    """Two RetailOpt-190 records in the published shape."""
    lines = retail_v0.read_text().splitlines()[:2]
    path = tmp_path_factory.mktemp("retail") / "two.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_import_refuses_to_write_over_its_own_source(retail_file, tmp_path):
    """--out resolving to SOURCE (same path, another spelling, a symlink): a usage error, SOURCE untouched."""
    source = tmp_path / "scenarios.jsonl"
    shutil.copyfile(retail_file, source)
    original = source.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    for out in (source, tmp_path / "sub" / ".." / "scenarios.jsonl", link):
        (tmp_path / "sub").mkdir(exist_ok=True)
        result = run("import", "retailopt", source, "--out", out, "--force")
        one_error_line(result, "is the input file", code=2)
        assert source.read_bytes() == original


def test_import_refuses_an_existing_out_unless_forced_and_then_renames_over_it(retail_file, tmp_path):
    out = tmp_path / "rows.jsonl"
    out.write_text("my rows\n")
    one_error_line(run("import", "retailopt", retail_file, "--out", out), "pass --force")
    assert out.read_text() == "my rows\n"
    inode = out.stat().st_ino
    forced = run("import", "retailopt", retail_file, "--out", out, "--force")
    assert forced.exit_code == 0 and "imported 2 scenarios" in forced.output
    assert out.stat().st_ino != inode  # written beside it and renamed, not rewritten in place
    assert [json.loads(line)["kind"] for line in out.read_text().splitlines()] == ["retailopt"] * 2
    assert _hidden(tmp_path) == []


def test_build_dataset_refuses_an_existing_out_before_solving(tmp_path):
    out = tmp_path / "rows.jsonl"
    out.write_text("hours of solving\n")
    args = (
        "build-dataset",
        "--problem",
        "jobshop",
        "--sizes",
        "4x4",
        "--level",
        "1",
        "--num-rows",
        "1",
        "--reference-time-limit",
        "1",
        "--workers",
        "1",
        "--out",
        out,
    )
    result = run(*args)
    one_error_line(result, "pass --force")
    assert "solving" not in result.output and out.read_text() == "hours of solving\n"
    inode = out.stat().st_ino
    forced = run(*args, "--force")
    assert forced.exit_code == 0, forced.output
    assert out.stat().st_ino != inode and json.loads(out.read_text())["id"] == "jobshop-4x4-l1-s0"
    assert _hidden(tmp_path) == []


def test_atomic_writes_keep_the_old_file_when_the_writer_fails(tmp_path):
    path = tmp_path / "registry.json"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half of the new")
        raise RuntimeError("interrupted")
    assert path.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["registry.json"]
    write_atomically(path, "new\n")
    assert path.read_text() == "new\n" and sorted(p.name for p in tmp_path.iterdir()) == ["registry.json"]


def test_replace_dir_needs_force_to_replace(tmp_path):
    built, target = tmp_path / ".new", tmp_path / "task"
    built.mkdir()
    (built / "a").write_text("new")
    target.mkdir()
    (target / "b").write_text("old")
    with pytest.raises(WouldReplace):
        replace_dir(built, target, force=False)
    assert (target / "b").exists() and built.is_dir()
    replace_dir(built, target, force=True)
    assert sorted(p.name for p in target.iterdir()) == ["a"] and sorted(p.name for p in tmp_path.iterdir()) == ["task"]


# ------------------------------------------------------------------ 10. nothing wrong silently


def test_solve_refuses_an_instance_with_a_negative_duration(tmp_path):
    """The instance that came back FEASIBLE_HINT with an objective is now an error naming the field."""
    instance = problem_modules.get("jobshop").generate(1, "4x4")
    instance["durations"][0][1] = -5
    path = tmp_path / "neg.json"
    path.write_text(json.dumps(instance))
    result = run("solve", "--problem", "jobshop", path, "--reference-time-limit", "1", "--solver-workers", "1")
    one_error_line(result, "not a valid jobshop instance: durations[0][1]: -5 is below the minimum 0")
    assert "FEASIBLE_HINT" not in result.output and "objective" not in result.output


def _break(problem: str, instance: dict) -> None:
    """Break one rule of each class's instance, in place."""
    if problem == "jobshop":
        instance["machines"][0][1] = instance["machines"][0][0]
    elif problem == "rcpsp":
        instance["successors"][-1].append(0)  # sink -> source: a cycle
    elif problem == "wtardiness":
        instance["processing_times"][0] = -1
    elif problem in ("cvrp", "vrptw"):
        instance["demands"][1] = instance["capacity"] + 1
    elif problem == "rostering":
        instance["cover"][0]["shift"] = "NOPE"
    elif problem == "timetabling":
        instance["unavailability"][0][1] = instance["days"]


BROKEN = {
    "jobshop": "appears twice",
    "rcpsp": "form a cycle",
    "wtardiness": "processing_times[0]: -1 is below",
    "cvrp": "above the capacity",
    "vrptw": "above the capacity",
    "rostering": "cover[0].shift: 'NOPE' is not",
    "timetabling": "unavailability[0][1]: 3 is above the maximum 2",
}


@pytest.mark.parametrize("problem", problem_modules.names())
def test_solve_validates_every_problem_class_before_solving(problem, tmp_path):
    module = problem_modules.get(problem)
    instance = module.generate(0, module.SIZES[0])
    _break(problem, instance)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(instance))
    one_error_line(
        run("solve", "--problem", problem, path, "--reference-time-limit", "1", "--solver-workers", "1"),
        f"not a valid {problem} instance: ",
    )
    with pytest.raises(ValueError, match=re.escape(BROKEN[problem])):
        module.validate_instance(instance)


def test_solve_refuses_a_file_of_many_instances(instances_dir):
    result = run("solve", "--problem", "wtardiness", instances_dir / "wtardiness" / "wt40.txt")
    one_error_line(result, "expected one wtardiness instance (a JSON object), got a list of 125")


@pytest.mark.parametrize("problem", problem_modules.names())
def test_validation_accepts_every_generated_size_and_the_published_instances(problem, instances_dir):
    """No false alarms: generated instances of every size and the published benchmark files pass."""
    module = problem_modules.get(problem)
    for size in module.SIZES:
        for seed in (0, 1):
            module.validate_instance(module.generate(seed, size))
    folder = instances_dir / ("cvrp" if problem == "vrptw" else problem)
    published = {
        "jobshop": ["ft06", "ta01", "TA01.txt"],
        "rcpsp": [p.name for p in folder.glob("j*_*.sm")],
        "wtardiness": ["wt40.txt"],
        "cvrp": [p.name for p in folder.glob("*.vrp")],
        "vrptw": ["C101.txt"],
        "rostering": [p.name for p in folder.glob("Instance*.txt")],
        "timetabling": ["comp01.ctt"],
    }[problem]
    assert published
    for name in published:
        read = module.read(folder / name)
        for instance in read if isinstance(read, list) else [read]:
            module.validate_instance(instance)


def test_model_invalid_is_an_error_not_a_fallback_answer():
    """CP-SAT's MODEL_INVALID raises, naming the reason; the job shop reference no longer returns its hint."""
    from ortools.sat.python import cp_model

    from orharbor.problem_modules import cpsat

    model = cp_model.CpModel()
    start = model.new_int_var(0, 10, "s")
    model.new_interval_var(start, -3, start - 3, "i")
    with pytest.raises(cpsat.ModelInvalid, match="rejected the model as invalid"):
        cpsat.solve(model, time_limit_s=1, workers=1, seed=0)
    jobshop = problem_modules.get("jobshop")
    instance = jobshop.generate(1, "4x4")
    instance["durations"][0][1] = -5
    with pytest.raises(ValueError, match="rejected the model as invalid"):
        jobshop.reference(instance, time_limit_s=1, workers=1)


def test_import_of_an_empty_file_is_an_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    one_error_line(run("import", "retailopt", empty, "--out", tmp_path / "rows.jsonl"), "no scenarios")
    assert not (tmp_path / "rows.jsonl").exists()


def test_export_of_an_empty_dataset_is_an_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    out = tmp_path / "tasks"
    one_error_line(run("export", "--dataset", empty, "--out", out), "no rows (an empty dataset)")
    assert not out.exists()


def test_export_problem_that_keeps_no_row_is_an_error(shipped_rows, tmp_path):
    rows = tmp_path / "js.jsonl"
    rows.write_text(json.dumps(shipped_row(shipped_rows, "jobshop-4x4-l1-s0")) + "\n")
    out = tmp_path / "tasks"
    one_error_line(run("export", "--dataset", rows, "--problem", "cvrp", "--out", out), "no rows of cvrp")
    assert not out.exists()


def test_validate_specs_reports_every_bad_spec(tmp_path):
    """Two broken specs and a good one: both broken ones are named, the good one still runs."""
    from test_modelling_specs import GOLDEN, GOOD

    (tmp_path / "files" / "toy").mkdir(parents=True)
    (tmp_path / "golden").mkdir()
    (tmp_path / "files" / "toy" / "data.json").write_text('{"hours": 90, "max_chairs": 30}')
    (tmp_path / "golden" / "toy_lp.py").write_text(GOLDEN)
    (tmp_path / "toy_lp.yaml").write_text(GOOD)
    (tmp_path / "a_bad.yaml").write_text(
        GOOD.replace("id: toy_lp", "id: a_bad").replace("difficulty: easy", "difficulty: trivial")
    )
    (tmp_path / "z_bad.yaml").write_text(
        GOOD.replace("id: toy_lp", "id: z_bad").replace(
            "golden_script: golden/toy_lp.py", "golden_script: golden/missing.py"
        )
    )
    result = run("validate-specs", tmp_path, "--no-sandbox")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert [line.split()[:2] for line in lines if line.split()[1:2] in (["ok"], ["FAIL"])] == [
        ["a_bad", "FAIL"],
        ["toy_lp", "ok"],
        ["z_bad", "FAIL"],
    ]
    assert "difficulty" in result.output and "golden/missing.py does not exist" in result.output
    assert lines[-1] == "1/3 specs valid"


# ------------------------------------------------------------------ 11. the README


README = (REPO / "README.md").read_text()
#: The pages of the documentation site the README's sections moved to.
DOCS = {name: (REPO / "docs" / f"{name}.md").read_text() for name in ("workflow", "check", "files")}


def _commands(text: str, program: str) -> list[list[str]]:
    """Every ``program ...`` command of the README's bash blocks, as argument lists (comments dropped)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == [program]:
                commands.append(words[1:])
    return commands


def _options(words: list[str]) -> dict[str, list[str]]:
    options: dict[str, list[str]] = {}
    current = None
    for word in words:
        if word.startswith("--"):
            current = word
            options.setdefault(current, [])
        elif current:
            options[current].append(word)
    return options


def test_readme_verify_examples_name_tasks_its_own_commands_create(shipped_rows, shipped_specs):
    """Every `orharbor verify DIR/TASK` of the workflow page names a task its own commands (or run.sh) create."""
    from orharbor.datasets.build import plan_rows

    assert '.venv/bin/orharbor export --out "${1:-tasks}"' in (REPO / "scripts" / "run.sh").read_text()
    created = {"tasks": {row["id"] for row in shipped_rows} | {spec.id for spec in shipped_specs}}
    datasets: dict[str, set[str]] = {}
    for words in _commands(DOCS["workflow"], "orharbor"):
        options = _options(words[1:])
        if words[0] == "build-dataset" and "--recipe" not in options:  # a release builds a folder of parts
            rows = plan_rows(
                options["--problem"][0],
                options["--sizes"],
                int(options["--level"][0]),
                int(options["--num-rows"][0]),
                start_seed=int(options.get("--start-seed", ["0"])[0]),
            )
            datasets[options["--out"][0]] = {row["id"] for row in rows}
        elif words[0] == "export":
            out = options["--out"][0].rstrip("/")
            for dataset in options.get("--dataset", []):
                created.setdefault(out, set()).update(datasets.get(dataset, set()))
    examples = [words for words in _commands(DOCS["workflow"], "orharbor") if words[0] == "verify"]
    assert len(examples) >= 3
    for words in examples:
        folder, task = words[1].rstrip("/").rsplit("/", 1)
        assert task in created.get(folder, set()), f"README: orharbor verify {words[1]} names a task never created"


def test_readme_explains_the_other_instance_attack_honestly(shipped_rows):
    """No claim that every attack scores -1.0; other-instance's expected reward is explained, and the
    README's range for it matches what those answers are really worth on the shipped tasks."""
    from orharbor.verifiers.score import evaluator, judge

    assert "no reward-hacking attack earns more than -1.0" not in DOCS["check"]
    assert "every attack must score the failure reward" not in DOCS["check"]
    section = " ".join(DOCS["check"].split("## The attack suite", 1)[1].split("\n## ", 1)[0].split())
    assert "other-instance" in section and "really worth" in section and "not a leak" in section
    worth = []
    for row in (r for r in shipped_rows if r["level"] == 2):
        module = problem_modules.get(row["problem"])
        instances = [module.generate(seed, row["size"]) for seed in row["eval_seeds"]]
        rewards = [
            judge(
                evaluator(row["problem"]),
                instances[i],
                row["eval_baseline_solutions"][i - 1],
                row["eval_baselines"][i],
                row["eval_references"][i],
            )["reward"]
            for i in range(len(instances))
        ]
        worth.append(sum(rewards) / len(rewards))
    assert f"On the {len(worth)} shipped level-2 tasks it ranges from -1.0 to about +0.05" in section
    assert min(worth) == -1.0 and 0.0 < max(worth) < 0.1


def test_readme_says_what_each_command_writes_and_how_long_long_runs_take():
    section = DOCS["files"]
    for command in ("build-dataset --out F", "export --out DIR", "import retailopt SRC --out F"):
        row = next(line for line in section.splitlines() if line.startswith(f"| `{command}`"))
        assert "replaces" in row.split("|")[4], row
    for run_name in ("`build-dataset`", "`export` of everything shipped", "`check` on those", "`check --attacks`"):
        assert any(line.startswith(f"- {run_name}") for line in section.splitlines()), run_name


def test_python_version_is_the_same_everywhere():
    """pyproject's requires-python, the README, .python-version, setup.sh and both workflows agree on 3.12."""
    import yaml

    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=3.12"
    assert "Python ≥ 3.12" in README and "3.11" not in README
    assert (REPO / ".python-version").read_text().strip().startswith("3.12")
    assert "Python >= 3.12" in (REPO / "scripts" / "setup.sh").read_text()
    for workflow, job in ((".github/workflows/ci.yml", "test"), ("examples/check-tasks.yml", "check")):
        steps = yaml.safe_load((REPO / workflow).read_text())["jobs"][job]["steps"]
        versions = {str(step["with"]["python-version"]) for step in steps if "python-version" in step.get("with", {})}
        assert versions == {"3.12"}, workflow
