"""The task contract: ``tests/task.json``, typed, one class per kind of task.

The exporter writes it (:func:`dump`); everything that reads a task reads it
through :func:`load`: the verifier inside the task, ``orharbor verify``,
``orharbor check`` and its attacks. What a kind means (its family, its
failure reward, whether the verifier runs the agent's program, the rewards of
the reference policies) is written down once, in :data:`KINDS`. Standard
library only: this module is copied into every task's ``tests/``.

Four kinds:

- ``level1``: the agent writes a solution file for one instance;
- ``level2``: the agent writes ``solve.py``, run on hidden instances (and first on a public example);
- ``spec``: a modelling spec's answer files, compared with known values;
- ``retail``: a RetailOpt ``model.py``, run on the scenario's data.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass
from typing import ClassVar

from orharbor.verifiers import reward_scale as scales
from orharbor.verifiers.quality import mean_quality, quality
from orharbor.verifiers.reward import FAIL, objective_at
from orharbor.verifiers.solver_run import Limits

#: The agent's working folder in the task container, where every deliverable is.
APP_DIR = "/app"
#: The file's name in a task's ``tests/``.
TASK_FILE = "task.json"
#: Bumped whenever a field is renamed or its meaning changes (2: the typed contract; 1 had no version).
FORMAT_VERSION = 2


class ContractError(ValueError):
    """A task.json that is not one this version of orharbor wrote: what is wrong, in one line."""


@dataclass(frozen=True)
class Kind:
    """What one kind of task means, for every reader alike."""

    name: str
    #: ``details.json``'s ``kind`` and the report's: ``algorithm`` or ``modelling``.
    family: str
    #: An algorithm task's level (1: a solution file, 2: a solve.py); None for a modelling task.
    level: int | None
    #: The one deliverable every task of the kind has (None: a spec's own answer files).
    deliverable: str | None
    #: What a missing, broken, infeasible or tampered deliverable scores.
    fail_reward: float
    #: The verifier runs the agent's program (level-2 ``solve.py``, RetailOpt ``model.py``).
    runs_program: bool
    #: The deliverable is several files in ``/app`` (a folder to ``orharbor verify``), not one file.
    several_files: bool

    @property
    def policies(self) -> dict[str, float]:
        """The reference policies of ``orharbor check`` and the reward each must earn (orharbor's scale)."""
        return {"oracle": 1.0, "naive": 0.0, "nothing": self.fail_reward}


KINDS: dict[str, Kind] = {
    "level1": Kind("level1", "algorithm", 1, "/app/solution.json", FAIL, runs_program=False, several_files=False),
    "level2": Kind("level2", "algorithm", 2, "/app/solve.py", FAIL, runs_program=True, several_files=False),
    "spec": Kind("spec", "modelling", None, None, 0.0, runs_program=False, several_files=True),
    "retail": Kind("retail", "modelling", None, "/app/model.py", 0.0, runs_program=True, several_files=False),
}


@dataclass(frozen=True)
class Case:
    """One hidden instance of a level-2 task: its file in ``tests/`` and the values its reward needs."""

    instance: str
    instance_sha256: str
    naive: float
    reference: float
    bound: float | None = None
    #: The best objective known for the instance (quality figure, ``--reward-scale quality``); None: not known.
    best_known: float | None = None


@dataclass(frozen=True)
class Example:
    """A public example instance of a level-2 task (one the agent also has), in ``tests/``.

    The verifier runs ``solve.py`` on it once before the hidden instances, under
    the same limits; the run does not count toward the reward, but what it
    printed and why it failed are kept in details.json (of a hidden run only
    fixed facts are: see :mod:`orharbor.verifiers.score`). ``naive`` is the
    naive baseline's objective on it, when known.
    """

    instance: str
    instance_sha256: str
    naive: float | None = None


@dataclass(frozen=True)
class ProgramRun:
    """How the verifier runs the agent's program: interpreter, uid (outside a task container), limits.

    A RetailOpt run also names its command line, the ``tests/`` file handed
    to it as its data, and the file it must write.
    """

    python: str
    uid: int
    limits: Limits
    argv: tuple[str, ...] = ()
    data: str | None = None
    output: str | None = None


@dataclass(frozen=True, kw_only=True)
class Task:
    """What every task.json holds."""

    KIND: ClassVar[str] = ""
    task_id: str
    #: Absolute paths in the agent's container, the first the main one.
    deliverables: tuple[str, ...]
    #: task.toml's ``[metadata]``, copied into details.json so a job folder describes its trials.
    metadata: dict | None = None
    #: The scale reward.json is written on (:mod:`orharbor.verifiers.reward_scale`); task.json files
    #: written before it have none, and are on orharbor's own.
    reward_scale: str = scales.DEFAULT

    @property
    def kind(self) -> Kind:
        return KINDS[self.KIND]

    def scaled(self, reward: float) -> float:
        """An orharbor-scale reward as this task's reward.json holds it.

        On the quality scale: the quality of answers that earn ``reward`` on
        every instance (each objective read back from the reward; failure 0.0).
        The verifier itself computes quality from the objectives it found.
        """
        if self.reward_scale == scales.QUALITY and reward > self.kind.fail_reward:
            return mean_quality(
                quality(objective_at(reward, naive, reference), best) for naive, reference, best in self.anchors
            )
        return scales.to_scale(reward, self.reward_scale, self.kind.fail_reward)

    @property
    def policies(self) -> dict[str, float]:
        """The reference policies of ``orharbor check`` and the reward each must earn on this task's scale.

        On the quality scale: oracle best_known / reference, naive best_known /
        naive (level 2: their means over the instances), nothing 0.0.
        """
        if self.reward_scale == scales.QUALITY:
            return {
                "oracle": mean_quality(quality(reference, best) for _, reference, best in self.anchors),
                "naive": mean_quality(quality(naive, best) for naive, _, best in self.anchors),
                "nothing": scales.to_scale(self.kind.fail_reward, scales.QUALITY, self.kind.fail_reward),
            }
        return {name: self.scaled(reward) for name, reward in self.kind.policies.items()}

    @property
    def anchors(self) -> tuple[tuple[float, float, float | None], ...]:
        """(naive, reference, best known) of each instance an algorithm task scores (none for a modelling task)."""
        return ()

    @property
    def best_knowns(self) -> tuple[float, ...] | None:
        """The best known value of every instance, in order; None unless the task knows each one."""
        anchors = self.anchors
        found = tuple(best for _, _, best in anchors if best is not None)
        return found if found and len(found) == len(anchors) else None

    @property
    def deliverable(self) -> str:
        """The main deliverable's path (for a spec, the first output file)."""
        return self.deliverables[0]


@dataclass(frozen=True, kw_only=True)
class Level1Task(Task):
    """One instance in ``tests/``; the agent's solution file is scored against its naive and reference values."""

    KIND: ClassVar[str] = "level1"
    problem: str
    instance: str
    instance_sha256: str
    naive: float
    reference: float
    #: The best objective known for the instance (quality figure, ``--reward-scale quality``); None: not known.
    best_known: float | None = None

    @property
    def anchors(self) -> tuple[tuple[float, float, float | None], ...]:
        return ((self.naive, self.reference, self.best_known),)


@dataclass(frozen=True, kw_only=True)
class Level2Task(Task):
    """Hidden instances in ``tests/``; the agent's ``solve.py`` runs once on each.

    ``example`` (optional; task.json files written before it have none) is a
    public example instance it runs on first, for debugging only.
    ``reference_workload_s`` (optional) is how long the CPU calibration's
    workload took on the machine the time limit was chosen for: the verifier
    scales the limit by this machine's time over it (:mod:`orharbor.verifiers.cpu_calibration`).
    """

    KIND: ClassVar[str] = "level2"
    problem: str
    cases: tuple[Case, ...]
    run: ProgramRun
    example: Example | None = None
    reference_workload_s: float | None = None

    @property
    def anchors(self) -> tuple[tuple[float, float, float | None], ...]:
        return tuple((case.naive, case.reference, case.best_known) for case in self.cases)


@dataclass(frozen=True, kw_only=True)
class SpecTask(Task):
    """A modelling spec: the agent's answer files, each compared with its expected text or value."""

    KIND: ClassVar[str] = "spec"
    #: File name (relative to ``/app``) -> ``{"text": ...}`` or ``{"value", "rel_tol", "abs_tol"}``.
    outputs: dict


@dataclass(frozen=True, kw_only=True)
class RetailTask(Task):
    """A RetailOpt scenario: the agent's ``model.py`` runs on the data and its answer is compared."""

    KIND: ClassVar[str] = "retail"
    #: ``{"status", "objective", "rel_tol"}`` of the reference solution.
    expected: dict
    run: ProgramRun


TASK_CLASSES: dict[str, type[Task]] = {cls.KIND: cls for cls in (Level1Task, Level2Task, SpecTask, RetailTask)}


def dump(task: Task) -> dict:
    """task.json as data: the format version and kind first, then the task's fields."""
    fields = _lists(dataclasses.asdict(task))
    assert isinstance(fields, dict)  # _lists keeps a dict a dict
    return {"format_version": FORMAT_VERSION, "kind": task.KIND, **fields}


def load(tests_dir: str) -> Task:
    """The task of the ``task.json`` in ``tests_dir``; ContractError if it is not one this version wrote."""
    path = os.path.join(tests_dir, TASK_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as exc:
        raise ContractError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}); re-export the task") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractError(f"{path}: cannot read it ({exc})") from None
    return parse(data, path)


