"""CVRPLIB's ``.vrp`` format (TSPLIB style) and its ``.sol`` solution files.

A ``.vrp`` file is a header of ``KEY : value`` lines, then sections, then ``EOF``::

    NAME : X-n101-k25
    TYPE : CVRP
    DIMENSION : 101
    EDGE_WEIGHT_TYPE : EUC_2D
    CAPACITY : 206
    NODE_COORD_SECTION
    1 365 689
    ...
    DEMAND_SECTION
    1 0
    ...
    DEPOT_SECTION
    1
    -1
    EOF

Node ids are 1-based and node 1 is the depot (the only one allowed); in the
instance the depot is 0 and customers are 1..n (DIMENSION = n + 1). Supported
edge weights: ``EUC_2D`` with integer coordinates (``"rounding": "nint"``) and
``EXPLICIT`` matrices (``"rounding": "explicit"``, ``distances`` holds the
full matrix) in the formats LOWER_ROW, UPPER_ROW, LOWER_DIAG_ROW,
UPPER_DIAG_ROW and FULL_MATRIX; other types are rejected with a clear error.

The writer's canonical layout is the one above (``KEY : value``, single spaces,
matrix values 10 to a line in columns of 6, LF endings). ``write(read(text))``
reproduces a published file byte for byte: ``read`` keeps in
``instance["layout"]`` only where the file departs from that layout: the line
ending, the header list when it differs from the canonical one, the spacing
style of header lines, section keywords and each section's rows (the most
common style of each), the few lines that still differ (by line number), the
section order, and what follows ``EOF``. If that cannot reproduce the file
(e.g. a matrix wrapped differently), the layout is dropped and the data kept.
"""

from __future__ import annotations

import re
from collections import Counter

from ..textfile import changed_lines, check_format, is_int, load, render, split_lines

FORMATS = ("vrplib",)
MATRIX_FORMATS = ("LOWER_ROW", "UPPER_ROW", "LOWER_DIAG_ROW", "UPPER_DIAG_ROW", "FULL_MATRIX")
PER_LINE = 10
WIDTH = 6
_HEADER = re.compile(r"^(\S+?)(\s*:\s*)(.*?)(\s*)$")
_ROW = re.compile(r"^(\s*)(\S+(?:\s+\S+)*?)(\s*)$")
_CANON_HEADER = (" : ", "")
_CANON_ROW = ("", " ", "")


def _matrix_pairs(fmt: str, dim: int):
    """The (i, j) cells of an explicit matrix section, in file order."""
    if fmt == "FULL_MATRIX":
        return [(i, j) for i in range(dim) for j in range(dim)]
    if fmt == "LOWER_ROW":
        return [(i, j) for i in range(dim) for j in range(i)]
    if fmt == "LOWER_DIAG_ROW":
        return [(i, j) for i in range(dim) for j in range(i + 1)]
    if fmt == "UPPER_ROW":
        return [(i, j) for i in range(dim) for j in range(i + 1, dim)]
    return [(i, j) for i in range(dim) for j in range(i, dim)]  # UPPER_DIAG_ROW


# --------------------------------------------------------------------------- read


def read(path_or_text, fmt: str | None = None) -> dict:
    """The instance of a ``.vrp`` file (a ``Path``, a path string or the text itself)."""
    check_format(fmt, FORMATS, "cvrp")
    text, name, _ = load(path_or_text, "cvrp")
    instance = parse(text, name=name)
    instance["source"] = name
    return instance


