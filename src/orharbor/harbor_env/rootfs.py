"""The sandbox's file system: what the task's image would hold, and no host path beyond it.

Docker's default: the container sees its image's file system and nothing of
the host's but the few files Docker writes itself (``/etc/hosts``,
``/etc/hostname``, ``/etc/resolv.conf``).

The task images are ``python:3.12-slim`` (Debian with Python under
``/usr/local``) plus venvs and packages. With no image to unpack, the sandbox
is assembled from host files, read-only where the image's are root's alone:

- ``/usr`` is the host's, read-only: it stands for the image's Debian base
  (``/bin``, ``/lib``... are the usual symlinks into it), except that its
  program folders show only the programs of the image's Debian packages
  (:mod:`.debian`);
- ``/etc`` is a fresh folder holding only what a Debian base image has
  (:data:`ETC_FROM_HOST`, read-only) and files written for the sandbox:
  passwd, group, shadow, hostname, hosts, resolv.conf. The host's other
  ``/etc`` entries (its package-index settings, credentials, keys, machine
  id) are not there;
- ``/usr/local`` is laid out as the python image lays it out: ``bin/python3.12``
  (a copy of this machine's interpreter whose library search path points at
  ``/usr/local/lib``), ``lib/python3.12`` (its standard library, read-only),
  ``lib/libpython3.12.so.1.0``, and a ``site-packages`` holding only the
  packages the Dockerfile installs. No ``pyvenv.cfg``: the verifier refuses an
  interpreter with one beside it;
- each venv the Dockerfile makes (``python3 -m venv /opt/orharbor-solver``) is
  a real venv at its path, pointing at ``/usr/local/bin``, its packages
  read-only;
- everything else (``/``, ``/tmp``, ``/home``, ``/app``, ``/logs``...) lives in
  the sandbox's own memory and goes with it.

The host interpreter's own folder (a pyenv tree under ``/root``, say) is not
visible: only the files above, at image paths.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

#: Host /etc entries a Debian base image holds too; everything else in the host's /etc stays out.
ETC_FROM_HOST = (
    "adduser.conf",
    "alternatives",
    "bash.bashrc",
    "bindresvport.blacklist",
    "ca-certificates",
    "ca-certificates.conf",
    "debian_version",
    "deluser.conf",
    "ethertypes",
    "gai.conf",
    "host.conf",
    "inputrc",
    "issue",
    "issue.net",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "login.defs",
    "mime.types",
    "networks",
    "nsswitch.conf",
    "os-release",
    "profile",
    "profile.d",
    "protocols",
    "rpc",
    "services",
    "shells",
    "skel",
    "ssl",
    "terminfo",
    "xattr.conf",
)
#: Where the image's Python lives, as in the python images.
PREFIX = "/usr/local"
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
#: The library search path the sandbox's interpreter is given (the python images put libpython there).
IMAGE_LIBDIR = f"{PREFIX}/lib"
#: Docker's /dev/shm: a tmpfs of 64 MiB (``--shm-size``).
SHM_SIZE = 64 << 20


@dataclass(frozen=True)
class HostPython:
    """This machine's interpreter, laid out for the sandbox: the files to mount at image paths."""

    binary: Path  # a copy whose library path is IMAGE_LIBDIR, when the original's was absolute
    stdlib: Path  # lib/python3.X of the host interpreter
    libpython: Path | None  # the shared library the binary needs, if any

    @property
    def executable(self) -> str:
        """The interpreter's path inside the sandbox."""
        return f"{PREFIX}/bin/python{VERSION}"


def sized(size: int | None) -> list[str]:
    """bubblewrap's size for the next tmpfs (none: the kernel's default, half the RAM)."""
    return ["--size", str(size)] if size is not None else []


def root_args(size: int | None) -> list[str]:
    """The sandbox's ``/`` (and so ``/tmp``, ``/app``, ``/logs``, ``/home``...): a tmpfs of ``size`` bytes."""
    return [*sized(size), "--tmpfs", "/"]


def python_args(python: HostPython, packages: list[tuple[str, str]], size: int | None = None) -> list[str]:
    """``/usr/local`` as the python image has it, its site-packages holding ``packages`` (host path, name).

    Its two writable folders (``/usr/local`` and site-packages) are tmpfs of ``size`` bytes each.
    """
    site = f"{PREFIX}/lib/python{VERSION}/site-packages"
    args = [*sized(size), "--tmpfs", PREFIX]
    for folder in ("bin", "etc", "include", "lib", "sbin", "share", "src"):
        args += ["--perms", "0755", "--dir", f"{PREFIX}/{folder}"]
    args += [
        "--ro-bind",
        str(python.binary),
        python.executable,
        "--symlink",
        f"python{VERSION}",
        f"{PREFIX}/bin/python3",
        "--symlink",
        "python3",
        f"{PREFIX}/bin/python",
        "--ro-bind",
        str(python.stdlib),
        f"{PREFIX}/lib/python{VERSION}",
        "--perms",
        "0755",
        *sized(size),
        "--tmpfs",
        site,
    ]
    if python.libpython is not None:
        args += [
            "--ro-bind",
            str(python.libpython),
            f"{IMAGE_LIBDIR}/{python.libpython.name}",
            "--symlink",
            python.libpython.name,
            f"{IMAGE_LIBDIR}/libpython{VERSION}.so",
        ]
    return args + package_args(packages, site)


