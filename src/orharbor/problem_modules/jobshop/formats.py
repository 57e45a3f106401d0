"""Job shop file formats: Taillard's own and OR-Library's "standard" (JSPLIB).

``taillard``::

    Nb of jobs, Nb of Machines, Time seed, Machine seed, Upper bound, Lower bound
            15        15  840612802  398197754      1231      1005
    Times
     94 66 10 ...            (one row of durations per job)
    Machines
      7 13  5 ...            (one row of 1-based machines per job)

``orlib`` (OR-Library jobshop1.txt blocks, JSPLIB files)::

    # optional comment lines
    15 15
     6 94 12 66 ...          (one row per job: machine (0-based), duration pairs)

``write(read(text)) == text`` byte for byte for the published files: the writer
produces a canonical layout, and ``read`` records in ``instance["layout"]`` only
the few details where a file departs from it (row alignment, trailing spaces,
the end of the file), so the exact bytes come back.
"""

from __future__ import annotations

from ..textfile import Lines, check_format, finish_layout, layout_of, load, render, split_lines, with_newline

FORMATS = ("taillard", "orlib")

TAILLARD_HEADER = "Nb of jobs, Nb of Machines, Time seed, Machine seed, Upper bound, Lower bound"


# --------------------------------------------------------------------------- read


def read(path_or_text, fmt: str | None = None) -> dict:
    """Read an instance from a path (``Path`` or ``str``) or from the file's text.

    ``fmt`` is ``"taillard"``, ``"orlib"`` or ``None`` to sniff (Taillard files
    start with ``Nb of jobs``). Broken files raise ``ValueError`` naming the file,
    the line and what was expected, e.g. ``ta01:4: expected 30 integers, got 29``.
    """
    text, name, stem = load(path_or_text, "jobshop")
    if fmt is None:
        fmt = "taillard" if text.lstrip().lower().startswith("nb of jobs") else "orlib"
    check_format(fmt, FORMATS, "jobshop")
    lines, newline = split_lines(text, name)
    parser = _read_taillard if fmt == "taillard" else _read_orlib
    inst, layout = parser(lines, stem)
    finish_layout(inst, fmt, layout, lines, "the last job", newline)
    if stem is not None:
        inst["source"] = name
    if write(inst, fmt) != with_newline(lines.text, newline):
        inst.pop("layout", None)  # an unusual layout: keep the data, write canonically
    return inst


def _check_shape(lines: Lines, n: int, m: int, lineno: int) -> None:
    if n < 1 or m < 1:
        raise lines.error(lineno, f"expected positive numbers of jobs and machines, got {n} and {m}")


def _check_route(lines: Lines, lineno: int, job: int, route: list[int], m: int, one_based: bool) -> list[int]:
    seen: set[int] = set()
    shift = 1 if one_based else 0
    for k, machine in enumerate(route):
        if not 0 <= machine < m:
            raise lines.error(
                lineno, f"job {job} operation {k}: machine {machine + shift} out of range {shift}..{m - 1 + shift}"
            )
        if machine in seen:
            raise lines.error(lineno, f"job {job} operation {k}: machine {machine + shift} repeated in the job")
        seen.add(machine)
    return route


def _check_durations(lines: Lines, lineno: int, job: int, durations: list[int]) -> list[int]:
    for k, d in enumerate(durations):
        if d < 0:
            raise lines.error(lineno, f"job {job} operation {k}: negative duration {d}")
    return durations


def _taillard_rows(lines: Lines, word: str, n: int, m: int, what: str, check) -> list[list[int]]:
    """The line ``word``, then a row of ``m`` integers per job, each passed through ``check(lineno, job, row)``."""
    lines.keyword(word, repr(word))
    rows = []
    for j in range(n):
        lineno, row = lines.ints(f"the {what} of job {j} ({m} integers)", m)
        rows.append(check(lineno, j, row))
    return rows


def _read_taillard(lines: Lines, stem: str | None) -> tuple[dict, dict]:
    """The instance of a Taillard file and where its layout departs from the canonical one."""
    lineno, header = lines.next("the header line")
    if not header.strip().lower().startswith("nb of jobs"):
        raise lines.error(lineno, f"expected the header {TAILLARD_HEADER!r}")
    lineno, head = lines.ints("the line of 6 numbers (jobs, machines, seeds, bounds)", 6)
    n, m, time_seed, machine_seed, upper, lower = head
    _check_shape(lines, n, m, lineno)
    layout: dict = {}
    if header != TAILLARD_HEADER:
        layout["header"] = header
    numbers = lines.lines[lineno - 1]
    if numbers != _taillard_numbers(n, m, time_seed, machine_seed, upper, lower):
        layout["numbers"] = numbers
    durations = _taillard_rows(
        lines, "Times", n, m, "durations", lambda lineno, j, row: _check_durations(lines, lineno, j, row)
    )
    machines = _taillard_rows(
        lines,
        "Machines",
        n,
        m,
        "machines",  # 1-based in the file
        lambda lineno, j, row: _check_route(lines, lineno, j, [x - 1 for x in row], m, one_based=True),
    )
    inst = _instance(stem, n, m, machines, durations)
    inst.update(time_seed=time_seed, machine_seed=machine_seed, upper_bound=upper, lower_bound=lower)
    width = _detect_width(
        lines.lines[3 : 3 + n] + lines.lines[4 + n : 4 + 2 * n],
        durations + [[x + 1 for x in r] for r in machines],
        _taillard_row,
    )
    if width is not None and width != _taillard_width(inst):
        layout["width"] = width
    return inst, layout


