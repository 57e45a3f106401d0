"""The HTML page of a report and its figures, from trial records made here (no Harbor trials)."""

from __future__ import annotations

import base64
import io
from html.parser import HTMLParser
from pathlib import Path

import pytest

from orharbor.report import Reading, Skipped, build, build_comparison
from orharbor.report import plots
from orharbor.report.html import html_page
from orharbor.report.jobs import Instance, TrialRecord
from orharbor.report.render import tables

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
AGENTS = (("claude-code", "anthropic/claude-sonnet-4"), ("codex", "openai/gpt-5"), ("oracle", None))
ALGORITHM = (("jobshop", ("4x4", "10x10")), ("rcpsp", ("j10", "j30")))
EVIL = "<script>alert(1)</script>"


def _reward(agent: int, problem: int, size: int, level: int, attempt: int) -> float | None:
    """A spread of rewards: mostly in [-1, 1.2], some infeasible, one unscored trial per agent."""
    if (agent, problem, size, level, attempt) == (agent, 1, 1, 2, 2):
        return None
    if (agent + size + attempt) % 5 == 4:
        return -1.0
    return round(1.15 - 0.35 * agent - 0.3 * size - 0.1 * level + 0.07 * attempt - 0.05 * problem, 3)


def sample_trials(agents=AGENTS) -> list[TrialRecord]:
    """Algorithm trials of every agent on two problems, two sizes and levels 1 and 2; some modelling trials."""
    trials = []
    for a, (agent, model) in enumerate(agents):
        for p, (problem, sizes) in enumerate(ALGORITHM):
            for s, size in enumerate(sizes):
                for level in (1, 2):
                    for attempt in range(3):
                        reward = _reward(a, p, s, level, attempt)
                        instances = (
                            ()
                            if level == 1 or reward is None
                            else tuple(
                                Instance(
                                    reward=reward + d,
                                    feasible=reward + d > -1,
                                    objective=100.0 + 10 * d,
                                    reference=100.0,
                                    bound=95.0,
                                    timed_out=False,
                                )
                                for d in (-0.05, 0.0, 0.05)
                            )
                        )
                        trials.append(
                            TrialRecord(
                                job="job-2025-01-01",
                                trial=f"{problem}-{size}-l{level}-{agent}-{attempt}",
                                task=f"{problem}-{size}-l{level}",
                                agent=agent,
                                model=model,
                                kind="algorithm",
                                problem=problem,
                                size=size,
                                level=level,
                                reward=reward,
                                exception="AgentTimeoutError" if reward is None else None,
                                feasible=None if reward is None else reward > -1,
                                objective=None if reward is None else 100 * (2 - reward),
                                reference=100.0,
                                naive=200.0,
                                bound=95.0,
                                instances=instances,
                            )
                        )
        for i, (source, family, difficulty) in enumerate(
            (("spec", "spec", "easy"), ("spec", "spec", "hard"), ("retailopt", "F1", None))
        ):
            for attempt in range(2):
                correct = (a + i + attempt) % 3 != 0
                trials.append(
                    TrialRecord(
                        job="job-2025-01-01",
                        trial=f"{source}-{i}-{agent}-{attempt}",
                        task=f"{source}-{i}",
                        agent=agent,
                        model=model,
                        kind="modelling",
                        problem=source,
                        difficulty=difficulty,
                        family=family,
                        reward=1.0 if correct else 0.0,
                        executed=correct or attempt == 0,
                        correct=correct,
                    )
                )
    return trials


def sample_reading(agents=AGENTS) -> Reading:
    return Reading(
        trials=sample_trials(agents),
        skipped=[
            Skipped(Path("jobs/job-2025-01-01/broken-trial/result.json"), "result.json is not valid JSON"),
            Skipped(Path("jobs/job-2025-01-01/config.json"), "config.json <odd> & unreadable", trials=0),
        ],
    )


