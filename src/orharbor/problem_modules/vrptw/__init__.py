"""Vehicle routing with time windows (VRPTW, total distance): the ``vrptw`` problem module.

Vehicles of one capacity leave a depot and serve every customer exactly once,
each inside its time window, and return by the depot's due date; minimise the
total Euclidean (unrounded) distance. Generator: Solomon (1987) and Gehring and
Homberger; format: Solomon's text; reference: OR-Tools routing with a time
dimension and guided local search. OR-Tools is imported only when ``reference``
is called.
"""

from __future__ import annotations

from orharbor.problem_modules import read_statement

from .baseline import BASELINE, baseline, construct
from .formats import FORMATS, parse, read, read_solution, write
from .generator import GENERATOR_VERSION, SIZES, generate
from .reference import lower_bound, reference  # OR-Tools is imported inside the call
from .rules import validate_instance
from .verify import TOL, evaluate

NAME = "vrptw"
OBJECTIVE = "total distance"
TITLE = "Vehicle routing with time windows"

__all__ = [
    "BASELINE",
    "FORMATS",
    "GENERATOR_VERSION",
    "NAME",
    "OBJECTIVE",
    "SIZES",
    "TITLE",
    "TOL",
    "baseline",
    "construct",
    "evaluate",
    "generate",
    "lower_bound",
    "parse",
    "read",
    "read_solution",
    "reference",
    "statement",
    "validate_instance",
    "write",
]


def statement() -> str:
    """The problem statement handed to agents (markdown)."""
    return read_statement(__package__)
