"""Where build-dataset's solves run: a pool of local worker processes (default), or a Dask cluster.

The engine (:mod:`orharbor.datasets.engine`) only needs :class:`SolvePool`.
:class:`LocalPool` is a handful of plain ``multiprocessing`` processes
(spawned, so no lock is inherited mid-use) that ignore SIGINT: Ctrl-C reaches
the parent alone, which then kills them. Killing a process never waits on it,
so an interrupt never hangs on a solve, however long its time limit.
:class:`orharbor.datasets.dask_pool.DaskPool` sends the same calls to a Dask
cluster.
"""

from __future__ import annotations

import collections
import multiprocessing
import os
import signal
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Protocol


class SolvePool(Protocol):
    """Runs ``fn(*args)`` calls somewhere and hands back their results as they finish."""

    def submit(self, key: Any, fn: Callable, args: tuple, cores: int) -> None:
        """Queue ``fn(*args)``; ``cores`` is how many cores the call uses."""

    def completed(self, timeout: float) -> list[tuple[Any, Any, BaseException | None]]:
        """(key, result, error) of finished calls, waiting at most ``timeout`` s for the first."""

    def pending(self) -> int:
        """Calls submitted and not yet handed back."""

    def close(self) -> None:
        """Shut down after every call completed."""

    def kill(self) -> None:
        """Cancel queued calls and end running ones at once; never hangs, never raises."""


def _worker(conn) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    while True:
        try:
            item = conn.recv()
        except EOFError:
            return
        if item is None:
            return
        key, fn, args = item
        try:
            conn.send((key, fn(*args), None))
        except BaseException as exc:  # noqa: BLE001  (handed back to the parent, which decides)
            conn.send((key, None, RuntimeError(f"{type(exc).__name__}: {exc}")))


class LocalPool:
    """``workers`` spawned processes, each running one call at a time, fed through a pipe of its own.

    Pipes rather than shared queues: a killed worker cannot leave a lock held
    or a semaphore behind, so the parent never blocks on one.
    """

    def __init__(self, workers: int):
        context = multiprocessing.get_context("spawn")
        self._workers = []
        for _ in range(max(1, workers)):
            parent, child = context.Pipe()
            process = context.Process(target=_worker, args=(child,), daemon=True)
            process.start()
            child.close()
            self._workers.append((process, parent))
        self._queue: collections.deque = collections.deque()
        self._busy: dict[Connection, Any] = {}  # connection -> key of the call it runs

    def _dispatch(self) -> None:
        for process, conn in self._workers:
            if not self._queue:
                return
            if conn not in self._busy:
                key, fn, args = self._queue.popleft()
                conn.send((key, fn, args))
                self._busy[conn] = key

    def submit(self, key: Any, fn: Callable, args: tuple, cores: int) -> None:
        self._queue.append((key, fn, args))
        self._dispatch()

    def completed(self, timeout: float) -> list[tuple[Any, Any, BaseException | None]]:
        done = []
        for conn in wait(list(self._busy), timeout=timeout) if self._busy else []:
            key = self._busy.pop(conn)
            try:
                done.append(conn.recv())
            except (EOFError, OSError):
                raise RuntimeError(f"a worker process died while solving {key} (out of memory?)") from None
        self._dispatch()
        return done

    def pending(self) -> int:
        return len(self._queue) + len(self._busy)

    def close(self) -> None:
        for process, conn in self._workers:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
        for process, _ in self._workers:
            process.join(timeout=5)
        self.kill()

    def kill(self) -> None:
        self._queue.clear()
        for process, _ in self._workers:
            try:
                if process.is_alive():
                    os.kill(process.pid, signal.SIGKILL)
            except (OSError, ValueError, AttributeError):
                pass
        for process, conn in self._workers:
            try:
                process.join(timeout=2)
                conn.close()
            except (OSError, ValueError, AssertionError):
                pass
        self._busy.clear()
