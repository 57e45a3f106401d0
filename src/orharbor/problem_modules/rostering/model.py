"""The CP-SAT model of shift scheduling, shared by the baseline and the reference.

One Boolean ``x[e, d, s]`` per employee, day and shift the employee may work
(none on a required day off or for a shift whose maximum is 0) and one
``work[e, d]`` equal to their sum (at most one shift a day). The hard
constraints of the benchmark are hard: forbidden successions as linear cuts
``x[e, d, s] + sum of x[e, d+1, t] over the t that may not follow s <= 1``,
maxima per shift type, total minutes in [min, max], at most ``cmax`` shifts in
every window of ``cmax + 1`` days, and the short blocks of shifts (or days off)
forbidden by one clause each, as OR-Tools' ``shift_scheduling_sat.py``'s
``negated_bounded_span`` does, but only for blocks with a neighbour on both
sides (the benchmark's boundary rule: blocks touching either end of the horizon
are never too short); one Boolean per weekend worked, at most ``max_weekends``
of them. The hard constraints never link two employees, so a model may hold
any subset of them. The soft part is the objective (:func:`objective_terms`):
the weight of every on-request not granted, of every off-request granted, and
under/over cover variables weighted per day and shift. Requests that cannot be
granted (the shift is not allowed that day) are a constant. OR-Tools' ``cp_model``
is passed in, so importing this module never loads OR-Tools.
"""

from __future__ import annotations

from .verify import OFF, weekends


def hard_model(instance: dict, cp_model, employees=None):
    """``(model, x, work, weekend)``: the hard constraints of ``employees`` (default all) on a new model."""
    model = cp_model.CpModel()
    x: dict[tuple[int, int, str], object] = {}
    work: dict[tuple[int, int], object] = {}
    weekend: dict[tuple[int, int], object] = {}
    for e in range(len(instance["staff"])) if employees is None else employees:
        add_employee(model, instance, e, x, work, weekend)
    return model, x, work, weekend


def add_employee(model, instance: dict, e: int, x: dict, work: dict, weekend: dict) -> None:
    """Variables and hard constraints of employee ``e`` (they involve no other employee)."""
    horizon = instance["horizon"]
    shifts = instance["shifts"]
    staff = instance["staff"][e]
    minutes = {s["id"]: s["minutes"] for s in shifts}
    allowed = [s["id"] for s in shifts if staff["max_shifts"][s["id"]] > 0]
    off = set(staff["days_off"])
    mine = []  # (minutes, variable) of the employee's shifts
    for d in range(horizon):
        day = [] if d in off else allowed
        for s in day:
            x[e, d, s] = model.new_bool_var(f"x_{e}_{d}_{s}")
            mine.append((minutes[s], x[e, d, s]))
        work[e, d] = model.new_bool_var(f"work_{e}_{d}")
        model.add(work[e, d] == sum(x[e, d, s] for s in day))
    for shift in shifts:
        s, banned = shift["id"], shift["forbidden_next"]
        for d in range(horizon - 1):
            after = [x[e, d + 1, t] for t in banned if (e, d + 1, t) in x]
            if (e, d, s) in x and after:
                model.add(x[e, d, s] + sum(after) <= 1)
    for s in allowed:
        days = [x[e, d, s] for d in range(horizon) if (e, d, s) in x]
        if staff["max_shifts"][s] < len(days):
            model.add(sum(days) <= staff["max_shifts"][s])
    model.add_linear_constraint(sum(m * v for m, v in mine), staff["min_total_minutes"], staff["max_total_minutes"])
    _sequences(model, [work[e, d] for d in range(horizon)], staff)
    for w, weekend_days in enumerate(weekends(horizon)):
        weekend[e, w] = model.new_bool_var(f"weekend_{e}_{w}")
        for d in weekend_days:
            model.add_implication(work[e, d], weekend[e, w])
        model.add(weekend[e, w] <= sum(work[e, d] for d in weekend_days))
    model.add(sum(weekend[e, w] for w in range(len(weekends(horizon)))) <= staff["max_weekends"])


