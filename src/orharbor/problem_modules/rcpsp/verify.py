"""RCPSP verifier: standard library only (copied into every task).

``evaluate(instance, solution)`` returns the makespan of a feasible schedule
or raises :class:`Infeasible` naming the first broken rule. The instance is
trusted (it is ours); the solution is not. Resource usage is checked with an
event sweep over the sorted start and end events, so the time taken depends
on the number of activities, never on the length of the horizon.
"""

from __future__ import annotations

from orharbor.verifiers.strict import Infeasible, require_dict, require_int, require_list

__all__ = ["Infeasible", "evaluate"]


def evaluate(instance: dict, solution) -> int:
    """Makespan of ``solution = {"starts": [start time of every activity]}``."""
    n = instance["n_activities"]
    n_res = instance["n_resources"]
    durations, demands = instance["durations"], instance["demands"]
    capacities, successors = instance["capacities"], instance["successors"]
    require_dict(solution, "solution", ("starts",))
    starts = require_list(solution["starts"], "solution.starts", n)
    for i in range(n):
        require_int(starts[i], f"solution.starts[{i}]", lo=0)

    # Precedence: every successor starts no earlier than its predecessor ends.
    makespan = 0
    for i in range(n):
        end = starts[i] + durations[i]
        makespan = max(makespan, end)
        for j in successors[i]:
            if starts[j] < end:
                raise Infeasible(f"activity {j} starts at {starts[j]} before its predecessor {i} ends at {end}")

    # Resources: sweep the events in time order; at equal times ends come first
    # (an activity occupies [start, start + duration)), zero durations use nothing.
    events = []
    for i in range(n):
        if durations[i] > 0 and any(demands[i]):
            events.append((starts[i], 1, i))
            events.append((starts[i] + durations[i], 0, i))
    events.sort()
    usage = [0] * n_res
    for time, is_start, i in events:
        row = demands[i]
        if not is_start:
            for k in range(n_res):
                usage[k] -= row[k]
            continue
        for k in range(n_res):
            if row[k]:
                usage[k] += row[k]
                if usage[k] > capacities[k]:
                    raise Infeasible(
                        f"resource {k} over capacity at time {time}: demand {usage[k]} > {capacities[k]} "
                        f"(activity {i} starts there)"
                    )
    return makespan
