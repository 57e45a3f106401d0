"""The CP-SAT boilerplate every reference solver shares: parameters, timing, meta.

Imported only inside ``reference`` functions, so loading a problem module never
loads OR-Tools.
"""

from __future__ import annotations

import math
import threading
import time
from contextlib import contextmanager
from typing import Any

import ortools
from ortools.sat.python import cp_model

from orharbor.problem_modules.warm_start import Start


#: CP-SAT parameters every solve gets besides its own, set for a block by :func:`parameters`.
_EXTRA: dict = {}


@contextmanager
def parameters(**values):
    """Give every CP-SAT solve in this block (in this process) these parameters too, e.g. ``interleave_search``.

    A benchmark build uses it to run its one-thread references and best-known
    runs as CP-SAT's interleaved portfolio (LNS included), without a keyword in
    every class's ``reference``. The solve's meta records them.
    """
    saved = dict(_EXTRA)
    _EXTRA.update(values)
    try:
        yield
    finally:
        _EXTRA.clear()
        _EXTRA.update(saved)


class ModelInvalid(ValueError):
    """CP-SAT rejected the model (MODEL_INVALID): the instance breaks a rule the model relies on."""


def solve(
    model: cp_model.CpModel, *, time_limit_s: float, workers: int, seed: int, **parameters
) -> tuple[cp_model.CpSolver, cp_model.CpSolverStatus, dict]:
    """Solve ``model``; return the solver, its status and the meta every reference records.

    A MODEL_INVALID status is an error (:class:`ModelInvalid`), never a fallback
    answer: the model could not even be read, so nothing it returns means anything.
    """
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    for name, value in {**_EXTRA, **parameters}.items():
        if isinstance(value, (list, tuple)):  # a repeated field, e.g. subsolvers
            getattr(solver.parameters, name).extend(value)
        else:
            setattr(solver.parameters, name, value)
    start = time.perf_counter()
    status = solve_interruptibly(solver, model)
    if status == cp_model.MODEL_INVALID:
        reason = " ".join((model.validate() or "no reason given").split())
        raise ModelInvalid(
            f"CP-SAT rejected the model as invalid ({reason[:200]}); check the instance against its problem's rules"
        )
    meta = {
        "solver": "ortools-cp-sat",
        "version": ortools.__version__,  # type: ignore[attr-defined]  # ortools' stubs leave out __version__
        "time_limit_s": time_limit_s,
        "workers": workers,
        "seed": seed,
        "wall_time_s": round(time.perf_counter() - start, 3),
    }
    if _EXTRA:
        meta["parameters"] = dict(_EXTRA)
    return solver, status, meta


def solve_interruptibly(solver: cp_model.CpSolver, model: cp_model.CpModel) -> cp_model.CpSolverStatus:
    """``solver.solve(model)``, leaving Ctrl-C to Python and stopping the search at once when it comes.

    CP-SAT's own SIGINT catching is turned off: it replaces Python's handler
    during the solve and leaves the default action behind (so a later Ctrl-C
    killed the process, no cleanup, exit -2), and it ends the search early
    without a word, which would pass a cut-off solve for a finished reference.
    In the main thread the solve runs in a helper thread (CP-SAT releases the
    GIL) while the main thread waits, interruptibly: a KeyboardInterrupt there
    stops the search, waits for it, and is raised.
    """
    solver.parameters.catch_sigint_signal = False
    if threading.current_thread() is not threading.main_thread():
        return solver.solve(model)
    outcome: dict = {}
    finished = threading.Event()  # not Thread.join: an interrupted join may return early on a later call

    def run() -> None:
        try:
            outcome["status"] = solver.solve(model)
        except BaseException as exc:  # noqa: BLE001  (raised again in the caller's thread)
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=run, name="cp-sat", daemon=True).start()
    try:
        while not finished.wait(0.2):
            pass
    except BaseException:
        solver.stop_search()  # the search ends within moments; exiting before would abort the process
        while not finished.wait(0.2):
            pass
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["status"]


def status_name(status: cp_model.CpSolverStatus) -> str:
    """OPTIMAL or FEASIBLE for a solved model (what ``meta['status']`` records)."""
    return "OPTIMAL" if status == cp_model.OPTIMAL else "FEASIBLE"


def found(status: cp_model.CpSolverStatus) -> bool:
    """Whether CP-SAT returned a solution."""
    return status in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def finish(
    instance: dict,
    evaluate,
    solver: cp_model.CpSolver,
    status: cp_model.CpSolverStatus,
    meta: dict,
    extract,
    start: Start,
    lower_bound: int,
) -> tuple[Any, dict]:
    """The reference's answer: CP-SAT's solution checked by the verifier, else the ``start`` it was hinted.

    ``extract(solver)`` turns CP-SAT's values into a solution. The result is never
    infeasible and never worse than ``start`` (a :class:`~orharbor.problem_modules.warm_start.Start`,
    the better of the class's own hint and a given one); ``meta`` gets status,
    objective, the best proven lower bound (never above the objective) and
    ``hint``, the start's record.
    """
    meta["hint"] = start.record()
    if found(status):
        candidate = extract(solver)
        try:
            objective = evaluate(instance, candidate)
        except ValueError as exc:  # never expected; never hand back an infeasible answer
            meta["note"] = f"CP-SAT solution rejected by the verifier ({exc})"
        else:
            if objective > start.objective:  # never expected: CP-SAT keeps the hint's value or better
                candidate, objective = start.solution, start.objective
            bound = max(lower_bound, math.ceil(solver.best_objective_bound - 1e-6))
            meta.update(status=status_name(status), objective=objective, bound=min(bound, objective))
            return candidate, meta
    meta.setdefault(
        "note",
        f"CP-SAT found no solution in time ({solver.status_name(status)}); its start ({start.origin}) is returned",
    )
    meta.update(status="FEASIBLE_HINT", objective=start.objective, bound=min(lower_bound, start.objective))
    return start.solution, meta
