"""Reading a task's ``task.toml``, the one place it is parsed: every error names the file.

:class:`orharbor.exporter.task_folder.TaskFolder`, the reader of an exported
task that ``check``, ``verify``, ``report`` and the ladder use, reads it here.

Python's TOML parser says "Invalid value (at line 1, column 18)" and Harbor's
model "1 validation error for TaskConfig", and neither says which file: with
many task folders under one command the user could not tell which to fix.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from orharbor.errors import UserError

#: Largest task.toml read (an exported one is about 2 kB).
MAX_BYTES = 1 << 20


class TaskTomlError(UserError):
    """A task.toml that cannot be read, is not TOML, or holds fields Harbor refuses; the message names it."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


def read_task_toml(path: Path, *, harbor: bool = True) -> dict[str, Any]:
    """``path`` (a task.toml) as data; TaskTomlError naming ``path`` if it is unusable.

    ``harbor``: also validate it with Harbor's own ``TaskConfig``, so a field
    of the wrong type is refused here, as Harbor would refuse the task, and
    not in the middle of a run.
    """
    path = Path(path)
    try:
        if not path.is_file():  # a FIFO would block the read
            raise TaskTomlError(path, "not a regular file" if path.exists() else "no such file")
        if path.stat().st_size > MAX_BYTES:
            raise TaskTomlError(path, f"{path.stat().st_size} bytes, too large for a task.toml")
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TaskTomlError(path, f"cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise TaskTomlError(path, "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise TaskTomlError(path, f"not valid TOML ({exc})") from None
    if harbor:
        check_with_harbor(path, data)
    return data


def check_with_harbor(path: Path, data: dict[str, Any]) -> None:
    """TaskTomlError naming ``path`` unless Harbor's own ``TaskConfig`` takes ``data`` (``path``'s contents)."""
    from harbor.models.task.config import TaskConfig
    from pydantic import ValidationError

    try:
        TaskConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        raise TaskTomlError(Path(path), f"{where}: {first['msg']} (Harbor cannot load this task)") from None


def table(data: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    """``data[name]`` if it is a table (empty when absent); TaskTomlError naming ``path`` when it is something else."""
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise TaskTomlError(path, f"[{name}] must be a table, not {type(value).__name__}")
    return value
