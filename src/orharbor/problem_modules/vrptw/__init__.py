"""Vehicle routing with time windows (VRPTW, total distance): the ``vrptw`` problem module.

Vehicles of one capacity leave a depot and serve every customer exactly once,
each inside its time window, and return by the depot's due date; minimise the
total Euclidean (unrounded) distance. Generator: Solomon (1987) and Gehring and
Homberger; format: Solomon's text; reference: OR-Tools routing with a time
dimension and guided local search. OR-Tools is imported only when ``reference``
is called.
"""

from orharbor.problem_modules.contract import Problem

from .baseline import BASELINE, baseline
from .formats import FORMATS, read, write
from .generator import GENERATOR_VERSION, SIZES, generate
from .reference import REFERENCE, reference
from .rules import validate_instance
from .verify import evaluate

NAME = "vrptw"
TITLE = "Vehicle routing with time windows"
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
