"""Checks an instance must pass before it is solved: the shared vocabulary of every ``rules.py``.

Generated and shipped instances are trusted, but ``orharbor solve`` also takes
a user's file, and a negative duration or an unknown machine would otherwise
reach the solver, which answers nonsense (or a fallback) without saying why.
Each problem's ``rules.validate_instance`` checks the shape, the types, the
ranges and the cross-references its statement promises, and the conditions
without which no feasible answer can exist; the first broken rule is an
:class:`InvalidInstance` naming the field.
"""

from __future__ import annotations

import math
from typing import Any

from orharbor.verifiers.strict import Infeasible, require_list, short, type_name


class InvalidInstance(ValueError):
    """An instance that breaks a rule of its problem class; the message names the field."""


def instance_object(instance: Any, problem: str, keys: tuple[str, ...]) -> dict:
    """``instance`` must be a JSON object holding ``keys`` (other keys are allowed and ignored)."""
    if isinstance(instance, list):
        raise InvalidInstance(f"expected one {problem} instance (a JSON object), got a list of {len(instance)}")
    return _object(
        instance,
        keys,
        f"expected a {problem} instance (a JSON object), got {type_name(instance)}",
        lambda key: f"missing key {key!r} (a {problem} instance has {', '.join(keys)})",
    )


def integer(value: Any, where: str, lo: int | None = None, hi: int | None = None) -> int:
    """A true integer (not bool, not float) within ``[lo, hi]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInstance(f"{where}: expected an integer, got {type_name(value)} {short(value)}")
    return _within(value, where, lo, hi)


def number(value: Any, where: str, lo: float | None = None) -> float:
    """A finite int or float (not bool), at least ``lo``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInstance(f"{where}: expected a finite number, got {type_name(value)} {short(value)}")
    return _within(value, where, lo, None)


def _within(value, where: str, lo, hi):
    """``value`` unless it lies below ``lo`` or above ``hi`` (either may be None)."""
    if lo is not None and value < lo:
        raise InvalidInstance(f"{where}: {short(value)} is below the minimum {lo}")
    if hi is not None and value > hi:
        raise InvalidInstance(f"{where}: {short(value)} is above the maximum {hi}")
    return value


def array(value: Any, where: str, length: int | None = None) -> list:
    """A JSON array, of ``length`` items when given: the verifiers' rule, broken as InvalidInstance."""
    try:
        return require_list(value, where, length)
    except Infeasible as exc:
        raise InvalidInstance(str(exc)) from None


def integers(
    value: Any, where: str, length: int | None = None, lo: int | None = None, hi: int | None = None
) -> list[int]:
    """A list of integers within ``[lo, hi]``."""
    for i, item in enumerate(array(value, where, length)):
        integer(item, f"{where}[{i}]", lo, hi)
    return value


def record(value: Any, where: str, keys: tuple[str, ...]) -> dict:
    """A JSON object holding ``keys``."""
    return _object(
        value,
        keys,
        f"{where}: expected a JSON object, got {type_name(value)}",
        lambda key: f"{where}: missing key {key!r}",
    )


def _object(value: Any, keys: tuple[str, ...], not_an_object: str, missing) -> dict:
    """``value`` if a JSON object holding ``keys``, else InvalidInstance: ``not_an_object`` or ``missing(key)``."""
    if not isinstance(value, dict):
        raise InvalidInstance(not_an_object)
    absent = [key for key in keys if key not in value]
    if absent:
        raise InvalidInstance(missing(absent[0]))
    return value


def text(value: Any, where: str) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value:
        raise InvalidInstance(f"{where}: expected a non-empty string, got {type_name(value)} {short(value)}")
    return value


def unique_ids(items: list[dict], where: str) -> dict[str, int]:
    """id -> index of a list of records with distinct string ids."""
    index: dict[str, int] = {}
    for i, item in enumerate(items):
        key = text(item["id"], f"{where}[{i}].id")
        if key in index:
            raise InvalidInstance(f"{where}[{i}].id: {short(key)} is also the id of {where}[{index[key]}]")
        index[key] = i
    return index


def known(value: Any, where: str, ids: dict[str, int], what: str) -> str:
    """The id of a known ``what``."""
    if not isinstance(value, str) or value not in ids:
        raise InvalidInstance(f"{where}: {short(value)} is not the id of a {what} of the instance")
    return value
