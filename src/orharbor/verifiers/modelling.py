"""Grading of modelling tasks: answer files compared with known values.

Two graders, both binary (1.0 correct, 0.0 otherwise, never negative):

- ``outputs``: a spec's required output files, each exact text after trimming
  or a number within a tolerance;
- ``answer``: a RetailOpt-style ``answer.json`` with ``status`` and
  ``objective``, the status equal to the reference's and the objective within
  a relative tolerance. In a task it is never a file the agent typed: the
  verifier runs the agent's ``model.py`` on the scenario's data
  (:func:`score_model_run`) and grades the ``answer.json`` that run writes.

Every answer file is hostile input: it must be a small regular file (no
symlink, FIFO or device) of UTF-8 text; anything else is a clear message and
reward 0.0. ``executed`` says an answer of the right shape was there (for a
model run: the run finished within its limits and wrote it), ``correct`` that
it matched; executed but not correct is a silent failure.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from orharbor.verifiers.safe_json import BadOutput, parse_strict, read_regular_file
from orharbor.verifiers.solver_run import Limits, run_program
from orharbor.verifiers.strict import Infeasible

#: Output files are a number or a short list: anything bigger is not an answer.
MAX_OUTPUT_BYTES = 1 << 20
#: Solver statuses an answer may report (upper case).
STATUSES = ("OPTIMAL", "INFEASIBLE", "UNBOUNDED", "INFEASIBLE_OR_UNBOUNDED", "TIME_LIMIT", "ERROR")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,4})?")
DEFAULT_REL_TOL = 1e-6
DEFAULT_ABS_TOL = 1e-9
#: The agent's model.py is read with the cap of a level-2 solve.py.
MAX_PROGRAM_BYTES = 4 * 1024 * 1024
#: How much of a model run's stderr details.json keeps.
STDERR_TAIL_CHARS = 2000


def parse_number(text: str, where: str) -> float:
    """A single finite decimal number, strictly (no NaN, no infinity, no words, no lists)."""
    token = text.strip()
    if not _NUMBER.fullmatch(token):
        shown = token if len(token) <= 40 else token[:40] + "..."
        raise Infeasible(f"{where} must hold a single number, got {shown!r}")
    value = float(token)
    if not math.isfinite(value):
        raise Infeasible(f"{where} holds a number out of range: {token[:40]!r}")
    return value


def within(got: float, expected: float, rel_tol: float, abs_tol: float, below_tol: float | None = None) -> bool:
    """|got - expected| <= max(abs_tol, rel_tol * |expected|); below ``expected`` the relative
    tolerance is ``below_tol`` when given (a reference that is a MIP incumbent, not an optimum)."""
    tol = rel_tol if below_tol is None or got >= expected else below_tol
    return abs(got - expected) <= max(abs_tol, tol * abs(expected))


def read_text(path: str, name: str) -> str:
    """A small regular UTF-8 text file, or BadOutput saying what is wrong with it."""
    data = read_regular_file(path, MAX_OUTPUT_BYTES, name=name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadOutput(f"{name} is not UTF-8 text (byte {exc.start})") from None


def check_output(text: str, name: str, expected: dict) -> str | None:
    """Why ``text`` does not match one required output, or None when it does."""
    if "text" in expected:
        got = text.strip()
        if got == expected["text"]:
            return None
        shown = got if len(got) <= 60 else got[:60] + "..."
        return f"{name} holds {shown!r}, which is not the expected answer"
    try:
        value = parse_number(text, name)
    except Infeasible as exc:
        return str(exc)
    rel = expected.get("rel_tol", DEFAULT_REL_TOL)
    absolute = expected.get("abs_tol", DEFAULT_ABS_TOL)
    if within(value, expected["value"], rel, absolute):
        return None
    return f"{name} holds {value!r}, which is not within tolerance of the expected answer"


def score_outputs(app_dir: str, outputs: dict[str, dict]) -> tuple[float, dict]:
    """Grade every required output file under ``app_dir``: 1.0 only if all match."""
    rows: list[dict[str, Any]] = []
    executed, correct = True, True
    for name, expected in outputs.items():
        try:
            problem = check_output(read_text(os.path.join(app_dir, name), name), name, expected)
        except BadOutput as exc:
            executed, problem = False, str(exc)
        correct = correct and problem is None
        rows.append({"file": name, "ok": problem is None, "error": problem})
    details = {
        "kind": "modelling",
        "outputs": rows,
        "executed": int(executed),
        "correct": int(correct),
        "matched": sum(r["ok"] for r in rows),
        "required": len(rows),
    }
    first = next((r["error"] for r in rows if r["error"]), None)
    if first:
        details["error"] = first
    return (1.0 if correct else 0.0), details


def read_answer(path: str, name: str = "answer.json") -> tuple[str, float | None]:
    """(status, objective) of an answer.json file; objective is required when the status is OPTIMAL."""
    return parse_answer(read_regular_file(path, MAX_OUTPUT_BYTES, name=name), name)


def parse_answer(raw: bytes, name: str = "answer.json") -> tuple[str, float | None]:
    """(status, objective) of an answer.json's bytes (see :func:`read_answer`)."""
    data = parse_strict(raw, name)
    if not isinstance(data, dict):
        raise BadOutput(f"{name} must hold a JSON object with 'status' and 'objective'")
    status = data.get("status")
    if not isinstance(status, str) or status.strip().upper() not in STATUSES:
        raise BadOutput(f"{name}: 'status' must be one of {', '.join(STATUSES)}, got {str(status)[:40]!r}")
    status = status.strip().upper()
    objective = data.get("objective")
    if objective is None and status != "OPTIMAL":
        return status, None
    if isinstance(objective, bool) or not isinstance(objective, (int, float)):
        raise BadOutput(f"{name}: 'objective' must be a number, got {type(objective).__name__}")
    try:
        objective = float(objective)
    except OverflowError:
        objective = math.inf
    if not math.isfinite(objective):
        raise BadOutput(f"{name}: 'objective' must be finite")
    return status, objective


