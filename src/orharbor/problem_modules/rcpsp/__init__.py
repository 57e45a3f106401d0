"""Resource-constrained project scheduling (RCPSP, single mode, makespan): the ``rcpsp`` module.

Activities with durations, renewable resource demands and precedences, and
resources with capacities; minimise the makespan. Generator: after ProGen
(Kolisch, Sprecher and Drexl 1995), the generator of PSPLIB; format: PSPLIB
single-mode ``.sm``; reference: CP-SAT. OR-Tools is imported only when
``reference`` is called.
"""

NAME = "rcpsp"
TITLE = "Resource-constrained project scheduling"
OBJECTIVE = "makespan"
