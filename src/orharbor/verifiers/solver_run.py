"""Run an agent's program (a level-2 ``solve.py``, a RetailOpt ``model.py``) once, under hard limits.

The child gets its own session (so its whole process group can be killed), a
clean environment, ``python3 -I``, a fresh private scratch folder holding only
the files handed to it, and resource limits set before exec: address space,
CPU time, processes, file size, open files, no POSIX message queues, no core
dumps, and ``no_new_privs`` (setuid programs do not raise it). When the
verifier runs as root the child runs as a uid of its own, which owns nothing
else; while it runs, the total size and number of files it keeps (its scratch,
its files in the open shared folders, files it holds open after deleting them)
are checked every :data:`POLL_S` seconds against the limits. Afterwards every
process of that uid is killed, its scratch and its files in the open shared
folders are deleted, and its System V IPC objects are removed: nothing a run
writes survives into the next.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from orharbor.verifiers.lockdown import remove_ipc
from orharbor.verifiers.processes import kill_uid, reap_children
from orharbor.verifiers.removal import empty_dir, remove_path

if TYPE_CHECKING:
    import subprocess

# ctypes, resource, subprocess and tempfile are imported by the functions that run a program: a level-1 verify,
# which runs none, starts about 36 ms sooner without them, of 182 (every trial pays a verifier start).

#: How much of the child's stdout/stderr is kept for the details file.
OUTPUT_TAIL_BYTES = 4096
#: How often a run's disk use is measured.
POLL_S = 0.02
_PR_SET_NO_NEW_PRIVS = 38


@dataclass(frozen=True)
class Limits:
    """Per-run resource limits of the agent's program."""

    solve_time_limit_s: float = 10.0
    memory_mb: int = 2048
    max_processes: int = 64
    max_file_mb: int = 64
    max_open_files: int = 256
    #: Everything the run keeps on disk at once: its scratch, its shared-memory files, deleted open files.
    disk_mb: int = 256
    #: Files and folders the run may keep at once.
    max_files: int = 10_000


#: Why a run has no result file to read, besides a time-out or an exit without one (:attr:`RunResult.stopped`).
NOT_STARTED = "not started"
OVER_DISK = "over the disk limit"
UNREADABLE = "unreadable output"


@dataclass
class RunResult:
    """What happened when the program ran once.

    ``error`` says in words why there is no result (it may quote what the
    program left: a reader's message); ``stopped`` says the same as one of
    :data:`NOT_STARTED`, :data:`OVER_DISK`, :data:`UNREADABLE` (None when the
    program just ran), for reports that must not carry the program's words.
    """

    returncode: int | None
    timed_out: bool
    wall_s: float
    stdout_tail: str
    stderr_tail: str
    solution_bytes: bytes | None
    error: str | None = None
    stopped: str | None = None


def run_solver(python: str, solve_py: bytes, instance_json: bytes, limits: Limits, **options) -> RunResult:
    """Run ``python -I solve.py instance.json solution.json`` in a fresh scratch folder."""
    return run_program(
        python,
        {"solve.py": solve_py, "instance.json": instance_json},
        ["solve.py", "instance.json", "solution.json"],
        "solution.json",
        limits,
        **options,
    )


