"""Print a report (or a comparison) as a terminal table, markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from orharbor.report.tables import ALGORITHM_KEYS, COMPARE_KEYS, MODELLING_KEYS
from orharbor.text import columns

FORMATS = ("table", "markdown", "csv", "json")

#: (title, key, how a value is shown) of the columns a reader scans; CSV and JSON hold every key.
ALGORITHM_COLUMNS = (
    ("agent", "agent", None),
    ("model", "model", None),
    ("problem", "problem", None),
    ("size", "size", None),
    ("level", "level", None),
    ("trials", "trials", None),
    ("scored", "scored", None),
    ("mean reward", "mean_reward", "reward"),
    ("95% CI", None, "ci"),
    ("feasible", "feasible_rate", "pct"),
    ("> ref", "beat_reference_rate", "pct"),
    ("<= naive", "at_or_below_naive_rate", "pct"),
    ("gap ref", "gap_reference", "gap"),
    ("gap bound", "gap_bound", "gap"),
    ("gap best", "gap_best", "gap"),
    ("quality", "quality", "plain"),
    ("inst. sd", "instance_std", "plain"),
    ("best of k", "best_of_k", "bestk"),
    ("cpu x", "cpu_factor", "factor"),
    ("errors", "errors", "errors"),
)
#: What the trials cost (tables.usage), after each table's own columns.
USAGE_COLUMNS = (
    ("tokens in", "input_tokens", "count"),
    ("cached", "cache_tokens", "count"),
    ("tokens out", "output_tokens", "count"),
    ("$ / trial", "cost_per_trial", "usd"),
    ("reward / $", "reward_per_dollar", "reward"),
    ("$ / pass", "cost_of_pass", "usd"),
    ("$ unscored", "unscored_cost_usd", "usd"),
)
#: Columns a table shows only when some group has them: best known values, and what the agents reported spending.
BEST_KNOWN_KEYS = ("gap_best", "quality")
OPTIONAL_KEYS = (*BEST_KNOWN_KEYS, *(key for _, key, _ in USAGE_COLUMNS))
MODELLING_COLUMNS = (
    ("agent", "agent", None),
    ("model", "model", None),
    ("source", "source", None),
    ("{by}", "{by}", None),
    ("trials", "trials", None),
    ("scored", "scored", None),
    ("execution", "execution_rate", "pct"),
    ("accuracy", "accuracy", "pct"),
    ("silent failures", "silent_failure_rate", "pct"),
    ("mean reward", "mean_reward", "reward"),
    ("95% CI", None, "ci"),
    ("pass@k", "pass_at_k", "passk"),
    ("errors", "errors", "errors"),
)
COMPARE_COLUMNS = (
    ("kind", "kind", None),
    ("problem", "problem", None),
    ("size", "size", None),
    ("level", "level", None),
    ("family", "family", None),
    ("A trials", "a_trials", None),
    ("B trials", "b_trials", None),
    ("A mean", "a_mean", "reward"),
    ("B mean", "b_mean", "reward"),
    ("B - A", "difference", "reward"),
    ("shared", "shared_tasks", None),
    ("paired B - A", "paired_difference", "reward"),
    ("95% CI", None, "ci"),
    ("p", "p_value", "p"),
)


#: How a number of each kind of column is shown.
NUMBER_FORMATS = {
    "reward": "+.3f",
    "plain": ".3f",
    "pct": ".0%",
    "gap": "+.2%",
    "p": ".3g",
    "factor": ".2f",
    "count": ",.0f",
    "usd": ".4f",
}


def render(report: dict, fmt: str) -> str:
    """The report (from :func:`orharbor.report.build` or ``build_comparison``) in ``fmt``."""
    if fmt == "json":
        return json.dumps(report, indent=1, allow_nan=False)
    if fmt == "csv":
        return _csv(report)
    return "\n\n".join(
        title + "\n" + body if fmt == "table" else f"### {title}\n\n{body}"
        for title, body in sections(report, markdown=fmt == "markdown")
    )


def tables(report: dict) -> list[tuple[str, list[list[str]]]]:
    """(title, cells with the header first) of each non-empty table of the report."""
    if "compare" in report:
        title = (
            f"B ({report['b']}: {', '.join(report['b_agents'])}) against A ({report['a']}: "
            f"{', '.join(report['a_agents'])})"
        )
        return [(title, cells(report["compare"], COMPARE_COLUMNS))]
    out = []
    if report["algorithm"]:
        out.append(
            (
                "Algorithm tasks (reward: 1.0 = reference, 0.0 = naive, -1.0 = infeasible or nothing; "
                "unit- and quality-scale exports read back)",
                cells(report["algorithm"], _shown(ALGORITHM_COLUMNS + USAGE_COLUMNS, report["algorithm"])),
            )
        )
    for by in ("difficulty", "family"):
        rows = report["modelling"][f"by_{by}"]
        if rows:
            cols = tuple((t.format(by=by), k.format(by=by) if k else k, f) for t, k, f in MODELLING_COLUMNS)
            out.append(
                (
                    f"Modelling tasks by {by} (reward: 1.0 correct, 0.0 not)",
                    cells(rows, _shown(cols + USAGE_COLUMNS, rows)),
                )
            )
    return out


def _shown(cols: tuple, rows: list[dict]) -> tuple:
    """``cols`` without the optional ones no row has a value for (best known figures, tokens and cost)."""
    return tuple(c for c in cols if c[1] not in OPTIONAL_KEYS or any(row.get(c[1]) is not None for row in rows))


def sections(report: dict, markdown: bool = False) -> list[tuple[str, str]]:
    """(title, table text) of each non-empty table of the report."""
    table = _markdown if markdown else columns
    return [(title, table(rows)) for title, rows in tables(report)]


def summary_line(report: dict) -> str:
    """How many trials were read and how many skipped."""
    return f"{report['trials']} trials read, {report['skipped_trials']} skipped"


def cells(rows: list[dict], cols: tuple) -> list[list[str]]:
    """The header, then each row's cells as shown (``cols``: title, key, how)."""
    header = [title for title, _, _ in cols]
    return [header] + [[_show(row, key, how) for _, key, how in cols] for row in rows]


