"""Curriculum-based timetabling, constructive rule: most constrained lecture first.

The classic graph-colouring ordering of course timetabling (saturation degree,
Brelaz 1979; as used for timetabling by Carter, Laporte and Lee 1996,
"Examination timetabling: algorithmic strategies and applications", JORS
47(3)), on ITC2007 track 3 (Di Gaspero, McCollum and Schaerf 2007). Lectures
are placed one at a time. The next one belongs to the course with the fewest
periods still open to it (not unavailable, not already used by the course, no
lecture of a course of the same teacher or curriculum, a room free); ties go
to the course with more lectures left, then more conflicting courses. It takes
the (period, room) of lowest added soft penalty (room capacity, room
stability, minimum working days, curriculum compactness, all counted
incrementally), ties to the period open to the fewest unfinished conflicting
courses and to the room that fits the course best.

When a course has no open period left, the rule does not give up: as in
iterative forward search (Mueller 2009, "ITC2007 solver description: a hybrid
approach", Annals of Operations Research 172), it takes the period that
unassigns the fewest lectures (those of conflicting courses there, and one
occupant if every room is taken), the least often unassigned courses first,
puts the lecture there and queues the unassigned ones again. Feasibility is
NP-hard in general, so this repair is bounded: it has always succeeded on the
generated instances, and if it ever stopped short the rule would still write
its unfinished timetable (which the verifier rejects).

Usage: python3 -I rule.py INSTANCE.json SOLUTION.json
"""

import json
import sys

#: Weights of the soft constraints (ITC2007 track 3).
CAPACITY, MIN_DAYS, COMPACTNESS, STABILITY = 1, 5, 2, 1
#: Repairs (placements that unassign lectures) allowed per lecture before the rule gives up.
REPAIRS_PER_LECTURE = 50


