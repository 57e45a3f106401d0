"""The calibration ladder: policies of known, increasing strength, scored by the benchmark's own verifier.

A benchmark is valid when its rewards spread: the naive answer scores 0, a
classic constructive rule well inside (0, 1), a local search on top of it
higher, a short OR-Tools run higher still, with room above 1.0 where the
reference is not optimal. The rungs, weakest first:

- ``naive``: the task's own naive answer (``solution/naive``): 0 by construction;
- ``rule``: the class's constructive rule (``problem_modules/<class>/ladder/rule.py``);
- ``search``: a local search from the rule's answer, for ``budget_s`` seconds: rule.py's code followed by
  ``ladder/search.py``, which holds only what the search adds (see :func:`program`);
- ``ortools``: the class's OR-Tools reference model at ``budget_s`` seconds, one thread
  (level 1 only: a level-2 task's interpreter has no OR-Tools unless exported with --allow-ortools).

Code that several classes' ``rule`` and ``search`` programs share (the routing classes' answer file and
local-search frame) is written once, in ``problem_modules/ladder_shared/NAME.py``: a rule.py with the line
``# ladder: shared NAME`` gets that file first in both its programs.

``rule`` and ``search`` are level-2 ``solve.py`` programs (standard library,
numpy and scipy), so at level 2 the task's verifier runs them in its sandbox
on the hidden instances; at level 1 they run here on ``/app/instance.json``
and their answer is handed in. Either way the reward is what
:func:`orharbor.local_verify.score` (the task's own verifier) gives.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from statistics import fmean

from orharbor import problem_modules
from orharbor.errors import UserError

POLICIES = ("naive", "rule", "search", "ortools")
#: The line of search.py that sets its budget; the ladder rewrites it.
BUDGET_LINE = re.compile(r"^TIME_LIMIT_S = [0-9.]+$", re.MULTILINE)
#: A line of rule.py that puts ``problem_modules/ladder_shared/NAME.py`` first in the class's programs.
SHARED_LINE = re.compile(r"^# ladder: shared (\w+)$", re.MULTILINE)
#: The folder of the files that SHARED_LINE names.
SHARED_FOLDER = "ladder_shared"


class LadderError(UserError):
    """A policy the ladder cannot run on a task."""


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


def program(problem: str, policy: str, budget_s: float) -> str:
    """The source of a class's ``rule`` or ``search`` program, a search's budget set to ``budget_s``.

    One self-contained file, made of, in order:

    1. the shared files rule.py names, each by a line ``# ladder: shared NAME``: the text of
       ``problem_modules/ladder_shared/NAME.py``, code that several classes' programs share, written once
       (the routing classes' answer file and local-search frame);
    2. ladder/rule.py: all of it for ``rule``; for ``search``, without its final ``if __name__ ==
       "__main__":`` block;
    3. for ``search``, ladder/search.py with its ``TIME_LIMIT_S`` line set to ``budget_s``.

    Each part uses the imports and names of the parts before it and rebinds none of them. search.py holds
    only what the search adds: it calls the rule's functions (reading the instance, building the start,
    writing the answer) and has its own entry point. A shared name with no file, a ``# ladder:`` line of
    another form, or such a line in search.py (the rule's shared files are the search's) is a
    :class:`LadderError`.
    """
    text = _ladder_file(problem, policy)
    rule = text if policy == "rule" else _ladder_file(problem, "rule")
    shared = "".join(_shared_file(problem, name) + "\n\n" for name in _shared_names(problem, "rule", rule))
    if policy != "search":
        return shared + text
    if _shared_names(problem, "search", text):
        raise LadderError(f"{problem} ladder/search.py names shared files: rule.py names them for both programs")
    last = ast.parse(rule).body[-1:]
    if not (last and isinstance(last[0], ast.If) and ast.unparse(last[0].test) == "__name__ == '__main__'"):
        raise LadderError(f"{problem} ladder/rule.py does not end with an 'if __name__ == \"__main__\":' block")
    if not BUDGET_LINE.search(text):
        raise LadderError(f"{problem} ladder/search.py has no 'TIME_LIMIT_S = <seconds>' line")
    head = "\n".join(rule.split("\n")[:last[0].lineno - 1])
    return shared + head + "\n" + BUDGET_LINE.sub(f"TIME_LIMIT_S = {float(budget_s)!r}", text, count=1)


def _ladder_file(problem: str, policy: str) -> str:
    path = resources.files(problem_modules.PROBLEMS[problem]).joinpath("ladder", f"{policy}.py")
    if not path.is_file():
        raise LadderError(f"{problem} has no ladder policy {policy!r} (ladder/{policy}.py)")
    return path.read_text(encoding="utf-8")


def _shared_names(problem: str, policy: str, text: str) -> list[str]:
    """The shared files ladder/POLICY.py names, in order, once each; a ``# ladder:`` line of another form is refused."""
    for line in re.findall(r"^#\s*ladder:.*$", text, re.MULTILINE):
        if not SHARED_LINE.fullmatch(line):
            raise LadderError(f"{problem} ladder/{policy}.py: {line!r} is not '# ladder: shared NAME'")
    return list(dict.fromkeys(SHARED_LINE.findall(text)))


def _shared_file(problem: str, name: str) -> str:
    folder = resources.files(problem_modules).joinpath(SHARED_FOLDER)
    path = folder.joinpath(f"{name}.py")
    if not path.is_file():
        known = sorted(p.name.removesuffix(".py") for p in folder.iterdir() if p.name.endswith(".py"))
        raise LadderError(f"{problem} ladder/rule.py names an unknown shared file {name!r} "
                          f"(problem_modules/{SHARED_FOLDER}/: {', '.join(known)})")
    return path.read_text(encoding="utf-8")


