"""OR-Tools routing boilerplate shared by the vehicle-routing references (cvrp, vrptw)."""

from __future__ import annotations

import time


def solve_from_first_solution(routing, manager, params, start_routes: list[list[int]], deadline: float,
                              first: str):
    """``(assignment or None, started_from)``: search from ``params``' first-solution strategy (named ``first``).

    Guided local search barely leaves a poor start on large instances, so the
    baseline's routes (``start_routes``) are only the start when the strategy
    finds no first solution; whatever is left until ``deadline``
    (``time.perf_counter``) then goes to a search from them.
    """
    assignment = routing.SolveWithParameters(params)
    left = deadline - time.perf_counter()
    if assignment is not None or left <= 0.05:
        return assignment, first
    params.time_limit.FromMilliseconds(max(1, int(left * 1000)))
    initial = routing.ReadAssignmentFromRoutes([[manager.NodeToIndex(c) for c in route] for route in start_routes],
                                               True)
    if initial is None:
        return None, "baseline"
    return routing.SolveFromAssignmentWithParameters(initial, params), "baseline"


def routes_from(routing, manager, assignment, vehicles: int) -> list[list[int]]:
    """The non-empty routes of an OR-Tools routing assignment, as node indices without the depot."""
    routes = []
    for v in range(vehicles):
        index = assignment.Value(routing.NextVar(routing.Start(v)))
        route = []
        while not routing.IsEnd(index):
            route.append(manager.IndexToNode(index))
            index = assignment.Value(routing.NextVar(index))
        if route:
            routes.append(route)
    return routes


def keep_better(instance: dict, evaluate, routes: list[list[int]] | None, fallback: dict, fallback_objective,
                meta: dict, none_found: str) -> tuple[dict, object]:
    """``(solution, objective)``: ``routes`` if the verifier accepts them and they are no worse than ``fallback``.

    Otherwise ``fallback`` (the baseline), with ``meta["note"]`` saying why:
    ``none_found`` when routing found no routes (``routes`` is None). The
    reference is thus never infeasible and never worse than the baseline.
    """
    if routes is None:
        meta["note"] = none_found
        return fallback, fallback_objective
    candidate = {"routes": routes}
    try:
        value = evaluate(instance, candidate)
    except ValueError as exc:  # never expected; never hand back an infeasible answer
        meta["note"] = f"routing solution rejected by the verifier ({exc}); the baseline is returned"
        return fallback, fallback_objective
    return (candidate, value) if value <= fallback_objective else (fallback, fallback_objective)
