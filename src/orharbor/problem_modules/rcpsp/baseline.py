"""The naive RCPSP schedule: median of the serial SGS over fixed random activity lists.

The serial schedule generation scheme (SSGS; Kelley 1963, Kolisch 1996) takes a
precedence-feasible activity list and schedules the activities one after the
other, each at its earliest start that respects its predecessors' ends and the
resource capacities left by the activities already scheduled.

Why not the index order 0, 1, ..., n-1 the issue asked for? Activities are
numbered topologically, and the numbering follows the network's depth, so the
index order behaves like a priority rule: random precedence-feasible lists
scheduled by the same SSGS averaged a reward of -0.44, -0.71, -0.62, -0.21,
-0.40, -0.24 and +0.04 against it on seven generated j30 instances (2 s CP-SAT
references), far from "about as good as a random feasible answer" (DESIGN.md).
The median-makespan schedule of a fixed set of random lists is, by construction:
against it, the same random lists average -0.03, -0.04, -0.19, -0.13, -0.06,
+0.37 and -0.15 on those seven instances (the +0.37 one has a gap of only 4
between baseline and reference), and -0.02, -0.03, +0.03 on three j60 ones.
Instances with RS = 1.0 are trivial: the earliest-start schedule is feasible, so
every list gives the optimum and baseline equals reference.
"""

from __future__ import annotations

import random

#: How many fixed pseudo-random activity lists the baseline schedules (odd: one median).
N_LISTS = 31
#: List i is drawn with ``random.Random(LIST_SEED + i)``.
LIST_SEED = 1_000_003

BASELINE = (
    "Median serial schedule of random activity lists. An activity list is precedence-"
    "feasible when every activity comes after its predecessors; the serial schedule "
    "generation scheme walks the list and starts each activity at the earliest time that is "
    "no earlier than the end of each of its predecessors and at which every resource has "
    "enough capacity left, over the whole duration, beside the activities already scheduled. "
    f"The baseline draws {N_LISTS} fixed random precedence-feasible lists (repeatedly taking a "
    "uniformly random activity whose predecessors are all listed, with Python's "
    f"random.Random(seed) for seeds {LIST_SEED} to {LIST_SEED + N_LISTS - 1}), schedules each, "
    "and keeps the schedule with the median makespan: feasible by construction, "
    "deterministic, and no attempt to optimise, so it is about as good as a random feasible answer."
)


def predecessors(instance: dict) -> list[list[int]]:
    """Predecessor lists derived from the successor lists."""
    preds: list[list[int]] = [[] for _ in range(instance["n_activities"])]
    for i, succ in enumerate(instance["successors"]):
        for j in succ:
            preds[j].append(i)
    return preds


def ssgs(instance: dict, activity_list: list[int]) -> dict:
    """Serial SGS schedule of ``activity_list`` (a precedence-feasible permutation).

    Each activity, in list order, starts at the earliest time ``t`` no earlier
    than its predecessors' ends such that, over ``[t, t + duration)``, its demand
    fits beside the usage of the activities scheduled before it.
    """
    n, n_res = instance["n_activities"], instance["n_resources"]
    durations, demands, capacities = instance["durations"], instance["demands"], instance["capacities"]
    if sorted(activity_list) != list(range(n)):
        raise ValueError(f"activity_list must be a permutation of 0..{n - 1}")
    preds = predecessors(instance)
    horizon = sum(durations) + 1
    usage = [[0] * horizon for _ in range(n_res)]
    starts = [-1] * n
    for a in activity_list:
        earliest = 0
        for p in preds[a]:
            if starts[p] < 0:
                raise ValueError(f"activity_list is not precedence-feasible: {a} comes before its predecessor {p}")
            earliest = max(earliest, starts[p] + durations[p])
        d = durations[a]
        needs = [(usage[k], demands[a][k], capacities[k] - demands[a][k]) for k in range(n_res) if demands[a][k]]
        for _, r, room in needs:
            if room < 0:
                raise ValueError(f"activity {a} demands {r} of a resource with capacity {r + room}")
        t = earliest
        if d > 0 and needs:
            u = t
            while u < t + d:  # find a window [t, t + d) where every resource has room
                if any(row[u] > room for row, _, room in needs):
                    t = u + 1
                u += 1
            for row, r, _ in needs:
                for u in range(t, t + d):
                    row[u] += r
        starts[a] = t
    return {"starts": starts}


def random_activity_list(instance: dict, rng) -> list[int]:
    """A random precedence-feasible list: repeatedly pick a uniformly random eligible activity."""
    preds = predecessors(instance)
    missing = [len(p) for p in preds]
    eligible = [i for i in range(instance["n_activities"]) if missing[i] == 0]
    order = []
    while eligible:
        a = eligible.pop(rng.randrange(len(eligible)))
        order.append(a)
        for j in instance["successors"][a]:
            missing[j] -= 1
            if missing[j] == 0:
                eligible.append(j)
    return order


def _makespan(instance: dict, solution: dict) -> int:
    return max((s + d for s, d in zip(solution["starts"], instance["durations"])), default=0)


def baseline(instance: dict) -> dict:
    """The median-makespan serial schedule among the fixed random activity lists."""
    scored = []
    for i in range(N_LISTS):
        solution = ssgs(instance, random_activity_list(instance, random.Random(LIST_SEED + i)))
        scored.append((_makespan(instance, solution), i, solution))
    scored.sort(key=lambda t: (t[0], t[1]))
    return scored[N_LISTS // 2][2]
