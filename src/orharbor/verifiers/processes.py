"""End every process the verifier did not start (shared verifier mode).

In Harbor's shared mode the verifier runs in the agent's container, where the
agent may have left processes behind (one that rewrites the reward file, say).
Before it scores and again before it writes the reward, the verifier kills every
process except itself, its ancestors and PID 1. Only ever called inside a task
container (``test.sh`` passes ``--end-foreign-processes``), never on a host.
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
    """SIGKILL every process but ours, our ancestors and PID 1; return how many were ended."""
    keep = ancestors(os.getpid()) | {1}
    ended = 0
    for _ in range(rounds):
        victims = [pid for pid in _pids() if pid not in keep]
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
                ended += 1
            except (ProcessLookupError, PermissionError):
                pass
        reap_children()
    return ended


def _pids() -> list[int]:
    """Live (non-zombie) process ids."""
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    live = []
    for name in names:
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            live.append(int(name))
    return live


def reap_children() -> None:
    """Collect every exited child, so none lingers as a zombie."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
