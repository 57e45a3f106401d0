"""CP-SAT reference for curriculum-based course timetabling (ITC2007 track 3).

The baseline's hard-constraint model (``x[c, t]``: a lecture of course ``c`` in
period ``t``) gets a room layer and the four soft penalties:

* ``z[c, t, r]``: that lecture is in room ``r``; ``sum_r z[c, t, r] = x[c, t]``
  and at most one lecture per room and period;
* room stability: ``y[c, r] >= z[c, t, r]`` (course ``c`` uses room ``r``),
  penalty ``sum_r y[c, r] - 1`` per course;
* room capacity: ``z[c, t, r]`` costs ``max(0, students_c - capacity_r)``;
* minimum working days: ``w[c, d] <= sum of x[c, t]`` over the periods of day
  ``d``, shortfall ``s_c >= min_working_days_c - sum_d w[c, d]``, 5 per day;
* curriculum compactness: with ``u[q, t] = sum over the courses of q of x[c, t]``
  (0 or 1 by the hard constraints), ``i[q, t] >= u[q, t] - u[q, t-1] - u[q, t+1]``
  (neighbours of the same day only), 2 per isolated lecture.

Rooms offered to a course are its :data:`CANDIDATE_ROOMS` best-fitting ones
plus those of the hint (:func:`candidate_rooms`): with every room offered, the
model of a 130-course instance with 25 rooms and 45 periods had about 135,000
variables, and CP-SAT spent 13 s in presolve before its first move. When every
course is offered every room (always with 3 rooms or fewer) the model is
exact; otherwise it is a restriction, so CP-SAT's status and bound speak of it
only, and ``bound`` is recorded as 0.

The hint, a complete solution of the model, is the baseline's periods with
rooms chosen greedily (:func:`best_fit_rooms`), or a given timetable (``hint=``)
when that is no worse, and is returned if CP-SAT finds nothing better in time,
so the reference is never worse than the baseline or the given timetable. On
an exact model a first, full search gets :data:`PROOF_SHARE` of the time: it
proves small instances optimal and gives the lower bound (``bound``); then, as
on a restricted model, large neighbourhood search alone (:func:`search_parameters`)
improves the best timetable until the time limit.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from .baseline import baseline, periods_model
from .verify import WEIGHTS, evaluate

if TYPE_CHECKING:  # for annotations only: reference() imports it when it runs
    from ortools.sat.python import cp_model

#: Rooms offered to each course: its best-fitting ones (plus those of the hint).
#: With one worker at 10 s, 3 gave 213, 31, 38 on c90 seed 0 and c130 seeds 0
#: and 1, where 6 gave 414, 209, 200 and 10 fell back to the hint twice; at 60 s
#: 3 and 6 were even (133, 7 and 133, 10). On comp01 (6 rooms) at 10 s, 3 gave
#: 6, 7, 8 over three seeds and the exact model 16, 7, 7.
CANDIDATE_ROOMS = 3
#: Share of the time limit for the first, full search (exact models only).
PROOF_SHARE = 0.1

#: The reference method, as the instruction names it.
REFERENCE = (
    "OR-Tools CP-SAT over periods and rooms, started from the naive timetable with rooms "
    "reassigned greedily: a short full search when every course may use every room, then "
    f"large-neighbourhood search (with more than {CANDIDATE_ROOMS} rooms, each course is offered "
    f"its {CANDIDATE_ROOMS} best-fitting ones and those of the start)"
)


def reference(
    instance: dict, *, time_limit_s: float, workers: int, seed: int = 0, hint: dict | None = None
) -> tuple[dict, dict]:
    """Best timetable CP-SAT finds in ``time_limit_s`` from the better of its own hint and ``hint``, and its meta."""
    from ortools.sat.python import cp_model

    from orharbor.problem_modules import cpsat, warm_start

    start = time.perf_counter()
    own = best_fit_rooms(instance, baseline(instance))
    own_start = warm_start.Start(own, evaluate(instance, own), "baseline with best-fit rooms")
    initial = warm_start.choose(instance, evaluate, own_start, hint)
    best = initial  # the best timetable so far: the start, then what the full search found
    candidates = candidate_rooms(instance, initial.solution)
    exact = all(len(rooms) == len(instance["rooms"]) for rooms in candidates)
    model, x = periods_model(instance)
    layer, objective = _soft_layer(model, x, instance, candidates)
    model.minimize(objective)
    _add_hint(model, instance, initial.solution, x, layer)
    z = layer["z"]
    status = cp_model.UNKNOWN

    bound = 0
    if exact:  # a short full search proves small instances optimal and gives a bound
        solver, status, meta = cpsat.solve(
            model, time_limit_s=_left(start, time_limit_s, PROOF_SHARE), workers=workers, seed=seed
        )
        if cpsat.found(status):
            bound = max(0, math.ceil(solver.best_objective_bound - 1e-6))
            better = _solution_of(solver, z, instance)
            value = evaluate(instance, better)
            if status != cp_model.OPTIMAL and value < best.objective:
                best = warm_start.Start(better, value, "the full search")
                model.clear_hints()
                _add_hint(model, instance, best.solution, x, layer)
    if not exact or status != cp_model.OPTIMAL:
        solver, status, meta = cpsat.solve(
            model,
            time_limit_s=_left(start, time_limit_s, 1.0),
            workers=workers,
            seed=seed,
            **search_parameters(workers),
        )
    meta["time_limit_s"] = time_limit_s
    solution, meta = cpsat.finish(
        instance,
        evaluate,
        solver,
        status,
        meta,
        extract=lambda sol: _solution_of(sol, z, instance),
        start=best,
        lower_bound=bound,
    )
    meta["hint"] = initial.record()  # where the search started, not the full search's improvement on it
    if not exact:  # CP-SAT's status and bound speak of the restricted model only
        meta["candidate_rooms"] = CANDIDATE_ROOMS
        meta["bound"] = 0
        if meta["status"] == "OPTIMAL":
            meta["status"] = "FEASIBLE"
    if meta["objective"] == meta["bound"]:
        meta["status"] = "OPTIMAL"
    meta["wall_time_s"] = round(time.perf_counter() - start, 3)
    return solution, meta


def _left(start: float, time_limit_s: float, share: float) -> float:
    """``share`` of the time left of ``time_limit_s`` (at least 0.05 s)."""
    return max(0.05, share * (float(time_limit_s) - (time.perf_counter() - start)))


def _solution_of(sol, z: dict, instance: dict) -> dict:
    """The solution of CP-SAT's values of the room layer."""
    ppd = instance["periods_per_day"]
    course_ids = [c["id"] for c in instance["courses"]]
    room_ids = [r["id"] for r in instance["rooms"]]
    return {
        "assignments": [
            [course_ids[ci], room_ids[r], s // ppd, s % ppd] for (ci, s, r), var in sorted(z.items()) if sol.value(var)
        ]
    }


def search_parameters(workers: int) -> dict:
    """CP-SAT parameters of the reference run: large neighbourhood search only.

    From a poor start (the baseline) CP-SAT's full-problem search barely moves
    on this model: on comp01 one worker went from 637 to 618 in 10 s, while its
    neighbourhood searches alone (``use_lns_only``) reached 11 to 26 (four
    random seeds). With one worker they only run at all when interleaved
    (``interleave_search``).
    """
    params = {"use_lns_only": True}
    if workers == 1:
        params["interleave_search"] = True
    return params


def best_fit_rooms(instance: dict, solution: dict) -> dict:
    """The same periods with rooms chosen greedily, period by period.

    Lectures with more students choose first: a room the course already uses if
    it is free and large enough, else the smallest free room large enough, else
    the largest free room.
    """
    ppd = instance["periods_per_day"]
    courses, rooms = instance["courses"], instance["rooms"]
    index = {c["id"]: i for i, c in enumerate(courses)}
    by_size = sorted(range(len(rooms)), key=lambda r: (rooms[r]["capacity"], r))
    at: dict[int, list[int]] = {}
    for c, _, d, p in solution["assignments"]:
        at.setdefault(d * ppd + p, []).append(index[c])
    used: list[list[int]] = [[] for _ in courses]
    placed = {}
    for s in sorted(at):
        free = set(range(len(rooms)))
        for ci in sorted(at[s], key=lambda ci: (-courses[ci]["students"], ci)):
            need = courses[ci]["students"]
            fits = [r for r in by_size if r in free and rooms[r]["capacity"] >= need]
            again = [r for r in used[ci] if r in fits]
            r = again[0] if again else fits[0] if fits else max(free, key=lambda r: (rooms[r]["capacity"], -r))
            free.discard(r)
            if r not in used[ci]:
                used[ci].append(r)
            placed[ci, s] = r
    return {
        "assignments": [[courses[ci]["id"], rooms[r]["id"], s // ppd, s % ppd] for (ci, s), r in sorted(placed.items())]
    }


def candidate_rooms(instance: dict, hint: dict) -> list[list[int]]:
    """Each course's rooms in the model: the best-fitting :data:`CANDIDATE_ROOMS` and the hint's.

    Best fitting: the rooms large enough, smallest first, then the others, largest
    first. The hint stays a solution of the restricted model, so it is feasible.
    """
    courses, rooms = instance["courses"], instance["rooms"]
    index = {c["id"]: i for i, c in enumerate(courses)}
    room_index = {r["id"]: i for i, r in enumerate(rooms)}
    out = []
    for c in courses:

        def fit(r: int) -> tuple:
            spare = rooms[r]["capacity"] - c["students"]
            return (spare < 0, abs(spare), r)

        out.append(set(sorted(range(len(rooms)), key=fit)[:CANDIDATE_ROOMS]))
    for c, r, _, _ in hint["assignments"]:
        out[index[c]].add(room_index[r])
    return [sorted(rooms_of) for rooms_of in out]


def _soft_layer(model, x: dict, instance: dict, candidates: list[list[int]]):
    """Rooms and the four weighted penalties on top of the hard model: ``(variables by kind, objective)``."""
    days, ppd = instance["days"], instance["periods_per_day"]
    courses, rooms = instance["courses"], instance["rooms"]
    z: dict[tuple[int, int, int], object] = {}
    y = {(ci, r): model.new_bool_var(f"y_{ci}_{r}") for ci in range(len(courses)) for r in candidates[ci]}
    worked: dict[tuple[int, int], cp_model.IntVar] = {}
    shortfall: dict[int, object] = {}
    isolated: dict[tuple[int, int], object] = {}
    terms = []
    for (ci, s), var in x.items():
        row = {r: model.new_bool_var(f"z_{ci}_{s}_{r}") for r in candidates[ci]}
        model.add(sum(row.values()) == var)
        for r, zr in row.items():
            z[ci, s, r] = zr
            model.add_implication(zr, y[ci, r])
            over = courses[ci]["students"] - rooms[r]["capacity"]
            if over > 0:
                terms.append(WEIGHTS["room_capacity"] * over * zr)
    by_slot_room: dict[tuple[int, int], list] = {}
    for (ci, s, r), var in z.items():
        by_slot_room.setdefault((s, r), []).append(var)
    for group in by_slot_room.values():
        if len(group) > 1:
            model.add_at_most_one(group)
    for ci, c in enumerate(courses):
        used = [y[ci, r] for r in candidates[ci]]
        model.add(sum(used) >= 1)
        terms.append(WEIGHTS["room_stability"] * (sum(used) - 1))
        if c["min_working_days"] > 0:
            for d in range(days):
                day = [x[ci, s] for s in range(d * ppd, (d + 1) * ppd) if (ci, s) in x]
                if day:
                    worked[ci, d] = model.new_bool_var(f"w_{ci}_{d}")
                    model.add(worked[ci, d] <= sum(day))
            short = shortfall[ci] = model.new_int_var(0, c["min_working_days"], f"short_{ci}")
            model.add(short >= c["min_working_days"] - sum(worked[ci, d] for d in range(days) if (ci, d) in worked))
            terms.append(WEIGHTS["min_working_days"] * short)
    index = {c["id"]: i for i, c in enumerate(courses)}
    for qi, q in enumerate(instance["curricula"]):
        members = [index[c] for c in q["courses"]]
        busy = [sum(x[ci, s] for ci in members if (ci, s) in x) for s in range(days * ppd)]
        for s in range(days * ppd):
            if not any((ci, s) in x for ci in members):
                continue
            before = busy[s - 1] if s % ppd > 0 else 0
            after = busy[s + 1] if s % ppd < ppd - 1 else 0
            alone = busy[s] - before - after  # not in place: the expressions are shared
            lonely = isolated[qi, s] = model.new_bool_var(f"i_{qi}_{s}")
            model.add(lonely >= alone)
            terms.append(WEIGHTS["curriculum_compactness"] * lonely)
    layer = {"z": z, "y": y, "worked": worked, "shortfall": shortfall, "isolated": isolated}
    return layer, sum(terms)


def _add_hint(model, instance: dict, solution: dict, x: dict, layer: dict) -> None:
    """Hint every variable with the values of a feasible solution."""
    ppd = instance["periods_per_day"]
    courses = instance["courses"]
    course = {c["id"]: i for i, c in enumerate(courses)}
    room = {r["id"]: i for i, r in enumerate(instance["rooms"])}
    placed = {(course[c], d * ppd + p): room[r] for c, r, d, p in solution["assignments"]}
    for (ci, s), var in x.items():
        model.add_hint(var, (ci, s) in placed)
    for (ci, s, r), var in layer["z"].items():
        model.add_hint(var, placed.get((ci, s)) == r)
    used = {(ci, r) for (ci, _), r in placed.items()}
    for key, var in layer["y"].items():
        model.add_hint(var, key in used)
    days_of = {(ci, s // ppd) for ci, s in placed}
    for key, var in layer["worked"].items():
        model.add_hint(var, key in days_of)
    for ci, var in layer["shortfall"].items():
        worked = sum((ci, d) in days_of for d in range(instance["days"]))
        model.add_hint(var, max(0, courses[ci]["min_working_days"] - worked))
    busy = {
        (qi, s)
        for qi, q in enumerate(instance["curricula"])
        for c in q["courses"]
        for s in range(instance["days"] * ppd)
        if (course[c], s) in placed
    }
    for (qi, s), var in layer["isolated"].items():
        near = (s % ppd > 0 and (qi, s - 1) in busy) or (s % ppd < ppd - 1 and (qi, s + 1) in busy)
        model.add_hint(var, (qi, s) in busy and not near)
