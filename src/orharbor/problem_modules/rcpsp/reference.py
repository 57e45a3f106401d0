"""CP-SAT reference for the RCPSP, in the spirit of OR-Tools' ``rcpsp_sat.py`` example.

One interval per activity, ``AddCumulative`` per renewable resource (capacity,
demands), one precedence constraint per arc, and the makespan (no earlier than
every activity's end) minimised. The baseline schedule, or a given schedule
(``hint=``) when that is no worse, is given as a complete solution hint and is
returned if CP-SAT finds nothing in time.
"""

from __future__ import annotations


from .baseline import baseline
from .generator import earliest_starts
from .verify import evaluate

#: The reference method, as the instruction names it.
REFERENCE = (
    "OR-Tools CP-SAT (an interval per activity, a cumulative constraint per resource, the "
    "makespan minimised), started from the naive schedule"
)


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


def reference(
    instance: dict, *, time_limit_s: float, workers: int, seed: int = 0, hint: dict | None = None
) -> tuple[dict, dict]:
    """Best schedule CP-SAT finds within ``time_limit_s`` from the better of its own hint and ``hint``, and its meta."""
    from ortools.sat.python import cp_model

    from orharbor.problem_modules import cpsat, warm_start

    n, n_res = instance["n_activities"], instance["n_resources"]
    durations, demands = instance["durations"], instance["demands"]
    capacities, successors = instance["capacities"], instance["successors"]
    own = baseline(instance)
    start = warm_start.choose(instance, evaluate, warm_start.Start(own, evaluate(instance, own), "baseline"), hint)
    assert isinstance(start.objective, int)  # evaluate's makespan, for our start and a given one alike
    hint_starts = start.solution["starts"]
    horizon = max(sum(durations), start.objective)

    model = cp_model.CpModel()
    starts, ends, intervals = [], [], []
    for i in range(n):
        d = durations[i]
        s = model.new_int_var(0, horizon - d, f"s_{i}")
        e = model.new_int_var(d, horizon, f"e_{i}")
        intervals.append(model.new_interval_var(s, d, e, f"a_{i}"))
        model.add_hint(s, hint_starts[i])
        model.add_hint(e, hint_starts[i] + d)
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
    model.add_hint(makespan, start.objective)
    model.minimize(makespan)

    solver, status, meta = cpsat.solve(model, time_limit_s=time_limit_s, workers=workers, seed=seed)
    return cpsat.finish(
        instance,
        evaluate,
        solver,
        status,
        meta,
        extract=lambda sol: {"starts": [int(sol.value(s)) for s in starts]},
        start=start,
        lower_bound=trivial_lower_bound(instance),
    )
