"""The report as one self-contained HTML page: its tables, what was skipped, and its figures.

The page needs nothing beside itself: the style is inline, the figures are
PNG data URLs, and there are no scripts. Every text taken from the jobs
(agent names, paths, reasons) is escaped.
"""

from __future__ import annotations

import base64
import re
from html import escape

from orharbor.report import plots
from orharbor.report.jobs import TrialRecord
from orharbor.report.render import summary_line, tables

__all__ = ["html_page"]

#: (figure function, alt text, caption) of each figure of a report, in the page's order.
FIGURES = (
    (
        plots.agents_by_class,
        "Grouped bar chart: mean reward of each agent per problem class and level",
        "Mean reward of each agent per problem class (algorithm tasks: one bar per level, the level's hatch in the "
        "legend) and source (modelling tasks), with the 95% bootstrap interval of the mean. Algorithm rewards: "
        "1.0 = reference, 0.0 = naive, -1.0 = infeasible; modelling rewards: 1.0 correct, 0.0 not.",
    ),
    (
        plots.reward_distributions,
        "Box plots: reward of each trial per problem class, level and agent",
        "Reward of every scored algorithm trial, per problem class and level: one box (quartiles, whiskers to 1.5 "
        "IQR) and its points per agent. Dotted lines: infeasible (-1), naive (0), reference (1).",
    ),
    (
        plots.reward_by_size,
        "Line charts: mean reward of each agent against instance size, per problem class",
        "Mean reward against instance size, one panel per problem class, one line per agent and level: the colour "
        "is the agent, the line style and marker the level (drawn slightly apart so equal values stay visible).",
    ),
)

#: Columns whose cells may wrap (every other cell stays on one line).
WRAPPING = {"errors"}
#: A cell shown right-aligned: a number, a percentage, an interval, pass@k figures.
_NUMERIC = re.compile(r"^(?:[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?%?|\[[^\]]*\]|(?:@\d+:\d+\.\d+ ?)+)$")

STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       margin: 0; padding: 1.5rem 2rem 3rem; color: #1f2328; background: #fff; line-height: 1.45;
       max-width: 1400px; }
header { border-bottom: 2px solid #d0d7de; margin-bottom: 1.5rem; padding-bottom: .75rem; }
h1 { font-size: 1.6rem; margin: 0 0 .4rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .6rem; }
.meta { margin: .15rem 0; color: #57606a; }
.meta strong { color: #1f2328; font-weight: 600; }
.scroll { overflow-x: auto; border: 1px solid #d0d7de; border-radius: 6px; }
table { border-collapse: collapse; font-size: .84rem; width: 100%; }
th, td { padding: .3rem .55rem; text-align: left; vertical-align: top; white-space: nowrap; }
th { white-space: normal; vertical-align: bottom; }
td.wrap { white-space: normal; }
th { background: #f0f3f6; border-bottom: 1px solid #d0d7de; font-weight: 600; }
tbody tr:nth-child(even) { background: #f6f8fa; }
tbody tr:hover { background: #eaf2fb; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.missing { color: #8c959f; }
figure { margin: 1.5rem 0 2rem; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid #d0d7de; border-radius: 6px; }
figcaption { color: #57606a; font-size: .88rem; margin-top: .4rem; max-width: 60rem; }
ul.skipped { font-size: .88rem; padding-left: 1.2rem; }
ul.skipped code { background: #f6f8fa; padding: .05rem .3rem; border-radius: 4px; word-break: break-all; }
p.empty { color: #57606a; font-style: italic; }
"""


def html_page(report: dict, trials: list[TrialRecord], title: str = "orharbor report") -> str:
    """The report (from :func:`orharbor.report.build` or ``build_comparison``) as one HTML5 page.

    ``trials`` are the records the report was built from, for the figures; a
    comparison report shows its table only (``trials`` may be empty).
    """
    parts = [_header(report, title)]
    found = tables(report)
    for heading, rows in found:
        parts.append(f"<section>\n<h2>{escape(heading)}</h2>\n{_table(rows)}\n</section>")
    if not found:
        parts.append('<p class="empty">No trials of orharbor tasks to report.</p>')
    if report.get("skipped"):
        parts.append(_skipped(report["skipped"]))
    if "compare" not in report:
        figures = [
            _figure(png, alt, caption)
            for png, alt, caption in ((make(trials), alt, caption) for make, alt, caption in FIGURES)
            if png is not None
        ]
        if figures:
            parts.append("<section>\n<h2>Figures</h2>\n" + "\n".join(figures) + "\n</section>")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(parts)
        + "\n</body>\n</html>\n"
    )


def _header(report: dict, title: str) -> str:
    lines = [f"<h1>{escape(title)}</h1>"]
    if "compare" in report:
        lines.append(
            f'<p class="meta"><strong>A:</strong> {escape(str(report["a"]))} '
            f"({escape(', '.join(report['a_agents']) or 'no agents')})</p>"
        )
        lines.append(
            f'<p class="meta"><strong>B:</strong> {escape(str(report["b"]))} '
            f"({escape(', '.join(report['b_agents']) or 'no agents')})</p>"
        )
    else:
        jobs = report.get("jobs") or []
        lines.append(f'<p class="meta"><strong>Jobs:</strong> {escape(", ".join(jobs)) if jobs else "none"}</p>')
    lines.append(f'<p class="meta">{escape(summary_line(report))}</p>')
    return "<header>\n" + "\n".join(lines) + "\n</header>"


def _table(rows: list[list[str]]) -> str:
    header, body = rows[0], rows[1:]
    numeric = [
        bool(body) and all(r[i] == "-" or _NUMERIC.match(r[i]) for r in body) and any(r[i] != "-" for r in body)
        for i in range(len(header))
    ]

    def cell(tag: str, text: str, i: int) -> str:
        classes = (
            (["num"] if numeric[i] else [])
            + (["wrap"] if tag == "td" and header[i] in WRAPPING else [])
            + (["missing"] if tag == "td" and text == "-" else [])
        )
        attr = f' class="{" ".join(classes)}"' if classes else ""
        return f"<{tag}{attr}>{escape(text)}</{tag}>"

    head = "<tr>" + "".join(cell("th", text, i) for i, text in enumerate(header)) + "</tr>"
    lines = ["<tr>" + "".join(cell("td", text, i) for i, text in enumerate(row)) + "</tr>" for row in body]
    return (
        '<div class="scroll">\n<table>\n<thead>'
        + head
        + "</thead>\n<tbody>\n"
        + "\n".join(lines)
        + "\n</tbody>\n</table>\n</div>"
    )


def _skipped(skipped: list[dict]) -> str:
    items = [
        f"<li><code>{escape(str(s['path']))}</code>: {escape(str(s['reason']))}"
        + ("" if s.get("trials", 1) else " <em>(job-level file; no trial lost)</em>")
        + "</li>"
        for s in skipped
    ]
    return (
        f'<section>\n<h2>Skipped ({len(skipped)})</h2>\n<ul class="skipped">\n'
        + "\n".join(items)
        + "\n</ul>\n</section>"
    )


def _figure(png: bytes, alt: str, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure>\n<img src="data:image/png;base64,{data}" alt="{escape(alt)}">\n'
        f"<figcaption>{escape(caption)}</figcaption>\n</figure>"
    )
