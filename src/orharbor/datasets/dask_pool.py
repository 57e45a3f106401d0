"""DaskPool: run build-dataset solves on an existing Dask cluster.

``orharbor build-dataset`` normally solves its instances in a local process
pool, which caps a build at one machine's cores.  :class:`DaskPool` offers the
same small pool interface as :mod:`orharbor.datasets.pools` (``submit``,
``completed``, ``pending``, ``close``, ``kill``) on top of a running Dask
cluster, so one build can spread over many machines.  Any cluster that gives
a scheduler address will do: a plain ``dask scheduler`` plus ``dask worker``
processes started by hand, SLURM/PBS/SGE jobs from dask-jobqueue, a Kubernetes
deployment, a cloud cluster manager, ...

Workers that declare the abstract resource ``cores`` get every solve
submitted with ``resources={"cores": N}``, N being the CP-SAT threads it runs
(``--solver-workers``), so Dask never runs more solver threads on a machine
than the cores it was told about.  On a 16-core machine with
``--solver-workers 2``::

    dask worker tcp://scheduler:8786 --nthreads 8 --resources "cores=16"

runs 8 two-thread solves at a time.  When no worker declares ``cores`` (a
plain ``dask worker``, a ``LocalCluster``, dask-jobqueue's defaults), each
solve takes one of a worker's threads instead, and the pool says so once
through ``note``.  A solve needing more ``cores`` (or, without them, more
threads) than any worker has would wait forever or overload it, so the pool
checks the workers before the first submit and fails with a clear message.

The submitted functions are module-level functions of orharbor, pickled by
reference, so the workers need the same orharbor (and OR-Tools) installed.

Cancelling in Dask only drops queued calls: a call already running in a worker
thread cannot be interrupted, and it would keep its ``cores`` until its own
time limit.  So ``kill()`` cancels everything and then restarts (through their
nanny, as ``dask worker`` runs by default) only the workers still running one
of this pool's calls; they rejoin the cluster a few seconds later.  Pass
``restart_on_kill=False`` on a cluster shared with other work, where a restart
would also end the other work of those workers.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import threading
import time
import uuid
from concurrent.futures import CancelledError
from typing import Any, Callable

from orharbor.errors import UserError

__all__ = ["DaskPool", "DaskUnavailable"]

_RESOURCE = "cores"


class DaskUnavailable(UserError):
    """A Dask cluster this build cannot use: unreachable, no workers, or none with enough ``cores`` or threads."""


def _one_line(exc: BaseException) -> str:
    """A short one-sentence description of ``exc`` (no traceback)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text and text[0] else type(exc).__name__


def _scheduler_address(address: str) -> str:
    """``address`` itself, or the address inside the scheduler file ``address``."""
    if os.path.isfile(address):
        with open(address, encoding="utf-8") as f:
            found = json.load(f).get("address")
        if not isinstance(found, str) or not found:
            raise DaskUnavailable(f"the scheduler file {address} holds no address")
        return found
    return address


def _probe(address: str, timeout_s: float) -> None:
    """Open and close one connection to ``address`` (handshake included), or raise.

    Done before creating the Client: a Client whose start fails with anything
    but a connection timeout (bad scheme, a server that is not Dask, ...) is
    left half-open and stalls the interpreter's exit.  Runs in its own thread
    so it works even when the caller already runs an event loop.
    """
    import asyncio

    from distributed.comm import connect
    from distributed.security import Security

    errors: list[BaseException] = []

    async def _go() -> None:
        comm = await connect(address, timeout=timeout_s, **Security().get_connection_args("client"))
        await comm.close()

    def _run() -> None:
        try:
            asyncio.run(_go())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=_run, name="DaskPool-probe", daemon=True)
    thread.start()
    thread.join(timeout_s + 5.0)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {timeout_s:g} s")
    if errors:
        exc = errors[0]
        if isinstance(exc, (MemoryError, EOFError)) or type(exc).__name__ in ("CommClosedError", "UnpicklingError"):
            raise OSError(f"the server there does not speak the Dask protocol ({_one_line(exc)})")
        raise exc


