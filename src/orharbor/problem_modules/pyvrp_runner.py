"""PyVRP boilerplate shared by the vehicle-routing strong solvers (``cvrp/strong.py``, ``vrptw/strong.py``).

A strong solver gives the best-known value the benchmark build records; it runs only where a dataset
is built, never inside a task, so pyvrp is imported inside the functions and loading a class never
imports it. A class's ``strong.py`` only turns its instance into PyVRP's ``ProblemData`` (one depot at
location 0, customer ``i`` at location ``i``, which is PyVRP's client ``i - 1``); :func:`solve` does the
rest: the hint check, the warm start, the run, the verifier's check of the answer, the meta record.

PyVRP 0.14 searches by iterated local search (late-acceptance hill climbing over its granular
neighbourhoods, with penalised capacity and time-window violations). It is single-threaded, so
``workers`` is recorded as 1. The hint is untrusted: the class's ``evaluate`` reads it first; an
infeasible or malformed one is ignored with a note, a feasible one is the search's initial solution
and the fallback. The answer is always one the class's ``evaluate`` accepts, never worse than a
feasible hint, else :class:`NoStrongAnswer`.
"""

from __future__ import annotations

import time
from importlib import metadata

from orharbor.errors import UserError


class NoStrongAnswer(UserError):
    """PyVRP found no routes the verifier accepts, and no feasible hint was given to fall back on."""


def checked_hint(instance: dict, evaluate, hint) -> tuple[int | float | None, dict]:
    """``(objective, meta["hint"])`` of an untrusted hint: objective None when absent, malformed or infeasible."""
    if hint is None:
        return None, {"given": False}
    try:
        value = evaluate(instance, hint)
    except ValueError as exc:  # the verifier's Infeasible: a broken rule or a malformed answer
        return None, {"given": True, "feasible": False, "note": f"hint ignored, the verifier rejects it: {exc}"}
    return value, {"given": True, "feasible": True, "objective": value}


def routes_of(solution) -> list[list[int]]:
    """The routes of a PyVRP solution as the class's customer numbers (client ``k`` is customer ``k + 1``)."""
    return [[activity.idx + 1 for activity in route if activity.is_client()] for route in solution.routes()]


def warm_start(data, routes: list[list[int]]):
    """``(PyVRP solution or None, note)``: the hint's routes as PyVRP's initial solution, if PyVRP takes them."""
    import pyvrp

    try:
        return pyvrp.Solution(data, [[customer - 1 for customer in route] for route in routes if route]), None
    except (RuntimeError, ValueError, IndexError) as exc:
        return None, f"PyVRP refused the hint as initial solution ({exc}); it starts from its own"


def solve(
    instance: dict, evaluate, problem_data, *, time_limit_s: float, seed: int = 0, hint=None
) -> tuple[dict, dict]:
    """``(solution, meta)``: PyVRP on ``problem_data(instance)`` for ``time_limit_s`` s, checked by ``evaluate``."""
    import pyvrp
    from pyvrp.stop import MaxRuntime

    start = time.perf_counter()
    hint_value, hint_meta = checked_hint(instance, evaluate, hint)
    data = problem_data(instance)
    initial = None
    if hint_value is not None:
        initial, refused = warm_start(data, hint["routes"])
        hint_meta["warm_start"] = initial is not None
        if refused:
            hint_meta["note"] = refused
    result = pyvrp.solve(
        data, MaxRuntime(max(0.0, float(time_limit_s))), seed=seed, collect_stats=False, initial_solution=initial
    )
    meta = {
        "solver": "pyvrp",
        "version": metadata.version("pyvrp"),
        "algorithm": "iterated local search",
        "time_limit_s": time_limit_s,
        "workers": 1,
        "seed": seed,
        "iterations": result.num_iterations,
        "pyvrp_distance": result.best.distance(),
    }
    solution, objective = _checked_answer(
        instance, evaluate, routes_of(result.best), hint, hint_value, meta, time_limit_s
    )
    meta.update(
        status="FEASIBLE",
        objective=objective,
        bound=None,
        wall_time_s=round(time.perf_counter() - start, 3),
        hint=hint_meta,
    )
    return solution, meta


def _checked_answer(
    instance: dict, evaluate, routes: list[list[int]], hint, hint_value, meta: dict, time_limit_s: float
) -> tuple[dict, int | float]:
    """PyVRP's routes if the verifier accepts them and they are no worse than the hint, else the hint."""
    candidate = {"routes": routes}
    try:
        value = evaluate(instance, candidate)
    except ValueError as exc:
        if hint_value is None:
            name = instance.get("name", "the instance")
            raise NoStrongAnswer(
                f"PyVRP found no routes the verifier accepts for {name} in {time_limit_s} s "
                f"({exc}); give it more time or a feasible hint"
            ) from None
        meta.update(answer="hint", note=f"PyVRP's routes rejected by the verifier ({exc}); the hint is returned")
        return _copy(hint), hint_value
    if hint_value is not None and hint_value < value:
        meta.update(answer="hint", note=f"PyVRP's best ({value}) is worse than the hint; the hint is returned")
        return _copy(hint), hint_value
    meta["answer"] = "pyvrp"
    return candidate, value


def _copy(solution: dict) -> dict:
    """A fresh ``{"routes": ...}``, so the answer never aliases the caller's hint."""
    return {"routes": [list(route) for route in solution["routes"]]}
