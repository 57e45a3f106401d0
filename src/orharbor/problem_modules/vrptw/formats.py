"""Solomon's VRPTW text format (``C101.txt``) and its ``.sol`` route files.

An instance file::

    C101

    VEHICLE
    NUMBER     CAPACITY
      25         200

    CUSTOMER
    CUST NO.  XCOORD.   YCOORD.    DEMAND   READY TIME  DUE DATE   SERVICE   TIME

        0      40         50          0          0       1236          0
        1      45         68         10        912        967         90   ...

The first line is the instance's name; node 0 is the depot, customers follow
numbered 1..n. The writer's canonical layout is the published one: the fleet
line as ``%4d%12d``, the line after the column header holding a single space,
node rows as ``%5d%8d`` then five ``%11d`` columns and three trailing spaces.
``write(read(text)) == text`` byte for byte on C101.txt: ``read`` records in
``instance["layout"]`` only what departs from that layout (C101.txt's CRLF
line endings). Files laid out differently are read all the same and written
canonically.

A ``.sol`` file holds ``Route #k: c c c`` lines and a ``Cost x`` line;
``read_solution`` returns ``({"routes": [...]}, cost)``.
"""

from __future__ import annotations

from ..textfile import Lines, check_format, is_int, load, reader, split_lines, with_newline
from .verify import TOL

FORMATS = ("solomon",)
HEADER = "CUST NO.  XCOORD.   YCOORD.    DEMAND   READY TIME  DUE DATE   SERVICE   TIME"
COLUMNS = ("cust no.", "x", "y", "demand", "ready time", "due date", "service time")
DATA_KEYS = ("n_customers", "n_vehicles", "capacity", "coords", "demands", "ready", "due", "service")


# --------------------------------------------------------------------------- read


def parse(text: str, name: str = "<text>", stem: str | None = None) -> dict:
    """The instance of a Solomon text (pure: text in, dict out; the name comes from the first line)."""
    lines, newline = split_lines(text, name)
    lineno, title = lines.next("the instance name")
    if not title.strip():
        raise lines.error(lineno, "expected the instance name on the first line, got a blank line")
    lines.keyword("VEHICLE", "the VEHICLE section", skip_blank=True)
    lineno, line = lines.nonblank("the NUMBER CAPACITY header")
    if line.split() != ["NUMBER", "CAPACITY"]:
        raise lines.error(lineno, f"expected the header 'NUMBER CAPACITY', got {line.strip()[:40]!r}")
    lineno, line = lines.nonblank("the number of vehicles and the capacity")
    fleet = _ints(lines, lineno, line, 2, "the number of vehicles and the capacity")
    if fleet[0] < 1 or fleet[1] < 1:
        raise lines.error(lineno, f"expected a positive number of vehicles and capacity, got {fleet[0]} {fleet[1]}")
    lines.keyword("CUSTOMER", "the CUSTOMER section", skip_blank=True)
    lineno, line = lines.nonblank("the customer column header")
    if not line.split()[:2] == ["CUST", "NO."]:
        raise lines.error(lineno, f"expected the column header 'CUST NO. XCOORD. ...', got {line.strip()[:40]!r}")
    rows: list[list[int]] = []
    while lines.pos < len(lines.lines):
        lineno, line = lines.next("a node row")
        if not line.strip():
            continue
        row = _ints(lines, lineno, line, 7, "a node row (" + ", ".join(COLUMNS) + ")")
        if row[0] != len(rows):
            raise lines.error(lineno, f"expected node number {len(rows)}, got {row[0]}")
        for k in (3, 4, 5, 6):
            if row[k] < 0:
                raise lines.error(lineno, f"node {row[0]}: negative {COLUMNS[k]} {row[k]}")
        if row[5] < row[4]:
            raise lines.error(lineno, f"node {row[0]}: due date {row[5]} before ready time {row[4]}")
        rows.append(row)
    if len(rows) < 2:
        raise lines.error(
            len(lines.lines) + 1, f"expected the depot and at least one customer, got {len(rows)} node rows"
        )
    if rows[0][3] != 0:
        raise lines.error(_row_line(lines, 0), f"the depot (node 0) has demand {rows[0][3]}, expected 0")
    instance = {
        "problem": "vrptw",
        "name": title.strip(),
        "n_customers": len(rows) - 1,
        "n_vehicles": fleet[0],
        "capacity": fleet[1],
        "coords": [[r[1], r[2]] for r in rows],
        "demands": [r[3] for r in rows],
        "ready": [r[4] for r in rows],
        "due": [r[5] for r in rows],
        "service": [r[6] for r in rows],
        "time_tolerance": TOL,
    }
    if newline != "\n":
        instance["layout"] = {"format": "solomon", "newline": newline}
    if write(instance) != text:
        instance.pop("layout", None)  # an unusual layout: keep the data, write canonically
    return instance