def venv_args(path: str, packages: list[tuple[str, str]], config: Path) -> list[str]:
    """A venv at ``path`` as ``python3 -m venv`` makes it in the image, holding ``packages``.

    ``config`` is a host file holding its ``pyvenv.cfg`` (see :func:`pyvenv_cfg`).
    """
    site = f"{path}/lib/python{VERSION}/site-packages"
    args = parents_args(path)
    for folder in (path, f"{path}/bin", f"{path}/include", f"{path}/lib", f"{path}/lib/python{VERSION}", site):
        args += ["--perms", "0755", "--dir", folder]
    args += [
        "--symlink",
        "lib",
        f"{path}/lib64",
        "--ro-bind",
        str(config),
        f"{path}/pyvenv.cfg",
        "--symlink",
        f"{PREFIX}/bin/python3",
        f"{path}/bin/python3",
        "--symlink",
        "python3",
        f"{path}/bin/python",
        "--symlink",
        "python3",
        f"{path}/bin/python{VERSION}",
    ]
    return args + package_args(packages, site)


def pyvenv_cfg() -> str:
    """The ``pyvenv.cfg`` of a venv made from the image's interpreter."""
    micro = f"{VERSION}.{sys.version_info.micro}"
    return (
        f"home = {PREFIX}/bin\ninclude-system-site-packages = false\nversion = {micro}\n"
        f"executable = {PREFIX}/bin/python{VERSION}\ncommand = {PREFIX}/bin/python3 -m venv\n"
    )


def package_args(packages: list[tuple[str, str]], site: str) -> list[str]:
    """Bind each (host path, name) read-only into the site-packages folder ``site``."""
    args: list[str] = []
    for source, name in packages:
        args += ["--ro-bind", source, f"{site}/{name}"]
    return args


def etc_args(generated: dict[str, int]) -> list[str]:
    """``/etc``: the host entries a base image has, read-only, and the generated files (name -> readable fd)."""
    args = ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_FROM_HOST:
        path = Path("/etc") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/etc/{name}"]
        elif path.exists():
            args += ["--ro-bind", str(path), f"/etc/{name}"]
    args += ["--symlink", "/usr/share/zoneinfo/Etc/UTC", "/etc/localtime"]
    for name, fd in generated.items():
        args += ["--perms", "0640" if name in ("shadow", "gshadow") else "0644", "--file", str(fd), f"/etc/{name}"]
    return args


def base_args() -> list[str]:
    """Host ``/usr`` read-only and the merged-/usr symlinks (``/bin`` -> ``usr/bin``...) as on the host."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib64", "lib32", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    return args


def parents_args(path: str) -> list[str]:
    """Create ``path``'s ancestors world-traversable (bwrap would make them 0700)."""
    args: list[str] = []
    for parent in reversed(Path(path).parents[:-1]):
        args += ["--perms", "0755", "--dir", str(parent)]
    return args


#: Docker's masked paths under /proc (moby's ``oci/defaults.go``): files read as empty, folders as empty and
#: read-only. Docker's /sys masks need nothing here: the sandbox has no /sys at all.
MASKED_PROC_FILES = ("interrupts", "kcore", "keys", "latency_stats", "sched_debug", "timer_list", "timer_stats")
MASKED_PROC_DIRS = ("acpi", "asound", "scsi")


def proc_args(proc: Path = Path("/proc")) -> list[str]:
    """A fresh /proc of the sandbox's PID namespace, with Docker's masked paths masked (those this kernel has).

    Files get an empty read-only file bound over them (a /dev/null bound into
    a ``nodev`` /proc could not be opened), folders an empty read-only tmpfs.
    """
    args = ["--proc", "/proc"]
    for name in MASKED_PROC_FILES:
        if (proc / name).exists():
            args += ["--ro-bind", str(_LAYOUT.empty_file()), f"/proc/{name}"]
    for name in MASKED_PROC_DIRS:
        if (proc / name).is_dir():
            args += ["--perms", "0555", "--tmpfs", f"/proc/{name}", "--remount-ro", f"/proc/{name}"]
    return args


