"""orharbor report's best-known figures: gap_best and quality for every class, on a job folder made by hand.

Level 1 reads details.json's best known value and quality (or task metadata and the objective, for
details written before them), level 2 each instance's; a quality-scale trial's reward is its quality,
read back on orharbor's scale through details.json. Every output format carries both columns, and a
task without best known values shows "-".
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from click.testing import CliRunner

from orharbor import report
from orharbor.cli import main
from orharbor.report.html import html_page
from orharbor.report.render import render, tables

from jobfolders import algorithm_details, write_trial


def _level1(objective, reward, best_known=40, quality=None, problem="wtardiness", size="n40"):
    details = algorithm_details(problem, size, 1, reward, objective, reference=45, naive=90, best_known=best_known)
    if quality is not None:
        details.update(best_known=best_known, quality=quality)
    return details


def _row(objective, best_known, quality, reward):
    return {
        "index": None,
        "objective": objective,
        "reward": reward,
        "feasible": int(objective is not None),
        "reference": best_known + 1,
        "naive": 3 * best_known,
        "bound": None,
        "timed_out": False,
        "best_known": best_known,
        "quality": quality,
    }


def _level2(rows, reward, quality):
    for index, row in enumerate(rows):
        row["index"] = index
    details = algorithm_details("jobshop", "4x4", 2, reward, None, 0, 0, instances=rows)
    details["metadata"]["best_known"] = [row["best_known"] for row in rows]
    details["quality"] = quality
    return details


def _quality_scale(written, orharbor, objective):
    details = _level1(objective, written, quality=written)
    details["metadata"]["reward_scale"] = "quality"
    details.update(reward_scale="quality", orharbor_reward=orharbor)
    return details


@pytest.fixture
def best_known_job(tmp_path):
    """a: wtardiness level 1 (objectives 50, none, 40 against a best known 40) and job shop level 2 (one trial
    scored, one whose verifier failed); b: the same wtardiness task exported on the quality scale (0.8, a failure,
    and two trials report cannot read); c: rcpsp level 1 with no best known value."""
    job = tmp_path / "jobs" / "job-q"
    for name, objective, reward, quality in [("q1", 50, 0.0, 0.8), ("q2", None, -1.0, 0.0), ("q3", 40, 1.1, 1.0)]:
        write_trial(
            job,
            name,
            f"wtardiness-n40-l1-s{name}",
            agent="a",
            reward=reward,
            details=_level1(objective, reward, quality=quality),
        )
    rows = [_row(12, 10, 10 / 12, 0.5), _row(None, 8, 0.0, -1.0), _row(9, 9, 1.0, 1.0)]
    write_trial(
        job,
        "u1",
        "jobshop-4x4-l2-s0",
        agent="a",
        reward=0.5 / 3,
        details=_level2(rows, 0.5 / 3, (10 / 12 + 0.0 + 1.0) / 3),
    )
    failed = {
        "kind": "algorithm",
        "error": "verifier error",
        "reward": -1.0,
        "feasible": 0,
        "metadata": {"problem": "jobshop", "size": "4x4", "level": 2, "best_known": [10, 8, 9]},
    }
    write_trial(job, "u2", "jobshop-4x4-l2-s1", agent="a", reward=-1.0, details=failed)
    write_trial(job, "v1", "wtardiness-n40-l1-sq1", agent="b", reward=0.8, details=_quality_scale(0.8, 0.6, 50))
    write_trial(job, "v2", "wtardiness-n40-l1-sq2", agent="b", reward=0.0, details=_quality_scale(0.0, -1.0, None))
    untrusted = _quality_scale(0.7, 0.4, 60)  # Harbor recorded 0.5: details.json is not this trial's
    write_trial(job, "v3", "wtardiness-n40-l1-sq3", agent="b", reward=0.5, details=untrusted)
    write_trial(job, "v4", "wtardiness-n40-l1-sq4", agent="b", reward=1.5, details=_quality_scale(1.5, 2.0, 20))
    write_trial(
        job,
        "w1",
        "rcpsp-j30-l1-s0",
        agent="c",
        reward=0.5,
        details=_level1(60, 0.5, best_known=None, problem="rcpsp", size="j30"),
    )
    return job


@pytest.fixture
def built(best_known_job) -> dict:
    return report.build(report.read_jobs([best_known_job]))


def test_gap_best_and_quality_by_hand_at_both_levels(built):
    rows = {(r["agent"], r["problem"], r["level"]): r for r in built["algorithm"]}
    level1 = rows[("a", "wtardiness", 1)]
    assert level1["quality"] == pytest.approx((0.8 + 0.0 + 1.0) / 3, abs=1e-12)
    assert level1["gap_best"] == pytest.approx(((50 - 40) / 40 + 0.0) / 2, abs=1e-12)  # feasible answers only
    level2 = rows[("a", "jobshop", 2)]
    # u1's mean over its instances (the failed one counts 0); u2's verifier failed before scoring: 0
    assert level2["quality"] == pytest.approx(((10 / 12 + 0.0 + 1.0) / 3 + 0.0) / 2, abs=1e-12)
    assert level2["gap_best"] == pytest.approx(((12 - 10) / 10 + 0.0) / 2, abs=1e-12)
    none = rows[("c", "rcpsp", 1)]
    assert (none["gap_best"], none["quality"]) == (None, None)


def test_a_quality_scale_trial_is_its_quality_and_reads_back_on_orharbors_scale(best_known_job, built):
    """b's two readable trials: quality 0.8 (orharbor 0.6 from details.json) and a failure (0.0, so -1.0); a
    quality reward whose details.json is another's, and one above 1, are skipped with their reason."""
    b = next(r for r in built["algorithm"] if r["agent"] == "b")
    assert (b["trials"], b["scored"]) == (2, 2)
    assert b["mean_reward"] == pytest.approx((0.6 - 1.0) / 2, abs=1e-12)
    assert b["quality"] == pytest.approx(0.4, abs=1e-12) and b["feasible_rate"] == pytest.approx(0.5)
    reasons = {s["path"].rsplit("/", 1)[-1]: s["reason"] for s in built["skipped"]}
    assert set(reasons) == {"v3", "v4"}
    assert "reads back on orharbor's scale only with its verifier's details.json" in reasons["v3"]
    assert "reward 1.5 is outside the quality scale's 0..1" in reasons["v4"]