read = reader(FORMATS, "vrptw", parse)


def read_solution(path_or_text) -> tuple[dict, float | None]:
    """``({"routes": [[c, ...], ...]}, cost)`` of a Solomon-style ``.sol`` file (cost None if absent)."""
    text, name, _ = load(path_or_text, "vrptw solution")
    lines = Lines(text.replace("\r\n", "\n"), name)
    routes, cost = [], None
    while lines.pos < len(lines.lines):
        lineno, line = lines.next("a route")
        tokens = line.split()
        if not tokens:
            continue
        if tokens[0] == "Route":
            if len(tokens) < 2 or not tokens[1].startswith("#") or not tokens[1].endswith(":"):
                raise lines.error(lineno, f"expected 'Route #k: customers', got {line.strip()[:40]!r}")
            for tok in tokens[2:]:
                if not is_int(tok):
                    raise lines.error(lineno, f"expected a customer number, got {tok[:40]!r}")
            routes.append([int(t) for t in tokens[2:]])
        elif tokens[0] == "Cost" and len(tokens) == 2:
            try:
                cost = float(tokens[1])
            except ValueError:
                raise lines.error(lineno, f"expected a number after 'Cost', got {tokens[1][:40]!r}") from None
        else:
            raise lines.error(lineno, f"expected 'Route #k: ...' or 'Cost x', got {line.strip()[:40]!r}")
    return {"routes": routes}, cost


def _ints(lines: Lines, lineno: int, line: str, count: int, what: str) -> list[int]:
    tokens = line.split()
    for tok in tokens:
        if not is_int(tok):
            raise lines.error(lineno, f"expected an integer in {what}, got {tok[:40]!r}")
    if len(tokens) != count:
        raise lines.error(lineno, f"expected {count} integers ({what}), got {len(tokens)}")
    return [int(t) for t in tokens]


def _row_line(lines: Lines, node: int) -> int:
    seen = -1
    for i, line in enumerate(lines.lines):
        tokens = line.split()
        if len(tokens) == 7 and all(is_int(t) for t in tokens):
            seen += 1
            if seen == node:
                return i + 1
    return 1


# -------------------------------------------------------------------------- write


def write(instance: dict, fmt: str = "solomon") -> str:
    """The Solomon text of an instance."""
    check_format(fmt, FORMATS, "vrptw")
    out = [
        instance["name"],
        "",
        "VEHICLE",
        "NUMBER     CAPACITY",
        f"{instance['n_vehicles']:>4}{instance['capacity']:>12}",
        "",
        "CUSTOMER",
        HEADER,
        " ",
    ]
    coords, demands = instance["coords"], instance["demands"]
    ready, due, service = instance["ready"], instance["due"], instance["service"]
    for i in range(instance["n_customers"] + 1):
        out.append(
            f"{i:>5}{coords[i][0]:>8}{coords[i][1]:>11}{demands[i]:>11}{ready[i]:>11}{due[i]:>11}{service[i]:>11}   "
        )
    return with_newline("\n".join(out) + "\n", (instance.get("layout") or {}).get("newline", "\n"))
