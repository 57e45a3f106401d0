"""CP-SAT reference for 1 || sum w_j T_j, in the spirit of OR-Tools' scheduling examples.

One fixed-size interval per job on ``[0, P]`` (P = sum of processing times),
one ``NoOverlap`` over all of them, tardiness ``T_j >= end_j - d_j``, ``T_j >= 0``
and ``sum w_j T_j`` minimised. Up to :data:`PRECEDENCE_MAX_JOBS` jobs the model
also gets one Boolean per pair of jobs (which one comes first), each enforcing
its order on the intervals, and ``start_j = sum of p_i over the jobs i before j``
(no idle time). That redundant linear layer gives CP-SAT a useful relaxation:
on wt40 instances 2, 4 and 5 it reaches 1226, 2094 and 990 in 10 s against
1374, 2901 and 1149 for intervals alone (optima 1225, 2094, 990). It has n^2/2
Booleans, so larger instances use intervals alone (where CP-SAT rarely
improves on the hint within seconds).

The best of four cheap sequences (the typical-random-permutation baseline,
earliest due date first, weighted shortest processing time first, and the
apparent tardiness cost rule), or a given sequence (``hint=``) when that is no
worse, is given as a complete solution hint and returned if CP-SAT finds
nothing in time. Without ATC, one CP-SAT worker barely left the
EDD hint on 100 jobs in 60 s (128312 against EDD's 129291, where ATC alone
gives 32698), so the reference was four times a one-line rule. The CP-SAT schedule becomes a
sequence by sorting the jobs by start time, which removes any idle time and so
never increases the objective.
"""

from __future__ import annotations

from fractions import Fraction

from .baseline import baseline
from .verify import evaluate, weighted_tardiness

#: Largest instance that gets the pairwise-order Booleans (n (n-1) / 2 of them).
PRECEDENCE_MAX_JOBS = 200
#: Above this many jobs presolve probing is switched off: on that model it takes
#: seconds at 200 jobs and left CP-SAT with no solution at a 10 s limit.
PROBING_MAX_JOBS = 100

#: The reference method, as the instruction names it.
REFERENCE = (
    "OR-Tools CP-SAT (an interval per job with no overlap, plus an order Boolean per pair of jobs "
    f"up to {PRECEDENCE_MAX_JOBS} jobs), started from the best of the naive order, earliest due date "
    "first, weighted shortest processing time first and the apparent tardiness cost rule"
)
#: Look-ahead parameters K of the ATC rule tried for the hint (Vepsalainen and Morton 1987 suggest 0.5 to 4.5).
ATC_K = (0.5, 1.0, 2.0, 3.0, 4.5)


def edd(instance: dict) -> list[int]:
    """Earliest due date first (ties by index)."""
    d = instance["due_dates"]
    return sorted(range(instance["n_jobs"]), key=lambda j: (d[j], j))


def wspt(instance: dict) -> list[int]:
    """Weighted shortest processing time first: non-increasing w_j / p_j (ties by index)."""
    p, w = instance["processing_times"], instance["weights"]
    # exact ratios; weight-0 jobs last (they never cost anything)
    return sorted(range(instance["n_jobs"]), key=lambda j: (w[j] == 0, Fraction(p[j], w[j]) if w[j] else 0, j))


def atc(instance: dict, k: float) -> list[int]:
    """Apparent tardiness cost (Vepsalainen and Morton 1987): at each step the job of largest
    ``w/p * exp(-max(d - p - t, 0) / (k * mean p))``; zero-length jobs first, ties by index."""
    import math

    p, w, d = instance["processing_times"], instance["weights"], instance["due_dates"]
    left = [j for j in range(instance["n_jobs"]) if p[j] > 0]
    order = [j for j in range(instance["n_jobs"]) if p[j] == 0]
    scale = k * (sum(p) / max(len(left), 1)) or 1.0
    t = 0
    while left:
        best = max(left, key=lambda j: (w[j] / p[j] * math.exp(-max(d[j] - p[j] - t, 0) / scale), -j))
        left.remove(best)
        order.append(best)
        t += p[best]
    return order


def best_rule(instance: dict) -> list[int]:
    """The best of the baseline, EDD, WSPT and ATC (first one wins ties)."""
    candidates = [baseline(instance)["sequence"], edd(instance), wspt(instance), *(atc(instance, k) for k in ATC_K)]
    return min(candidates, key=lambda seq: weighted_tardiness(instance, seq))


def reference(
    instance: dict, *, time_limit_s: float, workers: int, seed: int = 0, hint: dict | None = None
) -> tuple[dict, dict]:
    """Best sequence CP-SAT finds within ``time_limit_s`` from the better of its own hint and ``hint``, and its meta."""
    from ortools.sat.python import cp_model

    from orharbor.problem_modules import cpsat, warm_start

    n = instance["n_jobs"]
    p, w, d = instance["processing_times"], instance["weights"], instance["due_dates"]
    horizon = sum(p)
    own = best_rule(instance)
    own_start = warm_start.Start({"sequence": own}, weighted_tardiness(instance, own), "best sequencing rule")
    start = warm_start.choose(instance, evaluate, own_start, hint)
    hint_start = [0] * n  # the start's sequence back to back from time 0 (its objective)
    clock = 0
    for job in start.solution["sequence"]:
        hint_start[job] = clock
        clock += p[job]

    model = cp_model.CpModel()
    starts, terms = [], []
    intervals = []
    for j in range(n):
        s = model.new_int_var(0, horizon - p[j], f"s_{j}")
        intervals.append(model.new_fixed_size_interval_var(s, p[j], f"i_{j}"))
        model.add_hint(s, hint_start[j])
        starts.append(s)
        late_max = max(0, horizon - d[j])
        if w[j] > 0 and late_max > 0:
            tardy = model.new_int_var(0, late_max, f"t_{j}")
            model.add(tardy >= s + p[j] - d[j])
            model.add_hint(tardy, max(0, hint_start[j] + p[j] - d[j]))
            terms.append(w[j] * tardy)
    if n > 1:
        model.add_no_overlap(intervals)
    if 1 < n <= PRECEDENCE_MAX_JOBS:
        first = {}  # first[i, j] (i < j): job i runs before job j
        for i in range(n):
            for j in range(i + 1, n):
                lit = model.new_bool_var(f"b_{i}_{j}")
                model.add(starts[i] + p[i] <= starts[j]).only_enforce_if(lit)
                model.add(starts[j] + p[j] <= starts[i]).only_enforce_if(~lit)
                model.add_hint(lit, hint_start[i] < hint_start[j])
                first[i, j] = lit
        for j in range(n):
            before = [p[i] * first[i, j] for i in range(j)]
            before += [p[i] * (1 - first[j, i]) for i in range(j + 1, n)]
            model.add(starts[j] == sum(before))
    model.minimize(sum(terms) if terms else 0)

    parameters = {"cp_model_probing_level": 0} if n > PROBING_MAX_JOBS else {}
    solver, status, meta = cpsat.solve(model, time_limit_s=time_limit_s, workers=workers, seed=seed, **parameters)
    return cpsat.finish(
        instance,
        evaluate,
        solver,
        status,
        meta,
        extract=lambda sol: {"sequence": sorted(range(n), key=lambda j: (sol.value(starts[j]), j))},
        start=start,
        lower_bound=0,
    )
