"""export --reward-scale unit (failure 0, naive 0.5, reference 1) and quality (best known / objective), end to end.

The scale functions, the exported task (task.json, task.toml, instruction, test.sh's own failure
path run for real), the verifier's reward.json, the report's conversion back to orharbor's scale,
and the report's best-of-k estimator against brute-force enumeration. The quality figure: hand-computed
cases, the refusal of tasks without best known values, and check through Harbor's own trial code.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import subprocess
import sys
import tomllib
from itertools import combinations
from pathlib import Path
from statistics import fmean

import pytest
from click.testing import CliRunner

from orharbor import report
from orharbor.cli import main
from orharbor.datasets.rows import RowError, read_rows, validate_row
from orharbor.exporter import ExportOptions, export_dataset, export_row
from orharbor.exporter.modelling import export_spec
from orharbor.exporter.task_dir import ExportOptionError
from orharbor.report.render import render
from orharbor.report.stats import best_of_k, expected_best_of_k
from orharbor.verifiers import contract
from orharbor.verifiers import main as verifier_main
from orharbor.verifiers.quality import add_quality, mean_quality, quality
from orharbor.verifiers.reward_scale import NotOnTheReward, UnknownScale, from_scale, to_scale

from jobfolders import algorithm_details, write_trial

#: The table of docs/reward.md: outcome -> (orharbor scale, unit scale), for each task family.
TABLE = {
    "algorithm": {
        "failure": (-1.0, 0.0),
        "halfway below naive": (-0.5, 0.25),
        "naive": (0.0, 0.5),
        "halfway to the reference": (0.5, 0.75),
        "reference": (1.0, 1.0),
        "beats it by 30%": (1.3, 1.15),
    },
    "modelling": {"failure": (0.0, 0.0), "wrong answer": (0.0, 0.0), "correct": (1.0, 1.0)},
}
FAIL = {"algorithm": -1.0, "modelling": 0.0}


@pytest.mark.parametrize("family", TABLE)
def test_the_unit_scale_maps_failure_to_zero_and_the_reference_to_one(family):
    """Every row of the reward page's table, both ways; the orharbor scale is the identity."""
    for outcome, (ours, unit) in TABLE[family].items():
        assert to_scale(ours, "unit", FAIL[family]) == pytest.approx(unit, abs=1e-15), outcome
        assert from_scale(unit, "unit", FAIL[family]) == pytest.approx(ours, abs=1e-15), outcome
        assert to_scale(ours, "orharbor", FAIL[family]) == ours == from_scale(ours, "orharbor", FAIL[family])


def test_an_unknown_scale_is_refused_everywhere():
    """The scale function, ExportOptions, the CLI and task.json each name the known scales."""
    with pytest.raises(UnknownScale, match="orharbor, unit, quality"):
        to_scale(0.0, "percent", -1.0)
    with pytest.raises(ExportOptionError, match="reward scale must be one of orharbor, unit, quality, got 'percent'"):
        ExportOptions(reward_scale="percent")
    result = CliRunner().invoke(main, ["export", "--out", "x", "--reward-scale", "percent"])
    assert result.exit_code == 2 and "'percent' is not one of 'orharbor', 'unit', 'quality'" in result.output
    with pytest.raises(contract.ContractError, match="unknown reward_scale 'percent'"):
        contract.parse(
            {
                "format_version": 2,
                "kind": "spec",
                "task_id": "t",
                "deliverables": ["/app/a"],
                "outputs": {},
                "reward_scale": "percent",
            }
        )


@pytest.fixture(scope="module")
def unit_tasks(tmp_path_factory, shipped_rows, shipped_specs) -> dict[str, Path]:
    """A level-1, a level-2 and a spec task, exported on each scale: (scale, kind) -> task folder."""
    out = {}
    level1 = next(r for r in shipped_rows if r["level"] == 1)
    level2 = next(r for r in shipped_rows if r["level"] == 2)
    for scale in ("orharbor", "unit"):
        folder = tmp_path_factory.mktemp(f"tasks-{scale}")
        options = ExportOptions(reward_scale=scale)
        out[scale, "level1"] = export_row(level1, folder, options)
        out[scale, "level2"] = export_row(level2, folder, options)
        out[scale, "spec"] = export_spec(shipped_specs[0], folder, options)
    return out


@pytest.mark.parametrize(
    "kind, policies",
    [
        ("level1", {"oracle": 1.0, "naive": 0.5, "nothing": 0.0}),
        ("level2", {"oracle": 1.0, "naive": 0.5, "nothing": 0.0}),
        ("spec", {"oracle": 1.0, "naive": 0.0, "nothing": 0.0}),
    ],
)
def test_the_scale_is_recorded_in_the_task_and_sets_what_check_expects(unit_tasks, kind, policies):
    """task.json (the verifier's config) and task.toml metadata say unit; check's expectations follow."""
    task = unit_tasks["unit", kind]
    loaded = contract.load(str(task / "tests"))
    assert loaded.reward_scale == "unit" and loaded.policies == policies
    assert tomllib.loads((task / "task.toml").read_text())["metadata"]["reward_scale"] == "unit"
    assert contract.load(str(unit_tasks["orharbor", kind] / "tests")).policies == loaded.kind.policies


