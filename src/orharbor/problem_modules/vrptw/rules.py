"""The VRPTW instance's own rules (statement.md), checked before an instance is solved."""

from __future__ import annotations

from orharbor.problem_modules.checks import InvalidInstance, array, instance_object, integer, integers, number

from .verify import Infeasible, route_cost

__all__ = ["InvalidInstance", "validate_instance"]


def validate_instance(instance) -> dict:
    """``instance`` if it is a VRPTW instance every customer of which can be served; else InvalidInstance."""
    inst = instance_object(
        instance, "vrptw", ("n_customers", "n_vehicles", "capacity", "coords", "demands", "ready", "due", "service")
    )
    n = integer(inst["n_customers"], "n_customers", lo=1)
    integer(inst["n_vehicles"], "n_vehicles", lo=1)
    capacity = integer(inst["capacity"], "capacity", lo=1)
    for i, point in enumerate(array(inst["coords"], "coords", n + 1)):
        integers(point, f"coords[{i}]", 2)
    demands = integers(inst["demands"], "demands", n + 1, lo=0)
    ready = integers(inst["ready"], "ready", n + 1, lo=0)
    due = integers(inst["due"], "due", n + 1, lo=0)
    service = integers(inst["service"], "service", n + 1, lo=0)
    if "time_tolerance" in inst:
        number(inst["time_tolerance"], "time_tolerance", lo=0)
    if demands[0] != 0:
        raise InvalidInstance(f"demands[0]: the depot's demand must be 0, got {demands[0]}")
    if service[0] != 0:
        raise InvalidInstance(f"service[0]: the depot's service time must be 0, got {service[0]}")
    for i in range(n + 1):
        if ready[i] > due[i]:
            raise InvalidInstance(f"ready[{i}], due[{i}]: the time window [{ready[i]}, {due[i]}] is empty")
    for i in range(1, n + 1):
        if demands[i] > capacity:
            raise InvalidInstance(
                f"demands[{i}]: customer {i} demands {demands[i]}, above the capacity {capacity}: no route can serve it"
            )
        try:  # a route serving i alone is the earliest any route reaches i and gets back
            route_cost(inst, [i])
        except Infeasible as exc:
            raise InvalidInstance(
                f"customer {i} cannot be served by any route, even alone: {str(exc).split(': ', 1)[-1]}"
            ) from None
    return inst
