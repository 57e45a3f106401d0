"""The rostering instance's own rules (statement.md), checked before an instance is solved."""

from __future__ import annotations

from orharbor.problem_modules.checks import (
    InvalidInstance,
    array,
    instance_object,
    integer,
    integers,
    known,
    record,
    unique_ids,
)

__all__ = ["InvalidInstance", "validate_instance"]

STAFF_KEYS = (
    "id",
    "max_shifts",
    "max_total_minutes",
    "min_total_minutes",
    "max_consecutive_shifts",
    "min_consecutive_shifts",
    "min_consecutive_days_off",
    "max_weekends",
    "days_off",
)
REQUEST_KEYS = ("employee", "day", "shift", "weight")
COVER_KEYS = ("day", "shift", "requirement", "under_weight", "over_weight")


def validate_instance(instance) -> dict:
    """``instance`` if it is a rostering instance; else InvalidInstance naming the first broken rule."""
    inst = instance_object(
        instance, "rostering", ("horizon", "shifts", "staff", "shift_on_requests", "shift_off_requests", "cover")
    )
    horizon = integer(inst["horizon"], "horizon", lo=1)
    shifts = array(inst["shifts"], "shifts")
    if not shifts:
        raise InvalidInstance("shifts: expected at least one shift type")
    for i, shift in enumerate(shifts):
        record(shift, f"shifts[{i}]", ("id", "minutes", "forbidden_next"))
        integer(shift["minutes"], f"shifts[{i}].minutes", lo=0)
    shift_ids = unique_ids(shifts, "shifts")
    for i, shift in enumerate(shifts):
        for k, other in enumerate(array(shift["forbidden_next"], f"shifts[{i}].forbidden_next")):
            known(other, f"shifts[{i}].forbidden_next[{k}]", shift_ids, "shift")
    staff = array(inst["staff"], "staff")
    if not staff:
        raise InvalidInstance("staff: expected at least one employee")
    for e, person in enumerate(staff):
        _check_employee(record(person, f"staff[{e}]", STAFF_KEYS), f"staff[{e}]", horizon, shift_ids)
    staff_ids = unique_ids(staff, "staff")
    for key in ("shift_on_requests", "shift_off_requests"):
        for k, request in enumerate(array(inst[key], key)):
            where = f"{key}[{k}]"
            record(request, where, REQUEST_KEYS)
            known(request["employee"], f"{where}.employee", staff_ids, "employee")
            integer(request["day"], f"{where}.day", lo=0, hi=horizon - 1)
            known(request["shift"], f"{where}.shift", shift_ids, "shift")
            integer(request["weight"], f"{where}.weight", lo=0)
    for k, cover in enumerate(array(inst["cover"], "cover")):
        where = f"cover[{k}]"
        record(cover, where, COVER_KEYS)
        integer(cover["day"], f"{where}.day", lo=0, hi=horizon - 1)
        known(cover["shift"], f"{where}.shift", shift_ids, "shift")
        for field in ("requirement", "under_weight", "over_weight"):
            integer(cover[field], f"{where}.{field}", lo=0)
    return inst


def _check_employee(person: dict, where: str, horizon: int, shift_ids: dict[str, int]) -> None:
    limits = person["max_shifts"]
    if not isinstance(limits, dict):
        raise InvalidInstance(f"{where}.max_shifts: expected a JSON object (shift id -> most shifts)")
    for shift in shift_ids:
        if shift not in limits:
            raise InvalidInstance(f"{where}.max_shifts: missing shift {shift!r} (every shift id needs a limit)")
    for shift, limit in limits.items():
        known(shift, f"{where}.max_shifts", shift_ids, "shift")
        integer(limit, f"{where}.max_shifts[{shift!r}]", lo=0)
    for field in (
        "max_total_minutes",
        "min_total_minutes",
        "min_consecutive_shifts",
        "min_consecutive_days_off",
        "max_weekends",
    ):
        integer(person[field], f"{where}.{field}", lo=0)
    integer(person["max_consecutive_shifts"], f"{where}.max_consecutive_shifts", lo=1)
    if person["min_total_minutes"] > person["max_total_minutes"]:
        raise InvalidInstance(
            f"{where}: min_total_minutes {person['min_total_minutes']} is above "
            f"max_total_minutes {person['max_total_minutes']}: no roster exists"
        )
    integers(person["days_off"], f"{where}.days_off", lo=0, hi=horizon - 1)
