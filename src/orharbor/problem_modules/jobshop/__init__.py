"""Job shop scheduling (JSSP, makespan): the ``jobshop`` problem module.

Every job visits every machine exactly once, in its own order; minimise the
makespan. Generator: Taillard (1993); formats: Taillard and OR-Library;
reference: CP-SAT. OR-Tools is imported only when ``reference`` is called.
"""

from orharbor.problem_modules.contract import Problem

from .baseline import BASELINE, baseline
from .formats import FORMATS, read, write
from .generator import GENERATOR_VERSION, SIZES, generate
from .reference import REFERENCE, reference
from .rules import validate_instance
from .verify import evaluate

NAME = "jobshop"
TITLE = "Job shop scheduling"
OBJECTIVE = "makespan"

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