def parse(text: str, name: str = "<text>") -> dict:
    """The instance of a ``.vrp`` text (pure: text in, dict out)."""
    src, newline = split_lines(text, name)
    body, lines, err = src.text, src.lines, src.error
    headers: list[list[str]] = []
    header_styles: list[tuple[str, str]] = []
    pos = 0
    while pos < len(lines) and not lines[pos].split()[:1] == [] and not _is_keyword(lines[pos]):
        m = _HEADER.match(lines[pos])
        if not m:
            raise err(pos + 1, f"expected 'KEY : value' or a section keyword, got {lines[pos].strip()[:40]!r}")
        headers.append([m.group(1).upper(), m.group(3)])
        header_styles.append((m.group(2), m.group(4)))
        pos += 1
    if pos < len(lines) and not lines[pos].strip():
        raise err(pos + 1, "expected 'KEY : value' or a section keyword, got a blank line")
    head = dict((k, v) for k, v in headers)
    for key in ("DIMENSION", "CAPACITY", "EDGE_WEIGHT_TYPE"):
        if key not in head:
            raise err(pos + 1, f"expected a {key} header line before the sections")
    where = {k: i + 1 for i, (k, _) in enumerate(headers)}
    if head.get("TYPE", "CVRP").strip() != "CVRP":
        raise err(where["TYPE"], f"expected TYPE : CVRP, got {head['TYPE'].strip()[:40]!r}")
    dim = _positive(head["DIMENSION"], "DIMENSION", where, err, minimum=2)
    capacity = _positive(head["CAPACITY"], "CAPACITY", where, err, minimum=1)
    ewt = head["EDGE_WEIGHT_TYPE"].strip()
    if ewt not in ("EUC_2D", "EXPLICIT"):
        raise err(where["EDGE_WEIGHT_TYPE"], f"unsupported EDGE_WEIGHT_TYPE {ewt[:40]!r} (supported: EUC_2D, EXPLICIT)")
    ewf = None
    if ewt == "EXPLICIT":
        ewf = head.get("EDGE_WEIGHT_FORMAT", "").strip()
        if ewf not in MATRIX_FORMATS:
            raise err(
                where.get("EDGE_WEIGHT_FORMAT", pos + 1),
                f"EXPLICIT edge weights need an EDGE_WEIGHT_FORMAT among {', '.join(MATRIX_FORMATS)}, got {ewf[:40]!r}",
            )

    coords = demands = matrix = None
    order: list[str] = []
    section_styles: list[str] = []
    row_styles: dict[str, list[tuple[str, str, str]]] = {}
    eof = False
    while pos < len(lines):
        line = lines[pos]
        if not line.strip():
            break
        m = _ROW.match(line)
        assert m is not None  # _ROW matches every line that is not blank
        keyword = m.group(2).upper()
        if keyword == "EOF":
            eof = True
            section_styles.append(m.group(3))
            pos += 1
            break
        if not _is_keyword(line) or " " in keyword or "\t" in keyword:
            raise err(pos + 1, f"expected a section keyword or EOF, got {line.strip()[:40]!r}")
        if keyword in order:
            raise err(pos + 1, f"section {keyword} appears twice")
        order.append(keyword)
        section_styles.append(m.group(1) + "|" + m.group(3))
        pos += 1
        if keyword == "NODE_COORD_SECTION":
            rows, pos = _rows(lines, pos, dim, 3, "node coordinates", err, row_styles.setdefault(keyword, []))
            coords = [[x, y] for _, x, y in rows]
        elif keyword == "DEMAND_SECTION":
            rows, pos = _rows(lines, pos, dim, 2, "demand", err, row_styles.setdefault(keyword, []))
            demands = [dmd for _, dmd in rows]
            for k, dmd in enumerate(demands):
                if dmd < 0:
                    raise err(pos - dim + k + 1, f"node {k + 1}: negative demand {dmd}")
        elif keyword == "DEPOT_SECTION":
            styles = row_styles.setdefault(keyword, [])
            for expected, what in ((1, "the depot id 1"), (-1, "-1 ending DEPOT_SECTION")):
                if pos >= len(lines):
                    raise err(pos + 1, f"expected {what}, got the end of the file")
                m2 = _ROW.match(lines[pos])
                tokens = lines[pos].split()
                if len(tokens) != 1 or not is_int(tokens[0]) or int(tokens[0]) != expected:
                    got = lines[pos].strip()[:40]
                    raise err(pos + 1, f"expected {what} (only node 1 may be the depot), got {got!r}")
                assert m2 is not None  # _ROW matches the line: it holds one token
                styles.append((m2.group(1), " ", m2.group(3)))
                pos += 1
        elif keyword == "EDGE_WEIGHT_SECTION":
            if ewf is None:
                raise err(pos, "EDGE_WEIGHT_SECTION needs EDGE_WEIGHT_TYPE : EXPLICIT")
            pairs = _matrix_pairs(ewf, dim)
            values: list[int] = []
            while len(values) < len(pairs):
                if pos >= len(lines):
                    raise err(
                        pos + 1, f"expected {len(pairs)} edge weights, got the end of the file after {len(values)}"
                    )
                tokens = lines[pos].split()
                if not tokens or not is_int(tokens[0]):
                    raise err(
                        pos + 1,
                        f"expected {len(pairs)} edge weights, got {len(values)} then {lines[pos].strip()[:40]!r}",
                    )
                for tok in tokens:
                    if not is_int(tok):
                        raise err(pos + 1, f"expected an integer edge weight, got {tok[:40]!r}")
                    if int(tok) < 0:
                        raise err(pos + 1, f"negative edge weight {tok}")
                values += [int(t) for t in tokens]
                pos += 1
            if len(values) > len(pairs):
                raise err(pos, f"expected {len(pairs)} edge weights, got {len(values)}")
            matrix = [[0] * dim for _ in range(dim)]
            for (i, j), v in zip(pairs, values):
                matrix[i][j] = v
                if ewf != "FULL_MATRIX":
                    matrix[j][i] = v
        else:
            raise err(
                pos,
                f"unsupported section {keyword[:40]} (supported: NODE_COORD_SECTION, "
                "EDGE_WEIGHT_SECTION, DEMAND_SECTION, DEPOT_SECTION)",
            )
    tail_start = pos
    for k in range(pos, len(lines)):
        if lines[k].strip():
            raise err(
                k + 1, f"unexpected content after {'EOF' if eof else 'the last section'}: {lines[k].strip()[:40]!r}"
            )
    if demands is None:
        raise err(tail_start + 1, "expected a DEMAND_SECTION, got the end of the file")
    if "DEPOT_SECTION" not in order:
        raise err(tail_start + 1, "expected a DEPOT_SECTION, got the end of the file")
    if ewt == "EUC_2D" and coords is None:
        raise err(tail_start + 1, "EDGE_WEIGHT_TYPE EUC_2D needs a NODE_COORD_SECTION, got the end of the file")
    if ewt == "EXPLICIT" and matrix is None:
        raise err(tail_start + 1, "EDGE_WEIGHT_TYPE EXPLICIT needs an EDGE_WEIGHT_SECTION, got the end of the file")
    if demands[0] != 0:
        raise err(where["DIMENSION"], f"the depot (node 1) has demand {demands[0]}, expected 0")
    big = max(demands)
    if big > capacity:
        k = demands.index(big)
        raise err(where["CAPACITY"], f"node {k + 1} has demand {big}, above the CAPACITY {capacity}")

    instance: dict = {
        "problem": "cvrp",
        "name": head.get("NAME", "").strip() or "cvrp",
        "n_customers": dim - 1,
        "capacity": capacity,
    }
    if "COMMENT" in head:
        instance["comment"] = head["COMMENT"]
    if coords is not None:
        instance["coords"] = coords
    instance["demands"] = demands
    if ewt == "EUC_2D":
        instance["rounding"] = "nint"
    else:
        instance["rounding"] = "explicit"
        instance["edge_weight_format"] = ewf
        instance["distances"] = matrix

    layout = _layout(
        instance, lines, body, newline, headers, header_styles, order, section_styles, row_styles, eof, tail_start
    )
    if layout:
        instance["layout"] = layout
        if write(instance) != text:
            del instance["layout"]  # an unusual layout: keep the data, write canonically
    return instance


