"""check: prove every exported task solvable by its reference, through Harbor's own trial code.

Each task runs as real Harbor trials (``Trial.create(...).run()``) on
:class:`orharbor.harbor_env.BubblewrapEnvironment`, at the task's real paths, in
whichever verifier mode its task.toml asks for:

- Harbor's ``oracle`` agent (``solution/solve.sh``) must score 1.0;
- :class:`orharbor.check.agents.NaiveAgent` (``solution/naive/``) must score 0.0;
- Harbor's ``nop`` agent (no answer) the failure reward: -1.0, or 0.0 in modelling tasks;
- with ``attacks=True``, every attack of :mod:`orharbor.attacks`, acted out by
  :class:`orharbor.check.agents.PolicyAgent`, no more than the failure reward,
  without crashing the verifier.

A reward is read from Harbor's own trial result, and ``reward.json`` must hold
the one key ``reward``. The trials go in one Harbor job folder (trial folders,
``config.json``, ``result.json`` with Harbor's own metrics), kept when a jobs
folder is given.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
import time
import tomllib
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

from orharbor.sandbox import SandboxUnavailable, require_bwrap
from orharbor.tables import columns
from orharbor.verifiers.removal import remove_path
from orharbor.verifiers.reward import FAIL

ENVIRONMENT = "orharbor.harbor_env:BubblewrapEnvironment"
NAIVE_AGENT = "orharbor.check.agents:NaiveAgent"
POLICY_AGENT = "orharbor.check.agents:PolicyAgent"
TOLERANCE = 1e-9
REFERENCE_POLICIES = ("oracle", "naive", "nothing")

__all__ = ["CheckResult", "PolicyResult", "SandboxUnavailable", "check_tasks", "find_tasks", "format_attacks",
           "format_header", "format_line"]


@dataclass
class PolicyResult:
    """Reward one policy earned on one task, and what was expected."""

    policy: str
    reward: float | None
    expected: float
    attack: bool = False
    error: str | None = None
    verifier_crashed: bool = False
    trial_dir: Path | None = None

    @property
    def ok(self) -> bool:
        if self.reward is None or self.verifier_crashed:
            return False
        if self.attack:
            return self.reward <= self.expected + TOLERANCE
        return abs(self.reward - self.expected) <= TOLERANCE


@dataclass
class CheckResult:
    """The outcome of checking one task."""

    task: str
    level: int
    mode: str
    kind: str = "algorithm"
    policies: list[PolicyResult] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0  # when its last trial ended, from the start of the check
    job_dir: Path | None = None  # the kept Harbor job folder holding its trials

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.policies) and all(p.ok for p in self.policies)

    def problem_text(self) -> str:
        if self.error:
            return self.error
        bad = [p for p in self.policies if not p.ok]
        return "; ".join(
            f"{p.policy} scored {p.reward} (expected {p.expected:g})"
            + (" and crashed the verifier" if p.verifier_crashed else "")
            + (f": {p.error}" if p.error else "") for p in bad)


@dataclass(frozen=True)
class _Trial:
    """One trial to run: a task, a policy, the agent that acts it out, and the expected reward."""

    task: Path
    policy: str
    expected: float
    attack: bool
    agent: dict


def find_tasks(root: Path) -> list[Path]:
    """Task directories under ``root`` (``root`` itself if it is one)."""
    if (root / "task.toml").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/task.toml"))


def check_tasks(root: Path, jobs: int = 1, attacks: bool = False, only: tuple[str, ...] = (),
                jobs_dir: Path | None = None, on_result: Callable[[CheckResult], None] | None = None
                ) -> list[CheckResult]:
    """Check every task under ``root`` with ``jobs`` trials at a time.

    ``only`` limits the policies by name; ``jobs_dir`` keeps the Harbor job
    folder there (else it is removed); ``on_result`` is called with each task's
    result as soon as its last trial ends.
    """
    require_bwrap()
    tasks = find_tasks(root)
    if not tasks:
        raise SandboxUnavailable(f"no task directories (with task.toml) under {root}")
    os.environ.setdefault("HARBOR_TELEMETRY", "0")  # nothing leaves this machine
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    keep = jobs_dir is not None
    base = Path(jobs_dir) if keep else Path(tempfile.mkdtemp(prefix="orharbor-check-"))
    job_dir = _new_job_dir(base)
    try:
        results = asyncio.run(_check_all(tasks, root, job_dir, jobs, attacks, only, on_result))
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


async def _check_all(tasks: list[Path], root: Path, job_dir: Path, jobs: int, attacks: bool,
                     only: tuple[str, ...], on_result: Callable[[CheckResult], None] | None) -> list[CheckResult]:
    from orharbor.check.jobfolder import write_job_files

    started = datetime.now()
    job_id = uuid.uuid4()
    semaphore = asyncio.Semaphore(jobs)
    results: dict[Path, CheckResult] = {}
    trial_results: list = []

    start = time.monotonic()

    async def one_task(task: Path) -> None:
        result = await _check_task(task, root, job_dir, job_id, semaphore, attacks, only, trial_results)
        result.seconds = time.monotonic() - start
        results[task] = result
        if on_result is not None:
            on_result(result)

    await asyncio.gather(*(one_task(task) for task in tasks))
    write_job_files(job_dir, job_id, started, root, trial_results, [results[t] for t in tasks])
    return [results[task] for task in tasks]


async def _check_task(task: Path, root: Path, job_dir: Path, job_id: uuid.UUID, semaphore: asyncio.Semaphore,
                      attacks: bool, only: tuple[str, ...], sink: list) -> CheckResult:
    try:
        config = tomllib.loads((task / "task.toml").read_text())
        test_config = json.loads((task / "tests" / "task.json").read_text())
    except (OSError, ValueError) as exc:
        return CheckResult(task.name, 0, "?", error=f"unreadable task: {exc}")
    kind = "modelling" if test_config.get("kind") == "modelling" else "algorithm"
    mode = config.get("verifier", {}).get("environment_mode", "shared")
    result = CheckResult(task.name, int(test_config.get("level", 0) or 0), mode, kind)
    if config.get("agent", {}).get("network_mode", "public") != "public":
        result.error = ("exported with an agent network allowlist, which the bubblewrap environment cannot "
                        "enforce (it cannot switch networks after start, and Harbor refuses the trial); check an "
                        "export of the same rows with --agent-network public: scoring does not depend on it")
        return result
    try:
        trials = [t for t in task_trials(task, test_config, attacks) if not only or t.policy in only]
    except (OSError, ValueError, KeyError) as exc:
        result.error = f"unreadable task: {exc}"
        return result
    outcomes = await asyncio.gather(*(_run_trial(t, root, job_dir, job_id, semaphore, sink) for t in trials))
    result.policies = list(outcomes)
    return result


def task_trials(task: Path, test_config: dict, attacks: bool) -> list[_Trial]:
    """The reference trials (oracle, naive, nothing), then one per attack when asked for."""
    modelling = test_config.get("kind") == "modelling"
    fail = 0.0 if modelling else FAIL
    trials = [
        _Trial(task, "oracle", 1.0, False, {"name": "oracle"}),
        _Trial(task, "naive", 0.0, False, {"import_path": NAIVE_AGENT, "kwargs": {"task_dir": str(task.resolve())}}),
        _Trial(task, "nothing", fail, False, {"name": "nop"}),
    ]
    if attacks:
        from orharbor.attacks import attack_policies
        from orharbor.check.agents import policy_to_kwargs

        for policy in attack_policies(task, test_config):
            trials.append(_Trial(task, policy.name, policy.expected, True,
                                 {"import_path": POLICY_AGENT, "kwargs": {"policy": policy_to_kwargs(policy)}}))
    return trials


async def _run_trial(spec: _Trial, root: Path, job_dir: Path, job_id: uuid.UUID, semaphore: asyncio.Semaphore,
                     sink: list) -> PolicyResult:
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig
    from harbor.trial.trial import Trial

    name = _trial_name(spec.task.name, spec.policy)
    config = TrialConfig(task=TaskConfig(path=spec.task.resolve(), source=root.resolve().name),
                         trial_name=name, trials_dir=job_dir, agent=AgentConfig(**spec.agent),
                         environment=EnvironmentConfig(import_path=ENVIRONMENT), job_id=job_id)
    async with semaphore:
        try:
            trial = await Trial.create(config)
            outcome = await trial.run()
        except Exception as exc:  # a task Harbor cannot load or run: report it, check the rest
            return PolicyResult(spec.policy, None, spec.expected, spec.attack, f"{type(exc).__name__}: {exc}")
    sink.append(outcome)
    return judge(spec.policy, spec.expected, spec.attack, outcome, job_dir / name)


def _trial_name(task: str, policy: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{task}__{policy}")


def judge(policy: str, expected: float, attack: bool, outcome, trial_dir: Path) -> PolicyResult:
    """The reward Harbor recorded for one trial, and what went wrong if anything did."""
    rewards = outcome.verifier_result.rewards if outcome.verifier_result is not None else None
    reward = rewards.get("reward") if rewards else None
    error = None
    if outcome.exception_info is not None:
        error = f"{outcome.exception_info.exception_type}: {outcome.exception_info.exception_message[-400:]}"
    if rewards is not None and set(rewards) != {"reward"}:
        error = f"reward.json holds {sorted(rewards)}, not the one key 'reward'"
        reward = None
    verifier = trial_dir / "verifier"
    details = _read_details(verifier / "details.json")
    stdout = _read_text(verifier / "test-stdout.txt")
    crashed = rewards is not None and (details is None or "traceback" in details or "verifier failed" in stdout)
    if error is None and details is not None:
        if "traceback" in details:
            error = str(details["traceback"])[-500:]
        elif policy != "nothing":
            error = first_error(details)
    exit_code = trial_dir / "agent" / "exit-code.txt"
    if policy == "oracle" and exit_code.is_file():
        error = f"solution/solve.sh exited {exit_code.read_text().strip()}; {error or ''}".strip("; ")
    return PolicyResult(policy, float(reward) if reward is not None else None, expected, attack, error, crashed,
                        trial_dir)


def first_error(details: dict) -> str | None:
    """The verifier's own error, or that of the first failed evaluation instance."""
    if details.get("error"):
        return str(details["error"])
    for row in details.get("instances", []) or []:
        if isinstance(row, dict) and row.get("error"):
            return f"instance {row.get('index')}: {row['error']} {str(row.get('stderr_tail', ''))[-300:]}".strip()
    return None


