"""Every orharbor command as a Python function: :mod:`orharbor.cli` only parses, calls and prints.

=====================  =====================================================
command                function
=====================  =====================================================
``generate``           :func:`generate`
``solve``              :func:`solve`
``build-dataset``      :func:`build_dataset`
``export``             :func:`plan_export`, then :func:`export`
                       (``--env``: :func:`provider_warnings`)
``import retailopt``   :func:`import_retailopt`
``validate-specs``     :func:`validate_specs`
``report``             :func:`report`
``metrics --rows``     :func:`grade_answers`
``check``              :func:`orharbor.check.check_tasks`
``verify``             :func:`orharbor.local_verify.score`
``providers``          :mod:`orharbor.providers`
=====================  =====================================================

Anything wrong with the user's input or files is a
:class:`~orharbor.errors.UserError` subclass, raised before anything is
written; any other exception is a bug.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from orharbor import interrupts, problem_modules
from orharbor.errors import UserError

if TYPE_CHECKING:  # the engine is imported when a build runs, not with the CLI
    from orharbor.benchmark.recipe import Recipe
    from orharbor.datasets.engine import BuildPlan


class UnknownFormat(UserError):
    """A file format the problem class cannot write."""


class InstanceFileError(UserError):
    """An instance file that cannot be read, or whose instance breaks its problem class's rules."""


class OutputPathError(UserError):
    """An --out where no file can be written, or where a build would lose earlier work."""


class BuildFailed(UserError):
    """A build stopped by an error; the finished solves stay in its journal."""


class ExportInputError(UserError):
    """Export inputs that make no tasks: an empty dataset, a filter that keeps nothing, two tasks of one id."""


class ExportFailed(UserError):
    """An export that could not write a task (the disk, permissions); tasks already in place are kept."""


class ProviderRefuses(UserError):
    """The Harbor environment named by --env would refuse the exported tasks on every machine."""


class SameFile(UserError):
    """An output file that is the input file itself."""


class NoRows(UserError):
    """A rows file with no RetailOpt row to grade answers against."""


# ------------------------------------------------------------------ generate, solve


def generate(problem: str, size: str, seed: int = 0, fmt: str = "json") -> str:
    """The instance of ``problem`` at ``size`` from ``seed``, as JSON or in one of the class's file formats."""
    from orharbor.datasets.build import UnknownSize

    module = problem_modules.get(problem)
    if size not in module.SIZES:
        raise UnknownSize(f"unknown {problem} size {size!r}; valid sizes: {', '.join(module.SIZES)}")
    if fmt != "json" and fmt not in module.FORMATS:
        raise UnknownFormat(f"unknown {problem} format {fmt!r}; known: {', '.join(module.FORMATS)}")
    instance = module.generate(seed, size)
    return json.dumps(instance, indent=1) + "\n" if fmt == "json" else module.write(instance, fmt)


def read_instance(module, path: Path) -> dict:
    """The instance in ``path``: JSON (a file starting with ``{``) or any of the class's standard formats.

    Errors name ``path`` once: the format readers' ``name:line:`` (the file's
    base name) becomes ``path:line:``.
    """
    try:
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            raise InstanceFileError(f"{path}: the file is empty")
        return json.loads(text) if text.lstrip().startswith("{") else module.read(path)
    except (OSError, ValueError) as exc:
        message = str(exc)
        raise InstanceFileError(
            f"{path}{message.removeprefix(path.name)}" if message.startswith(f"{path.name}:") else f"{path}: {message}"
        ) from None


