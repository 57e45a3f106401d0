"""The weighted tardiness instance's own rules (statement.md), checked before an instance is solved."""

from __future__ import annotations

from orharbor.problem_modules.checks import InvalidInstance, instance_object, integer, integers

__all__ = ["InvalidInstance", "validate_instance"]


def validate_instance(instance) -> dict:
    """``instance`` if it is a weighted tardiness instance; else InvalidInstance naming the first broken rule."""
    inst = instance_object(instance, "wtardiness", ("n_jobs", "processing_times", "weights", "due_dates"))
    n = integer(inst["n_jobs"], "n_jobs", lo=1)
    for key in ("processing_times", "weights", "due_dates"):
        integers(inst[key], key, n, lo=0)
    return inst
