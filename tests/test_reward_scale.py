"""export --reward-scale unit: the scale RL trainers assume (failure 0, naive 0.5, reference 1), end to end.

The scale function, the exported task (task.json, task.toml, instruction, test.sh's own failure
path run for real), the verifier's reward.json, the report's conversion back to orharbor's scale,
and the report's best-of-k estimator against brute-force enumeration.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import subprocess
import tomllib
from itertools import combinations
from pathlib import Path

import pytest
from click.testing import CliRunner

from orharbor import report
from orharbor.cli import main
from orharbor.exporter import ExportOptions, export_row
from orharbor.exporter.modelling import export_spec
from orharbor.exporter.task_dir import ExportOptionError
from orharbor.report.render import render
from orharbor.report.stats import best_of_k, expected_best_of_k
from orharbor.verifiers import contract
from orharbor.verifiers import main as verifier_main
from orharbor.verifiers.reward_scale import SCALES, UnknownScale, from_scale, to_scale

from jobfolders import algorithm_details, write_trial

#: The README's table: outcome -> (orharbor scale, unit scale), for each task family.
TABLE = {
    "algorithm": {"failure": (-1.0, 0.0), "halfway below naive": (-0.5, 0.25), "naive": (0.0, 0.5),
                  "halfway to the reference": (0.5, 0.75), "reference": (1.0, 1.0), "beats it by 30%": (1.3, 1.15)},
    "modelling": {"failure": (0.0, 0.0), "wrong answer": (0.0, 0.0), "correct": (1.0, 1.0)},
}
FAIL = {"algorithm": -1.0, "modelling": 0.0}


@pytest.mark.parametrize("family", TABLE)
def test_the_unit_scale_maps_failure_to_zero_and_the_reference_to_one(family):
    """Every row of the README's table, both ways; the orharbor scale is the identity."""
    for outcome, (ours, unit) in TABLE[family].items():
        assert to_scale(ours, "unit", FAIL[family]) == pytest.approx(unit, abs=1e-15), outcome
        assert from_scale(unit, "unit", FAIL[family]) == pytest.approx(ours, abs=1e-15), outcome
        assert to_scale(ours, "orharbor", FAIL[family]) == ours == from_scale(ours, "orharbor", FAIL[family])


def test_an_unknown_scale_is_refused_everywhere():
    """The scale function, ExportOptions, the CLI and task.json each name the known scales."""
    with pytest.raises(UnknownScale, match="orharbor, unit"):
        to_scale(0.0, "percent", -1.0)
    with pytest.raises(ExportOptionError, match="reward scale must be one of orharbor, unit, got 'percent'"):
        ExportOptions(reward_scale="percent")
    result = CliRunner().invoke(main, ["export", "--out", "x", "--reward-scale", "percent"])
    assert result.exit_code == 2 and "'percent' is not one of 'orharbor', 'unit'" in result.output
    with pytest.raises(contract.ContractError, match="unknown reward_scale 'percent'"):
        contract.parse({"format_version": 2, "kind": "spec", "task_id": "t", "deliverables": ["/app/a"],
                        "outputs": {}, "reward_scale": "percent"})


@pytest.fixture(scope="module")
def unit_tasks(tmp_path_factory, shipped_rows, shipped_specs) -> dict[str, Path]:
    """A level-1, a level-2 and a spec task, exported on each scale: (scale, kind) -> task folder."""
    out = {}
    level1 = next(r for r in shipped_rows if r["level"] == 1)
    level2 = next(r for r in shipped_rows if r["level"] == 2)
    for scale in SCALES:
        folder = tmp_path_factory.mktemp(f"tasks-{scale}")
        options = ExportOptions(reward_scale=scale)
        out[scale, "level1"] = export_row(level1, folder, options)
        out[scale, "level2"] = export_row(level2, folder, options)
        out[scale, "spec"] = export_spec(shipped_specs[0], folder, options)
    return out


