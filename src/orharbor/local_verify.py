"""``orharbor verify``: the reward a deliverable gets, scored here as the task's verifier would.

Level 1 and spec tasks only read files, so the verifier runs in this process.
A level-2 ``solve.py`` (and a RetailOpt ``model.py``, where the task's grading
runs it) is a program, and what it may import is part of the task: the task's
solver interpreter (``tests/task.json``: ``run.python``) is a venv holding
numpy and scipy only, plus OR-Tools when the task was exported with
``--allow-ortools`` (``task.toml``: ``[metadata] allow_ortools``); a model
runs under the modelling image's python (the modelling stack). That
interpreter is assembled from this machine's packages
(:func:`orharbor.harbor_env.sandbox.build_venv`) and the program runs under it:

- as root, inside a bubblewrap sandbox laid out like the verifier image (the
  solver venv at ``/opt/orharbor-solver``, the modelling stack at
  ``/usr/local``, the task's ``tests/`` at ``/tests``, no network), where the
  task's own ``tests/verify.py`` scores it and drops the program to the task's
  unprivileged uid, as in the task;
- as any other user, in this process, as that user, with the venv's python.

When the interpreter cannot be built here (a package missing, no bubblewrap
as root), verify refuses with :class:`VerifyError` instead of scoring under
another interpreter.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from orharbor.errors import UserError
from orharbor.exporter.task_folder import TaskFolder
from orharbor.image_facts import SOLVER_VENV
from orharbor.task_toml import TaskTomlError
from orharbor.verifiers import contract
from orharbor.verifiers.cpu_calibration import verifier_time_limit_s
from orharbor.verifiers.main import verify
from orharbor.verifiers.reward import FAIL

#: The modelling image's interpreter: python slim's, with the modelling stack pip-installed.
MODELLING_PYTHONS = ("/usr/local/bin/python3", "/usr/local/bin/python")


class VerifyError(UserError):
    """A task that cannot be scored here, or a solution path of the wrong kind; one line, for the user."""


class WrongSolutionKind(VerifyError):
    """--solution is a file where the task wants a folder, or the other way round."""


def load_task(task: Path | TaskFolder) -> contract.Task:
    """The typed ``tests/task.json`` of an exported task, or VerifyError saying what is wrong with it."""
    folder = TaskFolder.of(task)
    path = folder.path / "tests" / contract.TASK_FILE
    if not path.is_file():
        raise VerifyError(
            f"{folder.path} is not an orharbor task (no tests/task.json); pass a folder written by `orharbor export`"
        )
    try:
        return folder.contract()
    except contract.ContractError as exc:
        raise VerifyError(str(exc)) from None


def expected_solution(config: contract.Task) -> tuple[str, str]:
    """('file' or 'folder', what it is) that --solution must be for this task."""
    if isinstance(config, contract.SpecTask):
        return "folder", f"the folder holding the output files ({', '.join(config.outputs)})"
    if isinstance(config, contract.RetailTask):
        return "file", "model.py (the verifier runs it and grades the answer.json it writes)"
    return "file", os.path.basename(config.deliverable)


def check_solution_kind(config: contract.Task, solution: Path) -> None:
    """WrongSolutionKind unless ``solution`` is a file or a folder as the task needs."""
    kind, what = expected_solution(config)
    if kind == "folder" and not solution.is_dir():
        raise WrongSolutionKind(f"{solution} is a file, but this task grades several output files: pass {what}")
    if kind == "file" and solution.is_dir():
        raise WrongSolutionKind(f"{solution} is a folder, but this task scores one file: pass {what}")


def score(task: Path | TaskFolder, solution: Path) -> tuple[float, dict]:
    """(reward, details) of ``solution`` on ``task``, as the task's verifier would give them.

    A task whose agent-visible data differs from what its tests/ grades with
    (:mod:`orharbor.exporter.agent_files`) is refused: its score would be of
    an instance the agent never saw. So is one whose task.toml Harbor cannot load.
    """
    folder = TaskFolder.of(task)
    task = folder.path
    config = load_task(folder)
    folder.validate()
    if mismatches := folder.differences():
        raise VerifyError("; ".join(mismatches))
    check_solution_kind(config, solution)
    if config.kind.runs_program:
        assert isinstance(config, (contract.Level2Task, contract.RetailTask))  # the kinds that run a program
        return score_program(folder, config, solution)
    try:
        return verify(str(folder.tests), str(solution))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OSError, ImportError) as exc:
        raise VerifyError(
            f"{task / 'tests' / contract.TASK_FILE}: a broken task ({type(exc).__name__}: {exc}); re-export it"
        ) from None


def solver_packages(task: Path | TaskFolder, config: contract.Level2Task | contract.RetailTask) -> tuple[str, ...]:
    """The packages the interpreter of the task's program holds.

    A level-2 solve.py: numpy and scipy, and ortools if the task allows it. A
    model run: the modelling stack of the modelling image.
    """
    # harbor_env's sandbox is imported where it is used, here and below: the harbor_env package imports Harbor,
    # which scoring a level-1 answer never needs
    from orharbor.harbor_env.sandbox import MODELLING_PACKAGES, SOLVER_PACKAGES

    folder = TaskFolder.of(task)
    task = folder.path
    python = config.run.python
    if config.kind.family == "modelling":
        if python not in MODELLING_PYTHONS:
            raise VerifyError(
                f"{task}: model.py runs under {python!r}, not the modelling image's python; "
                "verify cannot reproduce that interpreter"
            )
        return tuple(MODELLING_PACKAGES)
    if python != f"{SOLVER_VENV}/bin/python3":
        raise VerifyError(
            f"{task}: solve.py runs under {python!r}, not orharbor's solver venv; "
            "verify cannot reproduce that interpreter"
        )
    folder.validate()  # as Harbor would load the task
    metadata = folder.metadata
    return (*SOLVER_PACKAGES, "ortools") if metadata.get("allow_ortools") is True else tuple(SOLVER_PACKAGES)


def verifier_timeout_s(task: Path | TaskFolder, config: contract.Level2Task | contract.RetailTask) -> float:
    """The task's verifier timeout ([verifier] timeout_sec), or the exporter's formula."""
    try:
        return TaskFolder.of(task).verifier_timeout_s
    except TaskTomlError:
        if isinstance(config, contract.Level2Task):
            runs, workload = len(config.cases) + (config.example is not None), config.reference_workload_s is not None
        else:
            runs, workload = 1, False
        longest_s = verifier_time_limit_s(config.run.limits.solve_time_limit_s, workload)
        return runs * (longest_s + 15.0) + 120.0


def score_program(
    task: Path | TaskFolder, config: contract.Level2Task | contract.RetailTask, program: Path
) -> tuple[float, dict]:
    """Run the task's program (solve.py, model.py) under the task's interpreter (see the module docstring)."""
    from orharbor.harbor_env.sandbox import SandboxUnavailable

    folder = TaskFolder.of(task)
    packages = solver_packages(folder, config)
    try:
        if os.geteuid() == 0:
            return _score_sandboxed(folder, config, program, packages)
        return _score_here(folder, program, packages)
    except SandboxUnavailable as exc:
        raise VerifyError(f"cannot build the task's solver interpreter ({', '.join(packages)}) here: {exc}") from None


def _score_here(folder: TaskFolder, program: Path, packages: tuple[str, ...]) -> tuple[float, dict]:
    """Not root: the program runs as this user, under a venv of symlinks to this machine's packages."""
    task = folder.path
    with tempfile.TemporaryDirectory(prefix="orharbor-verify-") as scratch:
        python = linked_venv(Path(scratch) / "solver", packages)
        try:
            return verify(str(folder.tests), str(program), workroot=scratch, python=python)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OSError, ImportError) as exc:
            raise VerifyError(
                f"{task / 'tests' / contract.TASK_FILE}: a broken task ({type(exc).__name__}: {exc}); re-export it"
            ) from None


