"""Single-machine total weighted tardiness (1 || sum w_j T_j): the ``wtardiness`` problem module.

One machine processes ``n`` jobs one at a time, from time 0; choose the order
that minimises the total weighted tardiness. Generator: OR-Library ``wt``
design (Crauwels, Potts and Van Wassenhove 1998); format: OR-Library ``wt``;
reference: CP-SAT. OR-Tools is imported only when ``reference`` is called.
"""

NAME = "wtardiness"
TITLE = "Single-machine total weighted tardiness"
OBJECTIVE = "total weighted tardiness"