class PageParser(HTMLParser):
    """Collects what the tests look at: references, images, table cells and the text of the page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str, str]] = []
        self.images: list[dict] = []
        self.tags: list[str] = []
        self.cells: list[str] = []
        self.text: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        for name in ("src", "href", "srcset", "action", "data"):
            if name in attrs:
                self.refs.append((tag, name, attrs[name]))
        if tag == "img":
            self.images.append(attrs)
        if tag in ("td", "th"):
            self._in_cell = True
            self.cells.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._in_cell = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_cell:
            self.cells[-1] += data


def parse(page: str) -> PageParser:
    parser = PageParser()
    parser.feed(page)
    parser.close()
    return parser


def decode_png(src: str) -> bytes:
    prefix = "data:image/png;base64,"
    assert src.startswith(prefix)
    return base64.b64decode(src[len(prefix) :], validate=True)


def image_shape(png: bytes) -> tuple:
    from matplotlib.image import imread

    return imread(io.BytesIO(png), format="png").shape


@pytest.fixture(scope="module")
def report_and_trials():
    reading = sample_reading()
    return build(reading), reading.trials


@pytest.fixture(scope="module")
def page(report_and_trials) -> str:
    report, trials = report_and_trials
    return html_page(report, trials, title="Demo report")


def test_page_is_self_contained_html(page):
    parsed = parse(page)
    assert page.startswith("<!DOCTYPE html>")
    assert parsed.tags[:1] == ["html"] and "style" in parsed.tags
    assert "script" not in parsed.tags and "link" not in parsed.tags
    assert all(
        tag == "img" and name == "src" and value.startswith("data:image/png;base64,")
        for tag, name, value in parsed.refs
    ), parsed.refs[:3]
    assert "http://" not in page and "https://" not in page and "url(" not in page


def test_page_embeds_three_decodable_pngs(page):
    parsed = parse(page)
    assert len(parsed.images) == 3
    for attrs in parsed.images:
        assert attrs.get("alt")
        png = decode_png(attrs["src"])
        assert png.startswith(PNG_SIGNATURE)
        height, width = image_shape(png)[:2]
        assert 0 < height and 0 < width <= 1100
    assert parsed.tags.count("figcaption") == 3


def test_header_names_jobs_and_counts(page, report_and_trials):
    report, trials = report_and_trials
    text = " ".join(parse(page).text)
    assert "Demo report" in text and "job-2025-01-01" in text
    assert f"{len(trials)} trials read, 1 skipped" in text


def test_tables_hold_every_agent_and_problem(page, report_and_trials):
    report, _ = report_and_trials
    parsed = parse(page)
    assert parsed.tags.count("table") == 3  # algorithm, modelling by difficulty, by family
    for agent, _ in AGENTS:
        assert agent in parsed.cells
    for problem in ("jobshop", "rcpsp", "spec", "retailopt"):
        assert problem in parsed.cells
    for size in ("4x4", "10x10", "j10", "j30", "F1", "easy", "hard"):
        assert size in parsed.cells
    # The page's tables are the text report's tables, cell for cell.
    expected = [cell for _, rows in tables(report) for row in rows for cell in row]
    assert parsed.cells == expected


def test_numeric_columns_are_right_aligned(page):
    assert '<th class="num">mean reward</th>' in page
    assert "<th>agent</th>" in page and "<th>size</th>" in page


def test_skipped_files_are_listed(page):
    text = " ".join(parse(page).text)
    assert "Skipped (2)" in text
    assert "jobs/job-2025-01-01/broken-trial/result.json" in text and "result.json is not valid JSON" in text
    assert "config.json <odd> & unreadable" in text  # unescaped back by the parser: it was escaped in the page
    assert "&lt;odd&gt; &amp; unreadable" in page


def test_agent_names_are_escaped():
    reading = sample_reading(agents=((EVIL, None), ("codex", "openai/gpt-5")))
    page = html_page(build(reading), reading.trials, title="<b>title</b>")
    parsed = parse(page)
    assert "script" not in parsed.tags and "b" not in parsed.tags
    assert EVIL not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert EVIL in parsed.cells
    assert "<title>&lt;b&gt;title&lt;/b&gt;</title>" in page


def test_empty_report_is_a_valid_page_without_images():
    page = html_page(build(Reading()), [])
    parsed = parse(page)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert parsed.images == [] and "table" not in parsed.tags
    assert "0 trials read, 0 skipped" in " ".join(parsed.text)
    for make in (plots.reward_distributions, plots.agents_by_class, plots.reward_by_size):
        assert make([]) is None


def test_modelling_only_trials_give_only_the_class_figure():
    trials = [t for t in sample_trials() if t.kind == "modelling"]
    assert plots.reward_distributions(trials) is None and plots.reward_by_size(trials) is None
    assert plots.agents_by_class(trials).startswith(PNG_SIGNATURE)
    assert len(parse(html_page(build(Reading(trials=trials)), trials)).images) == 1


def test_unscored_trials_only_draw_nothing():
    trials = [t for t in sample_trials() if t.kind == "algorithm" and not t.scored]
    assert trials
    assert plots.reward_distributions(trials) is None and plots.agents_by_class(trials) is None
    assert plots.reward_by_size(trials) is None


@pytest.mark.slow
def test_figures_are_deterministic_and_carry_no_version():
    trials = sample_trials()
    for make in (plots.reward_distributions, plots.agents_by_class, plots.reward_by_size):
        first = make(trials)
        assert first == make(list(reversed(trials)))
        assert b"matplotlib" not in first.lower()


@pytest.mark.slow
def test_many_problem_classes_fit_the_width():
    trials = [
        TrialRecord(
            job="j",
            trial=f"t{i}-{p}",
            task=f"p{p}",
            agent=f"agent-{i % 4}",
            model=None,
            kind="algorithm",
            problem=f"problem-{p:02d}",
            size=f"s{i % 3}",
            level=1 + i % 2,
            reward=(i % 7) / 3 - 1,
        )
        for p in range(7)
        for i in range(12)
    ]
    for make in (plots.reward_distributions, plots.agents_by_class, plots.reward_by_size):
        height, width = image_shape(make(trials))[:2]
        assert width <= 1100 and height > 0


def test_comparison_report_renders_its_table():
    a, b = sample_reading(AGENTS[:1]), sample_reading(AGENTS[1:2])
    report = build_comparison(a, b, "jobs/run-a", "jobs/run-b")
    page = html_page(report, [])
    parsed = parse(page)
    assert parsed.tags.count("table") == 1 and parsed.images == []
    text = " ".join(parsed.text)
    assert "jobs/run-a" in text and "jobs/run-b" in text and "claude-code" in text and "codex" in text
    for title in ("paired B - A", "p", "A mean", "B mean"):
        assert title in parsed.cells
    for problem in ("all", "jobshop", "rcpsp", "spec", "retailopt"):
        assert problem in parsed.cells


def _level_means(trials: list[TrialRecord], problem: str, agent: str, by_size: bool = False) -> dict:
    """Mean scored reward per level (and size) of one agent on one class, by hand."""
    groups: dict = {}
    for t in trials:
        if t.kind == "algorithm" and t.scored and t.problem == problem and t.agent_label == agent:
            groups.setdefault((t.level, t.size) if by_size else t.level, []).append(t.reward)
    return {key: sum(values) / len(values) for key, values in groups.items()}


def test_the_class_bars_give_each_level_its_own_bar_series():
    """One labelled bar series per agent and level, each level's own mean, a hatch per level named in the legend."""
    from matplotlib.container import BarContainer

    trials = sample_trials()
    [ax] = plots.agents_by_class_figure(trials).axes
    series = {c.get_label(): c for c in ax.containers if isinstance(c, BarContainer)}
    agents = sorted({t.agent_label for t in trials})
    assert set(series) == {f"{a} {part}" for a in agents for part in ("L1", "L2", "modelling")}
    classes = [label.get_text() for label in ax.get_xticklabels()]
    for agent in agents:
        one, two = series[f"{agent} L1"], series[f"{agent} L2"]
        assert one.patches[0].get_hatch() != two.patches[0].get_hatch()
        for problem in ("jobshop", "rcpsp"):
            means = _level_means(trials, problem, agent)
            at = classes.index(problem)
            for level, bars in ((1, one), (2, two)):
                [bar] = [b for b in bars.patches if abs(b.get_x() + b.get_width() / 2 - at) < 0.5]
                assert bar.get_height() == pytest.approx(means[level])
    legend = [text.get_text() for legend in ax.figure.legends for text in legend.get_texts()]
    assert {"L1", "L2"} <= set(legend)


def test_the_size_lines_tell_the_levels_apart():
    """Each panel: one labelled line per agent and level, the levels in their own line style and marker, not on top
    of each other, each point its level's mean; the legend names the levels."""
    trials = sample_trials()
    fig = plots.reward_by_size_figure(trials)
    agents = sorted({t.agent_label for t in trials})
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}
    assert set(panels) == {"jobshop", "rcpsp"}
    for problem, ax in panels.items():
        lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
        assert set(lines) == {f"{a} L{level}" for a in agents for level in (1, 2)}
        sizes = [label.get_text() for label in ax.get_xticklabels()]
        for agent in agents:
            one, two = lines[f"{agent} L1"], lines[f"{agent} L2"]
            assert one.get_linestyle() != two.get_linestyle() and one.get_marker() != two.get_marker()
            assert not set(one.get_xdata()) & set(two.get_xdata())
            means = _level_means(trials, problem, agent, by_size=True)
            for level, line in ((1, one), (2, two)):
                expected = [means[(level, size)] for size in sizes if (level, size) in means]
                assert list(line.get_ydata()) == pytest.approx(expected)
    legend = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
    assert {"L1", "L2"} <= set(legend) and set(agents) <= set(legend)
