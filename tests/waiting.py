"""Waiting for a condition instead of sleeping a fixed time: a sleep is a race on a loaded machine.

A module of its own, not conftest.py (see quick_retail.py). The timeout is a safety net against a
condition that never comes, not a measure of speed: it is far above what any machine needs.
"""

from __future__ import annotations

import asyncio
import time


def wait_until(condition, what: str, timeout: float = 120.0) -> None:
    """Return once ``condition()`` is true; fail naming ``what`` if it is not after ``timeout`` seconds."""
    deadline, pause = time.monotonic() + timeout, 0.005
    while not condition():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(pause)
        pause = min(2 * pause, 0.05)  # quick for what comes at once; a scan of /proc polled every 5 ms took a core


async def wait_until_async(condition, what: str, timeout: float = 120.0) -> None:
    """:func:`wait_until` inside an event loop: ``await condition()`` when it returns an awaitable."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return
        assert time.monotonic() < deadline, f"{what} never happened"
        await asyncio.sleep(0.02)


def catches(signum: int, pid: int | str = "self") -> bool:
    """Whether process ``pid`` has a handler of its own for ``signum``, as the kernel sees it (``SigCgt``).

    Python's ``signal.getsignal`` shows only what Python installed; a library can change the real
    disposition behind its back. A process that has already ended counts as catching (nothing to wait for).
    """
    try:
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        return True
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(caught & (1 << (signum - 1)))
