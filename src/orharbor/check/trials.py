"""The trial driver of ``orharbor check``: every policy of every task as a Harbor trial, some at a time.

Each trial is Harbor's own ``Trial.create(...).run()`` on the chosen Harbor
environment (:mod:`orharbor.check.environment`: ``--env``, else docker when a
daemon answers, else the bubblewrap environment), after that environment's own
preflight; what a policy must earn comes from the task contract
(``task.policies``, and each attack's own expectation), on the task's reward scale.

An attack of group scope (:attr:`orharbor.check.policies.Policy.scope`) runs
once per group of tasks that share their images, verifier and configuration
(:mod:`orharbor.check.attack_groups`), on the group's first task by name that
passes its own checks; every other task of the group gets that outcome, marked
with where it ran (``PolicyResult.ran_on``), once those trials have ended.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Awaitable, Callable

from orharbor.check.agents import NAIVE_AGENT, POLICY_AGENT, policy_to_kwargs
from orharbor.check.attack_groups import group_key
from orharbor.check.environment import (
    CheckEnvironment,
    environment_capabilities,
    environment_kind,
    preflight,
    preflight_tasks,
    resolve_environment,
)
from orharbor.check.jobfolder import write_job_files
from orharbor.check.policies import GROUP
from orharbor.check.results import CheckResult, PolicyResult, judge
from orharbor.check.slots import Slots
from orharbor.exporter.task_folder import TaskFolder
from orharbor.files import require_parent
from orharbor.harbor_env.sandbox import SandboxUnavailable
from orharbor.interrupts import run_async
from orharbor.task_toml import TaskTomlError
from orharbor.verifiers import contract
from orharbor.verifiers.removal import remove_path


@dataclass(frozen=True)
class _Trial:
    """One trial to run: a task, a policy, the agent that acts it out, and the expected reward."""

    task: Path
    policy: str
    expected: float
    attack: bool
    agent: dict
    #: Its outcome is decided by the task's images, verifier and configuration, the same for its whole group.
    group_scope: bool = False
    #: It takes seconds more than most (:attr:`orharbor.check.policies.Policy.long`): started first.
    long: bool = False


#: Runs trials, ``jobs`` at a time, and returns their outcomes in order.
_Runner = Callable[[list[_Trial]], Awaitable[list[PolicyResult]]]


@dataclass
class _Plan:
    """A task before its trials: its result so far, the trials it needs, and its attack group (None: none)."""

    task: Path
    result: CheckResult
    trials: list[_Trial] = field(default_factory=list)
    group: tuple | None = None

    def split(self, grouped: bool) -> tuple[list[_Trial], list[_Trial]]:
        """(trials of its group's scope, its own), when its group shares them; else ([], every trial)."""
        if not grouped:
            return [], self.trials
        return [t for t in self.trials if t.group_scope], [t for t in self.trials if not t.group_scope]


def find_tasks(root: Path) -> list[Path]:
    """Task directories under ``root`` (``root`` itself if it is one)."""
    if (root / "task.toml").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/task.toml"))


def check_tasks(
    root: Path,
    jobs: int = 1,
    attacks: bool = False,
    only: tuple[str, ...] = (),
    jobs_dir: Path | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    *,
    env: str | CheckEnvironment | None = None,
    attack_groups: bool = True,
) -> list[CheckResult]:
    """Check every task under ``root`` with ``jobs`` trials at a time.

    ``only`` limits the policies by name; ``attack_groups`` runs each attack of
    group scope once per group of tasks that share their images, verifier and
    configuration (False: on every task); ``jobs_dir`` keeps the Harbor job
    folder there (else it is removed; it may be created, the folder above it
    must exist); ``on_result`` is called with each task's result as soon as
    its last trial ends. ``env`` is the Harbor environment
    (a type name such as ``docker``, an import path ``module:Class``, or a
    :class:`CheckEnvironment`); ``None`` picks docker when a Docker daemon
    answers, else the bubblewrap environment. The environment's own preflight
    says what it needs of this host (the bubblewrap environment: root,
    bubblewrap, slirp4netns) before anything runs.
    """
    if jobs_dir is not None:
        require_parent(Path(jobs_dir), "--jobs-dir")
    environment = resolve_environment(env)
    preflight(environment)
    tasks = find_tasks(root)
    if not tasks:
        raise SandboxUnavailable(f"no task directories (with task.toml) under {root}")
    preflight_tasks(environment, tasks)  # once here, not as every trial's failed start
    os.environ.setdefault("HARBOR_TELEMETRY", "0")  # nothing leaves this machine
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    keep = jobs_dir is not None
    base = Path(jobs_dir) if jobs_dir is not None else Path(tempfile.mkdtemp(prefix="orharbor-check-"))
    job_dir = _new_job_dir(base)
    try:
        # Ctrl-C or SIGTERM cancels the trials, and Harbor stops their environments, before the exit
        results = run_async(
            _check_all(tasks, root, job_dir, jobs, attacks, only, on_result, environment, attack_groups=attack_groups)
        )
        for result in results:
            result.job_dir = job_dir if keep else None
        return results
    finally:
        if not keep:
            remove_path(str(base))  # iterative: a trial's downloads may hold folder chains of any depth


def _new_job_dir(base: Path) -> Path:
    """A fresh job folder under ``base``; an existing one is never reused."""
    base.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().strftime("%Y-%m-%d__%H-%M-%S")
    for suffix in ("", *(f"-{i}" for i in range(1, 1000))):
        path = base / f"check-{stamp}{suffix}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free job folder name under {base}")


