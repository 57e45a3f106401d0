"""The calibration ladder of a benchmark release: class x tier x policy, mean reward with its interval.

    .venv/bin/python bench/ladder.py TASKS [--budget 10] [-j 2] [--policies naive,rule,search,ortools]
                                           [--problem NAME ...] [--level 1|2] [--json FILE] [--markdown]

TASKS is an exported release (``orharbor export --release bench-1/ --out TASKS``).
Every policy of :mod:`orharbor.benchmark.ladder` runs on every algorithm task
and is scored by the task's own verifier (level 2 in its sandbox, so as root
with bubblewrap). One row per class x size x level: each policy's mean reward
and 95% bootstrap interval (over the level-1 tasks, or the level-2 hidden
instances), the mean gap to the best known value where one is published, and
the verdict the benchmark needs: rewards rising with strength, the rule inside
(0, 1), the tier neither saturated (every policy at 1) nor dead (every policy
at or below 0).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from statistics import fmean

from orharbor.benchmark.ladder import POLICIES, Result, run_policy
from orharbor.check.output import columns
from orharbor.report.stats import bootstrap_ci
from orharbor.report.tables import size_order
from orharbor.task_toml import read_task_toml

#: A mean this close to 1 (or 0) counts as at the reference (or at naive) in the verdict.
TOLERANCE = 0.02


def algorithm_tasks(folder: Path, problems: list[str], level: int | None) -> list[Path]:
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
    groups: dict[tuple, dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        groups[(r.problem, r.size, r.level)][r.policy].append(r)
    rows = []
    for key in sorted(groups, key=lambda k: (k[0], size_order(k[0], k[1]), k[2])):
        row = {"problem": key[0], "size": key[1], "level": key[2], "policies": {}}
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
    for (weaker, low), (stronger, high) in zip(means, means[1:]):
        if high < low - TOLERANCE:
            problems.append(f"{stronger} < {weaker}")
    rule = stats.get("rule", {}).get("mean")
    if rule is not None and not TOLERANCE < rule < 1 - TOLERANCE:
        problems.append("rule not inside (0, 1)")
    values = [m for _, m in means]
    if values and all(m >= 1 - TOLERANCE for m in values):
        problems.append("saturated")
    if values and all(m <= TOLERANCE for m in values):
        problems.append("dead")
    return "ok" if not problems else "; ".join(problems)


def table(rows: list[dict], policies: list[str]) -> list[list[str]]:
    header = ["problem", "size", "level", *policies, "gap bks", "verdict"]
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
        cells.append(row["verdict"])
        out.append(cells)
    return out


def markdown(cells: list[list[str]]) -> str:
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * len(cells[0])]
    return "\n".join(lines + ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells[1:]])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--budget", type=float, default=10.0, help="seconds of the search and ortools rungs")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--problem", action="append", default=[])
    parser.add_argument("--level", type=int, choices=(1, 2))
    parser.add_argument("--json", type=Path, help="also write every result and the table here")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        parser.error(f"unknown policy {unknown[0]!r}; known: {', '.join(POLICIES)}")
    tasks = algorithm_tasks(args.tasks, args.problem, args.level)
    if not tasks:
        parser.error(f"no algorithm tasks in {args.tasks}")
    jobs = [(task, policy) for task in tasks for policy in policies
            if not (policy == "ortools" and read_task_toml(task / "task.toml")["metadata"]["level"] == 2)]
    start, results = time.monotonic(), []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_policy, task, policy, args.budget): (task, policy) for task, policy in jobs}
        for done, future in enumerate(as_completed(futures), 1):
            result = future.result()
            results.append(result)
            print(f"[{done}/{len(jobs)}] {result.task} {result.policy}: {result.reward:+.3f}"
                  + (f" ({result.error})" if result.error else ""), file=sys.stderr, flush=True)
    rows = aggregate(results, policies)
    cells = table(rows, policies)
    print(markdown(cells) if args.markdown else columns(cells))
    print(f"\n{len(jobs)} runs on {len(tasks)} tasks in {time.monotonic() - start:.0f} s, budget {args.budget:g} s, "
          f"{args.jobs} at a time", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"budget_s": args.budget, "rows": rows,
                                         "results": [asdict(r) for r in results]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
