"""Curriculum-based timetabling instances after the features of the ITC2007 track 3 instances.

The competition's instances (comp01-comp21; Di Gaspero, McCollum and Schaerf
2007) are real university data: 30 to 131 courses of 1 to 9 lectures, 5 to
20 rooms of 10 to a few hundred seats, mostly 5 days of 5 periods (also 5 x 6,
6 x 6 and 5 x 9), curricula of one to several courses that overlap, about 0.75
to 0.9 teachers per course, about 5% to 45% of the course-period pairs
unavailable, and a room occupancy (lectures / (rooms x periods)) of about 45%
to 90%. Every one of those features is drawn per seed here (within the ranges
below) and recorded in ``instance["generator"]``.

Generated instances are feasible by construction. The generator first builds
a hidden timetable and derives every hard constraint from it:

1. courses are grouped into cohorts, each taking at most a drawn share of the
   periods; each cohort gets distinct periods, the least loaded ones at the time
   (ties broken at random), which keeps every period's load within one of the
   mean, so at most ``rooms`` lectures share a period (the room count is set from
   the drawn occupancy, ``rooms >= lectures / periods``);
2. the curricula are the cohorts plus extra ones that mix part of a cohort with
   courses of other cohorts whose hidden periods do not meet theirs;
3. teachers: courses are merged under one teacher only when their hidden periods
   are disjoint;
4. unavailabilities are whole days, mornings or afternoons of random courses,
   minus the periods the hidden timetable gives the course.

The hidden timetable itself is not part of the instance; :func:`build` returns
it beside the instance (tests use it to check feasibility). Only integers are
drawn (success probabilities in percent), so the instances are the same on
every platform.
"""

from __future__ import annotations

import random

from ..packing import next_fit
from ..seeds import check_seed, size_seed

SIZES = ("c6", "c30", "c60", "c90", "c130")
GENERATOR_VERSION = 1
#: generate's output pinned: the sha256 (``orharbor.jsonio.digest``) of the instance of ``(seed, size)``.
GOLDEN = {
    (0, "c6"): "f258eead0b98833ed7c934da164c05e6312e978ed4394571014e522563375094",
    (7, "c30"): "c4ac9d52d022831cfb52661c8f9a9bcabac7ce14101b5117ac5baa13ee33130a",
    (123456789, "c130"): "73425caed956c22e946d213231524bf1dd5264f6b0609f0ad724458a46b0432f",
}

#: Courses per size.
COURSES = {"c6": 6, "c30": 30, "c60": 60, "c90": 90, "c130": 130}
#: (days, periods per day) drawn per seed; 5 x 5 dominates the ITC2007 instances.
SHAPES = {"c6": ((3, 3),), "default": ((5, 5), (5, 5), (5, 5), (5, 6), (6, 6), (5, 9))}
#: Most lectures of one course.
MAX_LECTURES = {"c6": 3, "default": 9}
#: Most rooms (the smoke size keeps to 2 or 3).
MAX_ROOMS = {"c6": 3}
#: Ranges (in percent) of the per-seed parameters.
LECTURE_PERCENT = (19, 56)  # chance of each lecture beyond the first: mean lectures 1 + (max-1) p
OCCUPANCY_PERCENT = (45, 90)  # lectures / (rooms x periods), before rounding the room count up
CURRICULUM_FILL_PERCENT = (40, 80)  # most periods one cohort's lectures take
EXTRA_CURRICULA_PERCENT = (0, 100)  # extra, overlapping curricula per cohort
TEACHER_PERCENT = (70, 95)  # teachers per course
UNAVAILABILITY_PERCENT = (3, 35)  # unavailable course-period pairs
#: Room size classes (seats) and their weights out of 10.
ROOM_CLASSES = (((10, 40), 4), ((40, 120), 4), ((120, 250), 2))


def derive_seed(seed: int, size: str) -> int:
    """A 64-bit PRNG seed from ``(seed, size)``: splitmix64 and FNV-1a, pure integer arithmetic."""
    return size_seed("timetabling/", seed, size)


def _per_size(table: dict, size: str):
    return table.get(size, table.get("default"))


def generate(seed: int, size: str) -> dict:
    """The instance of ``(seed, size)``: ITC2007 track 3 features drawn per seed, feasible by construction."""
    return build(seed, size)[0]


