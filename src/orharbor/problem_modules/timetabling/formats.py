"""The ITC2007 track 3 ``.ctt`` instance format and the competition's solution format.

A ``.ctt`` file is a header of seven ``Key: value`` lines, then four sections
separated by blank lines, then ``END.``::

    Name: Fis0506-1
    Courses: 30
    Rooms: 6
    Days: 5
    Periods_per_day: 6
    Curricula: 14
    Constraints: 53

    COURSES:
    c0001 t000 6 4 130            course teacher lectures min_working_days students
    ...

    ROOMS:
    B<TAB>200                     room capacity
    ...

    CURRICULA:
    q000  4 c0001 c0002 c0004 c0005       curriculum n_courses course ... (trailing space)
    ...

    UNAVAILABILITY_CONSTRAINTS:
    c0001 4 0                     course day period
    ...

    END.

Ids are tokens without blanks; days and periods count from 0. The header
counts must match the sections. The writer's canonical layout is the one of the
published files (tab in room lines, two spaces after a curriculum's id and a
space after each of its courses) with LF line ends; ``write(read(text)) ==
text`` byte for byte for a published file because ``read`` keeps in
``instance["layout"]`` only where the file departs from it: the line ending,
the few lines that differ, and what follows ``END.``. If that cannot reproduce
the file (extra blank lines, say), the layout is dropped and the data kept.

A solution file (``.sol``) holds one line per lecture, ``course room day
period``; ``read_solution`` and ``write_solution`` convert it to and from the
solution JSON ``{"assignments": [[course, room, day, period], ...]}``.
"""

from __future__ import annotations

import re

from ..textfile import Lines, changed_lines, check_format, is_int, load, reader, render, split_lines, unify_newlines

FORMATS = ("ctt",)
HEADER = ("Name", "Courses", "Rooms", "Days", "Periods_per_day", "Curricula", "Constraints")
SECTIONS = ("COURSES:", "ROOMS:", "CURRICULA:", "UNAVAILABILITY_CONSTRAINTS:")
_HEADER_LINE = re.compile(r"^\s*([A-Za-z_]+)\s*:\s*(.*?)\s*$")


# --------------------------------------------------------------------------- read


def parse(text: str, name: str = "<text>", stem: str | None = None) -> dict:
    """The instance of a ``.ctt`` text (pure: text in, dict out; the name comes from the file's header)."""
    src, newline = split_lines(text, name)
    head = _header(src)
    days, ppd = head["Days"], head["Periods_per_day"]
    _keyword(src, "COURSES:")
    courses = _courses(src, head["Courses"], days * ppd)
    known = {c["id"] for c in courses}
    _keyword(src, "ROOMS:")
    rooms = _rooms(src, head["Rooms"])
    _keyword(src, "CURRICULA:")
    curricula = _curricula(src, head["Curricula"], known)
    _keyword(src, "UNAVAILABILITY_CONSTRAINTS:")
    unavailability = _unavailability(src, head["Constraints"], known, days, ppd)
    _keyword(src, "END.", "END.")
    tail = src.tail("END.")
    instance = {
        "problem": "timetabling",
        "name": head["Name"],
        "days": days,
        "periods_per_day": ppd,
        "courses": courses,
        "rooms": rooms,
        "curricula": curricula,
        "unavailability": unavailability,
    }
    layout = _layout(instance, src.lines[: src.pos], tail, newline)
    if layout:
        instance["layout"] = layout
    if write(instance) != text:  # an unusual layout: keep the data, write canonically
        instance.pop("layout", None)
    return instance


read = reader(FORMATS, "timetabling", parse)


def _header(src: Lines) -> dict:
    head: dict = {}
    for key in HEADER:
        lineno, line = src.next(f"the header line '{key}: ...'")
        m = _HEADER_LINE.match(line)
        if not m or m.group(1).lower() != key.lower():
            raise src.error(lineno, f"expected the header line '{key}: ...', got {line.strip()[:40]!r}")
        value = m.group(2)
        if key == "Name":
            if len(value.split()) != 1:
                raise src.error(lineno, f"expected one name token without blanks, got {value[:40]!r}")
            head[key] = value
            continue
        lowest = 0 if key in ("Curricula", "Constraints") else 1
        if not is_int(value) or int(value) < lowest:
            raise src.error(lineno, f"expected {key} to be an integer >= {lowest}, got {value[:40]!r}")
        head[key] = int(value)
    return head


