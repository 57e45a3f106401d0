"""Shift scheduling verifier (Curtois & Qu benchmark): standard library only (copied into every task).

``evaluate(instance, solution)`` returns the penalty of a roster or raises
:class:`Infeasible` naming the first broken rule, its employee and its day. The
instance is trusted (it is ours); the solution is not: its whole shape is
checked first, then the hard constraints employee by employee, then the
objective is summed. Linear time in the roster size.

The rules are those of schedulingbenchmarks.org (Instances 1-24) and of the
integer programme of Curtois and Qu (2014). Day 0 is a Monday, so weekend ``w``
is days ``7w + 5`` (Saturday) and ``7w + 6`` (Sunday). The horizon has no
history: before day 0 and after the last day there are as many shifts or days
off as needed, so a block of shifts or of days off that touches either end of
the horizon is never too short; a block is too short only when it lies between
days off (or shifts) on both sides.
"""

from __future__ import annotations

from orharbor.verifiers.strict import Infeasible, require_dict, require_list, short, type_name

__all__ = ["Infeasible", "evaluate", "penalty", "weekends"]

OFF = ""


def evaluate(instance: dict, solution) -> int:
    """Total penalty of ``solution = {"roster": {employee: [shift or "", ...], ...}}``."""
    rows = read_roster(instance, solution)
    for e, staff in enumerate(instance["staff"]):
        check_employee(instance, staff, rows[e])
    return penalty(instance, rows)


def read_roster(instance: dict, solution) -> list[list[str]]:
    """The roster's rows in staff order, each a list of shift ids or ``""``; only the exact shape passes."""
    ids = tuple(s["id"] for s in instance["staff"])
    horizon = instance["horizon"]
    known = {s["id"] for s in instance["shifts"]}
    require_dict(solution, "solution", ("roster",))
    roster = solution["roster"]
    if not isinstance(roster, dict):
        raise Infeasible(
            f"solution.roster: expected a JSON object (employee id -> list of shifts), got {type_name(roster)}"
        )
    staff = set(ids)
    missing = next((e for e in ids if e not in roster), None)
    if missing is not None:
        raise Infeasible(f"solution.roster: missing employee {missing!r}")
    if len(roster) != len(ids):  # keys are compared with a set: a flood of keys stays linear
        extra = min(str(k) for k in roster if k not in staff)
        raise Infeasible(f"solution.roster: unexpected key {short(extra)} (not an employee id)")
    rows = []
    for e in ids:
        where = f"solution.roster[{e!r}]"
        row = require_list(roster[e], where, horizon)
        for d, value in enumerate(row):
            if not isinstance(value, str):
                raise Infeasible(
                    f'{where}[{d}]: expected a shift id or "" for a day off, got {type_name(value)} {short(value)}'
                )
            if value != OFF and value not in known:
                raise Infeasible(
                    f'{where}[{d}]: unknown shift {short(value)} (known: {", ".join(sorted(known))}; "" is a day off)'
                )
        rows.append(row)
    return rows


