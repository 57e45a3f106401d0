"""Where build-dataset's solves run: a pool of local worker processes (default), or a Dask cluster.

The engine (:mod:`orharbor.datasets.engine`) only needs :class:`SolvePool`.
:class:`LocalPool` is a handful of plain ``multiprocessing`` processes
(spawned, so no lock is inherited mid-use) that ignore SIGINT: Ctrl-C reaches
the parent alone, which then kills them. Killing a process never waits on it,
so an interrupt never hangs on a solve, however long its time limit. A worker
that dies mid-call (a native solver crash, say) is replaced and the call run
again, at most :data:`RETRIES` times, so one crash does not end a long build.
:class:`orharbor.datasets.dask_pool.DaskPool` sends the same calls to a Dask
cluster.
"""

from __future__ import annotations

import collections
import multiprocessing
import os
import signal
from multiprocessing.connection import Connection, wait
import sys
from typing import Any, Callable, Protocol, cast

#: How many times LocalPool runs a call again after the worker running it died.
RETRIES = 2


class SolvePool(Protocol):
    """Runs ``fn(*args)`` calls somewhere and hands back their results as they finish."""

    def submit(self, key: Any, fn: Callable, args: tuple, cores: int) -> None:
        """Queue ``fn(*args)``; ``cores`` is how many cores the call uses."""

    def completed(self, timeout_s: float) -> list[tuple[Any, Any, BaseException | None]]:
        """(key, result, error) of finished calls, waiting at most ``timeout_s`` s for the first."""

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

    def __init__(self, workers: int, retries: int = RETRIES, warn: Callable[[str], None] | None = None):
        self._context = multiprocessing.get_context("spawn")
        self._workers = [self._start() for _ in range(max(1, workers))]
        self._queue: collections.deque = collections.deque()
        self._busy: dict[Connection, tuple] = {}  # connection -> the call it runs (key, fn, args)
        self._retries = retries
        self._deaths: dict[Any, int] = {}  # key -> how many workers died running it
        self._warn = warn or (lambda message: print(message, file=sys.stderr, flush=True))

    def _start(self) -> tuple:
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_worker, args=(child,), daemon=True)
        process.start()
        child.close()
        return process, parent

    def _dispatch(self) -> None:
        for process, conn in self._workers:
            if not self._queue:
                return
            if conn not in self._busy:
                call = self._queue.popleft()
                conn.send(call)
                self._busy[conn] = call

    def submit(self, key: Any, fn: Callable, args: tuple, cores: int) -> None:
        self._queue.append((key, fn, args))
        self._dispatch()

    def completed(self, timeout_s: float) -> list[tuple[Any, Any, BaseException | None]]:
        done: list[tuple[Any, Any, BaseException | None]] = []
        # wait() returns some of the objects it is given: here, the busy workers' connections
        for conn in cast(list[Connection], wait(list(self._busy), timeout=timeout_s) if self._busy else []):
            call = self._busy.pop(conn)
            try:
                done.append(conn.recv())
            except (EOFError, OSError):
                self._replace(conn, call)
        self._dispatch()
        return done

    def _replace(self, conn: Connection, call: tuple) -> None:
        """The worker on ``conn`` died running ``call``: start another in its place and queue the call
        again (first, so its order is kept), or raise once it has killed ``1 + retries`` workers."""
        index = next(i for i, (_, c) in enumerate(self._workers) if c is conn)
        process = self._workers[index][0]
        process.join(timeout=5)
        code = process.exitcode
        try:
            how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
        except ValueError:
            how = f"signal {-code}"
        conn.close()
        self._workers[index] = self._start()
        key = call[0]
        self._deaths[key] = deaths = self._deaths.get(key, 0) + 1
        if deaths > self._retries:
            raise RuntimeError(
                f"a worker process died ({how}) while solving {key}, {deaths} time{'s' if deaths > 1 else ''} "
                "(out of memory, or a crash in the solver?)"
            )
        self._warn(
            f"a worker process died ({how}) while solving {key}: running it again ({deaths} of {self._retries} retries)"
        )
        self._queue.appendleft(call)

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
