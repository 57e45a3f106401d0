"""Shift scheduling, local search: single-day changes and same-day swaps from the greedy roster.

Start: the rule's roster (greedy day-by-day, shift-by-shift cover with an exact
legality test per employee). Then a descent that accepts sideways moves, over
the two classic nurse-rostering neighbourhoods: change the shift of one employee
on one day (another shift, or a day off; half of the time the new shift is one
the day is short of), and swap the assignments of two employees on one day. A
move is kept if the total penalty does not increase and the changed lines still
meet every hard constraint (each changed line is checked whole). Penalty changes
are computed incrementally from the cover counts and the requests. Moves are
drawn with random.Random(0), so a run of the same number of moves is
reproducible; the search stops at a share of TIME_LIMIT_S and writes the last
roster, which is never worse than the rule's.

It runs after rule.py's code, as one program (orharbor.problem_modules.ladder_programs.program:
rule.py without its entry point, then this file). From the rule it takes
greedy_roster() for the start, Contract to check lines, wishes() to price them,
and main() to read the instance and write the answer.
"""

import random
import time

START_TIME = time.monotonic()
TIME_LIMIT_S = 10.0
#: Fraction of TIME_LIMIT_S used for searching; the rest is the safety margin.
BUDGET_FRACTION = 0.8


def line_ok(c, line):
    """Does ``line`` meet every hard constraint of contract ``c``?"""
    state, minutes, weekends, counts = BEGIN, 0, 0, [0] * len(c.limit)
    for day, v in enumerate(line):
        move = c.step(state, day, v)
        if move is None:
            return False
        state, used = move
        weekends += used
        if v != OFF:
            minutes += c.minutes[v]
            counts[v] += 1
            if counts[v] > c.limit[v]:
                return False
    return c.lo <= minutes <= c.hi and weekends <= c.weekends


def local_search(inst, contracts, lines, deadline):
    """Improve ``lines`` in place with non-worsening changes and swaps until ``deadline``."""
    horizon, n_shifts, n = inst["horizon"], len(inst["shifts"]), len(contracts)
    index = {s["id"]: j for j, s in enumerate(inst["shifts"])}
    wish = wishes(inst)
    required = [[0] * n_shifts for _ in range(horizon)]
    weight = {}  # (day, shift) -> (under-cover weight, over-cover weight)
    for c in inst["cover"]:
        required[c["day"]][index[c["shift"]]] = c["requirement"]
        weight[c["day"], index[c["shift"]]] = c["under_weight"], c["over_weight"]
    on_duty = [[0] * n_shifts for _ in range(horizon)]
    for line in lines:
        for day, v in enumerate(line):
            if v != OFF:
                on_duty[day][v] += 1

    def cover(day, j, have):
        """Cover penalty of shift ``j`` on ``day`` with ``have`` employees on it (0 for a day off)."""
        if j == OFF or (day, j) not in weight:
            return 0
        under, over = weight[day, j]
        short = required[day][j] - have
        return under * short if short > 0 else -over * short

    def change_delta(e, day, v):
        u = lines[e][day]
        delta = wish[e].get((day, v), 0) - wish[e].get((day, u), 0)
        if u != OFF:
            delta += cover(day, u, on_duty[day][u] - 1) - cover(day, u, on_duty[day][u])
        if v != OFF:
            delta += cover(day, v, on_duty[day][v] + 1) - cover(day, v, on_duty[day][v])
        return delta

    rng = random.Random(0)
    choices = [[OFF] + c.types for c in contracts]
    moves = 0
    while moves % 256 or time.monotonic() < deadline:
        moves += 1
        day = rng.randrange(horizon)
        e = rng.randrange(n)
        if rng.random() < 0.5:  # change one employee's shift on one day
            u = lines[e][day]
            short = [j for j in contracts[e].types if on_duty[day][j] < required[day][j]]
            v = rng.choice(short if short and rng.random() < 0.5 else choices[e])
            if v == u or change_delta(e, day, v) > 0:
                continue
            lines[e][day] = v
            if not line_ok(contracts[e], lines[e]):
                lines[e][day] = u
                continue
            if u != OFF:
                on_duty[day][u] -= 1
            if v != OFF:
                on_duty[day][v] += 1
        else:  # swap two employees' assignments on one day: the cover stays the same
            f = rng.randrange(n)
            u, v = lines[e][day], lines[f][day]
            if u == v:
                continue
            delta = (
                wish[e].get((day, v), 0)
                - wish[e].get((day, u), 0)
                + wish[f].get((day, u), 0)
                - wish[f].get((day, v), 0)
            )
            if delta > 0:
                continue
            lines[e][day], lines[f][day] = v, u
            if not (line_ok(contracts[e], lines[e]) and line_ok(contracts[f], lines[f])):
                lines[e][day], lines[f][day] = u, v
    return lines


def searched_roster(inst, contracts):
    """The rule's roster after the local search, as one list of shift indices (OFF for a day off) per employee."""
    deadline = START_TIME + BUDGET_FRACTION * TIME_LIMIT_S
    return local_search(inst, contracts, greedy_roster(inst, contracts), deadline)


if __name__ == "__main__":
    main(searched_roster)
