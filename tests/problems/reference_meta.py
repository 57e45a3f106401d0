"""Checks of a CP-SAT reference's answer and meta record that the scheduling classes' tests share.

A module of its own, not conftest.py (see tests/quick_retail.py).
"""

from __future__ import annotations

import json

#: The statuses of a CP-SAT reference with an answer: proved, cut off by its limit, or its start kept.
STATUSES = ("OPTIMAL", "FEASIBLE", "FEASIBLE_HINT")


def check_answer(cls, instance: dict, solution, meta: dict):
    """A reference's answer at any limit: feasible, its objective the one its meta says, with an answer's status.
    The objective."""
    objective = cls.evaluate(instance, solution)
    assert objective == meta["objective"]
    assert meta["status"] in STATUSES
    return objective


def check_proves(cls, instance: dict, optimum) -> None:
    """``cls.reference`` at 60 s on two workers, seed 0, proves ``optimum`` of ``instance`` (at a limit with ample
    slack); cut off by its limit (a machine loaded past all reason), the answer is still feasible, its bound
    below the optimum and its objective above. The meta records the CP-SAT run and is JSON."""
    solution, meta = cls.reference(instance, time_limit_s=60.0, workers=2, seed=0)
    assert cls.evaluate(instance, solution) == meta["objective"]
    if meta["status"] == "OPTIMAL":
        assert meta["objective"] == meta["bound"] == optimum
    else:
        assert meta["bound"] <= optimum <= meta["objective"]
    assert meta["solver"] == "ortools-cp-sat" and meta["version"]
    assert (meta["time_limit_s"], meta["workers"], meta["seed"]) == (60.0, 2, 0)
    assert isinstance(meta["wall_time_s"], float)
    json.dumps(meta)
