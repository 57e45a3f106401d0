"""orharbor report: tokens, cost, reward per dollar and the cost of a pass, from Harbor's trial results."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from harbor.models.job.result import JobStats
from harbor.models.trial.result import TrialResult

from orharbor import report
from orharbor.cli import main
from orharbor.report.html import html_page
from orharbor.report.render import render
from orharbor.report.tables import USAGE_KEYS

from jobfolders import algorithm_details, write_trial


def level1(reward, objective=100):
    return algorithm_details("jobshop", "4x4", 1, reward, objective, reference=100, naive=200)


def usage(n_input, n_cache, n_output, cost):
    return {"n_input_tokens": n_input, "n_cache_tokens": n_cache, "n_output_tokens": n_output, "cost_usd": cost}


@pytest.fixture
def costed_job(tmp_path):
    """Job shop level 1 (six trials, one of them an infrastructure failure) and two modelling trials, with costs."""
    job = tmp_path / "jobs" / "job-cost"
    write_trial(job, "a1", "jobshop-4x4-l1-s1", reward=1.1, details=level1(1.1, 90), usage=usage(1000, 400, 200, 0.5))
    write_trial(job, "a2", "jobshop-4x4-l1-s2", reward=0.5, details=level1(0.5, 150), usage=usage(3000, 0, 600, 1.5))
    # a multi-step trial records one AgentContext per step and none of its own
    write_trial(
        job,
        "a3",
        "jobshop-4x4-l1-s3",
        reward=1.0,
        details=level1(1.0),
        steps=[usage(500, 100, 50, 0.25), usage(500, 100, 50, 0.25)],
    )
    write_trial(job, "a4", "jobshop-4x4-l1-s4", reward=-1.0, details=level1(-1.0, None))  # reported nothing
    # Harbor holds no reward (the environment never started): its cost is the infrastructure's, kept apart
    write_trial(
        job,
        "a5",
        "jobshop-4x4-l1-s5",
        exception="EnvironmentStartTimeoutError",
        details=level1(-1.0, None),
        usage=usage(800, 0, 0, 2.0),
    )
    # what a hostile agent's own log could make Harbor record: taken as not reported
    write_trial(job, "a6", "jobshop-4x4-l1-s6", reward=0.0, details=level1(0.0, 200), usage=usage(-3, None, 10, -5.0))
    spec = {"kind": "modelling", "source": "spec", "spec": "transportation_lp", "difficulty": "medium"}
    for name, correct, cost in (("m1", 1, 0.2), ("m2", 0, 0.6)):
        write_trial(
            job,
            name,
            "transportation_lp",
            reward=float(correct),
            usage=usage(100, 0, 10, cost),
            details={
                "kind": "modelling",
                "executed": 1,
                "correct": correct,
                "reward": float(correct),
                "metadata": spec,
            },
        )
    return job


def test_tokens_and_cost_are_harbors_per_trial_totals(costed_job):
    trials = {t.trial: t for t in report.read_jobs([costed_job]).trials}
    assert (
        trials["a1"].input_tokens,
        trials["a1"].cache_tokens,
        trials["a1"].output_tokens,
        trials["a1"].cost_usd,
    ) == (1000, 400, 200, 0.5)
    assert (trials["a3"].input_tokens, trials["a3"].cache_tokens, trials["a3"].cost_usd) == (1000, 200, 0.5)
    assert trials["a4"].cost_usd is None and trials["a4"].input_tokens is None
    assert (trials["a6"].input_tokens, trials["a6"].output_tokens, trials["a6"].cost_usd) == (None, 10, None)
    # the same totals as Harbor's own job statistics, over the trials an honest agent reported
    stats = JobStats()
    for name in ("a1", "a2", "a3", "a4", "a5"):
        stats.increment(TrialResult.model_validate_json((costed_job / name / "result.json").read_text()))
    ours = [trials[name] for name in ("a1", "a2", "a3", "a4", "a5")]
    assert sum(t.cost_usd or 0.0 for t in ours) == pytest.approx(stats.cost_usd)
    assert sum(t.input_tokens or 0 for t in ours) == stats.n_input_tokens
    assert sum(t.output_tokens or 0 for t in ours) == stats.n_output_tokens


def test_every_cost_figure_matches_the_hand_computation(costed_job):
    built = report.build(report.read_jobs([costed_job]))
    (row,) = built["algorithm"]
    # scored and costed: a1, a2, a3 (a4 reported nothing, a6 a negative cost, a5 is not scored)
    per_trial = (0.5 + 1.5 + 0.5) / 3
    expected = {
        "input_tokens": (1000 + 3000 + 1000) / 3,
        "cache_tokens": (400 + 0 + 200) / 3,
        "output_tokens": (200 + 600 + 100 + 10) / 4,
        "costed": 3,
        "cost_usd": 2.5,
        "cost_per_trial": per_trial,
        "reward_per_dollar": (1.1 + 0.5 + 1.0) / 3 / per_trial,
        "cost_of_pass": per_trial / (2 / 3),
        "unscored_cost_usd": 2.0,
    }
    assert {k: row[k] for k in USAGE_KEYS} == pytest.approx(expected)
    (spec,) = built["modelling"]["by_difficulty"]
    assert spec["cost_per_trial"] == pytest.approx(0.4) and spec["reward_per_dollar"] == pytest.approx(1.25)
    assert spec["cost_of_pass"] == pytest.approx(0.8) and spec["unscored_cost_usd"] is None


def test_a_group_that_never_passed_has_no_cost_of_pass_and_a_free_one_no_reward_per_dollar(tmp_path):
    job = tmp_path / "job"
    write_trial(job, "a1", "jobshop-4x4-l1-s1", reward=0.5, details=level1(0.5, 150), usage=usage(10, 0, 1, 0.3))
    write_trial(
        job, "b1", "jobshop-4x4-l1-s1", agent="free", reward=1.0, details=level1(1.0), usage=usage(10, 0, 1, 0.0)
    )
    rows = {row["agent"]: row for row in report.build(report.read_jobs([job]))["algorithm"]}
    assert rows["codex"]["cost_of_pass"] is None and rows["codex"]["reward_per_dollar"] == pytest.approx(0.5 / 0.3)
    assert rows["free"]["reward_per_dollar"] is None and rows["free"]["cost_of_pass"] == 0.0
    json.loads(render(report.build(report.read_jobs([job])), "json"))  # no infinity, no NaN


def test_the_tables_show_cost_columns_only_where_an_agent_reported_them(costed_job, tmp_path):
    runner = CliRunner()
    markdown = runner.invoke(main, ["report", str(costed_job), "--format", "markdown"]).stdout
    header = next(line for line in markdown.splitlines() if line.startswith("| agent | model | problem"))
    assert "$ / trial" in header and "reward / $" in header and "$ / pass" in header and "$ unscored" in header
    assert "| 0.8333 | +1.040 | 1.2500 | 2.0000 |" in markdown
    data = json.loads(runner.invoke(main, ["report", str(costed_job), "--format", "json"]).stdout)
    assert data["algorithm"][0]["cost_usd"] == pytest.approx(2.5)
    reading = report.read_jobs([costed_job])
    page = html_page(report.build(reading), reading.trials)
    assert "$ / pass" in page and "1.2500" in page
    plain = tmp_path / "plain"
    write_trial(plain, "a1", "jobshop-4x4-l1-s1", reward=0.5, details=level1(0.5, 150))
    text = runner.invoke(main, ["report", str(plain)]).stdout
    assert "tokens in" not in text and "$ / trial" not in text
