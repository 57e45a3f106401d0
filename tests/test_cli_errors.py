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
    return {"build-dataset": ["build-dataset", "--problem", "jobshop", "--sizes", "4x4", "--num-rows", "2",
                              "--out", target],
            "export": ["export", "--problem", "jobshop", "--out", target],
            "import retailopt": ["import", "retailopt", source, "--out", target],
            "check": ["check", tmp_path, "--jobs-dir", target],
            "report": ["report", tmp_path, "--html", target]}[name]


COMMANDS = ["build-dataset", "export", "import retailopt", "check", "report"]


@pytest.mark.parametrize("name", COMMANDS)
def test_an_output_whose_folder_is_missing_is_refused_before_any_work(tmp_path, name):
    """One rule for every output: it may be created, the folder above it must exist; nothing is created."""
    missing = tmp_path / "no" / "such"
    line = one_error_line(run(*_command(name, tmp_path, missing / "out")),
                          f"the folder {missing} does not exist")
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
    result = run("build-dataset", "--problem", "jobshop", "--sizes", "4x4", "--num-rows", "2",
                 "--out", "/proc/x.jsonl")
    one_error_line(result, "cannot create /proc/x.jsonl: No such file or directory")
    assert "not writable" not in result.output
