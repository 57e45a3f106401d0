"""build-dataset's engine: every solve journaled as it finishes, resumable, interruptible at any moment.

A build is a set of solves, one per instance (a level-1 row has one, a
level-2 row one per evaluation instance). Each finished solve is appended to
a journal beside the output (``<out>.journal``, one JSON line, flushed) before
anything else happens, so an interrupt, a crash or a lost cluster keeps every
finished solve; ``resume=True`` reads the journal and solves only the rest.
The output is written once, at the end, in the plan's row order, to a
temporary file that is then renamed; the journal is removed after that.

``min_gap`` drops instances whose naive baseline is within that relative
distance of the reference (their rewards would all be +1 or -1) and tries the
slot's next seed instead: candidate seeds are strided by the row count, so
the rows do not depend on the order in which solves finish. The seeds passed
over are kept in the row (``skipped_seeds``).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

from orharbor.datasets.build import EVAL_SEED_BASE, Strength, attach_eval, plan_rows, row_id, solve_generated
from orharbor.datasets.published import published_rows, solve_published
from orharbor.datasets.pools import LocalPool, SolvePool
from orharbor.datasets.rows import iter_rows, read_rows, validate_row, write_rows
from orharbor.errors import UserError
from orharbor import interrupts
from orharbor.verifiers.cpu_calibration import workload_s

JOURNAL_VERSION = 1
#: Seeds tried per instance slot before ``min_gap`` gives up and keeps the last one (flagged).
MAX_ATTEMPTS = 20


class JournalError(UserError):
    """A journal beside --out that this build cannot resume from."""


class Interrupted(interrupts.Interrupted):
    """The build was stopped by a signal; the journal holds every finished solve."""

    def __init__(self, journal: Path, kept: int, total: int, signum: int, several: bool = False):
        where = (
            f"are kept in the journals beside the outputs (*.journal in {journal.parent})"
            if several
            else f"are kept in {journal}"
            if journal.exists()
            else "are kept (no journal was started)"
        )
        super().__init__(
            f"interrupted ({signal.Signals(signum).name}): {kept} of {total} solves {where}; "
            "run the same command with --resume to build the rest",
            signum,
        )


@dataclass(frozen=True)
class BuildPlan:
    """What to build: the arguments that decide the rows (and must match to resume).

    ``orharbor build-dataset`` makes one from its options, a recipe one per part
    (:mod:`orharbor.benchmark.recipe`); :func:`orharbor.api.build_dataset` and
    :func:`run_build` take it.
    """

    #: The problem class (``orharbor problems``).
    problem: str
    #: The sizes of the generated rows, assigned round-robin (none for a published set).
    sizes: tuple[str, ...]
    #: 1 (the agent writes a solution) or 2 (it writes solve.py, run on hidden instances).
    level: int
    #: Rows to build.
    num_rows: int
    #: CP-SAT seconds of the reference on each instance.
    reference_time_limit_s: float
    #: CP-SAT threads of each solve.
    solver_workers: int = 1
    #: The first row's instance seed; row ``i`` starts from ``start_seed + i``.
    start_seed: int = 0
    #: Level 2: hidden evaluation instances per row.
    eval_instances: int = 4
    #: Level 2: wall-clock seconds solve.py gets per instance.
    solve_time_limit_s: float = 10.0
    #: Drop an instance whose naive baseline is within this relative gap of the reference and try the slot's
    #: next seed (0: keep every instance).
    min_gap: float = 0.0
    #: A published set of the class (``orharbor.datasets.published``) whose instances ``names`` are solved,
    #: one level-1 row each, instead of generated seeds ("": generated rows).
    published: str = ""
    #: The instances of ``published`` to solve, in row order.
    names: tuple[str, ...] = ()
    #: Pass over an instance whose reference is 0, as one below ``min_gap``: an answer that reaches 0 ties the
    #: reference and none can beat it (for weighted tardiness, EDD alone then finds the optimum).
    skip_zero_reference: bool = False
    #: Seconds of the ladder's local search, run after its rule; their best answer warm-starts the reference
    #: (0: off; :class:`~orharbor.datasets.build.Strength`).
    ladder_budget_s: float = 0.0
    #: Seconds of the class's strongest open solver after the reference, for the row's best known value
    #: (0: off; skipped for a proven optimum or a literature value).
    best_known_time_limit_s: float = 0.0
    #: Threads of that best-known run.
    best_known_workers: int = 1

    #: Fields a journal written before them does not record (each only when set).
    LATER_FIELDS = (
        "published",
        "names",
        "skip_zero_reference",
        "ladder_budget_s",
        "best_known_time_limit_s",
        "best_known_workers",
    )

    def key(self) -> dict:
        """The plan as the journal records it (the later fields only when set, as journals before them)."""
        defaults = {"best_known_workers": 1}
        return {
            k: (list(v) if isinstance(v, tuple) else v)
            for k, v in self.__dict__.items()
            if k not in self.LATER_FIELDS or (v and v != defaults.get(k))
        }

    @property
    def strength(self) -> Strength:
        return Strength(self.ladder_budget_s, self.best_known_time_limit_s, self.best_known_workers)

    @property
    def cores(self) -> int:
        """Threads one solve of this plan runs at once (its reference's, or its best-known run's)."""
        return max(self.solver_workers, self.best_known_workers if self.best_known_time_limit_s > 0 else 1)

    def accepts(self, gap: float, zero_reference: bool) -> bool:
        """Whether a solved instance is kept for its slot, or the slot's next seed is tried."""
        return (self.min_gap <= 0 or gap >= self.min_gap) and not (self.skip_zero_reference and zero_reference)

    def slots(self) -> int:
        return self.num_rows * (1 if self.level == 1 else self.eval_instances)

    def passed_over(self, row: int, slot: int, attempt: int) -> list[int]:
        """The seeds a slot passed over before its ``attempt``-th candidate."""
        return [self.seed(row, slot, a) for a in range(attempt)]

    def seed(self, row: int, slot: int, attempt: int) -> int:
        """The instance seed of a slot's ``attempt``-th candidate."""
        base = self.start_seed + row
        if self.level == 1:
            return base + attempt * self.num_rows
        return EVAL_SEED_BASE + base * self.eval_instances + slot + attempt * self.num_rows * self.eval_instances


