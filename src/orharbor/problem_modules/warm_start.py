"""Where a reference search starts: the class's own hint, or a given answer when that is no worse.

Every ``reference`` may be handed a solution (``hint=``, e.g. the best answer
of the class's ladder policies) so that it is never weaker than it. The given
hint is untrusted: the class's own ``evaluate`` checks it first, and anything
that makes ``evaluate`` raise (an infeasible answer, a list, a string, NaN)
refuses it, with a note in the meta record, never an exception. The start is
the better of the class's own hint and the accepted given one (the given one on
a tie: it is what the caller asked for), and ``meta["hint"]`` records it
(:meth:`Start.record`). Imports nothing of OR-Tools.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Callable

#: ``Start.origin`` of a given hint.
GIVEN = "given"
#: Longest reason quoted in a refusal note.
NOTE_CHARS = 300


@dataclass(frozen=True)
class Start:
    """A feasible solution a search starts from, its objective, where it came from, and why a given hint was not."""

    solution: Any
    objective: int | float
    origin: str
    note: str | None = None

    def record(self) -> dict:
        """``meta["hint"]``: ``{"from", "objective"}``, plus ``"note"`` when a given hint was refused."""
        out = {"from": self.origin, "objective": self.objective}
        if self.note:
            out["note"] = self.note
        return out


def given_start(instance: dict, evaluate: Callable, hint: Any) -> tuple[Start | None, str | None]:
    """``(start, note)``: the given ``hint`` as a :class:`Start` if ``evaluate`` accepts it, else ``None`` and why.

    ``(None, None)`` when no hint is given. The hint is copied, so the caller's
    object is never handed back or changed.
    """
    if hint is None:
        return None, None
    try:
        objective = evaluate(instance, hint)
    except Exception as exc:  # noqa: BLE001  (untrusted input: whatever evaluate raises refuses it)
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return None, f"the given hint was ignored: {reason[:NOTE_CHARS]}"
    return Start(copy.deepcopy(hint), objective, GIVEN), None


def better(own: Start, given: Start | None) -> Start:
    """The start of lower objective; the given one on a tie (and whichever exists when one is None)."""
    if given is None:
        return own
    if own is None or given.objective <= own.objective:
        return given
    return own


def choose(instance: dict, evaluate: Callable, own: Start, hint: Any) -> Start:
    """The start of a search whose own hint is ``own``: :func:`better` of it and the accepted ``hint``."""
    given, note = given_start(instance, evaluate, hint)
    return with_note(better(own, given), note)


def with_note(start: Start, note: str | None) -> Start:
    """``start`` recording ``note`` (why a given hint was not used), if there is one."""
    return replace(start, note=note) if note else start
