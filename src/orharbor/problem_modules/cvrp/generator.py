"""CVRP instances after the design of CVRPLIB's X instances.

Uchoa, E., Pecin, D., Pessoa, A., Poggi, M., Vidal, T. and Subramanian, A.
(2017) "New benchmark instances for the Capacitated Vehicle Routing Problem",
European Journal of Operational Research 257, 845-858. Per seed, and recorded
in ``instance["generator"]``:

* depot placement: ``random`` (uniform on the grid), ``centre`` (500, 500) or
  ``corner`` (0, 0);
* customer placement: ``random`` (uniform), ``clustered`` (``S ~ U{3..8}`` seed
  customers placed uniformly, every other customer drawn uniformly and kept
  with probability ``min(1, sum over seeds of exp(-d / 40))``, d its Euclidean
  distance to the seed: rejection sampling) or ``random-clustered`` (the
  first half clustered that way, the rest uniform);
* demand distribution: ``unitary`` (all 1), ``small-large-var`` U[1,10],
  ``small-small-var`` U[5,10], ``large-large-var`` U[1,100],
  ``large-small-var`` U[50,100], ``quadrant`` (U[1,50] in the odd quadrants,
  where x and y are both < 500 or both >= 500, U[51,100] in the even ones) and
  ``many-small-few-large`` (a share of 70% to 95% of the customers, drawn per
  seed, gets U[1,10], the rest U[50,100]);
* the average route size ``r`` from the triangular distribution on [3, 25]
  with mode 6, as in the paper, kept to two decimals; the capacity is
  ``Q = ceil(r * sum(demands) / n)``, raised to the largest demand if below it.

Coordinates are integers on the 1000 x 1000 grid (0..1000); no two nodes share
a point. The capacity is computed in exact integer arithmetic (r in hundredths).
"""

from __future__ import annotations

import math
import random

from ..seeds import count_rng

SIZES = ("n8", "n20", "n50", "n100", "n200", "n400", "n1000")
GENERATOR_VERSION = 1
#: generate's output pinned: the sha256 (``orharbor.jsonio.digest``) of the instance of ``(seed, size)``.
GOLDEN = {
    (0, "n8"): "9c032118c7ba418afdb8588d488444fb9eab634876ccca08d08a3d101ac73988",
    (7, "n100"): "5686ef55c39b77abc42e6de7ed708cfd84203b873240a5fc1f5c984d1ff45f5b",
    (123456789, "n1000"): "74b1546dd78f18ff7fc9a3a046efc39355021a8951afda1cea4c4cab064e06b3",
}

GRID = 1000
DEPOT_PLACEMENTS = ("random", "centre", "corner")
CUSTOMER_PLACEMENTS = ("random", "clustered", "random-clustered")
DEMAND_TYPES = (
    "unitary",
    "small-large-var",
    "small-small-var",
    "large-large-var",
    "large-small-var",
    "quadrant",
    "many-small-few-large",
)
#: Attraction decay of the clustered placement (Uchoa et al.: exp(-d / 40)).
DECAY = 40.0
#: Triangular distribution of the average route size r: (low, mode, high).
ROUTE_SIZE = (3.0, 6.0, 25.0)


def _point(rng: random.Random) -> tuple[int, int]:
    return rng.randint(0, GRID), rng.randint(0, GRID)


def _clustered(rng: random.Random, count: int, seeds: list[tuple[int, int]], taken: set) -> list[tuple[int, int]]:
    """``count`` points attracted to ``seeds`` by rejection sampling."""
    out: list[tuple[int, int]] = []
    while len(out) < count:
        x, y = _point(rng)
        if (x, y) in taken:
            continue
        p = sum(math.exp(-math.hypot(x - sx, y - sy) / DECAY) for sx, sy in seeds)
        if rng.random() < p:
            taken.add((x, y))
            out.append((x, y))
    return out


def _uniform(rng: random.Random, count: int, taken: set) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    while len(out) < count:
        pt = _point(rng)
        if pt not in taken:
            taken.add(pt)
            out.append(pt)
    return out


def _demands(rng: random.Random, kind: str, customers: list[tuple[int, int]], gen: dict) -> list[int]:
    n = len(customers)
    if kind == "unitary":
        return [1] * n
    ranges = {
        "small-large-var": (1, 10),
        "small-small-var": (5, 10),
        "large-large-var": (1, 100),
        "large-small-var": (50, 100),
    }
    if kind in ranges:
        return [rng.randint(*ranges[kind]) for _ in range(n)]
    if kind == "quadrant":
        return [
            rng.randint(1, 50) if (x < GRID // 2) == (y < GRID // 2) else rng.randint(51, 100) for x, y in customers
        ]
    percent = rng.randint(70, 95)  # many-small-few-large
    small = (n * percent + 50) // 100
    order = list(range(n))
    rng.shuffle(order)
    is_small = [False] * n
    for i in order[:small]:
        is_small[i] = True
    gen["small_percent"] = percent
    gen["n_small"] = small
    return [rng.randint(1, 10) if is_small[i] else rng.randint(50, 100) for i in range(n)]


def generate(seed: int, size: str) -> dict:
    """The instance of ``(seed, size)``: Uchoa et al. (2017) design, every choice drawn per seed."""
    n, derived, rng = count_rng("cvrp", seed, size, SIZES)
    depot_placement = DEPOT_PLACEMENTS[rng.randrange(3)]
    customer_placement = CUSTOMER_PLACEMENTS[rng.randrange(3)]
    demand_type = DEMAND_TYPES[rng.randrange(len(DEMAND_TYPES))]
    r_hundredths = round(100 * rng.triangular(ROUTE_SIZE[0], ROUTE_SIZE[2], ROUTE_SIZE[1]))
    gen: dict = {
        "seed": seed,
        "size": size,
        "version": GENERATOR_VERSION,
        "prng_seed": derived,
        "depot_placement": depot_placement,
        "customer_placement": customer_placement,
        "demand_type": demand_type,
        "route_size": r_hundredths / 100,
    }
    depot = {"centre": (GRID // 2, GRID // 2), "corner": (0, 0)}.get(depot_placement) or _point(rng)
    taken = {depot}
    if customer_placement == "random":
        customers = _uniform(rng, n, taken)
    else:
        n_clustered = n if customer_placement == "clustered" else n // 2
        n_seeds = min(rng.randint(3, 8), n_clustered)
        seeds = _uniform(rng, n_seeds, taken)
        customers = seeds + _clustered(rng, n_clustered - n_seeds, seeds, taken)
        customers += _uniform(rng, n - n_clustered, taken)
        gen["n_cluster_seeds"] = n_seeds
        gen["n_clustered"] = n_clustered
    demands = _demands(rng, demand_type, customers, gen)
    total = sum(demands)
    capacity = -((-r_hundredths * total) // (100 * n))  # ceil(r * total / n), exact
    gen["capacity_from_route_size"] = capacity
    capacity = max(capacity, max(demands))
    return {
        "problem": "cvrp",
        "name": f"cvrp-{size}-s{seed}",
        "n_customers": n,
        "capacity": capacity,
        "coords": [list(depot)] + [list(c) for c in customers],
        "demands": [0] + demands,
        "rounding": "nint",
        "generator": gen,
    }
