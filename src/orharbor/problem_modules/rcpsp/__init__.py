"""Resource-constrained project scheduling (RCPSP, single mode, makespan): the ``rcpsp`` module.

Activities with durations, renewable resource demands and precedences, and
resources with capacities; minimise the makespan. Generator: after ProGen
(Kolisch, Sprecher and Drexl 1995), the generator of PSPLIB; format: PSPLIB
single-mode ``.sm``; reference: CP-SAT. OR-Tools is imported only when
``reference`` is called.
"""

from __future__ import annotations

from orharbor.problem_modules import read_statement

from .baseline import BASELINE, baseline, random_activity_list, ssgs
from .formats import FORMATS, parse, read, write
from .generator import GENERATOR_VERSION, SIZES, generate
from .reference import reference  # OR-Tools is imported inside the call
from .rules import validate_instance
from .verify import evaluate

NAME = "rcpsp"
OBJECTIVE = "makespan"
TITLE = "Resource-constrained project scheduling"

__all__ = [
    "BASELINE",
    "FORMATS",
    "GENERATOR_VERSION",
    "NAME",
    "OBJECTIVE",
    "SIZES",
    "TITLE",
    "baseline",
    "evaluate",
    "generate",
    "parse",
    "random_activity_list",
    "read",
    "reference",
    "ssgs",
    "statement",
    "validate_instance",
    "write",
]


def statement() -> str:
    """The problem statement handed to agents (markdown)."""
    return read_statement(__package__)
