"""The text format of the shift scheduling benchmark (schedulingbenchmarks.org, ``Instance1.txt``).

A file is seven sections, each a ``SECTION_...`` line, ``#`` comment lines and
comma-separated rows, separated by blank lines::

    SECTION_HORIZON              the number of days (day 0 is a Monday)
    SECTION_SHIFTS               ShiftID, Length in mins, shifts which cannot follow it (| separated)
    SECTION_STAFF                ID, MaxShifts (ShiftID=max | ...), MaxTotalMinutes, MinTotalMinutes,
                                 MaxConsecutiveShifts, MinConsecutiveShifts, MinConsecutiveDaysOff, MaxWeekends
    SECTION_DAYS_OFF             EmployeeID, day, day, ...
    SECTION_SHIFT_ON_REQUESTS    EmployeeID, Day, ShiftID, Weight
    SECTION_SHIFT_OFF_REQUESTS   EmployeeID, Day, ShiftID, Weight
    SECTION_COVER                Day, ShiftID, Requirement, Weight for under, Weight for over

The reader accepts the sections in any order, comments and blank lines
anywhere, and checks every reference (shift, employee, day) and every number;
a broken file raises ``ValueError("file:line: ...")``. The writer's canonical
layout is the published one: the comment lines of the published files, one
blank line between sections, the days-off row of every employee who has days
off, in staff order. All 24 published instances share that layout, so
``write(read(text)) == text`` byte for byte; ``read`` records in
``instance["layout"]`` only the line ending when it is not ``\\n`` (the
published files use CRLF). A file laid out differently (other comments, rows
in another order) is read all the same and written canonically.
"""

from __future__ import annotations

from typing import Any

from ..textfile import Lines, check_format, is_int, reader, split_lines, with_newline

FORMATS = ("schedulingbenchmarks",)
SECTIONS = (
    "SECTION_HORIZON",
    "SECTION_SHIFTS",
    "SECTION_STAFF",
    "SECTION_DAYS_OFF",
    "SECTION_SHIFT_ON_REQUESTS",
    "SECTION_SHIFT_OFF_REQUESTS",
    "SECTION_COVER",
)
#: The comment lines of the published files: before SECTION_HORIZON, then after each section keyword.
PREAMBLE = "# This is a comment. Comments start with #"
COMMENTS = {
    "SECTION_HORIZON": ("# All instances start on a Monday", "# The horizon length in days:"),
    "SECTION_SHIFTS": ("# ShiftID, Length in mins, Shifts which cannot follow this shift | separated",),
    "SECTION_STAFF": (
        "# ID, MaxShifts, MaxTotalMinutes, MinTotalMinutes, MaxConsecutiveShifts, "
        "MinConsecutiveShifts, MinConsecutiveDaysOff, MaxWeekends",
    ),
    "SECTION_DAYS_OFF": ("# EmployeeID, DayIndexes (start at zero)",),
    "SECTION_SHIFT_ON_REQUESTS": ("# EmployeeID, Day, ShiftID, Weight",),
    "SECTION_SHIFT_OFF_REQUESTS": ("# EmployeeID, Day, ShiftID, Weight",),
    "SECTION_COVER": ("# Day, ShiftID, Requirement, Weight for under, Weight for over",),
}
STAFF_FIELDS = (
    "max_total_minutes",
    "min_total_minutes",
    "max_consecutive_shifts",
    "min_consecutive_shifts",
    "min_consecutive_days_off",
    "max_weekends",
)
DATA_KEYS = ("horizon", "shifts", "staff", "shift_on_requests", "shift_off_requests", "cover")


# --------------------------------------------------------------------------- read


def parse(text: str, name: str = "<text>", stem: str | None = None) -> dict:
    """The instance of a benchmark text (pure: text in, dict out)."""
    lines, newline = split_lines(text, name)
    rows = _sections(lines)
    horizon = _horizon(lines, rows["SECTION_HORIZON"])
    shifts = _shifts(lines, rows["SECTION_SHIFTS"])
    shift_ids = [s["id"] for s in shifts]
    staff = _staff(lines, rows["SECTION_STAFF"], shift_ids)
    _days_off(lines, rows["SECTION_DAYS_OFF"], staff, horizon)
    staff_ids = {s["id"] for s in staff}
    instance = {
        "problem": "rostering",
        "name": stem or "rostering",
        "horizon": horizon,
        "shifts": shifts,
        "staff": staff,
        "shift_on_requests": _requests(lines, rows["SECTION_SHIFT_ON_REQUESTS"], staff_ids, shift_ids, horizon, "on"),
        "shift_off_requests": _requests(
            lines, rows["SECTION_SHIFT_OFF_REQUESTS"], staff_ids, shift_ids, horizon, "off"
        ),
        "cover": _cover(lines, rows["SECTION_COVER"], shift_ids, horizon),
    }
    if newline != "\n":
        instance["layout"] = {"format": FORMATS[0], "newline": newline}
    if write(instance) != text:
        instance.pop("layout", None)  # an unusual layout: keep the data, write canonically
    return instance


