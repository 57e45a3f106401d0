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

from orharbor.problem_modules.contract import Problem

from .baseline import BASELINE, baseline
from .formats import FORMATS, read, write
from .generator import GENERATOR_VERSION, SIZES, generate
from .reference import REFERENCE, reference
from .rules import validate_instance
from .verify import evaluate

NAME = "timetabling"
TITLE = "Curriculum-based course timetabling"
OBJECTIVE = "soft-constraint penalty"

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
