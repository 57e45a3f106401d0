"""The job shop instance's own rules (statement.md), checked before an instance is solved."""

from __future__ import annotations

from orharbor.problem_modules.checks import InvalidInstance, array, instance_object, integer, integers

__all__ = ["InvalidInstance", "validate_instance"]


def validate_instance(instance) -> dict:
    """``instance`` if it is a job shop instance; else InvalidInstance naming the first broken rule."""
    inst = instance_object(instance, "jobshop", ("n_jobs", "n_machines", "machines", "durations"))
    n = integer(inst["n_jobs"], "n_jobs", lo=1)
    m = integer(inst["n_machines"], "n_machines", lo=1)
    for j, route in enumerate(array(inst["machines"], "machines", n)):
        integers(route, f"machines[{j}]", m, lo=0, hi=m - 1)
        if len(set(route)) != m:
            twice = next(machine for machine in route if route.count(machine) > 1)
            raise InvalidInstance(
                f"machines[{j}]: machine {twice} appears twice (every job visits every machine exactly once)"
            )
    for j, row in enumerate(array(inst["durations"], "durations", n)):
        integers(row, f"durations[{j}]", m, lo=0)
    return inst