read = reader(FORMATS, "rostering", parse)


def _sections(lines: Lines) -> dict[str, list[tuple[int, str]]]:
    """``section -> [(line number, row), ...]``: comments and blank lines dropped, each section once."""
    rows: dict[str, list[tuple[int, str]]] = {}
    current = None
    for lineno, line in enumerate(lines.lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("SECTION_"):
            if stripped not in SECTIONS:
                raise lines.error(lineno, f"unknown section {stripped[:40]!r} (known: {', '.join(SECTIONS)})")
            if stripped in rows:
                raise lines.error(lineno, f"{stripped} appears twice")
            current = rows[stripped] = []
            continue
        if current is None:
            raise lines.error(lineno, f"expected SECTION_HORIZON or a comment, got {stripped[:40]!r}")
        current.append((lineno, stripped))
    for section in SECTIONS:
        if section not in rows:
            raise lines.error(len(lines.lines) + 1, f"expected a {section}, got the end of the file")
    return rows


def _fields(lines: Lines, lineno: int, row: str, count: int, what: str) -> list[str]:
    fields = [f.strip() for f in row.split(",")]
    if len(fields) != count:
        raise lines.error(lineno, f"expected {count} comma-separated fields ({what}), got {len(fields)}")
    return fields


def _int(lines: Lines, lineno: int, token: str, what: str, lo: int = 0, hi: int | None = None) -> int:
    if not is_int(token):
        raise lines.error(lineno, f"expected an integer {what}, got {token[:40]!r}")
    value = int(token)
    if value < lo or (hi is not None and value > hi):
        bounds = f"at least {lo}" if hi is None else f"in {lo}..{hi}"
        raise lines.error(lineno, f"{what} {value} is out of range (expected {bounds})")
    return value


def _id(lines: Lines, lineno: int, token: str, what: str) -> str:
    if not token or any(c.isspace() or c in ",|=" for c in token):
        raise lines.error(lineno, f"expected {what} (no spaces, ',', '|' or '='), got {token[:40]!r}")
    return token


def _known(lines: Lines, lineno: int, token: str, known, what: str) -> str:
    if token not in known:
        raise lines.error(lineno, f"unknown {what} {token[:40]!r}")
    return token


def _horizon(lines: Lines, rows) -> int:
    if len(rows) != 1:
        at = rows[1][0] if len(rows) > 1 else len(lines.lines) + 1
        raise lines.error(at, f"SECTION_HORIZON holds one number, the days in the horizon; got {len(rows)} rows")
    lineno, row = rows[0]
    return _int(lines, lineno, row, "number of days", lo=1)


def _shifts(lines: Lines, rows) -> list[dict]:
    shifts, seen = [], set()
    if not rows:
        raise lines.error(len(lines.lines) + 1, "SECTION_SHIFTS lists no shift")
    for lineno, row in rows:
        sid, length, follow = _fields(lines, lineno, row, 3, "ShiftID, Length in mins, forbidden successors")
        _id(lines, lineno, sid, "a shift id")
        if sid in seen:
            raise lines.error(lineno, f"shift {sid} is defined twice")
        seen.add(sid)
        forbidden = follow.split("|") if follow else []
        shifts.append(
            {
                "id": sid,
                "minutes": _int(lines, lineno, length, f"length of shift {sid}"),
                "forbidden_next": forbidden,
                "_line": lineno,
            }
        )
    for shift in shifts:
        lineno = shift.pop("_line")
        if len(set(shift["forbidden_next"])) != len(shift["forbidden_next"]):
            raise lines.error(lineno, f"shift {shift['id']}: a forbidden successor is listed twice")
        for other in shift["forbidden_next"]:
            _known(lines, lineno, other, seen, f"shift among the successors of shift {shift['id']}:")
    return shifts


def _staff(lines: Lines, rows, shift_ids: list[str]) -> list[dict]:
    staff, seen = [], set()
    if not rows:
        raise lines.error(len(lines.lines) + 1, "SECTION_STAFF lists no employee")
    for lineno, row in rows:
        fields = _fields(
            lines,
            lineno,
            row,
            8,
            "ID, MaxShifts, MaxTotalMinutes, MinTotalMinutes, MaxConsecutiveShifts, "
            "MinConsecutiveShifts, MinConsecutiveDaysOff, MaxWeekends",
        )
        eid = _id(lines, lineno, fields[0], "an employee id")
        if eid in seen:
            raise lines.error(lineno, f"employee {eid} is defined twice")
        seen.add(eid)
        max_shifts: dict[str, int] = {}
        for item in fields[1].split("|"):
            sid, eq, value = item.partition("=")
            if not eq:
                raise lines.error(lineno, f"employee {eid}: expected ShiftID=max in MaxShifts, got {item[:40]!r}")
            _known(lines, lineno, sid, shift_ids, f"shift in the MaxShifts of employee {eid}:")
            if sid in max_shifts:
                raise lines.error(lineno, f"employee {eid}: shift {sid} appears twice in MaxShifts")
            max_shifts[sid] = _int(lines, lineno, value, f"maximum of shift {sid} for employee {eid}")
        missing = [s for s in shift_ids if s not in max_shifts]
        if missing:
            raise lines.error(lineno, f"employee {eid}: MaxShifts gives no maximum for shift {missing[0]}")
        member: dict[str, Any] = {"id": eid, "max_shifts": {s: max_shifts[s] for s in shift_ids}}
        for key, token in zip(STAFF_FIELDS, fields[2:]):
            member[key] = _int(lines, lineno, token, f"{key} of employee {eid}")
        member["days_off"] = []
        staff.append(member)
    return staff


def _days_off(lines: Lines, rows, staff: list[dict], horizon: int) -> None:
    by_id = {s["id"]: s for s in staff}
    listed = set()
    for lineno, row in rows:
        fields = [f.strip() for f in row.split(",")]
        eid = _known(lines, lineno, fields[0], by_id, "employee")
        if eid in listed:
            raise lines.error(lineno, f"employee {eid} has a second days-off row")
        listed.add(eid)
        days = [_int(lines, lineno, tok, f"day off of employee {eid}", hi=horizon - 1) for tok in fields[1:]]
        if len(set(days)) != len(days):
            raise lines.error(lineno, f"employee {eid}: a day off is listed twice")
        by_id[eid]["days_off"] = days


def _requests(lines: Lines, rows, staff_ids: set, shift_ids: list[str], horizon: int, kind: str) -> list[dict]:
    out, seen = [], set()
    for lineno, row in rows:
        eid, day, sid, weight = _fields(lines, lineno, row, 4, "EmployeeID, Day, ShiftID, Weight")
        request = {
            "employee": _known(lines, lineno, eid, staff_ids, "employee"),
            "day": _int(lines, lineno, day, "day", hi=horizon - 1),
            "shift": _known(lines, lineno, sid, shift_ids, "shift"),
            "weight": _int(lines, lineno, weight, "weight"),
        }
        key = (eid, request["day"], sid)
        if key in seen:
            raise lines.error(
                lineno, f"a second shift-{kind} request of employee {eid} for shift {sid} on day {request['day']}"
            )
        seen.add(key)
        out.append(request)
    return out


def _cover(lines: Lines, rows, shift_ids: list[str], horizon: int) -> list[dict]:
    out, seen = [], set()
    for lineno, row in rows:
        day, sid, need, under, over = _fields(
            lines, lineno, row, 5, "Day, ShiftID, Requirement, Weight for under, Weight for over"
        )
        cover = {
            "day": _int(lines, lineno, day, "day", hi=horizon - 1),
            "shift": _known(lines, lineno, sid, shift_ids, "shift"),
            "requirement": _int(lines, lineno, need, "requirement"),
            "under_weight": _int(lines, lineno, under, "weight for under"),
            "over_weight": _int(lines, lineno, over, "weight for over"),
        }
        if (cover["day"], sid) in seen:
            raise lines.error(lineno, f"a second cover row for shift {sid} on day {cover['day']}")
        seen.add((cover["day"], sid))
        out.append(cover)
    return out


# -------------------------------------------------------------------------- write


def write(instance: dict, fmt: str = FORMATS[0]) -> str:
    """The benchmark text of an instance."""
    check_format(fmt, FORMATS, "rostering")
    shift_ids = [s["id"] for s in instance["shifts"]]
    body = {
        "SECTION_HORIZON": [str(instance["horizon"])],
        "SECTION_SHIFTS": [f"{s['id']},{s['minutes']},{'|'.join(s['forbidden_next'])}" for s in instance["shifts"]],
        "SECTION_STAFF": [
            ",".join(
                [m["id"], "|".join(f"{s}={m['max_shifts'][s]}" for s in shift_ids)]
                + [str(m[key]) for key in STAFF_FIELDS]
            )
            for m in instance["staff"]
        ],
        "SECTION_DAYS_OFF": [
            ",".join([m["id"]] + [str(d) for d in m["days_off"]]) for m in instance["staff"] if m["days_off"]
        ],
        "SECTION_SHIFT_ON_REQUESTS": [_request_row(r) for r in instance["shift_on_requests"]],
        "SECTION_SHIFT_OFF_REQUESTS": [_request_row(r) for r in instance["shift_off_requests"]],
        "SECTION_COVER": [
            f"{c['day']},{c['shift']},{c['requirement']},{c['under_weight']},{c['over_weight']}"
            for c in instance["cover"]
        ],
    }
    out = [PREAMBLE]
    for k, section in enumerate(SECTIONS):
        if k:
            out.append("")
        out += [section, *COMMENTS[section], *body[section]]
    return with_newline("\n".join(out) + "\n", (instance.get("layout") or {}).get("newline", "\n"))


def _request_row(r: dict) -> str:
    return f"{r['employee']},{r['day']},{r['shift']},{r['weight']}"
