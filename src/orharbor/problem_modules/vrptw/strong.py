"""PyVRP, the strongest open VRPTW solver, for best-known values at build time (never inside a task).

PyVRP works in integers, the verifier in floats (unrounded Euclidean distances), so times and
distances are scaled by :data:`SCALE` and rounded so that every route PyVRP calls feasible is
feasible for the verifier:

* travel times are rounded **up**: ``t(i, j) = ceil(SCALE * d(i, j))``, computed exactly in integers
  (the smallest ``t`` with ``t * t >= SCALE**2 * (dx * dx + dy * dy)``, by ``math.isqrt``), so
  ``t / SCALE >= d`` holds exactly, not just up to float rounding;
* windows, service times and the depot's horizon are the instance's integers times ``SCALE``: exact,
  so no window needs rounding inward (``rules.py`` requires integers there).

A route PyVRP finds feasible has an integer schedule ``T`` within every window; driving the true
distances, leaving the depot at ``ready[0]`` (PyVRP may leave later, which never helps), each arrival
is at most ``T / SCALE``, by induction along the route (waiting is free). The verifier's float sums
differ from those exact values by about 1e-12 per leg, far inside its 1e-6 tolerance. The price is
that PyVRP refuses a route whose slack is below ``1 / SCALE`` per leg. Arc costs are
``round(SCALE * d)``, so PyVRP's integer objective is within half a unit per leg of ``SCALE`` times
the true one; the objective reported is the verifier's float sum. One vehicle per customer is
offered (the fleet never binds). The run, the hint and the verifier's check are
:func:`orharbor.problem_modules.pyvrp_runner.solve`.
"""

from __future__ import annotations

import math

from ..pyvrp_runner import solve
from .verify import evaluate

#: Time and distance units per instance unit in PyVRP's integer model.
SCALE = 10_000

#: The strong method, as the build names it.
STRONG = (
    f"PyVRP iterated local search on distances and travel times scaled by {SCALE} (travel times rounded up), "
    "started from a feasible hint when one is given (the hint when PyVRP finds nothing better)"
)


def travel_times(instance: dict):
    """``ceil(SCALE * d(i, j))`` for every pair of nodes, exact: an int64 matrix."""
    import numpy as np

    coords = np.asarray(instance["coords"], dtype=np.int64)
    squared = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(axis=2)
    values, inverse = np.unique(squared.ravel(), return_inverse=True)
    up = np.array([ceil_scaled_root(int(v)) for v in values], dtype=np.int64)
    return up[inverse].reshape(squared.shape)


def ceil_scaled_root(squared: int) -> int:
    """The smallest integer ``t`` with ``t * t >= SCALE**2 * squared``: ``ceil(SCALE * sqrt(squared))``."""
    return 0 if squared == 0 else math.isqrt(SCALE * SCALE * squared - 1) + 1


def problem_data(instance: dict):
    """The instance as PyVRP's scaled ``ProblemData``: node ``i`` is location ``i``, customer ``i`` client ``i - 1``."""
    import numpy as np
    import pyvrp

    n = instance["n_customers"]
    coords = instance["coords"]
    xy = np.asarray(coords, dtype=np.float64)
    distances = np.rint(SCALE * np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(axis=2))).astype(np.int64)
    ready, due, service, demands = instance["ready"], instance["due"], instance["service"], instance["demands"]
    start, horizon = int(ready[0]) * SCALE, int(due[0]) * SCALE
    clients = [
        pyvrp.Client(
            i,
            delivery=[int(demands[i])],
            service_duration=int(service[i]) * SCALE,
            tw_early=int(ready[i]) * SCALE,
            tw_late=int(due[i]) * SCALE,
        )
        for i in range(1, n + 1)
    ]
    return pyvrp.ProblemData(
        locations=[pyvrp.Location(x, y) for x, y in coords],
        clients=clients,
        depots=[pyvrp.Depot(0, tw_early=start, tw_late=horizon)],
        vehicle_types=[pyvrp.VehicleType(n, capacity=[int(instance["capacity"])], tw_early=start, tw_late=horizon)],
        distance_matrices=[distances],  # type: ignore[list-item]  # pyvrp's stub types an array's shape as int
        duration_matrices=[travel_times(instance)],
    )


def strong(
    instance: dict, *, time_limit_s: float, workers: int = 1, seed: int = 0, hint: dict | None = None
) -> tuple[dict, dict]:
    """PyVRP's best routes in ``time_limit_s`` (single-threaded: ``workers`` is recorded as 1), and its meta."""
    solution, meta = solve(instance, evaluate, problem_data, time_limit_s=time_limit_s, seed=seed, hint=hint)
    meta["scale"] = SCALE
    return solution, meta
