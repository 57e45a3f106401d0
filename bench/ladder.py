"""The calibration ladder of a benchmark release: class x tier x policy, mean reward with its interval.

    .venv/bin/python bench/ladder.py TASKS [--budget 10] [-j 2] [--policies naive,rule,search,ortools]
                                           [--problem NAME ...] [--level 1|2] [--json FILE] [--markdown]
    .venv/bin/python bench/ladder.py --program jobshop/search [--budget 10] > solve.py
    .venv/bin/python bench/ladder.py --built RELEASE [--markdown] [--json FILE]

``--built`` reads the ladder a release's build recorded (every reference starts
from the rule's and the search's answers, kept in its rows) instead of running
it: per tier, a tier's growth parts pooled and dropped tiers apart, with the
separation verdict that decides whether the recipe keeps the tier.

TASKS is an exported release (``orharbor export --release bench-1/ --out TASKS``).
Every policy of :mod:`orharbor.benchmark.ladder` runs on every algorithm task
and is scored by the task's own verifier (level 2 in its sandbox, so as root
with bubblewrap). One row per class x size x level: each policy's mean reward
and 95% bootstrap interval (over the level-1 tasks, or the level-2 hidden
instances), the mean gap to the best known value where one is published, the
ceiling (the reward an answer at the reference solver's proved bound would earn,
over the level-1 tasks: how much room there is above 1.0), and the verdict the benchmark needs: rewards rising with strength (naive, rule, then
search or ortools), the rule inside
(0, 1), the tier neither saturated (every policy at 1) nor dead (every policy
at or below 0).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path

from orharbor.benchmark.ladder import (
    POLICIES,
    LadderError,
    aggregate,
    algorithm_tasks,
    applicable,
    program,
    run_policy,
    table,
)
from orharbor.check.output import columns
from orharbor.task_toml import read_task_toml


def markdown(cells: list[list[str]]) -> str:
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * len(cells[0])]
    return "\n".join(lines + ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells[1:]])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", type=Path, nargs="?")
    parser.add_argument(
        "--program",
        metavar="CLASS/POLICY",
        help="print one ladder program as a standalone solve.py (e.g. jobshop/search) and exit",
    )
    parser.add_argument(
        "--built",
        metavar="RELEASE",
        help="print the ladder a built release recorded (a folder or a shipped name) and exit",
    )
    parser.add_argument("--budget", type=float, default=10.0, help="seconds of the search and ortools rungs")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--problem", action="append", default=[])
    parser.add_argument("--level", type=int, choices=(1, 2))
    parser.add_argument("--json", type=Path, help="also write every result and the table here")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if args.program:
        problem, _, policy = args.program.partition("/")
        try:
            print(program(problem, policy, args.budget), end="")
        except (LadderError, KeyError) as exc:
            parser.error(f"no ladder program {args.program!r}: {exc}")
        return 0
    if args.built:
        return print_built(args.built, args.markdown, args.json)
    if args.tasks is None:
        parser.error("give an exported release (TASKS), or --program CLASS/POLICY")
    policies = [p for p in args.policies.split(",") if p]
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        parser.error(f"unknown policy {unknown[0]!r}; known: {', '.join(POLICIES)}")
    tasks = algorithm_tasks(args.tasks, args.problem, args.level)
    if not tasks:
        parser.error(f"no algorithm tasks in {args.tasks}")
    jobs = []
    for task in tasks:
        metadata = read_task_toml(task / "task.toml")["metadata"]
        jobs += [(task, policy) for policy in policies if applicable(metadata["problem"], metadata["level"], policy)]
    start, results = time.monotonic(), []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_policy, task, policy, args.budget): (task, policy) for task, policy in jobs}
        for done, future in enumerate(as_completed(futures), 1):
            result = future.result()
            results.append(result)
            print(
                f"[{done}/{len(jobs)}] {result.task} {result.policy}: {result.reward:+.3f}"
                + (f" ({result.error})" if result.error else ""),
                file=sys.stderr,
                flush=True,
            )
    rows = aggregate(results, policies)
    cells = table(rows, policies)
    print(markdown(cells) if args.markdown else columns(cells))
    print(
        f"\n{len(jobs)} runs on {len(tasks)} tasks in {time.monotonic() - start:.0f} s, budget {args.budget:g} s, "
        f"{args.jobs} at a time",
        file=sys.stderr,
    )
    if args.json:
        args.json.write_text(
            json.dumps({"budget_s": args.budget, "rows": rows, "results": [asdict(r) for r in results]}, indent=1)
            + "\n"
        )
    return 0


def print_built(release: str, as_markdown: bool, json_out: Path | None) -> int:
    """The ladder a built release recorded, with a column naming the tiers its recipe drops."""
    from orharbor.benchmark.built_ladder import RUNGS, built_ladder
    from orharbor.benchmark.release import ReleaseError, read_release

    try:
        recipe, rows = read_release(release)
    except ReleaseError as exc:
        print(f"ladder.py: {exc}", file=sys.stderr)
        return 1
    tiers = built_ladder(recipe, rows)
    cells = table(tiers, list(RUNGS))
    cells[0] = [*cells[0][:-3], "verdict", "dropped"]
    for row, tier in zip(cells[1:], tiers):
        row[-3:] = [row[-1], tier["dropped"] or "-"]
    print(markdown(cells) if as_markdown else columns(cells))
    if json_out:
        json_out.write_text(json.dumps({"release": recipe.tag, "tiers": tiers}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
