"""The one-shot bubblewrap sandbox (``verify`` as root, ``validate-specs``) and the interpreters it mirrors.

Host ``/usr`` and ``/etc`` are read-only, the task's folders are bound at their
real paths, and the interpreters of the task images are mirrored from host
files without downloading anything:

- the level-2 solver venv (``/opt/orharbor-solver``: numpy and scipy only);
- for modelling tasks, ``/usr/local`` itself, laid out as a venv holding the
  modelling packages (ortools, pyomo, highspy, numpy, scipy and what they
  require), as ``pip install`` leaves them in the python image.

``orharbor check`` and the Harbor environment (:mod:`orharbor.harbor_env.environment`)
ask :func:`require_bwrap` first, and the environment mirrors the same packages
(:func:`installed_paths`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from orharbor.errors import UserError
from orharbor.harbor_env import launch, rootfs, users
from orharbor.harbor_env.seccomp import compile_bpf
from orharbor.image_facts import MODELLING_STACK, SOLVER_STACK, SOLVER_VENV

#: Host packages visible to the level-2 solver interpreter: the ones the task images pin.
SOLVER_PACKAGES = SOLVER_STACK
#: Host packages visible to python3 in a modelling task (and their requirements).
MODELLING_PACKAGES = MODELLING_STACK


class SandboxUnavailable(UserError):
    """bubblewrap is missing or cannot create a sandbox here."""


def require_bwrap() -> str:
    """Path of a working bwrap, or a clear error saying how to install it."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailable(
            "orharbor check needs bubblewrap (bwrap) for its sandbox; "
            "install it with `apt-get install -y bubblewrap` (Debian/Ubuntu) "
            "or `dnf install bubblewrap` (Fedora)"
        )
    probe = subprocess.run(
        [path, *rootfs.base_args(), "--proc", "/proc", "--dev", "/dev", "--unshare-pid", "--die-with-parent", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        raise SandboxUnavailable(f"bubblewrap cannot create a sandbox here: {probe.stderr.strip()}")
    if os.geteuid() != 0:
        raise SandboxUnavailable(
            "orharbor check runs the verifier as root and the agent and solve.py as "
            "unprivileged users inside the sandbox, so it must run as root"
        )
    return path


@dataclass(frozen=True)
class Venv:
    """A venv assembled from host files: the base interpreter plus chosen packages only.

    ``binds`` are (host path, path relative to the venv root) pairs, so the same
    layout can be mounted at any prefix.
    """

    root: Path
    base_prefix: Path
    python: str
    binds: tuple[tuple[str, str], ...]


def build_venv(root: Path, packages: tuple[str, ...]) -> Venv:
    """Lay out a venv holding ``packages`` and their requirements, without downloading anything."""
    base = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    python = base / "bin" / version
    site = root / "lib" / version / "site-packages"
    (root / "bin").mkdir(parents=True)
    site.mkdir(parents=True)
    (root / "pyvenv.cfg").write_text(
        f"home = {base / 'bin'}\ninclude-system-site-packages = false\n"
        f"version = {sys.version_info.major}.{sys.version_info.minor}."
        f"{sys.version_info.micro}\n"
    )
    for name in ("python3", "python", version):
        (root / "bin" / name).symlink_to(python)
    binds = []
    for path in installed_paths(packages):
        mount_point = site / path.name
        if path.is_dir():
            mount_point.mkdir()
        else:
            mount_point.touch()
        binds.append((str(path), str(mount_point.relative_to(root))))
    for folder in (root, *[p for p in root.rglob("*") if p.is_dir() and not p.is_symlink()]):
        folder.chmod(0o755)  # the solver runs as an unprivileged user
    for file in (root / "pyvenv.cfg", *[p for p in site.iterdir() if p.is_file()]):
        file.chmod(0o644)
    return Venv(root, base, str(python), tuple(binds))


def installed_paths(packages: tuple[str, ...]) -> list[Path]:
    """Top-level site-packages entries of ``packages`` and everything they require.

    Worked out once per process for each package list while the folders on
    ``sys.path`` stay as they are (an install changes their mtime): reading the
    metadata of every file of numpy and ortools took 0.9 s at every sandbox start.
    """
    with _WORKING_OUT:  # trials start sandboxes from several threads at once: one works it out, the rest wait
        return list(_installed_paths(tuple(packages), _path_state()))


_WORKING_OUT = threading.Lock()


def _path_state() -> tuple[tuple[str, int], ...]:
    """The folders on ``sys.path`` and their modification times: what an install or removal changes."""
    state = []
    for entry in sys.path:
        with contextlib.suppress(OSError):
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
    return tuple(state)


@functools.lru_cache(maxsize=64)
def _installed_paths(packages: tuple[str, ...], _state: tuple[tuple[str, int], ...]) -> tuple[Path, ...]:
    paths: dict[str, Path] = {}
    for dist in _closure(packages):
        for file in dist.files or ():
            if file.parts[0] in ("..", "__pycache__"):
                continue
            top = Path(str(dist.locate_file(file.parts[0])))
            if top.exists():
                paths.setdefault(top.name, top)
    return tuple(paths[name] for name in sorted(paths))


def _closure(packages: tuple[str, ...]) -> list[metadata.Distribution]:
    found: dict[str, metadata.Distribution] = {}
    todo = list(packages)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if name in packages:
                raise SandboxUnavailable(
                    f"check mirrors the task images' interpreters and needs {name} installed here (pip install {name})"
                ) from None
            continue  # an optional or platform-specific requirement
        found[key] = dist
        for requirement in dist.requires or ():
            if "extra ==" not in requirement:
                name_match = re.match(r"[A-Za-z0-9._-]+", requirement)
                assert name_match is not None  # a requirement starts with its distribution's name (PEP 508)
                todo.append(name_match.group(0))
    return [found[key] for key in sorted(found)]


def run_sandboxed(
    bwrap: str,
    binds: dict[str, Path],
    ro_binds: dict[str, Path],
    command: list[str],
    timeout_s: float,
    solver_packages: tuple[str, ...],
    local_packages: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` as root of a fresh offline sandbox laid out like the task images, our folders bound.

    The same isolation as the Harbor environment's sandboxes
    (:mod:`orharbor.harbor_env`): the image-like file system, a user namespace
    of its own, Docker's capabilities and seccomp profile, no network. The
    solver venv holds ``solver_packages``; ``/usr/local``'s site-packages hold
    ``local_packages`` (a modelling image) or nothing.
    """
    accounts = users.accounts(["agent"])
    etc = {
        "passwd": users.passwd(accounts),
        "group": users.group(accounts),
        "shadow": users.shadow(accounts),
        "hostname": "orharbor\n",
        "hosts": "127.0.0.1\tlocalhost\n",
        "resolv.conf": "",
    }
    files = {name: launch.readable(text.encode()) for name, text in etc.items()}
    seccomp = launch.readable(compile_bpf())
    with tempfile.TemporaryDirectory(prefix="orh-oneshot-") as scratch:
        config = Path(scratch) / "pyvenv.cfg"
        config.write_text(rootfs.pyvenv_cfg())
        config.chmod(0o644)
        args = [
            *rootfs.base_args(),
            *rootfs.etc_args(files),
            *rootfs.scratch_args(),
            *rootfs.python_args(rootfs.host_python(), _site(local_packages)),
            *rootfs.venv_args(SOLVER_VENV, _site(solver_packages), config),
        ]
        for target, source in binds.items():
            args += [*rootfs.parents_args(target), "--bind", str(source), target]
        for target, source in ro_binds.items():
            args += [*rootfs.parents_args(target), "--ro-bind", str(source), target]
        args += [
            "--chdir",
            "/app",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--setenv",
            "PATH",
            "/usr/local/bin:/usr/bin:/bin",
            "--setenv",
            "HOME",
            "/home/agent",
            "--setenv",
            "LANG",
            "C.UTF-8",
            "--seccomp",
            str(seccomp),
            *users.bwrap_capability_args(),
        ]
        process = launch.start_bwrap(
            bwrap,
            args,
            command,
            (seccomp, *files.values()),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _site(packages: tuple[str, ...]) -> list[tuple[str, str]]:
    """(host path, site-packages name) of ``packages`` and what they require."""
    return [(str(path), path.name) for path in installed_paths(tuple(packages))] if packages else []