def run_program(
    python: str,
    files: dict[str, bytes],
    argv: list[str],
    output: str,
    limits: Limits,
    *,
    uid: int | None = None,
    gid: int | None = None,
    workroot: str | None = None,
    open_dirs: tuple[str, ...] | None = None,
    read_solution=None,
) -> RunResult:
    """Run ``python -I *argv`` in a fresh folder holding ``files``; read back ``output`` with ``read_solution``.

    ``uid``/``gid`` switch to an unprivileged user (only possible as root).
    ``workroot`` is where the scratch folder is made (it must be traversable
    by ``uid``). ``open_dirs`` are the shared folders the run may write to,
    emptied of its files afterwards (None: the usual temp folders, for a
    container that is not locked down). ``read_solution(path) -> bytes`` reads the result
    file safely.

    ``uid`` is never root or our own uid: after the run every process and
    every shared-folder file of ``uid`` is removed, which for our own uid
    would be this process's siblings and files.
    """
    if uid is not None and uid in (0, os.geteuid()):
        raise ValueError(
            f"a run never runs as uid {uid} (root or the verifier's own): its files and processes "
            "are removed afterwards"
        )
    import subprocess
    import tempfile

    open_dirs = SHARED_TEMP_DIRS if open_dirs is None else open_dirs
    workdir = tempfile.mkdtemp(prefix="orh-run-", dir=workroot)
    logdir = tempfile.mkdtemp(prefix="orh-log-", dir=workroot)  # 0700 root: the run cannot touch its logs
    try:
        for name, data in files.items():
            _write(os.path.join(workdir, name), data)
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
        timed_out, over = False, None
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen(
                    [python, "-I", *argv],
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
                return RunResult(None, False, 0.0, "", "", None, f"could not start {python}: {exc}", NOT_STARTED)
            watched = (workdir, logdir)
            try:
                timed_out, over = _wait(proc, start, limits, uid, watched, open_dirs)
            finally:
                _kill_group(proc.pid)
                _kill_uid(uid)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        wall_s = time.monotonic() - start
        solution = None
        error, stopped = over, (OVER_DISK if over else None)
        out_file = os.path.join(workdir, output)
        if not timed_out and over is None and read_solution is not None and os.path.lexists(out_file):
            try:
                solution = read_solution(out_file)
            except Exception as exc:  # the reader raises BadOutput with a clear message
                error, stopped = str(exc), UNREADABLE
        return RunResult(proc.returncode, timed_out, wall_s, _tail(out_path), _tail(err_path), solution, error, stopped)
    finally:
        remove_path(workdir)
        remove_path(logdir)
        remove_files_of(uid, open_dirs)  # nothing a run leaves behind reaches the next run
        if uid is not None:
            remove_ipc(uid)


def _wait(
    proc: subprocess.Popen,
    start: float,
    limits: Limits,
    uid: int | None,
    watched: tuple[str, ...],
    open_dirs: tuple[str, ...],
) -> tuple[bool, str | None]:
    """Wait for the run; (timed out, why it was stopped for its disk use or None)."""
    import subprocess

    deadline = start + limits.solve_time_limit_s
    max_bytes = limits.disk_mb * 1024 * 1024
    polls = 0
    while True:
        try:
            proc.wait(timeout=min(POLL_S, max(0.0, deadline - time.monotonic())))
            return False, None
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() >= deadline:
            return True, None
        polls += 1
        size, count = disk_use(
            watched, open_dirs, uid, limits.max_files, with_open_files=uid is not None and polls % 10 == 0
        )
        if size > max_bytes or count > limits.max_files:
            return False, (
                f"stopped: kept more than {limits.disk_mb} MiB or {limits.max_files} files on disk "
                f"(the limit for everything a run writes)"
            )


def disk_use(
    roots: tuple[str, ...], open_dirs: tuple[str, ...], uid: int | None, max_files: int, with_open_files: bool = False
) -> tuple[int, int]:
    """(bytes, entries) under ``roots``, plus ``uid``'s entries in ``open_dirs`` and its deleted open files.

    Stops counting once ``max_files`` is passed. Bytes are allocated blocks, so
    sparse files count for what they really take.
    """
    size, count = 0, 0
    stack = list(roots)
    for folder in open_dirs if uid is not None else ():  # without a uid of its own, nothing there is the run's
        try:
            stack += [e.path for e in os.scandir(folder) if e.stat(follow_symlinks=False).st_uid == uid]
        except OSError:
            pass
    while stack and count <= max_files:
        path = stack.pop()
        try:
            st = os.lstat(path)
        except OSError:
            continue
        count += 1
        size += st.st_blocks * 512
        if os.path.isdir(path) and not os.path.islink(path):
            try:
                stack += [e.path for e in os.scandir(path)]
            except OSError:
                pass
    if with_open_files and uid is not None:
        size += _deleted_open_files(uid)
    return size, count


def _deleted_open_files(uid: int) -> int:
    """Bytes of files that ``uid``'s processes hold open after deleting them."""
    seen, size = set(), 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if st.st_nlink == 0 and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                size += st.st_blocks * 512
    return size


def _limiter(limits: Limits, uid: int | None, gid: int | None):
    import ctypes  # before fork, as the lookup below: nothing is imported in the child
    import resource

    mem = limits.memory_mb * 1024 * 1024
    fsize = limits.max_file_mb * 1024 * 1024
    cpu_s = max(1, int(limits.solve_time_limit_s) + 1)
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before fork: nothing to load in the child
    except (OSError, AttributeError):
        prctl = None

    def apply() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.max_open_files, limits.max_open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))
        if prctl is not None and prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if uid is not None:
            g = gid if gid is not None else uid
            os.setgroups([])
            os.setgid(g)
            os.setuid(uid)
        # RLIMIT_NPROC counts the processes of the (new) real uid.
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes, limits.max_processes))

    return apply


#: World-writable places where a run could leave files for the next one (without the lockdown).
SHARED_TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def remove_files_of(uid: int | None, roots: tuple[str, ...] = SHARED_TEMP_DIRS) -> int:
    """Delete every entry under ``roots`` owned by ``uid`` (whole trees, iteratively); return how many."""
    if uid is None:
        return 0
    removed = 0
    for root in roots:
        removed += empty_dir(root, keep=lambda entry: entry.stat(follow_symlinks=False).st_uid != uid)
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
