"""Score a deliverable: level 1 (a solution file) and level 2 (a solve.py program).

Both return ``(reward, details)`` and never raise for anything the agent did:
every failure is a reward of -1.0 with a message saying why. On a level-2
task's hidden instances that message is a fixed one (:data:`HIDDEN_REASONS`):
nothing the agent's program wrote reaches their rows.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from orharbor.verifiers import safe_json, strict
from orharbor.verifiers.reward import FAIL, mean_reward, reward
from orharbor.verifiers.solver_run import NOT_STARTED, OVER_DISK, UNREADABLE, Limits, RunResult, run_solver
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
    evaluate: Evaluate,
    instance: dict,
    solution_path: str,
    naive: float,
    reference: float,
    max_bytes: int = safe_json.MAX_BYTES,
) -> tuple[float, dict]:
    """Reward of the solution file at ``solution_path``."""
    details: dict
    try:
        solution = safe_json.load(solution_path, max_bytes)
    except safe_json.BadOutput as exc:
        details = {"feasible": 0, "objective": None, "reward": FAIL, "error": str(exc)}
    else:
        details = judge(evaluate, instance, solution, naive, reference)
    details.update(naive=naive, reference=reference)
    return details["reward"], details


#: Why a hidden run failed: the closed set of reasons a hidden instance's row may give (its ``error``).
#: Every placeholder is a number the verifier knows without the run (a limit) or a fact it
#: keeps anyway (the exit status). See :func:`score_level2`.
HIDDEN_REASONS = {
    "timed out": "timed out after {time_limit:g} s",
    "no solution": "solve.py exited with {returncode} and wrote no solution",
    "not started": "solve.py could not be started (the solver interpreter failed to run)",
    "over the disk limit": "stopped: kept more than {disk_mb} MiB or {max_files} files on disk",
    "unreadable": "solution.json could not be read (not a regular file, or over {max_bytes} bytes)",
    "not json": "solution.json is not valid JSON (strict: UTF-8, no NaN, no duplicate keys, bounded numbers)",
    "wrong shape": "solution has the wrong shape (a missing or unexpected key, or a wrong type, length or range)",
    "infeasible": "infeasible: the solution breaks a rule of the problem",
    "not evaluated": "the verifier could not evaluate the solution",
}


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
    example: dict | None = None,
    example_uid: int | None = None,
) -> tuple[float, dict]:
    """Mean reward of solve.py over ``cases`` (each: instance, instance_bytes, naive, reference).

    Run ``i`` runs as ``uids[i]`` (default: ``uid`` for every run); see
    :func:`~orharbor.verifiers.solver_run.run_program` for ``workroot`` and ``open_dirs``.

    The instances of ``cases`` are hidden, and details.json travels with the job
    folder (uploads, parity runs): so a hidden instance's row keeps only what
    the verifier measured or computed (exit status, wall time, time-out,
    feasible, objective, reward) and one reason of :data:`HIDDEN_REASONS`,
    never the program's output nor a message quoting its solution: either
    could spell out the instance. ``example`` (instance, instance_bytes,
    optional naive) is a public instance the agent has too: solve.py runs on it
    first (before any hidden run, so nothing a hidden run could leave behind
    reaches it), as ``example_uid`` (default: ``uid``), under the same limits;
    that run does not count, and its row (``details["example"]``) keeps its
    stderr and stdout tails and full error message, for debugging.
    """
    uids = list(uids) if uids is not None else [uid] * len(cases)
    try:
        program = safe_json.read_regular_file(solve_py_path, 4 * 1024 * 1024)
    except safe_json.BadOutput as exc:
        return FAIL, {"error": str(exc), "instances": [], "feasible": 0}

    def run_on(instance_bytes: bytes, run_uid: int | None):
        return run_solver(
            python,
            program,
            instance_bytes,
            limits,
            uid=run_uid,
            gid=run_uid,
            workroot=workroot,
            open_dirs=open_dirs,
            read_solution=lambda p: safe_json.read_regular_file(p, max_bytes, name="solution.json"),
        )

    example_row = None
    if example is not None:
        example_row = public_row(
            evaluate, example, run_on(example["instance_bytes"], uid if example_uid is None else example_uid), limits
        )
    rows = []
    for index, case in enumerate(cases):
        run = run_on(case["instance_bytes"], uids[index])
        row: dict[str, Any] = {
            "index": index,
            "naive": case["naive"],
            "reference": case["reference"],
            "bound": case.get("bound"),
            "wall_s": round(run.wall_s, 3),
            "returncode": run.returncode,
            "timed_out": run.timed_out,
        }
        row.update(hidden_outcome(evaluate, case, run, limits, max_bytes))
        rows.append(row)
    total = mean_reward([r["reward"] for r in rows])
    feasible = int(bool(rows) and all(r["feasible"] for r in rows))
    details: dict[str, Any] = {"instances": rows, "feasible": feasible}
    if example_row is not None:
        details["example"] = example_row
    return total, details


def hidden_outcome(evaluate: Evaluate, case: dict, run: RunResult, limits: Limits, max_bytes: int) -> dict:
    """feasible, objective, reward and a reason of :data:`HIDDEN_REASONS` for a run on a hidden instance."""
    failed = {"feasible": 0, "objective": None, "reward": FAIL}
    if run.timed_out:
        return {**failed, "error": HIDDEN_REASONS["timed out"].format(time_limit=limits.solve_time_limit_s)}
    if run.solution_bytes is None:
        if run.stopped == NOT_STARTED:
            reason = HIDDEN_REASONS["not started"]
        elif run.stopped == OVER_DISK:
            reason = HIDDEN_REASONS["over the disk limit"].format(disk_mb=limits.disk_mb, max_files=limits.max_files)
        elif run.stopped == UNREADABLE:
            reason = HIDDEN_REASONS["unreadable"].format(max_bytes=max_bytes)
        else:
            reason = HIDDEN_REASONS["no solution"].format(returncode=run.returncode)
        return {**failed, "error": reason}
    try:
        solution = safe_json.parse_strict(run.solution_bytes, "solution.json")
    except safe_json.BadOutput:
        return {**failed, "error": HIDDEN_REASONS["not json"]}
    try:
        objective = evaluate(case["instance"], solution)
    except Infeasible as exc:
        return {**failed, "error": HIDDEN_REASONS["wrong shape" if _raised_in_strict(exc) else "infeasible"]}
    except (RecursionError, MemoryError, TypeError, ValueError, KeyError, IndexError, AttributeError):
        return {**failed, "error": HIDDEN_REASONS["wrong shape"]}
    except Exception:  # a verifier bug must not quote the solution either; the oracle's check shows it
        return {**failed, "error": HIDDEN_REASONS["not evaluated"]}
    return {
        "feasible": 1,
        "objective": objective,
        "reward": reward(objective, case["naive"], case["reference"]),
        "error": None,
    }


def public_row(evaluate: Evaluate, example: dict, run: RunResult, limits: Limits) -> dict:
    """The row of the run on the public example: everything, the program's output and full messages included."""
    row: dict[str, Any] = {
        "naive": example.get("naive"),
        "wall_s": round(run.wall_s, 3),
        "returncode": run.returncode,
        "timed_out": run.timed_out,
        "feasible": 0,
        "objective": None,
    }
    if run.timed_out:
        row["error"] = f"timed out after {limits.solve_time_limit_s:g} s"
    elif run.solution_bytes is None:
        row["error"] = run.error or f"solve.py exited with {run.returncode} and wrote no solution"
    else:
        row["error"] = None
        try:
            solution = safe_json.parse_strict(run.solution_bytes, "solution.json")
            row["objective"] = evaluate(example["instance"], solution)
            row["feasible"] = 1
        except safe_json.BadOutput as exc:
            row["error"] = str(exc)
        except Infeasible as exc:
            row["error"] = f"infeasible: {exc}"
        except (RecursionError, MemoryError, TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            row["error"] = f"malformed solution: {type(exc).__name__}: {str(exc)[:500]}"
        except Exception as exc:  # a verifier bug: say so here, the hidden rows carry on
            row["error"] = f"the verifier could not evaluate the solution: {type(exc).__name__}: {str(exc)[:500]}"
    row.update(stderr_tail=run.stderr_tail[-2000:], stdout_tail=run.stdout_tail[-1000:])
    return row


def _raised_in_strict(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by one of :mod:`~orharbor.verifiers.strict`'s shape checks."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals.get("__name__") == strict.__name__
