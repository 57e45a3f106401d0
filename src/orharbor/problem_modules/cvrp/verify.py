"""CVRP verifier: standard library only (copied into every task).

``evaluate(instance, solution)`` returns the total distance of a set of routes
or raises :class:`Infeasible` naming the first broken rule. The instance is
trusted (it is ours); the solution is not: its shape, integers and the
every-customer-exactly-once rule are checked by the shared ``read_routes``,
then every route's load against the capacity. Linear time in the solution size.

Distances: with ``"rounding": "nint"`` (CVRPLIB X instances, TSPLIB EUC_2D)
``d(i, j) = int(math.sqrt(dx*dx + dy*dy) + 0.5)`` on the integer coordinates;
with ``"rounding": "explicit"`` ``d(i, j) = distances[i][j]`` from the instance.
"""

from __future__ import annotations

import math

from orharbor.verifiers.routes import read_routes
from orharbor.verifiers.strict import Infeasible

__all__ = ["Infeasible", "distance_function", "evaluate", "route_length"]


def distance_function(instance: dict):
    """``d(i, j)`` of the instance's rounding rule (nodes 0..n, 0 the depot)."""
    rounding = instance["rounding"]
    if rounding == "nint":
        coords = instance["coords"]

        def nint(i: int, j: int) -> int:
            dx = coords[i][0] - coords[j][0]
            dy = coords[i][1] - coords[j][1]
            return int(math.sqrt(dx * dx + dy * dy) + 0.5)

        return nint
    if rounding == "explicit":
        matrix = instance["distances"]
        return lambda i, j: matrix[i][j]
    raise ValueError(f"unknown rounding rule {rounding!r} (expected 'nint' or 'explicit')")


def route_length(d, route: list[int]) -> int:
    """Length of depot -> route[0] -> ... -> route[-1] -> depot."""
    total = 0
    previous = 0
    for customer in route:
        total += d(previous, customer)
        previous = customer
    return total + d(previous, 0)


def evaluate(instance: dict, solution) -> int:
    """Total distance of ``solution = {"routes": [[customer, ...], ...]}``."""
    n = instance["n_customers"]
    capacity = instance["capacity"]
    demands = instance["demands"]
    read_routes(solution, n)  # shape, integers, range, depot inside, each customer exactly once
    d = distance_function(instance)
    total = 0
    for r, route in enumerate(solution["routes"]):
        if not route:
            continue
        load = 0
        for customer in route:
            load += demands[customer]
        if load > capacity:
            raise Infeasible(f"solution.routes[{r}]: route {r} carries a load of {load}, over the capacity {capacity}")
        total += route_length(d, route)
    return total
