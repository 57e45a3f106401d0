"""Verifier entry point inside a task: read tests/task.json, score, write the reward.

Whatever happens, ``reward.json`` is written, last, atomically (write then
rename), as ``{"reward": x}`` and nothing else: Harbor's Mean averages every
key of it and pass@k needs a single key. ``details.json`` says why, and always
holds ``feasible`` (algorithm tasks) or ``executed`` and ``correct``
(modelling tasks) as 0 or 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable

from orharbor.verifiers import contract, lockdown
from orharbor.verifiers.cpu_calibration import calibrated_limits
from orharbor.verifiers.integrity import tampering
from orharbor.verifiers.modelling import score_model_run, score_outputs
from orharbor.verifiers.processes import end_foreign_processes
from orharbor.verifiers.quality import add_quality
from orharbor.verifiers.removal import remove_path
from orharbor.verifiers.reward_scale import QUALITY
from orharbor.verifiers.score import evaluator, score_level1, score_level2

DEFAULT_LOGS = "/logs/verifier"
#: Inside a task container, where each run of the agent's program gets its scratch folder.
RUNS_ROOT = "/run/orharbor-runs"


def main(argv: list[str] | None = None) -> int:
    """Score the deliverable and write reward.json and details.json; exit 0."""
    parser = argparse.ArgumentParser(description="orharbor task verifier")
    parser.add_argument("--tests-dir", default=None, help="folder holding task.json (default: this script's)")
    parser.add_argument("--deliverable", default=None, help="override the deliverable path")
    parser.add_argument("--logs-dir", default=DEFAULT_LOGS)
    parser.add_argument("--workroot", default=None, help="where solve.py runs get their temp dirs")
    parser.add_argument(
        "--in-container",
        action="store_true",
        help="inside a task container only: end every process the verifier did not start "
        "and refuse to score with a tampered interpreter",
    )
    args = parser.parse_args(argv)
    tests_dir = args.tests_dir or os.path.dirname(os.path.abspath(sys.argv[0]))
    ended, suspicious = 0, []
    if args.in_container:
        ended = end_foreign_processes()
        secure_logs_dir(args.logs_dir)
        suspicious = tampering()
    kind, failed, metadata = contract.fail_reward(tests_dir)
    details: dict
    try:
        if suspicious:
            reward, details = (
                failed,
                {
                    "kind": kind,
                    "metadata": metadata,
                    "error": "verifier environment tampered: " + "; ".join(suspicious),
                },
            )
        else:
            reward, details = verify(tests_dir, args.deliverable, args.workroot, isolate=args.in_container)
    except Exception:  # a bug of ours must still leave a reward behind
        import traceback  # only here: 10 ms of every verify's start otherwise

        reward, details = (
            failed,
            {
                "kind": kind,
                "metadata": metadata,
                "error": "verifier error",
                "traceback": traceback.format_exc()[-4000:],
            },
        )
    if args.in_container:
        ended += end_foreign_processes()
        details["foreign_processes_ended"] = ended
    write_result(args.logs_dir, reward, details)
    print(json.dumps({**flat_result(reward), **outcome(details)}))
    if details.get("error"):
        print(f"error: {details['error']}")
    return 0


def verify(
    tests_dir: str,
    deliverable: str | None = None,
    workroot: str | None = None,
    python: str | None = None,
    drop_privileges: bool = True,
    isolate: bool = False,
) -> tuple[float, dict]:
    """Score the deliverable of the task whose tests live in ``tests_dir``.

    ``deliverable`` overrides the path of the task's deliverable (a spec's:
    the folder of its output files). The reward is on the task's reward
    scale (details.json: ``reward_scale``, and ``orharbor_reward`` on
    orharbor's own); a task that knows its best known values adds their
    ``quality`` (the reward on the quality scale). ``python`` overrides the task's
    interpreter for the agent's program and ``drop_privileges`` can turn off
    the switch to the task's uid: both for scoring outside a task container
    (``orharbor verify``). ``isolate`` (inside a task container only) closes
    the container to the agent's program while it runs
    (:mod:`orharbor.verifiers.lockdown`) and gives every run a uid of its own.
    """
    task = contract.load(tests_dir)
    reward, details = SCORERS[task.KIND](
        task, Scoring(tests_dir, deliverable, workroot, python, drop_privileges, isolate)
    )
    if task.best_knowns is not None:  # the quality figure beside the reward (orharbor.verifiers.quality)
        assert task.kind.level is not None  # only an algorithm task (level 1 or 2) has best known values
        add_quality(details, task.best_knowns, task.kind.level)
    # reward.json's number is on the task's scale; the figures behind it (instances) stay on orharbor's
    scaled = details["quality"] if task.reward_scale == QUALITY else task.scaled(reward)
    details.update(
        kind=task.kind.family,
        task_id=task.task_id,
        reward=scaled,
        reward_scale=task.reward_scale,
        orharbor_reward=reward,
        metadata=task.metadata,
    )
    if task.kind.level is not None:
        details["level"] = task.kind.level
    return scaled, details


@dataclass(frozen=True)
class Scoring:
    """Where and how this verifier run scores: the arguments of :func:`verify`."""

    tests_dir: str
    deliverable: str | None
    workroot: str | None
    python: str | None
    drop_privileges: bool
    isolate: bool

    def uid(self, run: contract.ProgramRun) -> int | None:
        """The uid the agent's program runs as outside a task container (None: ours)."""
        return run.uid if self.drop_privileges and os.geteuid() == 0 else None


def score_level1_task(task: contract.Level1Task, how: Scoring) -> tuple[float, dict]:
    instance = _load(how.tests_dir, task.instance)
    return score_level1(
        evaluator(task.problem), instance, how.deliverable or task.deliverable, task.naive, task.reference
    )


def score_level2_task(task: contract.Level2Task, how: Scoring) -> tuple[float, dict]:
    """solve.py on the public example first (if the task has one; it does not count), then on each hidden instance.

    Every run, the example's included, gets a uid of its own when isolated. A task with a
    ``reference_workload_s`` has every run's time limit scaled to this machine's speed first
    (:mod:`orharbor.verifiers.cpu_calibration`; details.json's ``cpu_calibration``).
    """
    cases = []
    for case in task.cases:
        raw = _read_bytes(how.tests_dir, case.instance)
        cases.append(
            {
                "instance": json.loads(raw),
                "instance_bytes": raw,
                "naive": case.naive,
                "reference": case.reference,
                "bound": case.bound,
            }
        )
    example = None
    if task.example is not None:
        raw = _read_bytes(how.tests_dir, task.example.instance)
        example = {"instance": json.loads(raw), "instance_bytes": raw, "naive": task.example.naive}
    with program_runs(len(cases) + (example is not None), how.uid(task.run), how.workroot, how.isolate) as runs:
        uids = list(runs.pop("uids"))
        example_uid = uids.pop(0) if example is not None else None
        # timed here: main() has ended the agent's leftover processes, which could load the CPU meanwhile
        limits, calibration = calibrated_limits(task.run.limits, task.reference_workload_s)
        reward, details = score_level2(
            evaluator(task.problem),
            how.deliverable or task.deliverable,
            cases,
            how.python or task.run.python,
            limits,
            uids=uids,
            example=example,
            example_uid=example_uid,
            **runs,
        )
    if calibration is not None:
        details["cpu_calibration"] = calibration
    return reward, details


def _read_bytes(tests_dir: str, name: str) -> bytes:
    with open(os.path.join(tests_dir, name), "rb") as f:
        return f.read()


def score_spec_task(task: contract.SpecTask, how: Scoring) -> tuple[float, dict]:
    return score_outputs(how.deliverable or contract.APP_DIR, task.outputs)


def score_retail_task(task: contract.RetailTask, how: Scoring) -> tuple[float, dict]:
    run = task.run
    assert run.data is not None and run.output is not None  # a retail task's run names both (exporter.modelling)
    with open(os.path.join(how.tests_dir, run.data), "rb") as f:
        data = f.read()
    with program_runs(1, how.uid(run), how.workroot, how.isolate) as runs:
        return score_model_run(
            how.deliverable or task.deliverable,
            data,
            task.expected,
            how.python or run.python,
            run.limits,
            argv=list(run.argv),
            output=run.output,
            uid=runs["uids"][0],
            workroot=runs["workroot"],
            open_dirs=runs["open_dirs"],
        )


#: The scorer of each task kind (contract.KINDS).
SCORERS: dict[str, Callable[[Any, Scoring], tuple[float, dict]]] = {
    "level1": score_level1_task,
    "level2": score_level2_task,
    "spec": score_spec_task,
    "retail": score_retail_task,
}


@contextmanager
def program_runs(count: int, uid: int | None, workroot: str | None, isolate: bool):
    """Keyword arguments for ``count`` runs of the agent's program: uids, scratch root, open folders.

    Isolated (inside a task container, as root): the container is locked down
    for the time of the runs, each run gets a fresh uid and its scratch under
    :data:`RUNS_ROOT`. Otherwise every run uses ``uid`` (None: our own).
    """
    if not (isolate and os.geteuid() == 0):
        yield {"uids": [uid] * count, "workroot": workroot, "open_dirs": None}
        return
    root = workroot or RUNS_ROOT
    if not os.path.isdir(root) or os.path.islink(root):
        remove_path(root)
        os.makedirs(root, exist_ok=True)
    os.chown(root, 0, 0)
    os.chmod(root, 0o711)
    state = lockdown.lock()
    try:
        yield {"uids": state.run_uids(count), "workroot": root, "open_dirs": state.open_dirs}
    finally:
        lockdown.restore(state)


def flat_result(reward: float) -> dict:
    """reward.json: the reward alone, so Harbor's mean and pass@k see one key for every task kind."""
    return {"reward": float(reward)}


def outcome(details: dict) -> dict:
    """The 0/1 figures details.json always holds: executed and correct (modelling) or feasible (algorithm)."""
    if details.get("kind") == "modelling":
        return {"executed": int(bool(details.get("executed"))), "correct": int(bool(details.get("correct")))}
    return {"feasible": int(bool(details.get("feasible")))}


def write_result(logs_dir: str, reward: float, details: dict) -> None:
    """Write details.json (with its kind and 0/1 figures), then reward.json atomically (the reward file is last).

    Whatever sits at the reward paths (a planted file, symlink or directory) is
    removed first; as root, the folder is made root-owned and closed to others.
    """
    secure_logs_dir(logs_dir)
    details = {"kind": "algorithm", **details, **outcome(details)}
    _atomic_write(os.path.join(logs_dir, "details.json"), json.dumps(details, indent=2, default=str))
    _atomic_write(os.path.join(logs_dir, "reward.json"), json.dumps(flat_result(reward)))


def secure_logs_dir(logs_dir: str) -> None:
    """Empty the reward paths and, as root, make the folder root-owned and closed to writers.

    Whatever stands at ``logs_dir`` that is not a real folder (a dangling
    symlink, a file) is replaced by an empty folder, so a reward can always be
    written.
    """
    _real_dirs(logs_dir)
    if os.geteuid() == 0:
        try:
            os.chown(logs_dir, 0, 0)
            os.chmod(logs_dir, 0o755)
        except OSError:
            pass
    for name in ("reward.txt", "reward.json", "details.json"):
        _remove(os.path.join(logs_dir, name))


def _real_dirs(path: str) -> None:
    """Make ``path`` a real folder: a symlink (dangling or not) or a file standing there is removed first."""
    if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
        remove_path(path)
    os.makedirs(path, exist_ok=True)


def _remove(path: str) -> None:
    remove_path(path)


def _atomic_write(path: str, text: str) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    _remove(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _load(tests_dir: str, name: str) -> dict:
    with open(os.path.join(tests_dir, name), encoding="utf-8") as f:
        return json.load(f)


if __name__ == "__main__":
    sys.exit(main())
