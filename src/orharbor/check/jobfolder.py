"""The job-level files of a check run, written with Harbor's own models and metrics.

``orharbor check`` runs its trials through Harbor's ``Trial``; this adds what
Harbor's ``Job`` would write around them (``config.json``, ``result.json`` with
per-agent stats, the Mean metric and pass@k), so ``harbor view`` and
``orharbor report`` read a check run like any other job.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path

from harbor.metrics.mean import Mean
from harbor.models.job.config import JobConfig
from harbor.models.job.result import JobResult, JobStats
from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig
from harbor.models.trial.result import TrialResult
from harbor.utils.pass_at_k import compute_pass_at_k_by_evals

from orharbor.check.agents import NAIVE_AGENT, POLICY_AGENT


def write_job_files(
    job_dir: Path,
    job_id: uuid.UUID,
    started: datetime,
    root: Path,
    trials: list[TrialResult],
    checked: list,
    environment: dict,
) -> None:
    """Write ``config.json`` and ``result.json`` of the job in ``job_dir``.

    ``environment``: the fields of Harbor's ``EnvironmentConfig`` that select the environment
    check ran on (:meth:`~orharbor.check.environment.CheckEnvironment.config_kwargs`), for a
    job without trials.
    """
    tasks = sorted({str(t.config.task.path) for t in trials})
    config = JobConfig(
        job_name=job_dir.name,
        jobs_dir=job_dir.parent,
        environment=(
            trials[0].config.environment
            if trials  # the environment check ran on
            else EnvironmentConfig(**environment)
        ),
        agents=[
            AgentConfig(name="oracle"),
            AgentConfig(import_path=NAIVE_AGENT),
            AgentConfig(name="nop"),
            *([AgentConfig(import_path=POLICY_AGENT)] if any(p.attack for c in checked for p in c.policies) else []),
        ],
        tasks=[TaskConfig(path=Path(path), source=root.resolve().name) for path in tasks],
    )
    (job_dir / "config.json").write_text(config.model_dump_json(indent=4))
    stats = JobStats.from_trial_results(trials, n_total_trials=len(trials))
    rewards: dict[str, list] = {}
    for trial in trials:
        if trial.reward_valid and trial.verifier_result is not None:
            model = trial.agent_info.model_info.name if trial.agent_info.model_info else None
            key = JobStats.format_agent_evals_key(trial.agent_info.name, model, trial.source or "adhoc")
            rewards.setdefault(key, []).append(trial.verifier_result.rewards)
    for key, values in rewards.items():
        stats.evals[key].metrics.append(Mean().compute(values))
    for key, pass_at_k in compute_pass_at_k_by_evals(trials).items():
        stats.evals[key].pass_at_k = pass_at_k
    finished = datetime.now()
    result = JobResult(
        id=job_id,
        started_at=started,
        updated_at=finished,
        finished_at=finished,
        n_total_trials=len(trials),
        stats=stats,
    )
    (job_dir / "result.json").write_text(result.model_dump_json(indent=4, exclude={"trial_results"}))
