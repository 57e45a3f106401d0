"""Score a deliverable: level 1 (a solution file) and level 2 (a solve.py program).

Both return ``(reward, details)`` and never raise for anything the agent did:
every failure is a reward of -1.0 with a message saying why.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from orharbor.verifiers import safe_json
from orharbor.verifiers.reward import FAIL, mean_reward, reward
from orharbor.verifiers.solver_run import Limits, run_solver
from orharbor.verifiers.strict import Infeasible

Evaluate = Callable[[dict, Any], float]


def evaluator(problem: str) -> Evaluate:
    """The standard-library ``evaluate`` of a problem class."""
    return importlib.import_module(f"orharbor.problem_modules.{problem}.verify").evaluate


def judge(evaluate: Evaluate, instance: dict, solution: Any, naive: float, reference: float) -> dict:
    """Evaluate one parsed solution: feasibility, objective and reward."""
    try:
        objective = evaluate(instance, solution)
    except Infeasible as exc:
        return {"feasible": 0, "objective": None, "reward": FAIL, "error": f"infeasible: {exc}"}
    except (RecursionError, MemoryError, TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        # A verifier must never crash on hostile input; count it as malformed.
        return {"feasible": 0, "objective": None, "reward": FAIL, "error": f"malformed solution: {type(exc).__name__}"}
    return {"feasible": 1, "objective": objective, "reward": reward(objective, naive, reference), "error": None}


def score_level1(
    evaluate: Evaluate, instance: dict, solution_path: str, naive: float, reference: float,
    max_bytes: int = safe_json.MAX_BYTES,
) -> tuple[float, dict]:
    """Reward of the solution file at ``solution_path``."""
    try:
        solution = safe_json.load(solution_path, max_bytes)
    except safe_json.BadOutput as exc:
        details = {"feasible": 0, "objective": None, "reward": FAIL, "error": str(exc)}
    else:
        details = judge(evaluate, instance, solution, naive, reference)
    details.update(naive=naive, reference=reference)
    return details["reward"], details


def score_level2(
    evaluate: Evaluate,
    solve_py_path: str,
    cases: list[dict],
    python: str,
    limits: Limits,
    *,
    uid: int | None = None,
    uids: list[int | None] | None = None,
    workroot: str | None = None,
    open_dirs: tuple[str, ...] | None = None,
    max_bytes: int = safe_json.MAX_BYTES,
) -> tuple[float, dict]:
    """Mean reward of solve.py over ``cases`` (each: instance, instance_bytes, naive, reference).

    Run ``i`` runs as ``uids[i]`` (default: ``uid`` for every run); see
    :func:`~orharbor.verifiers.solver_run.run_program` for ``workroot`` and ``open_dirs``.
    """
    uids = list(uids) if uids is not None else [uid] * len(cases)
    try:
        program = safe_json.read_regular_file(solve_py_path, 4 * 1024 * 1024)
    except safe_json.BadOutput as exc:
        return FAIL, {"error": str(exc), "instances": [], "feasible": 0}
    rows = []
    for index, case in enumerate(cases):
        run = run_solver(
            python, program, case["instance_bytes"], limits, uid=uids[index], gid=uids[index], workroot=workroot,
            open_dirs=open_dirs, read_solution=lambda p: safe_json.read_regular_file(p, max_bytes, name="solution.json"),
        )
        row: dict[str, Any] = {
            "index": index,
            "naive": case["naive"],
            "reference": case["reference"],
            "bound": case.get("bound"),
            "wall_s": round(run.wall_s, 3),
            "returncode": run.returncode,
            "timed_out": run.timed_out,
            "stderr_tail": run.stderr_tail[-2000:],
        }
        if run.timed_out:
            row.update(feasible=0, objective=None, reward=FAIL, error=f"timed out after {limits.solve_time_limit_s} s")
        elif run.solution_bytes is None:
            row.update(feasible=0, objective=None, reward=FAIL,
                       error=run.error or f"solve.py exited with {run.returncode} and wrote no solution")
        else:
            try:
                solution = safe_json.parse_strict(run.solution_bytes, "solution.json")
            except safe_json.BadOutput as exc:
                row.update(feasible=0, objective=None, reward=FAIL, error=str(exc))
            else:
                row.update(judge(evaluate, case["instance"], solution, case["naive"], case["reference"]))
        rows.append(row)
    total = mean_reward([r["reward"] for r in rows])
    feasible = int(bool(rows) and all(r["feasible"] for r in rows))
    return total, {"instances": rows, "feasible": feasible}
