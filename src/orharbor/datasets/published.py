"""Published benchmark instances as dataset rows, with their best known values.

A problem class offers its published sets in an optional ``published.py`` in
its folder: ``SETS = {name: function}``, each function returning the set's
instances in order as dicts with ``name``, ``size``, ``instance``, ``source``
and ``best_known`` in the row's shape (``value``, ``source``, ``bound``: see
:func:`orharbor.datasets.rows.normalise_best_known`).
Only sets that orharbor can make exactly, or may redistribute, belong there.
"""

from __future__ import annotations

import importlib
from functools import cache

from orharbor import problem_modules
from orharbor.datasets.build import Strength, solve_instance
from orharbor.errors import UserError


class UnknownPublishedSet(UserError):
    """A published set or instance name the class does not offer."""


def sets(problem: str) -> dict:
    """The published sets of a class: name -> function (none if its folder has no ``published.py``)."""
    package = problem_modules.PROBLEMS[problem]
    try:
        module = importlib.import_module(f"{package}.published")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.published":
            raise
        return {}
    return dict(module.SETS)


@cache
def published_set(problem: str, name: str) -> dict[str, dict]:
    """The instances of one set, by instance name, in the set's order."""
    offered = sets(problem)
    if name not in offered:
        known = ", ".join(offered) or "none"
        raise UnknownPublishedSet(f"{problem} has no published set {name!r} (its sets: {known})")
    return {entry["name"]: entry for entry in offered[name]()}


def expand_names(problem: str, set_name: str, names: list[str] | None) -> list[str]:
    """Instance names of a set: all of them for None, else each name or ``first-last`` range, checked."""
    entries = list(published_set(problem, set_name))
    if names is None:
        return entries
    out = []
    for item in names:
        first, _, last = item.partition("-")
        for end in (first, last or first):
            if end not in entries:
                raise UnknownPublishedSet(
                    f"{problem} set {set_name!r} has no instance {end!r} (it has {entries[0]} to {entries[-1]})"
                )
        out.extend(entries[entries.index(first) : entries.index(last or first) + 1])
    return out


def published_rows(problem: str, set_name: str, names: list[str], reference_time_limit_s: float) -> list[dict]:
    """Level-1 row skeletons of the named instances, each with its explicit instance, source and best known bounds."""
    module = problem_modules.get(problem)
    entries = published_set(problem, set_name)
    rows = []
    for name in names:
        entry = entries[name]
        rows.append(
            {
                "id": f"{problem}-{name}-l1",
                "problem": problem,
                "size": entry["size"],
                "level": 1,
                "generator_version": module.GENERATOR_VERSION,
                "instance": entry["instance"],
                "source": entry["source"],
                "best_known": entry["best_known"],
                "reference_time_limit_s": reference_time_limit_s,
                "source_name": name,
            }
        )
    return rows


def solve_published(
    problem: str, set_name: str, name: str, time_limit_s: float, workers: int, strength: Strength = Strength()
) -> dict:
    """:func:`~orharbor.datasets.build.solve_instance` of a set's named instance (one solve of a build), its
    literature value kept as the best known when ``strength`` is on."""
    entry = published_set(problem, set_name)[name]
    return solve_instance(
        problem,
        entry["instance"],
        time_limit_s,
        workers,
        strength=strength,
        literature=entry["best_known"] if strength.on else None,
    )
