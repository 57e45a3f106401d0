"""ruff's lint (pyproject.toml [tool.ruff]) passes on the package, the tests and the benchmarks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")


def test_ruff_finds_nothing():
    done = subprocess.run([RUFF, "check", "--no-cache", "src", "tests", "bench"], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_sees_an_unused_import(tmp_path):
    """The configuration lints what it should: an unused import in a file under src/ is reported."""
    bad = tmp_path / "src" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("import os\n")
    done = subprocess.run([RUFF, "check", "--no-cache", "--config", REPO / "pyproject.toml", bad], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and "F401" in done.stdout
