"""Harbor's real terminus-2 agent, driven by the scripted model server, on exported tasks, at no model cost.

One `harbor run -a terminus-2` job per verifier mode runs five tasks through the
bubblewrap environment: a level-1 and a level-2 job shop task, a spec task, a
RetailOpt task and a level-1 weighted tardiness task. The shipped transcripts type
a program into the terminal, run it and declare the task complete; on the last task
the transcript tries to cheat instead. The reward is read from Harbor's own
result.json: each solving transcript earns the reward orharbor's local verifier gives
the deliverable Harbor collected (and more than 0), the cheat the failure reward -1.0.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from orharbor import local_verify, report
from orharbor.exporter import ExportOptions, export_dataset
from orharbor.harness import transcripts
from orharbor.harness.model_server import ModelServer

from harbor_runs import harbor_run

#: Task id -> (the shipped transcript it draws, the deliverable Harbor collects under artifacts/, relative to /app).
#: The reward-hack transcript's task is the one whose reward must be the failure reward.
TASKS = {
    "jobshop-4x4-l1-s0": ("jobshop-level1", "solution.json"),
    "jobshop-4x4-l2-s0": ("jobshop-level2", "solve.py"),
    "transportation_lp": ("transportation-lp", "."),
    "retailopt-retail-f1-base-v0": ("retailopt-f1-base", "model.py"),
    "wtardiness-n8-l1-s0": ("reward-hack", "solution.json"),
}
RETAIL_SCENARIO = "retail_f1_base_v0"


@pytest.fixture
def server():
    """The scripted model serving the shipped transcripts, on a free loopback port (one per test: its log is the test's)."""
    with ModelServer(transcripts.shipped()).start() as running:
        yield running


def _export(out: Path, mode: str, shipped_rows, shipped_specs, retail_rows) -> Path:
    """The five tasks of TASKS, exported in verifier mode ``mode`` into ``out``."""
    from orharbor.exporter.modelling import export_retail, export_spec

    options = ExportOptions(verifier_mode=mode)
    export_dataset([row for row in shipped_rows if row["id"] in TASKS], out, options)
    [spec] = [spec for spec in shipped_specs if spec.id == "transportation_lp"]
    export_spec(spec, out, options)
    [row] = [row for row in retail_rows if row["scenario_id"] == RETAIL_SCENARIO]
    export_retail(row, out, options, prompt="schema")
    assert sorted(p.name for p in out.iterdir() if (p / "task.toml").is_file()) == sorted(TASKS)
    return out


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("mode", ["separate", "shared"])
def test_terminus_2_on_scripted_transcripts_solves_four_kinds_and_the_cheat_fails(
    mode, server, shipped_rows, shipped_specs, retail_rows, tmp_path, monkeypatch
):
    """Each solving transcript earns its deliverable's local reward (> 0), the cheat -1.0, and no trial errs."""
    tasks = _export(tmp_path / "tasks", mode, shipped_rows, shipped_specs, retail_rows)
    monkeypatch.setenv("OPENAI_API_KEY", "scripted")  # LiteLLM's OpenAI client wants one; nothing checks it
    job, trials = harbor_run(
        ["-p", str(tasks), "-a", "terminus-2", "-m", "openai/scripted", "--ak", f"api_base={server.api_base}"],
        tmp_path / "jobs",
        f"terminus-{mode}",
    )
    assert server.script.failures == []
    assert job["n_total_trials"] == len(trials) == len(TASKS)
    for trial in trials:
        task = trial["task_name"].removeprefix("orharbor/")
        assert trial["exception_info"] is None, (task, trial["exception_info"])
        reward = trial["verifier_result"]["rewards"]["reward"]
        name, deliverable = TASKS[task]
        # the transcript was played to its last turn (its confirmation of task_complete)
        assert (name, len(_transcript(name).turns) - 1) in server.script.served
        trial_dir = Path(trial["trial_uri"].removeprefix("file://"))
        expected, _ = local_verify.score(tasks / task, trial_dir / "artifacts" / "app" / deliverable)
        if name == "reward-hack":
            assert reward == expected == -1.0, task
            # the attack really ran: the agent's terminal showed its forged reward in place before the verifier
            assert '{"reward": 1000000000.0}' in (trial_dir / "agent" / "terminus_2.pane").read_text()
        else:
            assert math.isfinite(reward) and reward > 0, (task, reward)
            assert reward == pytest.approx(expected, rel=1e-9), task
    # what the model reported reaches the report: terminus-2's token counts, per group (no price: no cost)
    reading = report.read_jobs([tmp_path / "jobs"])
    assert {t.task for t in reading.trials} == set(TASKS)
    for trial in reading.trials:
        assert trial.input_tokens > 0 and trial.output_tokens > 0 and trial.cost_usd is None, trial
    built = report.build(reading)
    rows = built["algorithm"] + built["modelling"]["by_difficulty"] + built["modelling"]["by_family"]
    assert rows and all(row["input_tokens"] > 0 and row["costed"] == 0 for row in rows)


def _transcript(name: str) -> transcripts.Transcript:
    [found] = [t for t in transcripts.shipped() if t.name == name]
    return found