class NotThisBuild(UserError):
    """--resume found an --out (and no journal) that another build wrote."""


#: What a finished row must share with the plan's row for --resume to call the build done.
PLANNED_FIELDS = ("id", "problem", "size", "level", "reference_time_limit_s", "solve_time_limit_s")


def journal_path(out: Path) -> Path:
    return out.with_name(out.name + ".journal")


def finished_rows(plan: BuildPlan, out: Path) -> int:
    """The row count of ``out`` if it is the finished build of ``plan``, else :class:`NotThisBuild` saying why.

    Rows are read one at a time and validated; each must carry its planned id,
    size, level and limits (with ``min_gap`` the instance seed may be a later one).
    """
    planned = planned_rows(plan)
    count = 0
    try:
        for count, row in enumerate(iter_rows(out), 1):
            want = _as_kept(plan, count - 1, planned[count - 1], row) if count <= len(planned) else None
            differing = want and [f for f in (*PLANNED_FIELDS, "skipped_seeds") if row.get(f) != want.get(f)]
            if want is None or differing or len(row.get("eval_seeds", ())) != len(want.get("eval_seeds", ())):
                what = (
                    f"its row {count} differs in {', '.join(differing)}"
                    if differing
                    else f"its row {count} is not this build's"
                )
                raise NotThisBuild(
                    f"nothing to resume, and {out} is not this build's output ({what}); --force builds it again"
                )
    except UserError as exc:
        if isinstance(exc, NotThisBuild):
            raise
        raise NotThisBuild(
            f"nothing to resume, and {out} is not a finished build ({exc}); --force builds it again"
        ) from None
    if count != len(planned):
        raise NotThisBuild(
            f"nothing to resume, and {out} holds {count} rows where this build makes {len(planned)}; "
            "--force builds it again"
        )
    return count


def _as_kept(plan: BuildPlan, r: int, planned: dict, row: dict) -> dict:
    """The planned row as a finished build writes it: a level-1 row names the seed kept after those passed over."""
    passed = row.get("skipped_seeds")
    if plan.level != 1 or plan.published:  # a level-2 row's id names no seed; its eval_seeds are its own
        return dict(planned, skipped_seeds=passed) if passed is not None else planned
    if not isinstance(passed, list) or not 0 < len(passed) < MAX_ATTEMPTS:
        return planned
    return dict(
        planned,
        id=row_id(plan.problem, planned["size"], 1, plan.seed(r, 0, len(passed))),
        skipped_seeds=plan.passed_over(r, 0, len(passed)),
    )


