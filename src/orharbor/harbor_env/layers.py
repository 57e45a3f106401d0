"""Build cache: the image steps ``docker build`` runs once and every container then reuses.

Docker's default: a built image's layers are cached; every container of the
image starts from them, and a ``RUN`` step whose instruction and parent
layers are unchanged is never run again.

The bubblewrap environment builds no image: it carries out the Dockerfile at
every sandbox start. Two steps of every orharbor image cost most of that and
depend on nothing a trial brings, only on the image's layout:

- the base image check (:data:`orharbor.base_image.CHECK`), which writes
  nothing; once it has passed, it passes;
- the interpreter record (:mod:`orharbor.interpreter_record`, the ``RUN``
  right after the check, writing its folder ``/usr/local/share/orharbor``),
  which compiles the verifier's standard-library bytecode and hashes the
  standard library: the folder is kept and written again as the step left it.

A replayed layer's files are copies, with inodes and times of their own, where
Docker's overlay shows every container the layer's own. The record keys its
files by exactly those (so test.sh hashes again only what changed), so after
the replay the sandbox derives the keys of the copies again (:func:`refresh`),
still in the build, before any agent has run.

A step is taken from the cache only under the key Docker would use: the
image's layout (base files, packages, venvs), and every step up to it, a
``RUN`` by its command, a ``COPY`` by its target and the contents it copies;
and only when no earlier ``COPY`` wrote under ``/usr/local`` (what the record
reads). The cache lives in the process, filled by the first sandbox's build,
before any agent has run in it: each layer is a host folder per folder the step
wrote (root's, 0700 above it), uploaded as it is into every later sandbox.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from orharbor.base_image import CHECK
from orharbor.harbor_env.image import Copy, ImagePlan, Run
from orharbor.interpreter_record import RECORD_DIR, RECORD_START, rekey_command
#: The base image check's RUN step, its white space collapsed (the Dockerfile parser keeps what the lines had).
CHECK_COMMAND = " ".join(CHECK.split())


@dataclass(frozen=True)
class Layer:
    """A cached step's result: each folder it wrote (sandbox path, the host folder holding a copy of it)."""

    folders: tuple[tuple[str, Path], ...] = ()


_CACHE: dict[str, Layer] = {}
_LOCK = threading.Lock()
_FOLDERS: list[Path] = []


def new_folder() -> Path:
    """An empty host folder for a layer's copy, removed when the process ends."""
    with _LOCK:
        if not _FOLDERS:
            _FOLDERS.append(Path(tempfile.mkdtemp(prefix="orh-layers-")))
            atexit.register(shutil.rmtree, _FOLDERS[0], True)
        return Path(tempfile.mkdtemp(dir=_FOLDERS[0]))


def settle(folder: Path) -> None:
    """Give a layer's copy the modes an image step leaves: folders 0755, files 0644; drop what is neither."""
    for path in sorted(folder.rglob("*"), reverse=True):
        if path.is_symlink() or not (path.is_dir() or path.is_file()):
            path.unlink()
        else:
            path.chmod(0o755 if path.is_dir() else 0o644)
    folder.chmod(0o755)


def outputs(step: Run) -> tuple[str, ...] | None:
    """The folders ``step`` writes if it is a cacheable step, else None."""
    if " ".join(step.command.split()) == CHECK_COMMAND:
        return ()
    if step.command.startswith(RECORD_START):
        return (RECORD_DIR,)
    return None


def refresh(step: Run) -> tuple[str, str] | None:
    """The command ``(command, folder)`` to run after replaying ``step``'s cached layer, if it needs one: the
    record's keys of its copies now in the sandbox (the standard library keeps the build's keys)."""
    return (rekey_command(), "/usr/local") if step.command.startswith(RECORD_START) else None


def key(plan: ImagePlan, index: int, layout: object) -> str | None:
    """Docker's cache key for ``plan.steps[index]``: the layout and every step up to it; None if not cacheable."""
    step = plan.steps[index]
    if not isinstance(step, Run) or outputs(step) is None:
        return None
    if any(isinstance(s, Copy) and (s.target == "/usr/local" or s.target.startswith("/usr/local/"))
           for s in plan.steps[:index]):
        return None
    digest = hashlib.sha256(repr((layout, plan.apt_packages, plan.local_packages, sorted(plan.venvs.items()),
                                  plan.users, plan.workdir, plan.env)).encode())
    for earlier in plan.steps[:index + 1]:
        if isinstance(earlier, Copy):  # as Docker keys a COPY: its target and what it copies, not where from
            digest.update(f"COPY {earlier.target}\0".encode())
            _digest_tree(digest, earlier.source)
        else:
            digest.update(f"RUN {earlier.workdir}\0{earlier.command}\0".encode())
    return digest.hexdigest()


def _digest_tree(digest, source: Path) -> None:
    """Add the names, kinds, modes and contents under ``source`` (a build-context file or folder) to ``digest``."""
    paths = [source] if not source.is_dir() else [source, *sorted(source.rglob("*"))]
    for path in paths:
        st = path.lstat()
        digest.update(f"{path.relative_to(source)}\0{st.st_mode:o}\0".encode())
        if path.is_symlink():
            digest.update(os.readlink(path).encode() + b"\0")
        elif path.is_file():
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)


def cached(cache_key: str) -> Layer | None:
    with _LOCK:
        return _CACHE.get(cache_key)


def keep(cache_key: str, layer: Layer) -> None:
    with _LOCK:
        _CACHE[cache_key] = layer


def clear() -> None:
    """Forget every layer (tests)."""
    with _LOCK:
        _CACHE.clear()
