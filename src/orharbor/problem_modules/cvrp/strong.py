"""PyVRP, the strongest open CVRP solver, for best-known values at build time (never inside a task).

PyVRP works in integers, and so does the CVRP: the distance matrix is the verifier's own
``distance_function`` (the instance's rounding rule), so PyVRP's distance is exactly the verifier's
objective. One depot, one vehicle type of the instance's capacity with one vehicle per customer (the
fleet never binds: any number of routes is allowed), no durations. The run itself, the hint and the
verifier's check of the answer are :func:`orharbor.problem_modules.pyvrp_runner.solve`.
"""

from __future__ import annotations

from ..pyvrp_runner import solve
from .verify import distance_function, evaluate

#: The strong method, as the build names it.
STRONG = (
    "PyVRP iterated local search on the instance's integer distances, started from a feasible hint when "
    "one is given (the hint when PyVRP finds nothing better)"
)


def problem_data(instance: dict):
    """The instance as PyVRP's ``ProblemData``: node ``i`` is location ``i``, customer ``i`` is client ``i - 1``."""
    import numpy as np
    import pyvrp

    n = instance["n_customers"]
    d = distance_function(instance)
    distances = np.array([[d(i, j) for j in range(n + 1)] for i in range(n + 1)], dtype=np.int64)
    coords = instance.get("coords") or [[0, 0]] * (n + 1)  # an explicit matrix may come without coordinates
    demands = instance["demands"]
    return pyvrp.ProblemData(
        locations=[pyvrp.Location(x, y) for x, y in coords],
        clients=[pyvrp.Client(i, delivery=[int(demands[i])]) for i in range(1, n + 1)],
        depots=[pyvrp.Depot(0)],
        vehicle_types=[pyvrp.VehicleType(n, capacity=[int(instance["capacity"])])],
        distance_matrices=[distances],  # type: ignore[list-item]  # pyvrp's stub types an array's shape as int
        duration_matrices=[np.zeros_like(distances)],  # type: ignore[list-item]  # as above
    )


def strong(
    instance: dict, *, time_limit_s: float, workers: int = 1, seed: int = 0, hint: dict | None = None
) -> tuple[dict, dict]:
    """PyVRP's best routes in ``time_limit_s`` (single-threaded: ``workers`` is recorded as 1), and its meta."""
    return solve(instance, evaluate, problem_data, time_limit_s=time_limit_s, seed=seed, hint=hint)
