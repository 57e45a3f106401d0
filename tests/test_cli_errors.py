"""The rough edges a new user hit: option combinations, missing output folders, errors that name their file."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from orharbor.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result, message: str, code: int = 1) -> str:
    """A clean failure: the exit code, one 'Error:' line holding ``message``, no traceback; the line."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0], result.output
    return errors[0]


# ------------------------------------------------------------------ export --allowed-hosts


def test_allowed_hosts_without_an_allowlist_is_a_usage_error(tmp_path):
    """Hosts alone used to export public tasks with no allowlist anywhere; now nothing is written."""
    from orharbor.exporter import ExportOptions
    from orharbor.exporter.task_dir import ExportOptionError

    out = tmp_path / "tasks"
    result = run("export", "--problem", "jobshop", "--out", out, "--allowed-hosts", "api.anthropic.com")
    one_error_line(result, "--allowed-hosts needs --agent-network allowlist", code=2)
    assert not out.exists()
    with pytest.raises(ExportOptionError, match="--allowed-hosts needs --agent-network allowlist"):
        ExportOptions(allowed_hosts=("api.anthropic.com",))


# ------------------------------------------------------------------ missing output folders


def _command(name: str, tmp_path: Path, target: Path) -> list:
    """The command ``name`` writing its output to ``target``; its inputs exist."""
    source = tmp_path / "retail.jsonl"
    source.write_text("")
    return {
        "build-dataset": [
            "build-dataset",
            "--problem",
            "jobshop",
            "--sizes",
            "4x4",
            "--num-rows",
            "2",
            "--out",
            target,
        ],
        "export": ["export", "--problem", "jobshop", "--out", target],
        "import retailopt": ["import", "retailopt", source, "--out", target],
        "check": ["check", tmp_path, "--jobs-dir", target],
        "report": ["report", tmp_path, "--html", target],
    }[name]


COMMANDS = ["build-dataset", "export", "import retailopt", "check", "report"]


@pytest.mark.parametrize("name", COMMANDS)
def test_an_output_whose_folder_is_missing_is_refused_before_any_work(tmp_path, name):
    """One rule for every output: it may be created, the folder above it must exist; nothing is created."""
    missing = tmp_path / "no" / "such"
    line = one_error_line(run(*_command(name, tmp_path, missing / "out")), f"the folder {missing} does not exist")
    assert line.startswith("Error: --")  # names the option too
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("name", COMMANDS)
def test_an_output_below_a_file_is_refused(tmp_path, name):
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me\n")
    one_error_line(run(*_command(name, tmp_path, blocker / "out")), f"{blocker} is not a folder")
    assert blocker.read_text() == "keep me\n"


def test_the_output_folder_itself_may_be_created(tmp_path):
    out = tmp_path / "new-tasks"
    result = run("export", "--problem", "jobshop", "--out", out)
    assert result.exit_code == 0, result.output
    assert (out / "jobshop-4x4-l1-s0" / "task.toml").is_file()


def test_an_output_where_no_file_can_be_made_says_so_truly():
    """/proc exists but no file can be made there: the reason is the system's, for the file itself."""
    result = run("build-dataset", "--problem", "jobshop", "--sizes", "4x4", "--num-rows", "2", "--out", "/proc/x.jsonl")
    one_error_line(result, "cannot create /proc/x.jsonl: No such file or directory")
    assert "not writable" not in result.output


# ------------------------------------------------------------------ errors that name their file


def _broken(task: Path, how: str) -> Path:
    """Break the task's task.toml: not TOML at all, or a [metadata] that is a number (Harbor refuses both)."""
    path = task / "task.toml"
    text = path.read_text()
    path.write_text(
        "schema_version = \n" if how == "not TOML" else "metadata = 3\n" + text.replace("[metadata]", "[old]")
    )
    return path


BROKEN = pytest.mark.parametrize("how, says", [("not TOML", "not valid TOML"), ("wrong field", "metadata")])


@pytest.fixture
def task(tmp_path, shipped_rows) -> Path:
    from orharbor.exporter import export_row

    return export_row(next(r for r in shipped_rows if r["id"] == "jobshop-4x4-l1-s0"), tmp_path / "tasks")


@BROKEN
def test_verify_names_a_broken_task_toml(task, how, says):
    """A level-1 verify never read task.toml, so it scored a task Harbor cannot load; now it names the file."""
    toml = _broken(task, how)
    line = one_error_line(run("verify", task, "--solution", task / "solution" / "solution.json"), f"{toml}: ")
    assert says in line


@pytest.mark.sandbox
@BROKEN
def test_check_names_a_broken_task_toml_without_running_trials(task, how, says):
    from orharbor import check

    toml = _broken(task, how)
    [result] = check.check_tasks(task)
    assert not result.ok and result.policies == []
    assert result.problem_text().startswith(f"{toml}: ") and says in result.problem_text()


@BROKEN
def test_report_names_a_broken_task_toml(task, tmp_path, how, says):
    """A trial without details.json takes its metadata from task.toml: a broken one is named, not called 'gone'."""
    from jobfolders import write_trial

    job = tmp_path / "jobs" / "job"
    write_trial(job, "t1", task.name, reward=1.0, task_dir=task)
    toml = _broken(task, how)
    result = run("report", job)
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = [line for line in result.output.splitlines() if line.startswith("skipped")]
    assert f"its task.toml cannot be used: {toml}: " in line and says in line and "gone" not in line
    listed = run("report", job, "--tasks", task.parent)
    assert f"skipped {toml}: " in listed.output and "Traceback" not in listed.output


@pytest.mark.parametrize("text", ["", " \n\n"], ids=["empty", "blank"])
def test_solve_names_an_empty_file_once(tmp_path, text):
    instance = tmp_path / "instance.txt"
    instance.write_text(text)
    line = one_error_line(run("solve", "--problem", "jobshop", instance), "the file is empty")
    assert line.count("instance.txt") == 1


def test_solve_names_a_broken_line_with_the_path_once(tmp_path):
    """The format readers say 'name:line:'; the error says 'path:line:', not 'path: name:line:'."""
    instance = tmp_path / "instance.txt"
    instance.write_text("3 3\n")
    line = one_error_line(run("solve", "--problem", "jobshop", instance), f"{instance}:2: expected the row of job 0")
    assert line.count("instance.txt") == 1