def _keyword(src: Lines, keyword: str, what: str | None = None) -> None:
    """Skip blank lines, then expect the line ``keyword``."""
    src.keyword(keyword, what or f"the section {keyword}", skip_blank=True)


def _row(src: Lines, what: str, count: int | None) -> tuple[int, list[str]]:
    lineno, line = src.next(what)
    tokens = line.split()
    if not tokens:
        raise src.error(lineno, f"expected {what}, got a blank line")
    if count is not None and len(tokens) != count:
        raise src.error(lineno, f"expected {what}, got {len(tokens)} tokens: {line.strip()[:40]!r}")
    return lineno, tokens


def _int(src: Lines, lineno: int, token: str, what: str, lowest: int, highest: int | None = None) -> int:
    if not is_int(token):
        raise src.error(lineno, f"expected {what} (an integer), got {token[:40]!r}")
    value = int(token)
    if value < lowest or (highest is not None and value > highest):
        bound = f"between {lowest} and {highest}" if highest is not None else f">= {lowest}"
        raise src.error(lineno, f"{what} must be {bound}, got {value}")
    return value


def _courses(src: Lines, count: int, n_periods: int) -> list[dict]:
    out, seen = [], set()
    for k in range(count):
        what = f"course {k + 1} of {count} ('course teacher lectures min_working_days students')"
        lineno, (cid, teacher, *numbers) = _row(src, what, 5)
        if cid in seen:
            raise src.error(lineno, f"course {cid[:40]} is listed twice")
        seen.add(cid)
        lectures = _int(src, lineno, numbers[0], f"the lectures of course {cid}", 1, n_periods)
        mwd = _int(src, lineno, numbers[1], f"the minimum working days of course {cid}", 0)
        students = _int(src, lineno, numbers[2], f"the students of course {cid}", 0)
        out.append({"id": cid, "teacher": teacher, "lectures": lectures, "min_working_days": mwd, "students": students})
    return out


def _rooms(src: Lines, count: int) -> list[dict]:
    out, seen = [], set()
    for k in range(count):
        lineno, (rid, capacity) = _row(src, f"room {k + 1} of {count} ('room capacity')", 2)
        if rid in seen:
            raise src.error(lineno, f"room {rid[:40]} is listed twice")
        seen.add(rid)
        out.append({"id": rid, "capacity": _int(src, lineno, capacity, f"the capacity of room {rid}", 0)})
    return out


def _curricula(src: Lines, count: int, known: set) -> list[dict]:
    out, seen = [], set()
    for k in range(count):
        lineno, tokens = _row(src, f"curriculum {k + 1} of {count} ('curriculum n_courses course ...')", None)
        qid = tokens[0]
        if qid in seen:
            raise src.error(lineno, f"curriculum {qid[:40]} is listed twice")
        seen.add(qid)
        if len(tokens) < 2:
            raise src.error(lineno, f"expected the number of courses of curriculum {qid}, got the end of the line")
        n = _int(src, lineno, tokens[1], f"the number of courses of curriculum {qid}", 1)
        members = tokens[2:]
        if len(members) != n:
            raise src.error(lineno, f"curriculum {qid} announces {n} courses, got {len(members)}")
        for c in members:
            if c not in known:
                raise src.error(lineno, f"curriculum {qid}: unknown course {c[:40]}")
        if len(set(members)) != n:
            dup = next(c for i, c in enumerate(members) if c in members[:i])
            raise src.error(lineno, f"curriculum {qid} lists course {dup} twice")
        out.append({"id": qid, "courses": members})
    return out


