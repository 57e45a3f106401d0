"""Rollout throughput: scripted-agent trials per minute through Harbor's own Trial, per environment.

    .venv/bin/python bench/rollouts.py [-N 8] [-n 2] [--env bubblewrap podman] [--problem jobshop]
        [--level 1] [--verifier-mode separate] [--agent oracle] [--base-image IMAGE] [--delete]

The figure to size a reinforcement-learning run by: how many trials a machine turns
over per minute with the agent's own thinking taken out (a scripted agent: Harbor's
oracle by default, or orharbor's naive or nothing policies), and where each trial's
time goes. It exports the shipped rows of one problem class and level (the same
exporter as ``orharbor export``) and runs every trial as Harbor's
``await (await Trial.create(config)).run()``, ``-n`` at a time, on each environment
in turn: orharbor's bubblewrap environment (the baseline of the ratios) and Harbor's
podman environment where podman is installed (a row "not installed" where not).

Each environment first runs one warm-up trial per task (the cold trials: podman
builds the task's images there) and then the ``-N`` measured trials, task by task in
turn. Trials per minute are over the measured trials alone; the phases are each
trial's own TrialResult timings (median and p90): environment start, agent setup,
agent run, handoff (agent logs and artifacts collected; in separate verifier mode the
agent environment is stopped here), verifier (in separate mode it starts and stops
the verifier's own environment), stop (what follows the verifier: the agent
environment's stop in shared mode), and the trial's total.

Podman keeps each trial's images while the run lasts (Harbor's ``delete=False``, as
``harbor run --no-delete``), so a measured trial reuses its task's image, and the
images this run added are removed at its end; ``--delete`` measures Harbor's default
instead, which removes a trial's images as it stops, so every trial builds again
(from the layer cache). No container registry needs to be reachable, but podman needs
the base image locally (``--base-image``, e.g. the one ``scripts/e2e-podman.sh``
makes), and it cannot take a separate verifier offline without Harbor's egress
sidecar, which is pulled from a registry: when podman is in the run, the tasks are
exported with ``--verifier-network public`` (testing only), and bubblewrap runs the
same task folders. Needs root and bubblewrap for the bubblewrap row.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUBBLEWRAP = "orharbor.harbor_env:BubblewrapEnvironment"
#: The environments this bench knows: a name on the table and Harbor's EnvironmentConfig fields.
ENVIRONMENTS = {"bubblewrap": {"import_path": BUBBLEWRAP}, "podman": {"type": "podman"}}
#: Phases of a trial, in order (:func:`phase_seconds` says what each spans), and the whole trial.
PHASES = ("env start", "agent setup", "agent run", "handoff", "verifier", "stop", "total")


# ---------------------------------------------------------------- pure parts (tests/test_bench_rollouts.py)


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _span(timing: dict | None) -> tuple[datetime | None, datetime | None]:
    timing = timing or {}
    return _when(timing.get("started_at")), _when(timing.get("finished_at"))


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return (end - start).total_seconds() if start and end else None


def phase_seconds(result: dict) -> dict[str, float | None]:
    """Seconds per phase of one trial, from its TrialResult as JSON (result.json); None where not recorded.

    Harbor records environment setup, agent setup, agent execution and verifier
    spans and the trial's start and finish; handoff is the time from the agent's
    end to the verifier's start, and stop the time from the last recorded span's
    end to the trial's finish.
    """
    env_start, env_end = _span(result.get("environment_setup"))
    setup_start, setup_end = _span(result.get("agent_setup"))
    run_start, run_end = _span(result.get("agent_execution"))
    verify_start, verify_end = _span(result.get("verifier"))
    started, finished = _when(result.get("started_at")), _when(result.get("finished_at"))
    ends = [end for end in (env_end, setup_end, run_end, verify_end) if end]
    return {
        "env start": _seconds(env_start, env_end),
        "agent setup": _seconds(setup_start, setup_end),
        "agent run": _seconds(run_start, run_end),
        "handoff": _seconds(run_end, verify_start),
        "verifier": _seconds(verify_start, verify_end),
        "stop": _seconds(max(ends), finished) if ends else None,
        "total": _seconds(started, finished),
    }


def median_p90(values: list[float]) -> tuple[float, float] | None:
    """Median and 90th percentile (linear between closest ranks, numpy's default); None for no values."""
    if not values:
        return None
    if len(values) == 1:
        return values[0], values[0]
    return statistics.median(values), statistics.quantiles(values, n=10, method="inclusive")[8]


def trial_ok(result: dict, expected: float) -> bool:
    """Whether a trial ended without an exception and with the reward its scripted agent earns."""
    reward = ((result.get("verifier_result") or {}).get("rewards") or {}).get("reward")
    return result.get("exception_info") is None and reward is not None and abs(reward - expected) < 1e-9


@dataclass
class EnvRun:
    """What one environment did: its measured and cold trials (TrialResult dicts), or why it did not run."""

    name: str
    missing: str | None = None
    seconds: float = 0.0
    trials: list[dict] = field(default_factory=list)
    cold: list[dict] = field(default_factory=list)
    expected: float = 1.0

    def phase(self, name: str, cold: bool = False) -> list[float]:
        times = [phase_seconds(r)[name] for r in (self.cold if cold else self.trials) if trial_ok(r, self.expected)]
        return [t for t in times if t is not None]

    @property
    def ok(self) -> int:
        return sum(trial_ok(r, self.expected) for r in self.trials)

    @property
    def per_minute(self) -> float | None:
        return 60 * len(self.trials) / self.seconds if self.trials and self.seconds > 0 else None


def _cell(pair: tuple[float, float] | None) -> str:
    return "-" if pair is None else f"{pair[0]:.1f}/{pair[1]:.1f}"


def _ratio(value: float | None, base: float | None) -> str:
    return f"{value / base:.2f}" if value is not None and base else "-"


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        for row in [header, *rows]
    )


