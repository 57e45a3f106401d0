"""The CVRP instance's own rules (statement.md), checked before an instance is solved."""

from __future__ import annotations

from orharbor.problem_modules.checks import InvalidInstance, array, instance_object, integer, integers

__all__ = ["InvalidInstance", "validate_instance"]

ROUNDING = ("nint", "explicit")


def validate_instance(instance) -> dict:
    """``instance`` if it is a CVRP instance every customer of which can be served; else InvalidInstance."""
    inst = instance_object(instance, "cvrp", ("n_customers", "capacity", "demands", "rounding"))
    n = integer(inst["n_customers"], "n_customers", lo=1)
    capacity = integer(inst["capacity"], "capacity", lo=1)
    demands = integers(inst["demands"], "demands", n + 1, lo=0)
    if demands[0] != 0:
        raise InvalidInstance(f"demands[0]: the depot's demand must be 0, got {demands[0]}")
    for i in range(1, n + 1):
        if demands[i] > capacity:
            raise InvalidInstance(
                f"demands[{i}]: customer {i} demands {demands[i]}, above the capacity {capacity}: no route can serve it"
            )
    rounding = inst["rounding"]
    if rounding not in ROUNDING:
        raise InvalidInstance(f"rounding: expected one of {', '.join(map(repr, ROUNDING))}, got {rounding!r}")
    if rounding == "nint" or "coords" in inst:
        if "coords" not in inst:
            raise InvalidInstance('missing key \'coords\' (needed with "rounding": "nint")')
        for i, point in enumerate(array(inst["coords"], "coords", n + 1)):
            integers(point, f"coords[{i}]", 2)
    if rounding == "explicit":
        if "distances" not in inst:
            raise InvalidInstance('missing key \'distances\' (needed with "rounding": "explicit")')
        for i, row in enumerate(array(inst["distances"], "distances", n + 1)):
            integers(row, f"distances[{i}]", n + 1, lo=0)
    return inst
