"""Single-machine total weighted tardiness (1 || sum w_j T_j): the ``wtardiness`` problem module.

One machine processes ``n`` jobs one at a time, from time 0; choose the order
that minimises the total weighted tardiness. Generator: OR-Library ``wt``
design (Crauwels, Potts and Van Wassenhove 1998); format: OR-Library ``wt``;
reference: CP-SAT. OR-Tools is imported only when ``reference`` is called.
"""

from __future__ import annotations

from orharbor.problem_modules import read_statement

from .baseline import BASELINE, baseline
from .formats import FORMATS, parse, read, read_all, read_optima, write
from .generator import GENERATOR_VERSION, SIZES, due_date_range, generate
from .reference import best_rule, edd, reference, wspt  # OR-Tools is imported inside the call
from .rules import validate_instance
from .verify import evaluate, weighted_tardiness

NAME = "wtardiness"
OBJECTIVE = "total weighted tardiness"
TITLE = "Single-machine total weighted tardiness"

__all__ = [
    "BASELINE",
    "FORMATS",
    "GENERATOR_VERSION",
    "NAME",
    "OBJECTIVE",
    "SIZES",
    "TITLE",
    "baseline",
    "best_rule",
    "due_date_range",
    "edd",
    "evaluate",
    "generate",
    "parse",
    "read",
    "read_all",
    "read_optima",
    "reference",
    "statement",
    "validate_instance",
    "weighted_tardiness",
    "write",
    "wspt",
]


def statement() -> str:
    """The problem statement handed to agents (markdown)."""
    return read_statement(__package__)
