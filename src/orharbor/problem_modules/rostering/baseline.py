"""The naive roster: the first feasible roster CP-SAT finds, the objective ignored.

Feasibility alone needs search here (sequence, weekend and total-minutes rules
interact), so there is no constructive rule to feed an arbitrary order to.
The hard constraints never link two employees, so the baseline solves one small
model per employee (the reference's hard model restricted to that employee),
without an objective and with fixed parameters (one worker, random seed 0,
stop at the first solution): reproducible for a given OR-Tools version, and
blind to requests and cover. One model for everyone found its first solution
in 2 s on d28e30s4 but none in 120 s on d182e100s8; one model per employee
takes about 2 s and 20-25 s. ``build-dataset`` precomputes the baseline and stores it
in the dataset rows; it is never recomputed inside a task.
"""

from __future__ import annotations

from .model import hard_model, row_from

#: Wall-clock allowance for one employee's first feasible line (milliseconds in practice).
TIME_LIMIT_S = 60.0

BASELINE = (
    "First feasible roster found by CP-SAT with the objective ignored. For each employee in turn "
    "the baseline builds that employee's hard constraints only (at most one shift a day, forbidden "
    "successions, maximum shifts per type, total minutes, consecutive shifts and days off, weekends, "
    "required days off; no constraint links two employees), with no objective at all, and takes the "
    "first solution CP-SAT finds with fixed parameters (num_workers=1, random_seed=0, "
    "stop_after_first_solution=True): feasible, reproducible for a given OR-Tools version, and "
    "blind to requests and cover, so it is about as good as an arbitrary feasible roster. It is "
    "precomputed when the dataset is built."
)


def baseline(instance: dict) -> dict:
    """CP-SAT's first feasible line of every employee, one small model each (ValueError if one has none)."""
    from ortools.sat.python import cp_model

    from orharbor.problem_modules import cpsat

    roster = {}
    for e, staff in enumerate(instance["staff"]):
        model, x, _, _ = hard_model(instance, cp_model, employees=[e])
        solver, status, _ = cpsat.solve(
            model, time_limit_s=TIME_LIMIT_S, workers=1, seed=0, stop_after_first_solution=True
        )
        if not cpsat.found(status):
            raise ValueError(
                f"CP-SAT found no feasible line for employee {staff['id']} "
                f"({solver.status_name(status)}): the instance is infeasible"
            )
        roster[staff["id"]] = row_from(instance, x, e, solver.boolean_value)
    return {"roster": roster}
