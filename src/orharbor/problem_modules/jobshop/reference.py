"""CP-SAT reference for the job shop, after OR-Tools' ``jobshop_sat.py`` example.

One interval per operation, ``NoOverlap`` per machine, precedences inside each
job, makespan = max of the job ends, minimised. The round-robin dispatch
(jobs 0..n-1 in turn) is given as a solution hint, which helps a lot on large
instances, and is returned if CP-SAT finds nothing in time.
"""

from __future__ import annotations

import math
import time

from .baseline import dispatch, round_robin
from .verify import evaluate


def trivial_lower_bound(instance: dict) -> int:
    """max(longest job, most loaded machine)."""
    jobs = [sum(row) for row in instance["durations"]]
    loads = [0] * instance["n_machines"]
    for route, times in zip(instance["machines"], instance["durations"]):
        for machine, d in zip(route, times):
            loads[machine] += d
    return max(jobs + loads + [0])


def reference(instance: dict, *, time_limit_s: float, workers: int, seed: int = 0) -> tuple[dict, dict]:
    """Best schedule CP-SAT finds within ``time_limit_s``, and its meta record."""
    import ortools
    from ortools.sat.python import cp_model

    n, m = instance["n_jobs"], instance["n_machines"]
    machines, durations = instance["machines"], instance["durations"]
    horizon = sum(sum(row) for row in durations)
    hint = dispatch(instance, round_robin(instance))
    hint_makespan = evaluate(instance, hint)

    model = cp_model.CpModel()
    starts = []
    ends = []
    per_machine: list[list] = [[] for _ in range(m)]
    for j in range(n):
        row_s, row_e = [], []
        for k in range(m):
            d = durations[j][k]
            s = model.new_int_var(0, horizon, f"s_{j}_{k}")
            e = model.new_int_var(0, horizon, f"e_{j}_{k}")
            interval = model.new_interval_var(s, d, e, f"i_{j}_{k}")
            per_machine[machines[j][k]].append(interval)
            model.add_hint(s, hint["starts"][j][k])
            model.add_hint(e, hint["starts"][j][k] + d)
            row_s.append(s)
            row_e.append(e)
        for k in range(1, m):
            model.add(row_s[k] >= row_e[k - 1])
        starts.append(row_s)
        ends.append(row_e)
    for intervals in per_machine:
        if len(intervals) > 1:
            model.add_no_overlap(intervals)
    makespan = model.new_int_var(0, horizon, "makespan")
    model.add_max_equality(makespan, [row[-1] for row in ends])
    model.add_hint(makespan, hint_makespan)
    model.minimize(makespan)

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    t0 = time.perf_counter()
    status = solver.solve(model)
    wall = time.perf_counter() - t0

    lower = trivial_lower_bound(instance)
    meta = {
        "solver": "ortools-cp-sat",
        "version": ortools.__version__,
        "time_limit_s": time_limit_s,
        "workers": workers,
        "seed": seed,
        "wall_time_s": round(wall, 3),
    }
    solution = None
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        candidate = {"starts": [[int(solver.value(s)) for s in row] for row in starts]}
        try:
            objective = evaluate(instance, candidate)
        except ValueError as exc:  # never expected; never hand back an infeasible schedule
            meta["note"] = f"CP-SAT schedule rejected by the verifier ({exc})"
        else:
            solution = candidate
            bound = max(lower, math.ceil(solver.best_objective_bound - 1e-6))
            meta.update(
                status="OPTIMAL" if status == cp_model.OPTIMAL else "FEASIBLE",
                objective=objective,
                bound=min(bound, objective),
            )
    if solution is None:
        meta.setdefault(
            "note",
            f"CP-SAT found no schedule in time ({solver.status_name(status)}); "
            "the round-robin dispatch hint is returned",
        )
        solution = hint
        meta.update(status="FEASIBLE_HINT", objective=hint_makespan, bound=min(lower, hint_makespan))
    return solution, meta
