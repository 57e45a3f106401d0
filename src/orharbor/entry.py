"""The ``orharbor`` script: signal handling first, then the (slower to import) command line.

A Ctrl-C or SIGTERM that arrives while Python is still importing click,
numpy or OR-Tools gets the same answer as one during the work: one line and
exit 130 or 143 (see :mod:`orharbor.interrupts`). ``python -m orharbor`` and
the module entries (``python -m orharbor.build_dataset``) start the same way.
"""

from __future__ import annotations

import sys
from typing import Callable

from orharbor import interrupts


def start(load: Callable[[], Callable[[], object]]) -> None:
    """Install the signal handling, then ``load()`` the command (the slow imports) and run it."""
    interrupts.install()
    try:
        command = load()
    except (KeyboardInterrupt, Exception) as exc:  # Exception: a native module's ImportError raised from the interrupt
        if not interrupts.stopped(exc):
            raise
        interrupts.reporting_stop()
        print(f"interrupted ({interrupts.name()}) while starting; nothing was done", file=sys.stderr)
        sys.exit(interrupts.exit_code())
    try:
        command()
    finally:
        interrupts.hold_until_exit()


def _command_line() -> Callable[[], object]:
    from orharbor.cli import main as command_line

    return command_line


def main() -> None:
    start(_command_line)
