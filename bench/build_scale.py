"""build-dataset at scale: Dask's overhead, memory over a 2,000-row build, the journal's and resume's cost.

    .venv/bin/python bench/build_scale.py [--rows 2000] [--dask-rows 60]

Prints one table:

- the same small build (jobshop 6x6, 1 s limit, solves that finish well inside
  it) on the local process pool and on a Dask cluster of as many one-core
  workers (``distributed.LocalCluster`` on this machine), and the ratio Dask /
  local;
- a ``--rows`` build of jobshop 4x4 at a 0.05 s limit on the local pool: the
  parent's resident memory after each quarter of the rows (flat means the
  engine keeps nothing per solve beyond the solve's own result);
- the share of that build's wall time spent appending to the journal, and the
  time a ``--resume`` of the finished journal takes (read, assemble, write)
  against the build's;
- ``--interrupts`` runs of ``orharbor build-dataset`` (jobshop 10x10, 5 s
  limits that bind) each sent SIGINT at a random moment: the longest and the
  median time from the signal to the process's exit.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from orharbor.datasets import engine
from orharbor.datasets.engine import BuildPlan, Interrupted, run_build
from orharbor.datasets.pools import LocalPool


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def timed_build(plan: BuildPlan, pool, folder: Path) -> float:
    start = time.monotonic()
    run_build(plan, folder / "rows.jsonl", pool)
    return time.monotonic() - start


def dask_overhead(rows: int, workers: int) -> tuple[float, float]:
    from distributed import LocalCluster

    from orharbor.datasets.dask_pool import DaskPool

    plan = BuildPlan("jobshop", ("6x6",), 1, rows, 1.0)
    with tempfile.TemporaryDirectory() as d:
        local = timed_build(plan, LocalPool(workers), Path(d))
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, resources={"cores": 1}, dashboard_address=None
        ) as cluster,
        tempfile.TemporaryDirectory() as d,
    ):
        dask = timed_build(plan, DaskPool(cluster.scheduler_address), Path(d))
    return local, dask


class StopWhenDone:
    """A pool that interrupts the build once every solve is back: the journal is then complete."""

    def __init__(self, pool):
        self.pool = pool

    def __getattr__(self, name):
        return getattr(self.pool, name)

    def completed(self, timeout_s):
        done = self.pool.completed(timeout_s)
        if not done and not self.pool.pending():
            raise KeyboardInterrupt
        return done

    def pending(self):
        return self.pool.pending() or 1  # keep the engine asking until the interrupt above


def memory_and_journal(rows: int, workers: int) -> dict:
    plan = BuildPlan("jobshop", ("4x4",), 1, rows, 0.05)
    samples: list[tuple[int, float]] = []
    spent = [0.0]
    record = engine.Journal.record

    def timed_record(self, key, result):
        start = time.perf_counter()
        record(self, key, result)
        spent[0] += time.perf_counter() - start
        if len(self.done) % max(rows // 4, 1) == 0:
            samples.append((len(self.done), rss_mib()))

    engine.Journal.record = timed_record
    try:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "rows.jsonl"
            start = time.monotonic()
            try:
                run_build(plan, out, StopWhenDone(LocalPool(workers)))
            except Interrupted:
                pass
            build_s = time.monotonic() - start
            start = time.monotonic()
            run_build(plan, out, LocalPool(1), resume=True)
            resume_s = time.monotonic() - start
    finally:
        engine.Journal.record = record
    return {"samples": samples, "build_s": build_s, "journal_s": spent[0], "resume_s": resume_s}


def interrupt_latency(count: int, workers: int) -> list[float]:
    """Seconds from SIGINT to exit of ``count`` builds interrupted at random moments."""
    rng = random.Random(0)
    orharbor = Path(sys.executable).with_name("orharbor")
    seconds = []
    with tempfile.TemporaryDirectory() as d:
        for i in range(count):
            out = Path(d) / f"rows-{i}.jsonl"
            process = subprocess.Popen(
                [
                    orharbor,
                    "build-dataset",
                    "--problem",
                    "jobshop",
                    "--sizes",
                    "10x10",
                    "--num-rows",
                    "40",
                    "--reference-time-limit",
                    "5",
                    "--workers",
                    str(workers),
                    "--out",
                    str(out),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(rng.uniform(0.5, 4.0))
            sent = time.monotonic()
            process.send_signal(signal.SIGINT)
            process.wait(timeout=120)
            seconds.append(time.monotonic() - sent)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--dask-rows", type=int, default=60)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--interrupts", type=int, default=20)
    args = parser.parse_args()
    threading.current_thread().name = "bench"
    local, dask = dask_overhead(args.dask_rows, args.workers)
    found = memory_and_journal(args.rows, args.workers)
    print(f"{'measure':52} {'value':>12}")
    print(f"{f'local pool, {args.dask_rows} rows, {args.workers} workers (s)':52} {local:12.2f}")
    print(f"{f'Dask LocalCluster, same build, {args.workers} workers (s)':52} {dask:12.2f}")
    print(f"{'ratio Dask / local':52} {dask / local:12.2f}")
    for done, rss in found["samples"]:
        print(f"{f'parent RSS after {done} of {args.rows} solves (MiB)':52} {rss:12.1f}")
    print(f"{f'{args.rows}-row build (s)':52} {found['build_s']:12.2f}")
    print(f"{'journal appends, share of the build':52} {found['journal_s'] / found['build_s']:12.2%}")
    print(f"{'resume of the finished journal (s)':52} {found['resume_s']:12.2f}")
    print(f"{'ratio resume / build':52} {found['resume_s'] / found['build_s']:12.3f}")
    if args.interrupts:
        seconds = interrupt_latency(args.interrupts, args.workers)
        print(f"{f'Ctrl-C to exit, longest of {len(seconds)} (s)':52} {max(seconds):12.3f}")
        print(f"{f'Ctrl-C to exit, median of {len(seconds)} (s)':52} {statistics.median(seconds):12.3f}")


if __name__ == "__main__":
    main()
