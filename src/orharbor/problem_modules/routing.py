"""OR-Tools routing boilerplate shared by the vehicle-routing references (cvrp, vrptw)."""

from __future__ import annotations

import time

from orharbor.problem_modules import warm_start
from orharbor.problem_modules.warm_start import Start


def search(
    routing, manager, params, deadline: float, first: str, baseline: Start, given: Start | None, objective
) -> tuple[object | None, Start]:
    """``(assignment or None, start)``: ``params``' search until ``deadline``, from its own start or ``given``.

    The own start is the first solution of ``params``' strategy (named
    ``first``), or the ``baseline``'s routes when the strategy finds none;
    ``objective(routes)`` is the verifier's value of routes. Guided local
    search barely leaves a poor start on large instances, so the baseline is
    only the last resort. With no ``given`` routes that is :func:`search_own`.
    Otherwise the strategy's first solution is found alone (a solution limit of
    one) and the better of it and ``given``
    (:func:`~orharbor.problem_modules.warm_start.better`) becomes an assignment
    (``ReadAssignmentFromRoutes``), which :func:`search_from` improves until
    ``deadline`` (``time.perf_counter``). Given routes the model refuses (vrptw
    rounds travel times up) leave the own start, with a note.
    """
    if given is None:
        return search_own(routing, manager, params, deadline, first, baseline, objective)
    alone = type(params)()
    alone.CopyFrom(params)
    alone.solution_limit = 1
    _time_limit(alone, deadline)
    found = routing.SolveWithParameters(alone)
    own = baseline
    if found is not None:
        own = _start(routes_from(routing, manager, found, routing.vehicles()), objective, first) or baseline
    start = warm_start.better(own, given)
    initial = assignment_of(routing, manager, start.solution["routes"])
    if initial is None and start is given:
        start = warm_start.with_note(own, f"the routing model refused the given routes; it searched from {own.origin}")
        initial = assignment_of(routing, manager, start.solution["routes"])
    if initial is None:
        return None, start
    _time_limit(params, deadline)  # at least a millisecond: the search always gets the start
    return search_from(routing, initial, params), start


def search_own(
    routing, manager, params, deadline: float, first: str, baseline: Start, objective
) -> tuple[object | None, Start]:
    """``(assignment or None, start)``: ``params``' whole search (first solution, then local search) in one solve.

    One solve, as before given starts existed: searching on (:func:`search_from`)
    from a first solution found alone took 4.8 s where one solve took 2.1 s for
    300 solutions, and ended worse (cvrp n200 seed 2: 17040 against 16934). The
    first solution's routes are caught as it is found, for the start's record.
    When the strategy finds none, the ``baseline``'s routes are the start of
    what time is left.
    """
    caught: list = []

    def at_solution() -> None:
        if not caught:
            caught.append(routes_from(routing, manager, None, routing.vehicles()))

    routing.AddAtSolutionCallback(at_solution)
    _time_limit(params, deadline)
    assignment = routing.SolveWithParameters(params)
    if assignment is not None:
        return assignment, (_start(caught[0], objective, first) if caught else None) or baseline
    initial = assignment_of(routing, manager, baseline.solution["routes"])
    if initial is None or deadline - time.perf_counter() <= 0.05:
        return None, baseline
    _time_limit(params, deadline)
    return search_from(routing, initial, params), baseline


def _start(routes: list[list[int]], objective, origin: str) -> Start | None:
    """Routes of the model as a start, or None if the verifier refuses them (never expected)."""
    try:
        return Start({"routes": routes}, objective(routes), origin)
    except ValueError:
        return None


def _time_limit(params, deadline: float) -> None:
    """Set ``params``' time limit to what is left until ``deadline`` (at least a millisecond)."""
    params.time_limit.FromMilliseconds(max(1, int((deadline - time.perf_counter()) * 1000)))


def assignment_of(routing, manager, routes: list[list[int]]):
    """The routing assignment of ``routes`` (customer nodes, depot left out), or None if the model refuses them."""
    return routing.ReadAssignmentFromRoutes(
        [[manager.NodeToIndex(c) for c in route] for route in routes if route], True
    )


def search_from(routing, assignment, params):
    """The local search from ``assignment``: the one place a search gets a start (tests watch it here)."""
    return routing.SolveFromAssignmentWithParameters(assignment, params)


def routes_from(routing, manager, assignment, vehicles: int) -> list[list[int]]:
    """The non-empty routes of an OR-Tools routing assignment, as node indices without the depot.

    ``assignment`` None reads the variables' current values (inside a solution callback).
    """
    value = (lambda var: var.Value()) if assignment is None else assignment.Value
    routes = []
    for v in range(vehicles):
        index = value(routing.NextVar(routing.Start(v)))
        route = []
        while not routing.IsEnd(index):
            route.append(manager.IndexToNode(index))
            index = value(routing.NextVar(index))
        if route:
            routes.append(route)
    return routes


def keep_better(
    instance: dict, evaluate, routes: list[list[int]] | None, fallback: Start, meta: dict, none_found: str
) -> tuple[dict, int | float]:
    """``(solution, objective)``: ``routes`` if the verifier accepts them and they are no worse than ``fallback``.

    Otherwise ``fallback`` (the best of the baseline, the search's start and a
    given hint), with ``meta["note"]`` saying why: ``none_found`` when routing
    found no routes (``routes`` is None). The reference is thus never infeasible
    and never worse than the baseline or a given hint.
    """
    if routes is None:
        meta["note"] = f"{none_found}; {fallback.origin} is returned"
        return fallback.solution, fallback.objective
    candidate = {"routes": routes}
    try:
        value = evaluate(instance, candidate)
    except ValueError as exc:  # never expected; never hand back an infeasible answer
        meta["note"] = f"routing solution rejected by the verifier ({exc}); {fallback.origin} is returned"
        return fallback.solution, fallback.objective
    return (candidate, value) if value <= fallback.objective else (fallback.solution, fallback.objective)
