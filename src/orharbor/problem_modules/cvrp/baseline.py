"""The naive CVRP routes: the median of a fixed set of random customer orders, split by capacity.

The issue asked for the index order 1, 2, ..., n split greedily by capacity
(a new route whenever the next customer would exceed it). Coordinates are drawn
independently of the index, so that is one random order: right on average over
instances, but on a single instance one noisy sample. Against it, 100 random
orders split the same way averaged rewards of 0.073, -0.172, -0.011, -0.103,
0.081, -0.152, 0.144 and -0.056 on n50 seeds 0-7 (reference: routing at 1 s),
twice outside the 0.15 that DESIGN.md allows. So, as in the jobshop module, the
baseline splits 31 fixed pseudo-random orders the same way and keeps the one
with the median total distance; random orders then averaged -0.015, -0.002,
0.034, 0.005, 0.005, -0.002, 0.004 and -0.008 on the same instances.
"""

from __future__ import annotations

import random

from ..packing import next_fit
from .verify import distance_function, route_length

#: How many fixed pseudo-random orders the baseline splits and scores.
N_ORDERS = 31
#: Order i is ``random.Random(ORDER_SEED + i).shuffle`` of the index order 1..n.
ORDER_SEED = 1_000_003

BASELINE = (
    "Typical random order, split by capacity. The baseline shuffles the customers 1..n with "
    f"{N_ORDERS} fixed pseudo-random seeds (Python's random.Random({ORDER_SEED} + i).shuffle of "
    f"the index order, i = 0..{N_ORDERS - 1}); each order is cut into routes greedily: a customer "
    "joins the current route while the route's total demand stays within the capacity, else it "
    "starts a new route. Of the 31 route sets it keeps the one with the median total distance "
    "(the first such order on ties). Feasible by construction (every demand is at most the "
    "capacity), deterministic, and no attempt to optimise, so it is about as good as a random "
    "feasible answer."
)


def split(instance: dict, order: list[int]) -> list[list[int]]:
    """Greedy capacity split of a customer order into routes."""
    return next_fit(order, instance["demands"].__getitem__, instance["capacity"])


def random_order(instance: dict, i: int) -> list[int]:
    """Customer order ``i`` of the fixed set."""
    order = list(range(1, instance["n_customers"] + 1))
    random.Random(ORDER_SEED + i).shuffle(order)
    return order


def baseline(instance: dict) -> dict:
    """The split of the fixed set's order whose total distance is the median of the 31."""
    d = distance_function(instance)
    candidates = [split(instance, random_order(instance, i)) for i in range(N_ORDERS)]
    lengths = [sum(route_length(d, r) for r in routes) for routes in candidates]
    ranked = sorted(range(N_ORDERS), key=lambda i: (lengths[i], i))
    return {"routes": candidates[ranked[N_ORDERS // 2]]}