def render(runs: list[EnvRun]) -> str:
    """The throughput table and the phase table, one row per environment; ratios to the first that ran."""
    base = next((run for run in runs if not run.missing and run.per_minute), None)
    base_total = median_p90(base.phase("total")) if base else None
    rows, phase_rows = [], []
    for run in runs:
        if run.missing:
            rows.append([run.name, run.missing, *["-"] * 6])
            phase_rows.append([run.name, *["-"] * len(PHASES)])
            continue
        total, cold_total, rate = median_p90(run.phase("total")), median_p90(run.phase("total", True)), run.per_minute
        rows.append(
            [
                run.name,
                f"{run.ok}/{len(run.trials)}",
                f"{run.seconds:.1f}",
                "-" if rate is None else f"{rate:.1f}",
                _ratio(rate, base.per_minute if base else None),
                _cell(total),
                _ratio(total and total[0], base_total and base_total[0]),
                f"{_cell(cold_total)} ({len(run.cold)})" if run.cold else "-",
            ]
        )
        phase_rows.append([run.name, *(_cell(median_p90(run.phase(p))) for p in PHASES)])
        if run.cold:
            phase_rows.append([f"{run.name} cold", *(_cell(median_p90(run.phase(p, True))) for p in PHASES)])
    throughput = _table(
        [
            "environment",
            "ok/trials",
            "wall s",
            "trials/min",
            "ratio",
            "trial s med/p90",
            "ratio",
            "cold trial s med/p90 (n)",
        ],
        rows,
    )
    phases = _table(["environment", *(f"{p} s" for p in PHASES)], phase_rows)
    return (
        f"{throughput}\n\nphases of the trials that scored as expected, median/p90 seconds "
        f"(cold: the warm-up trial of each task):\n{phases}"
    )


# ---------------------------------------------------------------- the run


def missing_reason(env: str, base_image: str) -> str | None:
    """Why ``env`` cannot run here (shown in its row), or None."""
    if env == "bubblewrap":
        from orharbor.harbor_env.sandbox import SandboxUnavailable, require_bwrap

        try:
            require_bwrap()
        except SandboxUnavailable:
            return (
                "not installed"
                if shutil.which("bwrap") is None
                else "needs root"
                if os.geteuid() != 0
                else "cannot sandbox here"
            )
        return None
    if shutil.which("podman") is None:
        return "not installed"
    if shutil.which("podman-compose") is None:
        return "podman-compose not installed"
    if subprocess.run(["podman", "image", "exists", base_image], capture_output=True).returncode != 0:
        return "base image not local"
    return None


