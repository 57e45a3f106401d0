"""Shift scheduling, constructive rule: greedy day-by-day, shift-by-shift cover.

The classic constructive heuristic of nurse rostering (surveyed by Burke, De
Causmaecker, Vanden Berghe and Van Landeghem 2004, "The state of the art of
nurse rostering", Journal of Scheduling 7(6)), on the shift scheduling
benchmark of Curtois and Qu (2014). Days are filled in order; within a day the
shift types with the least spare staff come first, and each place a shift
still needs goes to the employee with the lowest added penalty (shift-on
request granted -w, shift-off request broken +w) among those who can still
legally take it. Ties go first to an employee who may not have the day off
anyway, then to the one with the most unused minutes per day left (on a
weekend day, first the most unused weekends per weekend left). An employee who
must work today and got no place takes the shift of lowest added penalty
(over-cover included).

"Can still legally take it" looks ahead to the end of the horizon: a backward
dynamic programme per employee stores, for every day and every state of the
line (yesterday's shift or day off, the length of the current run), the set of
(weekends left, minutes still to work) from which the rest of the horizon can
be completed with the shift types the employee may work without limit (a bit
set, one Python integer). A choice is allowed only if it keeps the line
completable that way, so every line meets every hard constraint at the end.
An employee whose contract those types cannot meet gets one feasible line up
front from an exhaustive depth-first search over every shift type, and keeps
it (a contract with no feasible line at all makes every roster infeasible; the
rule then writes days off for that employee).

Usage: python3 -I rule.py INSTANCE.json SOLUTION.json
"""

import json
import sys
from math import gcd

OFF = -1
START, RESTING, WORKING = 0, 1, 2  # kinds of line state; a state is (kind, shift, run length, run began on day 0)
BEGIN = (START, OFF, 0, False)  # the state before day 0


