"""The programs a task's image has: the host's files of the Debian packages the image would hold.

The sandbox takes ``/usr`` from the host, but a host has programs the image
lacks (a compiler, bubblewrap, podman...) and may lack programs the image
installs. An agent harness that checks ``command -v tmux`` must get the
image's answer, not the host's. So the folders where Debian puts programs
(:data:`PROGRAM_DIRS`) show only the files of the image's packages:

- the ``python:3.12-slim`` base: Debian's minimal base (every installed package
  that is ``Essential: yes`` or ``Priority: required``; ``debian:bookworm-slim``
  is that set, apt included) plus what the python image installs on top
  (:data:`PYTHON_SLIM_ADDS`). Python's runtime libraries, which the python image
  also keeps, ship no programs and ``/usr/lib`` stays the host's whole, so they
  are not listed;
- the packages the Dockerfile's ``apt-get install`` names,

closed over their ``Depends`` and ``Pre-Depends`` (not ``Recommends``: the
images install with ``--no-install-recommends``), as the host's dpkg database
(``dpkg-query``, ``/var/lib/dpkg/info/*.list``) records them. A package the
Dockerfile names that the host does not have is an error naming the
``apt-get install`` that fixes it (``scripts/setup.sh`` runs it on a fresh
machine: :func:`main` prints what is missing).

What it does not hide: the rest of ``/usr`` (libraries, data, and the helper
programs packages keep under ``/usr/lib``, such as git's) stays the host's.
It makes the sandbox answer as the image would to what runs by name; it is
not a wall around host files. Links made by ``update-alternatives`` follow the
host's choice, kept when it leads to a program the image has.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from orharbor.harbor_env.image import DockerfileError, read_dockerfile
from orharbor.image_facts import AGENT_APT_PACKAGES

#: Where Debian puts programs (``/bin`` and ``/sbin`` are merged-/usr symlinks into the first two).
PROGRAM_DIRS = ("/usr/bin", "/usr/sbin", "/usr/games", "/usr/libexec")
#: What ``python:3.12-slim`` installs on Debian's base (its Dockerfile's runtime ``apt-get install``).
PYTHON_SLIM_ADDS = ("ca-certificates", "netbase", "tzdata")
DPKG_INFO = Path("/var/lib/dpkg/info")
#: .list lines that may name a program folder's entry (before merged-/usr folders are resolved)
_PREFIXES = ("/usr/bin/", "/usr/sbin/", "/usr/games/", "/usr/libexec/", "/bin/", "/sbin/")
_FIELDS = (
    "binary:Package",
    "Package",
    "db:Status-Status",
    "Priority",
    "Essential",
    "Provides",
    "Pre-Depends",
    "Depends",
)


class MissingPackages(RuntimeError):
    """The image installs Debian packages this machine does not have, so the sandbox cannot show them."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        super().__init__(
            f"the task's image installs Debian packages this machine lacks: {' '.join(names)}; "
            f"install them here first: apt-get install -y --no-install-recommends {' '.join(names)}"
        )


@dataclass(frozen=True)
class Package:
    """One installed package as dpkg records it."""

    key: str  # binary:Package, the name of its .list file (libc6:amd64)
    name: str
    base: bool  # Essential: yes or Priority: required
    provides: tuple[str, ...]
    depends: tuple[tuple[str, ...], ...]  # Pre-Depends and Depends, each a list of alternatives


