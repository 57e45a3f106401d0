"""Writing the user's files without ever losing one: temporary sibling, then rename.

Every command that writes a file or a task folder goes through here:

- :func:`write_atomically` writes text to a temporary file beside the target
  and renames it over the target, so a reader (or a crash) sees the old file
  or the new one, never half of one;
- :func:`atomic_path` hands a temporary path to a writer function and renames
  it into place only when the writer succeeded;
- :func:`replace_dir` moves a folder built beside the target into place,
  replacing an existing one only when asked to;
- :func:`refuse_existing` is the check a command makes before it writes
  anything: an existing target without ``--force`` is an error;
- :func:`require_parent` is the other one: an output (file or folder) may be
  created, but never the folders above it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from orharbor.errors import UserError
from orharbor.interrupts import deferred


class WouldReplace(UserError):
    """A target that exists and may only be replaced with ``--force``."""


class MissingFolder(UserError):
    """An output whose parent folder does not exist (or is not a folder)."""


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``."""
    with atomic_path(Path(path)) as tmp:
        tmp.write_text(text, encoding="utf-8")


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path``; renamed over ``path`` if the block succeeds, else removed.

    The parent folder is created if needed. The file keeps the permissions a
    plain ``open`` would give it (the umask applies), not ``mkstemp``'s 0600.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.unlink(missing_ok=True)
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def staging_dir(parent: Path, name: str) -> Path:
    """A new, empty hidden folder in ``parent`` (same file system as the target, so a rename is atomic)."""
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{name}.tmp-", dir=parent))


def replace_dir(built: Path, target: Path, force: bool) -> Path:
    """Move the folder ``built`` to ``target``; an existing ``target`` is replaced only with ``force``.

    ``built`` must sit in the same file system as ``target`` (a sibling). The
    old folder is first renamed aside and deleted only after the new one is in
    place, so a failure never leaves the target missing. Ctrl-C and SIGTERM
    wait until the swap and the removal are over: cut off between the two
    renames the target would be missing, and in the removal a hidden
    ``.name.old-*`` copy would stay behind.
    """
    if not os.path.lexists(target):
        os.rename(built, target)
        return target
    if not force:
        raise WouldReplace(f"{target} already exists; pass --force to replace it")
    with deferred():
        aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        old = aside / target.name
        os.rename(target, old)
        try:
            os.rename(built, target)
        except OSError:
            os.rename(old, target)  # put the user's folder back
            shutil.rmtree(aside, ignore_errors=True)
            raise
        shutil.rmtree(aside, ignore_errors=True)
    return target


def refuse_existing(targets: Iterable[str | Path], force: bool) -> None:
    """WouldReplace naming every target that exists, unless ``force``; called before anything is written."""
    if force:
        return
    existing = [Path(t) for t in targets if os.path.lexists(t)]
    if not existing:
        return
    shown = ", ".join(str(p) for p in existing[:5]) + (f" and {len(existing) - 5} more" if len(existing) > 5 else "")
    one = len(existing) == 1
    raise WouldReplace(
        f"{shown} already exist{'s' if one else ''}; pass --force to replace "
        f"{'it' if one else 'them'} (nothing was written)"
    )


def require_parent(path: Path, option: str) -> None:
    """MissingFolder unless the folder that would hold ``path`` exists; ``option`` names it in the message.

    The one rule of every command's output (``build-dataset --out``, ``export
    --out``, ``import retailopt --out``, ``check --jobs-dir``, ``report --html``):
    the output itself may be created, the folders above it never are, so a
    mistyped path fails at once, before any work, instead of growing a tree.
    """
    parent = Path(path).parent
    if parent.is_dir():
        return
    if os.path.lexists(parent):
        raise MissingFolder(f"{option} {path}: {parent} is not a folder")
    raise MissingFolder(f"{option} {path}: the folder {parent} does not exist; create it first")