def scratch_args(shm: int | None = SHM_SIZE) -> list[str]:
    """/proc (masked as Docker masks it), /dev with a /dev/shm of ``shm`` bytes, and the folders every image has."""
    return [
        *proc_args(),
        "--dev",
        "/dev",
        "--perms",
        "1777",
        *sized(shm),
        "--tmpfs",
        "/dev/shm",
        "--perms",
        "1777",
        "--dir",
        "/tmp",
        "--perms",
        "0755",
        "--dir",
        "/var",
        "--perms",
        "1777",
        "--dir",
        "/var/tmp",
        "--perms",
        "0755",
        "--dir",
        "/home",
        "--perms",
        "0755",
        "--dir",
        "/run",
        "--perms",
        "0700",
        "--dir",
        "/root",
        "--perms",
        "0755",
        "--dir",
        "/opt",
        "--perms",
        "0755",
        "--dir",
        "/srv",
    ]


# ---------------------------------------------------------------------- the host interpreter, once


class _Layout:
    """The relocated interpreter copy, made once per process in a private folder."""

    def __init__(self) -> None:
        self._python: HostPython | None = None
        self._empty: Path | None = None
        self._lock = threading.Lock()

    def empty_file(self) -> Path:
        """An empty, read-only host file to bind over masked paths (made once per process)."""
        with self._lock:
            if self._empty is None:
                folder = Path(tempfile.mkdtemp(prefix="orh-empty-"))
                atexit.register(shutil.rmtree, folder, True)
                os.chmod(folder, 0o755)
                self._empty = folder / "empty"
                self._empty.touch()
                self._empty.chmod(0o444)
            return self._empty

    def python(self) -> HostPython:
        with self._lock:
            if self._python is None:
                self._python = _relocate(Path(tempfile.mkdtemp(prefix="orh-python-")))
            return self._python


def _relocate(folder: Path) -> HostPython:
    """Copy the host interpreter into ``folder`` with its library path moved to :data:`IMAGE_LIBDIR`."""
    atexit.register(shutil.rmtree, folder, True)
    os.chmod(folder, 0o755)
    base = Path(sys.base_prefix)
    original = base / "bin" / f"python{VERSION}"
    stdlib = base / "lib" / f"python{VERSION}"
    libpython = next((p for p in (base / "lib" / f"libpython{VERSION}.so.1.0",) if p.is_file()), None)
    data = original.read_bytes()
    old = str(base / "lib").encode()
    marker = b"\0" + old + b"\0"
    if libpython is not None and data.count(marker) == 1 and len(old) >= len(IMAGE_LIBDIR):
        # the ELF string table entry of its run path, overwritten in place and padded with NULs
        data = data.replace(marker, b"\0" + IMAGE_LIBDIR.encode() + b"\0" * (len(old) - len(IMAGE_LIBDIR) + 1))
    binary = folder / f"python{VERSION}"
    binary.write_bytes(data)
    binary.chmod(0o755)
    return HostPython(binary, stdlib, libpython)


_LAYOUT = _Layout()


def host_python() -> HostPython:
    """This machine's interpreter, ready to be mounted at :data:`PREFIX` (made once per process)."""
    return _LAYOUT.python()


#: bubblewrap options and how many operands each takes (the last is the sandbox path it makes, for those in MAKES).
_OPERANDS = {
    "--dir": 1,
    "--tmpfs": 1,
    "--file": 2,
    "--symlink": 2,
    "--ro-bind": 2,
    "--bind": 2,
    "--dev-bind": 2,
    "--ro-bind-try": 2,
    "--bind-try": 2,
    "--proc": 1,
    "--dev": 1,
    "--perms": 1,
    "--size": 1,
    "--remount-ro": 1,
    "--chmod": 2,
    "--ro-bind-data": 2,
    "--bind-data": 2,
    "--mqueue": 1,
}
_MAKES = {"--dir", "--tmpfs", "--file", "--symlink", "--proc", "--dev", "--ro-bind-data", "--bind-data", "--mqueue"}


def made_paths(args: list[str]) -> list[str]:
    """The sandbox paths bubblewrap itself creates for ``args``: what it makes, and the parents of every mount.

    Made by the namespace's owner (:mod:`.owners`), they belong to its uid
    until the environment gives them to root, as an image's files are.
    """
    made: set[str] = {"/"}
    i = 0
    while i < len(args):
        count = _OPERANDS.get(args[i], 0)
        if count and i + count < len(args):
            target = args[i + count]
            if target.startswith("/"):
                if args[i] in _MAKES:
                    made.add(target)
                made.update(str(parent) for parent in Path(target).parents)
        i += 1 + count
    return sorted(made)
