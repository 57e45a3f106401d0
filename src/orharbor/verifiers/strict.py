"""Strict checks for untrusted solution JSON: the verifiers' shared vocabulary.

An agent's answer is hostile input. These helpers accept exactly the declared
shape and raise :class:`Infeasible` with a message naming the offending place,
so every problem verifier reports errors the same way.
"""

from __future__ import annotations

import math
from typing import Any

#: Integers in a solution beyond this magnitude are rejected (no real schedule
#: or route needs them, and huge ints make arithmetic slow).
MAX_ABS_INT = 10**15


class Infeasible(ValueError):
    """The solution breaks a rule of the problem or has the wrong shape."""


def require_dict(value: Any, where: str, keys: tuple[str, ...]) -> dict[Any, Any]:
    """``value`` must be a JSON object holding exactly ``keys``."""
    if not isinstance(value, dict):
        raise Infeasible(f"{where}: expected a JSON object, got {type_name(value)}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise Infeasible(f"{where}: missing key {missing[0]!r}")
    extra = sorted(str(k) for k in value if k not in keys)
    if extra:
        raise Infeasible(f"{where}: unexpected key {extra[0]!r} (expected only {list(keys)})")
    return value


def require_list(value: Any, where: str, length: int | None = None) -> list[Any]:
    """``value`` must be a JSON array, of ``length`` items when given."""
    if not isinstance(value, list):
        raise Infeasible(f"{where}: expected a list, got {type_name(value)}")
    if length is not None and len(value) != length:
        raise Infeasible(f"{where}: expected {length} items, got {len(value)}")
    return value


def require_int(value: Any, where: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` must be a true integer (not bool, not float) within bounds."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise Infeasible(f"{where}: expected an integer, got {type_name(value)} {short(value)}")
    if abs(value) > MAX_ABS_INT:
        raise Infeasible(f"{where}: integer {short(value)} is out of range")
    if lo is not None and value < lo:
        raise Infeasible(f"{where}: {value} is below the minimum {lo}")
    if hi is not None and value > hi:
        raise Infeasible(f"{where}: {value} is above the maximum {hi}")
    return value


def require_number(value: Any, where: str) -> float:
    """``value`` must be a finite int or float (bool rejected)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Infeasible(f"{where}: expected a number, got {type_name(value)} {short(value)}")
    if isinstance(value, int) and abs(value) > MAX_ABS_INT:
        raise Infeasible(f"{where}: number {short(value)} is out of range")
    if isinstance(value, float) and not math.isfinite(value):
        raise Infeasible(f"{where}: {value} is not a finite number")
    return value


def type_name(value: Any) -> str:
    """JSON-flavoured name of a Python value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    return {int: "integer", float: "float", str: "string", list: "list", dict: "object"}.get(
        type(value), type(value).__name__
    )


def short(value: Any, limit: int = 40) -> str:
    """A bounded repr, so a huge value cannot flood a message."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return f"<integer with {len(str(abs(value))) if abs(value) < 10**4000 else 'over 4000'} digits>"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
