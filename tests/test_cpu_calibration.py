"""CPU calibration of level-2 time limits (verifiers/cpu_calibration.py): the workload, the clamped factor, the
scaled limit the verifier runs under and records, and where it shows (verify, report, instruction).

No test depends on this machine's speed: a recorded factor is checked against the recorded measurement, and a
slow machine is simulated by a fake timer or a fake measurement.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import tomllib
from contextlib import contextmanager
from pathlib import Path

import pytest

from orharbor import report
from orharbor.datasets.rows import validate_row
from orharbor.exporter import export_row
from orharbor.local_verify import score, summary
from orharbor.report.html import html_page
from orharbor.report.render import render
from orharbor.verifiers import contract, cpu_calibration
from orharbor.verifiers import main as verifier_main
from orharbor.verifiers.cpu_calibration import BOUND, CHECKSUM, HIGH, LOW, calibrate, calibrated_limits, factor
from orharbor.verifiers.solver_run import Limits

from bundled import read_bundled
from jobfolders import algorithm_details, write_trial
from test_report_columns import parse_tables

SLEEPER = "import time\ntime.sleep(1000)\n"


def clamp(measured: float, reference: float) -> float:
    return min(HIGH, max(LOW, measured / reference))


# ------------------------------------------------------------------ the workload and its timing


def test_the_workload_gives_its_checksum_here_and_in_a_fresh_interpreter():
    """Deterministic: the pinned checksum, again, and in an isolated interpreter with another hash seed."""
    assert cpu_calibration.workload() == CHECKSUM
    assert cpu_calibration.workload() == CHECKSUM
    code = "from orharbor.verifiers.cpu_calibration import workload; print(workload())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "4321"},
    ).stdout
    assert int(out) == CHECKSUM


def test_workload_s_is_a_positive_time():
    assert cpu_calibration.workload_s(runs=1) > 0


@pytest.mark.parametrize("change", ["checksum", "workload"])
def test_a_changed_workload_or_checksum_is_an_error(monkeypatch, change):
    """Timing something else than the reference timed would scale the limit by nonsense: it is refused."""
    if change == "checksum":
        monkeypatch.setattr(cpu_calibration, "CHECKSUM", CHECKSUM + 1)
    else:
        monkeypatch.setattr(cpu_calibration, "_POINTS", cpu_calibration._POINTS - 1)
    with pytest.raises(cpu_calibration.CalibrationError, match="calibration workload returned"):
        cpu_calibration.workload_s(runs=1)


def test_workload_s_leaves_the_garbage_collector_as_it_found_it(monkeypatch):
    """Collection is off while timing (noise), and on again afterwards, also after a failed check."""
    import gc

    assert gc.isenabled()
    cpu_calibration.workload_s(runs=1)
    assert gc.isenabled()
    seen: list[bool] = []
    monkeypatch.setattr(cpu_calibration, "workload", lambda: seen.append(gc.isenabled()) or CHECKSUM + 1)
    with pytest.raises(cpu_calibration.CalibrationError):
        cpu_calibration.workload_s(runs=1)
    assert seen == [False] and gc.isenabled()


class FakeClock:
    """perf_counter advancing by the given durations, one per timed run (start, then end)."""

    def __init__(self, durations: list[float]):
        self.readings, now = [], 100.0
        for duration in durations:
            self.readings += [now, now + duration]
            now += duration + 1.0

    def __call__(self) -> float:
        return self.readings.pop(0)


def test_workload_s_keeps_the_fastest_run(monkeypatch):
    """Best of the runs: interference only slows a run down."""
    monkeypatch.setattr(cpu_calibration.time, "perf_counter", FakeClock([0.5, 0.3, 0.9, 0.4]))
    assert cpu_calibration.workload_s(runs=4) == pytest.approx(0.3)


# ------------------------------------------------------------------ the factor


@pytest.mark.parametrize(
    "measured, reference, expected",
    [
        (0.3, 0.3, 1.0),
        (0.45, 0.3, 1.5),
        (0.2, 0.4, 0.5),
        (0.3, 0.4, 0.75),
        (3.0, 0.3, HIGH),
        (0.6, 0.3, HIGH),
        (0.001, 0.3, LOW),
        (0.1, 0.3, LOW),
    ],
)
def test_the_factor_is_the_time_ratio_clamped_to_the_bound(measured, reference, expected):
    assert BOUND == (0.5, 2.0)
    assert factor(measured, reference) == pytest.approx(expected)


@pytest.mark.slow
def test_a_slow_machine_by_the_timer_is_clamped_at_high(monkeypatch):
    """A loaded or slow machine (here: a timer saying each run took 100 s) gets at most HIGH times the limit."""
    monkeypatch.setattr(cpu_calibration.time, "perf_counter", FakeClock([100.0] * cpu_calibration.RUNS))
    record = calibrate(10.0, 0.3)
    assert record["workload_s"] == pytest.approx(100.0)
    assert record["factor"] == HIGH and record["solve_time_limit_s"] == 10.0 * HIGH
    assert record["bound"] == [LOW, HIGH] and record["reference_workload_s"] == 0.3


def test_the_real_workload_against_a_fast_reference_stays_within_the_bound():
    """A reference far faster than any machine: the real measurement, whatever it is, buys HIGH at most."""
    record = calibrate(10.0, 1e-7, measure=lambda: cpu_calibration.workload_s(runs=1))
    assert record["workload_s"] > 0
    assert record["factor"] == clamp(record["workload_s"], 1e-7) == HIGH
    assert record["solve_time_limit_s"] == 10.0 * HIGH


def test_a_fast_machine_gets_at_least_low():
    record = calibrate(10.0, 5.0, measure=lambda: 0.01)
    assert record["factor"] == LOW and record["solve_time_limit_s"] == 10.0 * LOW


def test_without_a_reference_nothing_is_measured_and_the_limits_stay():
    def never():
        raise AssertionError("measured without a reference")

    limits = Limits(solve_time_limit_s=7.0)
    assert calibrated_limits(limits, None, measure=never) == (limits, None)
    scaled, record = calibrated_limits(limits, 0.25, measure=lambda: 0.3)
    assert record["factor"] == pytest.approx(1.2) and scaled.solve_time_limit_s == pytest.approx(7.0 * 1.2)
    assert scaled == Limits(solve_time_limit_s=scaled.solve_time_limit_s)  # every other limit unchanged


# ------------------------------------------------------------------ the verifier


@pytest.fixture(scope="module")
def level2_row(shipped_rows) -> dict:
    """The shipped 4x4 job shop level-2 row with one hidden instance and a 1-second limit."""
    row = dict(next(r for r in shipped_rows if r["id"] == "jobshop-4x4-l2-s0"))
    for key in (
        "eval_seeds",
        "eval_references",
        "eval_baselines",
        "eval_reference_solutions",
        "eval_baseline_solutions",
        "eval_reference_metas",
    ):
        row[key] = row[key][:1]
    row["solve_time_limit_s"] = 1.0
    return row


@pytest.fixture(scope="module")
def tasks(tmp_path_factory, level2_row) -> dict[str, Path]:
    """The row exported with a reference_workload_s ("calibrated") and without ("plain")."""
    calibrated = validate_row({**level2_row, "reference_workload_s": 0.25})
    return {
        "calibrated": export_row(calibrated, tmp_path_factory.mktemp("calibrated")),
        "plain": export_row(level2_row, tmp_path_factory.mktemp("plain")),
    }


def test_the_verifier_calibrates_after_ending_the_agents_processes(tasks, tmp_path, monkeypatch):
    """In a task container: leftovers ended, then the workload timed, then the runs under the scaled limit."""
    events: list = []

    @contextmanager
    def no_lockdown(count, uid, workroot, isolate):
        events.append("lockdown")
        yield {"uids": [None] * count, "workroot": str(tmp_path), "open_dirs": None}

    def runs(evaluate, program, cases, python, limits, **kwargs):
        events.append(("runs", limits.solve_time_limit_s))
        return 0.0, {"instances": [], "feasible": 0}

    monkeypatch.setattr(verifier_main, "end_foreign_processes", lambda: events.append("end processes") or 0)
    monkeypatch.setattr(verifier_main, "tampering", lambda: [])
    monkeypatch.setattr(verifier_main, "program_runs", no_lockdown)
    monkeypatch.setattr(verifier_main, "score_level2", runs)
    monkeypatch.setattr(cpu_calibration, "workload_s", lambda: events.append("calibrate") or 1.0)
    tests = tasks["calibrated"] / "tests"
    verifier_main.main(
        [
            "--tests-dir",
            str(tests),
            "--deliverable",
            str(tmp_path / "solve.py"),
            "--logs-dir",
            str(tmp_path / "logs"),
            "--in-container",
        ]
    )
    assert events == ["end processes", "lockdown", "calibrate", ("runs", 1.0 * HIGH), "end processes"]
    details = json.loads((tmp_path / "logs" / "details.json").read_text())
    assert details["cpu_calibration"] == {
        "workload_s": 1.0,
        "reference_workload_s": 0.25,
        "factor": HIGH,
        "bound": [LOW, HIGH],
        "solve_time_limit_s": 1.0 * HIGH,
    }


@pytest.mark.sandbox
def test_a_calibrated_task_runs_and_records_the_scaled_limit(tasks, tmp_path):
    """Scored as the task scores it: every run, the public example's too, timed out at the scaled limit."""
    solve = tmp_path / "solve.py"
    solve.write_text(SLEEPER)
    reward, details = score(tasks["calibrated"], solve)
    record = details["cpu_calibration"]
    assert set(record) == {"workload_s", "reference_workload_s", "factor", "bound", "solve_time_limit_s"}
    assert record["reference_workload_s"] == 0.25 and record["bound"] == [LOW, HIGH] and record["workload_s"] > 0
    assert record["factor"] == clamp(record["workload_s"], 0.25)
    assert record["solve_time_limit_s"] == 1.0 * record["factor"]
    message = f"timed out after {record['solve_time_limit_s']:g} s"
    assert [row["error"] for row in details["instances"]] == [message] and details["example"]["error"] == message
    assert all(
        row["timed_out"] and row["wall_s"] >= record["solve_time_limit_s"] - 0.05
        for row in [*details["instances"], details["example"]]
    )
    assert reward == -1.0
    assert f"cpu factor {record['factor']:.2f}" in summary(details)