def solve(
    problem: str,
    instance_file: str | Path,
    *,
    reference_time_limit_s: float = 10.0,
    solver_workers: int | None = None,
    seed: int = 0,
) -> dict:
    """Solve a user's instance file with the class's OR-Tools reference; objective, bound, status, baseline,
    meta and solution, the objectives checked by the class's verifier.

    The instance is checked against its class's rules first: a broken rule, or
    a model CP-SAT rejects as invalid, is an :class:`InstanceFileError`, never a
    fallback answer. ``solver_workers``: CP-SAT threads (default: every core).
    """
    from orharbor.problem_modules.checks import InvalidInstance
    from orharbor.problem_modules.cpsat import ModelInvalid

    module = problem_modules.get(problem)
    path = Path(instance_file)
    instance = read_instance(module, path)
    try:
        module.validate_instance(instance)
    except InvalidInstance as exc:
        raise InstanceFileError(f"{path}: not a valid {problem} instance: {exc}") from None
    try:
        solution, meta = module.reference(
            instance, time_limit_s=reference_time_limit_s, workers=solver_workers or os.cpu_count() or 1, seed=seed
        )
    except ModelInvalid as exc:
        raise InstanceFileError(f"{path}: not a valid {problem} instance (ModelInvalid: {exc})") from None
    return {
        "objective": module.evaluate(instance, solution),
        "bound": meta.get("bound"),
        "status": meta.get("status"),
        "baseline": module.evaluate(instance, module.baseline(instance)),
        "meta": meta,
        "solution": solution,
    }


# ------------------------------------------------------------------ build-dataset


def build_dataset(
    plan: BuildPlan,
    out: str | Path,
    *,
    workers: int | None = None,
    dask_scheduler: str | None = None,
    resume: bool = False,
    force: bool = False,
    progress=None,
    warn: Callable[[str], None] = lambda message: None,
    say: Callable[[str], None] = lambda message: None,
) -> int:
    """Build the JSONL dataset ``out`` of ``plan`` (references and baselines precomputed in parallel); return its
    row count.

    ``plan`` is a :class:`~orharbor.datasets.engine.BuildPlan`: the class,
    sizes, level, rows, seeds and limits, e.g.
    ``BuildPlan("jobshop", ("10x10",), 1, 20, reference_time_limit_s=60.0)``.
    An unknown class or size, an ``out`` that exists (unless ``force`` or
    ``resume``) or cannot be written, and a journal in the way are refused
    before anything is solved. Every finished solve goes to ``<out>.journal``
    at once; a signal raises :class:`~orharbor.datasets.engine.Interrupted`
    and ``resume`` solves only the rest. The solves run on the Dask cluster
    at ``dask_scheduler``, else in ``workers`` local processes (default: every
    core), ``plan.solver_workers`` CP-SAT threads each. ``progress`` is an
    :class:`~orharbor.datasets.engine.Progress`; ``warn`` gets the build's warnings.

    ``resume`` is idempotent: without a journal it starts the build, and an
    ``out`` that already holds this build's rows is success (``say`` gets one
    line for each); rows of another build are refused.
    """
    from orharbor.datasets.build import plan_rows
    from orharbor.datasets.engine import finished_rows, journal_path, run_build

    out = Path(out)
    journal = journal_path(out)
    if not plan.published:  # an unknown class or size fails here, before anything runs
        plan_rows(plan.problem, list(plan.sizes), plan.level, 1)
    _check_out(out, journal, resume, force)
    if resume and not journal.exists():  # --resume is idempotent: a requeued or repeated command is fine
        if out.exists():
            built = finished_rows(plan, out)
            say(f"{out} is already built ({built} rows) and has no journal: nothing to resume")
            return built
        say(f"no journal at {journal}: nothing to resume, so the build starts from the beginning")
    start, pool = time.monotonic(), None
    try:
        pool = _solve_pool(dask_scheduler, workers, warn, plan.cores)
        written = run_build(plan, out, pool, resume=resume, progress=progress, warn=warn)
    except (KeyboardInterrupt, Exception) as exc:
        if interrupts.stopped(exc):  # before run_build took over the signals (which kills the pool itself)
            if pool is not None:
                pool.kill()
            raise
        if not isinstance(exc, (UserError, OSError, RuntimeError)):  # RuntimeError: a solve failed, or its worker died
            raise
        kept = f" (finished solves are kept in {journal}; --resume continues)" if journal.exists() else ""
        raise BuildFailed(f"{exc}{kept}") from None
    say(f"wrote {written} rows to {out} in {time.monotonic() - start:.1f} s")
    return written