def export_tasks(out: Path, problem: str, level: int, mode: str, base_image: str, public_verifier: bool) -> list[Path]:
    """The shipped rows of ``problem`` at ``level`` as task folders, with orharbor export's own exporter."""
    from orharbor.datasets.rows import read_rows, shipped_datasets
    from orharbor.exporter import ExportOptions, export_dataset

    rows = [r for p in shipped_datasets() for r in read_rows(p) if r["problem"] == problem and r["level"] == level]
    if not rows:
        raise SystemExit(f"no shipped rows of {problem} at level {level}")
    options = ExportOptions(
        verifier_mode=mode, base_image=base_image, verifier_network="public" if public_verifier else "no-network"
    )
    return export_dataset(rows, out, options)


def scripted_agent(task_dir: Path, policy: str) -> tuple[dict, float]:
    """Harbor's AgentConfig fields of ``orharbor check``'s ``policy`` on this task, and the reward it earns."""
    from orharbor.check.trials import task_trials
    from orharbor.verifiers import contract

    trials = {t.policy: t for t in task_trials(task_dir, contract.load(str(task_dir / "tests")), False)}
    if policy not in trials:
        raise SystemExit(f"{task_dir.name}: no policy {policy!r} (it has {', '.join(trials)})")
    return trials[policy].agent, trials[policy].expected


async def run_trials(
    tasks: list[Path], names: list[str], environment: dict, jobs: int, trials_dir: Path, policy: str, delete: bool
) -> list[dict]:
    """Each task's trial as Harbor's ``Trial.create(config).run()``, ``jobs`` at a time; their TrialResults as JSON."""
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig
    from harbor.trial.trial import Trial

    semaphore = asyncio.Semaphore(jobs)

    async def one(task: Path, name: str) -> dict:
        agent, _ = scripted_agent(task, policy)
        config = TrialConfig(
            task=TaskConfig(path=task.resolve()),
            trial_name=name,
            trials_dir=trials_dir,
            agent=AgentConfig(**agent),
            environment=EnvironmentConfig(delete=delete, **environment),
        )
        async with semaphore:
            result = await (await Trial.create(config)).run()
        return json.loads(result.model_dump_json())

    return await asyncio.gather(*(one(task, name) for task, name in zip(tasks, names)))


def podman_image_names() -> set[str]:
    """Names of the local podman images Harbor builds (``hb__...``), to remove those a run added."""
    listing = subprocess.run(
        ["podman", "images", "--format", "{{.Repository}}:{{.Tag}}"], capture_output=True, text=True
    )
    return {name for name in listing.stdout.split() if "hb__" in name}


async def measure(env: str, tasks: list[Path], args: argparse.Namespace, jobs_dir: Path) -> EnvRun:
    """One warm-up trial per task, then ``args.trials`` measured trials over the tasks in turn."""
    run = EnvRun(env, missing=missing_reason(env, args.base_image))
    if run.missing:
        return run
    run.expected = scripted_agent(tasks[0], args.agent)[1]
    before = podman_image_names() if env == "podman" and not args.delete else None
    trials_dir = jobs_dir / env
    try:
        run.cold = await run_trials(
            tasks,
            [f"{t.name}__{env}__cold" for t in tasks],
            ENVIRONMENTS[env],
            args.jobs,
            trials_dir,
            args.agent,
            args.delete,
        )
        chosen = [tasks[i % len(tasks)] for i in range(args.trials)]
        start = time.monotonic()
        run.trials = await run_trials(
            chosen,
            [f"{t.name}__{env}__{i}" for i, t in enumerate(chosen)],
            ENVIRONMENTS[env],
            args.jobs,
            trials_dir,
            args.agent,
            args.delete,
        )
        run.seconds = time.monotonic() - start
        print(f"{env}: {len(run.cold)} warm-up and {len(run.trials)} measured trials done", flush=True)
    finally:
        if before is not None and (added := sorted(podman_image_names() - before)):
            subprocess.run(["podman", "rmi", *added], capture_output=True)
    return run


