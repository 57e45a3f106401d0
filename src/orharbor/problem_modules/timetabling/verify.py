"""Curriculum-based course timetabling verifier: standard library only (copied into every task).

``evaluate(instance, solution)`` returns the ITC2007 track 3 penalty of a
timetable or raises :class:`Infeasible` naming the first broken hard
constraint, with the course, room, day and period involved. The instance is
trusted (it is ours); the solution is not. One pass over the assignments,
checking each one against everything before it, then the soft penalties:
linear in the solution size (plus the instance size).

The definitions follow the competition's technical report (Di Gaspero,
McCollum and Schaerf 2007) and its validator: room capacity, 1 point per
student above the room's capacity, per lecture; minimum working days, 5 points
per day below the course's minimum; curriculum compactness, 2 points per
lecture of a curriculum with no other lecture of that curriculum in an adjacent
period of the same day; room stability, 1 point per distinct room beyond the
first, per course.
"""

from __future__ import annotations

from orharbor.verifiers.strict import Infeasible, require_dict, require_int, require_list, short, type_name

__all__ = ["Infeasible", "WEIGHTS", "evaluate", "penalties"]

#: Weight of each soft constraint, per unit of violation (ITC2007 track 3).
WEIGHTS = {"room_capacity": 1, "min_working_days": 5, "curriculum_compactness": 2, "room_stability": 1}


def evaluate(instance: dict, solution) -> int:
    """Total penalty of ``solution = {"assignments": [[course, room, day, period], ...]}``."""
    days, ppd = instance["days"], instance["periods_per_day"]
    courses = instance["courses"]
    course_index = {c["id"]: i for i, c in enumerate(courses)}
    room_index = {r["id"]: i for i, r in enumerate(instance["rooms"])}
    teacher_of = [c["teacher"] for c in courses]
    curricula_of: list[list[str]] = [[] for _ in courses]
    for q in instance["curricula"]:
        for c in q["courses"]:
            curricula_of[course_index[c]].append(q["id"])
    unavailable = {(course_index[c], d * ppd + p) for c, d, p in instance["unavailability"]}

    require_dict(solution, "solution", ("assignments",))
    items = require_list(solution["assignments"], "solution.assignments")
    count = [0] * len(courses)
    course_at: dict[tuple[int, int], str] = {}  # (course, slot) -> room
    room_at: dict[tuple[str, int], str] = {}  # (room, slot) -> course
    teacher_at: dict[tuple[str, int], str] = {}
    curriculum_at: dict[tuple[str, int], str] = {}
    for k, item in enumerate(items):
        where = f"solution.assignments[{k}]"
        require_list(item, where, 4)
        course = _require_id(item[0], f"{where}[0]", course_index, "course")
        room = _require_id(item[1], f"{where}[1]", room_index, "room")
        day = require_int(item[2], f"{where}[2]", lo=0, hi=days - 1)
        period = require_int(item[3], f"{where}[3]", lo=0, hi=ppd - 1)
        ci = course_index[course]
        at = f"on day {day} period {period}"
        count[ci] += 1
        if count[ci] > courses[ci]["lectures"]:
            raise Infeasible(
                f"{where}: course {course} gets more than its {courses[ci]['lectures']} lectures "
                f"(this one in room {room} {at})"
            )
        slot = day * ppd + period
        if (ci, slot) in unavailable:
            raise Infeasible(f"{where}: course {course} is unavailable {at} (scheduled in room {room})")
        if (ci, slot) in course_at:
            raise Infeasible(f"{where}: course {course} has two lectures {at} (rooms {course_at[ci, slot]} and {room})")
        if (room, slot) in room_at:
            raise Infeasible(
                f"{where}: room {room} holds two lectures {at} (courses {room_at[room, slot]} and {course})"
            )
        teacher = teacher_of[ci]
        if (teacher, slot) in teacher_at:
            raise Infeasible(
                f"{where}: teacher {teacher} teaches two lectures {at} "
                f"(courses {teacher_at[teacher, slot]} and {course}, room {room})"
            )
        for q in curricula_of[ci]:
            if (q, slot) in curriculum_at:
                raise Infeasible(
                    f"{where}: curriculum {q} has two lectures {at} "
                    f"(courses {curriculum_at[q, slot]} and {course}, room {room})"
                )
        course_at[ci, slot] = room
        room_at[room, slot] = course
        teacher_at[teacher, slot] = course
        for q in curricula_of[ci]:
            curriculum_at[q, slot] = course
    for ci, c in enumerate(courses):
        if count[ci] < c["lectures"]:
            raise Infeasible(
                f"course {c['id']} has {count[ci]} of its {c['lectures']} lectures scheduled "
                "(every lecture must be scheduled)"
            )
    return sum(penalties(instance, items).values())


def _require_id(value, where: str, known: dict, what: str) -> str:
    """``value`` must be the id (a string) of a known course or room."""
    if not isinstance(value, str):
        raise Infeasible(f"{where}: expected a {what} id (a string), got {type_name(value)} {short(value)}")
    if value not in known:
        raise Infeasible(f"{where}: unknown {what} {short(value)}")
    return value


def penalties(instance: dict, assignments: list) -> dict[str, int]:
    """The four weighted soft penalties of a trusted, feasible list of assignments."""
    ppd = instance["periods_per_day"]
    courses = instance["courses"]
    course_index = {c["id"]: i for i, c in enumerate(courses)}
    capacity = {r["id"]: r["capacity"] for r in instance["rooms"]}
    rooms_used: list[set] = [set() for _ in courses]
    days_used: list[set] = [set() for _ in courses]
    slots: list[list[int]] = [[] for _ in courses]
    over = 0
    for course, room, day, period in assignments:
        ci = course_index[course]
        over += max(0, courses[ci]["students"] - capacity[room])
        rooms_used[ci].add(room)
        days_used[ci].add(day)
        slots[ci].append(day * ppd + period)
    short_days = sum(max(0, c["min_working_days"] - len(days_used[ci])) for ci, c in enumerate(courses))
    extra_rooms = sum(max(0, len(used) - 1) for used in rooms_used)
    isolated = 0
    for q in instance["curricula"]:
        busy: dict[int, int] = {}
        for c in q["courses"]:
            for s in slots[course_index[c]]:
                busy[s] = busy.get(s, 0) + 1
        for s, n in busy.items():
            before = s % ppd > 0 and (s - 1) in busy
            after = s % ppd < ppd - 1 and (s + 1) in busy
            if not before and not after:
                isolated += n
    return {
        "room_capacity": WEIGHTS["room_capacity"] * over,
        "min_working_days": WEIGHTS["min_working_days"] * short_days,
        "curriculum_compactness": WEIGHTS["curriculum_compactness"] * isolated,
        "room_stability": WEIGHTS["room_stability"] * extra_rooms,
    }