def planned_rows(plan: BuildPlan) -> list[dict]:
    """The row skeletons of a plan: generated seeds, or the named instances of a published set."""
    if plan.published:
        return published_rows(plan.problem, plan.published, list(plan.names), plan.reference_time_limit_s)
    return plan_rows(
        plan.problem,
        list(plan.sizes),
        plan.level,
        plan.num_rows,
        start_seed=plan.start_seed,
        eval_instances=plan.eval_instances,
        solve_time_limit_s=plan.solve_time_limit_s,
        reference_time_limit_s=plan.reference_time_limit_s,
    )


def relative_gap(result: dict) -> float:
    """How much better the reference is than naive, relative to naive."""
    return (result["baseline"] - result["reference"]) / max(abs(result["baseline"]), 1e-9)


class Journal:
    """The append-only record of finished solves of one build.

    In memory it keeps, per solve, only where its line starts and the two
    figures the build decides on (the relative gap, and whether the reference
    improved on naive), so memory stays flat however large the solutions;
    :meth:`load` reads a solve back when its row is written.
    """

    def __init__(self, path: Path, plan: BuildPlan, resume: bool):
        self.path = path
        self.done: dict[tuple[int, int, int], tuple[int, float, bool, bool, float | None]] = {}
        if resume and path.exists():
            self._read(plan)
            self._file = path.open("ab")
        else:  # the header goes in before the journal appears, so an interrupt never leaves a headless one
            fresh = path.with_name(f".{path.name}.tmp-{os.getpid()}")
            with interrupts.deferred(), fresh.open("wb") as f:
                f.write(_line({"journal": JOURNAL_VERSION, "plan": plan.key()}))
                f.flush()
                os.replace(fresh, path)
            self._file = path.open("ab")

    def _read(self, plan: BuildPlan) -> None:
        with self.path.open("rb") as f:
            try:
                header = json.loads(f.readline())
            except ValueError:
                header = None
            if not isinstance(header, dict) or "plan" not in header:
                raise JournalError(f"{self.path} is not a build journal; remove it or build with --force")
            if header["plan"] != plan.key():
                differing = sorted(k for k, v in plan.key().items() if (header.get("plan") or {}).get(k) != v)
                raise JournalError(
                    f"{self.path} was made by a build with other arguments ({', '.join(differing)}); "
                    "resume with the same arguments, or start over with --force"
                )
            end = f.tell()
            for line in f:
                offset, end = end, end + len(line)
                try:
                    entry = json.loads(line)
                    self.done[(entry["row"], entry["slot"], entry["attempt"])] = (offset, *_figures(entry["result"]))
                except (ValueError, KeyError, TypeError):
                    continue  # the last line of a build killed mid-write
        if not line_ends(self.path):
            with self.path.open("ab") as f:  # end a torn last line, so the next entry starts on its own line
                f.write(b"\n")

    def _write(self, entry: dict) -> int:
        offset = self._file.tell()
        self._file.write(_line(entry))
        self._file.flush()
        return offset

    def record(self, key: tuple[int, int, int], result: dict) -> None:
        offset = self._write({"row": key[0], "slot": key[1], "attempt": key[2], "result": result})
        self.done[key] = (offset, *_figures(result))

    def gap(self, key: tuple[int, int, int]) -> float:
        return self.done[key][1]

    def zero(self, key: tuple[int, int, int]) -> bool:
        """Whether the reference of that solve is 0 (nothing left to optimise once an answer reaches it)."""
        return self.done[key][3]

    def load(self, reader, key: tuple[int, int, int]) -> dict:
        """The result of a recorded solve, read back from the journal file through ``reader``."""
        reader.seek(self.done[key][0])
        return json.loads(reader.readline())["result"]

    def close(self) -> None:
        self._file.close()


#: A reference that ran to its limit with less than this share of its solver
#: workers' CPU was starved by other work, and the build warns about it.
STARVED_SHARE = 0.8