def _names(field: str) -> tuple[tuple[str, ...], ...]:
    """``a (>= 1) | b:any, c`` -> ((a, b), (c,))."""
    groups = []
    for group in field.split(","):
        alternatives = tuple(re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", a).strip().split(":")[0] for a in group.split("|"))
        if alternatives := tuple(a for a in alternatives if a):
            groups.append(alternatives)
    return tuple(groups)


@functools.cache
def installed() -> dict[str, tuple[Package, ...]]:
    """Every installed package of this machine, by name (one per architecture installed)."""
    if shutil.which("dpkg-query") is None:
        raise RuntimeError(
            "the bubblewrap environment shows an image's programs from this machine's Debian "
            "packages, and this machine has no dpkg-query (it needs Debian or a derivative)"
        )
    out = subprocess.run(
        ["dpkg-query", "-W", "-f", "\t".join(f"${{{f}}}" for f in _FIELDS) + "\n"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    packages: dict[str, tuple[Package, ...]] = {}
    for line in out.splitlines():
        key, name, status, priority, essential, provides, pre, depends = line.split("\t")
        if status != "installed":
            continue
        package = Package(
            key,
            name,
            essential == "yes" or priority == "required",
            tuple(a for group in _names(provides) for a in group),
            _names(pre) + _names(depends),
        )
        packages[name] = packages.get(name, ()) + (package,)
    return packages


@functools.cache
def _providers() -> dict[str, tuple[str, ...]]:
    """Virtual package name -> the installed packages that provide it."""
    providers: dict[str, list[str]] = {}
    for name, packages in sorted(installed().items()):
        for virtual in {v for p in packages for v in p.provides}:
            providers.setdefault(virtual, []).append(name)
    return {virtual: tuple(names) for virtual, names in providers.items()}


def _resolve(name: str) -> str | None:
    """The installed package that satisfies ``name`` (itself, or a package providing it)."""
    if name in installed():
        return name
    return next(iter(_providers().get(name, ())), None)


def base_packages() -> tuple[str, ...]:
    """The packages standing for ``python:3.12-slim``: Debian's base set and what the python image adds."""
    return tuple(
        sorted(
            {name for name, packages in installed().items() if any(p.base for p in packages)} | set(PYTHON_SLIM_ADDS)
        )
    )


def missing(names: tuple[str, ...]) -> list[str]:
    """Those of ``names`` (``pkg`` or ``pkg=version``) that no installed package satisfies."""
    return [name for name in (n.split("=")[0] for n in names) if _resolve(name) is None]


@functools.cache
def closure(names: tuple[str, ...]) -> frozenset[str]:
    """The installed packages an image holding ``names`` has: them and their (Pre-)Depends, transitively.

    Of a dependency's alternatives the first this machine satisfies counts, as apt takes the first it can.
    """
    if absent := missing(names):
        raise MissingPackages(absent)
    todo = [_resolve(n.split("=")[0]) for n in names]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name is None or name in seen:
            continue
        seen.add(name)
        for package in installed()[name]:
            for alternatives in package.depends:
                todo.append(next((r for r in map(_resolve, alternatives) if r is not None), None))
    return frozenset(seen)


def _canonical(path: str) -> str:
    """A path of a .list file with merged-/usr folders resolved (``/bin/sh`` -> ``/usr/bin/sh``)."""
    folder, name = os.path.split(path)
    return os.path.join(_real_folder(folder), name)


@functools.cache
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def _in_program_dir(path: str) -> bool:
    return any(path.startswith(folder + "/") for folder in PROGRAM_DIRS)


@functools.cache
def _owned() -> dict[str, frozenset[str]]:
    """Package key -> the files and links it owns in :data:`PROGRAM_DIRS` (canonical paths)."""
    owned = {}
    for packages in installed().values():
        for package in packages:
            listing = DPKG_INFO / f"{package.key}.list"
            if not listing.exists():  # dpkg names the file without the architecture when only one is installed
                listing = DPKG_INFO / f"{package.name}.list"
            lines = listing.read_text(errors="replace").splitlines() if listing.exists() else []
            paths = {
                path
                for path in map(_canonical, (line for line in lines if line.startswith(_PREFIXES)))
                if _in_program_dir(path)
            }
            owned[package.key] = frozenset(p for p in paths if os.path.islink(p) or os.path.isfile(p))
    return owned


@functools.cache
def programs(names: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    """(path, link target or None) of every program-folder entry an image holding ``names`` on its base has.

    Links no package owns (``update-alternatives`` makes them: ``/usr/bin/awk``) stay when they lead to a
    file the image has.
    """
    keep = closure(tuple(base_packages()) + tuple(names))
    owned = _owned()
    allowed = {path for packages in keep for p in installed()[packages] for path in owned[p.key]}
    everything = {path for paths in owned.values() for path in paths}
    for folder in PROGRAM_DIRS:
        for root, dirs, files in os.walk(folder):
            for entry in (os.path.join(root, name) for name in files + dirs):
                if entry not in everything and os.path.islink(entry) and os.path.realpath(entry) in allowed:
                    allowed.add(entry)
    return tuple((path, os.readlink(path) if os.path.islink(path) else None) for path in sorted(allowed))


def program_args(names: tuple[str, ...]) -> list[str]:
    """bubblewrap arguments that mask :data:`PROGRAM_DIRS` and show only the image's programs in them.

    Each folder is one read-only bind of a host folder of hard links made once per process
    (:func:`_staged`): hundreds of single-file binds made each sandbox start take about half a second.
    Where links cannot be made (another file system), each file is bound on its own.
    """
    folders = [folder for folder in PROGRAM_DIRS if os.path.isdir(folder)]
    if (staged := _staged(tuple(names))) is not None:
        return [arg for folder in folders for arg in ("--ro-bind", str(staged / folder.lstrip("/")), folder)]
    args: list[str] = []
    for folder in folders:
        args += ["--perms", "0755", "--tmpfs", folder]
    for path, target in programs(tuple(names)):
        args += ["--symlink", target, path] if target is not None else ["--ro-bind", path, path]
    for folder in folders:
        args += ["--remount-ro", folder]
    return args


@functools.cache
def _staged(names: tuple[str, ...]) -> Path | None:
    """A private host folder holding, under ``usr/bin`` etc., hard links to the image's programs (None if
    this file system refuses them). Its top is root's alone; the folders bound into sandboxes are 0755."""
    top = Path(tempfile.mkdtemp(prefix="orh-programs-"))
    atexit.register(shutil.rmtree, top, True)
    for folder in PROGRAM_DIRS:
        (top / folder.lstrip("/")).mkdir(mode=0o755, parents=True, exist_ok=True)
    try:
        for path, target in programs(names):
            staged = top / path.lstrip("/")
            staged.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            if target is not None:
                os.symlink(target, staged)
            else:
                os.link(path, staged)
    except OSError:
        shutil.rmtree(top, ignore_errors=True)
        return None
    for entry in top.rglob("*"):
        if entry.is_dir() and not entry.is_symlink():
            entry.chmod(0o755)
    return top


def require_installed(dockerfiles: list[Path]) -> None:
    """Raise :class:`MissingPackages` naming every package these Dockerfiles install that this machine lacks."""
    wanted: set[str] = set()
    for path in (p for p in dockerfiles if p.is_file()):
        with contextlib.suppress(DockerfileError):  # the environment's start reports those
            wanted.update(read_dockerfile(path).apt_packages)
    if absent := missing(tuple(sorted(wanted))):
        raise MissingPackages(absent)


def main() -> None:
    """Print the Debian packages the exported images install that this machine lacks (scripts/setup.sh)."""
    print(" ".join(missing(tuple(PYTHON_SLIM_ADDS) + AGENT_APT_PACKAGES)))
