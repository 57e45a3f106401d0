"""The report's figures, each as PNG bytes (None when there is nothing to draw).

Drawn with matplotlib's Agg canvas on a :class:`~matplotlib.figure.Figure` of
their own (never pyplot's global state), so they can be made from any thread
and leave no figure behind. The same trials, in any order, give the same
bytes: values are sorted before use, the jitter of the points is seeded and
the PNG carries no software version.

Every figure colours an agent (``TrialRecord.agent_label``: agent and model)
the same way, marks a level the same way (a hatch on bars; a line style and a
marker on lines), and counts only scored trials (those Harbor holds a valid
reward for), as the tables do. The ``*_figure`` functions return the
matplotlib figure itself, for tests and for anyone embedding it elsewhere.
"""

from __future__ import annotations

import io
import math
from collections import defaultdict
from statistics import fmean

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from orharbor.report.jobs import TrialRecord
from orharbor.report.stats import bootstrap_ci
from orharbor.report.tables import size_order
from orharbor.verifiers.reward import FAIL

DPI = 100
WIDTH = 11.0  # inches: 1100 px at DPI
#: Reward of an infeasible (or missing) answer, of the naive baseline and of the reference.
GUIDES = ((FAIL, "infeasible"), (0.0, "naive"), (1.0, "reference"))
LEVEL_STYLES = ("-", "--", ":", "-.")
LEVEL_MARKERS = ("o", "s", "^", "D")
LEVEL_HATCHES = ("", "///", "...", "xxx")
#: How far apart (in size slots) the lines of the levels are drawn, so equal values do not hide each other.
LEVEL_DODGE = 0.1
JITTER_SEED = 0

__all__ = [
    "agents_by_class",
    "agents_by_class_figure",
    "reward_by_size",
    "reward_by_size_figure",
    "reward_distributions",
]


def reward_distributions(trials: list[TrialRecord]) -> bytes | None:
    """Algorithm rewards per problem class and level: one box (and its points) per agent."""
    scored = [t for t in trials if t.kind == "algorithm" and t.scored]
    if not scored:
        return None
    colours = _colours(trials)
    agents = sorted({t.agent_label for t in scored})
    groups = sorted({(t.problem, t.level) for t in scored}, key=lambda g: (g[0], _level_key(g[1])))
    rewards: dict[tuple, list[float]] = defaultdict(list)
    for t in scored:
        rewards[(t.problem, t.level, t.agent_label)].append(t.score)

    fig = _figure(height=4.9)
    ax = fig.add_subplot()
    rng = np.random.default_rng(JITTER_SEED)
    slot = 0.8 / len(agents)
    for g, (problem, level) in enumerate(groups):
        for a, agent in enumerate(agents):
            values = sorted(rewards.get((problem, level, agent), ()))
            if not values:
                continue
            x = g - 0.4 + slot * (a + 0.5)
            box = ax.boxplot(
                [values],
                positions=[x],
                widths=slot * 0.75,
                patch_artist=True,
                showfliers=False,
                manage_ticks=False,
                medianprops={"color": "black", "linewidth": 1.2},
                whiskerprops={"color": "#555555"},
                capprops={"color": "#555555"},
            )
            for patch in box["boxes"]:
                patch.set(facecolor=colours[agent], alpha=0.35, edgecolor=colours[agent])
            jitter = rng.uniform(-slot * 0.25, slot * 0.25, size=len(values))
            ax.scatter(x + jitter, values, s=18, color=colours[agent], edgecolors="white", linewidths=0.4, zorder=3)
    for y, _ in GUIDES:
        ax.axhline(y, color="#777777", linestyle=":", linewidth=1.1, zorder=1)
    _category_axis(ax, [_group_name(p, lv) for p, lv in groups])
    ax.set_xlabel("problem class and level")
    ax.set_ylabel("reward")
    _guide_axis(ax)
    ax.set_title("Reward of each trial per problem class and level (box: quartiles, points: trials)")
    ax.grid(axis="y", color="#eeeeee", zorder=0)
    ax.set_axisbelow(True)
    _legend(fig, [Patch(facecolor=colours[a], edgecolor=colours[a], alpha=0.6, label=a) for a in agents])
    return _png(fig)


def agents_by_class(trials: list[TrialRecord]) -> bytes | None:
    """Mean reward of each agent per algorithm problem class and level and modelling source: PNG bytes."""
    return _png_of(agents_by_class_figure(trials))


