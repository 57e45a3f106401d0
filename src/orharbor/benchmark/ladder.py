"""The calibration ladder: policies of known, increasing strength, scored by the benchmark's own verifier.

A benchmark is valid when its rewards spread: the naive answer scores 0, a
classic constructive rule well inside (0, 1), a local search on top of it
higher, a short OR-Tools run higher still, with room above 1.0 where the
reference is not optimal. The rungs, weakest first:

- ``naive``: the task's own naive answer (``solution/naive``): 0 by construction;
- ``rule``: the class's constructive rule (``problem_modules/<class>/ladder/rule.py``);
- ``search``: a local search from the rule's answer, for ``budget_s`` seconds: rule.py's code followed by
  ``ladder/search.py``, which holds only what the search adds (see
  :func:`orharbor.problem_modules.ladder_programs.program`);
- ``ortools``: the class's OR-Tools reference model at ``budget_s`` seconds, one thread
  (level 1 only: a level-2 task's interpreter has no OR-Tools unless exported with --allow-ortools).

Code that several classes' ``rule`` and ``search`` programs share (the routing classes' answer file and
local-search frame; the iterated local search loop of jobshop and wtardiness) is written once, in ``problem_modules/ladder_shared/NAME.py``: a rule.py with the line
``# ladder: shared NAME`` gets that file first in both its programs.

``rule`` and ``search`` are level-2 ``solve.py`` programs (standard library,
numpy and scipy), so at level 2 the task's verifier runs them in its sandbox
on the hidden instances; at level 1 they run here on ``/app/instance.json``
and their answer is handed in. Either way the reward is what
:func:`orharbor.local_verify.score` (the task's own verifier) gives.
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from statistics import fmean

from orharbor import problem_modules
from orharbor.exporter.task_folder import TaskFolder
from orharbor.local_verify import load_task, score
from orharbor.problem_modules.ladder_programs import (  # noqa: F401  (re-exported: the ladder's programs)
    BUDGET_LINE,
    SHARED_FOLDER,
    SHARED_LINE,
    LadderError,
    program,
    run_program,
)
from orharbor.report.stats import bootstrap_ci
from orharbor.report.tables import size_order
from orharbor.verifiers.reward import FAIL, reward

POLICIES = ("naive", "rule", "search", "ortools", "strong", "reference")
#: Rungs that run at level 1 only: a level-2 task's interpreter has neither OR-Tools nor PyVRP.
LEVEL1_ONLY = ("ortools", "strong")


@dataclass(frozen=True)
class Result:
    """One policy on one task: the reward, and for a published instance the gap of its answer to the best known."""

    task: str
    problem: str
    size: str
    level: int
    policy: str
    reward: float
    instance_rewards: tuple[float, ...]
    gap_bks: float | None = None
    error: str | None = None
    #: The reward of an answer at the reference solver's proved bound (level 1): the room above 1.0 there is.
    ceiling: float | None = None
    #: The quality figure (best known / objective, :mod:`orharbor.verifiers.quality`) per instance, where the
    #: task knows its best known values: the ladder's headline, uniform across classes.
    instance_qualities: tuple[float, ...] = ()


def applicable(problem: str, level: int, policy: str) -> bool:
    """Whether a rung runs on a task of this class and level (level-1-only rungs; strong only where a class has one)."""
    if policy in LEVEL1_ONLY and level != 1:
        return False
    return policy != "strong" or problem_modules.strong_solver(problem) is not None


def run_policy(task: Path, policy: str, budget_s: float) -> Result:
    """Score one policy on one exported algorithm task with the task's own verifier."""
    folder = TaskFolder(task)
    metadata = folder.validate().get("metadata", {})
    problem, size, level = metadata["problem"], metadata["size"], int(metadata["level"])
    load_task(folder)
    base = dict(task=task.name, problem=problem, size=size, level=level, policy=policy)
    with tempfile.TemporaryDirectory(prefix="orharbor-ladder-") as scratch_name:
        scratch = Path(scratch_name)
        try:
            answer = _answer(task, problem, level, policy, budget_s, scratch)
        except LadderError as exc:
            return Result(**base, reward=FAIL, instance_rewards=(), error=str(exc))
        reward, details = score(folder, answer)
    reward = details.get("orharbor_reward", reward)  # a --reward-scale unit export: the ladder reads orharbor's scale
    instances = tuple(float(row["reward"]) for row in details.get("instances", ()) if "reward" in row)
    qualities: tuple[float, ...] = ()
    if level == 2 and all("quality" in row for row in details.get("instances", ())):
        qualities = tuple(float(row["quality"]) for row in details.get("instances", ()))
    if not qualities and "quality" in details:
        qualities = (float(details["quality"]),)
    gap = None
    best = metadata.get("best_known")
    if level == 1 and best and details.get("feasible") and details.get("objective") is not None:
        gap = (float(details["objective"]) - best) / max(abs(best), 1.0)
    return Result(
        **base,
        reward=float(reward),
        instance_rewards=instances or (float(reward),),
        gap_bks=gap,
        error=details.get("error"),
        ceiling=ceiling(metadata),
        instance_qualities=qualities,
    )


