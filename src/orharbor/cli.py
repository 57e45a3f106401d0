"""The ``orharbor`` command line: click options over the functions of :mod:`orharbor.api`.

A command parses its options, calls its function and prints the result; a
:class:`~orharbor.errors.UserError` becomes one ``Error:`` line (exit 1), and
any other exception is a bug that keeps its traceback.
"""

from __future__ import annotations

import json
import shlex
import os
import sys
import time
from pathlib import Path

import click

from orharbor import api, interrupts, problem_modules
from orharbor.errors import UserError
from orharbor.verifiers.reward_scale import DEFAULT as DEFAULT_SCALE, SCALES
from orharbor.image_facts import BASE_IMAGE
from orharbor.image_facts.base_image import REQUIREMENTS as BASE_IMAGE_REQUIREMENTS

#: Options that take several values after one flag (``--sizes 10x10 15x15``).
MULTI_VALUE_OPTIONS = ("--sizes", "--dataset", "--allowed-hosts")


class Command(click.Command):
    """A click command that shows a UserError as one 'Error:' line (exit 1).

    Ctrl-C or SIGTERM ends it with one line and exit 130 or 143 (click's
    own answer is "Aborted!" and 1). Any other exception is a bug, and keeps
    its traceback.
    """

    def invoke(self, ctx: click.Context):
        return guarded(super().invoke, ctx)


def guarded(invoke, ctx: click.Context | None):
    """``invoke(ctx)``, a UserError shown as one line, and an interrupt as one line and exit 128 + signal."""
    try:
        return invoke(ctx)
    except click.exceptions.Exit:  # an inner guard's answer (a group guards its command too): already said
        raise
    except UserError as exc:
        raise click.ClickException(str(exc)) from None
    except interrupts.Interrupted as exc:  # long work that says what it kept
        interrupts.reporting_stop()
        click.echo(str(exc), err=True)
        raise click.exceptions.Exit(interrupts.exit_code(exc.signum)) from None
    except (KeyboardInterrupt, Exception) as exc:  # Exception: an ImportError raised from the interrupt
        if not interrupts.stopped(exc):
            raise
        interrupts.reporting_stop()
        click.echo(f"interrupted ({interrupts.name()})", err=True)
        raise click.exceptions.Exit(interrupts.exit_code()) from None


class Group(click.Group):
    """A click group of :class:`Command` s that also accepts ``--sizes a b c`` for repeatable options."""

    command_class = Command
    group_class = type  # subgroups (``import``) are Groups too

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, expand_multi_value(args))

    def invoke(self, ctx: click.Context):
        """Guarded as each command is: a subcommand's option callbacks (which import) run here, outside it."""
        return guarded(super().invoke, ctx)

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        """Guarded too: a signal while the command line is read, right after the imports, is one line as well."""
        return guarded(lambda _: super(Group, self).make_context(info_name, args, parent, **extra), None)


def expand_multi_value(args: list[str]) -> list[str]:
    """Rewrite ``--opt a b`` as ``--opt a --opt b`` for the options in MULTI_VALUE_OPTIONS."""
    out, current = [], None
    for arg in args:
        if arg in MULTI_VALUE_OPTIONS:
            current = arg
            out.append(arg)
            pending = True
            continue
        if current and not arg.startswith("-"):
            if not pending:
                out.append(current)
            out.append(arg)
            pending = False
            continue
        current = None
        out.append(arg)
    return out


@click.group(cls=Group)
@click.version_option(package_name="orharbor")
def main() -> None:
    """Turn hard operations-research problems into Harbor agent-benchmark tasks."""


@main.command("problems")
def problems_cmd() -> None:
    """List the problem classes: sizes, levels, the naive baseline and the reference method."""
    for name in problem_modules.names():
        module = problem_modules.get(name)
        click.echo(f"{name}  ({module.TITLE}; minimise {module.OBJECTIVE})")
        click.echo(f"  sizes:    {', '.join(module.SIZES)}  (first = smoke size)")
        click.echo("  levels:   1 (write a solution), 2 (write solve.py, run on hidden instances)")
        click.echo(f"  formats:  json, {', '.join(module.FORMATS)}")
        click.echo(f"  baseline: {' '.join(module.BASELINE.split())}")
        click.echo(f"  reference: {module.REFERENCE}")
        click.echo("")