def parse(data: object, where: str = TASK_FILE) -> Task:
    """The typed task of task.json's data; ContractError naming what is missing or wrong."""
    if not isinstance(data, dict):
        raise ContractError(f"{where}: not an orharbor task.json (expected a JSON object); re-export the task")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise ContractError(
            f"{where}: task.json format {version if version is not None else 1}, but this "
            f"orharbor reads format {FORMAT_VERSION}; re-export the task"
        )
    kind = _kind_of(data)
    cls = TASK_CLASSES[kind.name] if kind else None
    if cls is None:
        raise ContractError(
            f"{where}: unknown task kind {data.get('kind')!r} (known: {', '.join(KINDS)}); re-export the task"
        )
    fields = {k: v for k, v in data.items() if k not in ("format_version", "kind")}
    _check_fields(cls, fields, where, cls.KIND)
    if "reward_scale" in fields and fields["reward_scale"] not in scales.SCALES:
        raise ContractError(
            f"{where}: unknown reward_scale {fields['reward_scale']!r} (known: "
            f"{', '.join(scales.SCALES)}); re-export the task"
        )
    try:
        fields["deliverables"] = tuple(fields["deliverables"])
        if "cases" in fields:
            fields["cases"] = tuple(_build(Case, case, where, "cases") for case in fields["cases"])
        if "run" in fields:
            fields["run"] = _program_run(fields["run"], where)
        if fields.get("example") is not None:
            fields["example"] = _build(Example, fields["example"], where, "example")
        if fields.get("reference_workload_s") is not None:
            fields["reference_workload_s"] = _positive(fields["reference_workload_s"], where, "reference_workload_s")
    except TypeError as exc:
        raise ContractError(f"{where}: not a {cls.KIND} task.json ({exc})") from None
    return _with_best_knowns(cls(**fields), where)