@pytest.mark.sandbox
def test_a_task_without_a_reference_runs_as_before(tasks, tmp_path):
    """No reference_workload_s: no calibration, the row's own limit, nothing about it in the summary."""
    solve = tmp_path / "solve.py"
    solve.write_text(SLEEPER)
    _, details = score(tasks["plain"], solve)
    assert "cpu_calibration" not in details
    assert [row["error"] for row in details["instances"]] == ["timed out after 1 s"]
    assert details["example"]["error"] == "timed out after 1 s"
    assert "cpu factor" not in summary(details)


# ------------------------------------------------------------------ the export


def test_the_rows_reference_reaches_task_json_instruction_and_timeout(tasks, level2_row):
    calibrated, plain = (contract.load(str(tasks[name] / "tests")) for name in ("calibrated", "plain"))
    assert calibrated.reference_workload_s == 0.25 and plain.reference_workload_s is None
    sentence = "The time limit is scaled to the speed of the machine that runs your program"
    assert sentence in (tasks["calibrated"] / "instruction.md").read_text()
    assert sentence not in (tasks["plain"] / "instruction.md").read_text()
    assert f"factor kept between {LOW:g} and {HIGH:g}" in (tasks["calibrated"] / "instruction.md").read_text()
    timeout = {
        name: tomllib.loads((tasks[name] / "task.toml").read_text())["verifier"]["timeout_sec"] for name in tasks
    }
    runs = len(level2_row["eval_seeds"]) + 1  # and the public example
    assert timeout == {"plain": runs * (1.0 + 15.0) + 120.0, "calibrated": runs * (1.0 * HIGH + 15.0) + 120.0}