#: The problem class, given the same way to every command that takes one.
problem_option = click.option("--problem", required=True, help="Problem class (see `orharbor problems`).")


def _finite(ctx: click.Context, param: click.Parameter, value):
    """Reject nan and inf, which click's ranges let through."""
    import math

    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number", ctx, param)
    return value


@main.command("generate")
@problem_option
@click.option("--size", required=True, help="One of the class's sizes.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True)
@click.option(
    "--format", "fmt", default="json", show_default=True, help="json, or one of the problem's standard file formats."
)
def generate_cmd(problem: str, size: str, seed: int, fmt: str) -> None:
    """Print the instance of --problem at --size generated from --seed."""
    click.echo(api.generate(problem, size, seed, fmt), nl=False)


@main.command("solve")
@problem_option
@click.argument("instance_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--reference-time-limit",
    "reference_time_limit_s",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    callback=_finite,
    help="CP-SAT seconds.",
)
@click.option(
    "--solver-workers",
    type=click.IntRange(min=1),
    default=os.cpu_count() or 1,
    show_default="all cores",
    help="CP-SAT threads.",
)
@click.option("--seed", type=int, default=0, show_default=True)
def solve_cmd(problem: str, instance_file: Path, reference_time_limit_s: float, solver_workers: int, seed: int) -> None:
    """Solve INSTANCE_FILE (JSON or a standard format) with the OR-Tools reference.

    The instance is first checked against its problem's rules (shape, ranges,
    references, and what any feasible answer needs); a broken rule is an error.
    """
    click.echo(
        json.dumps(
            api.solve(
                problem,
                instance_file,
                reference_time_limit_s=reference_time_limit_s,
                solver_workers=solver_workers,
                seed=seed,
            )
        )
    )


#: Most rows one build-dataset plans (a million would be gigabytes of plan before the first solve).
MAX_ROWS = 100_000


#: build-dataset's options that describe one dataset, which a --recipe declares itself.
PLAN_OPTIONS = (
    "problem",
    "sizes",
    "level",
    "num_rows",
    "reference_time_limit_s",
    "eval_instances",
    "solve_time_limit_s",
    "start_seed",
    "solver_workers",
    "min_gap",
)


@main.command("build-dataset")
@click.option("--problem", help="Problem class (see `orharbor problems`).")
@click.option("--sizes", multiple=True, help="One or more sizes; rows cycle through them.")
@click.option("--level", type=click.IntRange(1, 2), default=1, show_default=True)
@click.option("--num-rows", type=click.IntRange(1, MAX_ROWS))
@click.option(
    "--recipe",
    metavar="NAME|FILE",
    help="Build a benchmark release instead (e.g. orharbor-bench-1): every part the recipe declares, "
    "into the folder --out; the recipe fixes sizes, rows, seeds and limits.",
)
@click.option(
    "--reference-time-limit",
    "reference_time_limit_s",
    type=click.FloatRange(min=0.01),
    default=60.0,
    show_default=True,
    callback=_finite,
    help="CP-SAT seconds per instance (at least 0.01).",
)
@click.option(
    "--eval-instances",
    type=click.IntRange(1, 1000),
    default=4,
    show_default=True,
    help="Level 2: hidden evaluation instances per row.",
)
@click.option(
    "--solve-time-limit",
    "solve_time_limit_s",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    callback=_finite,
    help="Level 2: wall-clock seconds solve.py gets per instance.",
)
@click.option("--start-seed", type=click.IntRange(0, 2**31 - 1), default=0, show_default=True)
@click.option(
    "--workers",
    type=click.IntRange(1, 4096),
    default=None,
    help="Parallel solves on this machine [default: all cores].",
)
@click.option(
    "--solver-workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="CP-SAT threads per solve (on a Dask cluster: the worker resource 'cores' each solve asks for, "
    "when the workers declare it).",
)
@click.option(
    "--min-gap",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    callback=_finite,
    help="Drop instances whose naive baseline is within this relative gap of the reference, and take "
    "the next seed instead (kept in the row as skipped_seeds).",
)
@click.option(
    "--dask-scheduler",
    metavar="ADDRESS",
    default=None,
    help="Run the solves on this Dask cluster (tcp://host:port) instead of local processes; workers "
    "that declare the resource cores (dask worker ... --resources cores=N) pack multi-thread solves, "
    "else each solve takes one worker thread.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="The JSONL file to write (with --recipe: the release folder).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue an interrupted build from its journal (<out>.journal). Safe to repeat: with no "
    "journal it starts the build, and an --out this build finished is success.",
)
@click.option("--force", is_flag=True, help="Replace an existing --out file, or start over past a journal.")
@click.pass_context
def build_dataset_cmd(
    ctx,
    problem,
    sizes,
    level,
    num_rows,
    recipe,
    reference_time_limit_s,
    eval_instances,
    solve_time_limit_s,
    start_seed,
    workers,
    solver_workers,
    min_gap,
    dask_scheduler,
    out,
    resume,
    force,
) -> None:
    """Build a JSONL dataset, references and baselines precomputed in parallel.

    Every finished solve goes to <out>.journal at once; Ctrl-C or SIGTERM stops
    within seconds and keeps them, and --resume solves only the rest. --out is
    written at the end (a temporary file, then renamed); an existing one is
    refused before anything is solved, unless --force or --resume.

    With --recipe, --out is a folder that gets the recipe, one JSONL file per
    part of it (each with its own journal until it is done) and release.json.
    """
    if resume and force:
        raise click.UsageError("--resume continues a build and --force starts over: pass one of them")
    from click.core import ParameterSource

    given = [name for name in PLAN_OPTIONS if ctx.get_parameter_source(name) != ParameterSource.DEFAULT]
    if recipe and given:
        flag = next(param.opts[0] for param in ctx.command.params if param.name == given[0])
        raise click.UsageError(f"--recipe declares the dataset itself; drop {flag}")
    if not recipe:
        for name in ("problem", "sizes", "num_rows"):
            if not ctx.params[name]:
                raise click.UsageError(f"Missing option '--{name.replace('_', '-')}' (or build a --recipe).")
    try:
        from orharbor.datasets.engine import BuildPlan, Progress

        if recipe:
            api.build_release(
                recipe,
                out,
                workers=workers,
                dask_scheduler=dask_scheduler,
                resume=resume,
                force=force,
                progress_factory=Progress,
                say=lambda message: click.echo(message, err=True),
                warn=lambda message: click.echo(f"warning: {message}", err=True),
            )
            return
        plan = BuildPlan(
            problem,
            tuple(sizes),
            level,
            num_rows,
            reference_time_limit_s=reference_time_limit_s,
            solver_workers=solver_workers,
            start_seed=start_seed,
            eval_instances=eval_instances,
            solve_time_limit_s=solve_time_limit_s,
            min_gap=min_gap,
        )
        api.build_dataset(
            plan,
            out,
            workers=workers,
            dask_scheduler=dask_scheduler,
            resume=resume,
            force=force,
            progress=Progress(plan.num_rows),
            say=lambda message: click.echo(message, err=True),
            warn=lambda message: click.echo(f"warning: {message}", err=True),
        )
    except (KeyboardInterrupt, Exception) as exc:  # outside the solves (planning, checks, starting the pool, the end)
        if not interrupts.stopped(exc):
            raise
        click.echo(
            f"interrupted ({interrupts.name()}); run the same command with --resume to go on "
            "(it says so when the build is done)",
            err=True,
        )
        sys.exit(interrupts.exit_code())


def _base_image(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    """--base-image: one image reference, since it lands as is on the FROM line of every Dockerfile."""
    from orharbor.exporter.task_dir import ExportOptionError, check_base_image

    if value is None:
        return BASE_IMAGE
    try:
        return check_base_image(value)
    except ExportOptionError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


@main.command("export")
@click.option(
    "--dataset",
    "datasets",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL dataset(s): build-dataset rows or imported RetailOpt rows.",
)
@click.option(
    "--specs",
    "specs_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A folder of modelling specs (*.yaml); each becomes a task.",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option(
    "--verifier-mode",
    type=click.Choice(["separate", "shared"]),
    default=None,
    help="[default: separate; shared with --for tinker]",
)
@click.option(
    "--for",
    "consumer",
    type=click.Choice(["harbor", "tinker", "prime", "skyrl", "openenv", "trl"]),
    default="harbor",
    show_default=True,
    help="The trainer that reads the tasks: changes only what its loader needs (tinker: shared mode and "
    "a flat tests/; prime: a collect hook without user, and --image-prefix).",
)
@click.option(
    "--image-prefix",
    metavar="REGISTRY/NAME",
    default=None,
    help="Write [environment] docker_image REGISTRY/NAME:TASK (and REGISTRY/NAME-verifier:TASK for a "
    "separate verifier) into task.toml; build and push them with `orharbor images`.",
)
@click.option(
    "--git-url",
    metavar="URL",
    default=None,
    help="registry.json gives each task by git coordinates (where you will commit --out), so `harbor "
    "download --export` copies it; without, tasks are local paths, which it does not copy.",
)
@click.option(
    "--git-path",
    metavar="PATH",
    default=".",
    show_default=True,
    help="With --git-url: the --out folder's path inside that repository.",
)
@click.option(
    "--git-commit",
    metavar="SHA",
    default=None,
    help="With --git-url: the commit to fetch [default: the branch head at download time].",
)
@click.option("--allow-ortools", is_flag=True, help="Let the agent and solve.py use OR-Tools (algorithm tasks).")
@click.option("--agent-network", type=click.Choice(["public", "allowlist"]), default="public", show_default=True)
@click.option("--allowed-hosts", multiple=True, help="Hosts the agent may reach with --agent-network allowlist.")
@click.option(
    "--agent-timeout",
    "agent_timeout_s",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Agent seconds [default: 1800 level 1 and modelling, 3600 level 2].",
)
@click.option(
    "--problem",
    "problems",
    multiple=True,
    help="Export only rows of these problem classes (shipped specs and RetailOpt rows left out).",
)
@click.option(
    "--hints",
    type=click.Choice(["none", "all"]),
    default="none",
    show_default=True,
    help="Specs: include their legitimate hints in the instruction.",
)
@click.option(
    "--prompt",
    type=click.Choice(["full", "schema"]),
    default="full",
    show_default=True,
    help="RetailOpt rows: data in the instruction (full) or in /app/data.json (schema).",
)
@click.option(
    "--base-image",
    metavar="IMAGE",
    default=None,
    callback=_base_image,
    help="Base image of the agent and verifier Dockerfiles [default: python 3.12 slim, pinned by digest]. "
    f"It must provide {BASE_IMAGE_REQUIREMENTS}. Each Dockerfile checks that first and "
    "stops in one line naming what is missing; `orharbor images` checks before it builds.",
)
@click.option(
    "--env",
    "provider",
    metavar="PROVIDER",
    default=None,
    help="Refuse, before writing anything, an export that this Harbor environment (harbor run --env, "
    "e.g. docker, daytona, modal) would refuse; see `orharbor providers`.",
)
@click.option(
    "--verifier-network",
    type=click.Choice(["no-network", "public"]),
    default="no-network",
    show_default=True,
    help="Separate mode: the verifier container's network. 'public' is for TESTING ONLY, on an engine "
    "that cannot take a container offline (Docker or Podman without Harbor's egress sidecar, e.g. "
    "scripts/e2e-podman.sh); never publish such an export as a benchmark.",
)
@click.option(
    "--reward-scale",
    type=click.Choice(SCALES),
    default=DEFAULT_SCALE,
    show_default=True,
    help="The scale reward.json is written on: orharbor (failure -1, naive 0, reference 1) or unit, what "
    "RL trainers assume (failure 0, naive 0.5, reference 1; modelling 1 correct, 0 not); above the "
    "reference stays above 1 on both. quality: best known / objective, capped at 1 (failure 0; "
    "algorithm rows with best known values only).",
)
@click.option(
    "--release",
    metavar="FOLDER|NAME",
    help="A benchmark release: a folder build-dataset --recipe wrote, or a release shipped in the package "
    "by name (orharbor-bench@1.0); its tasks, with the recipe's budgets, resources and network "
    "policy (flags given here override them), registered as NAME@VERSION.",
)
@click.option(
    "--smoke",
    is_flag=True,
    help="With --release: only its smoke subset (a few tasks per class), registered as NAME@VERSION-smoke.",
)
@click.option(
    "--force", is_flag=True, help="Replace task folders of the same id already in --out (without it they are refused)."
)
@click.pass_context
def export_cmd(
    ctx,
    datasets,
    specs_dir,
    out,
    verifier_mode,
    allow_ortools,
    agent_network,
    allowed_hosts,
    agent_timeout_s,
    problems,
    hints,
    prompt,
    base_image,
    provider,
    verifier_network,
    reward_scale,
    release,
    smoke,
    force,
    consumer,
    image_prefix,
    git_url,
    git_path,
    git_commit,
) -> None:
    """Export dataset rows and modelling specs as Harbor task directories.

    With neither --dataset nor --specs, exports everything shipped in the package:
    the small algorithm datasets and the modelling specs. Beside the tasks, --out
    gets registry.json (run them as `harbor run -d orharbor@VERSION --registry-path
    OUT/registry.json`), dataset.toml (Harbor's dataset manifest) and a .gitattributes.

    A task folder of the same id already in --out is refused, before anything is
    written, unless --force; each task is written into a temporary folder in
    --out and renamed into place.
    """
    from orharbor import providers
    from orharbor.exporter.dataset_index import DATASET_NAME, package_version
    from orharbor.exporter.dataset_index import GitSource
    from orharbor.exporter.profiles import tinker_grader_warning
    from orharbor.exporter.task_folder import TaskFolder

    if (git_commit or git_path != ".") and not git_url:
        raise click.UsageError("--git-path and --git-commit describe --git-url; give it too")
    git = GitSource(git_url, git_path, git_commit) if git_url else None
    if smoke and not release:
        raise click.UsageError("--smoke picks the smoke subset of a --release")
    if release and (datasets or specs_dir):
        raise click.UsageError("--release exports a built benchmark; drop --dataset and --specs")
    release_plan = (
        api.plan_release_export(release, out, smoke=smoke, problems=problems, force=force) if release else None
    )
    options = _export_options(ctx, release_plan.recipe.export if release_plan is not None else {})
    if verifier_network != "no-network" and options.verifier_mode == "separate":
        click.echo(
            "warning: --verifier-network public: the separate verifier runs with the network on; "
            "for testing on engines without no-network support only, not a benchmark export",
            err=True,
        )
    if provider is not None:
        try:
            warnings = api.provider_warnings(provider, options)
        except providers.UnknownProvider as exc:
            raise click.BadParameter(str(exc), param_hint="--env") from None
        for warning in warnings:
            click.echo(f"warning: {warning}", err=True)
    plan = release_plan.plan if release_plan is not None else api.plan_export(out, datasets, specs_dir, problems, force)
    api.refuse_unscorable(plan, options.reward_scale)  # one line, before the progress bar starts
    start = time.monotonic()
    with click.progressbar(length=len(plan.ids), label="exporting", file=sys.stderr) as bar:
        if release_plan is not None:
            tasks, index = api.export_release(
                release_plan, options, agent_timeout_s=agent_timeout_s, progress=bar.update, git=git
            )
        else:
            tasks, index = api.export(plan, options, hints=hints, prompt=prompt, progress=bar.update, git=git)
    name, version = release_plan.dataset if release_plan is not None else (DATASET_NAME, package_version())
    click.echo(f"exported {len(tasks)} tasks to {out} in {time.monotonic() - start:.1f} s")
    if release_plan is not None:
        for reason, names in _by_reason(release_plan.recipe.dropped).items():
            click.echo(f"left out, as the recipe drops them: {', '.join(names)}: {reason}")
    if consumer == "tinker" and (tinker := tinker_grader_warning([TaskFolder(t).verifier_timeout_s for t in tasks])):
        click.echo(f"warning: {tinker}", err=True)
    click.echo(
        f"wrote {', '.join(path.name for path in index)}; run them with: harbor run -d "
        f"{name}@{version} --registry-path {out / 'registry.json'}"
    )
    if out / ".gitattributes" not in index:
        click.echo(f"kept the existing {out / '.gitattributes'}: make sure it keeps *.sh and Dockerfiles LF", err=True)


def _export_options(ctx: click.Context, recipe_export: dict):
    """export's :class:`~orharbor.exporter.ExportOptions`, made in this one place from its flags.

    A ``--release`` recipe's ``[export]`` settings (ExportOptions fields) stand
    where no flag was given; ``--for`` beats a recipe's verifier mode that its
    consumer does not take.
    """
    from click.core import ParameterSource

    from orharbor.exporter import ExportOptions
    from orharbor.exporter.profiles import PROFILES, default_mode

    flags = ctx.params
    consumer = flags["consumer"]
    settings = {
        "verifier_mode": flags["verifier_mode"] or default_mode(consumer),
        "agent_network": flags["agent_network"],
        "allow_ortools": flags["allow_ortools"],
    }
    settings.update(
        (name, value)
        for name, value in recipe_export.items()
        if ctx.get_parameter_source(name) in (None, ParameterSource.DEFAULT)
    )
    if flags["verifier_mode"] is None and settings["verifier_mode"] not in PROFILES[consumer].modes:
        settings["verifier_mode"] = default_mode(consumer)
    if flags["allowed_hosts"] and settings["agent_network"] != "allowlist":  # explicit beats implied
        raise click.UsageError(
            "--allowed-hosts needs --agent-network allowlist (without it the agent's network "
            "is public and no allowlist is written)"
        )
    return ExportOptions(
        allowed_hosts=tuple(flags["allowed_hosts"]),
        agent_timeout_s=flags["agent_timeout_s"],
        base_image=flags["base_image"],
        verifier_network=flags["verifier_network"],
        consumer=consumer,
        image_prefix=flags["image_prefix"],
        reward_scale=flags["reward_scale"],
        **settings,
    )


def _by_reason(dropped: dict[str, str]) -> dict[str, list[str]]:
    """The dropped parts, grouped by the reason the recipe gives."""
    grouped: dict[str, list[str]] = {}
    for name, reason in dropped.items():
        grouped.setdefault(reason, []).append(name)
    return grouped


def _check_env(ctx: click.Context, param: click.Parameter, value: str | None):
    """``check --env``: a Harbor environment name or import path, checked before any trial runs."""
    from orharbor.check.environment import UnknownEnvironment, resolve_environment

    try:
        return resolve_environment(value)
    except UnknownEnvironment as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


@main.command("check")
@click.argument("tasks", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "-j",
    "--workers",
    type=click.IntRange(min=1),
    default=2 * (os.cpu_count() or 1),
    show_default="two per core",
    help="Trials run at once. A trial spends part of its time waiting (sandbox starts, the time limits the "
    "attacks wait out), so one per core leaves cores idle.",
)
@click.option("--attacks", is_flag=True, help="Also run the attack suite: every attack must score the failure reward.")
@click.option(
    "--each-task",
    is_flag=True,
    help="With --attacks: run every attack on every task, instead of once per group of tasks that share "
    "their images, verifier and configuration (the attacks whose outcome those decide).",
)
@click.option(
    "--jobs-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the Harbor job folder of this check under this folder (a new check-<time> folder).",
)
@click.option(
    "--env",
    "env",
    metavar="NAME|MODULE:CLASS",
    default=None,
    callback=_check_env,
    help="Harbor environment to run the trials on: a type name (docker, podman, daytona, modal...) or "
    "an import path [default: docker when a Docker daemon answers, else "
    "orharbor.harbor_env:BubblewrapEnvironment].",
)
def check_cmd(tasks: Path, workers: int, attacks: bool, each_task: bool, jobs_dir: Path | None, env) -> None:
    """Prove every task under TASKS solvable through Harbor's trial code.

    Oracle 1.0, naive 0.0, nothing the failure reward (-1.0; 0.0 for modelling
    tasks); with --attacks, no attack above what its answer is worth. A task
    exported with --reward-scale unit: oracle 1.0, naive 0.5 (modelling 0.0),
    nothing 0.0; with --reward-scale quality: oracle best known / reference,
    naive best known / naive, nothing 0.0.

    With --attacks, an attack whose outcome the task's code and configuration
    decide (the container attacks, malformed level-1 answers, most level-2
    probes) runs once per group of tasks that differ only in their instance
    data, and its outcome is reported for each task of the group; --each-task
    runs it on every task.
    """
    from orharbor import check
    from orharbor.files import require_parent

    if each_task and not attacks:
        raise click.UsageError("--each-task changes how --attacks runs; add --attacks")
    if jobs_dir is not None:  # before the environment line: nothing is printed or run for a mistyped path
        require_parent(jobs_dir, "--jobs-dir")
    found = check.find_tasks(tasks)
    width = max([len(t.name) for t in found] + [4])
    click.echo(env.describe())
    click.echo(check.format_header(width))
    start = time.monotonic()
    results = check.check_tasks(
        tasks,
        jobs=workers,
        attacks=attacks,
        jobs_dir=jobs_dir,
        env=env,
        on_result=lambda r: click.echo(check.format_line(r, width)),
        attack_groups=not each_task,
    )
    if attacks:
        click.echo("")
        click.echo(check.format_attacks(results))
    failed = [r for r in results if not r.ok]
    click.echo(f"{len(results) - len(failed)}/{len(results)} tasks passed in {time.monotonic() - start:.1f} s")
    if results and results[0].job_dir is not None:
        click.echo(f"Harbor job folder: {results[0].job_dir} (read it with: orharbor report {results[0].job_dir})")
    if failed:
        for r in failed:
            click.echo(f"FAILED {r.task}: {r.problem_text()}", err=True)
        sys.exit(1)


@main.command("images")
@click.argument("export", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--push",
    "registry",
    metavar="REGISTRY",
    default=None,
    help="After building, push every image; each must be named under REGISTRY/ (export --image-prefix).",
)
@click.option("--plan", "dry_run", is_flag=True, help="Print the commands instead of running them.")
@click.option("--engine", default="podman", show_default=True, help="The container engine CLI (podman, docker).")
def images_cmd(export: Path, registry: str | None, dry_run: bool, engine: str) -> None:
    """Build the agent and verifier images that EXPORT's task.toml files name (export --image-prefix).

    The agent image of a task is built from its environment/Dockerfile, the
    verifier image (separate mode) from its tests/Dockerfile, and tagged with the
    docker_image task.toml names; --push REGISTRY then pushes them there. Each
    base image is checked first (what it must provide: see export --base-image),
    and one that lacks something is refused in one line before anything builds.
    """
    from orharbor import images

    builds = images.plan(export)
    run = images.commands(builds, engine=engine, push=registry)
    if dry_run:
        for command in run:
            click.echo(shlex.join(command))
        return
    images.check_base_images(builds, engine, echo=click.echo)
    images.execute(run, echo=click.echo)


@main.command("verify")
@click.argument("task", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--solution",
    type=click.Path(exists=True, path_type=Path),
    required=True,
    help="solution.json (level 1), solve.py (level 2), the RetailOpt file the task grades (answer.json, "
    "or model.py where the verifier runs it) or, for a spec task, the folder holding its output files.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the verifier's details as JSON.")
def verify_cmd(task: Path, solution: Path, as_json: bool) -> None:
    """Print the reward a solution (or solve.py) would get on TASK, scored as the task scores it.

    A level-2 solve.py runs under the task's own interpreter rules: numpy and
    scipy only (and ortools if the task was exported with --allow-ortools),
    built from this machine's packages; as root, in a bubblewrap sandbox as the
    task's unprivileged user, otherwise as you. verify refuses when it cannot
    build that interpreter here. A readable summary by default; --json prints
    the verifier's details (per-run rows, stderr tails) as one JSON object.
    """
    from orharbor.local_verify import WrongSolutionKind, score, summary

    try:
        _, details = score(task, solution)
    except WrongSolutionKind as exc:
        raise click.BadParameter(str(exc), param_hint="'--solution'") from None
    click.echo(json.dumps(details, indent=1, default=str) if as_json else summary(details))


@main.command("validate-specs")
@click.argument("specs_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--no-sandbox",
    is_flag=True,
    help="Run golden scripts here with this interpreter instead of the bubblewrap sandbox (no root needed).",
)
@click.option(
    "-j", "--workers", type=click.IntRange(min=1), default=1, show_default=True, help="Golden scripts run at once."
)
def validate_specs_cmd(specs_dir: Path, no_sandbox: bool, workers: int) -> None:
    """Check every spec in SPECS_DIR: schema, then its golden script's outputs on a clean template.

    Every spec is checked and every failure reported (a spec that does not load
    is one failure; the others still run).
    """
    results = api.validate_specs(specs_dir, sandbox=not no_sandbox, workers=workers)
    width = max(len(r.spec) for r in results)
    for r in results:
        click.echo(f"{r.spec.ljust(width)}  {'ok' if r.ok else 'FAIL'}  {r.elapsed_s:6.1f} s")
        for error in r.errors:
            click.echo(f"  {error}")
    failed = [r for r in results if not r.ok]
    click.echo(f"{len(results) - len(failed)}/{len(results)} specs valid")
    if failed:
        sys.exit(1)


@main.group("import")
def import_group() -> None:
    """Import published modelling datasets as orharbor rows."""


@import_group.command("retailopt")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--force", is_flag=True, help="Replace an existing --out file (never SOURCE itself).")
def import_retailopt_cmd(source: Path, out: Path, force: bool) -> None:
    """Turn a downloaded RetailOpt-190 JSONL file (either published shape) into rows.

    --out must not be SOURCE; an existing --out is refused unless --force. The
    rows are written to a temporary file beside --out, then renamed.
    """
    try:
        count = api.import_retailopt(source, out, force)
    except api.SameFile as exc:
        raise click.BadParameter(str(exc), param_hint="'--out'") from None
    click.echo(f"imported {count} scenarios to {out}")


@main.command("report")
@click.argument("jobs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--tasks",
    "tasks_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Task folders to read metadata from, for trials whose verifier never ran and whose task "
    "folder moved (repeatable).",
)
@click.option(
    "--kind",
    type=click.Choice(["all", "algorithm", "modelling"]),
    default="all",
    show_default=True,
    help="Which tasks to report.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "markdown", "csv", "json"]), default="table", show_default=True
)
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write one self-contained HTML page with the tables and plots.",
)
@click.option("--compare", is_flag=True, help="Two job folders A B: per group, B against A, with a paired test.")
@click.option("--force", is_flag=True, help="Replace an existing --html file.")
def report_cmd(
    jobs: tuple[Path, ...],
    tasks_dirs: tuple[Path, ...],
    kind: str,
    fmt: str,
    html_file: Path | None,
    compare: bool,
    force: bool,
) -> None:
    """What the agents did, per agent, problem, size and level, from Harbor job folders.

    JOBS are jobs folders (harbor run -o), job folders or trial folders, from
    any environment. Every trial is joined with its task's metadata; what
    cannot be read is skipped with one line on stderr, and counted.
    """
    _report(list(jobs), list(tasks_dirs), kind, fmt, html_file, compare, force)


def _report(
    jobs: list[Path], tasks_dirs: list[Path], kind: str, fmt: str, html_file: Path | None, compare: bool, force: bool
) -> None:
    from orharbor.report.render import render, summary_line

    if compare and len(jobs) != 2:
        raise click.UsageError(f"--compare takes exactly two job folders (A and B), got {len(jobs)}")
    result = api.report(jobs, tasks_dirs, kind, compare, html_file, force)
    for skipped in result.skipped:
        click.echo(f"skipped {skipped.path}: {skipped.reason}", err=True)
    click.echo(summary_line(result.data), err=True)
    if result.empty:
        raise click.ClickException(
            f"no {'' if kind == 'all' else kind + ' '}trials of orharbor tasks under {', '.join(map(str, jobs))}"
        )
    click.echo(render(result.data, fmt))
    if html_file:
        click.echo(f"wrote {html_file}", err=True)


@main.command("metrics")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--rows",
    "rows_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="RetailOpt rows: grade the answer files in PATH (<scenario_id>.json) against them.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "markdown", "csv", "json"]), default="table", show_default=True
)
def metrics_cmd(path: Path, rows_file: Path | None, fmt: str) -> None:
    """Modelling metrics: `report PATH --kind modelling`, or with --rows a folder of answer files.

    Execution rate, accuracy and silent failure rate. Without --rows this is
    an alias of `orharbor report PATH --kind modelling`.
    """
    if rows_file is None:
        _report([path], [], "modelling", fmt, None, False, False)
        return
    from orharbor.report.render import render

    if not path.is_dir():
        raise click.BadParameter(f"{path} is not a folder of answer files", param_hint="'PATH'")
    click.echo(render(api.grade_answers(path, rows_file), fmt))


from orharbor.providers.cli import providers_cmd  # noqa: E402  (registered last: it imports nothing heavy)

main.add_command(providers_cmd)

from orharbor.harness.cli import model_server_cmd  # noqa: E402  (imports its server only when run)

main.add_command(model_server_cmd)

if __name__ == "__main__":
    main()
