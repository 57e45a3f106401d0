"""VRPTW instances after Solomon (1987) and Gehring and Homberger (1999).

Solomon, M.M. (1987) "Algorithms for the vehicle routing and scheduling
problems with time window constraints", Operations Research 35, 254-265;
Gehring, H. and Homberger, J. (1999) extended the same design to 200-1000
customers. Per seed this module draws:

- the coordinate type: random (R, uniform integer points), clustered (C,
  integer points scattered around a few cluster centres) or mixed (RC, half of
  each), on the 100 x 100 grid, with Solomon's depot (35, 35) for R and
  (40, 50) for C and RC;
- the horizon type: 1 (short horizon, vehicle capacity 200) or 2 (long
  horizon, capacity 1000 for R and RC, 700 for C), with Solomon's depot due
  dates (R1 230, C1 1236, RC1 240, R2 1000, C2 3390, RC2 960) and service
  times (10 for R and RC, 90 for C);
- the share of customers with a tight time window, from 25, 50, 75 and 100 %;
  the others get the whole horizon ``[0, depot due]``;
- the mean half-width of the tight windows, a fraction of the horizon from
  :data:`WIDTH_LEVELS`; each half-width is ``round(N(mu, mu / 4))``, at least 1.

Demands are integers uniform on 1..50. A tight window is centred on an integer
``c`` uniform on ``[ceil(t), floor(H - t - s)]`` where ``t`` is the distance from
the depot, ``s`` the service time and ``H`` the depot's due date: the trip
depot -> customer -> depot then meets the window and the horizon, so every
instance is feasible (one route per customer) by construction.
"""

from __future__ import annotations

import math

from ..seeds import count_rng

SIZES = ("n8", "n25", "n50", "n100", "n200", "n400", "n1000")
GENERATOR_VERSION = 1
#: generate's output pinned: the sha256 (``orharbor.jsonio.digest``) of the instance of ``(seed, size)``.
GOLDEN = {
    (0, "n8"): "f71e6936ed0bc11578331bf3ffb988802b7491941056c04ab9f02569d10eff1c",
    (7, "n100"): "f1599762339ecdc84c5595c58709376ba5273ae908224dc13868f20555c33bf3",
    (123456789, "n1000"): "f96737fad2b0122aa1b6358f744f861bbf54a819610343fcdfd0bea7c3f975a9",
}

#: Coordinate types: random, clustered, mixed; on the GRID x GRID square.
TYPES = ("R", "C", "RC")
GRID = 100
DEPOT = {"R": (35, 35), "C": (40, 50), "RC": (40, 50)}
SERVICE = {"R": 10, "C": 90, "RC": 10}
#: (type, horizon class) -> (capacity, depot due date), as in Solomon's sets.
FLEET = {
    ("R", 1): (200, 230),
    ("C", 1): (200, 1236),
    ("RC", 1): (200, 240),
    ("R", 2): (1000, 1000),
    ("C", 2): (700, 3390),
    ("RC", 2): (1000, 960),
}
TIGHT_SHARES = (25, 50, 75, 100)
#: Mean half-width of a tight window as a fraction of the horizon.
WIDTH_LEVELS = (0.02, 0.05, 0.1, 0.2)
DEMAND_RANGE = (1, 50)
#: Customers per cluster (about) for clustered coordinates; cluster spread (std. dev.).
CLUSTER_SIZE = 10
CLUSTER_SIGMA = 4.0
#: Largest number of clusters (the grid stays 100 x 100).
MAX_CLUSTERS = 30


def _clip(v: int) -> int:
    return min(GRID, max(0, v))


def generate(seed: int, size: str) -> dict:
    """The instance of ``(seed, size)``: Solomon / Gehring-Homberger design, parameters drawn per seed."""
    n, derived, rng = count_rng("vrptw", seed, size, SIZES)
    ctype = TYPES[rng.randrange(3)]
    htype = 1 + rng.randrange(2)
    share = TIGHT_SHARES[rng.randrange(4)]
    width = WIDTH_LEVELS[rng.randrange(4)]
    capacity, horizon = FLEET[ctype, htype]
    service_time = SERVICE[ctype]

    n_clustered = {"R": 0, "C": n, "RC": n // 2}[ctype]
    n_clusters = min(MAX_CLUSTERS, max(2, round(n_clustered / CLUSTER_SIZE))) if n_clustered else 0
    centres = [(rng.randint(10, GRID - 10), rng.randint(10, GRID - 10)) for _ in range(n_clusters)]
    coords = [list(DEPOT[ctype])]
    for i in range(n):
        if i < n_clustered:
            cx, cy = centres[rng.randrange(n_clusters)]
            coords.append(
                [_clip(cx + round(rng.gauss(0.0, CLUSTER_SIGMA))), _clip(cy + round(rng.gauss(0.0, CLUSTER_SIGMA)))]
            )
        else:
            coords.append([rng.randint(0, GRID), rng.randint(0, GRID)])
    if ctype == "RC":  # shuffle, so customer numbers say nothing about random or clustered
        body = coords[1:]
        rng.shuffle(body)
        coords[1:] = body
    demands = [0] + [rng.randint(*DEMAND_RANGE) for _ in range(n)]
    tight = set(rng.sample(range(1, n + 1), round(n * share / 100)))
    mu = width * horizon
    ready, due = [0], [horizon]
    for i in range(1, n + 1):
        if i not in tight:
            ready.append(0)
            due.append(horizon)
            continue
        dx, dy = coords[i][0] - coords[0][0], coords[i][1] - coords[0][1]
        t = math.sqrt(dx * dx + dy * dy)
        lo, hi = math.ceil(t), math.floor(horizon - t - service_time)
        if lo > hi:  # never with these grids and horizons; guards the by-construction claim
            raise AssertionError(f"customer {i} cannot be served within the horizon")
        centre = rng.randint(lo, hi)
        half = max(1, round(rng.gauss(mu, mu / 4)))
        ready.append(max(0, centre - half))
        due.append(min(horizon, centre + half))
    return {
        "problem": "vrptw",
        "name": f"vrptw-{size}-s{seed}",
        "n_customers": n,
        "n_vehicles": max(2, math.ceil(n / 4)),
        "capacity": capacity,
        "coords": coords,
        "demands": demands,
        "ready": ready,
        "due": due,
        "service": [0] + [service_time] * n,
        "time_tolerance": 1e-6,
        "generator": {
            "seed": seed,
            "size": size,
            "version": GENERATOR_VERSION,
            "prng_seed": derived,
            "coordinate_type": ctype,
            "horizon_type": htype,
            "tight_window_share_percent": share,
            "mean_half_width_fraction": width,
            "mean_half_width": mu,
            "n_clusters": n_clusters,
            "cluster_centres": [list(c) for c in centres],
            "tight_customers": sorted(tight),
            "capacity": capacity,
            "horizon": horizon,
            "service_time": service_time,
        },
    }