def build_release(
    recipe: str | Path,
    out: str | Path,
    *,
    workers: int | None = None,
    dask_scheduler: str | None = None,
    resume: bool = False,
    force: bool = False,
    progress_factory=None,
    warn: Callable[[str], None] = lambda message: None,
    say: Callable[[str], None] = lambda message: None,
):
    """Build the benchmark release of ``recipe`` (a shipped name or a file) into the folder ``out``; return the recipe.

    The same engine, journals and refusals as :func:`build_dataset`, one JSONL
    file per part of the recipe (:mod:`orharbor.benchmark.release`); the
    parts share one pool of ``workers`` local processes, or the Dask cluster.
    """
    from orharbor.benchmark.recipe import load_recipe
    from orharbor.benchmark.release import build_release as build

    loaded = load_recipe(recipe)
    solver_workers = max(part.plan.cores for part in loaded.parts)
    pools = []

    def pool():
        pools.append(_solve_pool(dask_scheduler, workers, warn, solver_workers))
        return pools[-1]

    try:
        return build(
            loaded, out, pool, resume=resume, force=force, progress_factory=progress_factory, warn=warn, say=say
        )
    except (KeyboardInterrupt, Exception) as exc:
        if interrupts.stopped(exc):
            for made in pools:
                made.kill()
            raise
        if not isinstance(exc, (UserError, OSError, RuntimeError)) or (isinstance(exc, UserError) and not pools):
            raise  # a bug, or a refusal before any pool started (the recipe, the folder): as it is
        raise BuildFailed(f"{exc} (finished solves are kept in the journals in {out}; --resume continues)") from None


def _check_out(out: Path, journal: Path, resume: bool, force: bool) -> None:
    """Refuse what would replace a user's file, or a place no file can be written, before anything is solved."""
    from orharbor.files import refuse_existing, require_parent

    if out.is_dir():
        raise OutputPathError(f"--out {out} is a folder; give a file name")
    require_parent(out, "--out")
    probe = out.parent / f".orharbor-probe-{os.getpid()}"
    try:
        probe.open("x").close()
        probe.unlink()
    except OSError as exc:  # e.g. /proc/x.jsonl: the folder exists, but no file can be made there
        raise OutputPathError(f"cannot create {out}: {exc.strerror}") from None
    if not resume and journal.exists() and not force:
        raise OutputPathError(
            f"{journal} holds the solves of an interrupted build: --resume continues it, --force starts over"
        )
    if not resume:
        refuse_existing([out], force)


def _solve_pool(dask_scheduler: str | None, workers: int | None, warn: Callable[[str], None], solver_workers: int):
    """A Dask cluster's pool, or local worker processes.

    The cluster's workers are checked for solves of ``solver_workers`` threads
    here, before a journal exists, so a refused build leaves nothing behind;
    its fallback to worker threads is said through ``warn``.
    """
    if dask_scheduler:
        from orharbor.datasets.dask_pool import DaskPool

        pool = DaskPool(dask_scheduler, note=warn)
        try:
            pool.check_resources(solver_workers)
        except BaseException:
            pool.kill()
            raise
        return pool
    from orharbor.datasets.pools import LocalPool
    from orharbor.interrupts import deferred

    with deferred():  # a worker cut off mid-spawn would print a traceback; an interrupt waits the moment out
        return LocalPool(workers or os.cpu_count() or 1)


# ------------------------------------------------------------------ export


@dataclass(frozen=True)
class ExportPlan:
    """What one export writes, every refusal already checked: dataset rows, RetailOpt rows and specs."""

    out: Path
    rows: list[dict]
    retail: list[dict]
    specs: list
    force: bool = False

    @property
    def ids(self) -> list[str]:
        """The id, so the folder name in ``out``, of every task, in export order."""
        return [*(r["id"] for r in self.rows), *(r["id"] for r in self.retail), *(s.id for s in self.specs)]


