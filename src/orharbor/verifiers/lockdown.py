"""Close the container to the programs the verifier runs: nothing readable the agent wrote, nothing writable.

Inside a task container, before the agent's program (a level-2 ``solve.py``,
a RetailOpt ``model.py``) runs on hidden inputs, the verifier (root) walks
every writable file system and, for the time of the runs:

- hides every file and folder a non-root user owns (``chmod go-rwx``): the
  agent's home, ``/app``, whatever it planted in ``/tmp``. The programs run
  under fresh uids that own nothing, so they see the agent's files as
  "others" would, and a package planted anywhere cannot be imported, whatever
  ``sys.path`` says;
- closes every root-owned folder others may write (``/tmp``, ``/var/tmp``,
  ``/logs``...) entirely, except ``/dev/shm``, which stays open for
  multiprocessing's semaphores and is emptied of each run's files after it;
- takes write permission for group and others off everything else (a
  root-owned file others may write is hidden, since the agent may have
  written it).

Group bits go too, which also disarms POSIX ACL grants (their mask is the
group bits). The only place a run can write is then its own scratch folder.
Modes are restored afterwards. System V IPC objects of non-root users are
removed before the runs and after each one. Only ever used inside a task
container (``--in-container``), never on a host.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

#: Pseudo file systems that hold no files a program could leave or find.
PSEUDO_FS = frozenset(
    {
        "proc",
        "sysfs",
        "cgroup",
        "cgroup2",
        "devpts",
        "mqueue",
        "securityfs",
        "debugfs",
        "tracefs",
        "bpf",
        "pstore",
        "fusectl",
        "configfs",
        "binfmt_misc",
        "autofs",
        "nsfs",
        "rpc_pipefs",
    }
)
#: Root-owned shared folders kept open to the runs (and emptied of each run's files after it).
OPEN_DIRS = ("/dev/shm",)
#: The uids runs get, one per run: systemd's range for dynamic users, which no image file should use.
RUN_UID_RANGE = range(61184, 65519)
#: More entries than any image holds: beyond this the walk gives up and the verifier refuses to score.
MAX_ENTRIES = 5_000_000


#: PID 1 of a host: the lockdown refuses to touch a machine that runs one.
HOST_INITS = frozenset({"systemd", "init", "launchd", "runit", "openrc-init", "s6-svscan"})


class LockdownError(RuntimeError):
    """The container could not be closed; the verifier must not run the agent's code."""


@dataclass
class Lockdown:
    """What :func:`lock` changed, so :func:`restore` can undo it."""

    changed: list[tuple[str, int]] = field(default_factory=list)
    owners: set[int] = field(default_factory=set)
    open_dirs: tuple[str, ...] = ()
    entries: int = 0

    def run_uids(self, count: int) -> list[int]:
        """``count`` distinct uids that own nothing the walk saw and name no account."""
        taken = self.owners | _passwd_uids()
        free = [uid for uid in RUN_UID_RANGE if uid not in taken][:count]
        if len(free) < count:
            raise LockdownError("no free uid left for the runs")
        return free


def lock(open_dirs: tuple[str, ...] = OPEN_DIRS) -> Lockdown:
    """Close the container as described above; the caller must :func:`restore` it (also on error)."""
    if os.geteuid() != 0:
        raise LockdownError("closing the container needs root")
    if _init_name() in HOST_INITS:
        raise LockdownError("this looks like a host, not a task container (PID 1 is an init system)")
    state = Lockdown(open_dirs=tuple(d for d in open_dirs if os.path.isdir(d) and not os.path.islink(d)))
    try:
        for root in writable_mounts():
            _walk(root, state)
    except BaseException:
        restore(state)
        raise
    remove_ipc()
    return state


def restore(state: Lockdown) -> None:
    """Give every changed entry its mode back (newest change first)."""
    while state.changed:
        path, mode = state.changed.pop()
        try:
            os.chmod(path, stat.S_IMODE(mode), follow_symlinks=False)
        except (OSError, NotImplementedError):
            try:
                if not os.path.islink(path):
                    os.chmod(path, stat.S_IMODE(mode))
            except OSError:
                pass


def writable_mounts() -> list[str]:
    """Mount points of writable, real file systems, outside /proc and /sys, shortest first."""
    roots = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ["/"]
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, after = left.split(), right.split()
        if len(fields) < 6 or not after:
            continue
        point = _unescape(fields[4])
        options = fields[5].split(",")
        if (
            after[0] in PSEUDO_FS
            or "ro" in options
            or point.startswith(("/proc/", "/sys/"))
            or point in ("/proc", "/sys")
        ):
            continue
        roots.append(point)
    return sorted(set(roots), key=len) or ["/"]


