"""Build cache: the image steps ``docker build`` runs once and every container then reuses.

Docker's default: a built image's layers are cached; every container of the
image starts from them, and a ``RUN`` step whose instruction and parent
layers are unchanged is never run again.

The bubblewrap environment builds no image: it carries out the Dockerfile at
every sandbox start. Two steps of every orharbor image cost most of that and
depend on nothing a trial brings, only on the image's layout:

- the base image check (:data:`orharbor.image_facts.base_image.CHECK`), which writes
  nothing; once it has passed, it passes;
- the interpreter record (:mod:`orharbor.image_facts.interpreter_record`, the ``RUN``
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
reads). The layout is the host interpreter as the sandbox sees it: the
interpreter's bytes, and every standard-library file's inode, size, times and
mode (:func:`host_identity`), so a changed host Python is a new key.

The cache is filled by the first sandbox's build, before any agent has run in
it: each layer is a host folder per folder the step wrote (root's, 0700 above
it), uploaded as it is into every later sandbox. As Docker's layer store
outlives one ``docker build``, layers are also kept on disk for the next
process (:func:`disk_root`: ``~/.cache/orharbor/layers``, or
``$ORHARBOR_BUILD_CACHE``; an empty value keeps them in the process only), in a
folder that only its owner can write, up to the root: a layer another user
could have written is never read.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import shutil
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from orharbor.harbor_env.image import Copy, ImagePlan, Run
from orharbor.harbor_env.rootfs import HostPython
from orharbor.image_facts.base_image import CHECK
from orharbor.image_facts.interpreter_record import RECORD_DIR, RECORD_START, rekey_command

#: Where layers are kept between processes; an empty value keeps them in the process only.
CACHE_ENV = "ORHARBOR_BUILD_CACHE"
#: The modules whose code decides what a cached step writes, beyond its command: a change to them is a new key.
_BUILD_MODULES = (
    "orharbor.harbor_env.rootfs",
    "orharbor.image_facts.interpreter_record",
    "orharbor.image_facts.base_image",
)

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
    if any(
        isinstance(s, Copy) and (s.target == "/usr/local" or s.target.startswith("/usr/local/"))
        for s in plan.steps[:index]
    ):
        return None
    digest = hashlib.sha256(
        repr(
            (
                layout,
                plan.apt_packages,
                plan.local_packages,
                sorted(plan.venvs.items()),
                plan.users,
                plan.workdir,
                plan.env,
            )
        ).encode()
    )
    for earlier in plan.steps[: index + 1]:
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


@functools.cache
def host_identity(python: HostPython) -> str:
    """The host interpreter as a sandbox sees it, as a digest: the binary's bytes, libpython's and every
    standard-library file's path, kind, mode, size, inode and times (root's files: only root can change a time
    back), and the code of the modules that lay it out and record it. Computed once per process."""
    digest = hashlib.sha256(f"{sys.version}\0".encode())
    digest.update(python.binary.read_bytes())
    for module in _BUILD_MODULES:
        digest.update(Path(sys.modules[module].__file__ or "").read_bytes())
    if python.libpython is not None:
        _digest_stat(digest, str(python.libpython), python.libpython.lstat())
    # the sandbox has a site-packages of its own
    _digest_folder(digest, str(python.stdlib), skip=frozenset({"site-packages"}))
    return digest.hexdigest()


def _digest_stat(digest, path: str, st: os.stat_result) -> None:
    digest.update(f"{path}\0{st.st_mode:o} {st.st_size} {st.st_ino} {st.st_mtime_ns} {st.st_ctime_ns}\0".encode())


def _digest_folder(digest, folder: str, skip: frozenset[str] = frozenset()) -> None:
    """Every entry under ``folder``, in name order, by :func:`_digest_stat` (os.scandir: 8,000 entries in 0.1 s)."""
    with os.scandir(folder) as found:
        entries = sorted((e for e in found if e.name not in skip), key=lambda e: e.name)
    for entry in entries:
        _digest_stat(digest, entry.path, entry.stat(follow_symlinks=False))
        if entry.is_dir(follow_symlinks=False):
            _digest_folder(digest, entry.path)


def disk_root() -> Path | None:
    """The folder of layers kept between processes, made if missing; None when switched off, or when someone other
    than this user (or root) could write it or any folder above it (a layer read from there could be anyone's)."""
    value = os.environ.get(CACHE_ENV)
    if value is not None and not value.strip():
        return None
    try:
        if value:
            root = Path(os.path.abspath(value))
        else:
            root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "orharbor" / "layers"
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = root.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        for above in root.parents:
            st = above.lstat()
            others_write = st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX
            if not stat.S_ISDIR(st.st_mode) or st.st_uid not in (0, os.geteuid()) or others_write:
                return None
    except (OSError, RuntimeError):  # RuntimeError: no home folder to be found
        return None
    return root


def cached(cache_key: str) -> Layer | None:
    """The layer kept under ``cache_key``, in this process or on disk (then copied into the process)."""
    with _LOCK:
        layer = _CACHE.get(cache_key)
    if layer is not None:
        return layer
    layer = _load(cache_key)
    if layer is not None:
        with _LOCK:
            layer = _CACHE.setdefault(cache_key, layer)
    return layer


def keep(cache_key: str, layer: Layer) -> None:
    """Keep ``layer`` for this process's later sandboxes, and on disk for later processes."""
    with _LOCK:
        _CACHE[cache_key] = layer
    _store(cache_key, layer)


def _load(cache_key: str) -> Layer | None:
    root = disk_root()
    entry = root / cache_key if root is not None else None
    if entry is None or not (entry / "layer.json").is_file():
        return None
    try:
        targets = json.loads((entry / "layer.json").read_text())
        folders = []
        for i, target in enumerate(targets):
            copy = new_folder()
            shutil.copytree(entry / str(i), copy, symlinks=True, dirs_exist_ok=True)
            settle(copy)
            folders.append((str(target), copy))
    except (OSError, ValueError, TypeError):
        return None  # an entry cut short or damaged: built again, and kept again
    return Layer(tuple(folders))


def _store(cache_key: str, layer: Layer) -> None:
    """Write ``layer`` as ``root/cache_key`` in one rename (a concurrent process's entry, if first, stays)."""
    root = disk_root()
    if root is None or (root / cache_key).exists():
        return
    staging = None
    try:
        staging = Path(tempfile.mkdtemp(dir=root, prefix=".tmp-"))
        for i, (_, copy) in enumerate(layer.folders):
            shutil.copytree(copy, staging / str(i), symlinks=True)
        (staging / "layer.json").write_text(json.dumps([target for target, _ in layer.folders]))
        os.rename(staging, root / cache_key)
    except OSError:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def clear() -> None:
    """Forget every layer of this process (tests; point $ORHARBOR_BUILD_CACHE at an empty folder for the disk)."""
    with _LOCK:
        _CACHE.clear()
