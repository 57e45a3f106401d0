"""End every process of a non-root user inside the task container, and never root's.

In Harbor's shared mode the verifier runs in the agent's container, where the
agent may have left processes behind (one that rewrites the reward file, say).
Before it scores and again before it writes the reward, the verifier ends every
process that belongs to a user other than root: the agent's and the solver's.
Root's processes are the container's own: its PID 1 and the ``sleep infinity``
that Harbor's Docker environment keeps it alive with (killing that ``sleep``
stops the container, the verifier with it), and any daemon of the image. In
separate mode the verifier container holds no agent process, so this ends only
what the verifier's own solver runs left. Processes are chosen by owner, not by
state: a process whose main thread has exited shows as a zombie while its other
threads still run, so every process of a user is signalled through ``kill(-1)``
as that user as well as one by one. Only ever called inside a task container
(``test.sh`` passes ``--in-container``), never on a host.
"""

from __future__ import annotations

import os
import signal


def ancestors(pid: int) -> set[int]:
    """``pid`` and every process above it, read from /proc."""
    chain = set()
    while pid > 0 and pid not in chain:
        chain.add(pid)
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # field 4, after the command name
    return chain


def end_foreign_processes(rounds: int = 10) -> int:
    """SIGKILL every process of a non-root user (never ours or our ancestors); return how many were ended."""
    keep = ancestors(os.getpid())
    ended: set[int] = set()
    for _ in range(rounds):
        victims = {pid: uid for pid, uid in non_root_processes().items() if pid not in keep}
        if not victims:
            break
        for uid in set(victims.values()):
            kill_uid(uid)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        ended.update(victims)
        reap_children()
    return len(ended)


def non_root_processes() -> dict[int, int]:
    """pid -> a non-root uid it runs under, for every process that can still run code.

    A process counts as non-root if any of its real, effective, saved or
    filesystem uids is not 0. A zombie whose threads have all exited cannot run
    code and is left for its parent to reap; a zombie leader whose other threads
    still run is included.
    """
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return {}
    found = {}
    for name in names:
        status = _status(int(name))
        if status is None:
            continue
        uids = [int(u) for u in status.get("Uid", "").split()[:4] if u.isdigit()]
        owner = next((u for u in uids if u != 0), None)
        if owner is None:
            continue
        dead = status.get("State", "").startswith(("Z", "X")) and status.get("Threads", "1").strip() == "1"
        if not dead:
            found[int(name)] = owner
    return found


def kill_uid(uid: int) -> None:
    """SIGKILL every process ``uid`` may signal, from a child that has become ``uid`` (as root only)."""
    if uid == 0 or os.geteuid() != 0:
        return
    pid = os.fork()
    if pid == 0:  # child: become uid, then signal everything it may signal
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        except BaseException:
            pass
        os._exit(0)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _status(pid: int) -> dict[str, str] | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}


def reap_children() -> None:
    """Collect every exited child, so none lingers as a zombie."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
