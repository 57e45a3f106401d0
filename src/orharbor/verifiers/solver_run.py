"""Run an agent's solve.py on one instance under hard limits.

The child gets its own session (so its whole process group can be killed), a
clean environment, ``python3 -I``, a private working directory, and resource
limits set before exec: address space, CPU time, processes, file size, open
files, no core dumps. When the verifier runs as root the child drops to an
unprivileged uid, and afterwards every process of that uid is killed, which
also ends children that left the process group.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from orharbor.verifiers.processes import kill_uid, reap_children

#: How much of the child's stdout/stderr is kept for the details file.
OUTPUT_TAIL_BYTES = 4096


@dataclass(frozen=True)
class Limits:
    """Per-instance resource limits for solve.py."""

    wall_s: float = 10.0
    memory_mb: int = 2048
    max_processes: int = 64
    max_file_mb: int = 64
    max_open_files: int = 256


@dataclass
class RunResult:
    """What happened when solve.py ran once."""

    returncode: int | None
    timed_out: bool
    wall_s: float
    stdout_tail: str
    stderr_tail: str
    solution_bytes: bytes | None
    error: str | None = None


def run_solver(
    python: str,
    solve_py: bytes,
    instance_json: bytes,
    limits: Limits,
    *,
    uid: int | None = None,
    gid: int | None = None,
    workroot: str | None = None,
    read_solution=None,
) -> RunResult:
    """Run ``python -I solve.py instance.json solution.json`` in a fresh directory.

    ``uid``/``gid`` switch to an unprivileged user (only possible as root).
    ``read_solution(path) -> bytes`` reads the result file safely.
    """
    workdir = tempfile.mkdtemp(prefix="orh-run-", dir=workroot)
    logdir = tempfile.mkdtemp(prefix="orh-log-", dir=workroot)  # 0700 root: the run cannot touch its logs
    try:
        _write(os.path.join(workdir, "solve.py"), solve_py)
        _write(os.path.join(workdir, "instance.json"), instance_json)
        if uid is not None:
            os.chown(workdir, uid, gid if gid is not None else uid)
            os.chmod(workdir, 0o700)
        out_path = os.path.join(logdir, "stdout")
        err_path = os.path.join(logdir, "stderr")
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": workdir,
            "TMPDIR": workdir,
            "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
        start = time.monotonic()
        timed_out = False
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen(
                    [python, "-I", "solve.py", "instance.json", "solution.json"],
                    cwd=workdir,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    close_fds=True,
                    start_new_session=True,
                    preexec_fn=_limiter(limits, uid, gid),
                )
            except OSError as exc:
                return RunResult(None, False, 0.0, "", "", None, f"could not start {python}: {exc}")
            try:
                proc.wait(timeout=limits.wall_s)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill_group(proc.pid)
                _kill_uid(uid)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        wall = time.monotonic() - start
        solution = None
        error = None
        sol_path = os.path.join(workdir, "solution.json")
        if not timed_out and read_solution is not None and os.path.lexists(sol_path):
            try:
                solution = read_solution(sol_path)
            except Exception as exc:  # the reader raises BadOutput with a clear message
                error = str(exc)
        return RunResult(
            proc.returncode, timed_out, wall, _tail(out_path), _tail(err_path), solution, error
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(logdir, ignore_errors=True)
        remove_files_of(uid)  # nothing a run leaves behind reaches the next run


def _limiter(limits: Limits, uid: int | None, gid: int | None):
    mem = limits.memory_mb * 1024 * 1024
    fsize = limits.max_file_mb * 1024 * 1024
    cpu = max(1, int(limits.wall_s) + 1)

    def apply() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.max_open_files, limits.max_open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if uid is not None:
            g = gid if gid is not None else uid
            os.setgroups([])
            os.setgid(g)
            os.setuid(uid)
        # RLIMIT_NPROC counts the processes of the (new) real uid.
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes, limits.max_processes))

    return apply


#: World-writable places where a run could leave files for the next one.
SHARED_TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def remove_files_of(uid: int | None, roots: tuple[str, ...] = SHARED_TEMP_DIRS) -> int:
    """Delete every top-level entry under ``roots`` owned by ``uid``; return how many."""
    if uid is None:
        return 0
    removed = 0
    for root in roots:
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
                removed += 1
            except OSError:
                pass
    return removed


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_uid(uid: int | None) -> None:
    """Kill every process of ``uid`` (children that escaped the group included)."""
    if uid is None:
        return
    for _ in range(3):
        kill_uid(uid)
    reap_children()


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, 0o644)


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - OUTPUT_TAIL_BYTES))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
