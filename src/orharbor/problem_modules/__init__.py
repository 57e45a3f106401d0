"""Registry of problem classes: one folder each, one line here.

Each class folder's ``__init__.py`` builds its
:class:`~orharbor.problem_modules.contract.Problem`, ``PROBLEM``, from explicit
imports of its files' members: ``NAME``, ``TITLE`` and ``OBJECTIVE`` of its
own, the others from ``generator.py``, ``formats.py``, ``baseline.py``,
``reference.py``, ``rules.py`` and ``verify.py``
(:data:`~orharbor.problem_modules.contract.HOMES`); ``statement()`` reads its
``statement.md``. ``get(name)`` imports the folder and returns that
``PROBLEM``, checked against the contract: a folder that lacks a file of
:data:`~orharbor.problem_modules.contract.FILES` or a member, or whose
``PROBLEM`` holds a member other than its file's, is refused with an
:class:`IncompleteProblem` naming the piece. ``verify.py`` holds ``evaluate``
and imports only the standard library and ``orharbor.verifiers``, because it is
copied into tasks (with empty ``__init__.py`` files, :mod:`orharbor.exporter.bundle`);
``rules.py`` holds ``validate_instance``, the instance's own rules, checked
before a user's instance is solved (:mod:`orharbor.problem_modules.checks`).
OR-Tools and PyVRP are imported inside the solvers only, so loading a class
never loads them.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from importlib import resources
from types import ModuleType

from orharbor.errors import UserError
from orharbor.problem_modules.contract import FILES, HOMES, Problem

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

_CHECKED: dict[tuple[str, str], Problem] = {}


class UnknownProblem(UserError, KeyError):
    """A problem name that is not registered."""

    def __str__(self) -> str:
        return str(self.args[0])


class IncompleteProblem(ImportError):
    """A registered class folder that lacks a file or a member of the contract, or wires a member from elsewhere."""


def get(name: str) -> Problem:
    """The problem class registered as ``name``: its folder's ``PROBLEM``, checked against the contract."""
    key = (name, _package(name))
    if key not in _CHECKED:
        _CHECKED[key] = _checked(*key)
    return _CHECKED[key]


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


def _checked(name: str, package: str) -> Problem:
    """The folder's ``PROBLEM``, checked against the contract; IncompleteProblem names the first missing piece."""
    where = f"problem class {name!r} ({package})"
    folder = _folder(where, package)
    root = resources.files(package)  # a folder without __init__.py imports as a namespace package: named here
    for file, holds in FILES.items():
        if not root.joinpath(*file.split("/")).is_file():
            raise IncompleteProblem(f"{where}: no {file} ({holds})")
    for member in HOMES["__init__"]:
        if not hasattr(folder, member):
            raise IncompleteProblem(f"{where}: __init__.py has no {member!r} ({FILES['__init__.py']})")
    if folder.NAME != name:
        raise IncompleteProblem(f"{where}: NAME is {folder.NAME!r}, but the class is registered as {name!r}")
    problem = getattr(folder, "PROBLEM", None)
    if not isinstance(problem, Problem):
        raise IncompleteProblem(f"{where}: __init__.py builds no PROBLEM = Problem(...) from its files' members")
    for home, wanted in HOMES.items():
        module = folder if home == "__init__" else importlib.import_module(f"{package}.{home}")
        for member in wanted:
            if not hasattr(module, member):
                raise IncompleteProblem(f"{where}: {home}.py has no {member!r} ({FILES[home + '.py']})")
            if getattr(problem, member) != getattr(module, member):
                raise IncompleteProblem(f"{where}: PROBLEM.{member} is not the {member!r} of {home}.py")
    if problem.package != package:
        raise IncompleteProblem(f"{where}: PROBLEM.package is {problem.package!r}, not the folder's __name__")
    return problem


def _folder(where: str, package: str) -> ModuleType:
    """The class folder's package, imported; a part its ``__init__.py`` imports and cannot find is an
    IncompleteProblem naming the file, or the member of it."""
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        home = next((home for home in HOMES if exc.name == f"{package}.{home}"), None)
        if home is None:
            raise  # not a part of the folder: a missing dependency inside a file, or the package itself
        if isinstance(exc, ModuleNotFoundError):
            raise IncompleteProblem(f"{where}: no {home}.py ({FILES[home + '.py']})") from None
        module = sys.modules.get(exc.name) if exc.name is not None else None
        missing = [member for member in HOMES[home] if not hasattr(module, member)]
        if not missing:
            raise  # a name outside the contract, imported from the part by another
        member = exc.name_from if exc.name_from in missing else missing[0]
        raise IncompleteProblem(f"{where}: {home}.py has no {member!r} ({FILES[home + '.py']})") from None