def _line(entry: dict) -> bytes:
    return json.dumps(entry, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def _figures(result: dict) -> tuple[float, bool, bool, float | None]:
    meta = result["reference_meta"]
    return (
        relative_gap(result),
        bool(meta.get("improved_on_baseline", True)),
        result["reference"] == 0,
        cpu_share(meta),
    )


def cpu_share(meta: dict) -> float | None:
    """CPU seconds per wall second of a reference that ran to its limit (None if it stopped early, or is unknown).

    Run with one solver worker on an idle core it is about 1.0; well below
    that, other work took the CPU and the reference is weaker than its limit
    promises, which no later check can see from the objective alone.
    """
    cpu_s, wall_s = meta.get("cpu_time_s"), meta.get("wall_time_s")
    if (
        str(meta.get("status")) == "OPTIMAL"
        or not isinstance(cpu_s, (int, float))
        or not isinstance(wall_s, (int, float))
    ):
        return None
    return cpu_s / wall_s if wall_s >= 1.0 else None


def line_ends(path: Path) -> bool:
    """Whether the file is empty or ends with a newline."""
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


class Progress:
    """Rows done, rows per hour and the time left: one redrawn line on a terminal, else a plain line now and then."""

    def __init__(self, total: int, stream=None, every_s: float = 30.0):
        self.total, self.done, self.stream = total, 0, stream or sys.stderr
        self.start = time.monotonic()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every_s, self._last = every_s, 0.0

    def advance(self, rows: int, already: int = 0) -> None:
        if rows <= 0:
            return  # a solve that finished no row (the rest of a level-2 row, or a seed passed over)
        self.done += rows
        now = time.monotonic()
        if self.tty or now - self._last >= self.every_s or self.done == self.total:
            self._last = now
            self.stream.write(("\r" if self.tty else "") + self.line(now, already) + ("" if self.tty else "\n"))
            self.stream.flush()

    def line(self, now: float, already: int = 0) -> str:
        elapsed_s = max(now - self.start, 1e-9)
        fresh = max(self.done - already, 0)
        rate = fresh / elapsed_s * 3600
        left_s = (self.total - self.done) / (fresh / elapsed_s) if fresh else None
        eta = "-" if left_s is None else time.strftime("%H:%M:%S", time.gmtime(left_s))
        return f"rows {self.done}/{self.total}  {rate:.0f} rows/h  ETA {eta}"

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def run_build(
    plan: BuildPlan,
    out: Path,
    pool: SolvePool,
    *,
    resume: bool = False,
    progress: Progress | None = None,
    warn: Callable[[str], None] = lambda m: None,
) -> int:
    """Solve the plan's instances on ``pool`` (journaled), then write ``out``; return how many rows."""
    return run_builds([(plan, out)], pool, resume=resume, progress=progress, warn=warn)[0]


def build_dataset(
    problem: str,
    sizes: list[str],
    level: int,
    num_rows: int,
    *,
    reference_time_limit_s: float = 60.0,
    solver_workers: int = 1,
    workers: int | None = None,
    start_seed: int = 0,
    eval_instances: int = 4,
    solve_time_limit_s: float = 10.0,
    min_gap: float = 0.0,
) -> list[dict]:
    """Plan the rows, solve every instance on a local process pool, return validated rows.

    The same engine as ``orharbor build-dataset`` (:func:`run_build`), with its
    journal and output in a temporary folder.
    """
    plan = BuildPlan(
        problem,
        tuple(sizes),
        level,
        num_rows,
        reference_time_limit_s,
        solver_workers,
        start_seed,
        eval_instances,
        solve_time_limit_s,
        min_gap,
    )
    plan_rows(problem, list(sizes), level, 1)  # a bad size or level fails before any process starts
    with tempfile.TemporaryDirectory(prefix="orharbor-build-") as folder:
        out = Path(folder) / "rows.jsonl"
        run_build(plan, out, LocalPool(workers or os.cpu_count() or 1))
        return read_rows(out)


class _Part:
    """One plan of a build and its output: its rows, its journal, and which candidate seed each slot kept."""

    def __init__(self, index: int, plan: BuildPlan, out: Path):
        self.index, self.plan, self.out = index, plan, out
        self.rows = planned_rows(plan)
        self.per_row = 1 if plan.level == 1 else plan.eval_instances
        self.chosen: dict[tuple[int, int], int] = {}  # (row, slot) -> the attempt kept
        self.settled = [0] * plan.num_rows  # slots settled per row
        self.finished = 0  # rows with every slot settled
        self.written = False
        self.journal: Journal | None = None

    def settle(self, key: tuple[int, int, int]) -> tuple[int, int, int] | None:
        """The key to solve next for this slot, or None once it is settled (in ``chosen``)."""
        row, slot, attempt = key
        plan, journal = self.plan, self.journal
        assert journal is not None  # started before any solve is settled
        while key in journal.done:
            if plan.accepts(journal.gap(key), journal.zero(key)) or attempt + 1 >= MAX_ATTEMPTS:
                self.chosen[(row, slot)] = attempt
                self.settled[row] += 1
                self.finished += self.settled[row] == self.per_row
                return None
            attempt += 1
            key = (row, slot, attempt)
        return key

    def job(self, key: tuple[int, int, int]) -> tuple[Callable, tuple]:
        row, slot, attempt = key
        plan = self.plan
        if plan.published:
            return solve_published, (
                plan.problem,
                plan.published,
                self.rows[row]["source_name"],
                plan.reference_time_limit_s,
                plan.solver_workers,
                plan.strength,
            )
        return solve_generated, (
            plan.problem,
            self.rows[row]["size"],
            plan.seed(row, slot, attempt),
            plan.reference_time_limit_s,
            plan.solver_workers,
            plan.strength,
        )

    def write(self, warn: Callable[[str], None]) -> None:
        """The rows to ``out`` (beside it, then renamed) and the journal removed, as one step against signals."""
        journal = self.journal
        assert journal is not None  # started before the rows are written
        journal.close()
        finished = self.out.with_name(f".{self.out.name}.rows-{os.getpid()}")
        try:
            write_rows(assemble(self.plan, self.rows, self.chosen, journal, warn), finished)
            with interrupts.deferred():  # the rows and the journal's end go together: built, or resumable
                os.replace(finished, self.out)
                journal.path.unlink(missing_ok=True)
        finally:
            finished.unlink(missing_ok=True)
        self.written = True


def run_builds(
    builds: list[tuple[BuildPlan, Path]],
    pool: SolvePool,
    *,
    resume: bool = False,
    progress: Progress | None = None,
    warn: Callable[[str], None] = lambda m: None,
) -> list[int]:
    """Solve the instances of several plans on one ``pool``, each journaled beside its output; return row counts.

    The plans share the pool, so its workers stay busy across their ends; each
    output is written (and its journal removed) as soon as its last solve is in.
    SIGINT and SIGTERM (in the main thread) stop the build: queued solves are
    cancelled, running ones killed, and :class:`Interrupted` says how to resume.
    """
    parts = [_Part(i, plan, out) for i, (plan, out) in enumerate(builds)]
    if any(part.plan.level == 2 and part.plan.strength.on for part in parts):
        reference_workload_s()  # timed now, before any solve loads the machine (cached for the rows)
    stopped: list[int] = []
    pending: dict[int, int] = {}  # part -> solves submitted and not yet back

    def submit(part: _Part, key: tuple[int, int, int]) -> None:
        fn, args = part.job(key)
        pool.submit((part.index, *key), fn, args, part.plan.cores)
        pending[part.index] = pending.get(part.index, 0) + 1

    previous = {}
    if threading.current_thread() is threading.main_thread():

        def stop(signum, frame):
            stopped.append(signum)
            raise KeyboardInterrupt

        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, stop)
    try:
        try:
            for part in parts:
                part.journal = Journal(journal_path(part.out), part.plan, resume)
                for row in range(part.plan.num_rows):
                    for slot in range(part.per_row):
                        key = part.settle((row, slot, 0))
                        if key is not None:
                            submit(part, key)
            already = sum(part.finished for part in parts)
            if progress and already:
                progress.advance(already, already)
            for part in parts:
                if not pending.get(part.index):
                    part.write(warn)
            while pool.pending():
                for (index, *key), result, error in pool.completed(timeout_s=0.5):
                    part, key = parts[index], tuple(key)
                    pending[index] -= 1
                    if error is not None:
                        raise RuntimeError(f"solve of row {part.rows[key[0]]['id']} failed: {error}")
                    before = part.finished
                    part.journal.record(key, result)
                    following = part.settle(key)
                    if following is not None:
                        submit(part, following)
                    if progress:
                        progress.advance(part.finished - before, already)
                    if not pending[index]:
                        part.write(warn)
        except BaseException:
            pool.kill()
            raise
        pool.close()
        if progress:
            progress.finish()
    except KeyboardInterrupt:
        journals = [part.journal.path for part in parts if part.journal is not None and not part.written]
        kept = sum(len(part.journal.done) for part in parts if part.journal is not None)
        raise Interrupted(
            journals[0] if len(journals) == 1 else journal_path(parts[0].out),
            kept,
            sum(part.plan.slots() for part in parts),
            stopped[0] if stopped else signal.SIGINT,
            several=len(journals) > 1,
        ) from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for part in parts:
            if part.journal is not None:
                part.journal.close()
    return [len(part.rows) for part in parts]