async def measure_all(tasks: list[Path], args: argparse.Namespace, jobs_dir: Path) -> list[EnvRun]:
    """Every environment in turn, in one event loop (Harbor's image build locks belong to one)."""
    return [await measure(env, tasks, args, jobs_dir) for env in args.env]


def failures(run: EnvRun) -> list[str]:
    """One line per trial that did not score as expected: its name and Harbor's exception or reward."""
    lines = []
    for result in [*run.cold, *run.trials]:
        if trial_ok(result, run.expected):
            continue
        error = result.get("exception_info") or {}
        reward = ((result.get("verifier_result") or {}).get("rewards") or {}).get("reward")
        why = f"{error['exception_type']}: {error['exception_message'][:300]}" if error else f"reward {reward}"
        lines.append(f"  {result.get('trial_name')}: {why}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-N", "--trials", type=int, default=8, help="measured trials per environment")
    parser.add_argument("-n", "--jobs", type=int, default=2, help="trials at once")
    parser.add_argument(
        "--env",
        nargs="+",
        choices=list(ENVIRONMENTS),
        default=list(ENVIRONMENTS),
        help="environments, the first is the baseline of the ratios",
    )
    parser.add_argument("--problem", default="jobshop", help="problem class of the shipped rows")
    parser.add_argument("--level", type=int, choices=(1, 2), default=1)
    parser.add_argument("--verifier-mode", choices=("separate", "shared"), default="separate")
    parser.add_argument(
        "--agent",
        choices=("oracle", "naive", "nothing"),
        default="oracle",
        help="scripted agent: Harbor's oracle, orharbor's naive answer, Harbor's nop",
    )
    parser.add_argument(
        "--base-image",
        default=None,
        help="base image of the exported Dockerfiles (podman needs it locally; default: the exporter's)",
    )
    parser.add_argument(
        "--delete",
        action="store_true",
        help="Harbor's default: remove a trial's images at its "
        "stop (every podman trial builds again from the layer cache)",
    )
    parser.add_argument("--jobs-dir", type=Path, default=None, help="keep Harbor's trial folders here")
    args = parser.parse_args()
    if args.trials < 1 or args.jobs < 1:
        parser.error("-N and -n must be at least 1")
    if args.jobs_dir is not None and args.jobs_dir.exists():
        parser.error(f"--jobs-dir {args.jobs_dir} exists; give a new folder")
    sys.path.insert(0, str(REPO / "src"))
    from orharbor.image_facts import BASE_IMAGE
    from orharbor.interrupts import run_async

    args.base_image = args.base_image or BASE_IMAGE
    os.environ.setdefault("HARBOR_TELEMETRY", "0")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # podman-compose
    public = "podman" in args.env
    offline = (
        " (network public: podman cannot take it offline here)" if public and args.verifier_mode == "separate" else ""
    )
    print(
        f"{args.trials} {args.agent} trials per environment, -n {args.jobs}, after one warm-up trial per task; "
        f"{args.problem} level {args.level}, {args.verifier_mode} verifier{offline}"
        f"; podman images {'removed at each trial' if args.delete else 'kept while the run lasts'}"
    )
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory(prefix="orharbor-rollouts-") as scratch:
        tasks = export_tasks(
            Path(scratch) / "tasks", args.problem, args.level, args.verifier_mode, args.base_image, public
        )
        jobs_dir = args.jobs_dir or Path(scratch) / "jobs"
        print(f"tasks: {', '.join(t.name for t in tasks)}")
        runs = run_async(measure_all(tasks, args, jobs_dir))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print(render(runs))
    for run in runs:
        if lines := failures(run):
            print(f"\n{run.name}: {len(lines)} trials did not score as expected:", *lines, sep="\n")


if __name__ == "__main__":
    start = time.monotonic()
    main()
    print(f"({time.monotonic() - start:.0f} s in all)")
