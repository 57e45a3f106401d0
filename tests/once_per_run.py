"""A value made once per test run, however many pytest-xdist workers ask for it.

A module-scoped fixture is made once per worker: the retail model's 38 solves (three
integer rows run to their 30 s limits) were made by every worker that got one of the
module's tests, three times with three workers. The first worker to ask makes the value
and leaves it as JSON in the run's shared temporary folder; the others wait on the lock
and read it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from filelock import FileLock


def once_per_run(tmp_path_factory, worker_id: str, name: str, make: Callable[[], Any]) -> Any:
    """``make()``, a JSON value, made by one worker of this run and read by the rest (tuples come back lists)."""
    if worker_id == "master":  # no xdist: the process is the run (basetemp's parent is shared across runs)
        return make()
    path = tmp_path_factory.getbasetemp().parent / f"{name}.json"  # pytest-N/, of this run's workers only
    with FileLock(f"{path}.lock"):
        if path.is_file():
            return json.loads(path.read_text())
        value = make()
        path.with_suffix(".part").write_text(json.dumps(value))
        path.with_suffix(".part").replace(path)
        return value