def _unavailability(src: Lines, count: int, known: set, days: int, ppd: int) -> list[list]:
    out, seen = [], set()
    for k in range(count):
        lineno, (cid, day, period) = _row(src, f"constraint {k + 1} of {count} ('course day period')", 3)
        if cid not in known:
            raise src.error(lineno, f"unknown course {cid[:40]}")
        d = _int(src, lineno, day, "the day", 0, days - 1)
        p = _int(src, lineno, period, "the period", 0, ppd - 1)
        if (cid, d, p) in seen:
            raise src.error(lineno, f"course {cid} day {d} period {p} is listed twice")
        seen.add((cid, d, p))
        out.append([cid, d, p])
    return out


def _layout(instance: dict, lines: list[str], tail: str, newline: str) -> dict:
    """Where the file departs from the canonical layout (see the module docstring)."""
    layout: dict = {}
    if newline != "\n":
        layout["newline"] = newline
    if tail != "\n":
        layout["tail"] = tail
    canon = _lines(instance)
    if len(canon) == len(lines):
        changed = changed_lines(lines, canon)
        if changed:
            layout["lines"] = changed
    return layout


# -------------------------------------------------------------------------- write


def write(instance: dict, fmt: str = "ctt") -> str:
    """The ``.ctt`` text of ``instance`` (its ``layout``, if any, reproduces a published file)."""
    check_format(fmt, FORMATS, "timetabling")
    return render(_lines(instance), instance.get("layout") or {})


def _lines(instance: dict) -> list[str]:
    """The file's lines in the canonical layout, up to ``END.``."""
    courses, rooms, curricula = instance["courses"], instance["rooms"], instance["curricula"]
    unavailability = instance["unavailability"]
    counts = (
        instance["name"],
        len(courses),
        len(rooms),
        instance["days"],
        instance["periods_per_day"],
        len(curricula),
        len(unavailability),
    )
    out = [f"{key}: {value}" for key, value in zip(HEADER, counts)]
    out += ["", "COURSES:"]
    out += [f"{c['id']} {c['teacher']} {c['lectures']} {c['min_working_days']} {c['students']}" for c in courses]
    out += ["", "ROOMS:"]
    out += [f"{r['id']}\t{r['capacity']}" for r in rooms]
    out += ["", "CURRICULA:"]
    out += [f"{q['id']}  {len(q['courses'])} " + "".join(f"{c} " for c in q["courses"]) for q in curricula]
    out += ["", "UNAVAILABILITY_CONSTRAINTS:"]
    out += [f"{c} {d} {p}" for c, d, p in unavailability]
    out += ["", "END."]
    return out


# ---------------------------------------------------------------------- solutions


def read_solution(path_or_text) -> dict:
    """The solution JSON of a competition solution file: one ``course room day period`` line per lecture.

    Blank lines are skipped. Only the shape is checked here (four tokens, day
    and period non-negative integers); ``evaluate`` checks the rest.
    """
    text, name, _ = load(path_or_text, "timetabling solution")
    body, _ = unify_newlines(text)
    assignments = []
    for lineno, line in enumerate(body.split("\n"), 1):
        tokens = line.split()
        if not tokens:
            continue
        if len(tokens) != 4:
            raise ValueError(f"{name}:{lineno}: expected 'course room day period', got {line.strip()[:40]!r}")
        course, room, day, period = tokens
        for token, what in ((day, "day"), (period, "period")):
            if not is_int(token) or int(token) < 0:
                raise ValueError(f"{name}:{lineno}: expected the {what} as an integer >= 0, got {token[:40]!r}")
        assignments.append([course, room, int(day), int(period)])
    return {"assignments": assignments}


def write_solution(solution: dict, newline: str = "\n", final_newline: bool = True) -> str:
    """The competition text of ``solution``: one ``course room day period`` line per assignment.

    ``newline`` and ``final_newline`` reproduce a given file's line ends (the
    published comp01.ctt.sol has LF ends and no final newline).
    """
    text = "\n".join(f"{c} {r} {d} {p}" for c, r, d, p in solution["assignments"])
    if final_newline and text:
        text += "\n"
    return text.replace("\n", newline) if newline != "\n" else text
