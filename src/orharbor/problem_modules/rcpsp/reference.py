"""CP-SAT reference for the RCPSP, in the spirit of OR-Tools' ``rcpsp_sat.py`` example.

One interval per activity, ``AddCumulative`` per renewable resource (capacity,
demands), one precedence constraint per arc, and the makespan (no earlier than
every activity's end) minimised. The baseline schedule is given as a solution
hint and is returned if CP-SAT finds nothing in time.
"""

from __future__ import annotations

import math
import time

from .baseline import baseline
from .generator import earliest_starts
from .verify import evaluate


def trivial_lower_bound(instance: dict) -> int:
    """max(critical path length, per-resource energy bound ceil(sum d * r / capacity))."""
    durations, demands = instance["durations"], instance["demands"]
    es = earliest_starts(durations, instance["successors"])
    bound = max((s + d for s, d in zip(es, durations)), default=0)
    for k, cap in enumerate(instance["capacities"]):
        energy = sum(d * row[k] for d, row in zip(durations, demands))
        if cap > 0:
            bound = max(bound, -(-energy // cap))
    return bound


def reference(instance: dict, *, time_limit_s: float, workers: int, seed: int = 0) -> tuple[dict, dict]:
    """Best schedule CP-SAT finds within ``time_limit_s``, and its meta record."""
    import ortools
    from ortools.sat.python import cp_model

    n, n_res = instance["n_activities"], instance["n_resources"]
    durations, demands = instance["durations"], instance["demands"]
    capacities, successors = instance["capacities"], instance["successors"]
    horizon = sum(durations)
    hint = baseline(instance)
    hint_makespan = evaluate(instance, hint)
    horizon = max(horizon, hint_makespan)

    model = cp_model.CpModel()
    starts, ends, intervals = [], [], []
    for i in range(n):
        d = durations[i]
        s = model.new_int_var(0, horizon - d, f"s_{i}")
        e = model.new_int_var(d, horizon, f"e_{i}")
        intervals.append(model.new_interval_var(s, d, e, f"a_{i}"))
        model.add_hint(s, hint["starts"][i])
        model.add_hint(e, hint["starts"][i] + d)
        starts.append(s)
        ends.append(e)
    for k in range(n_res):
        used = [(intervals[i], demands[i][k]) for i in range(n) if demands[i][k] > 0 and durations[i] > 0]
        if used:
            model.add_cumulative([iv for iv, _ in used], [r for _, r in used], capacities[k])
    for i in range(n):
        for j in successors[i]:
            model.add(starts[j] >= ends[i])
    makespan = model.new_int_var(0, horizon, "makespan")
    for i in range(n):
        if not successors[i]:
            model.add(makespan >= ends[i])
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
        candidate = {"starts": [int(solver.value(s)) for s in starts]}
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
            f"CP-SAT found no schedule in time ({solver.status_name(status)}); the baseline hint is returned",
        )
        solution = hint
        meta.update(status="FEASIBLE_HINT", objective=hint_makespan, bound=min(lower, hint_makespan))
    return solution, meta
