"""CP-SAT reference for shift scheduling, in the style of OR-Tools' ``shift_scheduling_sat.py``.

The model (:mod:`.model`) has the benchmark's hard constraints as constraints
and its penalties as the objective.

The search starts from the baseline, or from a given roster (``hint=``) when
that is no worse (a complete hint, every variable set), and never returns
anything worse. First the whole model is solved for a third of
the time left, by one worker with linearization level 2: that proves the
published optima 607, 828 and 1001 of Instances 1-3 in 1, 3 and 18 s. If it is
not proved optimal, the rest of the time goes to an employee LNS
(:func:`improve`, ``workers`` threads per step): CP-SAT re-optimises a few
employees' lines at a time, the others fixed. That scales where the whole
model does not: with one worker and 10 s from the baseline's 25347 on
d28e30s4 (seed 0), the whole model reached 25247, CP-SAT's own LNS subsolvers
3667, the employee LNS 3216. Models above :data:`FULL_MODEL_MAX_VARIABLES`
Booleans go straight to the LNS. The time limit covers everything (baseline,
model building, both phases). ``bound`` is the whole model's best proven bound
(0 when it was skipped).
"""

from __future__ import annotations

import math
import random
import time

from .baseline import baseline
from .model import add_hint, hard_model, objective_terms, row_from
from .verify import evaluate, penalty

#: CP-SAT's linearization level 2 puts the sequence clauses into the LP: with one
#: worker it proves 828 on Instance2 in 4 s and 1001 on Instance3 in 18 s, where
#: the default level had reached 832 and 1226 after 60 s with bounds 208 and 1.
#: The whole model is therefore solved by CP-SAT's single main search (one worker):
#: with two workers CP-SAT runs ``default_lp`` (level 1) and LNS threads instead,
#: and had proved nothing on Instance2 after 20 s (832, bound 210).
LINEARIZATION = 2
#: Share of the time left for the full model (it proves small instances optimal); the rest
#: goes to the employee LNS of :func:`improve`, from the best roster so far.
PROOF_SHARE = 1 / 3
#: Larger models (employee-day-shift Booleans) skip the full model: on d182e100s8
#: (118k Booleans) CP-SAT's presolve alone took 43 s.
FULL_MODEL_MAX_VARIABLES = 40_000
#: Time limit of one LNS step, and the least time worth a step.
LNS_STEP_S = 1.0
LNS_MIN_STEP_S = 0.2

#: The reference method, as the instruction names it.
REFERENCE = (
    "OR-Tools CP-SAT started from the naive roster: the whole model for a third of the time "
    f"(up to {FULL_MODEL_MAX_VARIABLES:,} shift variables), then, unless that proved it optimal, "
    "re-solving a few employees' rosters at a time with the others fixed"
)