def plan_export(
    out: str | Path,
    datasets: Iterable[str | Path] = (),
    specs_dir: str | Path | None = None,
    problems: Iterable[str] = (),
    force: bool = False,
) -> ExportPlan:
    """The tasks an export into ``out`` writes, read and checked before anything is written.

    With neither ``datasets`` nor ``specs_dir``: everything shipped in the
    package (its small datasets and modelling specs). A dataset file holds
    build-dataset rows or imported RetailOpt rows (its first row's ``kind``
    says which). ``problems`` keeps only the rows of those classes (no
    RetailOpt rows, no shipped specs). Refused: an empty dataset, a filter
    that keeps nothing, two tasks of the same id, a task folder already in
    ``out`` (unless ``force``) and a registry.json or dataset.toml in ``out``
    that export cannot extend.
    """
    from orharbor.datasets.rows import read_rows, shipped_datasets
    from orharbor.exporter.dataset_index import check_dataset_index
    from orharbor.files import refuse_existing, require_parent
    from orharbor.modelling.retailopt import is_retail_file, read_retail_rows
    from orharbor.modelling.spec import load_specs, shipped_specs_dir

    out, datasets, problems = Path(out), [Path(d) for d in datasets], list(problems)
    require_parent(out, "--out")
    check_dataset_index(out)
    shipped = not datasets and specs_dir is None
    rows: list[dict] = []
    retail: list[dict] = []
    for path in shipped_datasets() if shipped else datasets:
        retail_file = is_retail_file(path)
        found = read_retail_rows(path) if retail_file else read_rows(path)
        if not found:
            raise ExportInputError(f"{path}: no rows (an empty dataset); nothing to export from it")
        (retail if retail_file else rows).extend(found)
    if problems:
        for name in problems:
            problem_modules.get(name)  # UnknownProblem, with a close match, for a typo
        rows, retail = [row for row in rows if row["problem"] in problems], []
        if not rows and specs_dir is None:
            raise ExportInputError(f"no rows of {', '.join(problems)} in the dataset(s); nothing to export")
    specs = load_specs(specs_dir) if specs_dir else load_specs(shipped_specs_dir()) if shipped and not problems else []
    plan = ExportPlan(out, rows, retail, specs, force)
    seen: set[str] = set()
    for task_id in plan.ids:
        if task_id in seen:
            raise ExportInputError(f"duplicate row id {task_id!r}: two rows would export to the same task directory")
        seen.add(task_id)
    refuse_existing([out / task_id for task_id in plan.ids], force)
    return plan


def export(
    plan: ExportPlan,
    options=None,
    *,
    hints: str = "none",
    prompt: str = "full",
    progress: Callable[[int], None] = lambda done: None,
    git=None,
) -> tuple[list[Path], list[Path]]:
    """Write the tasks of ``plan``; return (task folders, files written beside them).

    ``options`` is an :class:`~orharbor.exporter.ExportOptions`; ``hints``
    (``none``, ``all``) is for specs, ``prompt`` (``full``, ``schema``) for
    RetailOpt rows; ``progress(n)`` is called as tasks are written. Each task
    is written in a temporary folder in ``plan.out`` and renamed into place;
    then registry.json, dataset.toml and .gitattributes are written beside them
    (registry.json by git coordinates with ``git``, a
    :class:`~orharbor.exporter.dataset_index.GitSource`).
    """
    from orharbor.exporter import ExportOptions, export_dataset, write_dataset_index
    from orharbor.exporter.modelling import export_retail, export_spec

    options = options or ExportOptions()
    refuse_unscorable(plan, options.reward_scale)
    try:
        tasks = export_dataset(plan.rows, plan.out, options, progress=progress, force=plan.force)
        for row in plan.retail:
            tasks.append(export_retail(row, plan.out, options, prompt, force=plan.force))
            progress(1)
        for spec in plan.specs:
            tasks.append(export_spec(spec, plan.out, options, hints, force=plan.force))
            progress(1)
        return tasks, write_dataset_index(plan.out, git=git)
    except OSError as exc:
        raise ExportFailed(f"cannot write the tasks in {plan.out}: {exc}") from None


def refuse_unscorable(plan: ExportPlan, scale: str) -> None:
    """Before anything is written: a UserError (one line) if a task of ``plan`` cannot be scored on ``scale``.

    The quality scale needs the best known value of every instance: algorithm rows without one, and every
    modelling task, are refused.
    """
    from orharbor.exporter.algorithm import require_best_known
    from orharbor.verifiers.reward_scale import QUALITY

    require_best_known(plan.rows, scale)
    if scale == QUALITY and (plan.retail or plan.specs):
        raise ExportInputError(
            "--reward-scale quality scores algorithm answers against best known values; "
            "modelling tasks (specs, RetailOpt rows) have none: export them on another scale"
        )


