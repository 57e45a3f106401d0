"""The ``orharbor`` script: signal handling first, then the (slower to import) command line.

A Ctrl-C or SIGTERM that arrives while Python is still importing click,
numpy or OR-Tools gets the same answer as one during the work: one line and
exit 130 or 143 (see :mod:`orharbor.interrupts`).
"""

from __future__ import annotations

import sys

from orharbor import interrupts


def main() -> None:
    interrupts.install()
    try:
        from orharbor.cli import main as command_line
    except KeyboardInterrupt:
        print(f"interrupted ({interrupts.name()}) while starting; nothing was done", file=sys.stderr)
        sys.exit(interrupts.exit_code())
    command_line()