def assemble(plan: BuildPlan, rows: list[dict], chosen: dict, journal: Journal, warn: Callable[[str], None]):
    """The final rows, one at a time, from the kept solves (read back from the journal).

    A row keeps the seeds passed over (``skipped_seeds``); at the end, a
    warning counts the references that did not improve on naive and the slots
    that never reached ``min_gap``.
    """
    per_row = 1 if plan.level == 1 else plan.eval_instances
    unimproved = unmet = starved = 0
    with journal.path.open("rb") as reader:
        yield from _assembled(plan, rows, chosen, journal, reader, per_row)
    for key, (_, gap, improved, zero, share) in journal.done.items():
        if chosen.get(key[:2]) == key[2]:
            unmet += not plan.accepts(gap, zero)
            unimproved += not improved
            starved += share is not None and share < STARVED_SHARE * plan.solver_workers
    if unimproved:
        warn(
            f"{unimproved} reference(s) did not improve on the naive baseline (flagged improved_on_baseline: "
            "false in reference_meta): a longer --reference-time-limit may help"
        )
    if starved:
        warn(
            f"{starved} reference(s) got under {STARVED_SHARE:.0%} of the CPU their {plan.solver_workers} solver "
            "worker(s) could use (cpu_time_s / wall_time_s in reference_meta): other work shared the machine, so "
            "they are weaker than their time limit promises; build again with --force on a quieter machine, "
            "or with fewer --workers"
        )
    if unmet:
        warn(
            f"{unmet} instance(s) kept a gap below --min-gap (or a reference of 0 the recipe skips) after "
            f"{MAX_ATTEMPTS} seeds"
        )


