"""What the check benchmarks share: an older commit's ``src/`` from git, and one timed run of a script under it."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def unpack(commit: str, target: Path) -> Path:
    """``src/`` of ``commit`` under ``target``, from git's object store."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", commit, "src"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target / "src"


def run_json(script: str, src: Path, *args: str) -> dict:
    """Run ``script`` (``python -c``) with ``src`` and ``args`` as its arguments; the JSON of its last line."""
    done = subprocess.run([sys.executable, "-c", script, str(src), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"check from {src} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
