"""Policies: what a simulated agent does in a task, and the reward it must get.

``orharbor check`` runs the three reference policies on every task (oracle,
naive, nothing); ``orharbor check --attacks`` adds the attack suite of
:mod:`orharbor.attacks`. A policy acts like an agent would: it writes files
into ``/app`` (as the agent's user), runs a shell script as that user during
the agent phase, or both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from orharbor.verifiers.reward import FAIL, mean_reward, reward


@dataclass(frozen=True)
class Policy:
    """One simulated agent behaviour and the reward a sound verifier gives it."""

    name: str
    expected: float
    description: str = ""
    files: dict[str, bytes] = field(default_factory=dict)      # /app-relative path -> bytes
    symlinks: dict[str, str] = field(default_factory=dict)     # /app-relative path -> target
    sparse_files: dict[str, tuple[bytes, int]] = field(default_factory=dict)  # path -> (head, size)
    agent_script: str | None = None                            # bash, run as the agent user in /app
    use_solution: bool = False                                 # mount solution/ at /solution (oracle)
    attack: bool = False


def deliverable_name(test_config: dict) -> str:
    """The deliverable's path relative to /app (solution.json or solve.py)."""
    return test_config["deliverable"].removeprefix("/app/")


def naive_reward(test_config: dict) -> float:
    """What the reward formula gives the naive baseline itself (0.0 unless naive == reference)."""
    if test_config["level"] == 1:
        return reward(test_config["naive"], test_config["naive"], test_config["reference"])
    return mean_reward([reward(c["naive"], c["naive"], c["reference"]) for c in test_config["eval"]])


def reference_policies(task: Path, test_config: dict) -> list[Policy]:
    """Oracle (1.0), naive baseline (its formula value) and no deliverable (-1.0)."""
    name = deliverable_name(test_config)
    naive = (task / "solution" / "naive" / Path(name).name).read_bytes()
    return [
        Policy("oracle", 1.0, "solution/solve.sh, the OR-Tools reference", agent_script="bash /solution/solve.sh",
               use_solution=True),
        Policy("naive", naive_reward(test_config), "the naive baseline's deliverable", files={name: naive}),
        Policy("nothing", FAIL, "no deliverable at all"),
    ]
