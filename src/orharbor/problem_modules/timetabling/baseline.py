"""The naive timetable: the first feasible one CP-SAT finds, with the objective ignored.

For timetabling even feasibility needs search (DESIGN.md), so the naive answer
comes from a solver run with fixed parameters: one worker, random seed 0, stop
at the first solution, no objective. The model decides only which periods each
course takes (every room is alike for the hard constraints); rooms are then
handed out in index order within each period. The answer is reproducible for a
given OR-Tools version and is precomputed by ``build-dataset``, never
recomputed inside a task.
"""

from __future__ import annotations

#: CP-SAT's random seed for the baseline run.
BASELINE_SEED = 0
#: The baseline run gives up after this long (generated instances take well under a second).
BASELINE_TIME_LIMIT_S = 600.0

BASELINE = (
    "First feasible timetable. CP-SAT gets the hard constraints only, with no objective: one "
    "Boolean per course and period that is not unavailable to the course (is a lecture of the "
    "course given then), each course's Booleans summing to its number of lectures, at most one "
    "lecture per period for each curriculum and for each teacher, and at most as many lectures "
    "per period as there are rooms. It runs with one worker, random seed "
    f"{BASELINE_SEED} and stop_after_first_solution, and the first solution it finds is kept; in "
    "each period the courses, in instance order, then get the rooms in instance order. Feasible, "
    "deterministic for a given OR-Tools version, and no attempt to optimise the penalties."
)


def periods_model(instance: dict):
    """``(model, x)``: CP-SAT's hard-constraint model, ``x[c, slot]`` for the allowed course-period pairs."""
    from ortools.sat.python import cp_model

    ppd = instance["periods_per_day"]
    n_slots = instance["days"] * ppd
    courses = instance["courses"]
    index = {c["id"]: i for i, c in enumerate(courses)}
    blocked = {(index[c], d * ppd + p) for c, d, p in instance["unavailability"]}
    model = cp_model.CpModel()
    x = {
        (ci, s): model.new_bool_var(f"x_{ci}_{s}")
        for ci in range(len(courses))
        for s in range(n_slots)
        if (ci, s) not in blocked
    }
    for ci, c in enumerate(courses):
        model.add(sum(x[ci, s] for s in range(n_slots) if (ci, s) in x) == c["lectures"])
    groups: dict[str, list[int]] = {}
    for ci, c in enumerate(courses):
        groups.setdefault("teacher " + c["teacher"], []).append(ci)
    for q in instance["curricula"]:
        groups["curriculum " + q["id"]] = [index[c] for c in q["courses"]]
    for members in groups.values():
        if len(members) > 1:
            for s in range(n_slots):
                model.add_at_most_one(x[ci, s] for ci in members if (ci, s) in x)
    for s in range(n_slots):
        model.add(sum(x[ci, s] for ci in range(len(courses)) if (ci, s) in x) <= len(instance["rooms"]))
    return model, x


def rooms_in_order(instance: dict, taken: list[tuple[int, int]]) -> dict:
    """The solution of ``(course, slot)`` pairs, the rooms handed out in index order within each period."""
    ppd = instance["periods_per_day"]
    courses, rooms = instance["courses"], instance["rooms"]
    used: dict[int, int] = {}
    room_of = {}
    for ci, s in sorted(taken, key=lambda cs: (cs[1], cs[0])):
        room_of[ci, s] = used.get(s, 0)
        used[s] = room_of[ci, s] + 1
    return {
        "assignments": [
            [courses[ci]["id"], rooms[r]["id"], s // ppd, s % ppd] for (ci, s), r in sorted(room_of.items())
        ]
    }


def baseline(instance: dict) -> dict:
    """The first feasible timetable CP-SAT finds (one worker, seed 0, no objective)."""
    from orharbor.problem_modules import cpsat

    model, x = periods_model(instance)
    solver, status, _ = cpsat.solve(
        model, time_limit_s=BASELINE_TIME_LIMIT_S, workers=1, seed=BASELINE_SEED, stop_after_first_solution=True
    )
    if not cpsat.found(status):
        raise RuntimeError(
            f"{instance.get('name', 'instance')}: CP-SAT found no feasible timetable "
            f"({solver.status_name(status)}); the instance may be infeasible"
        )
    return rooms_in_order(instance, [key for key, var in x.items() if solver.value(var)])