class Timetable:
    """A partial timetable with the counts that make feasibility checks and penalty changes O(1)."""

    def __init__(self, inst):
        self.ppd = inst["periods_per_day"]
        self.periods = inst["days"] * self.ppd
        courses, rooms = inst["courses"], inst["rooms"]
        self.course_ids = [c["id"] for c in courses]
        self.room_ids = [r["id"] for r in rooms]
        index = {c: i for i, c in enumerate(self.course_ids)}
        self.lectures = [c["lectures"] for c in courses]
        self.students = [c["students"] for c in courses]
        self.min_days = [c["min_working_days"] for c in courses]
        self.capacity = [r["capacity"] for r in rooms]
        teachers = {}
        self.teacher = [teachers.setdefault(c["teacher"], len(teachers)) for c in courses]
        self.curricula = [[] for _ in courses]
        for q, curriculum in enumerate(inst["curricula"]):
            for c in curriculum["courses"]:
                self.curricula[index[c]].append(q)
        self.closed = [set() for _ in courses]  # unavailable periods
        for c, d, p in inst["unavailability"]:
            self.closed[index[c]].add(d * self.ppd + p)
        self.conflicts = [set() for _ in courses]
        for group in [[c for c in range(len(courses)) if self.teacher[c] == t] for t in range(len(teachers))] + [
            [index[c] for c in q["courses"]] for q in inst["curricula"]
        ]:
            for c in group:
                self.conflicts[c].update(k for k in group if k != c)
        n_courses, n_rooms = len(courses), len(rooms)
        self.room_at = [[-1] * n_rooms for _ in range(self.periods)]  # course in each room, or -1
        self.free_rooms = [n_rooms] * self.periods
        self.course_at = [[False] * self.periods for _ in courses]
        self.teacher_at = [[False] * self.periods for _ in teachers]
        self.curriculum_at = [[False] * self.periods for _ in inst["curricula"]]
        self.room_uses = [[0] * n_rooms for _ in courses]  # lectures of each course in each room
        self.day_uses = [[0] * inst["days"] for _ in courses]
        self.n_rooms = [0] * n_courses  # distinct rooms (days) each course uses
        self.n_days = [0] * n_courses
        self.placed = [[] for _ in courses]  # (period, room) of each placed lecture

    def open(self, c, p):
        """May course ``c`` get one more lecture in period ``p`` (in some room)?"""
        return (
            self.free_rooms[p] > 0
            and not self.course_at[c][p]
            and p not in self.closed[c]
            and not self.teacher_at[self.teacher[c]][p]
            and not any(self.curriculum_at[q][p] for q in self.curricula[c])
        )

    def isolated(self, q, p):
        """Compactness penalty of curriculum ``q`` at period ``p``: a lecture with no neighbour that day."""
        at = self.curriculum_at[q]
        if not at[p]:
            return 0
        day_start = p - p % self.ppd
        return 0 if (p > day_start and at[p - 1]) or (p + 1 < day_start + self.ppd and at[p + 1]) else COMPACTNESS

    def _local(self, c, p):
        """The part of the penalty a lecture of ``c`` in period ``p`` can change, rooms' capacity aside."""
        total = STABILITY * max(0, self.n_rooms[c] - 1) + MIN_DAYS * max(0, self.min_days[c] - self.n_days[c])
        day_start = p - p % self.ppd
        for q in self.curricula[c]:
            total += sum(self.isolated(q, x) for x in range(max(day_start, p - 1), min(day_start + self.ppd, p + 2)))
        return total

    def _set(self, c, p, r, on):
        self.room_at[p][r] = c if on else -1
        self.free_rooms[p] -= 1 if on else -1
        self.course_at[c][p] = self.teacher_at[self.teacher[c]][p] = on
        for q in self.curricula[c]:
            self.curriculum_at[q][p] = on
        step, day = (1 if on else -1), p // self.ppd
        self.room_uses[c][r] += step
        if self.room_uses[c][r] == int(on):  # the course's first lecture in that room, or its last one gone
            self.n_rooms[c] += step
        self.day_uses[c][day] += step
        if self.day_uses[c][day] == int(on):
            self.n_days[c] += step

    def add(self, c, p, r):
        """Place a lecture of ``c`` at ``(p, r)`` (must be open); returns the change of the penalty."""
        before = self._local(c, p)
        self._set(c, p, r, True)
        self.placed[c].append((p, r))
        return self._local(c, p) - before + CAPACITY * max(0, self.students[c] - self.capacity[r])

    def remove(self, c, p, r):
        """Take the lecture of ``c`` at ``(p, r)`` away; returns the change of the penalty."""
        before = self._local(c, p)
        self._set(c, p, r, False)
        self.placed[c].remove((p, r))
        return self._local(c, p) - before - CAPACITY * max(0, self.students[c] - self.capacity[r])

    def added(self, c, p, r):
        """Change of the penalty if a lecture of ``c`` were placed at ``(p, r)``."""
        delta = self.add(c, p, r)
        self.remove(c, p, r)
        return delta

    def best_room(self, c, p):
        """The free room of period ``p`` that adds the least penalty for ``c``, ties to the best fit."""

        def cost(r):
            fit = self.capacity[r] - self.students[c]
            return (
                CAPACITY * max(0, -fit) + STABILITY * (self.room_uses[c][r] == 0 and len(self.placed[c]) > 0),
                abs(fit),
                r,
            )

        return min((r for r, k in enumerate(self.room_at[p]) if k < 0), key=cost)

    def solution(self):
        return {
            "assignments": [
                [self.course_ids[c], self.room_ids[r], p // self.ppd, p % self.ppd]
                for c, places in enumerate(self.placed)
                for p, r in sorted(places)
            ]
        }


def construct(inst):
    """The rule's timetable (complete unless the bounded repair gave up)."""
    tt = Timetable(inst)
    n = len(tt.lectures)
    left = list(tt.lectures)
    unassigned = [0] * n  # how often each course lost a lecture to a repair
    n_open = [sum(tt.open(c, p) for p in range(tt.periods)) for c in range(n)]

    def change(p, action):
        """Do ``action`` on period ``p`` and update every course's count of open periods."""
        before = [tt.open(c, p) for c in range(n)]
        action()
        for c in range(n):
            n_open[c] += tt.open(c, p) - before[c]

    repairs = 0
    while any(left) and repairs <= REPAIRS_PER_LECTURE * sum(tt.lectures):
        c = min((k for k in range(n) if left[k]), key=lambda k: (n_open[k], -left[k], -len(tt.conflicts[k]), k))
        if n_open[c]:

            def harm(p):
                return sum(1 for k in tt.conflicts[c] if left[k] and tt.open(k, p))

            p = min(
                (p for p in range(tt.periods) if tt.open(c, p)),
                key=lambda p: (tt.added(c, p, tt.best_room(c, p)), harm(p), p),
            )
        else:
            repairs += 1
            choices = [p for p in range(tt.periods) if p not in tt.closed[c] and not tt.course_at[c][p]]
            if not choices:  # more lectures than periods open to the course: no timetable exists
                break
            p = min(
                choices,
                key=lambda p: (
                    len(blockers(tt, c, p, unassigned)),
                    sum(unassigned[k] for k, _ in blockers(tt, c, p, unassigned)),
                    p,
                ),
            )
            for k, r in blockers(tt, c, p, unassigned):
                change(p, lambda: tt.remove(k, p, r))
                left[k] += 1
                unassigned[k] += 1
        r = tt.best_room(c, p)
        change(p, lambda: tt.add(c, p, r))
        left[c] -= 1
    return tt


def blockers(tt, c, p, unassigned):
    """The (course, room) lectures to unassign so that ``c`` can take period ``p``."""
    out = [(k, r) for r, k in enumerate(tt.room_at[p]) if k >= 0 and k in tt.conflicts[c]]
    if tt.free_rooms[p] == 0 and not out:  # every room taken by other courses: the least often unassigned goes
        out = [min(((k, r) for r, k in enumerate(tt.room_at[p])), key=lambda kr: (unassigned[kr[0]], kr[1]))]
    return out


def main(timetable=construct):
    """Write the timetable that ``timetable(inst)`` builds (the rule's by default) for the instance."""
    with open(sys.argv[1]) as f:
        inst = json.load(f)
    solution = timetable(inst).solution()
    with open(sys.argv[2], "w") as f:
        json.dump(solution, f)


if __name__ == "__main__":
    main()