def _with_best_knowns(task: Task, where: str) -> Task:
    """``task``, once each best known value is a finite number (or None) and a quality-scale task knows them all."""
    for _, _, best in task.anchors:
        if best is not None and not (
            isinstance(best, (int, float)) and not isinstance(best, bool) and math.isfinite(best)
        ):
            raise ContractError(
                f"{where}: not an orharbor task.json (best_known is {best!r}, not a number); re-export the task"
            )
    if task.reward_scale == scales.QUALITY and task.best_knowns is None:
        raise ContractError(
            f"{where}: reward_scale 'quality' needs the best known value of every instance, and "
            "this task lacks some; re-export the task"
        )
    return task


def _kind_of(data: dict) -> Kind | None:
    """The known kind task.json's data names (None for anything else: a typo, a list, a number)."""
    name = data.get("kind")
    return KINDS.get(name) if isinstance(name, str) else None


def _check_fields(cls: type, fields: dict, where: str, part: str = "") -> None:
    """ContractError naming the first field of ``cls`` that is missing, or the first one it does not know."""
    known = {f.name: f for f in dataclasses.fields(cls)}
    required = [
        name
        for name, f in known.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [name for name in required if name not in fields]
    unknown = [name for name in fields if name not in known]
    if missing or unknown:
        what = f"no {missing[0]!r}" if missing else f"unknown field {unknown[0]!r}"
        raise ContractError(
            f"{where}: not an orharbor task.json ({part + ': ' if part else ''}{what}); re-export the task"
        )


def _build(cls: type, data: object, where: str, what: str):
    if not isinstance(data, dict):
        raise ContractError(f"{where}: not an orharbor task.json ({what} is not a JSON object); re-export the task")
    _check_fields(cls, data, where, what)
    return cls(**data)


def _positive(value: object, where: str, what: str) -> float:
    """``value`` as a float, or ContractError unless it is a finite number above 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise ContractError(
            f"{where}: not an orharbor task.json ({what} is {value!r}, not a number above 0); re-export the task"
        )
    return float(value)


def _program_run(run: object, where: str) -> ProgramRun:
    if isinstance(run, dict):
        run = {
            **run,
            "limits": _build(Limits, run.get("limits"), where, "run.limits"),
            "argv": tuple(run.get("argv", ())),
        }
    return _build(ProgramRun, run, where, "run")


def _lists(value: object) -> object:
    """Tuples as lists, recursively: JSON's shape of the dataclass fields."""
    if isinstance(value, dict):
        return {key: _lists(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_lists(item) for item in value]
    return value


def fail_reward(tests_dir: str) -> tuple[str, float, dict | None]:
    """(family, failure reward on the task's reward scale, metadata) of the task in ``tests_dir``, even from a
    damaged task.json.

    For the verifier's error paths: whatever goes wrong, a reward is written,
    and a modelling task's failure is 0.0, not -1.0 (on the ``unit`` scale
    every kind's is 0.0). Only ``kind``, ``reward_scale`` and ``metadata`` are
    read, so a task.json that :func:`parse` refuses still names its kind;
    without a known kind, the task counts as an algorithm task, and without a
    known scale it is on orharbor's, whose failure reward is never above another scale's.
    """
    try:
        with open(os.path.join(tests_dir, TASK_FILE), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        data = None
    data = data if isinstance(data, dict) else {}
    kind, metadata = _kind_of(data) or KINDS["level1"], data.get("metadata")
    scale = data.get("reward_scale")
    scale = scale if scale in scales.SCALES else scales.DEFAULT
    return (
        kind.family,
        scales.to_scale(kind.fail_reward, scale, kind.fail_reward),
        metadata if isinstance(metadata, dict) else None,
    )
