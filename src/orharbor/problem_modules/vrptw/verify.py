"""VRPTW verifier: standard library only (copied into every task).

``evaluate(instance, solution)`` returns the total Euclidean distance of a set
of routes, or raises :class:`Infeasible` naming the first broken rule. The
instance is trusted (it is ours); the solution is not: it is read only through
:func:`orharbor.verifiers.routes.read_routes`. Linear time in the solution size.

Times are floats, computed left to right along each route: a vehicle leaves
the depot at the depot's ready time, arrives at a customer at ``departure +
distance``, is late if ``arrival > due + TOL`` (``TOL = 1e-6``, the instance's
``time_tolerance``), else starts service at ``max(arrival, ready)`` and leaves
``service`` later; the return to the depot must be ``<= depot due + TOL``.
"""

from __future__ import annotations

import math

from orharbor.verifiers.routes import read_routes
from orharbor.verifiers.strict import Infeasible

__all__ = ["TOL", "Infeasible", "distance", "evaluate", "route_cost"]

#: Tolerance on due dates for floating-point arrival times (exactly 1e-6).
TOL = 1e-6


def distance(coords: list, i: int, j: int) -> float:
    """Euclidean distance between nodes ``i`` and ``j``, unrounded: sqrt of the integer sum of squares."""
    dx = coords[i][0] - coords[j][0]
    dy = coords[i][1] - coords[j][1]
    return math.sqrt(dx * dx + dy * dy)


def evaluate(instance: dict, solution) -> float:
    """Total distance of ``solution = {"routes": [[customer, ...], ...]}``."""
    read_routes(solution, instance["n_customers"])  # shape, integers, every customer exactly once
    # now trusted: walk the original list so messages give each route's own index
    costs = [route_cost(instance, route, r) for r, route in enumerate(solution["routes"]) if route]
    return math.fsum(costs)


def route_cost(instance: dict, route: list[int], r: int = 0) -> float:
    """Length of one trusted route (customers 1..n, depot implicit), checking capacity and windows."""
    coords, demands = instance["coords"], instance["demands"]
    ready, due, service = instance["ready"], instance["due"], instance["service"]
    capacity = instance["capacity"]
    tol = instance.get("time_tolerance", TOL)
    where = f"solution.routes[{r}]"
    load = 0
    time = float(ready[0])
    prev = 0
    legs = []
    for customer in route:
        load += demands[customer]
        if load > capacity:
            raise Infeasible(f"{where}: load {load} exceeds the capacity {capacity} at customer {customer}")
        leg = distance(coords, prev, customer)
        legs.append(leg)
        arrival = time + leg
        if arrival > due[customer] + tol:
            raise Infeasible(
                f"{where}: customer {customer} is reached at {arrival!r} after its due date {due[customer]}"
            )
        time = max(arrival, ready[customer]) + service[customer]
        prev = customer
    leg = distance(coords, prev, 0)
    legs.append(leg)
    back = time + leg
    if back > due[0] + tol:
        raise Infeasible(
            f"{where}: returns to the depot at {back!r} after the depot's due date {due[0]} (last customer {prev})"
        )
    return math.fsum(legs)