async def _check_all(
    tasks: list[Path],
    root: Path,
    job_dir: Path,
    jobs: int,
    attacks: bool,
    only: tuple[str, ...],
    on_result: Callable[[CheckResult], None] | None,
    environment: CheckEnvironment,
    *,
    attack_groups: bool = True,
) -> list[CheckResult]:
    started = datetime.now()
    job_id = uuid.uuid4()
    slots = Slots(jobs)
    results: dict[Path, CheckResult] = {}
    trial_results: list = []
    plans = [_plan_task(task, attacks, only, environment, grouped=attacks and attack_groups) for task in tasks]
    representatives = _representatives(plans)
    loop = asyncio.get_running_loop()
    shared: dict[tuple, asyncio.Future] = {group: loop.create_future() for group in representatives}

    start = time.monotonic()

    async def run(trials: list[_Trial]) -> list[PolicyResult]:
        return list(
            await asyncio.gather(
                *(_run_trial(t, root, job_dir, job_id, slots, trial_results, environment) for t in trials)
            )
        )

    async def one_task(plan: _Plan) -> None:
        group = plan.group
        representative = representatives.get(group) if group is not None else None
        result = plan.result
        result.attack_group = representative.result.task if representative else None
        if representative is plan:
            assert group is not None  # a representative stands for its group
            result.policies = await _run_representative(plan, run, shared[group])
        else:
            result.policies = await _run_member(
                plan, run, representative, shared.get(group) if group is not None else None
            )
        result.ended_s = time.monotonic() - start
        results[plan.task] = result
        if on_result is not None:
            on_result(result)

    await asyncio.gather(*(one_task(plan) for plan in plans))
    write_job_files(
        job_dir, job_id, started, root, trial_results, [results[t] for t in tasks], environment.config_kwargs()
    )
    return [results[task] for task in tasks]


def _representatives(plans: list[_Plan]) -> dict[tuple, _Plan]:
    """Each attack group's representative: its first task by name (only tasks that passed their checks have a group)."""
    found: dict[tuple, _Plan] = {}
    for plan in sorted(plans, key=lambda p: p.result.task):
        if plan.group is not None:
            found.setdefault(plan.group, plan)
    return found


async def _run_representative(plan: _Plan, run: _Runner, outcome: asyncio.Future) -> list[PolicyResult]:
    """Every trial of a group's representative; its group-scope outcomes go to ``outcome`` as soon as they end."""
    group, own = plan.split(grouped=True)

    async def group_part() -> list[PolicyResult]:
        try:
            done = await run(group)
        except BaseException:  # cancelled or failed: the members stop waiting too
            outcome.cancel()
            raise
        outcome.set_result({p.policy: p for p in done})
        return done

    done_group, done_own = await asyncio.gather(group_part(), run(own))
    return _in_order(plan.trials, {p.policy: p for p in done_group + done_own})


async def _run_member(
    plan: _Plan, run: _Runner, representative: _Plan | None, outcome: asyncio.Future | None
) -> list[PolicyResult]:
    """A task's own trials; with a representative, its group-scope outcomes from there, once they have ended."""
    group, own = plan.split(grouped=representative is not None)
    by_policy = {p.policy: p for p in await run(own)}
    if representative is not None:
        assert outcome is not None  # a representative's group has its shared outcome
        ran = await outcome
        for trial in group:
            by_policy[trial.policy] = replace(
                ran[trial.policy], expected=trial.expected, ran_on=representative.result.task
            )
    return _in_order(plan.trials, by_policy)


def _in_order(trials: list[_Trial], by_policy: dict[str, PolicyResult]) -> list[PolicyResult]:
    return [by_policy[t.policy] for t in trials]


