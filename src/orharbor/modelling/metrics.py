"""Modelling metrics: execution rate, accuracy and silent failure rate.

- execution rate: share of attempts whose code ran and wrote a well-formed
  answer. In a RetailOpt task that is the verifier's own run of the agent's
  ``model.py`` on the scenario's data: it finished within the task's limits and
  wrote a well-formed ``answer.json`` (an answer the agent typed is never
  graded, so it never counts as executed); in a spec task, every required
  output file was there and well-formed;
- accuracy: share of attempts whose answer is correct;
- silent failure rate: share of attempts that executed but whose answer is
  wrong (the code ran, nothing complained, the number is off).

All three are over every attempt, so a trial that crashed counts as not
executed. Attempts come from a Harbor job folder (each trial's ``result.json``,
and the verifier's ``executed`` and ``correct`` from ``verifier/details.json``
beside it) or from a folder of answer files graded against RetailOpt rows
(answers written by runs of the models made elsewhere: there a file stands for
its run).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from orharbor.tables import columns
from orharbor.verifiers.modelling import score_answer


@dataclass(frozen=True)
class Attempt:
    """One graded attempt at one modelling task."""

    task: str
    agent: str
    executed: bool
    correct: bool

    @property
    def family(self) -> str:
        """RetailOpt family (F1..F8) from the task name, else the task's source."""
        found = re.search(r"retail-(f\d+)-", self.task)
        return found.group(1).upper() if found else "spec"


def attempts_from_jobs(folder: Path) -> list[Attempt]:
    """Every modelling trial under a Harbor jobs folder (trials of algorithm tasks are left out)."""
    attempts = []
    for result in sorted(folder.rglob("result.json")):
        data = _json_object(result)
        if data is None or "task_name" not in data or "trial_name" not in data:
            continue  # a job-level result, not a trial's
        graded = trial_outcome(result.parent, data)
        if graded is None:
            continue  # an algorithm task
        info = data.get("agent_info") or {}
        model = (info.get("model_info") or {}).get("name")
        agent = f"{info.get('name', '?')}" + (f" ({model})" if model else "")
        attempts.append(Attempt(str(data["task_name"]).removeprefix("orharbor/"), agent, *graded))
    return attempts


def trial_outcome(trial: Path, result: dict) -> tuple[bool, bool] | None:
    """(executed, correct) of one trial, or None for a trial of an algorithm task.

    Harbor downloads the verifier's whole log folder into ``<trial>/verifier/``,
    so details.json is there. Jobs of exports before it held every figure read
    them from reward.json; a trial whose verifier never ran counts as not executed.
    """
    details = _json_object(trial / "verifier" / "details.json")
    if details is not None:
        if details.get("kind") != "modelling":
            return None
        return bool(details.get("executed")), bool(details.get("correct"))
    rewards = (result.get("verifier_result") or {}).get("rewards") or {}
    if "reward" in rewards and "executed" not in rewards:
        return None
    return bool(rewards.get("executed")), bool(rewards.get("correct"))


def _json_object(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def attempts_from_answers(folder: Path, rows: list[dict], agent: str = "answers") -> list[Attempt]:
    """Grade ``<scenario_id>.json`` (or ``<scenario_id>/answer.json``) in ``folder`` against each row."""
    attempts = []
    for row in rows:
        path = folder / f"{row['scenario_id']}.json"
        if not path.exists():
            path = folder / row["scenario_id"] / "answer.json"
        _, details = score_answer(str(path), {"status": row["reference_status"],
                                              "objective": row["reference_objective"], "rel_tol": row["rel_tol"]})
        attempts.append(Attempt(row["id"], agent, bool(details["executed"]), bool(details["correct"])))
    return attempts


def summarise(attempts: list[Attempt], by: str = "agent") -> list[dict]:
    """One row per group (``agent``, ``family`` or ``all``): counts and the three rates."""
    groups: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        key = {"agent": attempt.agent, "family": attempt.family, "all": "all"}[by]
        groups.setdefault(key, []).append(attempt)
    table = []
    for key in sorted(groups):
        items = groups[key]
        n = len(items)
        executed = sum(a.executed for a in items)
        correct = sum(a.correct for a in items)
        silent = sum(a.executed and not a.correct for a in items)
        table.append({by: key, "attempts": n, "execution_rate": executed / n, "accuracy": correct / n,
                      "silent_failure_rate": silent / n})
    return table


def format_summary(table: list[dict], by: str) -> str:
    """A fixed-width table of :func:`summarise`'s rows."""
    rows = [[by, "attempts", "execution rate", "accuracy", "silent failures"]]
    for r in table:
        rows.append([str(r[by]), str(r["attempts"]), f"{r['execution_rate']:.1%}", f"{r['accuracy']:.1%}",
                     f"{r['silent_failure_rate']:.1%}"])
    return columns(rows)