def improve(instance: dict, rows: list[list[str]], deadline: float, workers: int, seed: int) -> tuple[list, int]:
    """``(rows, steps)``: employee LNS until ``deadline`` (``time.perf_counter()``) from the feasible ``rows``.

    Each step re-optimises the lines of ``size`` employees with CP-SAT, the
    other lines fixed (their cover counted as constants), and keeps the result
    when the penalty drops. Hard constraints never link two employees, so every
    step's roster is feasible. Employees are taken in sweeps (a shuffled order,
    ``size`` at a time); ``size`` starts at 1, grows by one after a whole sweep
    without improvement and shrinks by one when a step runs out of time. On
    d28e30s4 (seed 0) single employees took 25347 to 3099 in 10 s; pairs from
    the start only to 4525 (each step is slower).
    """
    from ortools.sat.python import cp_model

    from orharbor.problem_modules import cpsat

    rng = random.Random(seed)
    n = len(instance["staff"])
    best = penalty(instance, rows)
    order: list[int] = []
    size, stale, steps = 1, 0, 0
    while deadline - time.perf_counter() > LNS_MIN_STEP_S:
        if len(order) < size:
            order = list(range(n))
            rng.shuffle(order)
        subset, order = sorted(order[:size]), order[size:]
        chosen = set(subset)
        fixed: dict[tuple[int, str], int] = {}
        for e in range(n):
            if e not in chosen:
                for d, shift in enumerate(rows[e]):
                    fixed[d, shift] = fixed.get((d, shift), 0) + 1
        model, x, work, weekend = hard_model(instance, cp_model, employees=subset)
        terms, constant, cover = objective_terms(instance, model, x, subset, fixed)
        model.minimize(sum(terms) + constant)
        add_hint(model, instance, rows, x, work, weekend, cover)
        left = deadline - time.perf_counter()
        budget_s = max(0.05, left if size == n else min(LNS_STEP_S, left))  # everyone at once: all the time
        solver, status, _ = cpsat.solve(
            model, time_limit_s=budget_s, workers=workers, seed=seed + steps, linearization_level=LINEARIZATION
        )
        steps += 1
        stale += 1
        if cpsat.found(status):
            candidate = list(rows)
            for e in subset:
                candidate[e] = row_from(instance, x, e, solver.boolean_value)
            value = penalty(instance, candidate)
            if value < best:
                rows, best, stale = candidate, value, 0
        if size == n:
            break
        if status != cp_model.OPTIMAL and size > 1:
            size, stale = size - 1, 0
        elif stale * size >= n:
            size, stale = size + 1, 0
    return rows, steps


def reference(
    instance: dict, *, time_limit_s: float, workers: int, seed: int = 0, hint: dict | None = None
) -> tuple[dict, dict]:
    """Best roster found within ``time_limit_s`` (baseline and model building included) from the better of the
    baseline and ``hint``, and its meta."""
    import ortools
    from ortools.sat.python import cp_model

    from orharbor.problem_modules import cpsat, warm_start

    clock = time.perf_counter()
    deadline = clock + time_limit_s
    ids = [staff["id"] for staff in instance["staff"]]
    base = baseline(instance)
    start = warm_start.choose(instance, evaluate, warm_start.Start(base, evaluate(instance, base), "baseline"), hint)
    rows = [start.solution["roster"][e] for e in ids]
    meta = {
        "solver": "ortools-cp-sat",
        "version": ortools.__version__,  # type: ignore[attr-defined]  # stubs lack it
        "time_limit_s": time_limit_s,
        "workers": workers,
        "seed": seed,
        "hint": start.record(),
    }
    status, bound = "FEASIBLE", 0
    size = sum(sum(1 for m in staff["max_shifts"].values() if m) for staff in instance["staff"]) * instance["horizon"]
    if size <= FULL_MODEL_MAX_VARIABLES:
        model, x, work, weekend = hard_model(instance, cp_model)
        terms, constant, cover = objective_terms(instance, model, x)
        model.minimize(sum(terms) + constant)
        add_hint(model, instance, rows, x, work, weekend, cover)
        left = max(0.1, deadline - time.perf_counter())
        solver, code, _ = cpsat.solve(
            model, time_limit_s=left * PROOF_SHARE, workers=1, seed=seed, linearization_level=LINEARIZATION
        )
        if cpsat.found(code):
            found = [row_from(instance, x, e, solver.boolean_value) for e in range(len(ids))]
            if penalty(instance, found) <= penalty(instance, rows):
                rows = found
            bound = math.ceil(solver.best_objective_bound - 1e-6)
            status = cpsat.status_name(code)
    if status != "OPTIMAL":
        rows, meta["lns_steps"] = improve(instance, rows, deadline, workers, seed)
    solution = {"roster": dict(zip(ids, rows))}
    objective: int | float
    try:
        objective = evaluate(instance, solution)
    except ValueError as exc:  # never expected; never hand back an infeasible answer
        solution, objective, status = start.solution, start.objective, "FEASIBLE_HINT"
        meta["note"] = f"roster rejected by the verifier ({exc}); its start ({start.origin}) is returned"
    meta.update(
        status=status,
        objective=objective,
        bound=min(max(0, bound), objective),
        wall_time_s=round(time.perf_counter() - clock, 3),
    )
    return solution, meta
