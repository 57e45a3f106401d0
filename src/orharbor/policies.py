"""Policies: what a simulated agent does in a task, and the reward it must get.

``orharbor check`` runs the three reference policies on every task (oracle,
naive, nothing); ``orharbor check --attacks`` adds the attack suite of
:mod:`orharbor.attacks`. A policy acts like an agent would: it writes files
into ``/app`` (as the agent's user), runs a shell script as that user during
the agent phase, or both.
"""

from __future__ import annotations

import json
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


def deliverable_paths(test_config: dict) -> list[str]:
    """Every file the agent hands over (Harbor artifacts): one for algorithm tasks, the answers for modelling."""
    return list(test_config["deliverables"]) if "deliverables" in test_config else [test_config["deliverable"]]


def naive_reward(test_config: dict) -> float:
    """What the reward formula gives the naive baseline itself (0.0 unless naive == reference)."""
    if test_config["level"] == 1:
        return reward(test_config["naive"], test_config["naive"], test_config["reference"])
    return mean_reward([reward(c["naive"], c["naive"], c["reference"]) for c in test_config["eval"]])


def reference_policies(task: Path, test_config: dict) -> list[Policy]:
    """Oracle (1.0), naive baseline (its formula value) and no deliverable (-1.0).

    Modelling tasks: oracle 1.0, a wrong answer 0.0 and no answer 0.0.
    """
    if test_config.get("kind") == "modelling":
        return modelling_policies(test_config)
    name = deliverable_name(test_config)
    naive = (task / "solution" / "naive" / Path(name).name).read_bytes()
    return [
        Policy("oracle", 1.0, "solution/solve.sh, the OR-Tools reference", agent_script="bash /solution/solve.sh",
               use_solution=True),
        Policy("naive", naive_reward(test_config), "the naive baseline's deliverable", files={name: naive}),
        Policy("nothing", FAIL, "no deliverable at all"),
    ]


def modelling_policies(test_config: dict) -> list[Policy]:
    """Oracle (the golden script or model, run in /app) 1.0; a wrong answer and no answer 0.0."""
    return [
        Policy("oracle", 1.0, "solution/solve.sh: the golden script or model, solved in /app",
               agent_script="bash /solution/solve.sh", use_solution=True),
        Policy("wrong", 0.0, "answers of the right shape with one value off", files=wrong_answer(test_config)),
        Policy("nothing", 0.0, "no answer at all"),
    ]


def wrong_answer(test_config: dict) -> dict[str, bytes]:
    """Well-formed answer files that miss the expected values (the last output, or the objective)."""
    grading = test_config["grading"]
    if grading["type"] == "answer":
        objective = grading["objective"] if grading["objective"] is not None else 0.0
        answer = {"status": grading["status"], "objective": objective * (1 + 100 * grading["rel_tol"]) + 1.0}
        if grading["status"] != "OPTIMAL":
            answer = {"status": "OPTIMAL", "objective": 0.0}
        return {grading["answer"].removeprefix("/app/"): json.dumps(answer).encode()}
    files = {}
    names = list(grading["outputs"])
    for name in names:
        expected = grading["outputs"][name]
        right = expected["text"] if "text" in expected else repr(expected["value"])
        if name == names[-1]:
            right = (expected["text"] + "0" if "text" in expected
                     else repr(expected["value"] * (1 + 100 * expected["rel_tol"]) + 100 * expected["abs_tol"] + 1))
        files[name] = (right + "\n").encode()
    return files