class Contract:
    """One employee's hard constraints and the backward table of the states a line can be completed from."""

    def __init__(self, person, shifts, horizon):
        self.horizon = horizon
        self.limit = [person["max_shifts"][s["id"]] for s in shifts]
        self.minutes = [s["minutes"] for s in shifts]
        index = {s["id"]: j for j, s in enumerate(shifts)}
        self.forbidden = [{index[f] for f in s["forbidden_next"]} for s in shifts]
        self.types = [j for j in range(len(shifts)) if self.limit[j] > 0]
        self.free = [j for j in self.types if self.limit[j] >= horizon]  # their maximum can never bind
        self.days_off = set(person["days_off"])
        self.lo, self.hi = person["min_total_minutes"], person["max_total_minutes"]
        self.cmax, self.cmin = person["max_consecutive_shifts"], person["min_consecutive_shifts"]
        self.omin = max(1, person["min_consecutive_days_off"])
        self.weekends = person["max_weekends"]
        self.unit = 0
        for j in self.types:
            self.unit = gcd(self.unit, self.minutes[j])
        self.unit = self.unit or 1
        self.top = self.hi // self.unit  # most minute units worth tracking
        self.block = self.top + 1 + max([self.minutes[j] // self.unit for j in self.types] + [0])
        self.table = self._table()

    def step(self, state, day, v):
        """``(next state, weekends used)`` after working ``v`` (or OFF) on ``day``; None if a rule forbids it."""
        kind, shift, run, first = state
        if v == OFF:
            if kind == WORKING:
                return None if run < self.cmin and not first else ((RESTING, OFF, 1, False), 0)
            return (RESTING, OFF, self.omin if kind == START else min(run + 1, self.omin), False), 0
        if day in self.days_off:
            return None
        weekend = int(day % 7 == 5 or (day % 7 == 6 and kind != WORKING))
        if kind == WORKING:
            if v in self.forbidden[shift] or run >= self.cmax:
                return None
            return (WORKING, v, run + 1, first), weekend
        if kind == RESTING and run < self.omin:
            return None
        return (WORKING, v, 1, kind == START), weekend

    def _states(self, day):
        """Every state a line can be in before ``day``."""
        if day == 0:
            return [(START, OFF, 0, False)]
        out = [(RESTING, OFF, r, False) for r in range(1, self.omin + 1)]
        for j in self.types:
            out += [(WORKING, j, r, False) for r in range(1, min(self.cmax, day - 1) + 1)]
            if day <= self.cmax:
                out.append((WORKING, j, day, True))
        return out

    def _table(self):
        """``table[day][state]``: bit ``a * block + m`` set if the days from ``day`` on can be completed
        with at most ``a`` more weekends and exactly ``m`` more minute units, by the unlimited types."""
        width = (1 << (self.top + 1)) - 1
        mask = sum(width << (a * self.block) for a in range(self.weekends + 1))
        done = sum(1 << (a * self.block) for a in range(self.weekends + 1))
        table = [None] * (self.horizon + 1)
        table[self.horizon] = {s: done for s in self._states(self.horizon)}
        edges = {}  # (state, kind of day) -> [(next state, bit shift)]: the same on every day of that kind
        for day in range(self.horizon - 1, -1, -1):
            later = table[day + 1]
            now = {}
            kind = (day % 7 if day % 7 >= 5 else 0, day in self.days_off)
            for state in self._states(day):
                if (state, kind) not in edges:
                    edges[state, kind] = [
                        (move[0], 0 if v == OFF else self.minutes[v] // self.unit + move[1] * self.block)
                        for v in [OFF] + self.free
                        for move in [self.step(state, day, v)]
                        if move is not None
                    ]
                bits = 0
                for nxt, shift in edges[state, kind]:
                    bits |= (later[nxt] << shift) & mask
                now[state] = bits
            table[day] = now
        return table

    def completable(self, day, state, minutes, weekends):
        """Can a line in ``state`` before ``day``, with ``minutes`` and ``weekends`` worked, be completed?"""
        left = self.weekends - weekends
        low = max(0, -(-(self.lo - minutes) // self.unit))
        high = (self.hi - minutes) // self.unit
        if left < 0 or high < low:
            return False
        bits = self.table[day][state] >> (left * self.block + low)
        return bits & ((1 << (high - low + 1)) - 1) != 0

    def exhaustive_line(self):
        """A feasible line with every shift type (depth-first search, failed states remembered), or None."""
        failed = set()

        def extend(day, state, minutes, weekends, counts):
            if day == self.horizon:
                return [] if self.lo <= minutes else None
            key = (day, state, minutes, weekends, counts)
            if key in failed:
                return None
            for v in self.types + [OFF]:
                if v != OFF and counts[v] >= self.limit[v]:
                    continue
                move = self.step(state, day, v)
                if move is None:
                    continue
                used = minutes + (0 if v == OFF else self.minutes[v])
                if used > self.hi or weekends + move[1] > self.weekends:
                    continue
                more = counts if v == OFF else counts[:v] + (counts[v] + 1,) + counts[v + 1 :]
                rest = extend(day + 1, move[0], used, weekends + move[1], more)
                if rest is not None:
                    return [v] + rest
            failed.add(key)
            return None

        sys.setrecursionlimit(max(1000, 4 * self.horizon + 100))
        return extend(0, BEGIN, 0, 0, (0,) * len(self.limit))


def wishes(inst):
    """Per employee, ``(day, shift) -> added penalty`` of working that shift that day instead of resting."""
    index = {s["id"]: j for j, s in enumerate(inst["shifts"])}
    person = {p["id"]: e for e, p in enumerate(inst["staff"])}
    wish = [dict() for _ in inst["staff"]]
    for key, sign in (("shift_on_requests", -1), ("shift_off_requests", 1)):
        for r in inst[key]:
            mine, at = wish[person[r["employee"]]], (r["day"], index[r["shift"]])
            mine[at] = mine.get(at, 0) + sign * r["weight"]
    return wish


def greedy_roster(inst, contracts):
    """The roster of the rule, as one list of shift indices (OFF for a day off) per employee."""
    horizon, shifts = inst["horizon"], inst["shifts"]
    n = len(contracts)
    index = {s["id"]: j for j, s in enumerate(shifts)}
    fixed = [
        None if c.completable(0, BEGIN, 0, 0) else c.exhaustive_line() or [OFF] * horizon for c in contracts
    ]  # all days off only if the contract has no feasible line at all
    wish = wishes(inst)
    need = {(c["day"], index[c["shift"]]): c for c in inst["cover"]}

    lines = [[OFF] * horizon for _ in range(n)]
    state = [BEGIN] * n
    minutes, weekends = [0] * n, [0] * n
    counts = [[0] * len(shifts) for _ in range(n)]
    saturdays = range(5, horizon, 7)
    weekends_left = [sum(1 for d in saturdays if d + 1 >= day) for day in range(horizon)]
    for day in range(horizon):
        options = []  # per employee: shift or OFF -> (next state, weekends used)
        on_duty = [0] * len(shifts)
        taken = [OFF] * n
        assigned = [line is not None for line in fixed]
        for e, c in enumerate(contracts):
            allowed = {}
            if fixed[e] is not None:
                taken[e] = fixed[e][day]
                if taken[e] != OFF:
                    on_duty[taken[e]] += 1
            else:
                for v in [OFF] + c.types:
                    if v != OFF and counts[e][v] >= c.limit[v]:
                        continue
                    move = c.step(state[e], day, v)
                    if move is None:
                        continue
                    used = minutes[e] + (0 if v == OFF else c.minutes[v])
                    if c.completable(day + 1, move[0], used, weekends[e] + move[1]):
                        allowed[v] = move
            options.append(allowed)

        def spare(e):
            c = contracts[e]
            pace = (c.hi - minutes[e]) / (horizon - day)
            if day % 7 >= 5:
                return (c.weekends - weekends[e]) / weekends_left[day], pace
            return pace, 0.0

        def wanted(j):
            row = need.get((day, j))
            return row["requirement"] if row else 0

        order = sorted(range(len(shifts)), key=lambda j: (sum(j in o for o in options) - wanted(j), j))
        for j in order:
            ranked = sorted(
                (e for e in range(n) if j in options[e]),
                key=lambda e: (wish[e].get((day, j), 0), OFF in options[e], [-x for x in spare(e)], e),
            )
            for e in ranked:
                if on_duty[j] >= wanted(j):
                    break
                if not assigned[e]:
                    taken[e], assigned[e] = j, True
                    on_duty[j] += 1
        for e in range(n):
            if not assigned[e] and OFF not in options[e]:  # must work today: the cheapest shift left

                def added(j):
                    row = need.get((day, j))
                    cover = (
                        0
                        if row is None
                        else (row["over_weight"] if on_duty[j] >= row["requirement"] else -row["under_weight"])
                    )
                    return wish[e].get((day, j), 0) + cover, j

                taken[e] = min(options[e], key=added)
                on_duty[taken[e]] += 1
        for e in range(n):
            v = lines[e][day] = taken[e]
            if fixed[e] is not None:
                continue
            state[e], used = options[e][v]
            weekends[e] += used
            if v != OFF:
                minutes[e] += contracts[e].minutes[v]
                counts[e][v] += 1
    return lines


def solve(inst, roster):
    """The roster ``roster(inst, contracts)`` gives, in the solution format."""
    ids = [s["id"] for s in inst["shifts"]]
    lines = roster(inst, [Contract(p, inst["shifts"], inst["horizon"]) for p in inst["staff"]])
    return {"roster": {p["id"]: ["" if v == OFF else ids[v] for v in line] for p, line in zip(inst["staff"], lines)}}


def main(roster=greedy_roster):
    """Write the roster ``roster(inst, contracts)`` gives (the rule's by default) for the instance."""
    with open(sys.argv[1]) as f:
        inst = json.load(f)
    solution = solve(inst, roster)
    with open(sys.argv[2], "w") as f:
        json.dump(solution, f)


if __name__ == "__main__":
    main()
