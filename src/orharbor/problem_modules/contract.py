"""The problem contract: what every problem class provides, and which file of its folder holds it.

A class folder's ``__init__.py`` builds its :class:`Problem`, ``PROBLEM``, from
explicit imports of its files' members, so an editor or a reader follows every
member to its code::

    from orharbor.problem_modules.contract import Problem

    from .generator import GENERATOR_VERSION, SIZES, generate
    from .verify import evaluate
    ...
    PROBLEM = Problem(NAME=NAME, ..., generate=generate, evaluate=evaluate, package=__name__)

:data:`HOMES` says which file holds each member and :data:`FILES` every file a
folder needs; ``orharbor.problem_modules.get(name)`` returns the ``PROBLEM``
after checking both, refusing a folder that lacks a piece with an error naming
it. ``statement()`` reads the folder's ``statement.md``. A class folder
therefore holds only its own code, and adding a class means adding a folder
(see docs/contributing.md) and one line in the registry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class ProblemClass(Protocol):
    """One problem class: generator, file formats, verifier, naive baseline, reference solver."""

    NAME: str
    """The registry name, also the ``problem`` field of instances and dataset rows."""
    TITLE: str
    """Human-readable name, used in task titles and listings."""
    OBJECTIVE: str
    """What is minimised, in a few words (``"makespan"``)."""
    SIZES: tuple[str, ...]
    """Generator sizes, smallest first; ``SIZES[0]`` is the smoke size."""
    BASELINE: str
    """Plain-language description of the naive baseline, shown to agents."""
    REFERENCE: str
    """The reference method in one line, a noun phrase (``"OR-Tools CP-SAT ..."``): the instruction says the
    reference objective is what it reached in the row's time limit."""
    GENERATOR_VERSION: int
    """Bumped whenever ``generate`` changes its output, so stale datasets are refused."""
    FORMATS: tuple[str, ...]
    """The benchmark text formats ``read`` and ``write`` speak."""

    def generate(self, seed: int, size: str) -> dict:
        """The instance of ``(seed, size)``: a pure function, the same JSON bytes on every platform."""

    def read(self, path_or_text, fmt: str | None = None) -> Any:
        """The instance of a benchmark file (a path or the text itself); ``ValueError`` naming ``file:line``."""

    def write(self, instance: dict, fmt: str = ...) -> str:
        """The text of ``instance`` in ``fmt``; ``write(read(text)) == text`` for published files."""

    def evaluate(self, instance: dict, solution) -> int | float:
        """The objective of a feasible ``solution``, else ``Infeasible`` naming the first broken rule."""

    def baseline(self, instance: dict) -> dict:
        """The naive answer that scores a reward of 0: feasible and deterministic."""

    def reference(
        self, instance: dict, *, time_limit_s: float, workers: int, seed: int = 0, hint=None
    ) -> tuple[dict, dict]:
        """The reference solver's best answer within ``time_limit_s`` and its meta record.

        ``hint`` (None, or an untrusted answer in the class's solution JSON, e.g. the
        ladder policies' best) is checked by ``evaluate`` and refused if that raises,
        with ``meta["hint"]["note"]`` saying why, never an exception; accepted, the
        search starts from the better of it and the class's own start, and the answer
        is never worse than it. ``meta["hint"] = {"from": "given" or the own start's
        name, "objective": ...}`` records the start used
        (:mod:`orharbor.problem_modules.warm_start`).
        """

    def statement(self) -> str:
        """The problem statement handed to agents (markdown)."""

    def validate_instance(self, instance) -> dict:
        """``instance`` if it follows the class's own rules, else ``InvalidInstance`` naming the field."""


#: Every contract member, data first, in declaration order.
MEMBERS: tuple[str, ...] = tuple(ProblemClass.__annotations__) + tuple(
    name for name, value in vars(ProblemClass).items() if callable(value) and not name.startswith("_")
)

#: The file of a class folder that holds each member (``__init__`` is the folder's own ``__init__.py``).
HOMES: dict[str, tuple[str, ...]] = {
    "__init__": ("NAME", "TITLE", "OBJECTIVE"),
    "generator": ("SIZES", "GENERATOR_VERSION", "generate"),
    "formats": ("FORMATS", "read", "write"),
    "baseline": ("BASELINE", "baseline"),
    "reference": ("REFERENCE", "reference"),
    "rules": ("validate_instance",),
    "verify": ("evaluate",),
}

#: The member :class:`Problem` supplies itself, from the folder's ``statement.md``.
SUPPLIED = ("statement",)

assert sorted(MEMBERS) == sorted([m for names in HOMES.values() for m in names] + list(SUPPLIED)), MEMBERS

#: Every file a class folder needs, and what it holds: the registry refuses a folder without one, naming it.
#: docs/contributing.md lists the same files (tests/test_new_class.py builds a class of exactly those).
FILES: dict[str, str] = {
    "__init__.py": f"it holds {', '.join(HOMES['__init__'])} and builds PROBLEM from the other files",
    **{f"{home}.py": f"it holds {', '.join(names)}" for home, names in HOMES.items() if home != "__init__"},
    "statement.md": "the problem statement handed to agents",
    "ladder/rule.py": "the calibration ladder's constructive rule, a level-2 program",
    "ladder/search.py": "the calibration ladder's local search from the rule, a level-2 program",
}


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Problem:
    """One problem class as its folder's ``__init__.py`` builds it: every :class:`ProblemClass` member.

    Each field is the member of the folder file :data:`HOMES` names (the
    registry checks that), imported by name; ``statement()`` reads
    ``statement.md`` of ``package``. The callables are stored as they are, so
    ``PROBLEM.evaluate is verify.evaluate``.
    """

    NAME: str
    TITLE: str
    OBJECTIVE: str
    SIZES: tuple[str, ...]
    GENERATOR_VERSION: int
    generate: Callable[[int, str], dict]
    FORMATS: tuple[str, ...]
    read: Callable[..., Any]
    write: Callable[..., str]
    BASELINE: str
    baseline: Callable[[dict], dict]
    REFERENCE: str
    reference: Callable[..., tuple[dict, dict]]
    validate_instance: Callable[[Any], dict]
    evaluate: Callable[[dict, Any], int | float]
    package: str
    """The folder's package, ``__name__`` of its ``__init__.py``."""

    def statement(self) -> str:
        """The problem statement handed to agents (markdown): the folder's ``statement.md``."""
        return resources.files(self.package).joinpath("statement.md").read_text(encoding="utf-8")

    def __repr__(self) -> str:
        return f"<problem class {self.NAME!r} from {self.package}>"


assert sorted(f.name for f in dataclasses.fields(Problem)) == sorted(
    [m for m in MEMBERS if m not in SUPPLIED] + ["package"]
)