def ceiling(metadata: dict) -> float | None:
    """The reward an answer at the reference's proved lower bound would earn (1.0 when the reference is optimal).

    Read from a level-1 task's metadata (reference, naive baseline, bound);
    None where no bound was recorded. Above 1.0 is room to beat the reference.
    """
    ref, naive, bound = metadata.get("reference"), metadata.get("baseline"), metadata.get("bound")
    if (
        not (isinstance(ref, (int, float)) and isinstance(naive, (int, float)) and isinstance(bound, (int, float)))
        or naive <= ref
    ):
        return None
    return reward(max(bound, 0.0), naive, ref)


def _answer(task: Path, problem: str, level: int, policy: str, budget_s: float, scratch: Path) -> Path:
    """The file the policy hands in: a solution.json (level 1) or a solve.py (level 2)."""
    if policy == "naive":
        return task / "solution" / "naive" / ("solution.json" if level == 1 else "solve.py")
    if policy == "reference":  # the task's own oracle: its stored reference answer, or its lookup solve.py
        return task / "solution" / ("solution.json" if level == 1 else "solve.py")
    if policy in LEVEL1_ONLY:
        if not applicable(problem, level, policy):
            raise LadderError(
                f"the {policy} rung runs at level 1 only, on classes that have one "
                "(a task's solve.py has neither OR-Tools nor PyVRP)"
            )
        module = problem_modules.get(problem)
        solve = module.reference if policy == "ortools" else problem_modules.strong_solver(problem)
        instance = json.loads((task / "environment" / "instance.json").read_text())
        solution, _ = solve(instance, time_limit_s=budget_s, workers=1)
        out = scratch / "solution.json"
        out.write_text(json.dumps(solution))
        return out
    if level == 2:
        source = scratch / "solve.py"
        source.write_text(program(problem, policy, budget_s))
        return source
    out = scratch / "solution.json"
    run_program(problem, policy, budget_s, task / "environment" / "instance.json", out, scratch)
    return out


#: A mean this close to 1 (or 0) counts as at the reference (or at naive) in the verdict.
TOLERANCE = 0.02


def algorithm_tasks(folder: Path, problems: list[str], level: int | None) -> list[Path]:
    """The algorithm tasks of an export, optionally of some classes or one level."""
    tasks = []
    for toml in sorted(folder.glob("*/task.toml")):
        metadata = TaskFolder(toml.parent).validate().get("metadata", {})
        if "problem" not in metadata or metadata.get("kind") == "modelling":
            continue
        if (problems and metadata["problem"] not in problems) or (level and metadata.get("level") != level):
            continue
        tasks.append(toml.parent)
    return tasks


