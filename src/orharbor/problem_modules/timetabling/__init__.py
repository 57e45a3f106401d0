"""Curriculum-based course timetabling (ITC2007 track 3): the ``timetabling`` problem module.

Schedule every lecture of every course into a period (day and period of the
day) and a room, so that no room, curriculum or teacher has two lectures at
once and no course is taught when it is unavailable, minimising the
competition's weighted soft penalties (room capacity, minimum working days,
curriculum compactness, room stability). Generator: the features of the
ITC2007 instances, feasible by construction; format: ITC2007 ``.ctt`` and the
competition's solution files; baseline: CP-SAT's first feasible timetable;
reference: CP-SAT with the penalties. OR-Tools is imported only when
``baseline`` or ``reference`` is called.
"""

from __future__ import annotations

from orharbor.problem_modules import read_statement

from .baseline import BASELINE, baseline  # OR-Tools is imported inside the call
from .formats import FORMATS, parse, read, read_solution, write, write_solution
from .generator import GENERATOR_VERSION, SIZES, build, generate
from .reference import reference  # OR-Tools is imported inside the call
from .rules import validate_instance
from .verify import WEIGHTS, evaluate, penalties

NAME = "timetabling"
OBJECTIVE = "soft-constraint penalty"
TITLE = "Curriculum-based course timetabling"

__all__ = [
    "BASELINE",
    "FORMATS",
    "GENERATOR_VERSION",
    "NAME",
    "OBJECTIVE",
    "SIZES",
    "TITLE",
    "WEIGHTS",
    "baseline",
    "build",
    "evaluate",
    "generate",
    "parse",
    "penalties",
    "read",
    "read_solution",
    "reference",
    "statement",
    "validate_instance",
    "write",
    "write_solution",
]


def statement() -> str:
    """The problem statement handed to agents (markdown)."""
    return read_statement(__package__)
