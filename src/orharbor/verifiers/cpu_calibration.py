"""How fast this machine runs Python, so a level-2 time limit means the same work on any machine.

A row's ``solve_time_limit_s`` was chosen on one machine (the reference); the
build records how long :func:`workload` took there (``reference_workload_s``),
and the verifier times it again before the runs and scales the limit by
``measured / reference``, clamped to :data:`BOUND` (:func:`calibrate`). The
workload is what a ``solve.py`` does: integer and float arithmetic, list and
dict work, a construction and a local search; no I/O, and only small, reused
allocations. It is timed as the best of several runs (interference only ever
slows a run down) and checks its own result, so a changed or broken workload
(or interpreter) is caught instead of silently timing something else.

Standard library only: this module is copied into every task's ``tests/``.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import time

from orharbor.verifiers.solver_run import Limits

#: The factor is kept within [LOW, HIGH]. The machines tasks run on are expected to be within 2x of the reference
#: in single-thread Python speed (one further off is clamped: a slower one gets less time than it needs, never
#: more), and the cap bounds what anything else can buy: a program the agent left running to load the CPU during
#: the calibration (in Harbor's shared mode) can at most double the limit, which the task's verifier timeout
#: allows for (:func:`verifier_time_limit_s`).
LOW, HIGH = 0.5, 2.0
BOUND = (LOW, HIGH)
#: Runs of the workload timed; the fastest counts.
RUNS = 5
#: What :func:`workload` returns; any other value means the workload or the interpreter changed.
CHECKSUM = 879_794_578_617_569_958

_MODULUS = (1 << 61) - 1
_POINTS = 250
_KNAPSACK_ITEMS = 160
_KNAPSACK_CAPACITY = 6000


class CalibrationError(RuntimeError):
    """The workload computed something else than it always does: it was edited, or the interpreter is broken."""


def workload() -> int:
    """A fixed, deterministic piece of solver-like work (about 0.2 s where it was written); its checksum."""
    rng = _Lcg(20240611)
    xs = [rng.below(10_000) / 7.0 for _ in range(_POINTS)]
    ys = [rng.below(10_000) / 7.0 for _ in range(_POINTS)]
    dist = [[math.sqrt((xs[i] - xs[j]) ** 2 + (ys[i] - ys[j]) ** 2) for j in range(_POINTS)] for i in range(_POINTS)]
    tour = _nearest_neighbour(dist)
    length = _two_opt(tour, dist)
    best = _knapsack(rng)
    buckets = _edge_buckets(tour, dist)
    checksum = round(length * 1000)
    for position, city in enumerate(tour):
        checksum = (checksum * 31 + city * (position + 1)) % _MODULUS
    for key in sorted(buckets):
        checksum = (checksum * 131 + key * 7 + buckets[key]) % _MODULUS
    return (checksum * 1_000_003 + best) % _MODULUS


def workload_s(runs: int = RUNS) -> float:
    """Seconds the fastest of ``runs`` runs of :func:`workload` took here; CalibrationError if a result is off."""
    best = math.inf
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()  # a collection falling into one run but not another is noise, not speed
    try:
        for _ in range(runs):
            start = time.perf_counter()
            result = workload()
            elapsed_s = time.perf_counter() - start
            if result != CHECKSUM:
                raise CalibrationError(f"the CPU calibration workload returned {result}, not {CHECKSUM}")
            best = min(best, elapsed_s)
    finally:
        if was_enabled:
            gc.enable()
    return best


def factor(measured_s: float, reference_s: float) -> float:
    """How much longer this machine takes than the reference, clamped to :data:`BOUND`."""
    return min(HIGH, max(LOW, measured_s / reference_s))


def calibrate(solve_time_limit_s: float, reference_workload_s: float, measure=None) -> dict:
    """details.json's ``cpu_calibration``: the workload timed here (by ``measure``, default :func:`workload_s`),
    the factor, the bound and the scaled limit."""
    measured = (measure or workload_s)()
    scale = factor(measured, reference_workload_s)
    return {
        "workload_s": measured,
        "reference_workload_s": reference_workload_s,
        "factor": scale,
        "bound": [LOW, HIGH],
        "solve_time_limit_s": solve_time_limit_s * scale,
    }


def calibrated_limits(limits: Limits, reference_workload_s: float | None, measure=None) -> tuple[Limits, dict | None]:
    """``limits`` with the time limit scaled to this machine, and the calibration's record.

    Without a ``reference_workload_s`` (a task built without one): ``limits`` unchanged, nothing measured, None.
    """
    if reference_workload_s is None:
        return limits, None
    record = calibrate(limits.solve_time_limit_s, reference_workload_s, measure)
    return dataclasses.replace(limits, solve_time_limit_s=record["solve_time_limit_s"]), record


def verifier_time_limit_s(solve_time_limit_s: float, calibrated: bool) -> float:
    """The longest a run may take once scaled: the limit itself, or HIGH times it on a calibrated task."""
    return solve_time_limit_s * (HIGH if calibrated else 1.0)


class _Lcg:
    """A 64-bit linear congruential generator: the same numbers on every platform and Python."""

    def __init__(self, seed: int):
        self.state = seed

    def below(self, n: int) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        return (self.state >> 33) % n


def _nearest_neighbour(dist: list[list[float]]) -> list[int]:
    n = len(dist)
    tour, seen = [0], [False] * n
    seen[0] = True
    for _ in range(n - 1):
        row = dist[tour[-1]]
        nxt = min((j for j in range(n) if not seen[j]), key=row.__getitem__)
        seen[nxt] = True
        tour.append(nxt)
    return tour


def _two_opt(tour: list[int], dist: list[list[float]]) -> float:
    """First-improvement 2-opt to a local optimum, in place; the tour's length."""
    n = len(tour)
    improved = True
    while improved:
        improved = False
        for i in range(n - 2):
            a, b = tour[i], tour[i + 1]
            row_a, d_ab = dist[a], dist[a][b]
            for j in range(i + 2, n if i else n - 1):
                c, d = tour[j], tour[(j + 1) % n]
                if row_a[c] + dist[b][d] < d_ab + dist[c][d] - 1e-9:
                    tour[i + 1 : j + 1] = tour[i + 1 : j + 1][::-1]
                    improved = True
                    b, d_ab = tour[i + 1], row_a[tour[i + 1]]
    return sum(dist[tour[k]][tour[(k + 1) % n]] for k in range(n))


def _knapsack(rng: _Lcg) -> int:
    """0/1 knapsack by dynamic programming over one reused list of ints."""
    best = [0] * (_KNAPSACK_CAPACITY + 1)
    for _ in range(_KNAPSACK_ITEMS):
        weight, value = 1 + rng.below(120), 1 + rng.below(1000)
        for cap in range(_KNAPSACK_CAPACITY, weight - 1, -1):
            if best[cap - weight] + value > best[cap]:
                best[cap] = best[cap - weight] + value
    return best[_KNAPSACK_CAPACITY]


def _edge_buckets(tour: list[int], dist: list[list[float]]) -> dict[int, int]:
    """How many edges of every city to every other fall in each length bucket (dict work)."""
    buckets: dict[int, int] = {}
    for city in tour:
        for other, d in enumerate(dist[city]):
            if other != city:
                key = int(d // 50)
                buckets[key] = buckets.get(key, 0) + 1
    return buckets