def _show(row: dict, key: str | None, how: str | None) -> str:
    if how == "ci":
        low, high = row.get("ci_low"), row.get("ci_high")
        return "-" if low is None else f"[{low:+.3f}, {high:+.3f}]"
    value = row.get(key)
    if value is None or value == {}:
        return "-"
    if how in NUMBER_FORMATS:
        return format(value, NUMBER_FORMATS[how])
    if how == "errors":
        return ", ".join(f"{name} x{n}" for name, n in value.items())
    if how == "passk":
        return " ".join(f"@{k}:{v:.2f}" for k, v in value.items())
    if how == "bestk":
        return " ".join(f"@{k}:{v:+.2f}" for k, v in value.items())
    return str(value)


def _markdown(rows: list[list[str]]) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(rows[0]), line(["---"] * len(rows[0])), *(line(r) for r in rows[1:])])


def _csv(report: dict) -> str:
    """One CSV table: a ``table`` column naming the part, then every key of every part."""
    parts: list[tuple[str, Any, tuple[str, ...]]]
    if "compare" in report:
        parts = [("compare", report["compare"], COMPARE_KEYS)]
    else:
        parts = [
            ("algorithm", report["algorithm"], ALGORITHM_KEYS),
            ("modelling_by_difficulty", report["modelling"]["by_difficulty"], MODELLING_KEYS),
            ("modelling_by_family", report["modelling"]["by_family"], MODELLING_KEYS),
        ]
    keys: list[str] = []
    for _, _, part_keys in parts:
        keys += [k for k in part_keys if k not in keys]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["table", *keys])
    for name, rows, _ in parts:
        for row in rows:
            writer.writerow([name, *(_csv_value(row.get(k)) for k in keys)])
    return out.getvalue().rstrip("\n")


def _csv_value(value) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return ";".join(f"{k}:{v}" for k, v in value.items())
    return str(value)