def test_the_bundle_in_tests_holds_the_calibration(tasks):
    """The task's own verifier imports it: it must travel with the bundle."""
    bundled = read_bundled(tasks["calibrated"] / "tests", "orharbor/verifiers/cpu_calibration.py")
    assert bundled == Path(cpu_calibration.__file__).read_text()


@pytest.mark.parametrize(
    "level, value, message",
    [
        (2, 0, "reference_workload_s: 0 is less than or equal to the minimum of 0"),
        (2, "0.3", "reference_workload_s: '0.3' is not of type 'number'"),
        (1, 0.3, "reference_workload_s: 0.3 should not be valid"),
    ],
)
def test_the_row_schema_takes_a_positive_reference_on_level2_rows_only(shipped_rows, level, value, message):
    from orharbor.datasets.rows import RowError

    row = next(r for r in shipped_rows if r["level"] == level)
    with pytest.raises(RowError, match=message):
        validate_row({**row, "reference_workload_s": value})


# ------------------------------------------------------------------ the report


def _level2_details(reward: float, cpu_factor: float | None) -> dict:
    instance = {
        "index": 0,
        "reward": reward,
        "feasible": 1,
        "objective": 150,
        "naive": 200,
        "reference": 100,
        "bound": None,
        "timed_out": False,
        "wall_s": 0.5,
        "returncode": 0,
        "error": None,
    }
    details = algorithm_details("jobshop", "4x4", 2, reward, None, reference=100, naive=200, instances=[instance])
    if cpu_factor is not None:
        details["cpu_calibration"] = {
            "workload_s": 0.3 * cpu_factor,
            "reference_workload_s": 0.3,
            "factor": cpu_factor,
            "bound": [LOW, HIGH],
            "solve_time_limit_s": 10 * cpu_factor,
        }
    return details


