"""ruff's lint and format check (pyproject.toml [tool.ruff]) pass on the package, the tests and the benchmarks;
the package keeps its layer contract ([tool.importlinter], checked by import-linter's lint-imports) and type-checks ([tool.mypy])."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")


def test_ruff_finds_nothing():
    done = subprocess.run(
        [RUFF, "check", "--no-cache", "src", "tests", "bench"], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_code_is_formatted():
    """``ruff format`` (its defaults, line length 120) would change nothing."""
    done = subprocess.run(
        [RUFF, "format", "--check", "--no-cache", "src", "tests", "bench"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_format_sees_an_unformatted_file(tmp_path):
    """The format check checks: a file ruff would reformat fails it."""
    bad = tmp_path / "src" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("x = {  'a':1 }\n")
    done = subprocess.run(
        [RUFF, "format", "--check", "--no-cache", "--config", REPO / "pyproject.toml", bad],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stdout


def test_ruff_sees_an_unused_import(tmp_path):
    """The configuration lints what it should: an unused import in a file under src/ is reported."""
    bad = tmp_path / "src" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("import os\n")
    done = subprocess.run(
        [RUFF, "check", "--no-cache", "--config", REPO / "pyproject.toml", bad],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1 and "F401" in done.stdout


LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """import-linter's CLI on the contracts of pyproject.toml ([tool.importlinter]) for whichever orharbor imports."""
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo", REPO / "pyproject.toml"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_every_module_imports_only_from_the_floors_below_it():
    """The layer contract (docs/contributing.md, "Floors") holds: every module and subpackage of orharbor is on a
    floor, and no import, at the top of a module or inside a function, goes up a floor or across one."""
    done = lint_imports(REPO)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "KEPT" in done.stdout


@pytest.mark.slow
def test_mypy_finds_nothing():
    """mypy, configured by [tool.mypy] (the package's modules; strict where the code is typed), reports no error."""
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]


@pytest.mark.parametrize(
    "change, broken",
    [
        ("an import up a floor, inside a function", "orharbor.image_facts -> orharbor.exporter.task_dir"),
        ("a module on no floor", "orharbor.stray"),
    ],
)
def test_the_contract_catches_what_it_should(tmp_path, change, broken):
    """In a copy of the package, one upward import (the image facts reaching for the exporter, as task_dir's
    constants once made harbor_env do) or one module left off the floors breaks the contract."""
    copy = tmp_path / "src" / "orharbor"
    shutil.copytree(
        REPO / "src" / "orharbor",
        copy,
        ignore=lambda folder, names: [  # the Python files only
            name
            for name in names
            if name == "__pycache__" or not (name.endswith(".py") or (Path(folder) / name).is_dir())
        ],
    )
    if change == "a module on no floor":
        (copy / "stray.py").write_text('"""A module no floor names."""\n')
    else:
        facts = copy / "image_facts" / "__init__.py"
        facts.write_text(
            facts.read_text() + "\n\ndef options():\n"
            "    from orharbor.exporter.task_dir import ExportOptions\n\n    return ExportOptions\n"
        )
    path = os.pathsep.join(filter(None, [str(tmp_path / "src"), os.environ.get("PYTHONPATH")]))
    done = lint_imports(tmp_path, {**os.environ, "PYTHONPATH": path})
    assert done.returncode == 1 and "BROKEN" in done.stdout and broken in done.stdout, done.stdout + done.stderr
