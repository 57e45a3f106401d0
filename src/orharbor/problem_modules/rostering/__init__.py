"""Shift scheduling (Curtois & Qu benchmark, schedulingbenchmarks.org): the ``rostering`` problem module.

Assign each employee a shift or a day off on every day of the horizon so that
every hard constraint of the employee's contract holds, minimising the weighted
penalties of unmet shift-on requests, met shift-off requests and under- and
over-cover. Generator: the benchmark's design (Curtois and Qu 2014); format:
the benchmark's text files; baseline and reference: CP-SAT, in the style of
OR-Tools' ``shift_scheduling_sat.py``. OR-Tools is imported only when
``baseline`` or ``reference`` is called.
"""

from orharbor.problem_modules.contract import Problem

from .baseline import BASELINE, baseline
from .formats import FORMATS, read, write
from .generator import GENERATOR_VERSION, SIZES, generate
from .reference import REFERENCE, reference
from .rules import validate_instance
from .verify import evaluate

NAME = "rostering"
TITLE = "Shift scheduling (nurse rostering)"
OBJECTIVE = "weighted request and cover penalties"
#: A strengthened build's one-thread reference keeps CP-SAT's single search rather than its
#: interleaved portfolio (``orharbor.datasets.build``): from the ladder's answer, 60 s on one core
#: reached 4883 on d84e40s5 seed 1001 and 329 on d28e30s4 seed 1000 with the single search, and
#: 7436 and 429 interleaved (orharbor-bench 1.0's plain reference: 4868 and 325).
ONE_THREAD_PORTFOLIO = False

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
