"""Registry of problem classes: one folder each, one line here.

A problem module exposes the contract of DESIGN.md under fixed names:
``NAME``, ``TITLE``, ``OBJECTIVE``, ``SIZES``, ``BASELINE``, ``GENERATOR_VERSION``, ``FORMATS``,
``generate``, ``read``, ``write``, ``evaluate``, ``baseline``, ``reference``,
``statement``, ``validate_instance``. Its ``verify.py`` holds ``evaluate`` and imports only the
standard library and ``orharbor.verifiers``, because it is copied into tasks; its
``rules.py`` holds ``validate_instance``, the instance's own rules, checked
before a user's instance is solved (:mod:`orharbor.problem_modules.checks`).
"""

from __future__ import annotations

import difflib
import importlib
from importlib import resources
from types import ModuleType

#: name -> importable module path. Adding a problem class means adding a folder
#: and one line here.
PROBLEMS: dict[str, str] = {
    "jobshop": "orharbor.problem_modules.jobshop",
    "rcpsp": "orharbor.problem_modules.rcpsp",
    "wtardiness": "orharbor.problem_modules.wtardiness",
    "cvrp": "orharbor.problem_modules.cvrp",
    "vrptw": "orharbor.problem_modules.vrptw",
    "rostering": "orharbor.problem_modules.rostering",
    "timetabling": "orharbor.problem_modules.timetabling",
}


class UnknownProblem(KeyError):
    """A problem name that is not registered."""

    def __str__(self) -> str:
        return str(self.args[0])


def get(name: str) -> ModuleType:
    """Import the problem module registered as ``name``."""
    if name not in PROBLEMS:
        close = difflib.get_close_matches(name, PROBLEMS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownProblem(f"unknown problem {name!r}{hint} (known: {', '.join(PROBLEMS)})")
    return importlib.import_module(PROBLEMS[name])


def names() -> list[str]:
    """Registered problem names, in registry order."""
    return list(PROBLEMS)


def read_statement(package: str) -> str:
    """The ``statement.md`` beside a problem module: what agents are told."""
    return resources.files(package).joinpath("statement.md").read_text(encoding="utf-8")


def verifier_module_name(name: str) -> str:
    """Dotted name of a problem's standard-library verifier module."""
    get(name)  # validates the name
    return f"{PROBLEMS[name]}.verify"
