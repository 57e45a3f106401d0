"""check: prove every exported task solvable by its reference, without Docker.

For each task, Harbor's trial flow is replayed at the task's real paths
(``/app``, ``/tests``, ``/logs/verifier``, ``/solution``) inside bubblewrap:
the agent's ``/app`` is built from the Dockerfile's COPY lines, a policy acts
as the agent's unprivileged user, then the verifier runs ``tests/test.sh`` as
root and ``/logs/verifier/reward.json`` is read the way Harbor reads it.

- separate mode: agent and verifier get two sandboxes; only the deliverable
  crosses, copied as a regular file (Harbor's artifact collection).
- shared mode: one sandbox for both phases, like one container: whatever the
  agent left running is still running when ``/tests`` is uploaded and scored.

Policies (:mod:`orharbor.policies`): the oracle must score 1.0, the naive
baseline its formula value (0.0), no deliverable -1.0; with ``attacks=True``
every attack of :mod:`orharbor.attacks` must score -1.0 without crashing the
verifier.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from orharbor.policies import Policy, deliverable_paths, reference_policies
from orharbor.sandbox import (MODELLING_PACKAGES, SOLVER_PACKAGES, SandboxUnavailable, Venv, build_venv,
                              require_bwrap, run_sandboxed)
from orharbor.tables import columns

#: The agent's user inside the sandbox (the Dockerfile's ``agent``).
AGENT_UID = 1000
TOLERANCE = 1e-9
#: The container outlives test.sh before Harbor reads the reward: so does the sandbox,
#: giving anything left running the chance to tamper with the result.
LINGER_S = 0.3


@dataclass
class PolicyResult:
    """Reward one policy earned on one task, and what was expected."""

    policy: str
    reward: float | None
    expected: float
    attack: bool = False
    error: str | None = None
    verifier_crashed: bool = False

    @property
    def ok(self) -> bool:
        if self.reward is None or self.verifier_crashed:
            return False
        return abs(self.reward - self.expected) <= TOLERANCE


@dataclass
class CheckResult:
    """The outcome of checking one task."""

    task: str
    level: int
    mode: str
    policies: list[PolicyResult] = field(default_factory=list)
    error: str | None = None

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


def find_tasks(root: Path) -> list[Path]:
    """Task directories under ``root`` (``root`` itself if it is one)."""
    if (root / "task.toml").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/task.toml"))


def check_tasks(root: Path, jobs: int = 1, attacks: bool = False,
                only: tuple[str, ...] = ()) -> list[CheckResult]:
    """Check every task under ``root``, ``jobs`` at a time; ``only`` limits the policies by name."""
    bwrap = require_bwrap()
    tasks = find_tasks(root)
    if not tasks:
        raise SandboxUnavailable(f"no task directories (with task.toml) under {root}")
    with tempfile.TemporaryDirectory(prefix="orharbor-check-") as scratch:
        venv = build_venv(Path(scratch) / "solver-venv", SOLVER_PACKAGES)
        modelling = (build_venv(Path(scratch) / "modelling-venv", MODELLING_PACKAGES)
                     if any(_is_modelling(t) for t in tasks) else None)
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(lambda t: check_task(t, bwrap, venv, attacks, only, modelling), tasks))


def _is_modelling(task: Path) -> bool:
    try:
        return json.loads((task / "tests" / "task.json").read_text()).get("kind") == "modelling"
    except (OSError, ValueError, AttributeError):
        return False


def task_policies(task: Path, test_config: dict, attacks: bool) -> list[Policy]:
    """The reference policies, then the attack suite when asked for."""
    policies = reference_policies(task, test_config)
    if attacks:
        from orharbor.attacks import attack_policies

        policies += attack_policies(task, test_config)
    return policies


def check_task(task: Path, bwrap: str, venv: Venv, attacks: bool = False,
               only: tuple[str, ...] = (), modelling: Venv | None = None) -> CheckResult:
    """Run every policy on one task."""
    try:
        config = tomllib.loads((task / "task.toml").read_text())
        test_config = json.loads((task / "tests" / "task.json").read_text())
        policies = task_policies(task, test_config, attacks)
    except (OSError, ValueError, KeyError) as exc:
        return CheckResult(task.name, 0, "?", error=f"unreadable task: {exc}")
    mode = config.get("verifier", {}).get("environment_mode", "shared")
    result = CheckResult(task.name, test_config.get("level", 0), mode)
    for policy in policies:
        if only and policy.name not in only:
            continue
        try:
            got, error, crashed = run_policy(task, policy, config, bwrap, venv, modelling)
        except Exception as exc:  # report, don't crash the whole check
            got, error, crashed = None, f"{type(exc).__name__}: {exc}", False
        result.policies.append(PolicyResult(policy.name, got, policy.expected, policy.attack, error, crashed))
    return result


def run_policy(task: Path, policy: Policy, config: dict, bwrap: str, venv: Venv,
               modelling: Venv | None = None) -> tuple[float | None, str | None, bool]:
    """One trial of ``policy``: (reward as Harbor reads it, first error, verifier crashed).

    ``modelling`` is the venv mounted as the agent's ``/usr/local`` in modelling tasks.
    """
    separate = config.get("verifier", {}).get("environment_mode", "shared") == "separate"
    agent_timeout = float(config.get("agent", {}).get("timeout_sec", 600.0))
    verifier_timeout = float(config.get("verifier", {}).get("timeout_sec", 600.0))
    test_config = json.loads((task / "tests" / "task.json").read_text())
    deliverables = [path.removeprefix("/app/") for path in deliverable_paths(test_config)]
    local = None
    if test_config.get("kind") == "modelling":
        if modelling is None:
            raise SandboxUnavailable("a modelling task needs the modelling venv (build_venv with MODELLING_PACKAGES)")
        local = modelling
    with tempfile.TemporaryDirectory(prefix="orharbor-trial-") as tmp:
        agent = Path(tmp) / "agent"
        _make_root(agent)
        populate_app(task / "environment", agent / "app")
        act(policy, agent / "app")
        _chown_tree(agent / "app", AGENT_UID)
        binds = {"/app": agent / "app", "/logs": agent / "logs", "/home/agent": agent / "home"}
        ro_binds = {"/solution": task / "solution"} if policy.use_solution else {}
        agent_cmd = ["setpriv", f"--reuid={AGENT_UID}", f"--regid={AGENT_UID}", "--clear-groups",
                     "--inh-caps=-all", "bash", "-c", policy.agent_script or "true"]
        if separate:
            proc = run_sandboxed(bwrap, venv, binds, ro_binds, agent_cmd, agent_timeout, local)
            if policy.agent_script and not policy.attack and proc.returncode != 0:
                return None, _agent_failed(policy, proc.returncode, proc.stderr), False
            verifier = Path(tmp) / "verifier"
            _make_root(verifier)
            for deliverable in deliverables:
                collect_artifact(agent / "app" / deliverable, verifier / "app" / deliverable)
            shutil.copytree(task / "tests", verifier / "tests")
            proc = run_sandboxed(bwrap, venv, {"/app": verifier / "app", "/logs": verifier / "logs",
                                               "/tests": verifier / "tests"}, {},
                                 ["bash", "-c", f"bash /tests/test.sh; sleep {LINGER_S}"], verifier_timeout)
            logs = verifier / "logs" / "verifier"
        else:
            # One sandbox, two phases: /tests appears only after the agent's script has ended.
            upload = Path(tmp) / "upload"
            upload.mkdir(mode=0o700)
            shutil.copytree(task / "tests", upload / "tests")
            (Path(tmp) / "tests").mkdir(mode=0o755)
            driver = ('"$@"; status=$?; echo "agent-exit=$status" >&2; '
                      f"cp -a /.orh-upload/tests/. /tests/ && bash /tests/test.sh; sleep {LINGER_S}")
            proc = run_sandboxed(bwrap, venv, {**binds, "/tests": Path(tmp) / "tests", "/.orh-upload": upload},
                                 ro_binds, ["bash", "-c", driver, "driver", *agent_cmd],
                                 agent_timeout + verifier_timeout, local)
            status = re.search(r"agent-exit=(\d+)", proc.stderr)
            if policy.agent_script and not policy.attack and (status is None or status.group(1) != "0"):
                return None, _agent_failed(policy, int(status.group(1)) if status else None, proc.stderr), False
            logs = agent / "logs" / "verifier"
        value, error = read_reward(logs)
        details = _read_details(logs)
        crashed = "verifier failed" in proc.stdout or details is None or "traceback" in details
        if value is None:
            return None, f"{error} (test.sh exit {proc.returncode}): {proc.stdout[-300:]} {proc.stderr[-300:]}", crashed
        if details and "traceback" in details:
            error = details["traceback"][-500:]
        elif details and policy.name != "nothing":
            error = first_error(details)
        return value, error, crashed


def _agent_failed(policy: Policy, code: int | None, stderr: str) -> str:
    return f"`{policy.agent_script}` failed (exit {code}): {stderr[-400:].strip()}"


def act(policy: Policy, app: Path) -> None:
    """Put the policy's files, symlinks and sparse files into the agent's /app."""
    for name, data in policy.files.items():
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        (app / name).write_bytes(data)
    for name, target in policy.symlinks.items():
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, app / name)
    for name, (head, size) in policy.sparse_files.items():
        with open(app / name, "wb") as f:
            f.write(head)
            f.truncate(size)


def read_reward(logs: Path) -> tuple[float | None, str | None]:
    """The reward as Harbor reads it: reward.json if present, else reward.txt."""
    for name in ("reward.json", "reward.txt"):
        path = logs / name
        if not os.path.lexists(path):
            continue
        if path.is_symlink() or not path.is_file():
            return None, f"{name} is not a regular file"
        text = path.read_text(errors="replace")
        try:
            value = json.loads(text).get("reward") if name == "reward.json" else float(text)
        except (ValueError, AttributeError):
            return None, f"{name} is not readable: {text[:80]!r}"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None, f"{name} holds no finite reward: {value!r}"
        return float(value), None
    return None, "no reward.json"


def _read_details(logs: Path) -> dict | None:
    path = logs / "details.json"
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError:
        return None


def first_error(details: dict) -> str | None:
    """The verifier's own error, or that of the first failed evaluation instance."""
    if details.get("error"):
        return str(details["error"])
    for row in details.get("instances", []):
        if row.get("error"):
            return f"instance {row.get('index')}: {row['error']} {row.get('stderr_tail', '')[-300:]}".strip()
    return None


