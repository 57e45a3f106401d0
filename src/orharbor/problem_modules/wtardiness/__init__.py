"""Single-machine total weighted tardiness (1 || sum w_j T_j): the ``wtardiness`` problem module.

One machine processes ``n`` jobs one at a time, from time 0; choose the order
that minimises the total weighted tardiness. Generator: OR-Library ``wt``
design (Crauwels, Potts and Van Wassenhove 1998); format: OR-Library ``wt``;
reference: CP-SAT. OR-Tools is imported only when ``reference`` is called.
"""

from orharbor.problem_modules.contract import Problem

from .baseline import BASELINE, baseline
from .formats import FORMATS, read, write
from .generator import GENERATOR_VERSION, SIZES, generate
from .reference import REFERENCE, reference
from .rules import validate_instance
from .verify import evaluate

NAME = "wtardiness"
TITLE = "Single-machine total weighted tardiness"
OBJECTIVE = "total weighted tardiness"

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