def _is_keyword(line: str) -> bool:
    token = line.split()[0].upper() if line.split() else ""
    return (token.endswith("_SECTION") or token == "EOF") and ":" not in line


def _positive(value: str, key: str, where: dict, err, minimum: int) -> int:
    value = value.strip()
    if not is_int(value) or int(value) < minimum:
        raise err(where[key], f"expected {key} to be an integer >= {minimum}, got {value[:40]!r}")
    return int(value)


def _rows(lines, pos, dim, width, what, err, styles):
    """``dim`` rows ``id v ...`` of ``width`` integers, ids 1..dim in order."""
    rows = []
    for k in range(dim):
        if pos >= len(lines):
            raise err(pos + 1, f"expected the {what} of node {k + 1}, got the end of the file")
        line = lines[pos]
        tokens = line.split()
        if len(tokens) != width:
            raise err(pos + 1, f"expected the {what} of node {k + 1} ({width} integers), got {line.strip()[:40]!r}")
        for tok in tokens:
            if not is_int(tok):
                raise err(pos + 1, f"expected an integer, got {tok[:40]!r}")
        if int(tokens[0]) != k + 1:
            raise err(pos + 1, f"expected node id {k + 1}, got {tokens[0][:40]}")
        m = _ROW.match(line)
        seps = re.findall(r"\s+", m.group(2))
        styles.append((m.group(1), seps[0] if len(set(seps)) == 1 else None, m.group(3)))
        rows.append([int(t) for t in tokens])
        pos += 1
    return rows, pos


def _canonical_headers(instance: dict) -> list[list[str]]:
    out = [["NAME", instance["name"]]]
    if "comment" in instance:
        out.append(["COMMENT", instance["comment"]])
    out += [["TYPE", "CVRP"], ["DIMENSION", str(instance["n_customers"] + 1)]]
    if instance["rounding"] == "explicit":
        out += [["EDGE_WEIGHT_TYPE", "EXPLICIT"], ["EDGE_WEIGHT_FORMAT", instance["edge_weight_format"]]]
    else:
        out.append(["EDGE_WEIGHT_TYPE", "EUC_2D"])
    out.append(["CAPACITY", str(instance["capacity"])])
    return out


def _canonical_order(instance: dict) -> list[str]:
    first = "EDGE_WEIGHT_SECTION" if instance["rounding"] == "explicit" else "NODE_COORD_SECTION"
    extra = ["NODE_COORD_SECTION"] if instance["rounding"] == "explicit" and "coords" in instance else []
    return [first] + extra + ["DEMAND_SECTION", "DEPOT_SECTION"]