def _read_details(path: Path) -> dict | None:
    if path.is_symlink() or not path.is_file():
        return None
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace") if path.is_file() and not path.is_symlink() else ""
    except OSError:
        return ""


def _cell(p: PolicyResult | None) -> str:
    return "-" if p is None or p.reward is None else f"{p.reward:+.3f}"


def _cells(r: CheckResult) -> list[str]:
    by_name = {p.policy: p for p in r.policies}
    cells = [r.task, str(r.level or "-") if r.kind == "algorithm" else "model", r.mode]
    cells += [_cell(by_name.get(name)) for name in REFERENCE_POLICIES]
    attacks = [p for p in r.policies if p.attack]
    cells.append(f"{sum(p.ok for p in attacks)}/{len(attacks)} held" if attacks else "-")
    cells.append("ok" if r.ok else "FAIL")
    return cells


HEADER = ["task", "level", "mode", "oracle", "naive", "nothing", "attacks", "status"]


def _row(cells: list[str], task_width: int, last: str) -> str:
    return (f"{cells[0].ljust(task_width)}  {cells[1]:>5}  {cells[2]:<8}  {cells[3]:>7}  {cells[4]:>7}  "
            f"{cells[5]:>7}  {cells[6]:>12}  {cells[7]:<4}  {last:>8}")


def format_line(result: CheckResult, task_width: int) -> str:
    """One task's line, printed as soon as the task is done."""
    return _row(_cells(result), task_width, f"{result.seconds:6.1f} s")


def format_header(task_width: int) -> str:
    """The header above :func:`format_line` lines."""
    return _row(HEADER, task_width, "done at")


def format_attacks(results: list[CheckResult]) -> str:
    """One row per attack: on how many tasks it was held to the failure reward without a verifier crash."""
    outcome: dict[str, list[PolicyResult]] = {}
    for r in results:
        for p in r.policies:
            if p.attack:
                outcome.setdefault(p.policy, []).append(p)
    rows = [["attack", "held", "best reward"]]
    for name, tries in outcome.items():
        rewards = [p.reward for p in tries if p.reward is not None]
        rows.append([name, f"{sum(p.ok for p in tries)}/{len(tries)}",
                     f"{max(rewards):+.3f}" if rewards else "-"])
    return columns(rows)
