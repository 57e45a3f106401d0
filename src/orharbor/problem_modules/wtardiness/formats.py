"""The OR-Library weighted tardiness format (``wt40.txt``, ``wt50.txt``, ``wt100.txt``).

One file holds many instances of ``n`` jobs each, one after the other: the ``n``
processing times, then the ``n`` weights, then the ``n`` due dates, as
whitespace-separated integers. OR-Library lays them out 20 to a line, each right
aligned in a column of 6 characters::

        26    24    79    46    32    35    73    74    14    67    86 ...
        35    52    36    69    85    95    14    78    37    86    44 ...

The file does not say ``n``: ``read`` takes it from the ``n`` argument, else from
a file name such as ``wt40.txt`` (40), else it assumes the whole text is one
instance (``3 n`` integers). ``read`` returns one instance dict when ``index`` is
given or the text holds a single instance, else the list of all instances;
``read_all`` always returns the list. The writer starts each list on a new line,
20 values to a line, in columns of 6 (wider when a value has 6 digits or more).
``write(read_all(text)) == text`` byte for byte for the published file:
``read`` records in ``instance["layout"]`` only the few lines where a file
departs from that layout (wt40.txt has one line without leading spaces) and,
on the last instance, what follows the last line.

The optimum files (``wtopt40.txt``: one value per line, instance 1 first) are
read by ``read_optima``.
"""

from __future__ import annotations

import re

from ..textfile import check_format, is_int, load, split_lines, with_newline

FORMATS = ("orlib",)
PER_LINE = 20
WIDTH = 6
LISTS = ("processing times", "weights", "due dates")
_KEYS = ("processing_times", "weights", "due_dates")
_WHAT = ("processing time", "weight", "due date")


# --------------------------------------------------------------------------- read


def read(path_or_text, fmt: str | None = None, index: int | None = None, n: int | None = None):
    """One instance (``index`` given, or a one-instance file) or the list of all instances.

    ``path_or_text`` is a ``Path``, a path string or the file's text; ``n`` is the
    number of jobs per instance (default: from a ``wt<n>`` file name, else the
    whole text is one instance); ``index`` (0-based) picks one instance. Broken
    files raise ``ValueError`` naming the file, the line and what was expected.
    """
    instances = read_all(path_or_text, fmt, n=n)
    if index is None:
        return instances[0] if len(instances) == 1 else instances
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(instances):
        raise ValueError(f"index {index!r} out of range: the file holds {len(instances)} instances (0-based)")
    return instances[index]


def read_all(path_or_text, fmt: str | None = None, n: int | None = None) -> list[dict]:
    """Every instance of the file, in order (always a list)."""
    check_format(fmt, FORMATS, "wtardiness")
    text, name, stem = load(path_or_text, "wtardiness")
    instances = parse(text, n=n, name=name, stem=stem)
    if stem is not None:
        for inst in instances:
            inst["source"] = name
    return instances