@pytest.mark.parametrize("kind, policies", [("level1", {"oracle": 1.0, "naive": 0.5, "nothing": 0.0}),
                                            ("level2", {"oracle": 1.0, "naive": 0.5, "nothing": 0.0}),
                                            ("spec", {"oracle": 1.0, "naive": 0.0, "nothing": 0.0})])
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
    script = (script.replace("/logs/verifier", str(logs)).replace("/usr/local/share/orharbor", str(record))
              .replace("/tests", str(tmp_path / "tests")))
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
    done = CliRunner().invoke(main, ["verify", str(task), "--solution", str(task / "solution" / "naive" / "solution.json")])
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
        fail = re.search(r"printf '%s\\n' '(\{\"reward\": [^']*\})' > /logs/verifier/reward.json.tmp",
                         (task / "tests" / "test.sh").read_text())
        found.add((scale, fail.group(1)))
    return found


def test_export_release_and_the_api_take_the_scale_too(tmp_path, shipped_rows):
    """export --release (the shipped benchmark's smoke subset, job shop) and api.export both write unit tasks."""
    from orharbor import api

    root = Path(__file__).resolve().parents[1]
    done = CliRunner().invoke(main, ["export", "--release", str(root / "benchmarks" / "orharbor-bench-1"), "--smoke",
                                     "--problem", "jobshop", "--reward-scale", "unit", "--out", str(tmp_path / "r")])
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
    assert best_of_k({"a": [0.0, 1.0], "b": [0.5, 0.5, -1.0]}) == {1: pytest.approx((0.5 + 0.0) / 2),
                                                                    2: pytest.approx((1.0 + 0.5) / 2)}


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
        write_trial(job, f"o{i}", "jobshop-4x4-l1-s0", agent="orharbor-scale", reward=ours,
                    details=algorithm_details("jobshop", "4x4", 1, ours, objective, reference=100, naive=200, bound=80))
        write_trial(job, f"u{i}", "jobshop-4x4-l1-s0", agent="unit-scale", reward=to_scale(ours, "unit", -1.0),
                    details=_unit_details(to_scale(ours, "unit", -1.0), objective))
    return job


def test_report_converts_unit_rewards_back_so_both_exports_compare(two_scales_job):
    """Rows of a unit export read as orharbor's scale: equal to the same outcomes on orharbor's scale, column by
    column, best of k included (mean 1/6, best of 2 = (1.0 + 1.0 + 0.5) / 3; k stops at 2, as Harbor's do)."""
    data = report.build(report.read_jobs([two_scales_job.parent]))
    assert data["skipped"] == []
    rows = {row["agent"]: row for row in data["algorithm"]}
    assert {k: v for k, v in rows["unit-scale"].items() if k != "agent"} == \
        {k: v for k, v in rows["orharbor-scale"].items() if k != "agent"}
    row = rows["unit-scale"]
    assert row["mean_reward"] == pytest.approx(0.5 / 3) and row["feasible_rate"] == pytest.approx(2 / 3)
    assert row["best_of_k"] == {1: pytest.approx(0.5 / 3), 2: pytest.approx(2.5 / 3)}
    assert row["at_or_below_naive_rate"] == pytest.approx(1 / 3)  # the failure, read as -1.0, not unit's 0.0
    table = render(data, "table")
    assert "best of k" in table and "@1:+0.17 @2:+0.83" in table
    assert re.search(r"^table,.*best_of_k", render(data, "csv"), re.MULTILINE)
    assert json.loads(render(data, "json"))["algorithm"][0]["best_of_k"] == {"1": pytest.approx(0.5 / 3),
                                                                            "2": pytest.approx(2.5 / 3)}


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
    results = check.check_tasks(folder, jobs=2, attacks=True, only=("oracle", "naive", "nothing", "reward-file"),
                                jobs_dir=tmp_path / "jobs")
    assert [r.problem_text() for r in results if not r.ok] == []
    for r in results:
        naive = 0.5 if r.kind == "algorithm" else 0.0
        assert {p.policy: p.reward for p in r.policies} == {"oracle": 1.0, "naive": naive, "nothing": 0.0,
                                                             "reward-file": 0.0}, r.task
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

    rows = {(row["agent"], row["level"]): row["mean_reward"] for row in report.build(report.read_jobs([job]))["algorithm"]}
    assert rows == {("oracle", 1): 1.0, ("oracle", 2): 1.0, ("orharbor-naive", 1): 0.0, ("orharbor-naive", 2): 0.0,
                    ("nop", 1): -1.0, ("nop", 2): -1.0, ("orharbor-attack", 1): -1.0, ("orharbor-attack", 2): -1.0}


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
