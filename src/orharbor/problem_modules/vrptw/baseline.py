"""The naive VRPTW routes: the typical one of 31 fixed random first-fit constructions.

``construct(instance, order)`` walks the customers in ``order`` and appends
each to the current route if the route's load stays within the capacity, the
customer is reached by its due date and the vehicle can still return to the
depot by the depot's due date (the same float arithmetic and tolerance as the
verifier); otherwise the current route is closed and a new one starts with
that customer. Every customer fits a route of its own (generated instances
guarantee it; for read files, where a lone customer might not fit, it still
gets its own route and the verifier will say why), so the result is feasible
by construction.

Why not simply the index order, as the issue asks? Customer numbers carry no
information, so the index order is one random order: right on average, but on
one instance it is one noisy sample. Against it, 100 random orders built the
same way averaged rewards of -0.078, 0.011, -0.120, -0.062, -0.107, 0.060,
-0.193 and -0.472 on n25 seeds 0-7 (reference: 1 s of OR-Tools routing),
often outside the 0.15 that DESIGN.md allows. So, as in the jobshop and
wtardiness modules, the baseline is chosen from 31 fixed pseudo-random
orders: the construction whose total distance is closest to the mean of the
31 (the median gave nearly the same: -0.02 to 0.05). Random answers then
averaged -0.001 to 0.043 on the same instances, and -0.006 to 0.028 on n50
seeds 0-2.
"""

from __future__ import annotations

import math
import random

from .verify import TOL, distance

#: How many fixed pseudo-random orders the baseline builds.
N_ORDERS = 31
#: Order i is ``random.Random(ORDER_SEED + i).shuffle`` of the index order 1..n.
ORDER_SEED = 1_000_003

BASELINE = (
    "Typical random first-fit routes. The baseline shuffles the customers 1, 2, ..., n with "
    f"{N_ORDERS} fixed pseudo-random seeds (Python's random.Random({ORDER_SEED} + i).shuffle for "
    f"i = 0..{N_ORDERS - 1}); for each order it takes the customers in turn and appends each to the end of the current route when the route's "
    "total demand stays within the vehicle capacity, the vehicle (leaving the depot at its ready "
    "time, waiting where it is early, serving each customer for its service time) reaches the "
    "customer by its due date, and it can still drive back to the depot by the depot's due date; "
    "otherwise it closes the route and opens a new one with that customer. Of the 31 route sets "
    "it keeps the one whose total distance is closest to the mean of the 31 (the first such on "
    "ties): feasible by construction, deterministic, and no attempt to optimise, so it is about as "
    "good as a random feasible answer."
)


def random_order(instance: dict, i: int) -> list[int]:
    """Customer order ``i`` of the fixed set."""
    order = list(range(1, instance["n_customers"] + 1))
    random.Random(ORDER_SEED + i).shuffle(order)
    return order


def baseline(instance: dict) -> dict:
    """The first-fit routes of the fixed set whose total distance is closest to the set's mean."""
    candidates = [construct(instance, random_order(instance, i)) for i in range(N_ORDERS)]
    objectives = [total(instance, c) for c in candidates]
    mean = math.fsum(objectives) / N_ORDERS
    best = min(range(N_ORDERS), key=lambda i: (abs(objectives[i] - mean), i))
    return candidates[best]


def construct(instance: dict, order) -> dict:
    """Routes built by appending the customers of ``order`` while capacity and windows allow."""
    coords, demands = instance["coords"], instance["demands"]
    ready, due, service = instance["ready"], instance["due"], instance["service"]
    capacity = instance["capacity"]
    tol = instance.get("time_tolerance", TOL)
    start = float(ready[0])
    routes: list[list[int]] = []
    route: list[int] = []
    load, time, prev = 0, start, 0
    for c in order:
        if route:
            arrival = time + distance(coords, prev, c)
            leave = max(arrival, ready[c]) + service[c]
            if (
                load + demands[c] <= capacity
                and arrival <= due[c] + tol
                and leave + distance(coords, c, 0) <= due[0] + tol
            ):
                route.append(c)
                load, time, prev = load + demands[c], leave, c
                continue
            routes.append(route)
        arrival = start + distance(coords, 0, c)
        route = [c]
        load, time, prev = demands[c], max(arrival, ready[c]) + service[c], c
    if route:
        routes.append(route)
    return {"routes": routes}


def total(instance: dict, solution: dict) -> float:
    """Total distance of trusted routes (no checks)."""
    coords = instance["coords"]
    legs: list[float] = []
    for route in solution["routes"]:
        stops = [0, *route, 0]
        legs.extend(distance(coords, a, b) for a, b in zip(stops, stops[1:]))
    return math.fsum(legs)