def score_answer(path: str, expected: dict) -> tuple[float, dict]:
    """Grade the answer.json file at ``path``: status equal to the reference's, objective within ``rel_tol``."""
    return _grade(lambda: read_answer(path), expected)


def score_model_run(
    program_path: str,
    data: bytes,
    expected: dict,
    python: str,
    limits: Limits,
    *,
    argv: list[str],
    output: str = "answer.json",
    uid: int | None = None,
    workroot: str | None = None,
    open_dirs: tuple[str, ...] | None = None,
) -> tuple[float, dict]:
    """Run the agent's model.py on the scenario's data and grade the answer.json that run wrote.

    The run (:func:`~orharbor.verifiers.solver_run.run_program`) gets a fresh
    private folder holding only ``model.py`` (read from ``program_path``) and
    ``data.json`` (``data``), is started there as ``python -I *argv`` under
    ``limits``, as ``uid`` (None: our own), and its ``output`` is read back
    with the answer-file reader. ``executed`` is 1 only when the run finished
    within its limits and wrote a well-formed answer; a typed answer.json
    elsewhere is never looked at.
    """
    details: dict = {"kind": "modelling", "executed": 0, "correct": 0, "expected_status": expected["status"]}
    try:
        program = read_regular_file(program_path, MAX_PROGRAM_BYTES, name="model.py")
    except BadOutput as exc:
        details["error"] = str(exc)
        return 0.0, details
    run = run_program(
        python,
        {"model.py": program, "data.json": data},
        argv,
        output,
        limits,
        uid=uid,
        gid=uid,
        workroot=workroot,
        open_dirs=open_dirs,
        read_solution=lambda p: read_regular_file(p, MAX_OUTPUT_BYTES, name=output),
    )
    # Unlike a level-2 task's hidden instances (orharbor.verifiers.score), the data this run gets is
    # public: the agent has it in its instruction ([DATA]) or in /app/data.json (the schema prompt), so
    # keeping the run's stderr and full messages in details.json leaks nothing.
    facts = {
        "wall_s": round(run.wall_s, 3),
        "returncode": run.returncode,
        "timed_out": run.timed_out,
        "stderr_tail": run.stderr_tail[-STDERR_TAIL_CHARS:],
        "time_limit_s": limits.solve_time_limit_s,
    }
    if run.timed_out:
        details.update(facts, error=f"model.py did not finish within its {limits.solve_time_limit_s:g} s")
        return 0.0, details
    if run.solution_bytes is None:
        details.update(facts, error=run.error or f"model.py exited with {run.returncode} and wrote no {output}")
        return 0.0, details
    reward, graded = _grade(lambda: parse_answer(run.solution_bytes, output), expected)
    graded.update(facts)
    return reward, graded


def grade_answer(status: str, objective: float | None, expected: dict) -> tuple[float, dict]:
    """Grade a (status, objective) already read, as a task grades its answer: (reward, details)."""
    return _grade(lambda: (status, objective), expected)


def _grade(read, expected: dict) -> tuple[float, dict]:
    """Grade the (status, objective) that ``read()`` returns, or the BadOutput it raises."""
    details: dict = {"kind": "modelling", "executed": 0, "correct": 0, "expected_status": expected["status"]}
    try:
        status, objective = read()
    except (BadOutput, Infeasible) as exc:
        details["error"] = str(exc)
        return 0.0, details
    details.update(executed=1, status=status, objective=objective)
    if (
        status == "TIME_LIMIT"
        and objective is not None
        and expected["status"] == "OPTIMAL"
        and expected.get("below_tol")
    ):
        # The reference is itself a time-limited MIP plan (proven within a gap by a commercial solver):
        # a plan stopped at its time limit is graded on its cost, as the reference's would be.
        status = "OPTIMAL"
    if status != expected["status"]:
        details["error"] = f"status {status} differs from the reference status"
    elif status == "OPTIMAL" and not within(
        objective, expected["objective"], expected["rel_tol"], expected.get("abs_tol", 0.0), expected.get("below_tol")
    ):
        below = f" (or {expected['below_tol']:g} below it)" if expected.get("below_tol") else ""
        details["error"] = f"objective {objective!r} is not within {expected['rel_tol']:g} of the reference{below}"
    else:
        details["correct"] = 1
    return float(details["correct"]), details
