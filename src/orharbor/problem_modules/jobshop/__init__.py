"""Job shop scheduling (JSSP, makespan): the ``jobshop`` problem module.

Every job visits every machine exactly once, in its own order; minimise the
makespan. Generator: Taillard (1993); formats: Taillard and OR-Library;
reference: CP-SAT. OR-Tools is imported only when ``reference`` is called.
"""

NAME = "jobshop"
TITLE = "Job shop scheduling"
OBJECTIVE = "makespan"