def weekends(horizon: int) -> list[tuple[int, ...]]:
    """The days of each weekend inside the horizon: (Saturday, Sunday) = (7w + 5, 7w + 6)."""
    return [tuple(d for d in (7 * w + 5, 7 * w + 6) if d < horizon) for w in range((horizon + 1) // 7)]


def check_employee(instance: dict, staff: dict, row: list[str]) -> None:
    """Raise Infeasible on the first hard constraint ``row`` breaks for employee ``staff``."""
    e = staff["id"]
    horizon = len(row)
    minutes_of = {s["id"]: s["minutes"] for s in instance["shifts"]}
    forbidden = {s["id"]: set(s["forbidden_next"]) for s in instance["shifts"]}
    days_off = set(staff["days_off"])
    counts = dict.fromkeys(minutes_of, 0)
    total = 0
    run = 0
    for d, shift in enumerate(row):
        if shift == OFF:
            run = 0
            continue
        if d in days_off:
            raise Infeasible(f"employee {e} day {d}: shift {shift} on a day the employee must have off (days off)")
        previous = row[d - 1] if d else OFF
        if previous != OFF and shift in forbidden[previous]:
            raise Infeasible(
                f"employee {e} day {d}: shift {shift} may not follow shift {previous} of day {d - 1} (shift rotation)"
            )
        counts[shift] += 1
        if counts[shift] > staff["max_shifts"][shift]:
            raise Infeasible(
                f"employee {e} day {d}: shift {shift} number {counts[shift]}, above the maximum of "
                f"{staff['max_shifts'][shift]} shifts {shift} (max shifts)"
            )
        total += minutes_of[shift]
        if total > staff["max_total_minutes"]:
            raise Infeasible(
                f"employee {e} day {d}: {total} minutes worked by then, above the maximum of "
                f"{staff['max_total_minutes']} (max total minutes)"
            )
        run += 1
        if run > staff["max_consecutive_shifts"]:
            raise Infeasible(
                f"employee {e} day {d}: {run} consecutive shifts from day {d - run + 1}, above the "
                f"maximum of {staff['max_consecutive_shifts']} (max consecutive shifts)"
            )
    if total < staff["min_total_minutes"]:
        raise Infeasible(
            f"employee {e} days 0-{horizon - 1}: {total} minutes worked, below the minimum of "
            f"{staff['min_total_minutes']} (min total minutes)"
        )
    _check_blocks(e, row, working=True, minimum=staff["min_consecutive_shifts"])
    _check_blocks(e, row, working=False, minimum=staff["min_consecutive_days_off"])
    worked = 0
    for w, days in enumerate(weekends(horizon)):
        if any(row[d] != OFF for d in days):
            worked += 1
            if worked > staff["max_weekends"]:
                day = next(d for d in days if row[d] != OFF)
                raise Infeasible(
                    f"employee {e} day {day}: weekend {w} (days {days[0]}-{days[-1]}) is working weekend "
                    f"number {worked}, above the maximum of {staff['max_weekends']} (max weekends)"
                )


def _check_blocks(e: str, row: list[str], working: bool, minimum: int) -> None:
    """Every maximal block of shifts (or days off) with neighbours on both sides lasts at least ``minimum`` days."""
    horizon = len(row)
    start = 0
    while start < horizon:
        end = start
        while end + 1 < horizon and (row[end + 1] != OFF) == (row[start] != OFF):
            end += 1
        length = end - start + 1
        if (row[start] != OFF) == working and start > 0 and end < horizon - 1 and length < minimum:
            what = "working day(s) between days off" if working else "day(s) off between working days"
            rule = "min consecutive shifts" if working else "min consecutive days off"
            raise Infeasible(
                f"employee {e} days {start}-{end}: a run of {length} {what}, shorter than the "
                f"minimum of {minimum} ({rule})"
            )
        start = end + 1


def penalty(instance: dict, rows: list[list[str]]) -> int:
    """The objective of a trusted roster: unmet on-requests, met off-requests, under- and over-cover."""
    index = {s["id"]: e for e, s in enumerate(instance["staff"])}
    total = 0
    for r in instance["shift_on_requests"]:
        if rows[index[r["employee"]]][r["day"]] != r["shift"]:
            total += r["weight"]
    for r in instance["shift_off_requests"]:
        if rows[index[r["employee"]]][r["day"]] == r["shift"]:
            total += r["weight"]
    on_duty: dict[tuple[int, str], int] = {}
    for row in rows:
        for d, shift in enumerate(row):
            if shift != OFF:
                on_duty[d, shift] = on_duty.get((d, shift), 0) + 1
    for c in instance["cover"]:
        have = on_duty.get((c["day"], c["shift"]), 0)
        if have < c["requirement"]:
            total += c["under_weight"] * (c["requirement"] - have)
        else:
            total += c["over_weight"] * (have - c["requirement"])
    return total