@dataclass
class ReleaseExport:
    """What exporting a built release writes: its recipe, each part's rows, and the plain export plan of them all."""

    recipe: Recipe
    parts: list
    plan: ExportPlan
    smoke: bool = False

    @property
    def dataset(self) -> tuple[str, str]:
        """(name, version) in registry.json: the recipe's, ``-smoke`` appended to the version of the subset."""
        return self.recipe.name, self.recipe.version + ("-smoke" if self.smoke else "")


def plan_release_export(
    release: str | Path, out: str | Path, *, smoke: bool = False, problems: Iterable[str] = (), force: bool = False
) -> ReleaseExport:
    """The tasks of a built release folder (all, or its ``smoke`` subset), checked as :func:`plan_export` checks."""
    from orharbor.benchmark.release import read_release, smoke_rows
    from orharbor.exporter.dataset_index import check_dataset_index
    from orharbor.files import refuse_existing, require_parent

    recipe, rows = read_release(release)
    if smoke:
        rows = smoke_rows(recipe, rows)
    problems = list(problems)
    for name in problems:
        problem_modules.get(name)
    parts = [
        (part, [r for r in rows[part.name] if not problems or r["problem"] in problems])
        for part in recipe.released_parts
        if part.name in rows
    ]
    parts = [(part, part_rows) for part, part_rows in parts if part_rows]
    if not parts:
        raise ExportInputError(f"no rows of {', '.join(problems)} in the release; nothing to export")
    out = Path(out)
    require_parent(out, "--out")
    check_dataset_index(out)
    plan = ExportPlan(out, [row for _, part_rows in parts for row in part_rows], [], [], force)
    refuse_existing([out / task_id for task_id in plan.ids], force)
    return ReleaseExport(recipe, parts, plan, smoke)


def export_release(
    release: ReleaseExport,
    options=None,
    *,
    agent_timeout_s: float | None = None,
    progress: Callable[[int], None] = lambda done: None,
    git=None,
) -> tuple[list[Path], list[Path]]:
    """Write a release's tasks, each part with its own agent budget (unless ``agent_timeout_s``); index them.

    ``options`` carries everything else (:class:`~orharbor.exporter.ExportOptions`); registry.json and
    dataset.toml name the dataset ``release.dataset``.
    """
    from dataclasses import replace

    from orharbor.exporter import ExportOptions, export_dataset, write_dataset_index

    options = options or ExportOptions()
    refuse_unscorable(release.plan, options.reward_scale)
    name, version = release.dataset
    tasks: list[Path] = []
    try:
        for part, rows in release.parts:
            part_options = replace(options, agent_timeout_s=agent_timeout_s or part.agent_timeout_s)
            tasks.extend(
                export_dataset(rows, release.plan.out, part_options, progress=progress, force=release.plan.force)
            )
        return tasks, write_dataset_index(release.plan.out, name, version, release.recipe.description, git)
    except OSError as exc:
        raise ExportFailed(f"cannot write the tasks in {release.plan.out}: {exc}") from None


def provider_warnings(provider: str, options) -> list[str]:
    """Ask Harbor's own environment code whether ``provider`` runs tasks exported with ``options``.

    A refusal under every condition is :class:`ProviderRefuses`; one that
    depends on the machine (Docker's egress-control sidecar) comes back as
    warnings, one per reason. An unknown name is
    :class:`~orharbor.providers.UnknownProvider`.
    """
    from orharbor import providers

    name = providers.resolve_provider(provider)
    config = providers.build_task_config(
        options.verifier_mode, options.agent_network, options.allowed_hosts, options.cpus, options.memory_mb
    )
    conditions = [True, False] if providers.has_egress_sidecar_condition(name) else [None]
    refusals = {c: providers.check_export(name, config, egress_sidecar=c) for c in conditions}
    if all(refusals.values()):
        raise ProviderRefuses(f"{name} would refuse these tasks:\n  " + "\n  ".join(refusals[conditions[-1]]))
    return [
        f"{providers.condition_label(name, condition)}: {reason}"
        for condition, reasons in refusals.items()
        for reason in reasons
    ]


