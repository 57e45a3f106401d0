"""RCPSP, local search: activity-list moves decoded by the serial SGS, each followed by forward-backward improvement.

Start: the rule's schedule (the shortest serial SGS schedule over six priority
rules). A solution is an activity list, decoded by the serial SGS (each
activity in list order at its earliest precedence- and resource-feasible start).
Every schedule is then improved by double justification, the forward-backward
improvement of Valls, Ballestin and Quintanilla (2005, "Justification and RCPSP:
a technique that pays", European Journal of Operational Research 165): schedule
the activities again backwards, latest finish first, each as late as possible
before the makespan; then forwards, earliest start of that schedule first, each
as early as possible. It never lengthens the schedule and often shortens it. A
move takes one activity of the current list and reinserts it at a random
position between its last predecessor and its first successor; the justified
result replaces the current list if its makespan is no longer (so the search
also walks across plateaus). It stops at the time budget or at a lower bound
(critical path, resource loads) and writes the best schedule found, never worse
than the rule's.

It runs after rule.py's code, as one program (orharbor.problem_modules.ladder_programs.program:
rule.py without its entry point, then this file). From the rule it takes
rule_schedule() for the start, serial_sgs() to decode activity lists and
earliest_starts() for the bound, and main() to read the instance and write the
answer.
"""

import random
import time

TIME_LIMIT_S = 10.0

#: Fraction of TIME_LIMIT_S used for searching; the rest is the safety margin.
BUDGET_FRACTION = 0.8


class Project:
    """The instance's data, with predecessor lists, and the schedules built from it."""

    def __init__(self, instance):
        self.durations = instance["durations"]
        self.demands = instance["demands"]
        self.capacities = instance["capacities"]
        self.successors = instance["successors"]
        self.predecessors = [[] for _ in self.durations]
        for i, after in enumerate(self.successors):
            for j in after:
                self.predecessors[j].append(i)

    def makespan(self, starts):
        return max((s + d for s, d in zip(starts, self.durations)), default=0)

    def lower_bound(self):
        """The larger of the critical path length and, per resource, the total work over the capacity."""
        bound = self.makespan(earliest_starts(self.durations, self.successors))
        for k, capacity in enumerate(self.capacities):
            work = sum(d * row[k] for d, row in zip(self.durations, self.demands))
            if capacity:
                bound = max(bound, -(-work // capacity))
        return bound

    def decode(self, activity_list):
        """(start times, makespan, activity list) of the justified serial schedule of ``activity_list``."""
        position = [0] * len(activity_list)
        for p, a in enumerate(activity_list):
            position[a] = p
        starts, _ = serial_sgs(self.durations, self.demands, self.capacities, self.successors, position)
        return self.justify(starts)

    def justify(self, starts):
        """Double justification: right (latest finish first), then left (earliest start first)."""
        durations = self.durations
        ends = [s + d for s, d in zip(starts, durations)]
        # Backwards: the project with reversed arcs and time, latest finish first.
        back, _ = serial_sgs(
            durations, self.demands, self.capacities, self.predecessors, [(-e, -s) for s, e in zip(starts, ends)]
        )
        span = self.makespan(back)
        right = [span - b - d for b, d in zip(back, durations)]
        left, order = serial_sgs(
            durations, self.demands, self.capacities, self.successors, [(r, r + d) for r, d in zip(right, durations)]
        )
        return left, self.makespan(left), order

    def shift(self, activity_list, rng):
        """``activity_list`` with one random activity moved to a random position still precedence-feasible."""
        activities = activity_list[:]
        a = activities.pop(rng.randrange(len(activities)))
        position = {b: p for p, b in enumerate(activities)}
        lo = max((position[p] + 1 for p in self.predecessors[a]), default=0)
        hi = min((position[s] for s in self.successors[a]), default=len(activities))
        activities.insert(rng.randint(lo, hi), a)
        return activities


def local_search(project, starts, deadline):
    """Best (start times, makespan) found from the schedule ``starts`` before ``deadline``."""
    rng = random.Random(0)
    bound = project.lower_bound()
    justified, value, current = project.justify(starts)
    best = min((starts, project.makespan(starts)), (justified, value), key=lambda t: t[1])
    while best[1] > bound and time.monotonic() < deadline:
        trial_starts, trial_value, trial_list = project.decode(project.shift(current, rng))
        if trial_value <= value:
            current, value = trial_list, trial_value
            if trial_value < best[1]:
                best = (trial_starts, trial_value)
    return best


def searched_starts(instance):
    """Start times of the best schedule the search finds from the rule's before its deadline."""
    deadline = time.monotonic() + BUDGET_FRACTION * TIME_LIMIT_S
    project = Project(instance)
    best, _ = local_search(project, rule_schedule(instance), deadline)
    return best


if __name__ == "__main__":
    main(searched_starts)