def run_policy(task: Path, policy: str, budget_s: float) -> Result:
    """Score one policy on one exported algorithm task with the task's own verifier."""
    from orharbor.local_verify import load_task, score
    from orharbor.task_toml import read_task_toml

    metadata = read_task_toml(task / "task.toml").get("metadata", {})
    problem, size, level = metadata["problem"], metadata["size"], int(metadata["level"])
    load_task(task)
    base = dict(task=task.name, problem=problem, size=size, level=level, policy=policy)
    with tempfile.TemporaryDirectory(prefix="orharbor-ladder-") as scratch:
        scratch = Path(scratch)
        try:
            answer = _answer(task, problem, level, policy, budget_s, scratch)
        except LadderError as exc:
            return Result(**base, reward=-1.0, instance_rewards=(), error=str(exc))
        reward, details = score(task, answer)
    reward = details.get("orharbor_reward", reward)  # a --reward-scale unit export: the ladder reads orharbor's scale
    instances = tuple(float(row["reward"]) for row in details.get("instances", ()) if "reward" in row)
    gap = None
    best = metadata.get("best_known")
    if level == 1 and best and details.get("feasible") and details.get("objective") is not None:
        gap = (float(details["objective"]) - best) / max(abs(best), 1.0)
    return Result(**base, reward=float(reward), instance_rewards=instances or (float(reward),), gap_bks=gap,
                  error=details.get("error"), ceiling=ceiling(metadata))


def ceiling(metadata: dict) -> float | None:
    """The reward an answer at the reference's proved lower bound would earn (1.0 when the reference is optimal).

    Read from a level-1 task's metadata (reference, naive baseline, bound);
    None where no bound was recorded. Above 1.0 is room to beat the reference.
    """
    ref, naive, bound = metadata.get("reference"), metadata.get("baseline"), metadata.get("bound")
    if not all(isinstance(v, (int, float)) for v in (ref, naive, bound)) or naive == ref:
        return None
    return (naive - max(bound, 0.0)) / (naive - ref)


def _answer(task: Path, problem: str, level: int, policy: str, budget_s: float, scratch: Path) -> Path:
    """The file the policy hands in: a solution.json (level 1) or a solve.py (level 2)."""
    if policy == "naive":
        return task / "solution" / "naive" / ("solution.json" if level == 1 else "solve.py")
    if policy == "ortools":
        if level != 1:
            raise LadderError("the ortools rung runs at level 1 only (the task's solve.py has no OR-Tools)")
        module = problem_modules.get(problem)
        instance = json.loads((task / "environment" / "instance.json").read_text())
        solution, _ = module.reference(instance, time_limit_s=budget_s, workers=1)
        out = scratch / "solution.json"
        out.write_text(json.dumps(solution))
        return out
    source = scratch / "solve.py"
    source.write_text(program(problem, policy, budget_s))
    if level == 2:
        return source
    out = scratch / "solution.json"
    limit = budget_s * 3 + 60  # the rule is meant to take seconds, the search its budget
    try:
        done = subprocess.run([sys.executable, "-I", str(source), str(task / "environment" / "instance.json"),
                               str(out)], cwd=scratch, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        raise LadderError(f"{policy}.py ran over {limit:g} s") from None
    if done.returncode != 0 or not out.exists():
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise LadderError(f"{policy}.py failed (exit {done.returncode}): {tail[0]}")
    return out


#: A mean this close to 1 (or 0) counts as at the reference (or at naive) in the verdict.
TOLERANCE = 0.02


def algorithm_tasks(folder: Path, problems: list[str], level: int | None) -> list[Path]:
    """The algorithm tasks of an export, optionally of some classes or one level."""
    from orharbor.task_toml import read_task_toml

    tasks = []
    for toml in sorted(folder.glob("*/task.toml")):
        metadata = read_task_toml(toml).get("metadata", {})
        if "problem" not in metadata or metadata.get("kind") == "modelling":
            continue
        if (problems and metadata["problem"] not in problems) or (level and metadata.get("level") != level):
            continue
        tasks.append(toml.parent)
    return tasks


def aggregate(results: list[Result], policies: list[str]) -> list[dict]:
    """One row per problem x size x level: per policy the mean, interval and count; the verdict."""
    from orharbor.report.stats import bootstrap_ci
    from orharbor.report.tables import size_order

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
            row["policies"][policy] = {"mean": fmean(values), "ci": bootstrap_ci(values), "n": len(values),
                                       "gap_bks": fmean(gaps) if gaps else None,
                                       "errors": sorted({r.error for r in found if r.error})[:3]}
        row["verdict"] = verdict(row["policies"])
        rows.append(row)
    return rows


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


def table(rows: list[dict], policies: list[str]) -> list[list[str]]:
    """The ladder as cells, header first: mean [interval] n= per policy, the gap to the best known, the verdict."""
    header = ["problem", "size", "level", *policies, "gap bks", "ceiling", "verdict"]
    out = [header]
    for row in rows:
        cells = [row["problem"], row["size"], str(row["level"])]
        for policy in policies:
            stat = row["policies"].get(policy)
            if stat is None:
                cells.append("-")
                continue
            ci = stat["ci"]
            cells.append(f"{stat['mean']:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}] n={stat['n']}")
        gaps = [(p, s["gap_bks"]) for p, s in row["policies"].items() if s.get("gap_bks") is not None]
        cells.append(" ".join(f"{p} {g:+.1%}" for p, g in gaps) or "-")
        cells.append("-" if row.get("ceiling") is None else f"{row['ceiling']:.2f}")
        cells.append(row["verdict"])
        out.append(cells)
    return out
