"""bench/rollouts.py: phase times read from Harbor's TrialResult, percentiles, the table, and a small real run."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy
import pytest
from harbor.models.task.id import LocalTaskId
from harbor.models.trial.config import TaskConfig, TrialConfig
from harbor.models.trial.result import AgentInfo, TimingInfo, TrialResult
from harbor.models.verifier.result import VerifierResult

BENCH = Path(__file__).resolve().parents[1] / "bench" / "rollouts.py"
spec = importlib.util.spec_from_file_location("bench_rollouts", BENCH)
rollouts = importlib.util.module_from_spec(spec)
sys.modules["bench_rollouts"] = rollouts  # dataclasses look their module up by name
spec.loader.exec_module(rollouts)

WHICH = shutil.which
T0 = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def span(start: float, end: float) -> TimingInfo:
    return TimingInfo(started_at=at(start), finished_at=at(end))


def trial_result(tmp_path: Path, reward: float | None = 1.0, total: float = 10.25, **spans: TimingInfo) -> dict:
    """A TrialResult built with Harbor's own model, as the dict its result.json holds."""
    result = TrialResult(
        task_name="t",
        trial_name=f"t__{total}",
        trial_uri="file:///t",
        task_id=LocalTaskId(path=tmp_path),
        task_checksum="0",
        config=TrialConfig(task=TaskConfig(path=tmp_path)),
        agent_info=AgentInfo(name="oracle", version="1"),
        started_at=at(0),
        finished_at=at(total),
        verifier_result=None if reward is None else VerifierResult(rewards={"reward": reward}),
        **spans,
    )
    return json.loads(result.model_dump_json())


def full_trial(tmp_path: Path, reward: float = 1.0, scale: float = 1.0) -> dict:
    return trial_result(
        tmp_path,
        reward,
        10.25 * scale,
        environment_setup=span(0.1 * scale, 2 * scale),
        agent_setup=span(2 * scale, 2.5 * scale),
        agent_execution=span(2.5 * scale, 5 * scale),
        verifier=span(7 * scale, 10 * scale),
    )


def test_phase_seconds_reads_each_phase_from_a_trial_result(tmp_path):
    """Every phase, handoff and stop included, is the span Harbor recorded, to the microsecond."""
    phases = rollouts.phase_seconds(full_trial(tmp_path))
    assert phases == pytest.approx(
        {
            "env start": 1.9,
            "agent setup": 0.5,
            "agent run": 2.5,
            "handoff": 2.0,
            "verifier": 3.0,
            "stop": 0.25,
            "total": 10.25,
        }
    )
    assert list(phases) == list(rollouts.PHASES)


def test_phase_seconds_of_a_trial_without_verifier(tmp_path):
    """A trial that never reached its verifier has no verifier or handoff; stop runs from the agent's end."""
    result = trial_result(
        tmp_path, None, 6.0, environment_setup=span(0, 1), agent_setup=span(1, 1.5), agent_execution=span(1.5, 4)
    )
    phases = rollouts.phase_seconds(result)
    assert phases["verifier"] is None and phases["handoff"] is None
    assert phases["stop"] == pytest.approx(2.0) and phases["total"] == pytest.approx(6.0)


@pytest.mark.parametrize("values", [[float(v) for v in range(1, 11)], [3.0, 1.0, 2.0], [7.5, 0.5, 2.25, 9.0, 4.0]])
def test_median_p90_agrees_with_numpy(values):
    """Median and p90 are numpy's percentiles (linear interpolation) of the same values."""
    assert rollouts.median_p90(values) == pytest.approx(tuple(numpy.percentile(values, [50, 90])))


def test_median_p90_of_one_value_and_none():
    assert rollouts.median_p90([4.0]) == (4.0, 4.0)
    assert rollouts.median_p90([]) is None


