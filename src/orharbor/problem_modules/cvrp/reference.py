"""OR-Tools routing reference for the CVRP, as in OR-Tools' CVRP examples.

One vehicle per route with the instance's capacity (a ``Capacity`` dimension
over the demands), integer arc costs from the instance's own rounding rule
(the verifier's ``distance_function``), PATH_CHEAPEST_ARC as the first
solution strategy and GUIDED_LOCAL_SEARCH until the time limit; the baseline
is returned if that finds nothing better, so the reference is never worse.

Why not start from the baseline's routes (``ReadAssignmentFromRoutes``), as
before? The baseline is about as good as a random answer, and guided local
search barely leaves such a start on large instances: on n400 seed 0, 44534
after 20 s from the baseline against 42745 from PATH_CHEAPEST_ARC, so the
Clarke-Wright savings rule alone (42630) beat a 60 s reference. The
baseline's routes remain the starting point when PATH_CHEAPEST_ARC finds no
first solution. Given routes (``hint=``, e.g. the ladder policies' best answer)
are the start when they are no worse than PATH_CHEAPEST_ARC's first solution
(:func:`orharbor.problem_modules.routing.search`), and the answer is never worse
than them. The fleet is the baseline's number of routes plus a margin
(:func:`fleet_size`), and at least the given routes; unused vehicles cost
nothing, so the fleet does not bind the search. Routing is single-threaded (``workers`` is recorded as 1) and
proves no optimality: ``bound`` is the cheap arc bound of :func:`lower_bound`.
"""

from __future__ import annotations

import time

from ..routing import keep_better, routes_from, search
from .baseline import baseline
from .verify import distance_function, evaluate

#: The reference method, as the instruction names it.
REFERENCE = (
    "OR-Tools routing (a capacity dimension): a first solution by PATH_CHEAPEST_ARC, improved by guided "
    "local search (the naive solution when it finds nothing better)"
)


def fleet_size(n_baseline_routes: int, n_customers: int) -> int:
    """Vehicles offered to the search: baseline routes + 20% + 2, at most one per customer."""
    return min(n_customers, n_baseline_routes + n_baseline_routes // 5 + 2)


def lower_bound(instance: dict) -> int:
    """Every customer leaves by one arc; the depot by at least ceil(total demand / Q) arcs.

    Sum of each customer's cheapest outgoing arc plus the k cheapest depot arcs,
    k = ceil(sum of demands / capacity): valid without the triangle inequality
    (which nint rounding may break). O(n^2).
    """
    n = instance["n_customers"]
    d = distance_function(instance)
    total = 0
    for i in range(1, n + 1):
        total += min(d(i, j) for j in range(n + 1) if j != i)
    k = -(-sum(instance["demands"]) // instance["capacity"])
    depot = sorted(d(0, j) for j in range(1, n + 1))
    return total + sum(depot[: max(k, 1)])


def reference(
    instance: dict, *, time_limit_s: float, workers: int = 1, seed: int = 0, hint: dict | None = None
) -> tuple[dict, dict]:
    """Best routes OR-Tools routing finds within ``time_limit_s`` from its own start or ``hint``, and its meta."""
    import ortools
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    from orharbor.problem_modules import warm_start

    start = time.perf_counter()
    n = instance["n_customers"]
    base = baseline(instance)
    base_start = warm_start.Start(base, evaluate(instance, base), "baseline")
    given, note = warm_start.given_start(instance, evaluate, hint)
    given_routes = len([r for r in given.solution["routes"] if r]) if given else 0
    vehicles = max(fleet_size(len(base["routes"]), n), given_routes)
    d = distance_function(instance)
    matrix = [[d(i, j) for j in range(n + 1)] for i in range(n + 1)]

    manager = pywrapcp.RoutingIndexManager(n + 1, vehicles, 0)
    routing = pywrapcp.RoutingModel(manager)
    transit = routing.RegisterTransitMatrix(matrix)
    routing.SetArcCostEvaluatorOfAllVehicles(transit)
    demand = routing.RegisterUnaryTransitVector(list(instance["demands"]))
    routing.AddDimensionWithVehicleCapacity(demand, 0, [instance["capacity"]] * vehicles, True, "Capacity")

    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    assignment, start_point = search(
        routing,
        manager,
        params,
        start + float(time_limit_s),
        "PATH_CHEAPEST_ARC",
        base_start,
        given,
        lambda routes: evaluate(instance, {"routes": routes}),
    )
    start_point = warm_start.with_note(start_point, note)

    meta = {
        "solver": "ortools-routing",
        "version": ortools.__version__,  # type: ignore[attr-defined]  # ortools' stubs leave out __version__
        "first_solution_strategy": "PATH_CHEAPEST_ARC",
        "metaheuristic": "GUIDED_LOCAL_SEARCH",
        "started_from": start_point.origin,
        "vehicles": vehicles,
        "time_limit_s": time_limit_s,
        "workers": 1,
        "seed": seed,
        "hint": start_point.record(),
    }
    routes = routes_from(routing, manager, assignment, vehicles) if assignment is not None else None
    fallback = warm_start.better(warm_start.better(base_start, start_point), given)
    solution, objective = keep_better(instance, evaluate, routes, fallback, meta, "routing found no solution")
    bound = lower_bound(instance)
    meta.update(
        status="FEASIBLE",
        objective=objective,
        bound=min(bound, objective),
        wall_time_s=round(time.perf_counter() - start, 3),
    )
    return solution, meta
