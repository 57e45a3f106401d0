"""Harbor job folders made by hand, with Harbor's own models, for report tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from harbor.models.task.id import LocalTaskId
from harbor.models.trial.config import TaskConfig, TrialConfig
from harbor.models.agent.context import AgentContext
from harbor.models.trial.result import AgentInfo, ExceptionInfo, ModelInfo, StepResult, TrialResult
from harbor.models.verifier.result import VerifierResult


def write_trial(
    job: Path,
    name: str,
    task: str,
    agent: str = "codex",
    model: str | None = "gpt-x",
    reward: float | None = None,
    exception: str | None = None,
    details: dict | None = None,
    task_dir: Path | None = None,
    usage: dict | None = None,
    steps: list[dict] | None = None,
) -> Path:
    """``job/name/`` with a Harbor ``result.json`` (and ``verifier/details.json`` when given); returns the folder.

    ``usage``: the agent's AgentContext (tokens, cost) of a single-step trial; ``steps``: one AgentContext per
    step of a multi-step trial, which Harbor records on ``step_results`` instead."""
    folder = job / name
    folder.mkdir(parents=True)
    task_path = task_dir or (job / "gone" / task)
    result = TrialResult(
        task_name=f"orharbor/{task}",
        trial_name=name,
        trial_uri=folder.as_uri(),
        task_id=LocalTaskId(path=task_path),
        task_checksum="0" * 64,
        config=TrialConfig(task=TaskConfig(path=task_path), trial_name=name, trials_dir=job),
        agent_info=AgentInfo(name=agent, version="1", model_info=ModelInfo(name=model) if model else None),
        verifier_result=None if reward is None else VerifierResult(rewards={"reward": reward}),
        agent_result=AgentContext(**usage) if usage is not None else None,
        step_results=None
        if steps is None
        else [StepResult(step_name=f"step-{i}", agent_result=AgentContext(**step)) for i, step in enumerate(steps)],
        exception_info=None
        if exception is None
        else ExceptionInfo(
            exception_type=exception, exception_message="", exception_traceback="", occurred_at=datetime.now(UTC)
        ),
    )
    (folder / "result.json").write_text(result.model_dump_json(indent=2))
    (folder / "config.json").write_text(result.config.model_dump_json(indent=2))
    if details is not None:
        (folder / "verifier").mkdir()
        (folder / "verifier" / "details.json").write_text(json.dumps(details))
    return folder


def algorithm_details(
    problem: str,
    size: str,
    level: int,
    reward: float,
    objective: float | None,
    reference: float,
    naive: float,
    bound: float | None = None,
    instances: list | None = None,
    best_known: float | None = None,
) -> dict:
    """details.json as orharbor's verifier writes it for an algorithm task."""
    metadata = {"problem": problem, "size": size, "level": level}
    if level == 1:
        metadata.update(reference=reference, baseline=naive)
        if bound is not None:
            metadata["bound"] = bound
        if best_known is not None:
            metadata["best_known"] = best_known
    details = {"kind": "algorithm", "level": level, "reward": reward, "metadata": metadata}
    if level == 1:
        details.update(objective=objective, reference=reference, naive=naive, feasible=int(objective is not None))
    else:
        details.update(instances=instances or [], feasible=int(all(i["feasible"] for i in instances or [])))
    return details