def build(seed: int, size: str) -> tuple[dict, dict]:
    """``(instance, hidden feasible solution)`` of ``(seed, size)``."""
    check_seed(seed, SIZES)
    if not isinstance(size, str) or size not in SIZES:
        raise ValueError(f"unknown timetabling size {size!r}; valid sizes: {', '.join(SIZES)}")
    derived = derive_seed(seed, size)
    rng = random.Random(derived)
    n = COURSES[size]
    shapes = _per_size(SHAPES, size)
    days, ppd = shapes[rng.randrange(len(shapes))]
    periods = days * ppd
    gen: dict = {
        "seed": seed,
        "size": size,
        "version": GENERATOR_VERSION,
        "prng_seed": derived,
        "days": days,
        "periods_per_day": ppd,
    }
    for key, bounds in (
        ("lecture_percent", LECTURE_PERCENT),
        ("occupancy_percent", OCCUPANCY_PERCENT),
        ("curriculum_fill_percent", CURRICULUM_FILL_PERCENT),
        ("extra_curricula_percent", EXTRA_CURRICULA_PERCENT),
        ("teacher_percent", TEACHER_PERCENT),
        ("unavailability_percent", UNAVAILABILITY_PERCENT),
    ):
        gen[key] = rng.randint(*bounds)

    max_lectures = _per_size(MAX_LECTURES, size)
    lectures = [1 + sum(rng.randrange(100) < gen["lecture_percent"] for _ in range(max_lectures - 1)) for _ in range(n)]
    total = sum(lectures)
    rooms = max(2, -(-total * 100 // (gen["occupancy_percent"] * periods)))
    rooms = max(min(rooms, MAX_ROOMS.get(size, rooms)), -(-total // periods))
    capacities = [_capacity(rng) for _ in range(rooms)]
    students = [_students(rng, capacities[rng.randrange(rooms)]) for _ in range(n)]
    min_days = [rng.randint(max(1, min(k, days) - 2), min(k, days)) for k in lectures]

    cap = max(1, periods * gen["curriculum_fill_percent"] // 100)
    cohorts = _cohorts(rng, lectures, cap)
    hidden = _hidden_periods(rng, cohorts, lectures, periods)
    curricula = _curricula(rng, cohorts, lectures, hidden, cap, gen["extra_curricula_percent"])
    teacher = _teachers(rng, hidden, gen["teacher_percent"])
    unavailable = _unavailability(rng, hidden, days, ppd, gen["unavailability_percent"])

    gen.update(
        lectures=total,
        rooms=rooms,
        occupancy=round(total / (rooms * periods), 3),
        n_cohorts=len(cohorts),
        n_extra_curricula=len(curricula) - len(cohorts),
        n_teachers=len(set(teacher)),
        n_unavailable=len(unavailable),
    )
    course_ids = [f"c{i + 1:04d}" for i in range(n)]
    room_ids = [f"r{i + 1:02d}" for i in range(rooms)]
    instance = {
        "problem": "timetabling",
        "name": f"timetabling-{size}-s{seed}",
        "days": days,
        "periods_per_day": ppd,
        "courses": [
            {
                "id": course_ids[i],
                "teacher": f"t{teacher[i]:03d}",
                "lectures": lectures[i],
                "min_working_days": min_days[i],
                "students": students[i],
            }
            for i in range(n)
        ],
        "rooms": [{"id": room_ids[r], "capacity": capacities[r]} for r in range(rooms)],
        "curricula": [{"id": f"q{k:03d}", "courses": [course_ids[i] for i in q]} for k, q in enumerate(curricula)],
        "unavailability": [[course_ids[i], d, p] for i, d, p in unavailable],
        "generator": gen,
    }
    return instance, _hidden_solution(rng, hidden, course_ids, room_ids, ppd)


def _capacity(rng: random.Random) -> int:
    pick = rng.randrange(10)
    for (low, high), weight in ROOM_CLASSES:
        if pick < weight:
            return rng.randint(low, high)
        pick -= weight
    raise AssertionError("room class weights must sum to 10")


def _students(rng: random.Random, capacity: int) -> int:
    """Students of a course sized for one room: a quarter of its seats up to all of them."""
    return rng.randint(max(1, capacity // 4), capacity)


def _cohorts(rng: random.Random, lectures: list[int], cap: int) -> list[list[int]]:
    """Courses in random order, cut into groups of at most ``cap`` lectures (a bigger course alone)."""
    order = list(range(len(lectures)))
    rng.shuffle(order)
    return next_fit(order, lectures.__getitem__, cap)


def _hidden_periods(rng: random.Random, cohorts: list[list[int]], lectures: list[int], periods: int) -> list[set]:
    """Each course's hidden periods: a cohort takes distinct periods, the least loaded ones."""
    load = [0] * periods
    hidden: list[set] = [set() for _ in lectures]
    for cohort in cohorts:
        ties = list(range(periods))
        rng.shuffle(ties)
        order = sorted(range(periods), key=lambda p: (load[p], ties[p]))
        chosen = order[: sum(lectures[c] for c in cohort)]
        rng.shuffle(chosen)
        for c in cohort:
            hidden[c] = set(chosen[: lectures[c]])
            chosen = chosen[lectures[c] :]
        for c in cohort:
            for p in hidden[c]:
                load[p] += 1
    return hidden


def _curricula(
    rng: random.Random, cohorts: list[list[int]], lectures: list[int], hidden: list[set], cap: int, extra_percent: int
) -> list[list[int]]:
    """The cohorts, then overlapping curricula: part of a cohort plus period-disjoint courses."""
    n = len(lectures)
    found = [sorted(q) for q in cohorts]
    seen = {tuple(q) for q in found}
    for _ in range((len(cohorts) * extra_percent + 50) // 100):
        base = cohorts[rng.randrange(len(cohorts))]
        chosen = rng.sample(base, rng.randint(1, len(base)))
        busy = set().union(*(hidden[c] for c in chosen))
        total = sum(lectures[c] for c in chosen)
        others = list(range(n))
        rng.shuffle(others)
        for c in others:
            if len(chosen) >= len(base) + 1:
                break
            if c not in chosen and not busy & hidden[c] and total + lectures[c] <= cap:
                chosen.append(c)
                busy |= hidden[c]
                total += lectures[c]
        key = tuple(sorted(chosen))
        if key not in seen:
            seen.add(key)
            found.append(list(key))
    return found


def _teachers(rng: random.Random, hidden: list[set], percent: int) -> list[int]:
    """Teacher number of each course: courses merged under one teacher only if their periods are disjoint."""
    n = len(hidden)
    group = list(range(n))  # course -> group leader
    busy = {c: set(hidden[c]) for c in range(n)}
    merges = n - (-(-n * percent // 100))
    order = list(range(n))
    rng.shuffle(order)
    for c in order:
        if merges == 0:
            break
        g = group[c]
        partners = [h for h in busy if h != g and not busy[g] & busy[h]]
        if not partners:
            continue
        h = partners[rng.randrange(len(partners))]
        for k in range(n):
            if group[k] == h:
                group[k] = g
        busy[g] |= busy.pop(h)
        merges -= 1
    number: dict[int, int] = {}
    for c in range(n):
        number.setdefault(group[c], len(number))
    return [number[group[c]] for c in range(n)]


def _unavailability(rng: random.Random, hidden: list[set], days: int, ppd: int, percent: int) -> list[tuple]:
    """Blocks (a whole day, a morning, an afternoon) of random courses, minus their hidden periods."""
    n = len(hidden)
    target = n * days * ppd * percent // 100
    cells: set = set()
    attempts = 0
    while len(cells) < target and attempts < 20 * target + 100:
        attempts += 1
        c, d, kind = rng.randrange(n), rng.randrange(days), rng.randrange(3)
        k = rng.randint(1, ppd - 1) if ppd > 1 else 1
        block = range(ppd) if kind == 0 else range(k) if kind == 1 else range(ppd - k, ppd)
        for p in block:
            if len(cells) < target and d * ppd + p not in hidden[c]:
                cells.add((c, d, p))
    return sorted(cells)


def _hidden_solution(
    rng: random.Random, hidden: list[set], course_ids: list[str], room_ids: list[str], ppd: int
) -> dict:
    """The hidden timetable as a solution: in each period its courses take rooms in random order."""
    at: dict[int, list[int]] = {}
    for c, slots in enumerate(hidden):
        for s in slots:
            at.setdefault(s, []).append(c)
    assignments = []
    for s in sorted(at):
        rooms = rng.sample(range(len(room_ids)), len(at[s]))
        for c, r in zip(at[s], rooms):
            assignments.append([course_ids[c], room_ids[r], s // ppd, s % ppd])
    assignments.sort(key=lambda a: (a[0], a[2], a[3]))
    return {"assignments": assignments}
