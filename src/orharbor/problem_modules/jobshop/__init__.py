"""Job shop scheduling (JSSP, makespan): the ``jobshop`` problem module.

Every job visits every machine exactly once, in its own order; minimise the
makespan. Generator: Taillard (1993); formats: Taillard and OR-Library;
reference: CP-SAT. OR-Tools is imported only when ``reference`` is called.
"""

from __future__ import annotations

from orharbor.problem_modules import read_statement

from .baseline import BASELINE, baseline, dispatch
from .formats import FORMATS, read, write
from .generator import GENERATOR_VERSION, SIZES, generate, taillard
from .reference import reference  # OR-Tools is imported inside the call
from .rules import validate_instance
from .verify import evaluate

NAME = "jobshop"
OBJECTIVE = "makespan"
TITLE = "Job shop scheduling"

__all__ = [
    "BASELINE",
    "FORMATS",
    "GENERATOR_VERSION",
    "NAME",
    "OBJECTIVE",
    "SIZES",
    "TITLE",
    "baseline",
    "dispatch",
    "evaluate",
    "generate",
    "read",
    "reference",
    "statement",
    "taillard",
    "validate_instance",
    "write",
]


def statement() -> str:
    """The problem statement handed to agents (markdown)."""
    return read_statement(__package__)