def _running_calls(prefix: str, dask_worker=None) -> int:
    """On a worker: how many calls whose key starts with ``prefix`` still run there.

    A cancelled call keeps running (state ``cancelled``, previously executing)
    until its function returns; it still counts here.
    """
    state = dask_worker.state
    return sum(
        1
        for ts in state.tasks.values()
        if isinstance(ts.key, str)
        and ts.key.startswith(prefix)
        and (
            ts.state in ("executing", "long-running")
            or (ts.state in ("cancelled", "resumed") and ts.previous in ("executing", "long-running"))
        )
    )


def _worker_hint(address: str, cores: int) -> str:
    target = f"--scheduler-file {address}" if os.path.isfile(address) else address
    return (
        f'start workers with `dask worker {target} --nthreads T --resources "{_RESOURCE}=N"` '
        f"(N = CPU cores each worker may use; every solve asks for --solver-workers of them, "
        f"here {cores}, so a 16-core worker started with {_RESOURCE}=16 runs 8 two-thread solves "
        f"and needs --nthreads 8)"
    )


def _threads(workers: dict) -> list[int]:
    return [int(w.get("nthreads") or 0) for w in workers.values()]


def _threads_note(address: str, workers: dict, cores: int) -> str:
    """The one line saying that solves hold worker threads, not ``cores``."""
    text = (
        f"no worker of the Dask cluster at {address} declares the resource `{_RESOURCE}`: each solve "
        f"takes one worker thread ({len(workers)} worker(s), {sum(_threads(workers))} thread(s) in all)"
    )
    if cores > 1:
        text += (
            f"; a solve runs its {cores} CP-SAT threads in that one thread, so a busy worker runs "
            f"{cores} times as many solver threads as it has (start workers with "
            f'--resources "{_RESOURCE}=N" to pack them)'
        )
    return text


def _check_threads(address: str, workers: dict, cores: int) -> None:
    """Refuse solves of more threads than any worker has, as ``cores`` would be refused."""
    most = max(_threads(workers), default=0)
    if most < cores:
        raise DaskUnavailable(
            f"no worker of the Dask cluster at {address} declares the resource `{_RESOURCE}` "
            f"and none has the {cores} threads a solve runs with --solver-workers {cores} "
            f"({len(workers)} worker(s), the largest has {most}); pass --solver-workers "
            f"{max(most, 1)} or less, or {_worker_hint(address, cores)}"
        )