def linked_venv(root: Path, packages: tuple[str, ...]) -> str:
    """A venv at ``root`` whose site-packages links to this machine's ``packages`` only; its python."""
    from orharbor.harbor_env.sandbox import build_venv

    venv = build_venv(root, packages)
    for source, relative in venv.binds:  # the mount points build_venv leaves for bubblewrap become links
        mount = root / relative
        if mount.is_dir():
            mount.rmdir()
        else:
            mount.unlink()
        mount.symlink_to(source)
    return str(root / "bin" / "python3")


def _score_sandboxed(
    folder: TaskFolder, config: contract.Level2Task | contract.RetailTask, program: Path, packages: tuple[str, ...]
) -> tuple[float, dict]:
    """Root: the task's own verifier in a bubblewrap sandbox laid out like the verifier image."""
    from orharbor.harbor_env.sandbox import SOLVER_PACKAGES, SandboxUnavailable, require_bwrap, run_sandboxed

    task = folder.path

    try:
        bwrap = require_bwrap()
    except SandboxUnavailable as exc:
        raise VerifyError(
            f"as root, verify runs the task's program only in a bubblewrap sandbox, as the task's "
            f"unprivileged user ({exc}); or run verify as another user"
        ) from None
    modelling = config.kind.family == "modelling"
    name = os.path.basename(config.deliverable)
    with tempfile.TemporaryDirectory(prefix="orharbor-verify-") as scratch:
        scratch_path = Path(scratch)
        app, logs = scratch_path / "app", scratch_path / "logs"
        app.mkdir()
        logs.mkdir()
        try:
            shutil.copyfile(program, app / name)
        except OSError as exc:
            raise VerifyError(f"{program}: cannot read it ({exc})") from None
        command = ["python3", "-I", "/tests/verify.py", "--deliverable", f"/app/{name}", "--logs-dir", "/logs/verifier"]
        timeout_s = verifier_timeout_s(folder, config)
        try:
            proc = run_sandboxed(
                bwrap,
                {"/logs/verifier": logs},
                {"/tests": task / "tests", "/app": app},
                command,
                timeout_s,
                SOLVER_PACKAGES if modelling else packages,
                packages if modelling else (),
            )
        except subprocess.TimeoutExpired:
            raise VerifyError(f"the task's verifier ran over its {timeout_s:g} s") from None
        try:
            details = json.loads((logs / "details.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-5:]
            raise VerifyError(
                f"the task's verifier wrote no details.json (exit {proc.returncode}): " + " | ".join(tail)
            ) from None
    if details.get("error") == "verifier error":  # it crashed: a broken task, not a score of the program
        last = (details.get("traceback") or "").strip().splitlines()[-1:] or ["no traceback"]
        raise VerifyError(
            f"{task / 'tests' / contract.TASK_FILE}: a broken task (its verifier failed: {last[0]}); re-export it"
        )
    return float(details.get("reward", FAIL)), details


# ------------------------------------------------------------------ the readable summary

#: Lines of a run's stderr shown under it.
STDERR_LINES = 12


def summary(details: dict) -> str:
    """What ``orharbor verify`` prints by default: the reward, why, and each level-2 run."""
    reward = details.get("reward")
    head = f"reward {reward:.4f}" if isinstance(reward, (int, float)) else "reward ?"
    if details.get("reward_scale", "orharbor") != "orharbor":  # export --reward-scale unit or quality
        head += f" on the {details['reward_scale']} scale ({details.get('orharbor_reward')} on orharbor's" + (
            ", as each instance's below)" if "instances" in details else ")"
        )
    if isinstance(details.get("quality"), (int, float)) and details.get("reward_scale") != "quality":
        head += f", quality {details['quality']:.4f}"  # best known / objective (orharbor.verifiers.quality)
    lines = []
    if details.get("kind") == "modelling":
        lines.append(
            f"{head}  (executed {int(bool(details.get('executed')))}, correct {int(bool(details.get('correct')))})"
        )
        for row in details.get("outputs", []):
            lines.append(f"  {row['file']}: {'ok' if row['ok'] else row['error']}")
        if "status" in details:
            lines.append(
                f"  answer: status {details['status']}, objective {details.get('objective')} "
                f"(reference status {details.get('expected_status')})"
            )
        if details.get("error") and not details.get("outputs"):
            lines.append(f"  error: {details['error']}")
        if not details.get("executed"):
            lines += _stderr_lines(details, "model.py", "  ")
        return "\n".join(lines)
    if "instances" in details:
        runs = details["instances"]
        lines.append(
            f"{head}  (mean over {len(runs)} hidden instance{'s' if len(runs) != 1 else ''})" if runs else head
        )
        if details.get("error"):
            lines.append(f"  error: {details['error']}")
        if isinstance(details.get("cpu_calibration"), dict):
            lines.append(calibration_line(details["cpu_calibration"]))
        for row in runs:
            lines.append(
                f"  instance {row['index']}: reward {row['reward']:.4f}  "
                + (
                    f"objective {row.get('objective')} (naive {row.get('naive')}, reference {row.get('reference')})"
                    if row.get("feasible")
                    else row.get("error") or ""
                )
                + f"  [{row.get('wall_s', 0):.1f} s]"
            )
        if isinstance(details.get("example"), dict):
            lines += _example_lines(details["example"], any(not row.get("feasible") for row in runs))
        return "\n".join(lines)
    if details.get("feasible"):
        lines.append(
            f"{head}  objective {details.get('objective')} (naive {details.get('naive')}, "
            f"reference {details.get('reference')})"
        )
    else:
        lines.append(f"{head}  {details.get('error') or 'infeasible'}")
    return "\n".join(lines)


def calibration_line(calibration: dict) -> str:
    """The time limit a calibrated level-2 task ran under, and the CPU factor that scaled it."""
    try:
        low, high = calibration["bound"]
        return (
            f"  time limit {calibration['solve_time_limit_s']:.3g} s per run: cpu factor "
            f"{calibration['factor']:.2f} (the calibration workload took {calibration['workload_s']:.3f} s "
            f"here, {calibration['reference_workload_s']:.3f} s on the reference machine; "
            f"bounded to {low:g}..{high:g})"
        )
    except (KeyError, TypeError, ValueError):
        return "  cpu factor: not recorded"


def _example_lines(row: dict, hidden_failed: bool) -> list[str]:
    """The run on the public example (it does not count): its outcome, and its stderr when any run failed.

    A hidden run's output is never kept (it could spell out its instance), so
    the example's stderr is where a crash's traceback is seen.
    """
    naive = f" (naive {row['naive']})" if row.get("naive") is not None else ""
    outcome = f"objective {row.get('objective')}{naive}" if row.get("feasible") else row.get("error") or "failed"
    lines = [f"  public example (not scored): {outcome}  [{row.get('wall_s') or 0:.1f} s]"]
    if hidden_failed or not row.get("feasible"):
        lines += _stderr_lines(row, "solve.py", "    ")
    return lines


def _stderr_lines(row: dict, program: str, indent: str) -> list[str]:
    """The last lines of a failed run's stderr (its traceback), indented under the run."""
    stderr = (row.get("stderr_tail") or "").rstrip()
    if not stderr:
        return []
    tail = stderr.splitlines()[-STDERR_LINES:]
    return [f"{indent}{program} stderr (last {len(tail)} lines):", *(f"{indent}  {line}" for line in tail)]