def populate_app(environment: Path, app: Path) -> None:
    """Replay the agent Dockerfile's ``COPY src /app/...`` lines into ``app``."""
    for line in (environment / "Dockerfile").read_text().splitlines():
        parts = shlex.split(line) if line.startswith("COPY ") else []
        if len(parts) != 3 or not parts[2].startswith("/app"):
            continue
        source, target = environment / parts[1], app / parts[2][len("/app"):].lstrip("/")
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def collect_artifact(source: Path, target: Path) -> None:
    """Harbor's artifact collection: a regular file is copied; links and specials are skipped."""
    if source.is_symlink() or not source.is_file():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def _make_root(root: Path) -> None:
    """A trial's host folders; the log folders are world-writable, as Harbor leaves them."""
    for sub in ("app", "home", "logs/verifier", "logs/agent", "logs/artifacts"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for sub in ("logs", "logs/verifier", "logs/agent", "logs/artifacts"):
        (root / sub).chmod(0o777)
    os.chown(root / "home", AGENT_UID, AGENT_UID)


def _chown_tree(root: Path, uid: int) -> None:
    os.chown(root, uid, uid)
    for path in root.rglob("*"):
        os.lchown(path, uid, uid)


def format_table(results: list[CheckResult]) -> str:
    """A fixed-width table: task, level, mode, the three reference policies, attacks, status."""
    header = ["task", "level", "mode", "oracle", "naive/wrong", "nothing", "attacks", "status"]
    rows = [header]
    for r in results:
        by_name = {p.policy: p for p in r.policies}
        cells = [r.task, str(r.level or "-"), r.mode]
        for name in ("oracle", "naive", "nothing"):
            p = by_name.get(name) or (by_name.get("wrong") if name == "naive" else None)
            cells.append("-" if p is None or p.reward is None else f"{p.reward:+.3f}")
        attacks = [p for p in r.policies if p.attack]
        cells.append(f"{sum(p.ok for p in attacks)}/{len(attacks)} held" if attacks else "-")
        cells.append("ok" if r.ok else "FAIL")
        rows.append(cells)
    return columns(rows)


def format_attacks(results: list[CheckResult]) -> str:
    """One row per attack: on how many tasks it was held to -1.0 without a verifier crash."""
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
