"""Weighted tardiness, constructive rule: the apparent tardiness cost (ATC) rule.

Vepsalainen and Morton (1987), "Priority rules for job shops with weighted
tardiness costs", Management Science 33(8). Whenever the machine is free, at
time t, it takes the unscheduled job of largest index

    I_j(t) = (w_j / p_j) * exp(-max(0, d_j - p_j - t) / (K * p_avg)),

weighted shortest processing time, discounted by the job's slack; p_avg is the
mean processing time of the unscheduled jobs and K the look-ahead parameter.
The rule is applied for each K of a small grid spanning the usual range
(0.5 to 4.5) and the best sequence is kept. Jobs of zero processing time go
first (they delay nobody). Priorities are compared by their logarithms, so
that large slacks do not underflow to ties.

Its program begins with ladder_shared/local_search.py, the loop of the search
that follows the rule, which the rule does not use
(orharbor.problem_modules.ladder_programs.program, from the "# ladder: shared
local_search" line below). Usage: python3 -I rule.py INSTANCE.json SOLUTION.json
"""

import json
import math
import sys

# ladder: shared local_search

#: Look-ahead parameters tried.
K_VALUES = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.5)


def total_weighted_tardiness(p, w, d, sequence):
    time = total = 0
    for j in sequence:
        time += p[j]
        total += w[j] * max(0, time - d[j])
    return total


def atc_sequence(p, w, d, k):
    """The ATC sequence for look-ahead parameter ``k`` (ties to the lower job number)."""
    sequence = [j for j in range(len(p)) if p[j] == 0]
    left = [j for j in range(len(p)) if p[j] > 0]
    time = 0
    while left:
        scale = k * sum(p[j] for j in left) / len(left)
        best = max(
            left, key=lambda j: (math.log(w[j] / p[j]) - max(0, d[j] - p[j] - time) / scale if w[j] else -math.inf, -j)
        )
        left.remove(best)
        sequence.append(best)
        time += p[best]
    return sequence


def atc(p, w, d):
    """The best ATC sequence over K_VALUES (the first such on ties)."""
    sequences = [atc_sequence(p, w, d, k) for k in K_VALUES]
    return min(sequences, key=lambda s: total_weighted_tardiness(p, w, d, s))


def main(order=atc):
    """Write the ``sequence`` that ``order(p, w, d)`` gives (the rule's by default) for the instance."""
    with open(sys.argv[1]) as f:
        instance = json.load(f)
    sequence = order(instance["processing_times"], instance["weights"], instance["due_dates"])
    with open(sys.argv[2], "w") as f:
        json.dump({"sequence": sequence}, f)


if __name__ == "__main__":
    main()
