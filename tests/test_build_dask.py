"""DaskPool against a real Dask cluster: a scheduler and two workers on loopback.

The cluster runs as ``dask scheduler`` / ``dask worker`` subprocesses (the CLI
of this virtualenv), each worker with 2 threads and the resource ``cores=2``,
the way a user would start one by hand.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orharbor.datasets.build import solve_generated
from orharbor.datasets.dask_pool import DaskPool, DaskUnavailable, _running_calls

from waiting import wait_until

#: A cluster of subprocesses and binding solves: about 17 s, so out of the fast loop.
pytestmark = pytest.mark.slow

DASK = Path(sys.executable).parent / "dask"
#: What a solve gives that does not depend on the solver (the baseline), and what does (the reference).
FIXED = ("baseline", "baseline_solution")
FOUND = ("reference", "reference_solution")
#: Small job shops, proved optimal in milliseconds: this limit is far above that, for a loaded machine.
QUICK_S = 60.0
#: Solves that must still run when the test acts on them (kill, a dead scheduler): 20x20 job shops stopped
#: only by this limit, far longer than any of those tests waits.
LONG_S = 600.0
#: How long the tests wait for calls, joins and restarts at most: a safety net against a hang, not a
#: measure of speed (a loaded machine takes seconds where an idle one takes milliseconds).
PATIENCE_S = 300.0


def _same_solves(a: dict, b: dict) -> None:
    """Two results of the same solve agree: their baselines always; their references when both were
    proved optimal (one thread, one seed: the same every run), and a reference cut off by its limit (a
    machine loaded past all reason) is only known to lie between its bound and the baseline."""
    assert {k: a[k] for k in FIXED} == {k: b[k] for k in FIXED}
    if a["reference_meta"]["status"] == b["reference_meta"]["status"] == "OPTIMAL":
        assert {k: a[k] for k in FOUND} == {k: b[k] for k in FOUND}
    for result in (a, b):
        assert result["reference_meta"]["bound"] <= result["reference"] <= result["baseline"]


def _metas(row: dict) -> list[dict]:
    return [*row.get("eval_reference_metas", []), *([row["reference_meta"]] if "reference_meta" in row else [])]


def _rows(path: Path) -> list[dict]:
    """The rows of a file, wall and CPU times and the machine's CPU aside."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        for meta in _metas(row):
            meta.pop("wall_time_s"), meta.pop("cpu_time_s"), meta.pop("cpu")
    return rows


def _proved(rows: list[dict]) -> bool:
    """Whether every reference of ``rows`` was proved optimal, so that the rows do not depend on timing."""
    return all(meta["status"] == "OPTIMAL" for row in rows for meta in _metas(row))


def _running(client, count: int) -> bool:
    """Whether the cluster's workers run ``count`` calls of a DaskPool (their keys start with orharbor-)."""
    return sum(n for n in client.run(_running_calls, "orharbor-").values() if isinstance(n, int)) >= count


def _stop(procs: list[subprocess.Popen]) -> None:
    """Terminate each process group (nanny + worker process), then kill what is left."""
    for proc in procs:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except OSError:
                pass
    deadline = time.monotonic() + 10
    for proc in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:  # also reaps a worker process its nanny left behind
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass


