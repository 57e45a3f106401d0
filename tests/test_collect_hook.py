"""The collect hook's shell, run on temporary folders: what it leaves of /logs/artifacts and of a deliverable.

The attack suite (tests/test_attacks.py: deep-artifacts, artifact-chain, stdout-*) shows
the whole hook at work in Harbor trials and that each attack wins without it; these
tests pin each limit of the hook's parts on their own, with dash, the shell of Debian.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib

import pytest
import tomli_w

from orharbor.exporter import ExportOptions
from orharbor.exporter.collect_hook import (
    ARTIFACTS_MAX_BYTES,
    ARTIFACTS_MAX_DEPTH,
    ARTIFACTS_MAX_ENTRIES,
    DELIVERABLE_MAX_BYTES,
    HOOK_TIMEOUT_S,
    LIMIT_NOTE,
    bounded_artifacts,
    collect_command,
    regular_deliverable,
)
from orharbor.exporter.task_dir import task_toml

SHELL = shutil.which("dash") or "sh"


def _run(script: str) -> None:
    result = subprocess.run([SHELL, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def _chain(top, depth: int) -> None:
    """A chain of ``depth`` folders named d under ``top``, made without a path longer than one name."""
    top.mkdir(parents=True, exist_ok=True)
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    os.close(fd)


#: Small limits for the tests that fill a tree to them (10,000 files take seconds on a busy disk).
LIMITS = {"max_depth": 6, "max_entries": 40, "max_bytes": 4096}


def test_the_hook_holds_the_stated_limits():
    command = collect_command("separate", ["/app/solution.json"])
    assert bounded_artifacts() in command
    assert (ARTIFACTS_MAX_DEPTH, ARTIFACTS_MAX_ENTRIES, ARTIFACTS_MAX_BYTES) == (32, 10_000, 256 * 1024 * 1024)
    assert f"-v d=32 -v n=10000 -v b={256 * 1024 * 1024} " in command and str(DELIVERABLE_MAX_BYTES) in command


@pytest.mark.parametrize(
    "plant, limit",
    [
        (lambda a: _chain(a, 7), "deeper than 6 levels"),
        (lambda a: [(a / f"f{i}").touch() for i in range(41)], "with more than 40 entries"),
        (
            lambda a: os.truncate(a / "sparse", 4097) if (a / "sparse").touch() is None else None,
            "with more than 4096 bytes",
        ),
    ],
    ids=["depth", "entries", "bytes"],
)
def test_an_artifacts_tree_over_a_limit_is_replaced_by_an_empty_folder_with_a_note(tmp_path, plant, limit):
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    plant(artifacts)
    _run(bounded_artifacts(str(artifacts), **LIMITS))
    assert [p.name for p in artifacts.iterdir()] == [LIMIT_NOTE]
    assert limit in (artifacts / LIMIT_NOTE).read_text()


def test_a_chain_deeper_than_the_recursion_limit_goes_at_the_real_limits(tmp_path):
    artifacts = tmp_path / "artifacts"
    _chain(artifacts, 1100)
    _run(bounded_artifacts(str(artifacts)))
    assert [p.name for p in artifacts.iterdir()] == [LIMIT_NOTE]
    assert f"deeper than {ARTIFACTS_MAX_DEPTH} levels" in (artifacts / LIMIT_NOTE).read_text()


def test_an_artifacts_tree_at_the_limits_stays_and_holds_only_folders_and_readable_files(tmp_path):
    artifacts = tmp_path / "artifacts"
    _chain(artifacts, 5)
    deepest = artifacts.joinpath(*["d"] * 5)
    (deepest / "last").write_text("at depth 6")
    for i in range(40 - 5 - 1 - 3):
        (artifacts / f"f{i}").touch()
    os.truncate(artifacts / "f0", 4096 - len("at depth 6"))  # with "last": the byte limit
    (artifacts / "link").symlink_to("/etc/passwd")
    os.mkfifo(artifacts / "fifo")
    (artifacts / "d" / "closed").mkdir()
    (artifacts / "d" / "closed").chmod(0)
    _run(bounded_artifacts(str(artifacts), **LIMITS))
    assert (deepest / "last").read_text() == "at depth 6" and not (artifacts / LIMIT_NOTE).exists()
    assert not (artifacts / "link").is_symlink() and not (artifacts / "fifo").exists()
    assert (artifacts / "d" / "closed").stat().st_mode & 0o777 == 0o755
    assert (artifacts / "f1").stat().st_mode & 0o777 == 0o644


def test_artifacts_that_are_a_symlink_become_an_empty_folder(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "kept").touch()
    (tmp_path / "artifacts").symlink_to(tmp_path / "elsewhere")
    _run(bounded_artifacts(str(tmp_path / "artifacts")))
    assert (tmp_path / "artifacts").is_dir() and not (tmp_path / "artifacts").is_symlink()
    assert list((tmp_path / "artifacts").iterdir()) == [] and (tmp_path / "elsewhere" / "kept").exists()


@pytest.mark.parametrize(
    "plant",
    [
        lambda p: _chain(p, 1100),
        lambda p: os.mkfifo(p),
        lambda p: p.symlink_to("/etc/passwd"),
        lambda p: p.symlink_to("/nonexistent/x"),
        lambda p: os.truncate(p, DELIVERABLE_MAX_BYTES + 1) if p.touch() is None else None,
    ],
    ids=["folder-chain", "fifo", "symlink", "dangling-symlink", "over-size"],
)
def test_a_deliverable_that_is_not_a_regular_file_within_the_cap_is_removed(tmp_path, plant):
    deliverable = tmp_path / "app" / "solution.json"
    deliverable.parent.mkdir()
    plant(deliverable)
    _run(regular_deliverable(str(deliverable)))
    assert not deliverable.exists() and not deliverable.is_symlink()
    assert os.path.exists("/etc/passwd")


def test_a_regular_deliverable_within_the_cap_stays_as_it_is(tmp_path):
    deliverable = tmp_path / "app" / "solution.json"
    deliverable.parent.mkdir()
    deliverable.write_text('{"x": 1}')
    os.truncate(deliverable, DELIVERABLE_MAX_BYTES)
    deliverable.chmod(0o600)
    _run(regular_deliverable(str(deliverable)))
    assert deliverable.stat().st_size == DELIVERABLE_MAX_BYTES and deliverable.stat().st_mode & 0o777 == 0o644


def test_a_deliverable_under_a_symlinked_folder_loses_the_link(tmp_path):
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "x.csv").write_text("1")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "out").symlink_to(tmp_path / "target")
    _run(regular_deliverable(str(tmp_path / "app" / "out" / "x.csv")))
    assert not (tmp_path / "app" / "out").exists() and (tmp_path / "target" / "x.csv").exists()


@pytest.mark.parametrize("mode", ["separate", "shared"])
def test_task_toml_of_either_mode_carries_the_hook_for_its_artifacts(mode):
    config = task_toml(
        "t",
        "d",
        {"tags": []},
        ExportOptions(verifier_mode=mode),
        agent_timeout_s=1.0,
        verifier_timeout_s=1.0,
        artifacts=["/app/solution.json", "/app/out put.csv"],
    )
    [hook] = tomllib.loads(tomli_w.dumps(config))["verifier"]["collect"]
    assert hook["user"] == "root" and hook["timeout_sec"] == HOOK_TIMEOUT_S
    command = hook["command"]
    assert command == collect_command(mode, ["/app/solution.json", "/app/out put.csv"])
    assert command.startswith("for round")  # tests/test_attacks.py turns the hook off by this prefix
    assert "'/app/out put.csv'" in command and "/logs/artifacts" in command
    assert ("/logs/verifier" in command and "/tests" in command) == (mode == "shared")
    result = subprocess.run([SHELL, "-n", "-c", command], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path", ["app/solution.json", "/", "/app/../etc/passwd"])
def test_an_artifact_path_that_is_not_absolute_below_root_is_refused(path):
    with pytest.raises(ValueError):
        regular_deliverable(path)