def agents_by_class_figure(trials: list[TrialRecord]) -> Figure | None:
    """Mean reward per class with its 95% interval: one bar per agent and level (hatch: level), one per source.

    Each bar series (an agent at one level, or an agent's modelling bars) is one
    labelled ``BarContainer`` of the axes: ``"<agent> L1"``, ``"<agent> modelling"``.
    """
    scored = [t for t in trials if t.scored]
    if not scored:
        return None
    colours = _colours(trials)
    agents = sorted({t.agent_label for t in scored})
    levels = sorted({t.level for t in scored if t.kind == "algorithm"}, key=_level_key)
    hatches = _level_marks(levels, LEVEL_HATCHES)
    algorithm = sorted({t.problem for t in scored if t.kind == "algorithm"})
    modelling = sorted({t.problem for t in scored if t.kind == "modelling"})
    classes = [("algorithm", p) for p in algorithm] + [("modelling", p) for p in modelling]
    rewards: dict[tuple, list[float]] = defaultdict(list)
    for t in scored:
        rewards[(t.problem, t.agent_label, t.kind, t.level if t.kind == "algorithm" else None)].append(t.score)

    fig = _figure(height=4.7)
    ax = fig.add_subplot()
    series: dict[tuple, list[tuple[float, float, float, float, float]]] = defaultdict(list)
    for c, (kind, problem) in enumerate(classes):
        bars = [(agent, kind, level) for agent in agents for level in (levels if kind == "algorithm" else [None])]
        slot = 0.8 / len(bars)
        for b, key in enumerate(bars):
            values = sorted(rewards.get((problem, *key), ()))
            if values:
                mean, interval = fmean(values), bootstrap_ci(values)
                assert interval is not None  # None only for no values
                series[key].append(
                    (
                        c - 0.4 + slot * (b + 0.5),
                        slot * 0.9,
                        mean,
                        max(mean - interval[0], 0.0),
                        max(interval[1] - mean, 0.0),
                    )
                )
    for agent, kind, level in sorted(series, key=lambda k: (k[0], k[1], _level_key(k[2]))):
        xs, widths, means, low, high = zip(*series[(agent, kind, level)])
        label = f"{agent} {_level_name(level) if kind == 'algorithm' else 'modelling'}"
        ax.bar(
            xs,
            means,
            width=widths,
            color=colours[agent],
            hatch=hatches.get(level, "") if kind == "algorithm" else "",
            edgecolor="#333333",
            linewidth=0.6,
            label=label,
            zorder=2,
        )
        ax.errorbar(xs, means, yerr=[low, high], fmt="none", ecolor="#333333", elinewidth=1, capsize=3, zorder=3)
    ax.axhline(0, color="#555555", linewidth=0.8, zorder=1)
    ax.axhline(1, color="#888888", linestyle=":", linewidth=1, zorder=1)
    _category_axis(ax, [p if k == "algorithm" else f"modelling: {p}" for k, p in classes])
    ax.set_xlabel("problem class (algorithm tasks: one bar per level) or source (modelling tasks)")
    ax.set_ylabel("mean reward")
    ax.set_title("Mean reward per class, level and agent (bars: 95% bootstrap interval)")
    ax.grid(axis="y", color="#eeeeee", zorder=0)
    ax.set_axisbelow(True)
    handles = [Patch(facecolor=colours[a], label=a) for a in agents]
    handles += [
        Patch(facecolor="white", edgecolor="#333333", hatch=hatches[lv], label=_level_name(lv)) for lv in levels
    ]
    _legend(fig, handles)
    return fig


def reward_by_size(trials: list[TrialRecord]) -> bytes | None:
    """Mean reward against instance size, one panel per problem class: PNG bytes."""
    return _png_of(reward_by_size_figure(trials))


