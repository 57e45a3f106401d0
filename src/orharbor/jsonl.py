"""JSON Lines files: the one reader and the one writer of every JSONL file orharbor keeps.

Dataset rows, imported RetailOpt rows and RetailOpt files are all read through
:func:`read_jsonl`, so a broken line is reported the same way everywhere
(``file:line: ...``), and written through :func:`write_jsonl`, which writes
beside the target and renames (:func:`orharbor.files.atomic_path`), so a
reader never sees half a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterable, Iterator, TypeVar

from orharbor.errors import UserError
from orharbor.files import atomic_path


class JsonlError(UserError):
    """A JSONL file that cannot be read, or a line of it that is not JSON; the message names file and line."""


def read_jsonl(path: str | Path, error: type[Exception] = JsonlError) -> Iterator[tuple[str, object]]:
    """``(file:line, value)`` of every non-blank line, lazily; an unreadable line raises ``error`` naming it."""
    path = Path(path)
    try:
        f = path.open("rb")
    except OSError as exc:
        raise error(f"{path}: cannot read it ({exc.strerror})") from None
    with f:
        for number, raw in enumerate(f, 1):
            where = f"{path.name}:{number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise error(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise error(f"{where}: not valid JSON: {exc.msg}") from None
            yield where, value


def compact(value: object) -> str:
    """One value as a compact JSON line, keys in their order; NaN and infinities refused."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


Value = TypeVar("Value")


def write_jsonl(path: str | Path, values: Iterable[Value], dumps: Callable[[Value], str] = compact) -> int:
    """Write one ``dumps(value)`` line per value, beside ``path`` and then renamed; return how many."""
    count = 0
    with atomic_path(Path(path)) as tmp, tmp.open("w", encoding="utf-8") as f:
        for value in values:
            f.write(dumps(value) + "\n")
            count += 1
    return count