def parse(text: str, n: int | None = None, name: str = "<text>", stem: str | None = None) -> list[dict]:
    """The instances of an OR-Library ``wt`` text (pure: text in, dicts out)."""
    src, newline = split_lines(text, name)
    body, lines = src.text, src.lines
    values: list[int] = []
    where: list[int] = []
    for lineno, line in enumerate(lines, 1):
        for tok in line.split():
            if not is_int(tok):
                raise src.error(lineno, f"expected an integer, got {tok[:40]!r}")
            values.append(int(tok))
            where.append(lineno)
    n = _jobs_per_instance(n, stem, len(values), name)
    block = 3 * n
    if not values or len(values) % block:
        k, rest = divmod(len(values), block)
        which, got = divmod(rest, n)
        after = f" after {got}" if got else ""
        raise src.error(
            len(lines) + 1, f"expected the {n} {LISTS[which]} of instance {k + 1}, got the end of the file{after}"
        )
    base = stem if stem else f"wt{n}"
    instances = []
    for k in range(len(values) // block):
        inst = {"problem": "wtardiness", "name": f"{base}-{k + 1}", "n_jobs": n}
        for which in range(3):
            start = k * block + which * n
            row = values[start : start + n]
            for j, x in enumerate(row):
                if x < 0:
                    raise src.error(where[start + j], f"instance {k + 1} job {j}: negative {_WHAT[which]} {x}")
            inst[_KEYS[which]] = row
        instances.append(inst)
    _attach_layout(instances, lines, body, newline)
    if write(instances) != text:
        for inst in instances:  # an unusual layout: keep the data, write canonically
            inst.pop("layout", None)
    return instances


def read_optima(path_or_text) -> list[int]:
    """The values of an OR-Library optimum file (``wtopt40.txt``): one integer per line."""
    text, name, _ = load(path_or_text, "wtardiness")
    out = []
    for lineno, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        tokens = line.split()
        if not tokens:
            continue
        if len(tokens) != 1 or not is_int(tokens[0]):
            raise ValueError(f"{name}:{lineno}: expected one integer, got {line.strip()[:40]!r}")
        out.append(int(tokens[0]))
    return out


def _jobs_per_instance(n, stem: str | None, count: int, name: str) -> int:
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"n (jobs per instance) must be a positive integer, got {n!r}")
        return n
    match = re.fullmatch(r"wt(\d+)", stem or "", flags=re.IGNORECASE)
    if match and int(match.group(1)) > 0:
        return int(match.group(1))
    if count % 3 == 0 and count:
        return count // 3  # no name to go by: the whole text is one instance
    raise ValueError(
        f"{name}: {count} integers do not make one instance (3 n integers); pass n=, the number of jobs per instance"
    )


def _attach_layout(instances: list[dict], lines: list[str], body: str, newline: str) -> None:
    """Record where the file departs from the canonical layout (see the module docstring)."""
    offset = 0
    layouts = []
    for inst in instances:
        canon = _block(inst, None)
        raw = lines[offset : offset + len(canon)]
        if [r.split() for r in raw] != [c.split() for c in canon]:
            return  # wrapped differently: no per-instance layout
        layout: dict = {}
        width = _width(inst)
        if any(r != c for r, c in zip(raw, canon)):
            for w in range(1, 13):
                if w != width and all(r == c for r, c in zip(raw, _block(inst, w))):
                    layout["width"] = width = w
                    break
            fixed = _block(inst, width)
            changed = [[i, r] for i, (r, c) in enumerate(zip(raw, fixed)) if r != c]
            if changed:
                layout["lines"] = changed
        layouts.append(layout)
        offset += len(canon)
    if any(line.strip() for line in lines[offset:]):
        return
    tail = body[len("\n".join(lines[:offset])) :]
    if tail != "\n":
        layouts[-1]["tail"] = tail
    if newline != "\n":
        for layout in layouts:
            layout["newline"] = newline
    for inst, layout in zip(instances, layouts):
        if layout:
            inst["layout"] = {"format": "orlib", **layout}


# -------------------------------------------------------------------------- write


def write(instance_or_list, fmt: str = "orlib") -> str:
    """The OR-Library text of one instance or of a list of instances (one file)."""
    check_format(fmt, FORMATS, "wtardiness", optional=False)
    instances = [instance_or_list] if isinstance(instance_or_list, dict) else list(instance_or_list)
    if not instances:
        raise ValueError("nothing to write: no instances")
    out: list[str] = []
    for inst in instances:
        layout = inst.get("layout") or {}
        block = _block(inst, layout.get("width"))
        for i, line in layout.get("lines", []):
            block[i] = line
        out += block
    last = instances[-1].get("layout") or {}
    newline = (instances[0].get("layout") or {}).get("newline", "\n")
    return with_newline("\n".join(out) + last.get("tail", "\n"), newline)


def _width(instance: dict) -> int:
    biggest = max([0] + [abs(x) for key in _KEYS for x in instance[key]])
    return max(WIDTH, len(str(biggest)) + 1)


def _block(instance: dict, width: int | None) -> list[str]:
    """The canonical lines of one instance: each list from a new line, 20 to a line."""
    width = width or _width(instance)
    lines = []
    for key in _KEYS:
        row = instance[key]
        for i in range(0, len(row), PER_LINE):
            lines.append("".join(f"{x:>{width}}" for x in row[i : i + PER_LINE]))
    return lines
