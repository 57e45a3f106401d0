"""build-dataset without losing work: journal, resume, prompt interrupts, arguments checked before solving."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from waiting import catches, wait_until

from orharbor.datasets.engine import build_dataset
from orharbor.datasets.engine import BuildPlan, NotThisBuild, Progress, cpu_share, finished_rows
from orharbor.datasets.rows import write_rows

ORHARBOR = Path(sys.executable).with_name("orharbor")
#: 120 small job shops, each proved optimal in milliseconds; the limit is far above that, for a loaded machine.
BUILD = [
    "build-dataset",
    "--problem",
    "jobshop",
    "--sizes",
    "4x4",
    "6x6",
    "--num-rows",
    "120",
    "--reference-time-limit",
    "60",
    "--workers",
    "2",
]
TIMING = ("wall_time_s", "cpu_time_s", "cpu")
#: What a solve that hit its time limit may find differently from one run to the next.
FOUND = ("reference", "reference_solution", "reference_meta")


def comparable(path: Path) -> list[dict]:
    """The rows of a file, wall times and the machine's CPU aside.

    A reference CP-SAT proved optimal is the same every run (one thread, one
    seed); one cut off by its limit (a machine loaded past all reason) is not,
    so its findings are left out rather than asserted.
    """
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        for key in TIMING:
            row["reference_meta"].pop(key, None)
        if row["reference_meta"].get("status") != "OPTIMAL":
            for key in FOUND:
                row.pop(key)
    return rows


def start(args: list[str], out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [ORHARBOR, *args, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("whole") / "rows.jsonl"
    done = subprocess.run([ORHARBOR, *BUILD, "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not Path(f"{out}.journal").exists()
    return comparable(out)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupts_at_random_moments_stop_promptly_and_resume_to_the_same_rows(uninterrupted, tmp_path, signum):
    """Interrupts at random moments from orharbor's first line on (importing, planning, starting workers,
    solving), each followed by the same command with --resume: one line and 128 + signal every time, then
    the rows of an uninterrupted build.

    The moment is counted from when the process handles SIGTERM (its first line of orharbor ran), not from
    the fork: on a loaded machine Python's own start takes a varying part of a second, and a signal then
    gets Python's default answer before any orharbor code exists to give another.
    """
    out = tmp_path / "rows.jsonl"
    rng = random.Random(signum)
    for attempt in range(6):
        args = BUILD + (["--resume"] if attempt else [])
        process = start(args, out)
        wait_until(lambda: catches(signal.SIGTERM, process.pid), "installing the SIGTERM handler")
        time.sleep(rng.uniform(0.0, 1.5))
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
        if out.exists() and not Path(f"{out}.journal").exists():
            break  # it finished before the signal arrived: nothing left to resume
        shown = [
            line
            for line in stderr.splitlines()  # beside the progress lines and the fresh start's note
            if not line.startswith(("rows ", "no journal at "))
        ]
        assert process.returncode == 128 + signum, stderr
        assert len(shown) == 1 and signal.Signals(signum).name in shown[0] and "Traceback" not in stderr, stderr
        assert not out.exists()
    if not out.exists():
        done = subprocess.run(
            [ORHARBOR, *BUILD, "--resume", "--out", str(out)], capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
    assert comparable(out) == uninterrupted
    assert not Path(f"{out}.journal").exists()


def test_a_journal_is_refused_without_resume_or_force_and_with_other_arguments(tmp_path):
    out = tmp_path / "rows.jsonl"
    process = start(BUILD, out)
    wait_until(Path(f"{out}.journal").exists, "starting the journal")
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    journal = Path(f"{out}.journal")
    assert journal.exists()
    before = journal.read_bytes()
    again = subprocess.run([ORHARBOR, *BUILD, "--out", str(out)], capture_output=True, text=True)
    assert again.returncode == 1 and "--resume continues it" in again.stderr
    other = [*BUILD[:-1], "1", "--resume", "--out", str(out)]  # --workers 1 is fine, but not another limit
    other[other.index("--reference-time-limit") + 1] = "7"
    changed = subprocess.run([ORHARBOR, *other], capture_output=True, text=True)
    assert changed.returncode == 1 and "reference_time_limit_s" in changed.stderr
    assert journal.read_bytes() == before


@pytest.mark.parametrize(
    "args, message",
    [
        (["--reference-time-limit", "nan"], "not a finite number"),
        (["--reference-time-limit", "inf"], "not a finite number"),
        (["--reference-time-limit", "0.000001"], "0.01"),
        (["--num-rows", "1000000000"], "100000"),
        (["--min-gap", "nan"], "not a finite number"),
        (["--resume", "--force"], "pass one of them"),
        (["--sizes", "5x5"], "unknown size"),
    ],
)
def test_bad_arguments_fail_at_once_and_touch_nothing(tmp_path, args, message):
    out = tmp_path / "rows.jsonl"
    out.write_text("keep me\n")
    base = ["build-dataset", "--problem", "jobshop", "--sizes", "4x4", "--num-rows", "2", "--force"]
    if "--resume" in args:
        base.remove("--force")
    sent = time.monotonic()
    done = subprocess.run([ORHARBOR, *base, *args, "--out", str(out)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and message in done.stderr, done.stderr
    # "at once" = before any solve: a generous bound, since a loaded machine takes seconds to import OR-Tools
    assert time.monotonic() - sent < 120 and out.read_text() == "keep me\n"
    assert not Path(f"{out}.journal").exists()


@pytest.mark.parametrize(
    "out, message",
    [
        ("/proc/x.jsonl", "Error: cannot create /proc/x.jsonl: No such file or directory"),
        ("{tmp}/missing/x.jsonl", "does not exist"),
        ("{tmp}", "is a folder; give a file name"),
    ],
)
def test_an_unusable_output_path_fails_before_solving(tmp_path, out, message):
    done = subprocess.run(
        [
            ORHARBOR,
            "build-dataset",
            "--problem",
            "jobshop",
            "--sizes",
            "4x4",
            "--num-rows",
            "2",
            "--out",
            out.format(tmp=tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode in (1, 2) and message in done.stderr and "Traceback" not in done.stderr


def test_an_existing_output_is_refused_and_resume_refuses_another_builds_output(tmp_path):
    out = tmp_path / "rows.jsonl"
    out.write_text("keep me\n")
    small = ["build-dataset", "--problem", "jobshop", "--sizes", "4x4", "--num-rows", "2", "--out", str(out)]
    refused = subprocess.run([ORHARBOR, *small], capture_output=True, text=True)
    assert refused.returncode == 1 and out.read_text() == "keep me\n"
    resumed = subprocess.run([ORHARBOR, *small, "--resume"], capture_output=True, text=True)
    assert resumed.returncode == 1 and "nothing to resume" in resumed.stderr and "--force" in resumed.stderr
    assert out.read_text() == "keep me\n"


def test_resume_is_idempotent_a_fresh_start_then_success_on_the_finished_build(tmp_path):
    """A requeued job runs the same --resume command again and again: it builds, then says it is built."""
    out = tmp_path / "rows.jsonl"
    small = [
        "build-dataset",
        "--problem",
        "jobshop",
        "--sizes",
        "4x4",
        "--num-rows",
        "3",
        "--reference-time-limit",
        "5",
        "--workers",
        "1",
        "--resume",
        "--out",
        str(out),
    ]
    first = subprocess.run([ORHARBOR, *small], capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "no journal" in first.stderr and "starts from the beginning" in first.stderr
    built = out.read_bytes()
    assert len(built.splitlines()) == 3 and not Path(f"{out}.journal").exists()
    again = subprocess.run([ORHARBOR, *small], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert again.stderr.strip().splitlines() == [
        f"{out} is already built (3 rows) and has no journal: nothing to resume"
    ]
    assert out.read_bytes() == built
    other = [*small]
    other[other.index("--num-rows") + 1] = "4"  # another build's arguments: its rows are not these
    refused = subprocess.run([ORHARBOR, *other], capture_output=True, text=True, timeout=300)
    assert refused.returncode == 1 and "holds 3 rows where this build makes 4" in refused.stderr
    assert out.read_bytes() == built


@pytest.mark.slow
def test_min_gap_replaces_trivial_instances_with_the_next_seeds(tmp_path):
    """RCPSP j10 rows where naive already matches the reference are replaced; the seeds passed over are kept.

    Such a build is finished for --resume: its rows name the seeds kept, not the planned ones.
    """
    plain = build_dataset("rcpsp", ["j10"], 1, 12, reference_time_limit_s=5, workers=2)
    gapped = build_dataset("rcpsp", ["j10"], 1, 12, reference_time_limit_s=5, workers=2, min_gap=0.01)
    write_rows(gapped, tmp_path / "rows.jsonl")
    plan = BuildPlan("rcpsp", ("j10",), 1, 12, 5.0, min_gap=0.01)
    assert finished_rows(plan, tmp_path / "rows.jsonl") == 12
    moved = next(i for i, row in enumerate(gapped) if row.get("skipped_seeds"))
    for tamper in ({"skipped_seeds": gapped[moved]["skipped_seeds"][1:]}, {"id": f"rcpsp-j10-l1-s{10**6}"}):
        write_rows([dict(row, **tamper) if i == moved else row for i, row in enumerate(gapped)], tmp_path / "x.jsonl")
        with pytest.raises(NotThisBuild, match=f"its row {moved + 1} differs in"):
            finished_rows(plan, tmp_path / "x.jsonl")
    trivial = [r for r in plain if (r["baseline"] - r["reference"]) / r["baseline"] < 0.01]
    assert trivial, "the first 12 seeds hold no trivial instance: pick another start seed for this test"
    for row in gapped:
        assert (row["baseline"] - row["reference"]) / row["baseline"] >= 0.01
        assert row["id"] == f"rcpsp-j10-l1-s{row['instance_seed']}"
    skipped = sorted(seed for row in gapped for seed in row.get("skipped_seeds", []))
    assert set(skipped) >= {r["instance_seed"] for r in trivial}
    assert len({r["id"] for r in gapped}) == 12


def test_rows_record_their_provenance():
    [row] = build_dataset("jobshop", ["4x4"], 1, 1, reference_time_limit_s=2, workers=1)
    meta = row["reference_meta"]
    assert {"version", "time_limit_s", "workers", "status", "bound", "wall_time_s", "cpu"} <= set(meta)
    assert meta["improved_on_baseline"] is True


def test_progress_prints_plain_lines_when_piped(tmp_path):
    stream = (tmp_path / "log").open("w")
    progress = Progress(10, stream, every_s=0.0)
    for _ in range(10):
        progress.advance(1)
    stream.close()
    lines = (tmp_path / "log").read_text().splitlines()
    assert len(lines) == 10 and lines[-1].startswith("rows 10/10 ") and "rows/h" in lines[-1] and "ETA" in lines[0]


def test_the_plan_decides_the_seeds():
    plan = BuildPlan("jobshop", ("4x4",), 2, 5, 1.0, eval_instances=3)
    seeds = {plan.seed(r, s, a) for r in range(5) for s in range(3) for a in range(4)}
    assert len(seeds) == 5 * 3 * 4  # every candidate of every slot is a different instance


def _on_cpu0():
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


@pytest.mark.slow
def test_a_reference_starved_of_cpu_is_reported(tmp_path):
    """A build sharing its one CPU with a busy loop gets about half a core per reference, and says so.

    Job shop 30x20 is never proved optimal in 3 s, so the reference runs to
    its limit; a slower machine only starves it more.
    """
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=_on_cpu0)
    try:
        done = subprocess.run(
            [
                ORHARBOR,
                "build-dataset",
                "--problem",
                "jobshop",
                "--sizes",
                "30x20",
                "--num-rows",
                "1",
                "--reference-time-limit",
                "3",
                "--workers",
                "1",
                "--out",
                str(tmp_path / "rows.jsonl"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            preexec_fn=_on_cpu0,
        )
    finally:
        hog.kill()
        hog.wait()
    assert done.returncode == 0, done.stderr
    [row] = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    meta = row["reference_meta"]
    assert meta["status"] != "OPTIMAL" and meta["cpu_time_s"] / meta["wall_time_s"] < 0.8
    assert "1 reference(s) got under 80% of the CPU their 1 solver worker(s) could use" in done.stderr


def test_cpu_share_counts_only_references_that_ran_to_their_limit():
    assert cpu_share({"status": "FEASIBLE", "cpu_time_s": 30.0, "wall_time_s": 60.0}) == 0.5
    assert cpu_share({"status": "OPTIMAL", "cpu_time_s": 1.0, "wall_time_s": 60.0}) is None
    assert cpu_share({"status": "FEASIBLE", "cpu_time_s": 0.1, "wall_time_s": 0.5}) is None  # too short to say
    assert cpu_share({"status": "FEASIBLE", "wall_time_s": 60.0}) is None  # built before cpu_time_s was recorded