def reward_by_size_figure(trials: list[TrialRecord]) -> Figure | None:
    """Mean reward against instance size: one panel per problem class, one labelled line per agent and level.

    A level has its own line style and marker and is drawn a little aside
    (:data:`LEVEL_DODGE`), so two levels with equal means stay apart.
    """
    scored = [t for t in trials if t.kind == "algorithm" and t.scored and t.size is not None]
    if not scored:
        return None
    colours = _colours(trials)
    agents = sorted({t.agent_label for t in scored})
    problems = sorted({t.problem for t in scored})
    levels = sorted({t.level for t in scored}, key=_level_key)
    styles, markers = _level_marks(levels, LEVEL_STYLES), _level_marks(levels, LEVEL_MARKERS)
    dodge = {level: LEVEL_DODGE * (i - (len(levels) - 1) / 2) for i, level in enumerate(levels)}
    rewards: dict[tuple, list[float]] = defaultdict(list)
    for t in scored:
        rewards[(t.problem, t.size, t.agent_label, t.level)].append(t.score)

    ncols = min(3, len(problems))
    nrows = math.ceil(len(problems) / ncols)
    fig = _figure(height=0.9 + 2.9 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    for i, problem in enumerate(problems):
        ax = axes[i // ncols][i % ncols]
        sizes = sorted({t.size for t in scored if t.problem == problem}, key=lambda s: size_order(problem, s))
        for agent in agents:
            for level in levels:
                points = [
                    (x + dodge[level], fmean(sorted(rewards[(problem, size, agent, level)])))
                    for x, size in enumerate(sizes)
                    if rewards.get((problem, size, agent, level))
                ]
                if points:
                    ax.plot(
                        [p[0] for p in points],
                        [p[1] for p in points],
                        linestyle=styles[level],
                        marker=markers[level],
                        markersize=5,
                        color=colours[agent],
                        linewidth=1.6,
                        label=f"{agent} {_level_name(level)}",
                    )
        for y, _ in GUIDES:
            ax.axhline(y, color="#777777", linestyle=":", linewidth=1.1, zorder=1)
        ax.set_xticks(range(len(sizes)), sizes)
        if len(sizes) > 5:
            ax.tick_params(axis="x", labelrotation=35)
        ax.set_xlim(-0.5, len(sizes) - 0.5)
        ax.set_title(problem)
        ax.grid(axis="y", color="#eeeeee")
        ax.set_axisbelow(True)
        if i % ncols == 0:
            ax.set_ylabel("mean reward")
        if i // ncols == nrows - 1 or i + ncols >= len(problems):
            ax.set_xlabel("instance size")
    for j in range(len(problems), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    fig.suptitle("Mean reward against instance size (dotted: infeasible -1, naive 0, reference 1)")
    handles = [Line2D([], [], color=colours[a], linewidth=1.6, label=a) for a in agents]
    handles += [
        Line2D(
            [],
            [],
            color="#444444",
            linestyle=styles[lv],
            marker=markers[lv],
            markersize=5,
            linewidth=1.6,
            label=_level_name(lv),
        )
        for lv in levels
    ]
    _legend(fig, handles)
    return fig


def _figure(height: float) -> Figure:
    fig = Figure(figsize=(WIDTH, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png_of(fig: Figure | None) -> bytes | None:
    return None if fig is None else _png(fig)


def _level_marks(levels: list, marks: tuple) -> dict:
    """The mark (hatch, line style, marker) of each level: level n the n-th in every report; unknown the last."""
    return {
        level: marks[(level - 1) % len(marks)] if isinstance(level, int) and level >= 1 else marks[-1]
        for level in levels
    }


def _png(fig: Figure) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI, metadata={"Software": None})
    return out.getvalue()


def _colours(trials: list[TrialRecord]) -> dict[str, str]:
    """One colour per agent label of every trial, the same in every figure."""
    labels = sorted({t.agent_label for t in trials})
    palette = _palette(len(labels))
    return {label: palette[i % len(palette)] for i, label in enumerate(labels)}


def _palette(n: int) -> list[str]:
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [to_hex(cmap(i)) for i in range(cmap.N)]


def _legend(fig: Figure, handles: list) -> None:
    """The legend below the plot, in as many columns as fit the figure's width; the figure grows to hold it."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # the Agg canvas has it; the stubs type the base
    for ncols in range(len(handles), 0, -1):
        legend = fig.legend(handles=handles, loc="outside lower center", ncols=ncols, frameon=False, fontsize=9)
        box = legend.get_window_extent(renderer)
        if box.width <= fig.bbox.width - 10 or ncols == 1:
            break
        legend.remove()
    fig.set_figheight(fig.get_figheight() + box.height / fig.dpi)


def _category_axis(ax, labels: list[str]) -> None:
    """One tick per category, slot i centred on x = i; labels slanted when there are many."""
    ax.set_xticks(range(len(labels)), labels)
    if len(labels) > 8:
        ax.tick_params(axis="x", labelrotation=35)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
    ax.set_xlim(-0.6, len(labels) - 0.4)


def _guide_axis(ax) -> None:
    """Name the reward guide lines on a right-hand axis."""
    right = ax.secondary_yaxis("right")
    right.set_yticks([y for y, _ in GUIDES], [name for _, name in GUIDES])
    right.tick_params(labelsize=8, colors="#666666")


def _group_name(problem: str, level: int | None) -> str:
    return f"{problem} {_level_name(level)}" if level is not None else problem


def _level_name(level: int | None) -> str:
    return f"L{level}" if level is not None else "level ?"


def _level_key(level: int | None) -> int:
    return level if level is not None else 1_000_000
