"""CP-SAT reference for the job shop, after OR-Tools' ``jobshop_sat.py`` example.

One interval per operation, ``NoOverlap`` per machine, precedences inside each
job, makespan = max of the job ends, minimised. The round-robin dispatch
(jobs 0..n-1 in turn), or a given schedule (``hint=``) when that is no worse,
is given as a complete solution hint, which helps a lot on large instances, and
is returned if CP-SAT finds nothing in time.
"""

from __future__ import annotations


from .baseline import dispatch, round_robin
from .verify import evaluate

#: The reference method, as the instruction names it.
REFERENCE = (
    "OR-Tools CP-SAT (an interval per operation, no overlap on each machine, the makespan "
    "minimised), started from a round-robin dispatch"
)


def trivial_lower_bound(instance: dict) -> int:
    """max(longest job, most loaded machine)."""
    jobs = [sum(row) for row in instance["durations"]]
    loads = [0] * instance["n_machines"]
    for route, times in zip(instance["machines"], instance["durations"]):
        for machine, d in zip(route, times):
            loads[machine] += d
    return max(jobs + loads + [0])


def reference(
    instance: dict, *, time_limit_s: float, workers: int, seed: int = 0, hint: dict | None = None
) -> tuple[dict, dict]:
    """Best schedule CP-SAT finds within ``time_limit_s`` from the better of its own hint and ``hint``, and its meta."""
    from ortools.sat.python import cp_model

    from orharbor.problem_modules import cpsat, warm_start

    n, m = instance["n_jobs"], instance["n_machines"]
    machines, durations = instance["machines"], instance["durations"]
    own = dispatch(instance, round_robin(instance))
    own_start = warm_start.Start(own, evaluate(instance, own), "round-robin dispatch")
    start = warm_start.choose(instance, evaluate, own_start, hint)
    assert isinstance(start.objective, int)  # evaluate's makespan, for our start and a given one alike
    hint_starts = start.solution["starts"]
    horizon = max(sum(sum(row) for row in durations), start.objective)  # a given schedule may idle

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
            model.add_hint(s, hint_starts[j][k])
            model.add_hint(e, hint_starts[j][k] + d)
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
    model.add_hint(makespan, start.objective)
    model.minimize(makespan)

    solver, status, meta = cpsat.solve(model, time_limit_s=time_limit_s, workers=workers, seed=seed)
    return cpsat.finish(
        instance,
        evaluate,
        solver,
        status,
        meta,
        extract=lambda sol: {"starts": [[int(sol.value(s)) for s in row] for row in starts]},
        start=start,
        lower_bound=trivial_lower_bound(instance),
    )