@cache
def reference_workload_s() -> float:
    """This machine's time for the verifier's fixed CPU workload, measured once per process, before the solves.

    A release's level-2 rows record it: their time limits were chosen for this
    machine, and the task's verifier scales them by how much slower or faster
    its own machine runs the same workload (:mod:`orharbor.verifiers.cpu_calibration`).
    """
    return round(workload_s(), 4)


def _assembled(plan: BuildPlan, rows: list[dict], chosen: dict, journal: Journal, reader, per_row: int):
    for r, row in enumerate(rows):
        attempts = [chosen[(r, s)] for s in range(per_row)]
        keys = [(r, s, a) for s, a in enumerate(attempts)]
        results = [journal.load(reader, key) for key in keys]
        skipped = [seed for s, attempt in enumerate(attempts) for seed in plan.passed_over(r, s, attempt)]
        if plan.published:
            row.pop("source_name")
            row.update(results[0])
        elif plan.level == 1:
            seed = plan.seed(r, 0, attempts[0])
            row["instance_seed"] = seed
            row["id"] = row_id(plan.problem, row["size"], 1, seed)
            row.update(results[0])
        else:
            row["eval_seeds"] = [plan.seed(r, s, a) for s, a in enumerate(attempts)]
            attach_eval(row, results)
            if plan.strength.on:  # a release's level-2 limits are this machine's: the verifier scales them by it
                row["reference_workload_s"] = reference_workload_s()
        if skipped:
            row["skipped_seeds"] = skipped
        validate_row(row, row["id"])
        yield row
        rows[r] = None  # type: ignore[call-overload]  # written: let it go (the list is not read again)
