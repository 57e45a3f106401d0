"""Registry of problem classes: one folder each, one line here.

``get(name)`` returns the class's :class:`~orharbor.problem_modules.contract.ProblemClass`,
assembled from its folder: ``NAME``, ``TITLE`` and ``OBJECTIVE`` from the
folder's ``__init__.py``, the other members from ``generator.py``,
``formats.py``, ``baseline.py``, ``reference.py``, ``rules.py`` and
``verify.py`` (:data:`~orharbor.problem_modules.contract.HOMES`), and
``statement()`` from ``statement.md``. A folder that lacks a piece is refused
with an :class:`IncompleteProblem` naming it. ``verify.py`` holds ``evaluate``
and imports only the standard library and ``orharbor.verifiers``, because it is
copied into tasks; ``rules.py`` holds ``validate_instance``, the instance's own
rules, checked before a user's instance is solved
(:mod:`orharbor.problem_modules.checks`).
"""

from __future__ import annotations

import difflib
import importlib
from importlib import resources
from types import ModuleType, SimpleNamespace

from orharbor.errors import UserError
from orharbor.problem_modules.contract import HOMES, MEMBERS, ProblemClass

#: name -> importable package of the class folder. Adding a problem class means adding a
#: folder and one line here; a test may add a class from another package the same way.
PROBLEMS: dict[str, str] = {
    "jobshop": "orharbor.problem_modules.jobshop",
    "rcpsp": "orharbor.problem_modules.rcpsp",
    "wtardiness": "orharbor.problem_modules.wtardiness",
    "cvrp": "orharbor.problem_modules.cvrp",
    "vrptw": "orharbor.problem_modules.vrptw",
    "rostering": "orharbor.problem_modules.rostering",
    "timetabling": "orharbor.problem_modules.timetabling",
}

_ASSEMBLED: dict[tuple[str, str], ProblemClass] = {}


class UnknownProblem(UserError, KeyError):
    """A problem name that is not registered."""

    def __str__(self) -> str:
        return str(self.args[0])


class IncompleteProblem(ImportError):
    """A registered class folder that lacks a file or a member of the contract."""


class _Assembled(SimpleNamespace):
    """The contract members of one class folder, as attributes (plus ``package``, the folder's package)."""

    def __repr__(self) -> str:
        return f"<problem class {self.NAME!r} from {self.package}>"


def get(name: str) -> ProblemClass:
    """The problem class registered as ``name``, checked against the contract."""
    key = (name, _package(name))
    if key not in _ASSEMBLED:
        _ASSEMBLED[key] = _assemble(*key)
    return _ASSEMBLED[key]


def names() -> list[str]:
    """Registered problem names, in registry order."""
    return list(PROBLEMS)


def strong_solver(name: str):
    """The class's strongest open solver, ``strong`` of its folder's optional ``strong.py``; None without one.

    The build calls it for best-known values (same signature as ``reference``, plus ``hint=``); it is not
    part of the contract, and its solver (PyVRP for the routing classes) is imported only when it runs.
    """
    package = _package(name)
    try:
        module = importlib.import_module(f"{package}.strong")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.strong":
            raise  # a missing dependency inside the file, not a missing file
        return None
    return module.strong


def one_thread_portfolio(name: str) -> bool:
    """Whether a strengthened build runs the class's one-thread CP-SAT solves as CP-SAT's interleaved portfolio
    (``orharbor.datasets.build``): yes unless the folder's ``__init__`` sets ``ONE_THREAD_PORTFOLIO = False``."""
    return bool(getattr(importlib.import_module(_package(name)), "ONE_THREAD_PORTFOLIO", True))


def part(name: str, home: str) -> ModuleType:
    """One file of a class folder as a module: ``part("cvrp", "generator")``."""
    return importlib.import_module(f"{_package(name)}.{home}")


def read_statement(package: str) -> str:
    """The ``statement.md`` of a class folder: what agents are told."""
    return resources.files(package).joinpath("statement.md").read_text(encoding="utf-8")


def verifier_module_name(name: str) -> str:
    """Dotted name of a problem's standard-library verifier module."""
    return f"{_package(name)}.verify"


def _package(name: str) -> str:
    if name not in PROBLEMS:
        close = difflib.get_close_matches(name, PROBLEMS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownProblem(f"unknown problem {name!r}{hint} (known: {', '.join(PROBLEMS)})")
    return PROBLEMS[name]


def _assemble(name: str, package: str) -> ProblemClass:
    """Gather the contract members from the folder's files; IncompleteProblem names the first missing piece."""
    where = f"problem class {name!r} ({package})"
    members: dict = {}
    for home, wanted in HOMES.items():
        module = importlib.import_module(package) if home == "__init__" else _file(where, package, home, wanted)
        for member in wanted:
            if not hasattr(module, member):
                raise IncompleteProblem(f"{where}: {home}.py has no {member!r} (it holds {', '.join(wanted)})")
            members[member] = getattr(module, member)
    if not resources.files(package).joinpath("statement.md").is_file():
        raise IncompleteProblem(f"{where}: no statement.md (the problem statement handed to agents)")

    def statement() -> str:
        """The problem statement handed to agents (markdown)."""
        return read_statement(package)

    members["statement"] = statement
    if members["NAME"] != name:
        raise IncompleteProblem(f"{where}: NAME is {members['NAME']!r}, but the class is registered as {name!r}")
    return _Assembled(**{member: members[member] for member in MEMBERS}, package=package)


def _file(where: str, package: str, home: str, wanted: tuple[str, ...]) -> ModuleType:
    """The folder's ``home``.py as a module; IncompleteProblem if the folder has no such file."""
    try:
        return importlib.import_module(f"{package}.{home}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.{home}":
            raise  # a missing dependency inside the file, not a missing file
        raise IncompleteProblem(f"{where}: no {home}.py (it holds {', '.join(wanted)})") from None