def _start_cluster(folder: Path, workers: int) -> tuple[str, Path, list[subprocess.Popen]]:
    """Scheduler + ``workers`` workers; returns (address, scheduler file, processes)."""
    folder.mkdir(parents=True, exist_ok=True)
    sched_file = folder / "scheduler.json"
    procs: list[subprocess.Popen] = []

    def spawn(name: str, *args: str) -> None:
        log = open(folder / f"{name}.log", "wb")
        procs.append(
            subprocess.Popen(
                [str(DASK), *args],
                cwd=folder,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
        log.close()

    def logs() -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}" for p in sorted(folder.glob("*.log")))

    try:
        spawn(
            "scheduler",
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--scheduler-file",
            str(sched_file),
            "--no-dashboard",
        )
        address = None
        deadline = time.monotonic() + PATIENCE_S
        while address is None:
            assert time.monotonic() < deadline, f"the scheduler did not start\n{logs()}"
            assert procs[0].poll() is None, f"the scheduler exited\n{logs()}"
            try:
                address = json.loads(sched_file.read_text())["address"] or None
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        for i in range(workers):
            spawn(
                f"worker{i}",
                "worker",
                "--scheduler-file",
                str(sched_file),
                "--nthreads",
                "2",
                "--resources",
                "cores=2",
                "--no-dashboard",
                "--host",
                "127.0.0.1",
                "--memory-limit",
                "0",
                "--local-directory",
                str(folder / f"worker{i}"),
            )
        if workers:
            from distributed import Client

            with Client(address, timeout=60, set_as_default=False) as client:
                try:
                    client.wait_for_workers(workers, timeout=PATIENCE_S)
                except Exception:
                    pytest.fail(f"the workers did not join\n{logs()}")
        return address, sched_file, procs
    except BaseException:
        _stop(procs)
        raise


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(scheduler address, scheduler file) of a running 2-worker cluster."""
    address, sched_file, procs = _start_cluster(tmp_path_factory.mktemp("dask-cluster"), workers=2)
    try:
        yield address, sched_file
    finally:
        _stop(procs)


def _collect(pool: DaskPool, deadline_s: float = PATIENCE_S) -> list[tuple]:
    out: list[tuple] = []
    deadline = time.monotonic() + deadline_s
    while pool.pending():
        assert time.monotonic() < deadline, f"calls not back after {deadline_s} s ({pool.pending()} pending)"
        out += pool.completed(timeout_s=1.0)
    return out


def test_runs_real_solves(cluster):
    address, _ = cluster
    args = {seed: ("jobshop", "4x4", seed, QUICK_S, 1) for seed in range(4)}
    pool = DaskPool(address)
    try:
        for seed, a in args.items():
            pool.submit(("jobshop", seed), solve_generated, a, cores=1)
        assert pool.pending() == 4
        got = _collect(pool)
    finally:
        pool.close()
    assert sorted(key for key, _, _ in got) == [("jobshop", s) for s in range(4)]
    assert pool.pending() == 0
    for (_, seed), result, error in got:
        assert error is None
        _same_solves(result, solve_generated(*args[seed]))


def test_errors_come_back_and_scheduler_file_works(cluster):
    _, sched_file = cluster
    pool = DaskPool(str(sched_file))  # the path of a scheduler file works as an address too
    try:
        assert pool.completed(timeout_s=0.1) == []  # nothing submitted: returns, does not hang
        pool.submit("bad", solve_generated, ("jobshop", "9x9", 0, QUICK_S, 1), cores=2)
        [(key, result, error)] = _collect(pool)
    finally:
        pool.close()
    assert key == "bad" and result is None
    assert isinstance(error, ValueError) and "9x9" in str(error)


def test_resources_are_enforced(cluster):
    address, _ = cluster
    pool = DaskPool(address)
    try:
        with pytest.raises(DaskUnavailable, match="--resources") as err:
            pool.submit("big", solve_generated, ("jobshop", "4x4", 0, QUICK_S, 3), cores=3)
        assert "cores=2" in str(err.value)  # names what the workers do have
        assert pool.pending() == 0
    finally:
        pool.close()


def test_bad_address_fails_fast():
    """connect_timeout_s bounds the wait. The bound is generous, for a loaded machine: it still catches a
    connection that waits for distributed's own connect timeout (30 s) or forever."""
    start = time.monotonic()
    with pytest.raises(DaskUnavailable, match="cannot reach the Dask scheduler at tcp://127.0.0.1:1"):
        DaskPool("tcp://127.0.0.1:1", connect_timeout_s=2)
    assert time.monotonic() - start < 25
    with pytest.raises(DaskUnavailable, match="cannot reach"):
        DaskPool("nonsense://127.0.0.1:1", connect_timeout_s=2)


def test_kill_ends_queued_and_running_calls(cluster):
    """Runs last among the cluster tests: kill() restarts the busy workers."""
    from distributed import Client

    address, _ = cluster
    pool = DaskPool(address)
    # 12 one-core solves that run until kill() ends them: 4 run (2 workers x cores=2), 8 queue.
    for seed in range(12):
        pool.submit(seed, solve_generated, ("jobshop", "20x20", seed, LONG_S, 1), cores=1)
    with Client(address, timeout=60, set_as_default=False) as client:
        wait_until(lambda: _running(client, 4), "the first four solves running", timeout=PATIENCE_S)
    assert pool.completed(timeout_s=0.1) == []
    start = time.monotonic()
    pool.kill()
    assert time.monotonic() - start < 30  # kill() bounds itself at about 10 s; generous for a loaded machine
    assert pool.pending() == 0
    pool.kill()  # a second kill is harmless

    # The cluster is usable again: no slot is still held by a solve of the old pool, which would hold it
    # for LONG_S; the restarted workers rejoin within seconds (the bound is generous, for a loaded machine).
    again = DaskPool(address)
    try:
        start = time.monotonic()
        again.submit("after", solve_generated, ("jobshop", "4x4", 0, QUICK_S, 1), cores=1)
        [(key, result, error)] = _collect(again)
        assert time.monotonic() - start < LONG_S / 2
    finally:
        again.close()
    assert key == "after" and error is None
    _same_solves(result, solve_generated("jobshop", "4x4", 0, QUICK_S, 1))


def test_no_workers_is_a_clear_error(tmp_path):
    """Without workers the first submit fails after connect_timeout_s instead of waiting for one forever
    (the bound is generous, for a loaded machine)."""
    address, _, procs = _start_cluster(tmp_path / "empty", workers=0)
    try:
        pool = DaskPool(address, connect_timeout_s=1)
        try:
            start = time.monotonic()
            with pytest.raises(DaskUnavailable, match="has no workers.*--resources"):
                pool.submit(0, solve_generated, ("jobshop", "4x4", 0, QUICK_S, 1), cores=1)
            assert time.monotonic() - start < 60
        finally:
            pool.kill()
    finally:
        _stop(procs)


def test_kill_after_the_scheduler_died(tmp_path):
    from distributed import Client

    address, _, procs = _start_cluster(tmp_path / "doomed", workers=1)
    try:
        pool = DaskPool(address)
        for seed in range(3):
            pool.submit(seed, solve_generated, ("jobshop", "20x20", seed, LONG_S, 1), cores=1)
        with Client(address, timeout=60, set_as_default=False) as client:
            wait_until(lambda: _running(client, 2), "two solves running", timeout=PATIENCE_S)
        os.killpg(procs[0].pid, signal.SIGKILL)  # the scheduler dies mid-build
        procs[0].wait(60)
        start = time.monotonic()
        lost = []
        while len(lost) < 3 and time.monotonic() - start < PATIENCE_S:
            lost += pool.completed(timeout_s=1.0)  # lost calls come back as errors, never hang
        assert sorted(key for key, _, _ in lost) == [0, 1, 2]
        assert all(result is None and error is not None for _, result, error in lost)
        start = time.monotonic()
        pool.kill()
        assert time.monotonic() - start < 30  # kill() bounds itself at about 10 s; generous for a loaded machine
    finally:
        _stop(procs)


def test_build_dataset_on_the_cluster_gives_the_rows_of_a_local_build(cluster, tmp_path):
    """`build-dataset --dask-scheduler` and the local pool build the same rows (wall times and CPU aside).

    The j10 references are proved optimal in milliseconds, far inside their limit, and then the rows
    are the same; a reference cut off by its limit (a machine loaded past all reason) may differ, and
    with it the seeds --min-gap passes over, so only the row ids are compared then.
    """
    address, _ = cluster
    args = [
        "build-dataset",
        "--problem",
        "rcpsp",
        "--sizes",
        "j10",
        "--level",
        "2",
        "--num-rows",
        "3",
        "--eval-instances",
        "2",
        "--reference-time-limit",
        f"{QUICK_S:g}",
        "--min-gap",
        "0.01",
    ]
    outs = {}
    for name, extra in (("local", ["--workers", "2"]), ("dask", ["--dask-scheduler", address])):
        outs[name] = tmp_path / f"{name}.jsonl"
        done = subprocess.run(
            [Path(sys.executable).with_name("orharbor"), *args, *extra, "--out", str(outs[name])],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr

    dask, local = _rows(outs["dask"]), _rows(outs["local"])
    if _proved(dask) and _proved(local):
        assert dask == local
    else:
        assert [row["id"] for row in dask] == [row["id"] for row in local]


# ------------------------------------------------------------------ workers without `cores`


@pytest.fixture(scope="module")
def plain_cluster():
    """A LocalCluster as a 2-core machine makes it by default: 2 one-thread workers, no resources declared."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, memory_limit=0
    ) as cluster:
        yield cluster.scheduler_address


def _build(args: list[str], out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [Path(sys.executable).with_name("orharbor"), "build-dataset", *args, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_cluster_without_cores_runs_one_solve_per_worker_thread_and_builds_the_local_rows(plain_cluster, tmp_path):
    args = [
        "--problem",
        "jobshop",
        "--sizes",
        "4x4",
        "--level",
        "1",
        "--num-rows",
        "4",
        "--reference-time-limit",
        f"{QUICK_S:g}",
    ]  # 4x4 references are proved optimal in milliseconds
    local, dask = (
        _build([*args, "--workers", "2"], tmp_path / "local.jsonl"),
        _build([*args, "--dask-scheduler", plain_cluster], tmp_path / "dask.jsonl"),
    )
    assert local.returncode == 0, local.stderr
    assert dask.returncode == 0, dask.stderr
    said = [line for line in dask.stderr.splitlines() if "`cores`" in line]
    assert said == [
        f"warning: no worker of the Dask cluster at {plain_cluster} declares the resource `cores`: "
        "each solve takes one worker thread (2 worker(s), 2 thread(s) in all)"
    ]

    rows, local_rows = _rows(tmp_path / "dask.jsonl"), _rows(tmp_path / "local.jsonl")
    assert len(rows) == 4
    if _proved(rows) and _proved(local_rows):
        assert rows == local_rows
    else:  # a reference cut off by its limit (a machine loaded past all reason): the rest must still agree
        for row, local in zip(rows, local_rows, strict=True):
            _same_solves(row, local)
            assert {k: v for k, v in row.items() if k not in (*FOUND, "reference_meta")} == {
                k: v for k, v in local.items() if k not in (*FOUND, "reference_meta")
            }


def test_without_cores_a_solve_of_more_threads_than_any_worker_has_is_refused(plain_cluster, tmp_path):
    out = tmp_path / "two.jsonl"
    done = _build(
        [
            "--problem",
            "jobshop",
            "--sizes",
            "4x4",
            "--level",
            "1",
            "--num-rows",
            "2",
            "--reference-time-limit",
            f"{QUICK_S:g}",
            "--solver-workers",
            "2",
            "--dask-scheduler",
            plain_cluster,
        ],
        out,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    [error] = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert "declares the resource `cores` and none has the 2 threads" in error
    assert "the largest has 1); pass --solver-workers 1 or less" in error and not out.exists()
    assert list(tmp_path.iterdir()) == [] and "--resume" not in error  # refused before a journal was started


def test_without_cores_multi_thread_solves_are_said_to_oversubscribe_once():
    """A 2-thread worker takes 2-thread solves, one per thread, and the note says so once; 3 threads are refused."""
    from distributed import LocalCluster

    notes: list[str] = []
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        pool = DaskPool(cluster.scheduler_address, note=notes.append)
        try:
            pool.check_resources(2)
            pool.check_resources(2)
            with pytest.raises(DaskUnavailable, match="none has the 3 threads.*the largest has 2"):
                pool.check_resources(3)
        finally:
            pool.close()
    [note] = notes
    assert note.endswith(
        "(1 worker(s), 2 thread(s) in all); a solve runs its 2 CP-SAT threads in that one thread, "
        "so a busy worker runs 2 times as many solver threads as it has (start workers with "
        '--resources "cores=N" to pack them)'
    )