def _layout(instance, lines, body, newline, headers, header_styles, order, section_styles, row_styles, eof, tail_start):
    layout: dict = {}
    if newline != "\n":
        layout["newline"] = newline
    if headers != _canonical_headers(instance):
        layout["headers"] = headers
    style = Counter(header_styles).most_common(1)[0][0] if header_styles else _CANON_HEADER
    if style != _CANON_HEADER:
        layout["header_style"] = list(style)
    if order != _canonical_order(instance):
        layout["sections"] = order
    sec = Counter(section_styles).most_common(1)[0][0] if section_styles else "|"
    if sec != "|":
        layout["section_style"] = sec
    rows = {}
    for keyword, styles in row_styles.items():
        best = Counter(s for s in styles if s[1] is not None).most_common(1)
        if best and best[0][0] != _CANON_ROW:
            rows[keyword] = list(best[0][0])
    if rows:
        layout["row_styles"] = rows
    if not eof:
        layout["eof"] = False
    tail = body[len("\n".join(lines[:tail_start])) :]
    if tail != "\n":
        layout["tail"] = tail
    canon = _lines({**instance, "layout": layout})
    if len(canon) == tail_start:
        changed = changed_lines(lines, canon)
        if changed:
            layout["lines"] = changed
    return layout


def read_solution(path_or_text) -> tuple[dict, int | None]:
    """A CVRPLIB ``.sol`` file: ``({"routes": [...]}, cost)`` (cost None if the file has none).

    Lines ``Route #k: c1 c2 ...`` list customers numbered 1..n (the depot is
    implicit), then ``Cost v``; other lines must be blank.
    """
    text, name, _ = load(path_or_text, "cvrp solution")
    routes, cost = [], None
    for lineno, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        if not line.strip():
            continue
        m = re.match(r"^\s*Route\s*#\s*(\d+)\s*:(.*)$", line, flags=re.IGNORECASE)
        if m:
            tokens = m.group(2).split()
            for tok in tokens:
                if not is_int(tok) or int(tok) < 1:
                    raise ValueError(f"{name}:{lineno}: expected a customer number >= 1, got {tok[:40]!r}")
            routes.append([int(t) for t in tokens])
            continue
        m = re.match(r"^\s*Cost\s+(\S+)\s*$", line, flags=re.IGNORECASE)
        if m and is_int(m.group(1)):
            cost = int(m.group(1))
            continue
        raise ValueError(f"{name}:{lineno}: expected 'Route #k: customers' or 'Cost value', got {line.strip()[:40]!r}")
    if not routes:
        raise ValueError(f"{name}: no 'Route #k:' line")
    return {"routes": routes}, cost


# -------------------------------------------------------------------------- write


def write(instance: dict, fmt: str = "vrplib") -> str:
    """The ``.vrp`` text of ``instance`` (its ``layout``, if any, reproduces a published file)."""
    check_format(fmt, FORMATS, "cvrp", optional=False)
    return render(_lines(instance), instance.get("layout") or {})


def _lines(instance: dict) -> list[str]:
    """The file's lines in the canonical layout, adjusted by the layout's styles (not its line overrides)."""
    layout = instance.get("layout") or {}
    hsep, hend = layout.get("header_style", _CANON_HEADER)
    sstart, send = layout.get("section_style", "|").split("|")
    row_styles = layout.get("row_styles", {})
    out = [f"{k}{hsep}{v}{hend}" for k, v in layout.get("headers") or _canonical_headers(instance)]
    dim = instance["n_customers"] + 1
    for keyword in layout.get("sections") or _canonical_order(instance):
        out.append(f"{sstart}{keyword}{send}")
        start, sep, end = row_styles.get(keyword, _CANON_ROW)
        if keyword == "NODE_COORD_SECTION":
            out += [f"{start}{i + 1}{sep}{x}{sep}{y}{end}" for i, (x, y) in enumerate(instance["coords"])]
        elif keyword == "DEMAND_SECTION":
            out += [f"{start}{i + 1}{sep}{d}{end}" for i, d in enumerate(instance["demands"])]
        elif keyword == "DEPOT_SECTION":
            out += [f"{start}1{end}", f"{start}-1{end}"]
        elif keyword == "EDGE_WEIGHT_SECTION":
            m = instance["distances"]
            values = [m[i][j] for i, j in _matrix_pairs(instance["edge_weight_format"], dim)]
            width = max([WIDTH] + [len(str(v)) + 1 for v in values])
            out += ["".join(f"{v:>{width}}" for v in values[k : k + PER_LINE]) for k in range(0, len(values), PER_LINE)]
    if layout.get("eof", True):
        out.append(f"{sstart}EOF{send}")
    return out
