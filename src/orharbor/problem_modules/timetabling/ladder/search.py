"""Curriculum-based timetabling, local search: lecture moves and swaps from the most-constrained-first timetable.

Start: the rule's timetable (most constrained lecture first, each placed at its
cheapest (period, room), with a bounded repair by unassignment). Then a descent
that accepts sideways moves, over the two neighbourhoods of the competition's
local searches (e.g. Lue and Hao 2010, "Adaptive tabu search for course
timetabling", EJOR 200(1)): move one lecture to a free (period, room), and swap
two lectures of different courses. A random target (period, room) is drawn for a
random lecture (half of the time in a room the course already uses): if it is
free the lecture moves there, else it swaps with the lecture there. The move is
kept if every hard rule still holds and the penalty, updated incrementally (the
lecture's capacity excess, its course's rooms and days, its curricula around the
two periods), does not increase. Moves are drawn with random.Random(0), so a run
of the same number of moves is reproducible; the search stops at a share of
TIME_LIMIT_S and writes the last timetable, never worse than the rule's.

It runs after rule.py's code, as one program (orharbor.problem_modules.ladder_programs.program:
rule.py without its entry point, then this file). From the rule it takes
construct() for the start, its Timetable's counts and the penalty weights, and
main() to read the instance and write the answer.
"""

import random
import time

START_TIME = time.monotonic()
TIME_LIMIT_S = 10.0
#: Fraction of TIME_LIMIT_S used for searching; the rest is the safety margin.
BUDGET_FRACTION = 0.8


def penalty(tt):
    """The soft penalty of the timetable ``tt``, summed from scratch."""
    total = 0
    for c, places in enumerate(tt.placed):
        total += sum(CAPACITY * max(0, tt.students[c] - tt.capacity[r]) for _, r in places)
        total += STABILITY * max(0, tt.n_rooms[c] - 1) + MIN_DAYS * max(0, tt.min_days[c] - tt.n_days[c])
    for q in range(len(tt.curriculum_at)):
        total += sum(tt.isolated(q, p) for p in range(tt.periods))
    return total


def local_search(tt, deadline):
    """Improve the complete timetable ``tt`` in place with non-worsening moves and swaps, until ``deadline``
    or a penalty of 0."""
    rng = random.Random(0)
    n_rooms = len(tt.capacity)
    lectures = [(c, p, r) for c, places in enumerate(tt.placed) for p, r in sorted(places)]
    where = {(p, r): i for i, (_, p, r) in enumerate(lectures)}
    total = penalty(tt)
    moves = 0
    while total > 0 and (moves % 256 or time.monotonic() < deadline):
        moves += 1
        i = rng.randrange(len(lectures))
        c, p, r = lectures[i]
        q = rng.randrange(tt.periods)
        s = rng.choice(tt.placed[c])[1] if rng.random() < 0.5 else rng.randrange(n_rooms)
        k = tt.room_at[q][s]
        if k == c:
            continue
        if k < 0:  # move the lecture to the free (q, s)
            delta = tt.remove(c, p, r)
            if tt.open(c, q):
                delta += tt.add(c, q, s)
                if delta <= 0:
                    total += delta
                    lectures[i] = (c, q, s)
                    del where[p, r]
                    where[q, s] = i
                    continue
                tt.remove(c, q, s)
            tt.add(c, p, r)
        else:  # swap with the lecture of course k at (q, s)
            j = where[q, s]
            delta = tt.remove(c, p, r) + tt.remove(k, q, s)
            if tt.open(c, q):
                delta += tt.add(c, q, s)
                if tt.open(k, p):
                    delta += tt.add(k, p, r)
                    if delta <= 0:
                        total += delta
                        lectures[i], lectures[j] = (c, q, s), (k, p, r)
                        where[p, r], where[q, s] = j, i
                        continue
                    tt.remove(k, p, r)
                tt.remove(c, q, s)
            tt.add(k, q, s)
            tt.add(c, p, r)
    return tt


def searched_timetable(inst):
    """The rule's timetable, improved by the local search until the deadline if it is complete."""
    tt = construct(inst)
    if all(len(places) == n for places, n in zip(tt.placed, tt.lectures)):  # complete: search from it
        local_search(tt, START_TIME + BUDGET_FRACTION * TIME_LIMIT_S)
    return tt


if __name__ == "__main__":
    main(searched_timetable)
