"""Shift scheduling (Curtois & Qu benchmark, schedulingbenchmarks.org): the ``rostering`` problem module.

Assign each employee a shift or a day off on every day of the horizon so that
every hard constraint of the employee's contract holds, minimising the weighted
penalties of unmet shift-on requests, met shift-off requests and under- and
over-cover. Generator: the benchmark's design (Curtois and Qu 2014); format:
the benchmark's text files; baseline and reference: CP-SAT, in the style of
OR-Tools' ``shift_scheduling_sat.py``. OR-Tools is imported only when
``baseline`` or ``reference`` is called.
"""

from __future__ import annotations

from orharbor.problem_modules import read_statement

from .baseline import BASELINE, baseline  # OR-Tools is imported inside the call
from .formats import FORMATS, parse, read, write
from .generator import GENERATOR_VERSION, SIZES, generate, generate_with_witness
from .reference import reference  # OR-Tools is imported inside the call
from .rules import validate_instance
from .verify import evaluate, penalty, weekends

NAME = "rostering"
OBJECTIVE = "weighted request and cover penalties"
TITLE = "Shift scheduling (nurse rostering)"

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
    "generate_with_witness",
    "parse",
    "penalty",
    "read",
    "reference",
    "statement",
    "validate_instance",
    "weekends",
    "write",
]


def statement() -> str:
    """The problem statement handed to agents (markdown)."""
    return read_statement(__package__)