# ------------------------------------------------------------------ import retailopt


def import_retailopt(source: str | Path, out: str | Path, force: bool = False) -> int:
    """Turn a downloaded RetailOpt-190 JSONL file (either published shape) into rows in ``out``; return how many.

    ``out`` must not be ``source`` (:class:`SameFile`); an existing ``out`` is
    refused unless ``force``. The rows are written beside ``out``, then renamed.
    """
    from orharbor.files import refuse_existing, require_parent
    from orharbor.jsonl import write_jsonl
    from orharbor.modelling.retailopt import import_file

    source, out = Path(source), Path(out)
    require_parent(out, "--out")
    if out.resolve() == source.resolve() or (out.exists() and os.path.samefile(out, source)):
        raise SameFile(f"{out} is the input file {source}; write the rows to another file")
    refuse_existing([out], force)
    return write_jsonl(out, import_file(source))


# ------------------------------------------------------------------ validate-specs, report, metrics


def validate_specs(specs_dir: str | Path, sandbox: bool = True, workers: int = 1) -> list:
    """Every spec of ``specs_dir`` checked, sorted by name: schema, then its golden script's outputs on a
    clean template (in the bubblewrap sandbox unless not ``sandbox``; ``workers`` scripts at a time).

    A spec that does not load is a failed result; the others still run.
    """
    from orharbor.modelling import validate

    specs, unloaded = validate.load_every_spec(specs_dir)
    results = validate.validate_specs(specs, sandbox=sandbox, jobs=workers) if specs else []
    return sorted([*results, *unloaded], key=lambda r: r.spec)


@dataclass(frozen=True)
class Report:
    """A report's data (what :func:`orharbor.report.render.render` prints) and what it could not read."""

    data: dict
    skipped: list
    empty: bool


def report(
    jobs: Iterable[str | Path],
    tasks_dirs: Iterable[str | Path] = (),
    kind: str = "all",
    compare: bool = False,
    html_file: str | Path | None = None,
    force: bool = False,
) -> Report:
    """What the agents did, per agent, problem, size and level, from Harbor job folders.

    ``kind`` keeps ``all``, ``algorithm`` or ``modelling`` tasks; ``compare``
    sets two job folders (A, B) side by side. An existing ``html_file`` is
    refused (unless ``force``) before anything is read; the page is written
    when the report is not ``empty``.
    """
    from orharbor import report as reports
    from orharbor.files import refuse_existing, require_parent, write_atomically

    job_dirs, task_dirs = [Path(j) for j in jobs], [Path(t) for t in tasks_dirs]
    if html_file:
        require_parent(Path(html_file), "--html")
    refuse_existing([html_file] if html_file else [], force)
    readings = (
        [reports.read_jobs([j], task_dirs) for j in job_dirs] if compare else [reports.read_jobs(job_dirs, task_dirs)]
    )
    for reading in readings:
        if kind != "all":
            reading.trials = [t for t in reading.trials if t.kind == kind]
    if compare:
        a, b = readings
        data = reports.build_comparison(a, b, a_name=str(job_dirs[0]), b_name=str(job_dirs[1]))
    else:
        data = reports.build(readings[0])
    empty = not any(r.trials for r in readings)
    if html_file and not empty:
        from orharbor.report.html import html_page

        write_atomically(Path(html_file), html_page(data, [] if compare else readings[0].trials))
    return Report(data, [s for r in readings for s in r.skipped], empty)


def grade_answers(folder: str | Path, rows_file: str | Path) -> dict:
    """The modelling report of a folder of RetailOpt answer files (``<scenario_id>.json``) graded against rows."""
    from orharbor.report import metrics
    from orharbor.modelling.retailopt import read_retail_rows

    attempts = metrics.attempts_from_answers(Path(folder), read_retail_rows(rows_file))
    if not attempts:
        raise NoRows(f"no RetailOpt rows in {rows_file}")
    return metrics.answers_report(attempts)
