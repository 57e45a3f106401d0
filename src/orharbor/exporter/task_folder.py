"""The reader of an exported task folder: what the exporter wrote, read back.

The exporter writes a task folder (``task.toml``, ``environment/``, ``tests/``
with ``task.json``, the verifier contract); :class:`TaskFolder` reads it, for
everything that takes one: ``check``, ``verify``, ``report``, the ladder,
``orharbor images`` and the dataset index. Each part is read once per
instance, when first asked for, and every error about ``task.toml`` is a
:class:`~orharbor.task_toml.TaskTomlError` naming the file (the one parser of
task.toml is :func:`orharbor.task_toml.read_task_toml`).
"""

from __future__ import annotations

import atexit
import shutil
from functools import cached_property
from pathlib import Path

from orharbor.exporter import agent_files
from orharbor.exporter.profiles import PROFILES, Profile, consumer_name
from orharbor.task_template.verify import LAYOUT, unflatten
from orharbor.task_toml import TaskTomlError, check_with_harbor, read_task_toml, table
from orharbor.verifiers import contract as verifier_contract

#: A flat tests/ (``--for tinker``) rebuilt as its tree, by its resolved path: once per process, removed at exit.
_TREES: dict[Path, Path] = {}


class TaskFolder:
    """An exported task at ``path``, read as the exporter wrote it.

    Nothing is read until asked for; then ``task.toml`` (:attr:`config`), the
    contract (:meth:`contract`) and Harbor's check of task.toml
    (:meth:`validate`) are read once and kept.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    @classmethod
    def of(cls, task: TaskFolder | Path | str) -> TaskFolder:
        """``task`` itself when it is a TaskFolder (what it has read is kept), else the TaskFolder at that path."""
        return task if isinstance(task, TaskFolder) else cls(task)

    def __repr__(self) -> str:
        return f"TaskFolder({str(self.path)!r})"

    @property
    def toml(self) -> Path:
        """The task's ``task.toml``."""
        return self.path / "task.toml"

    @cached_property
    def config(self) -> dict:
        """task.toml as data; TaskTomlError naming it when it is missing, unreadable or not TOML.

        Not checked with Harbor's model (report reads any Harbor task, and the
        exporter its own): :meth:`validate` does that.
        """
        return read_task_toml(self.toml, harbor=False)

    def validate(self) -> dict:
        """:attr:`config`, once Harbor's own ``TaskConfig`` takes it; TaskTomlError naming the file, as Harbor
        would refuse the task, when it does not."""
        if "_validated" not in self.__dict__:
            check_with_harbor(self.toml, self.config)
            self.__dict__["_validated"] = True
        return self.config

    @property
    def metadata(self) -> dict:
        """task.toml's ``[metadata]`` (empty without one); TaskTomlError when it is not a table."""
        return table(self.config, "metadata", self.toml)

    @property
    def name(self) -> str | None:
        """The task's ``org/name`` (task.toml's ``[task] name``), None without one; TaskTomlError when ``[task]``
        is not a table."""
        name = table(self.config, "task", self.toml).get("name")
        return name if isinstance(name, str) else None

    @property
    def verifier_timeout_s(self) -> float:
        """task.toml's ``[verifier] timeout_sec``; TaskTomlError when it is missing or not a number."""
        value = table(self.config, "verifier", self.toml).get("timeout_sec")
        if value is not None:
            try:
                return float(value)
            except (TypeError, ValueError):
                pass
        raise TaskTomlError(
            self.toml, "[verifier] timeout_sec is " + ("missing" if value is None else f"not a number ({value!r})")
        )

    @property
    def consumer(self) -> Profile:
        """The consumer profile the task was exported for (``[metadata] consumer``; Harbor's when none is named)."""
        name = consumer_name(self.config)
        if name not in PROFILES:
            raise TaskTomlError(self.toml, f"[metadata] consumer {name!r} is none of {', '.join(PROFILES)}")
        return PROFILES[name]

    @property
    def tests(self) -> Path:
        """The task's tests/ as a tree, for code on the host that reads it (check, attacks, verify).

        A flat tests/ (``--for tinker``) is rebuilt once per process in a private
        temporary folder, by the task's own rule (``verify.unflatten``), and removed
        at exit; any other tests/ is returned as it is.
        """
        tests = self.path / "tests"
        if not (tests / LAYOUT).exists():
            return tests
        key = tests.resolve()
        if key not in _TREES:
            tree = Path(unflatten(str(tests)))
            atexit.register(shutil.rmtree, tree, True)
            _TREES[key] = tree
        return _TREES[key]

    def contract(self) -> verifier_contract.Task:
        """The verifier contract (``tests/task.json``, typed); ContractError (a ValueError) or OSError if it
        cannot be read."""
        if "_contract" not in self.__dict__:
            self.__dict__["_contract"] = verifier_contract.load(str(self.tests))
        return self.__dict__["_contract"]

    def differences(self) -> list[str]:
        """How the agent's data files differ from what tests/ grades with, one line each; empty when they
        match (:func:`orharbor.exporter.agent_files.differences`; read again at every call, as it checks the
        folder as it is now)."""
        return agent_files.differences(self.path)


__all__ = ["TaskFolder"]
