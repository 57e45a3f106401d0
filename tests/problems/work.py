"""How much work a call does, counted in Python lines run, not in seconds (which a loaded machine stretches).

A module of its own, not conftest.py (see tests/quick_retail.py).
"""

from __future__ import annotations

import sys


class OverBudget(AssertionError):
    """The call ran more lines than its budget: it was stopped there."""


def lines_run(fn, *args, budget: int | None = None):
    """``(fn(*args), the number of Python lines it ran)``, every frame below it included.

    With ``budget``, the call is stopped with :class:`OverBudget` once it has run that many
    lines, so a call whose work would never end fails instead of hanging.
    """
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
            if budget is not None and count > budget:
                raise OverBudget(f"{getattr(fn, '__name__', fn)} ran more than {budget} lines")
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        result = fn(*args)
    finally:
        sys.settrace(previous)
    return result, count