def _plan_task(
    task_dir: Path, attacks: bool, only: tuple[str, ...], environment: CheckEnvironment, grouped: bool
) -> _Plan:
    """A task's checks before any trial, its trials, and with ``grouped`` its attack group.

    A task that fails a check (unreadable contract, agent files that differ from
    what tests/ grades with, an agent allowlist the environment cannot enforce) gets no trials and no group.
    """
    folder = TaskFolder(task_dir)
    try:
        config = folder.validate()  # an error names the file; Harbor's would not
        task = folder.contract()  # a flat tests/ (--for tinker) as its tree
    except TaskTomlError as exc:
        return _Plan(task_dir, CheckResult(task_dir.name, 0, "?", error=str(exc)))
    except (OSError, ValueError) as exc:  # ContractError is a ValueError
        return _Plan(task_dir, CheckResult(task_dir.name, 0, "?", error=f"unreadable task: {exc}"))
    mode = config.get("verifier", {}).get("environment_mode", "shared")
    plan = _Plan(task_dir, CheckResult(task_dir.name, task.kind.level or 0, mode, task.kind.family))
    if mismatches := folder.differences():  # no trial: its reward would score another instance
        plan.result.error = "; ".join(mismatches)
        return plan
    if refusal := _network_refusal(
        environment,
        config.get("environment", {}).get("network_mode", "public"),
        config.get("agent", {}).get("network_mode", "public"),
    ):
        plan.result.error = refusal
        return plan
    try:
        plan.trials = [t for t in task_trials(task_dir, task, attacks) if not only or t.policy in only]
    except (OSError, ValueError, KeyError) as exc:
        plan.result.error = f"unreadable task: {exc}"
        return plan
    if grouped and any(t.group_scope for t in plan.trials):
        try:  # the group's attacks, by name, are part of its key: a member gets the outcome of each of its own
            plan.group = (group_key(folder, task), tuple(t.policy for t in plan.trials if t.group_scope))
        except (OSError, ValueError):  # a task whose files cannot all be read runs every attack itself
            plan.group = None
    return plan


def _network_refusal(environment: CheckEnvironment, setup_network: str, agent_network: str) -> str | None:
    """Why the environment cannot run a task whose agent network is not public, where its class's capabilities say.

    ``setup_network`` is the task's ``[environment]`` network (the agent's setup), ``agent_network``
    its ``[agent]`` one. Harbor refuses such a trial when it builds the agent's environment; check
    says it once, with the export to check instead. Where the capabilities depend on the built
    environment (:func:`~orharbor.check.environment.environment_capabilities` is None), Harbor
    decides per trial.
    """
    capabilities = environment_capabilities(environment) if agent_network != "public" else None
    if capabilities is None:
        return None
    if agent_network != setup_network and not capabilities.dynamic_network_policy:
        why = "it cannot switch networks after start"
    elif agent_network == "allowlist" and not capabilities.network_allowlist:
        why = "it has no network allowlist"
    else:
        return None
    return (
        f"exported with an agent network allowlist, which the {environment_kind(environment)} environment "
        f"cannot enforce ({why}, and Harbor refuses the trial); check an export of the same rows with "
        "--agent-network public: scoring does not depend on it"
    )


def task_trials(task_dir: Path, task: contract.Task, attacks: bool) -> list[_Trial]:
    """The reference trials (oracle, naive, nothing), then one per attack when asked for."""
    agents: dict[str, dict] = {
        "oracle": {"name": "oracle"},
        "naive": {"import_path": NAIVE_AGENT, "kwargs": {"task_dir": str(task_dir.resolve())}},
        "nothing": {"name": "nop"},
    }
    trials = [_Trial(task_dir, name, reward, False, agents[name]) for name, reward in task.policies.items()]
    if attacks:
        from orharbor.check.attacks import attack_policies

        for policy in attack_policies(task_dir, task):  # attacks state orharbor-scale rewards
            expected = task.scaled(policy.expected) if policy.expected_on_scale is None else policy.expected_on_scale
            trials.append(
                _Trial(
                    task_dir,
                    policy.name,
                    expected,
                    True,
                    {"import_path": POLICY_AGENT, "kwargs": {"policy": policy_to_kwargs(policy)}},
                    group_scope=policy.scope == GROUP,
                    long=policy.long,
                )
            )
    return trials


async def _run_trial(
    spec: _Trial, root: Path, job_dir: Path, job_id: uuid.UUID, slots: Slots, sink: list, environment: CheckEnvironment
) -> PolicyResult:
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig
    from harbor.trial.trial import Trial

    name = _trial_name(spec.task.name, spec.policy)
    config = TrialConfig(
        task=TaskConfig(path=spec.task.resolve(), source=root.resolve().name),
        trial_name=name,
        trials_dir=job_dir,
        agent=AgentConfig(**spec.agent),
        environment=EnvironmentConfig(**environment.config_kwargs()),
        job_id=job_id,
    )
    async with slots.slot(long=spec.long):
        try:
            trial = await Trial.create(config)
            outcome = await trial.run()
        except Exception as exc:  # a task Harbor cannot load or run: report it, check the rest
            return PolicyResult(spec.policy, None, spec.expected, spec.attack, f"{type(exc).__name__}: {exc}")
    sink.append(outcome)
    return judge(spec.policy, spec.expected, spec.attack, outcome, job_dir / name)


def _trial_name(task: str, policy: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{task}__{policy}")
