"""Capacitated vehicle routing (CVRP, CVRPLIB rounding): the ``cvrp`` problem module.

A depot and ``n`` customers with demands on the plane; vehicles of one
capacity leave the depot and return to it; visit every customer once with
routes whose loads fit the capacity, minimising the total distance, where
distances are Euclidean rounded to the nearest integer (TSPLIB EUC_2D, as
CVRPLIB's X instances define them). Generator: Uchoa et al. (2017), the X
instances' design; format: CVRPLIB ``.vrp``; reference: OR-Tools routing with
guided local search. OR-Tools is imported only when ``reference`` is called.
"""

from __future__ import annotations

from orharbor.problem_modules import read_statement

from .baseline import BASELINE, baseline, random_order, split
from .formats import FORMATS, parse, read, read_solution, write
from .generator import GENERATOR_VERSION, SIZES, generate
from .reference import fleet_size, lower_bound, reference  # OR-Tools is imported inside the call
from .rules import validate_instance
from .verify import distance_function, evaluate, route_length

NAME = "cvrp"
OBJECTIVE = "total distance"
TITLE = "Capacitated vehicle routing"

__all__ = [
    "BASELINE",
    "FORMATS",
    "GENERATOR_VERSION",
    "NAME",
    "OBJECTIVE",
    "SIZES",
    "TITLE",
    "baseline",
    "distance_function",
    "evaluate",
    "fleet_size",
    "generate",
    "lower_bound",
    "parse",
    "random_order",
    "read",
    "read_solution",
    "reference",
    "route_length",
    "split",
    "statement",
    "validate_instance",
    "write",
]


def statement() -> str:
    """The problem statement handed to agents (markdown)."""
    return read_statement(__package__)
