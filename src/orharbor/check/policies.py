"""Policies: what a simulated agent does in a task, and the reward it must get.

``orharbor check --attacks`` acts out every attack of :mod:`orharbor.check.attacks`
as a Harbor agent (:class:`orharbor.check.agents.PolicyAgent`): it writes the
policy's files into ``/app`` and runs its shell script, both as the task's
agent user, during the agent phase. The reference policies are Harbor's own
``oracle`` and ``nop`` agents and :class:`orharbor.check.agents.NaiveAgent`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from orharbor.verifiers.contract import APP_DIR, Task

#: A policy's scope: what decides its outcome (see :attr:`Policy.scope`).
TASK, GROUP = "task", "group"


@dataclass(frozen=True)
class Policy:
    """One simulated agent behaviour and the reward a sound verifier gives it (at most)."""

    name: str
    expected: float
    description: str = ""
    files: dict[str, bytes] = field(default_factory=dict)  # /app-relative path -> bytes
    symlinks: dict[str, str] = field(default_factory=dict)  # /app-relative path -> target
    sparse_files: dict[str, tuple[bytes, int]] = field(default_factory=dict)  # path -> (head, size)
    agent_script: str | None = None  # bash, run as the agent user in /app
    attack: bool = False
    #: ``expected`` on the task's own reward scale, where the policy worked it out itself (the quality scale
    #: needs the objectives behind a reward); None: ``orharbor check`` converts ``expected``.
    expected_on_scale: float | None = None
    #: ``task``: its outcome depends on the task's instance. ``group``: only on the task's code and configuration
    #: (it hands in nothing built for the instance, or nothing the parser accepts), so ``orharbor check`` runs it
    #: once per group of tasks that share their images, verifier and configuration (:mod:`orharbor.check.attack_groups`).
    scope: str = TASK
    #: Its trial takes seconds more than most (it waits out a run's time limit, or builds folder chains):
    #: ``orharbor check`` starts such trials first, so that none of them is what a check waits for at its end.
    long: bool = False


def deliverable_name(task: Task) -> str:
    """The task's main deliverable relative to /app (solution.json, solve.py or model.py)."""
    return task.deliverable.removeprefix(f"{APP_DIR}/")