def _read_orlib(lines: Lines, stem: str | None) -> tuple[dict, dict]:
    """The instance of an OR-Library file and where its layout departs from the canonical one."""
    comments = []
    while lines.pos < len(lines.lines) and lines.lines[lines.pos].startswith("#"):
        comments.append(lines.lines[lines.pos][1:])
        lines.pos += 1
    lineno, head = lines.ints("the line 'n_jobs n_machines'", 2)
    n, m = head
    _check_shape(lines, n, m, lineno)
    layout: dict = {}
    size_line = lines.lines[lineno - 1]
    if size_line != f"{n} {m}":
        layout["size_line"] = size_line
    machines, durations, rows, raw = [], [], [], []
    for j in range(n):
        lineno, row = lines.ints(f"the row of job {j} ({m} machine, duration pairs = {2 * m} integers)", 2 * m)
        route, times = row[0::2], row[1::2]
        _check_route(lines, lineno, j, route, m, one_based=False)
        _check_durations(lines, lineno, j, times)
        machines.append(route)
        durations.append(times)
        rows.append(row)
        raw.append(lines.lines[lineno - 1])
    inst = _instance(stem, n, m, machines, durations)
    if comments:
        inst["comments"] = comments
    canonical_width = _orlib_width(rows)
    for lead, trail in ((True, True), (False, False), (True, False), (False, True)):
        width = _detect_width(raw, rows, lambda r, w: _orlib_row(r, w, lead, trail))
        if width is not None:
            if width != canonical_width:
                layout["width"] = width
            if not lead:
                layout["lead"] = False
            if not trail:
                layout["trail"] = False
            break
    return inst, layout


def _instance(stem: str | None, n: int, m: int, machines: list, durations: list) -> dict:
    """The instance's data, named after the file (or its shape, for a text)."""
    return {
        "problem": "jobshop",
        "name": stem if stem else f"jobshop-{n}x{m}",
        "n_jobs": n,
        "n_machines": m,
        "machines": machines,
        "durations": durations,
    }


def _detect_width(raw: list[str], rows: list[list[int]], fmt_row) -> int | None:
    """The column width with which ``fmt_row`` reproduces every raw row, if any."""
    for width in range(1, 12):
        if all(fmt_row(row, width) == line for row, line in zip(rows, raw)):
            return width
    return None


# -------------------------------------------------------------------------- write


def write(instance: dict, fmt: str = "taillard") -> str:
    """The text of ``instance`` in ``fmt`` (``"taillard"`` or ``"orlib"``)."""
    check_format(fmt, FORMATS, "jobshop", optional=False)
    layout = layout_of(instance, fmt)
    return render(_write_taillard(instance, layout) if fmt == "taillard" else _write_orlib(instance, layout), layout)


def _taillard_numbers(n: int, m: int, time_seed: int, machine_seed: int, upper: int, lower: int) -> str:
    return f"{n:>10}{m:>10}{time_seed:>11}{machine_seed:>11}{upper:>10}{lower:>10}"


def _taillard_row(row: list[int], width: int) -> str:
    return "".join(f"{x:>{width}}" for x in row)


def _taillard_width(instance: dict) -> int:
    biggest = max([instance["n_machines"]] + [d for row in instance["durations"] for d in row])
    return max(3, len(str(biggest)) + 1)


def _write_taillard(instance: dict, layout: dict) -> list[str]:
    n, m = instance["n_jobs"], instance["n_machines"]
    gen = instance.get("generator") or {}
    time_seed = instance.get("time_seed", gen.get("time_seed", 0))
    machine_seed = instance.get("machine_seed", gen.get("machine_seed", 0))
    upper = instance.get("upper_bound", 0)
    lower = instance.get("lower_bound", 0)
    width = layout.get("width", _taillard_width(instance))
    lines = [
        layout.get("header", TAILLARD_HEADER),
        layout.get("numbers", _taillard_numbers(n, m, time_seed, machine_seed, upper, lower)),
        "Times",
    ]
    lines += [_taillard_row(row, width) for row in instance["durations"]]
    lines.append("Machines")
    lines += [_taillard_row([x + 1 for x in row], width) for row in instance["machines"]]
    return lines


def _orlib_width(rows: list[list[int]]) -> int:
    return max(len(str(x)) for row in rows for x in row)


def _orlib_row(row: list[int], width: int, lead: bool, trail: bool) -> str:
    text = " ".join(f"{x:>{width}}" for x in row)
    if not lead:
        text = text.lstrip(" ")
    return text + " " if trail else text


def _write_orlib(instance: dict, layout: dict) -> list[str]:
    n, m = instance["n_jobs"], instance["n_machines"]
    rows = [
        [v for pair in zip(route, times) for v in pair]
        for route, times in zip(instance["machines"], instance["durations"])
    ]
    width = layout.get("width", _orlib_width(rows))
    lead, trail = layout.get("lead", True), layout.get("trail", True)
    lines = ["#" + c for c in instance.get("comments", [])]
    lines.append(layout.get("size_line", f"{n} {m}"))
    lines += [_orlib_row(row, width, lead, trail) for row in rows]
    return lines
