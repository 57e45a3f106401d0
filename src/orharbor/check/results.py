"""What a check found: the reward each policy earned on a task, read from Harbor's trial result and folder."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from orharbor.verifiers.safe_json import BadOutput, read_regular_file

#: How far a reference policy's reward may stray from the one it must earn.
TOLERANCE = 1e-9


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
    #: The task whose trial this outcome is, when it is another task of this one's attack group; None: this one.
    ran_on: str | None = None

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
    level: int  # 1 or 2 for an algorithm task, else 0
    mode: str
    kind: str = "algorithm"  # the task kind's family: algorithm or modelling
    policies: list[PolicyResult] = field(default_factory=list)
    error: str | None = None
    ended_s: float = 0.0  # when its last trial ended, from the start of the check
    job_dir: Path | None = None  # the kept Harbor job folder holding its trials
    #: The task its group-scope attacks ran on (itself included); None when they ran on it alone.
    attack_group: str | None = None

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
            + (
                f" when run on {p.ran_on}, which shares this task's images, verifier and configuration"
                if p.ran_on
                else ""
            )
            + (f": {p.error}" if p.error else "")
            for p in bad
        )


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
    return PolicyResult(
        policy, float(reward) if reward is not None else None, expected, attack, error, crashed, trial_dir
    )


def first_error(details: dict) -> str | None:
    """The verifier's own error, or that of the first failed evaluation instance.

    A hidden instance's row holds only a fixed reason; the program's own words
    (its stderr) come from its run on the public example, when that failed too.
    """
    if details.get("error"):
        return str(details["error"])
    example = details.get("example")
    if not isinstance(example, dict):
        example = {}
    for row in details.get("instances", []) or []:
        if isinstance(row, dict) and row.get("error"):
            said = str(example.get("stderr_tail") or "")[-300:] if example.get("error") else ""
            return f"instance {row.get('index')}: {row['error']} {said}".strip()
    return None


def _read_details(path: Path) -> dict | None:
    """details.json as a dict; None if it is missing, not a regular file, or not a JSON object."""
    try:
        value = json.loads(read_regular_file(str(path)))
    except (BadOutput, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace") if path.is_file() and not path.is_symlink() else ""
    except OSError:
        return ""
