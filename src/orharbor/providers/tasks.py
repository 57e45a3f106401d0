"""The tasks providers are asked about: the export options of the table's columns, and Harbor ``Task`` objects.

A task config is the real ``task.toml`` the exporter writes for those options, loaded by
Harbor; anything that is not a task directory is placed in a temporary one holding the
files the exporter writes that Harbor's checks look at.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from harbor.models.task.config import NetworkMode, NetworkPolicy, TaskConfig, VerifierEnvironmentMode
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import resolve_task_verifier_mode

from orharbor.errors import UserError
from orharbor.providers import DEFAULT_ALLOWED_HOSTS, VARIANTS


class TaskUnreadable(UserError):
    """A task folder or task.toml that Harbor cannot read."""


@dataclass(frozen=True)
class ExportChoice:
    """The ``orharbor export`` options that decide provider compatibility."""

    verifier_mode: str = "separate"
    agent_network: str = "public"
    allowed_hosts: tuple[str, ...] = ()
    cpus: int = 2
    memory_mb: int = 4096

    @property
    def label(self) -> str:
        return f"{self.verifier_mode}+{self.agent_network}"

    def export_options(self):
        from orharbor.exporter.task_dir import ExportOptions

        return ExportOptions(
            verifier_mode=self.verifier_mode,
            agent_network=self.agent_network,
            allowed_hosts=tuple(self.allowed_hosts),
            cpus=self.cpus,
            memory_mb=self.memory_mb,
        )


@functools.cache
def _probe_row() -> dict:
    """One shipped level-1 row: the network and resource settings do not depend on the row."""
    from orharbor.datasets.rows import read_rows, shipped_datasets

    for path in sorted(shipped_datasets()):
        for row in read_rows(path):
            if row["level"] == 1:
                return row
    raise RuntimeError("no shipped level-1 row to build a task from")


def task_toml(
    verifier_mode: str = "separate",
    agent_network: str = "public",
    allowed_hosts: tuple[str, ...] | list[str] = (),
    cpus: int = 2,
    memory_mb: int = 4096,
) -> str:
    """The ``task.toml`` text ``orharbor export`` writes for these options (the exporter's own function)."""
    import tomli_w

    from orharbor import problem_modules
    from orharbor.exporter.algorithm import task_config

    choice = ExportChoice(verifier_mode, agent_network, tuple(allowed_hosts), cpus, memory_mb)
    row = _probe_row()
    return tomli_w.dumps(task_config(problem_modules.get(row["problem"]), row, choice.export_options()))


def build_task_config(
    verifier_mode: str = "separate",
    agent_network: str = "public",
    allowed_hosts: tuple[str, ...] | list[str] = (),
    cpus: int = 2,
    memory_mb: int = 4096,
) -> TaskConfig:
    """Harbor's ``TaskConfig`` of an export with these options, parsed from the exporter's task.toml."""
    return TaskConfig.model_validate_toml(task_toml(verifier_mode, agent_network, allowed_hosts, cpus, memory_mb))


def export_task(
    out: Path,
    verifier_mode: str = "separate",
    agent_network: str = "public",
    allowed_hosts: tuple[str, ...] | list[str] = (),
    cpus: int = 2,
    memory_mb: int = 4096,
) -> Path:
    """Export one shipped row with these options under ``out`` (the exporter's own ``export_row``)."""
    from orharbor.exporter.algorithm import export_row

    choice = ExportChoice(verifier_mode, agent_network, tuple(allowed_hosts), cpus, memory_mb)
    return export_row(_probe_row(), Path(out), choice.export_options())


def export_choice_of(config: TaskConfig) -> ExportChoice | None:
    """The export options a task config corresponds to, or None when it is not an orharbor shape."""
    agent = config.agent.explicit_phase_policy() or config.environment.resolve_baseline()
    if agent.network_mode == NetworkMode.NO_NETWORK:
        return None
    cpus = config.environment.cpus
    return ExportChoice(
        verifier_mode=resolve_task_verifier_mode(config).value,
        agent_network=agent.network_mode.value,
        allowed_hosts=tuple(agent.allowed_hosts),
        cpus=int(cpus) if isinstance(cpus, (int, float)) and float(cpus).is_integer() else 2,
        memory_mb=config.environment.memory_mb or 4096,
    )


def write_skeleton(config: TaskConfig, task_dir: Path) -> Path:
    """A task directory with the files the exporter writes that Harbor's checks look at."""
    (task_dir / "environment").mkdir(parents=True)
    (task_dir / "tests").mkdir()
    (task_dir / "task.toml").write_text(config.model_dump_toml())
    (task_dir / "instruction.md").write_text("orharbor provider probe\n")
    (task_dir / "environment" / "Dockerfile").write_text("FROM python:3.12-slim-bookworm\nWORKDIR /app\n")
    (task_dir / "tests" / "test.sh").write_text("#!/bin/sh\n")
    if resolve_task_verifier_mode(config) == VerifierEnvironmentMode.SEPARATE:
        (task_dir / "tests" / "Dockerfile").write_text("FROM python:3.12-slim-bookworm\nWORKDIR /tests\n")
    return task_dir


@contextlib.contextmanager
def open_task(task: Any) -> Iterator[Task]:
    """A Harbor ``Task`` for a task directory, a task.toml path, TOML text, a mapping or a TaskConfig.

    Anything but a directory is placed in a temporary task directory that has the files the
    exporter writes (``environment/Dockerfile``; ``tests/Dockerfile`` in separate mode).
    """
    if isinstance(task, Task):
        yield task
        return
    where: str | Path = "task.toml"
    if isinstance(task, os.PathLike) or (isinstance(task, str) and "\n" not in task and Path(task).exists()):
        path = Path(task)
        if path.is_dir():
            opened = _parsed(path, Task, path)
            yield opened
            return
        if not path.is_file():
            raise FileNotFoundError(f"no task directory or task.toml at {path}")
        where, task = path, path.read_text()
    if isinstance(task, str):
        config = _parsed(where, TaskConfig.model_validate_toml, task)
    elif isinstance(task, Mapping):
        config = TaskConfig.model_validate(dict(task))
    elif isinstance(task, TaskConfig):
        config = task
    else:
        raise TypeError(f"expected a task directory, task.toml, mapping or TaskConfig, got {type(task).__name__}")
    with tempfile.TemporaryDirectory(prefix="orharbor-providers-") as tmp:
        yield Task(write_skeleton(config, Path(tmp) / "orharbor-probe-task"))


def _parsed(where: object, parse, source):
    """``parse(source)``; TaskUnreadable naming ``where`` if Harbor cannot read it (a file, TOML syntax, a field)."""
    try:
        return parse(source)
    except (OSError, ValueError) as exc:
        raise TaskUnreadable(f"{where}: not a Harbor task ({str(exc).splitlines()[0]})") from None


def export_or_skeleton(choice: ExportChoice, out: Path) -> Path:
    """A real exported task for ``choice``; a skeleton from the exporter's task.toml if export fails."""
    try:
        return export_task(
            out, choice.verifier_mode, choice.agent_network, choice.allowed_hosts, choice.cpus, choice.memory_mb
        )
    except Exception:  # noqa: BLE001 - the exporter is not what is being tested here
        config = build_task_config(
            choice.verifier_mode, choice.agent_network, choice.allowed_hosts, choice.cpus, choice.memory_mb
        )
        return write_skeleton(config, out / "orharbor-probe-task")


def variant_tasks(
    folder: Path, allowed_hosts: tuple[str, ...] | list[str], cpus: int, memory_mb: int
) -> dict[str, Task]:
    """For each table column (:data:`VARIANTS`): the task the exporter writes for it, in a folder of ``folder``."""
    tasks = {}
    for verifier_mode, agent_network in VARIANTS:
        hosts = tuple(allowed_hosts) if agent_network == "allowlist" else ()
        choice = ExportChoice(verifier_mode, agent_network, hosts, cpus, memory_mb)
        (folder / choice.label).mkdir()
        tasks[choice.label] = Task(export_or_skeleton(choice, folder / choice.label))
    return tasks


def variant_descriptions(allowed_hosts: tuple[str, ...] | list[str] = DEFAULT_ALLOWED_HOSTS) -> dict[str, str]:
    """For each table column: the network settings of the task.toml the exporter writes."""
    out = {}
    for verifier_mode, agent_network in VARIANTS:
        hosts = tuple(allowed_hosts) if agent_network == "allowlist" else ()
        config = build_task_config(verifier_mode, agent_network, hosts)
        parts = [f"[environment] network_mode={config.environment.network_mode.value}"]
        agent = config.agent.explicit_phase_policy()
        if agent is not None:
            parts.append(f"[agent] network_mode={policy_text(agent)}")
        parts.append(f"[verifier] environment_mode={resolve_task_verifier_mode(config).value}")
        if config.verifier.network_mode is not None:
            parts.append(f"[verifier] network_mode={config.verifier.network_mode.value}")
        if config.verifier.environment is not None:
            parts.append(f"[verifier.environment] network_mode={config.verifier.environment.network_mode.value}")
        out[f"{verifier_mode}+{agent_network}"] = "; ".join(parts)
    return out


def policy_text(policy: NetworkPolicy | None) -> str:
    """A network policy as the output writes it: its mode, an allowlist with its hosts."""
    if policy is None:
        return "-"
    if policy.network_mode == NetworkMode.ALLOWLIST:
        return f"allowlist ({', '.join(policy.allowed_hosts)})"
    return policy.network_mode.value