def test_table_rows_ratios_cold_trials_and_a_missing_engine(tmp_path):
    """One row per environment, ratios to the first, failed trials out of the phase times, a missing engine a row."""
    base = rollouts.EnvRun(
        "bubblewrap",
        seconds=10.0,
        trials=[full_trial(tmp_path)] * 3 + [full_trial(tmp_path, 0.0)],
        cold=[full_trial(tmp_path, scale=3.0)],
    )
    slow = rollouts.EnvRun("podman", seconds=40.0, trials=[full_trial(tmp_path, scale=2.0)] * 4)
    gone = rollouts.EnvRun("docker", missing="not installed")
    assert base.ok == 3 and base.phase("total") == pytest.approx([10.25] * 3)
    throughput, phases = rollouts.render([base, slow, gone]).split("\n\n")
    rows = {line.split()[0]: line.split() for line in throughput.splitlines()[1:]}
    assert rows["bubblewrap"][:5] == ["bubblewrap", "3/4", "10.0", "24.0", "1.00"]
    assert rows["podman"][:7] == ["podman", "4/4", "40.0", "6.0", "0.25", "20.5/20.5", "2.00"]
    assert rows["bubblewrap"][7:] == ["30.8/30.8", "(1)"] and rows["podman"][7:] == ["-"]
    assert rows["docker"][1:3] == ["not", "installed"]
    phase_rows = [line.split() for line in phases.splitlines()[2:]]
    assert [row[0] for row in phase_rows] == ["bubblewrap", "bubblewrap", "podman", "docker"]
    assert phase_rows[0][1:] == ["1.9/1.9", "0.5/0.5", "2.5/2.5", "2.0/2.0", "3.0/3.0", "0.2/0.2", "10.2/10.2"]
    assert phase_rows[1][1:] == ["cold", "5.7/5.7", "1.5/1.5", "7.5/7.5", "6.0/6.0", "9.0/9.0", "0.8/0.8", "30.8/30.8"]
    assert phase_rows[3][1:] == ["-"] * len(rollouts.PHASES)


def without_podman(name: str, *args, **kwargs) -> str | None:
    """shutil.which on a machine without podman."""
    return None if name == "podman" else WHICH(name, *args, **kwargs)


def test_a_missing_podman_is_a_row_not_a_crash(monkeypatch):
    """Without podman on PATH its row says so, before any trial runs."""
    monkeypatch.setattr(rollouts.shutil, "which", without_podman)
    assert rollouts.missing_reason("podman", "any-image") == "not installed"


@pytest.mark.slow
@pytest.mark.sandbox
def test_two_bubblewrap_trials_through_harbor(monkeypatch, capsys, tmp_path):
    """The bench runs real oracle trials through Harbor's Trial on bubblewrap, and prints podman as not installed."""
    monkeypatch.setattr(rollouts.shutil, "which", without_podman)
    for name in ("PATH", "HARBOR_TELEMETRY", "LITELLM_LOCAL_MODEL_COST_MAP"):  # main() sets them
        monkeypatch.setenv(name, os.environ.get(name, "0" if name == "HARBOR_TELEMETRY" else "True"))
    monkeypatch.setattr(
        sys,
        "argv",
        ["rollouts.py", "-N", "2", "-n", "2", "--env", "bubblewrap", "podman", "--jobs-dir", str(tmp_path / "jobs")],
    )
    rollouts.main()
    out = capsys.readouterr().out
    bubblewrap = next(line for line in out.splitlines() if line.startswith("bubblewrap ")).split()
    assert bubblewrap[1:2] == ["2/2"] and float(bubblewrap[3]) > 0
    assert next(line for line in out.splitlines() if line.startswith("podman ")).split()[1:3] == ["not", "installed"]
    results = sorted((tmp_path / "jobs" / "bubblewrap").glob("*/result.json"))
    assert len(results) == 2 + 4  # the measured trials and one warm-up trial per level-1 job shop task
    rewards = [json.loads(r.read_text())["verifier_result"]["rewards"]["reward"] for r in results]
    assert rewards == [1.0] * 6
