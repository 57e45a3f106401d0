"""What the agent is handed, recorded at export so ``check`` and ``verify`` can prove it is what is scored.

The agent's data files (``environment/instance.json``, ``environment/examples/``,
``environment/files/``: everything under ``environment/`` but its Dockerfile) are
written from the same data as the copies ``tests/`` grades with. A hand edit of
one side only would let the agent solve one instance while another is scored,
and nothing inside the task can see it: the verifier never sees
``environment/``. So the exporter records the sha256 of every such file in
``tests/agent_files.json`` (covered, like every file of ``tests/``, by
``tests/manifest.json``), and :func:`differences` compares the folder with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

#: The record's name in a task's tests/.
RECORD = "agent_files.json"
#: The one file of environment/ that is not handed to the agent as data (it builds the image).
NOT_DATA = frozenset({"Dockerfile"})


def agent_files(task: Path) -> tuple[dict[str, str], list[str]]:
    """({path relative to environment/: sha256} of the agent's data files, what is neither file nor folder)."""
    environment = Path(task) / "environment"
    files, odd = {}, []
    for folder, dirs, names in os.walk(environment):
        for name in sorted(dirs + names):
            path = Path(folder) / name
            relative = path.relative_to(environment).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISREG(mode):
                if relative not in NOT_DATA:
                    files[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif not stat.S_ISDIR(mode):
                odd.append(f"environment/{relative} is not a regular file")
    return dict(sorted(files.items())), odd


def write_record(task: Path) -> None:
    """Write ``tests/agent_files.json`` from the task's environment/ (before tests/manifest.json is written)."""
    files, odd = agent_files(task)
    if odd:
        raise ValueError("; ".join(odd))
    (Path(task) / "tests" / RECORD).write_text(json.dumps({"format": 1, "files": files}, indent=1) + "\n")


def differences(task: Path) -> list[str]:
    """How the agent's data files differ from what tests/ grades with, one line each; empty when they match."""
    task = Path(task)
    record = task / "tests" / RECORD
    try:
        recorded = json.loads(record.read_text(encoding="utf-8"))["files"]
        if not isinstance(recorded, dict):
            raise TypeError
    except FileNotFoundError:
        return [
            f"{record} is missing, so what the agent is handed cannot be compared with what is scored: "
            "export the task again"
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return [f"{record} is unreadable: export the task again"]
    try:
        found, odd = agent_files(task)
    except OSError as exc:
        return [f"{task / 'environment'}: cannot read it ({exc.strerror})"]
    shown = task / "environment"
    lines = [f"{task / line}" for line in odd]
    for name in sorted(set(recorded) | set(found)):
        if name not in found:
            lines.append(f"{shown / name} is missing: the agent would not be handed what tests/ grades with")
        elif name not in recorded:
            lines.append(f"{shown / name} was added after export: the agent would see a file tests/ knows nothing of")
        elif found[name] != recorded[name]:
            lines.append(
                f"{shown / name} differs from what was exported: the agent would be handed other data "
                "than tests/ grades with (export the task again)"
            )
    return lines
