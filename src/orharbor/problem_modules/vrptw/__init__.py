"""Vehicle routing with time windows (VRPTW, total distance): the ``vrptw`` problem module.

Vehicles of one capacity leave a depot and serve every customer exactly once,
each inside its time window, and return by the depot's due date; minimise the
total Euclidean (unrounded) distance. Generator: Solomon (1987) and Gehring and
Homberger; format: Solomon's text; reference: OR-Tools routing with a time
dimension and guided local search. OR-Tools is imported only when ``reference``
is called.
"""

NAME = "vrptw"
TITLE = "Vehicle routing with time windows"
OBJECTIVE = "total distance"