class DaskPool:
    """The build engine's solve pool on a running Dask cluster.

    ``address`` is the scheduler address (``tcp://host:8786``, ``tls://...``)
    or the path of a scheduler file written by ``dask scheduler
    --scheduler-file``.  Connecting waits at most ``connect_timeout_s`` seconds;
    failure raises :class:`DaskUnavailable` with a one-sentence reason.  The
    workers are checked on the first :meth:`submit` (or by an explicit
    :meth:`check_resources`).  ``restart_on_kill`` lets :meth:`kill` restart
    the workers still running this pool's calls (see the module docstring).
    ``note`` gets one line when the pool falls back to worker threads.
    """

    def __init__(
        self,
        address: str,
        connect_timeout_s: float = 10.0,
        *,
        restart_on_kill: bool = True,
        note: Callable[[str], None] = lambda message: None,
    ):
        from distributed import Client

        if not isinstance(address, str) or not address.strip():
            raise DaskUnavailable(f"invalid Dask scheduler address {address!r}")
        self.address = address.strip()
        self.connect_timeout_s = float(connect_timeout_s)
        try:
            target = _scheduler_address(self.address)
            _probe(target, self.connect_timeout_s)
            self._client = Client(target, timeout=self.connect_timeout_s, set_as_default=False)
        except Exception as exc:
            raise DaskUnavailable(f"cannot reach the Dask scheduler at {self.address}: {_one_line(exc)}") from None
        self.restart_on_kill = bool(restart_on_kill)
        self._key_prefix = f"orharbor-{uuid.uuid4().hex[:12]}-"  # every Dask key of this pool
        self._counter = itertools.count()
        self._futures: dict[str, tuple[object, Any]] = {}  # dask key -> (caller's key, Future)
        self._done: queue.SimpleQueue = queue.SimpleQueue()  # dask keys whose future finished
        self._lock = threading.Lock()
        self._checked_cores = 0  # largest `cores` request already known to fit a worker
        self._by_resource: bool | None = None  # solves hold `cores` (True) or one worker thread (False)
        self._note = note
        self._closed = False

    # -- checks -----------------------------------------------------------

    def check_resources(self, cores: int) -> None:
        """Raise DaskUnavailable unless some worker can run a solve of ``cores`` threads.

        Decided on the first call: if any worker declares the resource
        ``cores``, solves hold that many of them; if none does, each solve takes
        one worker thread and needs a worker of at least ``cores`` threads.
        Waits up to ``connect_timeout_s`` seconds for the first worker to join.
        """
        cores = int(cores)
        if cores < 1:
            raise ValueError(f"cores must be >= 1, got {cores}")
        if cores <= self._checked_cores:
            return
        try:
            self._client.wait_for_workers(1, timeout=self.connect_timeout_s)
        except Exception:
            hint = _worker_hint(self.address, cores)
            raise DaskUnavailable(
                f"the Dask scheduler at {self.address} has no workers (waited {self.connect_timeout_s:g} s); {hint}"
            ) from None
        try:
            workers = self._client.scheduler_info(n_workers=-1).get("workers", {})
        except Exception as exc:
            raise DaskUnavailable(f"cannot query the Dask scheduler at {self.address}: {_one_line(exc)}") from None
        best = max((float((w.get("resources") or {}).get(_RESOURCE, 0)) for w in workers.values()), default=0.0)
        if self._by_resource is None:
            self._by_resource = best > 0
            if not self._by_resource:
                self._note(_threads_note(self.address, workers, cores))
        if not self._by_resource:
            _check_threads(self.address, workers, cores)
        elif best < cores:
            raise DaskUnavailable(
                f"no worker of the Dask cluster at {self.address} can run a solve that needs "
                f"{cores} {_RESOURCE} ({len(workers)} worker(s), the largest has "
                f"{_RESOURCE}={best:g}); {_worker_hint(self.address, cores)}"
            )
        self._checked_cores = cores

    # -- the pool interface -------------------------------------------------

    def submit(self, key: object, fn: Callable, args: tuple, cores: int) -> None:
        """Queue ``fn(*args)`` on the cluster, holding ``cores`` of a worker's cores."""
        if self._closed:
            raise RuntimeError("DaskPool is closed")
        self.check_resources(cores)
        name = getattr(fn, "__name__", "call").strip("_") or "call"
        dask_key = f"{self._key_prefix}{name}-{next(self._counter)}"
        future = self._client.submit(
            fn, *args, key=dask_key, pure=False, resources={_RESOURCE: int(cores)} if self._by_resource else None
        )
        with self._lock:
            self._futures[dask_key] = (key, future)
        future.add_done_callback(self._on_done)

    def _on_done(self, future) -> None:  # runs in distributed's callback thread
        self._done.put(future.key)

    def completed(self, timeout_s: float) -> list[tuple[object, object, BaseException | None]]:
        """``(key, result, error)`` of finished calls; waits at most ``timeout_s`` s for the first."""
        out: list[tuple[object, object, BaseException | None]] = []
        deadline = time.monotonic() + max(0.0, float(timeout_s))
        while not out:
            try:
                first = self._done.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return out
            ready = [first]
            while True:
                try:
                    ready.append(self._done.get_nowait())
                except queue.Empty:
                    break
            for dask_key in ready:
                item = self._collect(dask_key)
                if item is not None:
                    out.append(item)
            if time.monotonic() >= deadline:
                break
        return out

    def _collect(self, dask_key: str) -> tuple[object, object, BaseException | None] | None:
        with self._lock:
            entry = self._futures.get(dask_key)
        if entry is None:  # already returned (duplicate notification)
            return None
        key, future = entry
        status = future.status
        if status == "finished":
            try:
                result, error = future.result(timeout=max(30.0, self.connect_timeout_s)), None
            except BaseException as exc:  # the result was lost on the way (worker died, ...)
                result, error = None, exc
        elif status == "error":
            try:
                result, error = None, future.exception(timeout=self.connect_timeout_s)
            except BaseException as exc:
                result, error = None, exc
            if error is None:
                error = RuntimeError(f"Dask call {dask_key} failed without an exception")
        elif status in ("cancelled", "lost"):
            reason = ""
            try:
                raised = future.exception(timeout=0)
                reason = f": {_one_line(raised)}" if raised is not None else ""
            except BaseException:
                pass
            result, error = None, CancelledError(f"Dask call {dask_key} was {status}{reason}")
        else:  # back to pending (e.g. recomputation after a lost worker): wait for the next notice
            future.add_done_callback(self._on_done)
            return None
        with self._lock:
            self._futures.pop(dask_key, None)
        return key, result, error

    def pending(self) -> int:
        """Calls submitted and not yet returned by :meth:`completed`."""
        with self._lock:
            return len(self._futures)

    def close(self) -> None:
        """Disconnect from the cluster (the cluster itself keeps running)."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            self._futures.clear()
        self._client.close()

    def kill(self) -> None:
        """Cancel every pending call and disconnect; never hangs, never raises.

        Queued calls are dropped.  Dask cannot interrupt a call already running
        in a worker thread, so with ``restart_on_kill`` (the default) the workers
        still running one of this pool's calls are restarted through their nanny,
        which ends the solves and frees their cores; that also ends whatever
        else those workers were running.  Without it the running solves go on to
        their time limit and their results are dropped.  Returns within ~10 s.
        """
        self._closed = True
        with self._lock:
            futures = [future for _, future in self._futures.values()]
            self._futures.clear()
        client, prefix, restart = self._client, self._key_prefix, self.restart_on_kill
        started = time.monotonic()

        def _shutdown() -> None:
            if getattr(client, "status", None) != "running":  # scheduler lost: nothing left to cancel
                try:
                    client.close(timeout=2)
                except BaseException:
                    pass
                return
            try:
                if futures:
                    client.cancel(futures, force=True, reason="orharbor DaskPool.kill")
            except BaseException:
                pass
            if restart and futures:
                try:
                    busy = client.run(_running_calls, prefix, on_error="ignore")
                    workers = sorted(addr for addr, n in busy.items() if isinstance(n, int) and n > 0)
                    if workers:
                        left = 8.5 - (time.monotonic() - started)
                        if left > 0.5:
                            client.restart_workers(workers, timeout=left, raise_for_error=False)
                except BaseException:
                    pass
            try:
                client.close(timeout=max(0.5, min(5.0, 9.5 - (time.monotonic() - started))))
            except BaseException:
                pass

        # Bound the whole shutdown even if the scheduler is gone or the client's
        # event loop is stuck: do it in a daemon thread and stop waiting after 10 s.
        try:
            thread = threading.Thread(target=_shutdown, name="DaskPool-kill", daemon=True)
            thread.start()
            thread.join(max(0.0, 10.0 - (time.monotonic() - started)))
        except BaseException:
            pass

    def __enter__(self) -> DaskPool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.kill() if exc_info[0] is not None else self.close()

    def __repr__(self) -> str:
        return f"DaskPool({self.address!r}, pending={self.pending()})"
