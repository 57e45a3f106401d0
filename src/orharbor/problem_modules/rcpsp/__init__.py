"""Resource-constrained project scheduling (RCPSP, single mode, makespan): the ``rcpsp`` module.

Activities with durations, renewable resource demands and precedences, and
resources with capacities; minimise the makespan. Generator: after ProGen
(Kolisch, Sprecher and Drexl 1995), the generator of PSPLIB; format: PSPLIB
single-mode ``.sm``; reference: CP-SAT. OR-Tools is imported only when
``reference`` is called.
"""

from orharbor.problem_modules.contract import Problem

from .baseline import BASELINE, baseline
from .formats import FORMATS, read, write
from .generator import GENERATOR_VERSION, SIZES, generate
from .reference import REFERENCE, reference
from .rules import validate_instance
from .verify import evaluate

NAME = "rcpsp"
TITLE = "Resource-constrained project scheduling"
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
