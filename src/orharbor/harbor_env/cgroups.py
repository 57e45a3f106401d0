"""Resources: every sandbox in a cgroup of its own, bounded the way a container engine bounds a container.

Docker's defaults, which Harbor's Docker environment applies from the task's
``[environment]`` (``cpus``, ``memory_mb``) through its compose file:

- memory: a hard limit of ``memory_mb`` counting everything the container's
  processes charge, page cache and the pages of its tmpfs files included,
  and as much again of swap (``--memory-swap`` defaults to twice
  ``--memory``); past it the kernel's OOM killer ends a process of the
  container, never one of the host. No limit where the task gives none;
- CPU: a CFS quota of ``cpus`` times the 100 ms period; none where the task
  gives none;
- processes: Docker sets no limit; rootless podman's default
  (``pids_limit`` in ``containers.conf``) is 2048, which is what
  :data:`PIDS_LIMIT` takes, so a fork bomb ends as the sandbox's failure
  while the host keeps its process ids.

One cgroup per sandbox, under ``orharbor/`` of each controller's hierarchy on
cgroup v1 (``memory``, ``pids``, ``cpu``), or of the unified hierarchy on
cgroup v2 (``memory.max``, ``memory.swap.max``, ``pids.max``, ``cpu.max``).
The sandbox's PID 1 joins it before bubblewrap lets it run, and every
command the sandbox's door (:mod:`.enter`) starts joins it before it runs
anything, so every process of the sandbox is counted there, and the door,
outside it, is never the OOM killer's choice.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

#: rootless podman's default process limit per container (Docker has none).
PIDS_LIMIT = 2048
#: The CFS period Docker uses; the quota is ``cpus`` times it.
CPU_PERIOD_US = 100_000
#: The folder every sandbox's cgroup lives under, in each hierarchy.
PARENT = "orharbor"
CGROUP_ROOT = Path("/sys/fs/cgroup")


class CgroupUnavailable(RuntimeError):
    """The sandbox's cgroup could not be made (no cgroup file system, or no right to write it)."""


@dataclass(frozen=True)
class Limits:
    """What a sandbox may use: memory in bytes and CPUs (None: no limit, as Docker), and processes."""

    memory_bytes: int | None = None
    cpus: float | None = None
    pids: int = PIDS_LIMIT


class Cgroup:
    """One sandbox's cgroup, made with its limits; :meth:`join` a process, :meth:`remove` once it is empty."""

    def __init__(self, limits: Limits, root: Path = CGROUP_ROOT, name: str | None = None) -> None:
        self.limits = limits
        self.name = name or uuid.uuid4().hex
        self.unified = (root / "cgroup.controllers").is_file()
        self.folders: list[Path] = []
        try:
            if self.unified:
                self._make_v2(root)
            else:
                self._make_v1(root)
        except OSError as exc:
            self.remove()
            raise CgroupUnavailable(f"cannot make the sandbox's cgroup under {root}: {exc.strerror or exc}") from exc

    def _make_v1(self, root: Path) -> None:
        memory, pids, cpu = (root / kind / PARENT / self.name for kind in ("memory", "pids", "cpu"))
        for folder in (memory, pids, cpu):
            folder.mkdir(parents=True)
            self.folders.append(folder)
        _write(pids / "pids.max", str(self.limits.pids))
        if self.limits.memory_bytes is not None:
            _write(memory / "memory.limit_in_bytes", str(self.limits.memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # swap accounting on: memory plus as much swap
                _write(memory / "memory.memsw.limit_in_bytes", str(2 * self.limits.memory_bytes))
        if self.limits.cpus is not None:
            _write(cpu / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(cpu / "cpu.cfs_quota_us", str(_quota(self.limits.cpus)))

    def _make_v2(self, root: Path) -> None:
        parent = root / PARENT
        parent.mkdir(exist_ok=True)
        for folder in (root, parent):  # the controllers, handed down to the sandboxes' cgroups
            _write(folder / "cgroup.subtree_control", "+memory +pids +cpu")
        folder = parent / self.name
        folder.mkdir()
        self.folders.append(folder)
        _write(folder / "pids.max", str(self.limits.pids))
        if self.limits.memory_bytes is not None:
            _write(folder / "memory.max", str(self.limits.memory_bytes))
            _write(folder / "memory.swap.max", str(self.limits.memory_bytes))
        if self.limits.cpus is not None:
            _write(folder / "cpu.max", f"{_quota(self.limits.cpus)} {CPU_PERIOD_US}")

    def join(self, pid: int) -> None:
        """Move process ``pid`` (and so everything it starts from now on) into the sandbox's cgroup."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", str(pid))

    def procs_files(self) -> tuple[int, ...]:
        """Each ``cgroup.procs``, open for writing: a process writing ``0`` to them joins the cgroup."""
        return tuple(os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC) for folder in self.folders)

    def processes(self) -> list[int]:
        """The processes the cgroup holds now."""
        if not self.folders:
            return []
        with contextlib.suppress(OSError):
            return [int(line) for line in (self.folders[0] / "cgroup.procs").read_text().split()]
        return []

    def remove(self, wait_s: float = 10.0) -> None:
        """Remove the cgroup once its processes have gone (they are being killed); left behind if they stay."""
        deadline = time.monotonic() + wait_s
        for folder in reversed(self.folders):
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.01)
        self.folders = []


def _quota(cpus: float) -> int:
    return max(1000, round(cpus * CPU_PERIOD_US))


def _write(path: Path, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)
