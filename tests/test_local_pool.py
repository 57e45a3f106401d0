"""LocalPool when a worker dies mid-call: the call runs again on a fresh worker, a bounded number of times.

OR-Tools 9.13-9.15 can corrupt its heap and abort (google/or-tools#5048), which
kills the worker process, not just the call. The calls here die the same way
(``os.abort``), from the standard library alone, so the spawned workers need
nothing of the test module.
"""

from __future__ import annotations

import os
import time

import pytest

from orharbor.datasets.pools import RETRIES, LocalPool

ABORT_ONCE = "import os, pathlib\np = pathlib.Path({path!r})\nif not p.exists():\n    p.touch()\n    os.abort()\n"


def _drain(pool: LocalPool, patience_s: float = 120.0) -> list:
    out, deadline = [], time.monotonic() + patience_s
    while pool.pending():
        assert time.monotonic() < deadline, "calls not back in time"
        out += pool.completed(timeout_s=1.0)
    return out


def test_a_call_whose_worker_died_runs_again_on_a_fresh_worker(tmp_path):
    said = []
    pool = LocalPool(1, warn=said.append)
    try:
        pool.submit("crashes once", exec, (ABORT_ONCE.format(path=str(tmp_path / "marker")),), 1)
        pool.submit("after it", pow, (2, 10), 1)
        done = _drain(pool)
    finally:
        pool.kill()
    assert done == [("crashes once", None, None), ("after it", 1024, None)]  # order kept, nothing lost
    assert len(said) == 1 and "signal SIGABRT" in said[0] and "while solving crashes once" in said[0]


def test_a_call_that_keeps_killing_workers_ends_the_build_with_the_signal():
    said = []
    pool = LocalPool(2, warn=said.append)
    try:
        pool.submit("always", os.abort, (), 1)
        with pytest.raises(RuntimeError, match=rf"signal SIGABRT\) while solving always, {RETRIES + 1} times"):
            _drain(pool)
        assert len(said) == RETRIES
    finally:
        pool.kill()


def test_without_retries_the_first_death_ends_the_build():
    pool = LocalPool(1, retries=0, warn=lambda message: pytest.fail(f"warned: {message}"))
    try:
        pool.submit("once", os.abort, (), 1)
        with pytest.raises(RuntimeError, match="while solving once, 1 time "):
            _drain(pool)
    finally:
        pool.kill()
