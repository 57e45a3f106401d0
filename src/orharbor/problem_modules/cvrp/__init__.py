"""Capacitated vehicle routing (CVRP, CVRPLIB rounding): the ``cvrp`` problem module.

A depot and ``n`` customers with demands on the plane; vehicles of one
capacity leave the depot and return to it; visit every customer once with
routes whose loads fit the capacity, minimising the total distance, where
distances are Euclidean rounded to the nearest integer (TSPLIB EUC_2D, as
CVRPLIB's X instances define them). Generator: Uchoa et al. (2017), the X
instances' design; format: CVRPLIB ``.vrp``; reference: OR-Tools routing with
guided local search. OR-Tools is imported only when ``reference`` is called.
"""

from orharbor.problem_modules.contract import Problem

from .baseline import BASELINE, baseline
from .formats import FORMATS, read, write
from .generator import GENERATOR_VERSION, SIZES, generate
from .reference import REFERENCE, reference
from .rules import validate_instance
from .verify import evaluate

NAME = "cvrp"
TITLE = "Capacitated vehicle routing"
OBJECTIVE = "total distance"

PROBLEM = Problem(
    NAME=NAME,
    TITLE=TITLE,
    OBJECTIVE=OBJECTIVE,
    SIZES=SIZES,
    GENERATOR_VERSION=GENERATOR_VERSION,
    generate=generate,
    FORMATS=FORMATS,
    read=read,
    write=write,
    BASELINE=BASELINE,
    baseline=baseline,
    REFERENCE=REFERENCE,
    reference=reference,
    validate_instance=validate_instance,
    evaluate=evaluate,
    package=__name__,
)