def test_the_instruction_tells_the_agent_the_scale_it_is_scored_on(unit_tasks):
    """An algorithm task's scoring paragraph: the unit formula, naive 0.5, failure 0.0; never -1.0."""
    for kind in ("level1", "level2"):
        unit = (unit_tasks["unit", kind] / "instruction.md").read_text()
        assert "reward = (1 + (naive - objective) / (naive - reference)) / 2" in unit
        assert "0.5 is no better than naive" in unit and "scores 0.0" in unit and "-1.0" not in unit
        ours = (unit_tasks["orharbor", kind] / "instruction.md").read_text()
        assert "reward = (naive - objective) / (naive - reference)\n" in ours and "scores -1.0" in ours


def run_test_sh_failure_path(task: Path, tmp_path: Path) -> tuple[dict, dict]:
    """Run the task's own test.sh with its paths moved under ``tmp_path``: no image record, so it must fail.

    Only the three absolute paths change (/logs/verifier, /tests and the image build's record); the
    script that runs is the exported one, failure path and all.
    """
    logs, record = tmp_path / "logs" / "verifier", tmp_path / "no-image-record"
    script = (task / "tests" / "test.sh").read_text()
    assert "local record=/usr/local/share/orharbor " in script  # the record whose absence triggers the failure
    script = (
        script.replace("/logs/verifier", str(logs))
        .replace("/usr/local/share/orharbor", str(record))
        .replace("/tests", str(tmp_path / "tests"))
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "test.sh").write_text(script)
    done = subprocess.run(["bash", str(tmp_path / "test.sh")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "verifier environment tampered" in done.stdout, done.stdout + done.stderr
    return json.loads((logs / "reward.json").read_text()), json.loads((logs / "details.json").read_text())


@pytest.mark.parametrize("kind", ["level1", "level2", "spec"])
def test_test_sh_failure_path_writes_the_failure_reward_on_the_tasks_scale(unit_tasks, kind, tmp_path):
    """A tampered verifier environment scores 0.0 on unit (never -1.0, which a trainer would read as a reward
    below failure), and -1.0 or 0.0 on orharbor's scale; details.json says which scale and the orharbor figure."""
    reward, details = run_test_sh_failure_path(unit_tasks["unit", kind], tmp_path / "unit")
    fail = contract.KINDS[kind].fail_reward
    assert reward == {"reward": 0.0}
    assert (details["reward"], details["reward_scale"], details["orharbor_reward"]) == (0.0, "unit", fail)
    reward, details = run_test_sh_failure_path(unit_tasks["orharbor", kind], tmp_path / "orharbor")
    assert reward == {"reward": fail} and details["reward_scale"] == "orharbor"


def _verify(task: Path, deliverable: Path, logs: Path) -> float:
    verifier_main.main(["--tests-dir", str(task / "tests"), "--deliverable", str(deliverable), "--logs-dir", str(logs)])
    written = json.loads((logs / "reward.json").read_text())
    assert list(written) == ["reward"]  # one key: Harbor's pass@k and every trainer read it
    return written["reward"]


def test_the_verifier_writes_unit_rewards_for_the_reference_naive_and_no_answer(unit_tasks, tmp_path):
    """A level-1 unit task's reward.json: reference 1.0, naive 0.5, nothing 0.0; details keeps orharbor's figure."""
    task = unit_tasks["unit", "level1"]
    assert _verify(task, task / "solution" / "solution.json", tmp_path / "a") == 1.0
    assert _verify(task, task / "solution" / "naive" / "solution.json", tmp_path / "b") == 0.5
    details = json.loads((tmp_path / "b" / "details.json").read_text())
    assert (details["reward"], details["orharbor_reward"], details["reward_scale"]) == (0.5, 0.0, "unit")
    assert _verify(task, tmp_path / "missing.json", tmp_path / "c") == 0.0
    (tmp_path / "bad.json").write_text("{not json")
    assert _verify(task, tmp_path / "bad.json", tmp_path / "d") == 0.0


def test_verify_prints_the_unit_reward_and_orharbors(unit_tasks):
    """orharbor verify shows the reward as the task writes it, and the orharbor-scale figure beside it."""
    task = unit_tasks["unit", "level1"]
    done = CliRunner().invoke(
        main, ["verify", str(task), "--solution", str(task / "solution" / "naive" / "solution.json")]
    )
    assert done.exit_code == 0 and done.output.startswith("reward 0.5000 on the unit scale (0.0 on orharbor's)")


def test_the_calibration_ladder_reads_orharbors_scale_from_a_unit_export(unit_tasks):
    """bench/ladder.py's tiers (naive 0, reference 1) mean the same on a unit export: its naive rung scores 0.0."""
    from orharbor.benchmark.ladder import run_policy

    result = run_policy(unit_tasks["unit", "level1"], "naive", 1.0)
    assert (result.reward, result.instance_rewards, result.error) == (0.0, (0.0,), None)


def test_a_verifier_error_on_a_unit_task_still_scores_zero(unit_tasks, tmp_path):
    """The verifier's own error path (a task.json it cannot use) writes the unit failure reward, 0.0."""
    tests = tmp_path / "tests"
    tests.mkdir()
    data = json.loads((unit_tasks["unit", "level1"] / "tests" / "task.json").read_text())
    del data["instance"]
    (tests / "task.json").write_text(json.dumps(data))
    verifier_main.main(["--tests-dir", str(tests), "--logs-dir", str(tmp_path / "logs")])
    assert json.loads((tmp_path / "logs" / "reward.json").read_text()) == {"reward": 0.0}
    data["reward_scale"] = "orharbor"
    (tests / "task.json").write_text(json.dumps(data))
    verifier_main.main(["--tests-dir", str(tests), "--logs-dir", str(tmp_path / "logs")])
    assert json.loads((tmp_path / "logs" / "reward.json").read_text()) == {"reward": -1.0}


def _scales_of(out: Path) -> set[tuple[str, str]]:
    """(task.json's scale, test.sh's failure reward.json) of every task under ``out``."""
    found = set()
    for task in sorted(p.parent for p in out.glob("*/task.toml")):
        scale = json.loads((task / "tests" / "task.json").read_text())["reward_scale"]
        fail = re.search(
            r"printf '%s\\n' '(\{\"reward\": [^']*\})' > /logs/verifier/reward.json.tmp",
            (task / "tests" / "test.sh").read_text(),
        )
        found.add((scale, fail.group(1)))
    return found


def test_export_release_and_the_api_take_the_scale_too(tmp_path, shipped_rows):
    """export --release (the shipped benchmark's smoke subset, job shop) and api.export both write unit tasks."""
    from orharbor import api

    root = Path(__file__).resolve().parents[1]
    done = CliRunner().invoke(
        main,
        [
            "export",
            "--release",
            str(root / "benchmarks" / "orharbor-bench-1"),
            "--smoke",
            "--problem",
            "jobshop",
            "--reward-scale",
            "unit",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert done.exit_code == 0, done.output
    assert _scales_of(tmp_path / "r") == {("unit", '{"reward": 0.0}')}
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in shipped_rows if row["problem"] == "wtardiness"))
    plan = api.plan_export(tmp_path / "a", [rows])
    api.export(plan, ExportOptions(reward_scale="unit"))
    assert _scales_of(tmp_path / "a") == {("unit", '{"reward": 0.0}')}
    done = CliRunner().invoke(main, ["export", "--dataset", str(rows), "--out", str(tmp_path / "o")])
    assert done.exit_code == 0 and _scales_of(tmp_path / "o") == {("orharbor", '{"reward": -1.0}')}


# ------------------------------------------------------------------ report


def brute_force_best_of_k(rewards: list[float], k: int) -> float:
    """The mean, over every k-subset of the trials, of its best reward."""
    subsets = list(combinations(rewards, k))
    return math.fsum(max(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("seed", range(40))
def test_expected_best_of_k_equals_brute_force_enumeration(seed):
    """On random rewards (ties, negatives, values above 1 included), for every k up to n."""
    rng = random.Random(seed)
    n = rng.randint(1, 11)
    pool = [-1.0, 0.0, 1.0, round(rng.uniform(-1, 1.5), 2)]
    rewards = [rng.choice(pool) if rng.random() < 0.3 else rng.uniform(-1.0, 1.6) for _ in range(n)]
    for k in range(1, n + 1):
        assert expected_best_of_k(rewards, k) == pytest.approx(brute_force_best_of_k(rewards, k), abs=1e-12)
    assert expected_best_of_k(rewards, 1) == pytest.approx(math.fsum(rewards) / n, abs=1e-12)
    assert expected_best_of_k(rewards, n) == max(rewards)


def test_best_of_k_needs_k_between_one_and_n_and_stays_finite_for_many_trials():
    """k outside 1..n is refused; n = 2,000 trials (C(n, k) far above a float's range) still gives a finite mean."""
    with pytest.raises(ValueError, match="1 <= k <= n"):
        expected_best_of_k([0.5, 1.0], 3)
    rewards = [i / 1999 for i in range(2000)]
    value = expected_best_of_k(rewards, 1000)
    # the best of k ranks drawn from 1..n is k (n + 1) / (k + 1) on average
    assert math.isfinite(value) and value == pytest.approx((1000 * 2001 / 1001 - 1) / 1999, abs=1e-12)
    # k runs to the fewest trials of any task (2); task b's best of 2 is 0.5 in each of its three pairs
    assert best_of_k({"a": [0.0, 1.0], "b": [0.5, 0.5, -1.0]}) == {
        1: pytest.approx((0.5 + 0.0) / 2),
        2: pytest.approx((1.0 + 0.5) / 2),
    }


def _unit_details(reward_unit: float, objective: float | None) -> dict:
    ours = from_scale(reward_unit, "unit", -1.0)
    details = algorithm_details("jobshop", "4x4", 1, reward_unit, objective, reference=100, naive=200, bound=80)
    details["metadata"]["reward_scale"] = "unit"
    details.update(reward_scale="unit", orharbor_reward=ours)
    return details


@pytest.fixture
def two_scales_job(tmp_path):
    """The same jobshop task, tried three times on each scale with the same outcomes: 150, 100 and nothing."""
    job = tmp_path / "jobs" / "job-a"
    for i, (objective, ours) in enumerate([(150, 0.5), (100, 1.0), (None, -1.0)]):
        write_trial(
            job,
            f"o{i}",
            "jobshop-4x4-l1-s0",
            agent="orharbor-scale",
            reward=ours,
            details=algorithm_details("jobshop", "4x4", 1, ours, objective, reference=100, naive=200, bound=80),
        )
        write_trial(
            job,
            f"u{i}",
            "jobshop-4x4-l1-s0",
            agent="unit-scale",
            reward=to_scale(ours, "unit", -1.0),
            details=_unit_details(to_scale(ours, "unit", -1.0), objective),
        )
    return job


def test_report_converts_unit_rewards_back_so_both_exports_compare(two_scales_job):
    """Rows of a unit export read as orharbor's scale: equal to the same outcomes on orharbor's scale, column by
    column, best of k included (mean 1/6, best of 2 = (1.0 + 1.0 + 0.5) / 3; k stops at 2, as Harbor's do)."""
    data = report.build(report.read_jobs([two_scales_job.parent]))
    assert data["skipped"] == []
    rows = {row["agent"]: row for row in data["algorithm"]}
    assert {k: v for k, v in rows["unit-scale"].items() if k != "agent"} == {
        k: v for k, v in rows["orharbor-scale"].items() if k != "agent"
    }
    row = rows["unit-scale"]
    assert row["mean_reward"] == pytest.approx(0.5 / 3) and row["feasible_rate"] == pytest.approx(2 / 3)
    assert row["best_of_k"] == {1: pytest.approx(0.5 / 3), 2: pytest.approx(2.5 / 3)}
    assert row["at_or_below_naive_rate"] == pytest.approx(1 / 3)  # the failure, read as -1.0, not unit's 0.0
    table = render(data, "table")
    assert "best of k" in table and "@1:+0.17 @2:+0.83" in table
    assert re.search(r"^table,.*best_of_k", render(data, "csv"), re.MULTILINE)
    assert json.loads(render(data, "json"))["algorithm"][0]["best_of_k"] == {
        "1": pytest.approx(0.5 / 3),
        "2": pytest.approx(2.5 / 3),
    }


def test_report_skips_a_trial_of_an_unknown_scale(tmp_path):
    """A reward scale report cannot convert is named, not averaged in on the wrong scale."""
    job = tmp_path / "jobs" / "job-a"
    details = _unit_details(0.75, 150)
    details["reward_scale"] = "percent"
    write_trial(job, "t1", "jobshop-4x4-l1-s0", reward=0.75, details=details)
    reading = report.read_jobs([job.parent])
    assert reading.trials == [] and "unknown reward scale 'percent'" in reading.skipped[0].reason


# ------------------------------------------------------------------ check, through Harbor's own trial code


@pytest.mark.sandbox
def test_check_on_unit_tasks_oracle_one_naive_half_nothing_and_an_attack_zero(unit_tasks, tmp_path):
    """orharbor check on unit exports of a level-1, a level-2 and a spec task: oracle 1.0, naive 0.5 (spec 0.0),
    nothing 0.0 and the reward-file attack exactly 0.0 (not merely at most 0.0: -1.0 would pass an "at most"),
    read from Harbor's trial results; Harbor's Mean over them, its pass@k on the spec task's 0/1 rewards (none on
    the algorithm task's), and report's conversion of the job back to orharbor's scale."""
    from harbor.models.job.result import JobResult
    from harbor.models.trial.result import TrialResult
    from harbor.utils.pass_at_k import compute_pass_at_k_by_evals

    from orharbor import check

    folder = tmp_path / "tasks"
    for kind in ("level1", "level2", "spec"):
        shutil.copytree(unit_tasks["unit", kind], folder / unit_tasks["unit", kind].name)
    results = check.check_tasks(
        folder, jobs=2, attacks=True, only=("oracle", "naive", "nothing", "reward-file"), jobs_dir=tmp_path / "jobs"
    )
    assert [r.problem_text() for r in results if not r.ok] == []
    for r in results:
        naive = 0.5 if r.kind == "algorithm" else 0.0
        assert {p.policy: p.reward for p in r.policies} == {
            "oracle": 1.0,
            "naive": naive,
            "nothing": 0.0,
            "reward-file": 0.0,
        }, r.task
    [job] = (tmp_path / "jobs").glob("check-*")
    result = JobResult.model_validate_json((job / "result.json").read_text())
    means = {key.split("__")[0]: stats.metrics[0]["mean"] for key, stats in result.stats.evals.items()}
    assert means == {"oracle": 1.0, "orharbor-naive": pytest.approx(1 / 3), "nop": 0.0, "orharbor-attack": 0.0}

    def as_one_agent(task: str) -> dict:
        """Harbor's pass@k over the oracle, naive and nop trials of ``task`` as if one agent had tried three times."""
        trials = [TrialResult.model_validate_json(p.read_text()) for p in job.glob(f"{task}__*/result.json")]
        trials = [t for t in trials if not t.trial_name.endswith("reward-file")]
        for t in trials:
            t.agent_info.name = "one-agent"
        return compute_pass_at_k_by_evals(trials)

    assert list(as_one_agent(unit_tasks["unit", "spec"].name).values()) == [{2: pytest.approx(2 / 3)}]
    assert as_one_agent(unit_tasks["unit", "level1"].name) == {}  # 0.5 is not 0 or 1: Harbor gives none

    rows = {
        (row["agent"], row["level"]): row["mean_reward"] for row in report.build(report.read_jobs([job]))["algorithm"]
    }
    assert rows == {
        ("oracle", 1): 1.0,
        ("oracle", 2): 1.0,
        ("orharbor-naive", 1): 0.0,
        ("orharbor-naive", 2): 0.0,
        ("nop", 1): -1.0,
        ("nop", 2): -1.0,
        ("orharbor-attack", 1): -1.0,
        ("orharbor-attack", 2): -1.0,
    }


@pytest.mark.sandbox
def test_a_crashing_verifier_on_a_unit_task_scores_zero_through_harbor(unit_tasks, tmp_path):
    """If Python itself fails, test.sh's fallback writes the unit failure reward: Harbor records 0.0, not -1.0."""
    from orharbor import check

    task = tmp_path / "tasks" / unit_tasks["unit", "level1"].name
    shutil.copytree(unit_tasks["unit", "level1"], task)
    (task / "tests" / "verify.py").write_text("raise SystemExit(7)\n")
    [result] = check.check_tasks(task, jobs=1, only=("oracle",))
    [oracle] = result.policies
    assert (oracle.reward, oracle.verifier_crashed, result.ok) == (0.0, True, False)


# ------------------------------------------------------------------ the quality figure and its scale


@pytest.mark.parametrize(
    "objective, best, expected",
    [
        (100, 95, 0.95),  # HeuriGym's best / objective
        (190, 95, 0.5),
        (95, 95, 1.0),  # reaching the best known value
        (90, 95, 1.0),  # below it: capped at 1, not 95 / 90
        (None, 95, 0.0),  # infeasible, missing or failed
        (float("nan"), 95, 0.0),  # no finite objective is no answer
        (float("inf"), 95, 0.0),
        (True, 95, 0.0),  # a bool is no objective
        (4, 0, 0.25),  # best known 0 counts as 1: penalty 4 where 0 is reachable is not a failure
        (1, 0, 1.0),
        (0, 0, 1.0),
        (0, 5, 1.0),  # objective 0 below a best known 5: capped, no division by zero
        (2.5, 0.5, 0.4),  # both below 1 where they are: 1 / 2.5
    ],
)
def test_quality_of_one_answer_by_hand(objective, best, expected):
    assert quality(objective, best) == pytest.approx(expected, abs=1e-15)


def test_quality_needs_a_finite_best_known_value_and_level_two_is_the_mean_over_every_instance():
    for bad in (None, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="best known value"):
            quality(100, bad)
    assert mean_quality([]) == 0.0 and mean_quality([1.0, 0.5, 0.0]) == pytest.approx(0.5)
    level1 = add_quality({"feasible": 1, "objective": 120}, (90,), 1)
    assert (level1["best_known"], level1["quality"]) == (90, pytest.approx(0.75))
    assert add_quality({"feasible": 0, "objective": None}, (90,), 1)["quality"] == 0.0
    # level 2: rows matched by index; instance 1 failed, instance 2 has no row (solve.py unreadable): both 0
    rows = [{"index": 0, "feasible": 1, "objective": 50}, {"index": 1, "feasible": 0, "objective": None}]
    level2 = add_quality({"instances": rows}, (40, 30, 20), 2)
    assert [(r["best_known"], r["quality"]) for r in rows] == [(40, pytest.approx(0.8)), (30, 0.0)]
    assert level2["quality"] == pytest.approx(0.8 / 3)
    assert add_quality({"instances": []}, (40, 30), 2)["quality"] == 0.0


def test_the_quality_scale_maps_only_the_failure_to_and_from_the_reward():
    """Failure (or below) <-> 0.0 on quality; anything else depends on the objectives behind it."""
    assert to_scale(-1.0, "quality", -1.0) == 0.0 and to_scale(0.0, "quality", 0.0) == 0.0
    assert from_scale(0.0, "quality", -1.0) == -1.0
    with pytest.raises(NotOnTheReward):
        to_scale(0.5, "quality", -1.0)
    with pytest.raises(NotOnTheReward):
        from_scale(0.5, "quality", -1.0)


#: The source of the test's best known values, which nothing the agent sees may name.
HIDDEN_SOURCE = "a-best-known-source-the-agent-never-sees"


def _with_best_known(row: dict, values: list[float | None]) -> dict:
    """``row`` with best known values: None keeps the stored reference (level 1: one value, level 2: one each)."""
    row = json.loads(json.dumps(row))
    refs = [row["reference"]] if row["level"] == 1 else row["eval_references"]
    known = [{"value": ref if v is None else v, "source": HIDDEN_SOURCE, "bound": None} for v, ref in zip(values, refs)]
    if row["level"] == 1:
        row["best_known"] = known[0]
    else:
        row["eval_best_known"] = known
    return validate_row(row, row["id"])


#: Shipped rows given best known values: the reference itself (None) or lower, on instances the reference did not
#: prove optimal (each above that run's bound); wtardiness n8 s2's reference is 0, so its best known value is 0.
QUALITY_ROWS = {
    "level1": ("jobshop-10x10-l1-s3", [1300]),
    "zero": ("wtardiness-n8-l1-s2", [None]),
    "level2": ("jobshop-10x10-l2-s1", [1300, None, None]),
}


@pytest.fixture(scope="module")
def quality_rows(shipped_rows) -> dict[str, dict]:
    by_id = {row["id"]: row for row in shipped_rows}
    return {kind: _with_best_known(by_id[row_id], values) for kind, (row_id, values) in QUALITY_ROWS.items()}


@pytest.fixture(scope="module")
def quality_tasks(tmp_path_factory, quality_rows) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tasks-quality")
    return {kind: export_row(row, folder, ExportOptions(reward_scale="quality")) for kind, row in quality_rows.items()}


def _anchors(row: dict) -> list[tuple[float, float, float]]:
    """(naive, reference, best known) of each instance of a row."""
    if row["level"] == 1:
        return [(row["baseline"], row["reference"], row["best_known"]["value"])]
    return [
        (n, r, b["value"]) for n, r, b in zip(row["eval_baselines"], row["eval_references"], row["eval_best_known"])
    ]


def _hand_policies(row: dict) -> dict[str, float]:
    """What check must see, by hand: oracle best / reference, naive best / naive (means at level 2), nothing 0."""
    anchors = _anchors(row)
    return {
        "oracle": math.fsum(min(1.0, max(b, 1) / max(r, 1)) for _, r, b in anchors) / len(anchors),
        "naive": math.fsum(min(1.0, max(b, 1) / max(n, 1)) for n, _, b in anchors) / len(anchors),
        "nothing": 0.0,
    }


@pytest.mark.parametrize("kind", list(QUALITY_ROWS))
def test_a_quality_export_carries_the_best_known_values_in_its_hidden_parts_only(quality_tasks, quality_rows, kind):
    """task.json (level 1's best_known, each level-2 case's) and task.toml metadata have them; check expects
    oracle best / reference and naive best / naive; the agent's instruction and environment never see them."""
    task, row = quality_tasks[kind], quality_rows[kind]
    loaded = contract.load(str(task / "tests"))
    values = [b for _, _, b in _anchors(row)]
    assert loaded.reward_scale == "quality" and list(loaded.best_knowns) == values
    assert loaded.policies == pytest.approx(_hand_policies(row), abs=1e-15)
    metadata = tomllib.loads((task / "task.toml").read_text())["metadata"]
    assert metadata["reward_scale"] == "quality"
    assert metadata["best_known"] == (values[0] if row["level"] == 1 else values)
    seen = (task / "instruction.md").read_text() + "".join(
        p.read_text() for p in (task / "environment").rglob("*") if p.is_file()
    )
    assert "best_known" not in seen and HIDDEN_SOURCE not in seen
    if kind == "level1":
        assert "1300" not in seen  # the value itself, not only its key


def test_the_quality_instruction_tells_the_agent_how_it_is_scored(quality_tasks):
    text = (quality_tasks["level1"] / "instruction.md").read_text()
    assert "reward = min(1, max(best, 1) / max(objective, 1))" in text
    assert "best objective known for this instance" in text and "scores 0.0" in text and "-1.0" not in text
    level2 = (quality_tasks["level2"] / "instruction.md").read_text()
    assert "mean of the per-instance rewards" in level2 and "scores 0.0" in level2


def _score(task: Path, deliverable: Path) -> tuple[float, dict]:
    """The verifier's (reward on the task's scale, details), solve.py run by this interpreter (no task image here)."""
    return verifier_main.verify(str(task / "tests"), str(deliverable), python=sys.executable, drop_privileges=False)


@pytest.mark.parametrize("kind", list(QUALITY_ROWS))
def test_the_verifier_writes_the_quality_of_the_reference_the_naive_answer_and_nothing(
    quality_tasks, quality_rows, kind, tmp_path
):
    """The quality scale's reward: the reference best / reference, naive best / naive, nothing 0.0; details keep
    orharbor's reward, and each instance's best known value and quality; reward.json holds the reward alone."""
    task, row = quality_tasks[kind], quality_rows[kind]
    hand = _hand_policies(row)
    name = "solution.json" if row["level"] == 1 else "solve.py"
    reward, details = _score(task, task / "solution" / name)
    assert (reward, details["quality"], details["orharbor_reward"]) == (
        pytest.approx(hand["oracle"], abs=1e-15),
        reward,
        1.0,
    )
    reward, details = _score(task, task / "solution" / "naive" / name)
    assert reward == pytest.approx(hand["naive"], abs=1e-15)
    assert (details["reward_scale"], details["orharbor_reward"]) == ("quality", 0.0)
    if row["level"] == 2:
        assert [(r["best_known"], r["quality"]) for r in details["instances"]] == [
            (b, pytest.approx(min(1.0, b / n), abs=1e-15)) for n, _, b in _anchors(row)
        ]
    assert _score(task, tmp_path / "missing")[0] == 0.0
    if row["level"] == 1:
        assert _verify(task, task / "solution" / name, tmp_path / "a") == pytest.approx(hand["oracle"], abs=1e-15)


def test_a_level2_quality_is_the_mean_of_each_instances_not_read_back_from_the_mean_reward(
    quality_tasks, quality_rows, tmp_path
):
    """solve.py answers instance 0 with its reference and the others with naive: orharbor's reward is 1/3, the
    quality the mean of best / reference and best / naive, not what a uniform reward of 1/3 would give."""
    from orharbor.exporter.algorithm import lookup_program

    task, row = quality_tasks["level2"], quality_rows["level2"]
    loaded = contract.load(str(task / "tests"))
    answers = {
        case.instance_sha256: row["eval_reference_solutions" if i == 0 else "eval_baseline_solutions"][i]
        for i, case in enumerate(loaded.cases)
    }
    (tmp_path / "solve.py").write_text(lookup_program(answers))
    reward, details = _score(task, tmp_path / "solve.py")
    (n0, r0, b0), *rest = _anchors(row)
    hand = (min(1.0, b0 / r0) + sum(min(1.0, b / n) for n, _, b in rest)) / 3
    assert reward == pytest.approx(hand, abs=1e-15) and details["orharbor_reward"] == pytest.approx(1 / 3)
    assert abs(reward - loaded.scaled(1 / 3)) > 0.01


def test_the_other_instance_attack_expects_the_quality_its_borrowed_answers_reach(shipped_rows, tmp_path):
    """Weighted tardiness: any order of the jobs is feasible, so answers borrowed from another instance score
    above 0; the attack states their quality itself (check cannot read it back from orharbor's reward)."""
    from orharbor import problem_modules
    from orharbor.check.attacks.level2 import other_instance_attack
    from orharbor.check.trials import task_trials
    from orharbor.exporter.algorithm import NAIVE_ANSWERS

    row = _with_best_known(next(r for r in shipped_rows if r["id"] == "wtardiness-n8-l2-s2"), [None, None, None])
    task_dir = export_row(row, tmp_path, ExportOptions(reward_scale="quality"))
    task = contract.load(str(task_dir / "tests"))
    policy = other_instance_attack(task_dir, task, json.loads((task_dir / "solution" / NAIVE_ANSWERS).read_text()))
    module = problem_modules.get("wtardiness")
    objectives = [
        module.evaluate(module.generate(seed, "n8"), row["eval_baseline_solutions"][i - 1])
        for i, seed in enumerate(row["eval_seeds"])
    ]
    hand = fmean(min(1.0, max(b, 1) / max(o, 1)) for o, b in zip(objectives, row["eval_references"]))
    assert hand > 0 and policy.expected_on_scale == pytest.approx(hand, abs=1e-15)
    [trial] = [t for t in task_trials(task_dir, task, attacks=True) if t.policy == "other-instance"]
    assert trial.expected == policy.expected_on_scale  # what check holds the attack to
    plain_dir = export_row(row, tmp_path / "plain", ExportOptions())  # orharbor's scale: check converts the reward
    plain = other_instance_attack(
        plain_dir,
        contract.load(str(plain_dir / "tests")),
        json.loads((plain_dir / "solution" / NAIVE_ANSWERS).read_text()),
    )
    assert plain.expected_on_scale is None and plain.expected == policy.expected


def test_every_task_that_knows_its_best_known_value_reports_its_quality_on_any_scale(quality_rows, tmp_path):
    """An orharbor-scale export of a row with a best known value: details.json gains quality, reward.json keeps
    orharbor's reward; verify prints both."""
    task = export_row(quality_rows["level1"], tmp_path / "tasks")
    naive = task / "solution" / "naive" / "solution.json"
    assert _verify(task, naive, tmp_path / "logs") == 0.0
    details = json.loads((tmp_path / "logs" / "details.json").read_text())
    assert details["quality"] == pytest.approx(_hand_policies(quality_rows["level1"])["naive"], abs=1e-15)
    done = CliRunner().invoke(main, ["verify", str(task), "--solution", str(naive)])
    assert done.exit_code == 0 and f"quality {details['quality']:.4f}" in done.output.splitlines()[0]


def test_verify_and_the_ladder_read_a_quality_export(quality_tasks):
    """verify shows the quality and orharbor's reward; the ladder reads orharbor's scale (naive rung 0.0)."""
    from orharbor.benchmark.ladder import run_policy

    task = quality_tasks["level1"]
    naive = task / "solution" / "naive" / "solution.json"
    done = CliRunner().invoke(main, ["verify", str(task), "--solution", str(naive)])
    assert (
        done.exit_code == 0
        and done.output.startswith("reward 0.")
        and "on the quality scale (0.0 on orharbor's)" in done.output.splitlines()[0]
    )
    result = run_policy(task, "naive", 1.0)
    assert (result.reward, result.instance_rewards, result.error) == (0.0, (0.0,), None)


def test_test_sh_failure_path_on_a_quality_task_writes_zero(quality_tasks, tmp_path):
    reward, details = run_test_sh_failure_path(quality_tasks["level2"], tmp_path)
    assert reward == {"reward": 0.0} and (details["reward_scale"], details["orharbor_reward"]) == ("quality", -1.0)


def test_a_task_json_on_the_quality_scale_without_its_best_known_values_is_refused(quality_tasks, tmp_path):
    data = json.loads((quality_tasks["level2"] / "tests" / "task.json").read_text())
    data["cases"][1]["best_known"] = None
    with pytest.raises(contract.ContractError, match="reward_scale 'quality' needs the best known value"):
        contract.parse(data)
    data["cases"][1]["best_known"] = "1377"
    with pytest.raises(contract.ContractError, match="best_known is '1377', not a number"):
        contract.parse(data)


def test_rows_without_best_known_values_are_refused_on_the_quality_scale_with_one_line(
    tmp_path, shipped_rows, quality_rows
):
    """export (the CLI, before writing anything: the good row first is not written either), the API (modelling
    tasks too) and export_row each refuse; the same rows export on the other scales."""
    from orharbor import api

    rows = tmp_path / "rows.jsonl"
    plain = next(r for r in shipped_rows if r["id"] == "rcpsp-j10-l1-s0")
    rows.write_text(json.dumps(quality_rows["level1"]) + "\n" + json.dumps(plain) + "\n")
    done = CliRunner().invoke(
        main, ["export", "--dataset", str(rows), "--reward-scale", "quality", "--out", str(tmp_path / "o")]
    )
    assert done.exit_code == 1 and "Traceback" not in done.output
    [line] = done.output.strip().splitlines()
    assert line == (
        "Error: rcpsp-j10-l1-s0: --reward-scale quality scores each answer against the best known value "
        "of its instance, and this row has none (best_known); export it on another scale"
    )
    assert not list((tmp_path / "o").glob("*/task.toml"))
    from orharbor.modelling.spec import shipped_specs_dir

    with pytest.raises(api.ExportInputError, match="modelling tasks .* have none"):
        api.export(
            api.plan_export(tmp_path / "s", [], specs_dir=shipped_specs_dir()), ExportOptions(reward_scale="quality")
        )
    assert not (tmp_path / "s").exists() or not list((tmp_path / "s").iterdir())
    level2 = next(r for r in shipped_rows if r["level"] == 2)
    with pytest.raises(RowError, match=r"has none \(eval_best_known\)"):
        export_row(level2, tmp_path / "e", ExportOptions(reward_scale="quality"))


def test_the_shipped_releases_taillard_rows_export_on_the_quality_scale(tmp_path):
    """orharbor-bench 1.0's rows keep their old best_known shape on disk and read as the new one (value: the
    published upper bound, bound: the lower), so they export on the quality scale; its generated level-2 rows,
    which have none, are refused by name."""
    from orharbor import api

    root = Path(__file__).resolve().parents[1] / "benchmarks" / "orharbor-bench-1"
    on_disk = [json.loads(line) for line in (root / "jobshop-taillard.jsonl").read_text().splitlines()[:2]]
    assert all(set(row["best_known"]) == {"lower_bound", "upper_bound", "status", "source"} for row in on_disk)
    rows = read_rows(root / "jobshop-taillard.jsonl")[:2]
    assert [row["best_known"] for row in rows] == [
        {
            "value": r["best_known"]["upper_bound"],
            "source": r["best_known"]["source"],
            "bound": r["best_known"]["lower_bound"],
        }
        for r in on_disk
    ]
    for task in export_dataset(rows, tmp_path / "t", ExportOptions(reward_scale="quality")):
        loaded = contract.load(str(task / "tests"))
        assert loaded.best_knowns == (next(r for r in on_disk if r["id"] == task.name)["best_known"]["upper_bound"],)
    plan = api.plan_release_export(root, tmp_path / "r", smoke=True, problems=["jobshop"])
    with pytest.raises(RowError, match=r"jobshop-15x15-l2-\S+: --reward-scale quality .* \(eval_best_known\)"):
        api.export_release(plan, ExportOptions(reward_scale="quality"))
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").glob("*/task.toml"))


@pytest.mark.sandbox
def test_check_on_quality_tasks_through_harbor_oracle_naive_nothing_and_attacks(quality_tasks, quality_rows, tmp_path):
    """orharbor check on quality exports (level 1 with a best known value below the reference, level 1 whose best
    known value is 0, level 2 with one below): oracle best / reference, naive best / naive, nothing and the attacks
    exactly 0.0, read from Harbor's trial results; then report reads the job: quality per agent, rewards back on
    orharbor's scale."""
    from harbor.models.job.result import JobResult

    from orharbor import check

    folder = tmp_path / "tasks"
    for task in quality_tasks.values():
        shutil.copytree(task, folder / task.name)
    results = check.check_tasks(
        folder,
        jobs=2,
        attacks=True,
        only=("oracle", "naive", "nothing", "reward-file", "other-instance"),
        jobs_dir=tmp_path / "jobs",
    )
    assert [r.problem_text() for r in results if not r.ok] == []
    by_task = {row["id"]: row for row in quality_rows.values()}
    for r in results:
        hand = _hand_policies(by_task[r.task])
        rewards = {p.policy: p.reward for p in r.policies}
        attacks = {"reward-file": 0.0, **({"other-instance": 0.0} if r.level == 2 else {})}
        assert rewards == {
            "oracle": pytest.approx(hand["oracle"], abs=1e-12),
            "naive": pytest.approx(hand["naive"], abs=1e-12),
            "nothing": 0.0,
            **attacks,
        }, r.task
    [job] = (tmp_path / "jobs").glob("check-*")
    result = JobResult.model_validate_json((job / "result.json").read_text())
    means = {key.split("__")[0]: stats.metrics[0]["mean"] for key, stats in result.stats.evals.items()}
    hands = [_hand_policies(row) for row in quality_rows.values()]
    assert means == {
        "oracle": pytest.approx(fmean(h["oracle"] for h in hands), abs=1e-12),
        "orharbor-naive": pytest.approx(fmean(h["naive"] for h in hands), abs=1e-12),
        "nop": 0.0,
        "orharbor-attack": 0.0,
    }

    built = report.build(report.read_jobs([job]))
    rows = {(row["agent"], row["problem"], row["level"]): row for row in built["algorithm"]}
    oracle, naive = rows[("oracle", "jobshop", 1)], rows[("orharbor-naive", "jobshop", 1)]
    assert (oracle["mean_reward"], naive["mean_reward"], rows[("nop", "jobshop", 1)]["mean_reward"]) == (1.0, 0.0, -1.0)
    assert oracle["quality"] == pytest.approx(_hand_policies(quality_rows["level1"])["oracle"], abs=1e-12)
    assert naive["quality"] == pytest.approx(_hand_policies(quality_rows["level1"])["naive"], abs=1e-12)
    assert rows[("orharbor-naive", "wtardiness", 1)]["quality"] == pytest.approx(1 / 382, abs=1e-15)
    assert rows[("oracle", "jobshop", 2)]["quality"] == pytest.approx(
        _hand_policies(quality_rows["level2"])["oracle"], abs=1e-12
    )
    assert {row["quality"] for key, row in rows.items() if key[0] in ("nop", "orharbor-attack")} == {0.0}
