"""The RCPSP instance's own rules (statement.md), checked before an instance is solved."""

from __future__ import annotations

from orharbor.problem_modules.checks import InvalidInstance, array, instance_object, integer, integers

__all__ = ["InvalidInstance", "validate_instance"]


def validate_instance(instance) -> dict:
    """``instance`` if it is an RCPSP instance with a schedule; else InvalidInstance naming the first broken rule."""
    inst = instance_object(
        instance, "rcpsp", ("n_activities", "n_resources", "capacities", "durations", "demands", "successors")
    )
    n = integer(inst["n_activities"], "n_activities", lo=1)
    r = integer(inst["n_resources"], "n_resources", lo=0)
    capacities = integers(inst["capacities"], "capacities", r, lo=0)
    durations = integers(inst["durations"], "durations", n, lo=0)
    for i, row in enumerate(array(inst["demands"], "demands", n)):
        integers(row, f"demands[{i}]", r, lo=0)
        for k in range(r):
            if durations[i] > 0 and row[k] > capacities[k]:
                raise InvalidInstance(
                    f"demands[{i}][{k}]: activity {i} needs {row[k]} units of resource {k}, "
                    f"above its capacity {capacities[k]}: no schedule exists"
                )
    successors = array(inst["successors"], "successors", n)
    for i, after in enumerate(successors):
        integers(after, f"successors[{i}]", lo=0, hi=n - 1)
        if i in after:
            raise InvalidInstance(f"successors[{i}]: activity {i} is its own successor")
    _acyclic(successors)
    return inst


def _acyclic(successors: list[list[int]]) -> None:
    """InvalidInstance if the precedences form a cycle (Kahn's algorithm)."""
    indegree = [0] * len(successors)
    for after in successors:
        for j in after:
            indegree[j] += 1
    ready = [i for i, d in enumerate(indegree) if d == 0]
    done = 0
    while ready:
        i = ready.pop()
        done += 1
        for j in successors[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                ready.append(j)
    if done < len(successors):
        stuck = next(i for i, d in enumerate(indegree) if d > 0)
        raise InvalidInstance(
            f"successors: the precedences form a cycle (through activity {stuck}): no schedule exists"
        )