def _sequences(model, works: list, staff: dict) -> None:
    """Max consecutive shifts; no block of shifts (days off) shorter than the minimum between neighbours."""
    horizon = len(works)
    cmax = staff["max_consecutive_shifts"]
    for start in range(horizon - cmax):
        model.add(sum(works[start : start + cmax + 1]) <= cmax)
    for minimum, on in ((staff["min_consecutive_shifts"], True), (staff["min_consecutive_days_off"], False)):
        for length in range(1, minimum):
            for start in range(1, horizon - length):  # block [start, start + length) with both neighbours inside
                block = works[start : start + length]
                neighbours = [works[start - 1], works[start + length]]
                if on:  # forbid: off, work x length, off
                    model.add_bool_or(neighbours + [v.Not() for v in block])
                else:  # forbid: work, off x length, work
                    model.add_bool_or([v.Not() for v in neighbours] + block)


def objective_terms(instance: dict, model, x: dict, employees=None, fixed=None) -> tuple[list, int, dict]:
    """``(weighted terms, constant, cover)`` of the penalty of ``employees`` (default all).

    ``fixed[d, s]`` counts the other employees, whose lines are fixed, working
    shift ``s`` on day ``d``; ``cover[d, s] = (under, over)`` variables.
    """
    members = set(range(len(instance["staff"])) if employees is None else employees)
    index = {s["id"]: e for e, s in enumerate(instance["staff"])}
    fixed = fixed or {}
    n_staff = len(instance["staff"])
    terms, constant, cover = [], 0, {}
    for r in instance["shift_on_requests"]:
        if index[r["employee"]] in members:
            v = x.get((index[r["employee"]], r["day"], r["shift"]))
            constant += r["weight"]
            if v is not None:
                terms.append(-r["weight"] * v)
    for r in instance["shift_off_requests"]:
        v = x.get((index[r["employee"]], r["day"], r["shift"]))
        if v is not None:
            terms.append(r["weight"] * v)
    for c in instance["cover"]:
        d, s, need = c["day"], c["shift"], c["requirement"]
        have = sum(x[e, d, s] for e in members if (e, d, s) in x) + fixed.get((d, s), 0)
        under = model.new_int_var(0, need, f"under_{d}_{s}")
        over = model.new_int_var(0, n_staff, f"over_{d}_{s}")
        model.add(have + under - over == need)
        terms += [c["under_weight"] * under, c["over_weight"] * over]
        cover[d, s] = (under, over)
    return terms, constant, cover


def row_from(instance: dict, x: dict, e: int, value) -> list[str]:
    """Employee ``e``'s line of CP-SAT values (``value(var) -> bool``)."""
    row = [OFF] * instance["horizon"]
    for shift in instance["shifts"]:
        for d in range(instance["horizon"]):
            v = x.get((e, d, shift["id"]))
            if v is not None and value(v):
                row[d] = shift["id"]
    return row


def add_hint(model, instance: dict, rows: list[list[str]], x: dict, work: dict, weekend: dict, cover: dict) -> None:
    """Hint every variable with the roster ``rows`` (staff order), so that CP-SAT starts from it."""
    for (e, d, s), v in x.items():
        model.add_hint(v, rows[e][d] == s)
    for (e, d), v in work.items():
        model.add_hint(v, rows[e][d] != OFF)
    for (e, w), v in weekend.items():
        model.add_hint(v, any(rows[e][d] != OFF for d in weekends(instance["horizon"])[w]))
    on_duty: dict[tuple[int, str], int] = {}
    for row in rows:
        for d, s in enumerate(row):
            on_duty[d, s] = on_duty.get((d, s), 0) + 1
    for c in instance["cover"]:
        under, over = cover[c["day"], c["shift"]]
        have = on_duty.get((c["day"], c["shift"]), 0)
        model.add_hint(under, max(0, c["requirement"] - have))
        model.add_hint(over, max(0, have - c["requirement"]))