def test_a_level1_trial_without_the_verifiers_quality_gets_it_from_its_objective(tmp_path):
    """details.json written before the quality figure: best known from the task's metadata, quality computed."""
    job = tmp_path / "jobs" / "old"
    write_trial(job, "t1", "jobshop-ta01-l1", reward=0.5, details=_level1(50, 0.5))
    write_trial(job, "t2", "jobshop-ta01-l1", reward=-1.0, details=_level1(None, -1.0))
    [row] = report.build(report.read_jobs([job]))["algorithm"]
    assert row["quality"] == pytest.approx((40 / 50 + 0.0) / 2, abs=1e-12)


def _cells(built: dict) -> dict[str, dict[str, str]]:
    [(_, cells)] = tables(built)
    header = cells[0]
    return {row[0]: dict(zip(header, row)) for row in cells[1:] if row[3] in ("n40", "j30")}


def test_every_output_format_carries_both_columns_and_a_task_without_best_known_values_shows_a_dash(
    best_known_job, built
):
    cells = _cells(built)
    assert cells["a"]["quality"] == format(1.8 / 3, ".3f") and cells["a"]["gap best"] == format(0.125, "+.2%")
    assert cells["c"]["quality"] == "-" and cells["c"]["gap best"] == "-"
    table = render(built, "table")
    assert "gap best" in table and "quality" in table.splitlines()[1]
    markdown = render(built, "markdown")
    assert "| gap best | quality |" in markdown and f"| {format(1.8 / 3, '.3f')} |" in markdown
    rows = list(csv.DictReader(io.StringIO(render(built, "csv"))))
    c = next(r for r in rows if r["agent"] == "c")
    a = next(r for r in rows if r["agent"] == "a" and r["level"] == "1")
    assert (c["gap_best"], c["quality"]) == ("", "") and float(a["quality"]) == pytest.approx(1.8 / 3)
    data = json.loads(render(built, "json"))
    assert {(r["agent"], r["level"]): r["quality"] for r in data["algorithm"]} == {
        ("a", 1): pytest.approx(1.8 / 3),
        ("a", 2): pytest.approx(((10 / 12 + 1.0) / 3) / 2),
        ("b", 1): 0.4,
        ("c", 1): None,
    }
    page = html_page(built, report.read_jobs([best_known_job]).trials)
    assert re.search(r"<th[^>]*>gap best</th><th[^>]*>quality</th>", page)
    assert re.search(rf"<td[^>]*>{re.escape(format(1.8 / 3, '.3f'))}</td>", page)


def test_the_cli_reports_gap_best_and_quality(best_known_job):
    done = CliRunner().invoke(main, ["report", str(best_known_job), "--format", "json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)["algorithm"]
    assert all("gap_best" in r and "quality" in r and "gap_bks" not in r for r in rows)