def aggregate(results: list[Result], policies: list[str]) -> list[dict]:
    """One row per problem x size x level: per policy the mean, interval and count; the verdict."""
    groups: dict[tuple, dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        groups[(r.problem, r.size, r.level)][r.policy].append(r)
    rows = []
    for key in sorted(groups, key=lambda k: (k[0], size_order(k[0], k[1]), k[2])):
        row = {"problem": key[0], "size": key[1], "level": key[2], "policies": {}}
        ceilings = {r.task: r.ceiling for found in groups[key].values() for r in found if r.ceiling is not None}
        row["ceiling"] = fmean(ceilings.values()) if ceilings else None
        for policy in policies:
            found = groups[key].get(policy, [])
            values = [v for r in found for v in r.instance_rewards]
            if not values:
                continue
            gaps = [r.gap_bks for r in found if r.gap_bks is not None]
            qualities = [v for r in found for v in r.instance_qualities]
            row["policies"][policy] = rung_stats(
                values,
                qualities if len(qualities) == len(values) else [],
                fmean(gaps) if gaps else None,
                sorted({r.error for r in found if r.error})[:3],
            )
        row["headline"] = all("quality" in stat for stat in row["policies"].values()) and bool(row["policies"])
        row["verdict"] = separation_verdict(row["policies"]) if row["headline"] else verdict(row["policies"])
        rows.append(row)
    return rows


def rung_stats(
    rewards: list[float], qualities: list[float], gap_bks: float | None = None, errors: list[str] | None = None
) -> dict:
    """One rung of one tier: mean reward, its 95% interval and count, the gap to the best known, errors, and the
    quality figure's mean and interval (only when every instance has a quality)."""
    stats: dict[str, Any] = {
        "mean": fmean(rewards),
        "ci": bootstrap_ci(rewards),
        "n": len(rewards),
        "gap_bks": gap_bks,
        "errors": errors or [],
    }
    if qualities:
        stats["quality"] = {"mean": fmean(qualities), "ci": bootstrap_ci(qualities)}
    return stats


def verdict(stats: dict[str, dict]) -> str:
    """ok, or what the tier fails of the ladder's test."""
    means = [(p, stats[p]["mean"]) for p in POLICIES if p in stats]
    problems = []
    # Two chains of known strength: naive < rule < search (from the rule), and naive < rule < ortools; which of
    # search and ortools is stronger depends on the class (a hand-written search can beat a generic solver).
    for chain in (("naive", "rule", "search"), ("naive", "rule", "ortools")):
        found = [(p, stats[p]["mean"]) for p in chain if p in stats]
        for (weaker, low), (stronger, high) in zip(found, found[1:]):
            if high < low - TOLERANCE and f"{stronger} < {weaker}" not in problems:
                problems.append(f"{stronger} < {weaker}")
    rule = stats.get("rule", {}).get("mean")
    if rule is not None and not TOLERANCE < rule < 1 - TOLERANCE:
        problems.append("rule not inside (0, 1)")
    values = [m for p, m in means if p != "naive"]  # naive is 0 by construction
    if values and all(m >= 1 - TOLERANCE for m in values):
        problems.append("saturated")
    if values and all(m <= TOLERANCE for m in values):
        problems.append("dead")
    return "ok" if not problems else "; ".join(problems)


#: The rungs the headline figure must separate, weakest first, each pair with non-overlapping 95% intervals.
SEPARATED = ("naive", "rule", "search")
#: How far the reference's mean quality may fall below the search's: the ladder's search is a new run of the
#: rung the reference started from, and may by chance end a hair better.
REFERENCE_SLACK = 0.005


def separation_verdict(stats: dict[str, dict]) -> str:
    """ok, or what the tier fails of 1.1's test on the quality figure.

    naive < rule < search, each pair with non-overlapping 95% intervals (the
    weaker rung's upper end below the stronger's lower end); and the reference's
    mean at or above the search's (it starts from the search's answer, so no
    interval test there).
    """
    problems = []
    found = [(p, stats[p]["quality"]) for p in SEPARATED if p in stats]
    for (weaker, low), (stronger, high) in zip(found, found[1:]):
        if not low["ci"][1] < high["ci"][0]:
            problems.append(
                f"{weaker} and {stronger} overlap" if high["mean"] >= low["mean"] else f"{stronger} < {weaker}"
            )
    if "reference" in stats and "search" in stats:
        if stats["reference"]["quality"]["mean"] < stats["search"]["quality"]["mean"] - REFERENCE_SLACK:
            problems.append("reference < search")
    return "ok" if not problems else "; ".join(problems)


def table(rows: list[dict], policies: list[str]) -> list[list[str]]:
    """The ladder as cells, header first: mean [interval] n= per policy, the gap to the best known, the verdict."""
    header = ["problem", "size", "level", *policies, "gap best", "ceiling", "verdict"]
    out = [header]
    for row in rows:
        cells = [row["problem"], row["size"], str(row["level"])]
        for policy in policies:
            stat = row["policies"].get(policy)
            if stat is None:
                cells.append("-")
                continue
            ci = stat["ci"]
            if "quality" in stat:  # the headline: quality [interval], the reward beside it
                q = stat["quality"]
                cells.append(
                    f"{q['mean']:.3f} [{q['ci'][0]:.3f}, {q['ci'][1]:.3f}] r {stat['mean']:+.2f} n={stat['n']}"
                )
                continue
            cells.append(f"{stat['mean']:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}] n={stat['n']}")
        gaps = [(p, s["gap_bks"]) for p, s in row["policies"].items() if s.get("gap_bks") is not None]
        cells.append(" ".join(f"{p} {g:+.1%}" for p, g in gaps) or "-")
        cells.append("-" if row.get("ceiling") is None else f"{row['ceiling']:.2f}")
        cells.append(row["verdict"])
        out.append(cells)
    return out
