"""orharbor report: job folders with a known reward mix, checked column by column against hand computations."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from itertools import product
from statistics import fmean, pstdev

import pytest
from click.testing import CliRunner
from harbor.models.trial.result import TrialResult
from harbor.utils.pass_at_k import compute_pass_at_k_by_evals
from scipy.stats import wilcoxon

from orharbor import report
from orharbor.cli import main
from orharbor.report.render import render
from orharbor.report.stats import bootstrap_ci, pass_at_k
from orharbor.report.tables import ALGORITHM_KEYS, COMPARE_KEYS, MODELLING_KEYS

from jobfolders import algorithm_details, write_trial


def hand_interval(values: list[float]) -> tuple[float, float]:
    """The percentile bootstrap by brute force: every ordered resample, the 2.5% and 97.5% order statistics."""
    n = len(values)
    means = sorted(math.fsum(pick) / n for pick in product(values, repeat=n))
    total = len(means)
    return means[math.ceil(total * 0.025) - 1], means[math.ceil(total * 0.975) - 1]


def same(actual, expected) -> bool:
    """Equal, with floats compared to 1e-12 and dicts key by key (pytest.approx cannot nest)."""
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(same(actual[k], expected[k]) for k in expected)
        )
    if isinstance(expected, float) and not isinstance(actual, bool):
        return isinstance(actual, (int, float)) and actual == pytest.approx(expected, abs=1e-12)
    return actual == expected and type(actual) is type(expected)


#: The cost figures of a group whose agents reported no tokens or cost (tests/test_report_cost.py has them).
NO_USAGE = {
    "input_tokens": None,
    "cache_tokens": None,
    "output_tokens": None,
    "costed": 0,
    "cost_usd": None,
    "cost_per_trial": None,
    "reward_per_dollar": None,
    "cost_of_pass": None,
    "unscored_cost_usd": None,
}


def level1(problem="jobshop", size="4x4", objective=None, reward=-1.0, best_known=None):
    return algorithm_details(
        problem, size, 1, reward, objective, reference=100, naive=200, bound=80, best_known=best_known
    )


def instance(objective, reward, timed_out=False):
    return {
        "objective": objective,
        "reward": reward,
        "feasible": int(objective is not None),
        "reference": 10,
        "naive": 20,
        "bound": 9,
        "timed_out": timed_out,
    }


@pytest.fixture
def mixed_job(tmp_path):
    """One job: jobshop level 1 (codex, 7 trials), rcpsp level 2 (codex, 2), jobshop (claude-code, 1), modelling."""
    job = tmp_path / "jobs" / "job-a"
    for name, objective, reward, exception in [
        ("t1", 90, 1.1, None),
        ("t2", 100, 1.0, None),
        ("t3", 150, 0.5, None),
        ("t4", None, -1.0, None),
        ("t5", 200, 0.0, "AgentTimeoutError"),
    ]:
        write_trial(
            job,
            name,
            f"jobshop-4x4-l1-s{name[1]}",
            reward=reward,
            exception=exception,
            details=level1(objective=objective, reward=reward, best_known=95),
        )
    write_trial(job, "t6", "jobshop-4x4-l1-s6", exception="SandboxBuildFailedError", details=level1())
    # a reward Harbor holds invalid (its error policy for API errors): not scored, but counted and listed
    write_trial(
        job,
        "t7",
        "jobshop-4x4-l1-s7",
        reward=1.0,
        exception="ApiRateLimitError",
        details=level1(objective=100, reward=1.0),
    )
    first = [instance(10, 1.0), instance(15, 0.5), instance(None, -1.0, timed_out=True)]
    write_trial(
        job,
        "u1",
        "rcpsp-j10-l2-s0",
        reward=0.5 / 3,
        details=algorithm_details("rcpsp", "j10", 2, 0.5 / 3, None, 0, 0, instances=first),
    )
    write_trial(
        job,
        "u2",
        "rcpsp-j10-l2-s1",
        reward=1.0,
        details=algorithm_details("rcpsp", "j10", 2, 1.0, None, 0, 0, instances=[instance(10, 1.0)] * 3),
    )
    write_trial(
        job,
        "c1",
        "jobshop-4x4-l1-s1",
        agent="claude-code",
        model=None,
        reward=1.0,
        details=level1(objective=100, reward=1.0),
    )
    spec = {"kind": "modelling", "source": "spec", "spec": "transportation_lp", "difficulty": "medium"}
    for name, (executed, correct) in {"m1": (1, 1), "m2": (1, 0), "m3": (0, 0)}.items():
        write_trial(
            job,
            name,
            "transportation_lp",
            reward=float(correct),
            details={
                "kind": "modelling",
                "executed": executed,
                "correct": correct,
                "reward": float(correct),
                "metadata": spec,
            },
        )
    retail = {"kind": "modelling", "source": "retailopt", "family": "F1", "scenario_id": "retail_f1_base_v0"}
    write_trial(
        job,
        "r1",
        "retailopt-retail-f1-base-v0",
        reward=1.0,
        details={"kind": "modelling", "executed": 1, "correct": 1, "reward": 1.0, "metadata": retail},
    )
    return job


def test_the_bootstrap_interval_is_the_exact_percentile_interval_for_small_groups():
    for values in ([1.1, 1.0, 0.5, -1.0, 0.0], [0.25, 1.0], [1.0, 1.0, 1.0], [-1.0, 0.0, 0.0, 1.0, 1.5, 0.2]):
        assert bootstrap_ci(values) == pytest.approx(hand_interval(values), abs=1e-12)
    assert bootstrap_ci([]) is None


def test_large_groups_get_a_seeded_interval_around_the_mean():
    values = [(-1.0) ** i * (i % 7) / 7 for i in range(200)]
    low, high = bootstrap_ci(values)
    assert (low, high) == bootstrap_ci(values)  # same input, same interval
    half_width = 1.96 * pstdev(values) / math.sqrt(len(values))  # the normal approximation, for scale
    assert low < fmean(values) < high
    assert high - low == pytest.approx(2 * half_width, rel=0.1)


def test_every_algorithm_column_matches_the_hand_computation(mixed_job):
    data = report.build(report.read_jobs([mixed_job.parent]))
    assert data["trials"] == 14 and data["skipped_trials"] == 0
    rows = {(r["agent"], r["problem"], r["level"]): r for r in data["algorithm"]}
    assert list(rows) == [("claude-code", "jobshop", 1), ("codex", "jobshop", 1), ("codex", "rcpsp", 2)]
    for row in rows.values():
        assert tuple(row) == ALGORITHM_KEYS

    codex = rows[("codex", "jobshop", 1)]
    scored = [1.1, 1.0, 0.5, -1.0, 0.0]
    low, high = hand_interval(scored)
    assert same(
        codex,
        {
            "agent": "codex",
            "model": "gpt-x",
            "kind": "algorithm",
            "problem": "jobshop",
            "size": "4x4",
            "level": 1,
            "trials": 7,
            "scored": 5,
            "mean_reward": 0.32,
            "ci_low": low,
            "ci_high": high,
            "feasible_rate": 4 / 5,
            "beat_reference_rate": 1 / 5,
            "at_or_below_naive_rate": 2 / 5,
            "errors": {"AgentTimeoutError": 1, "ApiRateLimitError": 1, "SandboxBuildFailedError": 1},
            "timeouts": 1,
            "solver_timeouts": 0,
            "gap_reference": (-0.1 + 0.0 + 0.5 + 1.0) / 4,
            "gap_bound": (10 / 90 + 20 / 100 + 70 / 150 + 120 / 200) / 4,
            "gap_best": (-5 / 95 + 5 / 95 + 55 / 95 + 105 / 95) / 4,
            # best known 95: objective 90 caps at 1, the failure scores 0 (details without quality: computed from them)
            "quality": (1.0 + 95 / 100 + 95 / 150 + 0.0 + 95 / 200) / 5,
            "instance_std": None,
            "instance_min": None,
            "instance_max": None,
            "best_of_k": {},
            "cpu_factor": None,
            **NO_USAGE,
        },
    )  # one scored trial per task: no best of k

    level2 = rows[("codex", "rcpsp", 2)]
    per_instance = [1.0, 0.5, -1.0, 1.0, 1.0, 1.0]
    assert same(
        level2,
        {
            "agent": "codex",
            "model": "gpt-x",
            "kind": "algorithm",
            "problem": "rcpsp",
            "size": "j10",
            "level": 2,
            "trials": 2,
            "scored": 2,
            "mean_reward": (0.5 / 3 + 1.0) / 2,
            "ci_low": 0.5 / 3,
            "ci_high": 1.0,
            "feasible_rate": 0.5,
            "beat_reference_rate": 0.0,
            "at_or_below_naive_rate": 0.0,
            "errors": {},
            "timeouts": 0,
            "solver_timeouts": 1,
            "gap_reference": ((0.0 + 0.5) / 2 + 0.0) / 2,
            "gap_bound": ((1 / 10 + 6 / 15) / 2 + 1 / 10) / 2,
            "gap_best": None,
            "quality": None,
            "instance_std": pstdev(per_instance),
            "instance_min": -1.0,
            "instance_max": 1.0,
            "best_of_k": {},
            "cpu_factor": None,
            **NO_USAGE,
        },
    )

    claude = rows[("claude-code", "jobshop", 1)]
    assert (claude["model"], claude["trials"], claude["mean_reward"], claude["ci_low"], claude["ci_high"]) == (
        None,
        1,
        1.0,
        1.0,
        1.0,
    )


def test_the_gap_to_the_best_known_value_and_quality_show_only_where_a_task_has_one(mixed_job, tmp_path):
    table = render(report.build(report.read_jobs([mixed_job])), "table")
    assert "gap best" in table and format(160 / 380, "+.2%") in table
    assert "quality" in table and format((1.0 + 0.95 + 95 / 150 + 95 / 200) / 5, ".3f") in table
    other = tmp_path / "jobs" / "job-b"
    write_trial(other, "t1", "jobshop-4x4-l1-s1", reward=0.5, details=level1(objective=150, reward=0.5))
    data = report.build(report.read_jobs([other]))
    assert data["algorithm"][0]["gap_best"] is None and data["algorithm"][0]["quality"] is None
    header = render(data, "table").splitlines()[1]
    assert "mean reward" in header and "gap best" not in header and "quality" not in header


def test_modelling_rates_and_pass_at_k_match_the_hand_computation_and_harbors_own(mixed_job):
    data = report.build(report.read_jobs([mixed_job]))
    by_difficulty = {(r["source"], r["difficulty"]): r for r in data["modelling"]["by_difficulty"]}
    by_family = {(r["source"], r["family"]): r for r in data["modelling"]["by_family"]}
    assert set(by_difficulty) == {("retailopt", "-"), ("spec", "medium")}
    assert set(by_family) == {("retailopt", "F1"), ("spec", "spec")}
    spec = by_difficulty[("spec", "medium")]
    assert tuple(spec) == MODELLING_KEYS
    low, high = hand_interval([1.0, 0.0, 0.0])
    assert same(
        spec,
        {
            "agent": "codex",
            "model": "gpt-x",
            "kind": "modelling",
            "source": "spec",
            "difficulty": "medium",
            "family": None,
            "trials": 3,
            "scored": 3,
            "execution_rate": 2 / 3,
            "accuracy": 1 / 3,
            "silent_failure_rate": 1 / 3,
            "mean_reward": 1 / 3,
            "ci_low": low,
            "ci_high": high,
            "pass_at_k": {1: 1 / 3, 2: 2 / 3},
            "errors": {},
            **NO_USAGE,
        },
    )
    assert by_family[("retailopt", "F1")]["pass_at_k"] == {}  # one trial: no pass@k
    trials = [TrialResult.model_validate_json((mixed_job / m / "result.json").read_text()) for m in ("m1", "m2", "m3")]
    [harbors] = compute_pass_at_k_by_evals(trials).values()
    assert harbors == {2: pytest.approx(spec["pass_at_k"][2])}


def test_pass_at_k_follows_the_unbiased_estimator():
    assert pass_at_k({"a": [True, False, False, False], "b": [False] * 4}) == pytest.approx(
        {1: (1 / 4 + 0) / 2, 2: (1 - math.comb(3, 2) / math.comb(4, 2)) / 2, 4: 0.5}
    )


def test_the_report_needs_no_task_folders_but_reads_them_when_details_are_missing(mixed_job, tmp_path):
    task = tmp_path / "moved" / "wt"
    task.mkdir(parents=True)
    (task / "task.toml").write_text(
        '[task]\nname = "orharbor/wtardiness-n8-l1-s0"\n[metadata]\nproblem = "wtardiness"\nsize = "n8"\nlevel = 1\n'
    )
    write_trial(mixed_job, "w1", "wtardiness-n8-l1-s0", exception="SandboxBuildFailedError")
    reading = report.read_jobs([mixed_job])
    assert [s.path.name for s in reading.skipped] == ["w1"] and "pass --tasks" in reading.skipped[0].reason
    reading = report.read_jobs([mixed_job], [tmp_path / "moved"])
    [record] = [t for t in reading.trials if t.trial == "w1"]
    assert (record.problem, record.size, record.level, record.reward) == ("wtardiness", "n8", 1, None)


def test_bad_input_is_skipped_one_line_each_and_counted(mixed_job, tmp_path):
    job = mixed_job
    # the job's own result.json: not a trial, but it counts the trials, 2 of them deleted
    (job / "result.json").write_text('{"id": "job-level", "n_total_trials": 24}')
    half = job / "half-written"
    half.mkdir()
    (half / "config.json").write_text('{"trial_name": "half-written"}')
    corrupt = write_trial(job, "corrupt", "jobshop-4x4-l1-s9", reward=1.0, details=level1(objective=100, reward=1.0))
    (corrupt / "result.json").write_text('{"task_name": "orharbor/jobsh')
    deep = write_trial(job, "deep", "jobshop-4x4-l1-s8", reward=1.0)
    (deep / "result.json").write_text("[" * 100_000 + "]" * 100_000)
    nan = write_trial(job, "nan", "jobshop-4x4-l1-s10", reward=1.0)
    (nan / "result.json").write_text((nan / "result.json").read_text().replace('"reward": 1.0', '"reward": NaN'))
    linked = write_trial(job, "linked", "jobshop-4x4-l1-s11", reward=1.0)
    (linked / "result.json").unlink()
    (linked / "result.json").symlink_to(job / "t1" / "result.json")
    fifo = write_trial(job, "fifo", "jobshop-4x4-l1-s12", reward=1.0)
    (fifo / "result.json").unlink()
    os.mkfifo(fifo / "result.json")
    foreign = tmp_path / "hello-world"
    foreign.mkdir()
    (foreign / "task.toml").write_text('[task]\nname = "harbor/hello-world"\n[metadata]\ndifficulty = "easy"\n')
    write_trial(job, "foreign", "hello-world", reward=1.0, task_dir=foreign)
    not_harbor = job / "not-harbor"
    not_harbor.mkdir()
    (not_harbor / "result.json").write_text('{"trial_name": "x", "task_name": 3}')
    (job / "stray.txt").write_text("not a trial")

    result = CliRunner().invoke(main, ["report", str(job.parent), str(tmp_path / "no-such-jobs"), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["trials"] == 14
    reasons = {}
    for skipped in data["skipped"]:  # by trial folder: the folder itself, or the folder of its result.json
        parts = skipped["path"].split(os.sep)
        reasons[parts[-2] if parts[-1] == "result.json" else parts[-1]] = skipped["reason"]
    assert "did not finish" in reasons["half-written"]
    assert "not valid JSON" in reasons["corrupt"] and "not valid JSON" in reasons["deep"]
    assert "not valid JSON" in reasons["nan"] and "NaN" in reasons["nan"]
    assert "not a regular file" in reasons["linked"] and "not a regular file" in reasons["fifo"]
    assert "not an orharbor task" in reasons["foreign"]
    assert "not a Harbor trial result" in reasons["not-harbor"]
    assert reasons["no-such-jobs"] == "no such folder"
    assert reasons["job-a"] == "the job counts 24 trials but 22 trial folders are there; 2 missing"
    assert data["skipped_trials"] == 10  # 8 skipped trial folders, 2 missing ones; the missing jobs folder is no trial
    lines = result.stderr.splitlines()
    assert sum(line.startswith("skipped ") for line in lines) == 10
    assert lines[-1] == "14 trials read, 10 skipped" and "Traceback" not in result.output


def test_a_folder_with_no_orharbor_trials_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 1 and "no trials of orharbor tasks" in result.output
    result = CliRunner().invoke(main, ["report"])
    assert result.exit_code == 2


def test_formats_hold_the_documented_keys(mixed_job):
    runner = CliRunner()
    data = json.loads(runner.invoke(main, ["report", str(mixed_job), "--format", "json"]).stdout)
    assert {"jobs", "trials", "skipped_trials", "skipped", "algorithm", "modelling"} <= set(data)
    assert set(ALGORITHM_KEYS) >= {
        "agent",
        "model",
        "kind",
        "problem",
        "size",
        "level",
        "trials",
        "mean_reward",
        "ci_low",
        "ci_high",
        "feasible_rate",
        "beat_reference_rate",
        "errors",
    }
    table = list(csv.DictReader(io.StringIO(runner.invoke(main, ["report", str(mixed_job), "--format", "csv"]).stdout)))
    assert [r["table"] for r in table].count("algorithm") == 3
    codex = next(r for r in table if r["table"] == "algorithm" and r["agent"] == "codex" and r["problem"] == "jobshop")
    assert float(codex["mean_reward"]) == pytest.approx(0.32)
    assert codex["errors"] == "AgentTimeoutError:1;ApiRateLimitError:1;SandboxBuildFailedError:1"
    markdown = runner.invoke(main, ["report", str(mixed_job), "--format", "markdown"]).stdout
    assert "### Algorithm tasks" in markdown and "| codex | gpt-x | jobshop | 4x4 | 1 | 7 | 5 | +0.320 |" in markdown
    text = runner.invoke(main, ["report", str(mixed_job), "--kind", "algorithm"]).stdout
    assert "Modelling" not in text and "rcpsp" in text


def test_compare_gives_the_paired_difference_and_wilcoxon_p_value(tmp_path):
    a, b = tmp_path / "a" / "job", tmp_path / "b" / "job"
    rewards_a = {"s0": 0.2, "s1": 0.5, "s2": 0.4, "s3": 0.9, "s4": -1.0, "s5": 0.3}
    rewards_b = {"s0": 0.6, "s1": 0.5, "s2": 1.1, "s3": 1.0, "s4": 0.2, "s6": 1.0}
    for job, rewards, agent in ((a, rewards_a, "codex"), (b, rewards_b, "claude-code")):
        for seed, value in rewards.items():
            write_trial(
                job,
                f"jobshop-4x4-l1-{seed}",
                f"jobshop-4x4-l1-{seed}",
                agent=agent,
                reward=value,
                details=level1(objective=200 - 100 * value, reward=value),
            )
    result = CliRunner().invoke(main, ["report", str(a), str(b), "--compare", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["a_agents"] == ["codex (gpt-x)"] and data["b_agents"] == ["claude-code (gpt-x)"]
    everything, jobshop = data["compare"]
    assert tuple(jobshop) == COMPARE_KEYS and jobshop["problem"] == "jobshop" and everything["problem"] == "all"
    diffs = [rewards_b[s] - rewards_a[s] for s in ("s0", "s1", "s2", "s3", "s4")]
    low, high = hand_interval(diffs)
    assert same(
        jobshop,
        {
            "kind": "algorithm",
            "problem": "jobshop",
            "size": "4x4",
            "level": 1,
            "family": None,
            "a_trials": 6,
            "b_trials": 6,
            "a_mean": fmean(rewards_a.values()),
            "b_mean": fmean(rewards_b.values()),
            "difference": fmean(rewards_b.values()) - fmean(rewards_a.values()),
            "shared_tasks": 5,
            "paired_difference": fmean(diffs),
            "ci_low": low,
            "ci_high": high,
            "p_value": wilcoxon(diffs).pvalue,
        },
    )
    identical = json.loads(CliRunner().invoke(main, ["report", str(a), str(a), "--compare", "--format", "json"]).stdout)
    assert identical["compare"][1]["paired_difference"] == 0.0 and identical["compare"][1]["p_value"] == 1.0
    assert CliRunner().invoke(main, ["report", str(a), "--compare"]).exit_code == 2
    text = CliRunner().invoke(main, ["report", str(a), str(b), "--compare"]).stdout
    assert "B (" in text and "paired B - A" in text


def test_html_is_refused_over_an_existing_file_without_force(mixed_job, tmp_path):
    page = tmp_path / "report.html"
    page.write_text("keep me")
    result = CliRunner().invoke(main, ["report", str(mixed_job), "--html", str(page)])
    assert result.exit_code == 1 and page.read_text() == "keep me"
    result = CliRunner().invoke(main, ["report", str(mixed_job), "--html", str(page), "--force"])
    assert result.exit_code == 0, result.output
    assert page.read_text().startswith("<!DOCTYPE html>") and not list(tmp_path.glob(".*report.html*"))


def test_metrics_is_the_modelling_part_of_report(mixed_job):
    result = CliRunner().invoke(main, ["metrics", str(mixed_job)])
    assert result.exit_code == 0, result.output
    assert "Modelling tasks by family" in result.stdout and "Algorithm" not in result.stdout
    report_text = CliRunner().invoke(main, ["report", str(mixed_job), "--kind", "modelling"]).stdout
    assert result.stdout == report_text


def test_render_never_prints_nan():
    data = report.build(report.Reading())
    assert json.loads(render(data, "json"))["algorithm"] == []


def test_rewards_beyond_what_the_verifier_can_give_are_skipped_and_never_crash_the_totals(tmp_path):
    """A finite reward of 1e308 (or -5, or 2 in a 0/1 modelling task) is skipped with one line; sums never overflow."""
    job = tmp_path / "jobs" / "job"
    write_trial(job, "fine", "jobshop-4x4-l1-s0", reward=0.5, details=level1(objective=120, reward=0.5))
    for name, value in (("huge", 1e308), ("huger", 1e308), ("below", -5.0)):
        write_trial(job, name, f"jobshop-4x4-l1-s-{name}", reward=value, details=level1(objective=100, reward=value))
    spec = {
        "kind": "modelling",
        "reward": 2.0,
        "executed": 1,
        "correct": 1,
        "metadata": {"kind": "modelling", "source": "spec", "difficulty": "easy"},
    }
    write_trial(job, "spec", "production_planning_lp", reward=2.0, details=spec)
    result = CliRunner().invoke(main, ["report", str(job), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    reasons = {Path(s["path"]).name: s["reason"] for s in data["skipped"]}
    assert set(reasons) == {"huge", "huger", "below", "spec"}
    assert "1e+308 is outside what its verifier can give" in reasons["huge"]
    assert "outside a modelling task's 0..1" in reasons["spec"]
    [row] = data["algorithm"]
    assert (row["trials"], row["mean_reward"]) == (1, 0.5)


def test_without_the_range_check_a_huge_reward_breaks_the_totals(tmp_path, monkeypatch):
    """Mutation: with every reward taken as possible, two rewards of 1e308 overflow the totals and report fails."""
    from orharbor.report import jobs as report_jobs

    monkeypatch.setattr(report_jobs, "_outside_range", lambda *args: None)
    job = tmp_path / "jobs" / "job"
    for name in ("huge", "huger"):
        write_trial(job, name, f"jobshop-4x4-l1-s-{name}", reward=1e308, details=level1(objective=100, reward=1e308))
    result = CliRunner().invoke(main, ["report", str(job), "--format", "json"])
    assert result.exit_code != 0 and isinstance(result.exception, OverflowError), result.output


def relative_trial(run: Path, trial: str, task: str) -> Path:
    """A trial of `harbor run -p tasks/` started in ``run``: task path and trials_dir relative, trial_uri absolute."""
    job = run / "jobs" / "job-r"
    folder = write_trial(job, trial, task, reward=1.0, task_dir=Path("tasks") / task)
    for name in ("result.json", "config.json"):
        data = json.loads((folder / name).read_text())
        config = data.get("config", data)
        config["trials_dir"] = "jobs/job-r"
        (folder / name).write_text(json.dumps(data))
    task_dir = run / "tasks" / task
    task_dir.mkdir(parents=True)
    (task_dir / "task.toml").write_text(
        f'[task]\nname = "orharbor/{task}"\n[metadata]\nproblem = "wtardiness"\nsize = "n8"\nlevel = 1\n'
    )
    return folder


def test_a_relative_task_path_resolves_where_the_job_ran_not_where_report_runs(tmp_path, monkeypatch):
    """The job folder copied away from its tasks, report run from a third folder: the recorded run folder is used."""
    run = tmp_path / "project"
    relative_trial(run, "w1", "wt-n8-s0")
    copy = tmp_path / "copied"
    (run / "jobs").rename(copy)  # the job moved; Harbor's trial_uri still names where it ran
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = CliRunner().invoke(main, ["report", str(copy), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["skipped"] == [] and data["trials"] == 1
    [row] = data["algorithm"]
    assert (row["problem"], row["size"], row["level"]) == ("wtardiness", "n8", 1)


def test_a_relative_task_path_that_is_gone_names_every_folder_tried(tmp_path, monkeypatch):
    run = tmp_path / "project"
    folder = relative_trial(run, "w1", "wt-n8-s0")
    (run / "tasks" / "wt-n8-s0" / "task.toml").unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    [skipped] = report.read_jobs([folder.parent]).skipped
    assert skipped.reason == (
        "no metadata for task orharbor/wt-n8-s0: details.json has none and its task folder "
        f"tasks/wt-n8-s0 is gone (tried {run / 'tasks' / 'wt-n8-s0'}, "
        f"{elsewhere / 'tasks' / 'wt-n8-s0'}; pass --tasks with the task folders)"
    )


def test_a_trial_whose_result_json_has_the_wrong_shape_is_named_not_missing(mixed_job):
    (mixed_job / "result.json").write_text(json.dumps({"id": "job-level", "n_total_trials": 15}))
    odd = write_trial(mixed_job, "odd", "jobshop-4x4-l1-s13", reward=1.0)
    (odd / "result.json").write_text('{"a": 1}')
    reading = report.read_jobs([mixed_job])
    assert [(s.path, s.trials) for s in reading.skipped] == [(odd / "result.json", 1)]
    assert reading.skipped[0].reason.startswith("not a Harbor trial result (")
    assert reading.skipped_trials == 1 and len(reading.trials) == 14