@pytest.fixture
def job(tmp_path) -> Path:
    """codex: two calibrated level-2 trials (factors 1.2 and 1.6) and one from before calibration;
    oracle: one level-2 trial without calibration."""
    job = tmp_path / "job"
    write_trial(job, "a", "jobshop-4x4-l2-s0", reward=0.5, details=_level2_details(0.5, 1.2))
    write_trial(job, "b", "jobshop-4x4-l2-s1", reward=0.5, details=_level2_details(0.5, 1.6))
    write_trial(job, "c", "jobshop-4x4-l2-s2", reward=0.5, details=_level2_details(0.5, None))
    write_trial(
        job, "d", "jobshop-4x4-l2-s0", agent="oracle", model=None, reward=0.5, details=_level2_details(0.5, None)
    )
    return job


def test_the_report_shows_the_mean_cpu_factor_in_every_format(job):
    reading = report.read_jobs([job])
    assert sorted(t.cpu_factor or 0 for t in reading.trials) == [0, 0, 1.2, 1.6]
    data = report.build(reading)
    factors = {row["agent"]: row["cpu_factor"] for row in data["algorithm"]}
    assert factors == {"codex": pytest.approx(1.4), "oracle": None}
    [table] = [rows for title, rows in parse_tables(render(data, "table")).items() if title.startswith("Algorithm")]
    assert {row["agent"]: row["cpu x"] for row in table} == {"codex": "1.40", "oracle": "-"}
    markdown = render(data, "markdown")
    header = next(line for line in markdown.splitlines() if line.startswith("| agent"))
    codex = next(line for line in markdown.splitlines() if line.startswith("| codex"))
    assert codex.split(" | ")[header.split(" | ").index("cpu x")] == "1.40"
    rows = {row["agent"]: row for row in csv.DictReader(io.StringIO(render(data, "csv")))}
    assert float(rows["codex"]["cpu_factor"]) == pytest.approx(1.4) and rows["oracle"]["cpu_factor"] == ""
    assert json.loads(render(data, "json"))["algorithm"][0]["cpu_factor"] == pytest.approx(1.4)
    page = html_page(data, reading.trials)
    assert "<th" in page and "cpu x" in page and "1.40" in page


def test_a_factor_from_a_details_json_that_disagrees_with_harbor_is_not_used(tmp_path):
    """As every details figure: only when details.json's reward is Harbor's."""
    job = tmp_path / "job"
    write_trial(job, "a", "jobshop-4x4-l2-s0", reward=0.25, details=_level2_details(0.5, 1.2))
    [trial] = report.read_jobs([job]).trials
    assert trial.cpu_factor is None
