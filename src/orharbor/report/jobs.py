"""Read Harbor job folders into one record per trial, joined with its task's metadata.

A trial's figures come from Harbor's own ``result.json`` (read with Harbor's
``TrialResult`` model: the reward, whether Harbor counts it as valid, the
exception type). A reward written on the ``unit`` scale (details.json's or the
task's ``reward_scale``) is converted back to orharbor's, so trials of every
export compare; one on the ``quality`` scale is the trial's quality, and its
orharbor reward is details.json's ``orharbor_reward``. Its task's metadata
(kind, problem, size, level, reference, baseline, bound, best known) comes, in
this order, from

1. ``<trial>/verifier/details.json``: orharbor's verifier copies the task's
   metadata there, and Harbor downloads the verifier's log folder into the
   trial, so a job folder describes itself even when the tasks are gone;
2. ``task.toml`` of the task folder the trial ran, if it is still there;
3. ``task.toml`` of a task of the same name under a ``tasks`` folder given.

Anything that cannot be read is skipped with one :class:`Skipped` line naming
the file and the reason; nothing raises for a bad folder.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from pydantic import ValidationError

from orharbor.exporter.task_folder import TaskFolder
from orharbor.task_toml import TaskTomlError
from orharbor.verifiers import reward_scale
from orharbor.verifiers.contract import KINDS
from orharbor.verifiers.quality import quality as quality_of
from orharbor.verifiers.reward import FAIL as FAIL_REWARD, best_reward
from orharbor.verifiers.safe_json import BadOutput, read_regular_file

#: How deep below a given folder trial folders are looked for (jobs/<job>/<trial>/ is depth 2).
MAX_DEPTH = 4
#: Largest result.json or details.json read (a Harbor trial's result.json is a few kB).
MAX_FILE_BYTES = 16 * 1024 * 1024
#: Agreement needed between details.json's reward and Harbor's before details' figures are used.
REWARD_MATCH = 1e-9
#: The failure reward of each task family on orharbor's scale, which a trial's reward is converted back to.
FAIL = {kind.family: kind.fail_reward for kind in KINDS.values()}


@dataclass(frozen=True)
class Instance:
    """One evaluation instance of a level-2 trial, as the verifier scored it."""

    reward: float
    feasible: bool
    objective: float | None
    reference: float | None
    bound: float | None
    timed_out: bool
    best_known: float | None = None
    quality: float | None = None  # the verifier's (orharbor.verifiers.quality), when the task knew its best known


@dataclass(frozen=True)
class TrialRecord:
    """One Harbor trial of an orharbor task, with its task's metadata and the verifier's figures."""

    job: str
    trial: str
    task: str
    agent: str
    model: str | None
    kind: str  # "algorithm" or "modelling"
    problem: str  # algorithm: the problem class; modelling: "spec" or "retailopt"
    size: str | None = None
    level: int | None = None
    difficulty: str | None = None  # modelling specs
    family: str | None = None  # RetailOpt family F1..F8 ("spec" for specs)
    #: On orharbor's scale (a task exported with --reward-scale unit is converted back); None: Harbor records
    #: no valid reward (it leaves the trial out of its mean)
    reward: float | None = None
    exception: str | None = None  # Harbor's exception type, if the trial recorded one
    feasible: bool | None = None
    objective: float | None = None
    reference: float | None = None
    naive: float | None = None
    bound: float | None = None
    best_known: float | None = None  # level 1: the instance's best known objective (details.json or task.toml)
    #: best known / objective, capped at 1, failure 0 (level 2: the mean over the instances); None: not known
    quality: float | None = None
    instances: tuple[Instance, ...] = ()
    #: A level-2 trial's CPU calibration factor (details.json's ``cpu_calibration``); None: not calibrated
    cpu_factor: float | None = None
    executed: bool | None = None
    correct: bool | None = None
    #: What the agent reported spending, as Harbor records it (summed over a multi-step trial's steps); None where
    #: the agent reported nothing. input_tokens counts the cached ones too, as Harbor's AgentContext does.
    input_tokens: int | None = None
    cache_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None

    @property
    def scored(self) -> bool:
        return self.reward is not None

    @property
    def score(self) -> float:
        """The reward of a scored trial (read only where ``scored``)."""
        assert self.reward is not None, "the trial is not scored"
        return self.reward

    @property
    def agent_label(self) -> str:
        return f"{self.agent} ({self.model})" if self.model else self.agent


@dataclass(frozen=True)
class Skipped:
    """A file left out of the report and why."""

    path: Path
    reason: str
    trials: int = 1  # trials lost with it (0: a job-level file)


@dataclass
class Reading:
    """Everything read from the folders given: the trials and what was skipped."""

    trials: list[TrialRecord] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def skipped_trials(self) -> int:
        return sum(s.trials for s in self.skipped)


def read_jobs(folders: list[Path], tasks_dirs: Sequence[Path] = ()) -> Reading:
    """Every trial under ``folders`` (jobs folders, job folders or trial folders)."""
    index = TaskIndex(tasks_dirs)
    reading = Reading(skipped=list(index.skipped))
    seen: set[Path] = set()
    listed: dict[Path, int] = {}  # job folder -> trials its own result.json counts
    for folder in folders:
        if not folder.is_dir():
            reading.skipped.append(Skipped(folder, "not a folder" if folder.exists() else "no such folder", trials=0))
            continue
        for trial_dir, result_file in _trial_folders(folder, reading, listed):
            if trial_dir.resolve() in seen:
                continue
            seen.add(trial_dir.resolve())
            record = _read_trial(trial_dir, result_file, index, reading)
            if record is not None:
                reading.trials.append(record)
    _missing_trials(listed, seen, reading)
    reading.trials.sort(key=lambda t: (t.job, t.trial))
    return reading


def _missing_trials(listed: dict[Path, int], seen: set[Path], reading: Reading) -> None:
    """One line for a job whose result.json counts more trials than it holds folders for (deleted ones)."""
    folders = seen | {
        s.path.parent.resolve() if s.path.name == "result.json" else s.path.resolve()
        for s in reading.skipped
        if s.trials
    }
    for job, total in listed.items():
        found = sum(1 for p in folders if p.parent == job)
        if found < total:
            reading.skipped.append(
                Skipped(
                    job / "result.json",
                    f"the job counts {total} trials but {found} trial folders are there; {total - found} missing",
                    trials=total - found,
                )
            )


def _trial_folders(root: Path, reading: Reading, listed: dict[Path, int]):
    """(trial folder, its result.json) under ``root``; unfinished or corrupt trials go to ``reading.skipped``.

    A job's own result.json (``n_total_trials``) goes to ``listed``.
    """
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        result = folder / "result.json"
        data = _read_json(result)
        if isinstance(data, dict) and "trial_name" in data:
            yield folder, data
            continue
        looks_like_trial = _is_trial_config(_read_json(folder / "config.json")) or (folder / "trial.log").is_file()
        if isinstance(data, dict) and looks_like_trial:  # a result.json of the wrong shape: _read_trial names it
            yield folder, data
            continue
        if isinstance(data, Unreadable) or (data is not None and not isinstance(data, dict)):
            reason = data.reason if isinstance(data, Unreadable) else "result.json is not a JSON object"
            reading.skipped.append(Skipped(result, reason, trials=int(looks_like_trial)))
            if looks_like_trial:
                continue
        elif data is None and looks_like_trial:
            reading.skipped.append(Skipped(folder, "no result.json: the trial did not finish (or is still running)"))
            continue
        elif isinstance(data, dict) and isinstance(data.get("n_total_trials"), int):
            listed[folder.resolve()] = data["n_total_trials"]
        if depth < MAX_DEPTH:
            try:
                children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
            except OSError as exc:
                reading.skipped.append(Skipped(folder, f"cannot list: {exc.strerror}", trials=0))
                continue
            stack.extend((child, depth + 1) for child in reversed(children))


def _is_trial_config(config) -> bool:
    return isinstance(config, dict) and "trial_name" in config


@dataclass(frozen=True)
class Unreadable:
    """A file that is there but cannot be read as JSON, and why."""

    reason: str


def _read_json(path: Path):
    """The JSON value of ``path``; :class:`Unreadable` for a file that is there but unreadable; None if absent.

    Read by :func:`orharbor.verifiers.safe_json.read_regular_file` (no link
    followed, no blocking on a FIFO planted in a trial folder, bounded size).
    """
    if not os.path.lexists(path):
        return None
    if path.is_symlink():
        return Unreadable(f"{path.name} is not a regular file (a symlink)")
    try:
        raw = read_regular_file(str(path), MAX_FILE_BYTES, name=path.name)
    except BadOutput as exc:
        return Unreadable(str(exc))
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        return Unreadable(f"{path.name} is not valid JSON ({type(exc).__name__}: {str(exc)[:120]})")


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _read_trial(trial_dir: Path, data: dict, index: "TaskIndex", reading: Reading) -> TrialRecord | None:
    from harbor.models.trial.result import TrialResult

    try:
        result = TrialResult.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        reading.skipped.append(
            Skipped(trial_dir / "result.json", f"not a Harbor trial result ({where}: {first['msg']})")
        )
        return None
    details = _read_json(trial_dir / "verifier" / "details.json")
    details = details if isinstance(details, dict) else {}
    metadata = details.get("metadata") if isinstance(details.get("metadata"), dict) else None
    tried: list[Path] = []
    broken: list[str] = []
    if metadata is None:
        metadata, tried, broken = _task_metadata(result, trial_dir, index)
    if metadata is None:
        why = f"its task.toml cannot be used: {'; '.join(broken)}" if broken else _gone(result, tried)
        reading.skipped.append(
            Skipped(trial_dir, f"no metadata for task {result.task_name}: details.json has none and {why}")
        )
        return None
    kind = "modelling" if metadata.get("kind") == "modelling" else "algorithm"
    problem = metadata.get("source") if kind == "modelling" else metadata.get("problem")
    if not isinstance(problem, str) or not problem:
        reading.skipped.append(
            Skipped(
                trial_dir,
                f"task {result.task_name} is not an orharbor task "
                "(its metadata names no problem class or modelling source)",
            )
        )
        return None
    written = _harbor_reward(result)
    scale = details.get("reward_scale", metadata.get("reward_scale", reward_scale.DEFAULT))
    if scale not in reward_scale.SCALES:
        reading.skipped.append(
            Skipped(
                trial_dir,
                f"task {result.task_name}: unknown reward scale {scale!r} (known: {', '.join(reward_scale.SCALES)})",
            )
        )
        return None
    trusted = (
        written is not None
        and _number(details.get("reward")) is not None
        and abs(details["reward"] - written) <= REWARD_MATCH
    )
    figures = details if trusted else {}
    if scale == reward_scale.QUALITY and written is not None and not 0.0 <= written <= 1.0:
        reading.skipped.append(
            Skipped(trial_dir, f"task {result.task_name}: reward {written:g} is outside the quality scale's 0..1")
        )
        return None
    reward = _orharbor_reward(written, scale, FAIL[kind], figures)
    if written is not None and reward is None:
        reading.skipped.append(
            Skipped(
                trial_dir,
                f"task {result.task_name}: a quality-scale reward of {written:g} "
                "reads back on orharbor's scale only with its verifier's "
                "details.json (orharbor_reward), which it lacks",
            )
        )
        return None
    outside = _outside_range(kind, metadata, details, reward)
    if outside is not None:
        reading.skipped.append(Skipped(trial_dir, f"task {result.task_name}: {outside}"))
        return None
    exception = result.exception_info.exception_type if result.exception_info else None
    model = result.agent_info.model_info.name if result.agent_info.model_info else None
    common = dict(
        job=trial_dir.parent.name,
        trial=result.trial_name,
        task=result.task_name.removeprefix("orharbor/"),
        agent=result.agent_info.name,
        model=model,
        kind=kind,
        problem=problem,
        reward=reward,
        exception=exception,
        **_usage(result),
    )
    if kind == "modelling":
        return TrialRecord(
            **common,
            difficulty=_text(metadata.get("difficulty")),
            family=_text(metadata.get("family")) or ("spec" if problem == "spec" else None),
            executed=_flag(figures.get("executed")),
            correct=_modelling_correct(figures, reward),
        )
    level = metadata.get("level") if isinstance(metadata.get("level"), int) else _number(details.get("level"))
    instances = tuple(_instances(figures.get("instances")))
    best_known = _number(figures.get("best_known", metadata.get("best_known")))
    knows_best = best_known is not None or _numbers(metadata.get("best_known")) is not None
    quality = (
        written if scale == reward_scale.QUALITY and written is not None else _quality(figures, best_known, knows_best)
    )
    return TrialRecord(
        **common,
        size=_text(metadata.get("size")),
        level=int(level) if level is not None else None,
        feasible=_flag(figures.get("feasible")),
        objective=_number(figures.get("objective")),
        reference=_number(figures.get("reference", metadata.get("reference"))),
        naive=_number(figures.get("naive", metadata.get("baseline"))),
        bound=_number(metadata.get("bound")),
        best_known=best_known,
        quality=quality,
        instances=instances,
        cpu_factor=_cpu_factor(figures.get("cpu_calibration")),
    )


def _usage(result) -> dict:
    """Tokens and cost of a trial by Harbor's own totals (``TrialResult.compute_token_cost_totals``: the
    trial's AgentContext, or its steps' summed); a count that is not a whole number >= 0, or a cost that is
    not a finite number >= 0, is taken as not reported (the agent's own log is where they come from)."""
    n_input, n_cache, n_output, cost = result.compute_token_cost_totals()
    return {
        "input_tokens": _count(n_input),
        "cache_tokens": _count(n_cache),
        "output_tokens": _count(n_output),
        "cost_usd": cost if (cost := _number(cost)) is not None and cost >= 0 else None,
    }


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _orharbor_reward(written: float | None, scale: str, fail: float, figures: dict) -> float | None:
    """Harbor's reward on orharbor's scale; None when Harbor holds none, or a quality-scale figure above 0
    has no trusted details.json to read its orharbor reward from."""
    if written is None:
        return None
    if scale == reward_scale.QUALITY and written > 0.0:
        return _number(figures.get("orharbor_reward"))
    return reward_scale.from_scale(written, scale, fail)


def _quality(figures: dict, best_known: float | None, knows_best: bool) -> float | None:
    """The trial's quality: the verifier's, else (level 1) computed from its objective, else 0.0 where the
    verifier failed before scoring anything; None where the task knows no best known value."""
    stated = _number(figures.get("quality"))
    if stated is not None and 0.0 <= stated <= 1.0:
        return stated
    feasible = _flag(figures.get("feasible"))
    if not knows_best or feasible is None:
        return None
    if best_known is not None:
        return quality_of(_number(figures.get("objective")) if feasible else None, best_known)
    return 0.0 if not feasible and not figures.get("instances") else None


#: An algorithm task's best reward when nothing bounds it: objectives are >= 0, so real rewards stay far below.
UNBOUNDED_REWARD = 1e6


def _outside_range(kind: str, metadata: dict, details: dict, reward: float | None) -> str | None:
    """Why ``reward`` (or a per-instance reward) cannot come from this task's verifier, or None.

    Modelling rewards are 0 or 1. An algorithm reward is clipped at -1 and,
    since every objective is >= 0, is at most naive / (naive - reference),
    or 1 when naive <= reference; a task whose figures are unknown allows up
    to :data:`UNBOUNDED_REWARD`. A reward beyond its range (1e308, say) would
    make every total meaningless, or overflow it.
    """
    if reward is None:
        return None
    if kind == "modelling":
        return None if 0.0 <= reward <= 1.0 else f"reward {reward:g} is outside a modelling task's 0..1"
    rows = details.get("instances")
    if not isinstance(rows, list):
        rows = []
    pairs = [(r.get("naive"), r.get("reference")) for r in rows if isinstance(r, dict)] or [
        (metadata.get("baseline"), metadata.get("reference"))
    ]
    highs = [_best_reward(_number(naive), _number(reference)) for naive, reference in pairs]
    high = max(highs) if highs else UNBOUNDED_REWARD
    values = [reward, *(r["reward"] for r in rows if isinstance(r, dict) and _number(r.get("reward")) is not None)]
    for value in values:
        if not FAIL_REWARD - REWARD_MATCH <= value <= high + REWARD_MATCH:
            return f"reward {value:g} is outside what its verifier can give (-1 to {high:g})"
    return None


def _best_reward(naive: float | None, reference: float | None) -> float:
    return UNBOUNDED_REWARD if naive is None or reference is None else best_reward(naive, reference)


def _harbor_reward(result) -> float | None:
    """The trial's reward as Harbor's metrics see it: None when Harbor holds it invalid (or it is not finite)."""
    if not result.reward_valid:
        return None
    value = result.verifier_result.rewards.get("reward")
    return float(value) if _number(value) is not None else None


def _modelling_correct(figures: dict, reward: float | None) -> bool | None:
    if "correct" in figures:
        return _flag(figures["correct"])
    return None if reward is None else reward >= 1.0


def _cpu_factor(calibration) -> float | None:
    """The factor a level-2 verifier scaled its time limit by, when it calibrated (a positive number)."""
    value = _number(calibration.get("factor")) if isinstance(calibration, dict) else None
    return value if value is not None and value > 0 else None


def _instances(rows) -> list[Instance]:
    if not isinstance(rows, list):
        return []
    out = []
    for row in rows:
        if not isinstance(row, dict) or _number(row.get("reward")) is None:
            continue
        out.append(
            Instance(
                reward=float(row["reward"]),
                feasible=bool(_flag(row.get("feasible"))),
                objective=_number(row.get("objective")),
                reference=_number(row.get("reference")),
                bound=_number(row.get("bound")),
                timed_out=row.get("timed_out") is True,
                best_known=_number(row.get("best_known")),
                quality=_number(row.get("quality")),
            )
        )
    return out


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _numbers(value) -> list[float] | None:
    """A non-empty list of finite numbers as floats (task.toml's level-2 best_known); None for anything else."""
    if not isinstance(value, list) or not value or any(_number(v) is None for v in value):
        return None
    return [float(v) for v in value]


def _flag(value) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def _text(value) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    return str(value) if isinstance(value, (str, int, float)) else None


class TaskIndex:
    """task.toml metadata by task name, from the folders given with ``--tasks``; ``skipped``: the unusable ones."""

    def __init__(self, folders: Sequence[Path] = ()):
        self._by_name: dict[str, dict] = {}
        self.skipped: list[Skipped] = []
        for folder in folders:
            candidates = [folder] if (folder / "task.toml").is_file() else sorted(folder.glob("*/"))
            for task in candidates:
                try:
                    found = _read_task(task)
                except TaskTomlError as exc:
                    self.skipped.append(Skipped(exc.path, exc.reason, trials=0))
                    continue
                if found is not None and found.name is not None:
                    self._by_name.setdefault(found.name, found.metadata)

    def get(self, name: str) -> dict | None:
        return self._by_name.get(name)


def _task_metadata(result, trial_dir: Path, index: TaskIndex) -> tuple[dict | None, list[Path], list[str]]:
    """[metadata] of the trial's task.toml where the trial ran it, else from the index by name; the folders
    tried; and why a task.toml found there could not be used (each naming its file).

    A relative task path is looked for under each of :func:`_run_folders`.
    """
    path = getattr(result.task_id, "path", None)
    tried: list[Path] = []
    broken: list[str] = []
    if path is not None and getattr(result.task_id, "git_url", None) is None:
        path = Path(path)
        for folder in [path] if path.is_absolute() else [base / path for base in _run_folders(result, trial_dir)]:
            tried.append(folder)
            try:
                found = _read_task(folder)
            except TaskTomlError as exc:
                broken.append(str(exc))
                continue
            if found is not None and "metadata" in found.config:
                return found.metadata, tried, broken
    return index.get(result.task_name), tried, broken


def _run_folders(result, trial_dir: Path) -> list[Path]:
    """Where the job may have run, for its relative task paths: recorded first, then guessed.

    Harbor stores the trial folder both as given (``trials_dir`` +
    ``trial_name``, relative when the job's ``jobs_dir`` is) and resolved
    (``trial_uri``); stripping the one from the other leaves the folder the job
    ran in. Then the folder at the same place above the trial folder now (the
    job moved along with its tasks; when ``trials_dir`` is absolute, the job
    folder's parent), then the current folder.
    """
    config = getattr(result, "config", None)
    trials_dir = Path(getattr(config, "trials_dir", None) or ".")
    tail = (*trials_dir.parts, str(getattr(config, "trial_name", None) or result.trial_name))
    relative = not trials_dir.is_absolute() and ".." not in trials_dir.parts
    found: list[Path] = []
    ran = _uri_folder(result.trial_uri)
    if relative and ran is not None and ran.parts[-len(tail) :] == tail and len(ran.parts) > len(tail):
        found.append(Path(*ran.parts[: -len(tail)]))
    here = trial_dir.absolute()
    depth = len(tail) if relative else 2
    if len(here.parents) >= depth:
        found.append(here.parents[depth - 1])
    found.append(Path.cwd())
    return list(dict.fromkeys(found))


def _uri_folder(uri) -> Path | None:
    """The local path of a ``file://`` URI, or None."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri) if isinstance(uri, str) else None
    if parsed is None or parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parsed.path))


def _gone(result, tried: list[Path]) -> str:
    """Which task folder is gone: as the trial recorded it, and where it was looked for when that was relative."""
    path = getattr(result.task_id, "path", None)
    if path is None:
        return "it records no task folder (pass --tasks with the task folders)"
    looked = "" if Path(path).is_absolute() or not tried else f"tried {', '.join(str(folder) for folder in tried)}; "
    return f"its task folder {path} is gone ({looked}pass --tasks with the task folders)"


def _read_task(folder: Path) -> TaskFolder | None:
    """The task in ``folder``, None when it has no task.toml; TaskTomlError naming the file when it is unreadable,
    not TOML, or its [task] or [metadata] is not a table (report reads any Harbor task, so Harbor's own model is
    not asked)."""
    task = TaskFolder(folder)
    if not os.path.lexists(task.toml):
        return None
    task.name, task.metadata  # each a TaskTomlError naming the file when it is not a table
    return task


__all__ = ["Instance", "Reading", "Skipped", "TaskIndex", "TrialRecord", "read_jobs"]