def _walk(root: str, state: Lockdown) -> None:
    """Apply the rules to ``root`` and every entry below it on the same file system."""
    try:
        top = os.lstat(root)
    except OSError:
        return
    if not _visit(root, top, state):
        return
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            state.entries += 1
            if state.entries > MAX_ENTRIES:
                raise LockdownError(f"more than {MAX_ENTRIES} files to inspect; refusing to run the agent's code")
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_dev != top.st_dev:  # another mount: walked on its own if writable
                continue
            if _visit(entry.path, st, state):
                stack.append(entry.path)


def _visit(path: str, st: os.stat_result, state: Lockdown) -> bool:
    """Apply the rules to one entry; True if the walk must look inside it."""
    if not stat.S_ISDIR(st.st_mode):
        _apply_file(path, st, state)
        return False
    if st.st_uid != 0:  # a non-root user's folder: hidden, and nothing inside it is reachable
        state.owners.add(st.st_uid)
        _chmod(path, st.st_mode, st.st_mode & ~0o077, state)
        return False
    return _close_or_strip(path, st, state)


def _close_or_strip(path: str, st: os.stat_result, state: Lockdown) -> bool:
    """Rules for a root-owned folder; True if the walk must look inside it."""
    mode = st.st_mode
    if path in state.open_dirs:  # left open; each run's files are removed after it
        return True
    if mode & 0o002:  # a shared folder: closed to others entirely
        _chmod(path, mode, mode & ~0o077, state)
        return False
    if mode & 0o020:
        _chmod(path, mode, mode & ~0o020, state)
    return bool(mode & 0o001)


def _apply_file(path: str, st: os.stat_result, state: Lockdown) -> None:
    mode = st.st_mode
    if stat.S_ISLNK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return
    if st.st_uid != 0:
        state.owners.add(st.st_uid)
        _chmod(path, mode, mode & ~0o077, state)
    elif mode & 0o002:  # others may have written it: hide it
        _chmod(path, mode, mode & ~0o077, state)
    elif mode & 0o020:
        _chmod(path, mode, mode & ~0o020, state)


def _chmod(path: str, old: int, new: int, state: Lockdown) -> None:
    if stat.S_IMODE(old) == stat.S_IMODE(new):
        return
    try:
        os.chmod(path, stat.S_IMODE(new), follow_symlinks=False)
    except NotImplementedError:
        os.chmod(path, stat.S_IMODE(new))
    except FileNotFoundError:
        return
    state.changed.append((path, old))


def _unescape(text: str) -> str:
    """Mount points in mountinfo escape space, tab, newline and backslash as octal."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 3 < len(text) and text[i + 1 : i + 4].isdigit():
            out.append(chr(int(text[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _init_name() -> str:
    try:
        with open("/proc/1/comm", encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return ""


def _passwd_uids() -> set[int]:
    uids = set()
    try:
        with open("/etc/passwd", encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split(":")
                if len(parts) > 2 and parts[2].isdigit():
                    uids.add(int(parts[2]))
    except OSError:
        pass
    return uids


# ---------------------------------------------------------------- System V IPC

_IPC_RMID = 0
_IPC_TABLES = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))


def remove_ipc(uid: int | None = None) -> int:
    """Remove the System V shared memory, queues and semaphores of ``uid`` (every non-root user if None)."""
    import ctypes  # only where IPC is removed (level 2): a level-1 verify starts without it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return 0
    removed = 0
    for table, call in _IPC_TABLES:
        for ipc_id, owners in _ipc_objects(table):
            if (uid is None and any(owners)) or (uid is not None and uid in owners):
                args = (ipc_id, 0, _IPC_RMID, None) if call == "semctl" else (ipc_id, _IPC_RMID, None)
                if getattr(libc, call)(*args) == 0:
                    removed += 1
    return removed


def _ipc_objects(table: str) -> list[tuple[int, set[int]]]:
    """(id, {owner uid, creator uid}) of every object in /proc/sysvipc/<table>."""
    try:
        with open(f"/proc/sysvipc/{table}", encoding="ascii", errors="replace") as f:
            header, *rows = f.read().splitlines()
    except (OSError, ValueError):
        return []
    names = header.split()
    found = []
    for row in rows:
        values = dict(zip(names, row.split()))
        try:
            ident = int(values["shmid" if table == "shm" else "msqid" if table == "msg" else "semid"])
            found.append((ident, {int(values["uid"]), int(values["cuid"])}))
        except (KeyError, ValueError):
            continue
    return found
