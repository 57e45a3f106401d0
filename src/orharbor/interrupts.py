"""Ctrl-C and SIGTERM, obeyed the same way from a command's first moment to its last.

Python turns SIGINT into ``KeyboardInterrupt`` from the start, but SIGTERM
kills at once: no cleanup, no message, exit -15. :func:`install` (the first
thing the ``orharbor`` script does, before any heavy import) routes SIGTERM
through whatever handles SIGINT at that moment, so every part of a command
(the import, argument checks, a build's solves, check's asyncio trials) treats
the two alike and the command line can exit ``128 + signal`` with one line.

:func:`deferred` holds both signals back across a few steps that must not be
cut in half (swapping a task folder into place); :func:`run_async` runs a
coroutine whose work is cancelled, cleanup included, by either signal.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Any, Coroutine, Iterator


class Interrupted(Exception):
    """Long work stopped by a signal: the message says what was kept; the command exits ``128 + signum``."""

    def __init__(self, message: str, signum: int):
        super().__init__(message)
        self.signum = signum


#: The signals a command stops on.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_received: list[int] = []
#: The stop signals that reached the handlers :func:`install` put in place (the ``orharbor`` script's own).
_arrived: list[int] = []
#: The unraisable hook :func:`install` found (anything but a lost stop goes on to it).
_hooks: list = []
#: How long after a lost KeyboardInterrupt its signal is sent again (the hook returns in microseconds).
REDELIVER_AFTER_S = 0.05


def install() -> None:
    """Route SIGTERM through the SIGINT handler of the moment, and note either signal's arrival (main thread only;
    idempotent). SIGINT keeps Python's default action, raising KeyboardInterrupt, with the arrival noted first."""
    if threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _on_int)
        signal.signal(signal.SIGTERM, _on_term)
        if sys.unraisablehook is not _unraisable:
            _hooks.append(sys.unraisablehook)
            sys.unraisablehook = _unraisable


def _unraisable(unraisable) -> None:
    """A stop signal's KeyboardInterrupt that Python could not raise (it landed in a weakref callback, such as
    importlib's module lock clean-up, or a ``__del__``) is delivered again, so it ends the command instead of
    being printed as "Exception ignored" while the command goes on; anything else goes to the usual hook.

    Sent from a timer thread, a moment later: a signal sent here would be handled here, inside the hook, where
    its exception is ignored too. The main thread handles it at its next step of Python, past this hook.
    """
    if issubclass(unraisable.exc_type, KeyboardInterrupt) and _arrived:
        again = threading.Timer(REDELIVER_AFTER_S, os.kill, (os.getpid(), _arrived[-1]))
        again.daemon = True
        again.start()
        return
    _hooks[0](unraisable)


def _on_int(signum: int, frame) -> None:
    _arrived.append(signum)
    note(signum)
    raise KeyboardInterrupt


def _on_term(signum: int, frame) -> None:
    _arrived.append(signum)
    note(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler not in (_on_term, _on_int):
        handler(signal.SIGINT, frame)  # a build's handler stops its solves
    else:
        raise KeyboardInterrupt


def stopped(exc: BaseException) -> bool:
    """Whether ``exc`` ends the command because the user stopped it.

    That is a stop signal's KeyboardInterrupt, an error raised *from* one, or
    any error once the script's handlers took a stop signal. A native
    extension turns an interrupt that lands during its initialisation
    (OR-Tools' pybind11 ``cp_model_helper`` calls back into Python to import)
    into ``ImportError: initialization failed``, raised from the
    KeyboardInterrupt; pydantic-core turns one that lands while it builds a
    validator into a ``SchemaError`` that carries neither cause nor context,
    only the words. Either is still the user stopping the command.
    """
    if _arrived:
        return True
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__
    return False


def note(signum: int) -> None:
    """Record a signal that a handler of its own took (so :func:`last` names it)."""
    _received.append(signum)


def last() -> int:
    """The most recent stop signal received (SIGINT when none was recorded: a plain KeyboardInterrupt)."""
    return _received[-1] if _received else int(signal.SIGINT)


def name(signum: int | None = None) -> str:
    return signal.Signals(last() if signum is None else signum).name


def exit_code(signum: int | None = None) -> int:
    """The shell's convention: 128 + the signal's number (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + (last() if signum is None else signum)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back inside the block; the first that arrived is acted on when it ends.

    For short steps that must finish once begun. The handlers are swapped for
    ones that only take note, and the noted signal is raised again once the
    old handlers are back. (Blocking the signals in this thread would not do:
    a signal sent to the process goes to any thread that does not block it,
    such as the BLAS threads numpy starts, and Python then runs the handler
    here anyway.) Outside the main thread it does nothing: signals are only
    ever handled there.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {}
    for signum in STOP_SIGNALS:
        handler = signal.getsignal(signum)
        if handler is not None:  # None: installed outside Python, left alone
            previous[signum] = signal.signal(signum, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if held:
            signal.raise_signal(held[0])  # as if it arrived now, to the handler it was meant for


def reporting_stop() -> None:
    """The command is saying how it stopped: from now on more stop signals are ignored, where the ``orharbor``
    script's handlers are in place (:func:`install`; not in a process that only calls the commands, such as a test
    runner). A second signal, or one sent again, between the line and the exit would otherwise raise a
    KeyboardInterrupt that no one catches, and Python then kills itself with SIGINT (exit -2)."""
    if sys.unraisablehook is _unraisable:
        hold_until_exit()


def hold_until_exit() -> None:
    """Ignore both signals from now on: the command is over, and one arriving during Python's shutdown
    (which restores the default actions) would turn its exit status into -2 or -15."""
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


def run_async(main: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(main)``, where SIGINT or SIGTERM cancels ``main``, then raises KeyboardInterrupt after its cleanup.

    asyncio does this for SIGINT alone, and only while SIGINT has Python's
    default handler; here both signals cancel, whatever the handlers were, and
    the handlers are restored afterwards.
    """
    import asyncio  # here: the script imports this module first, and asyncio takes a while

    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(main)
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}

    async def guarded() -> Any:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None  # a coroutine asyncio.run runs is a task
        stopped: list[int] = []

        def stop(signum: int) -> None:
            stopped.append(signum)
            note(signum)
            task.cancel()

        for signum in STOP_SIGNALS:
            loop.add_signal_handler(signum, stop, signum)
        try:
            return await main
        except asyncio.CancelledError:
            if stopped:
                raise KeyboardInterrupt from None
            raise
        finally:
            for signum in STOP_SIGNALS:
                loop.remove_signal_handler(signum)
                signal.signal(signum, previous[signum])

    try:
        return asyncio.run(guarded())
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
