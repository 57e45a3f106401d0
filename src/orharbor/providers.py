"""Which Harbor environment providers accept an orharbor export, computed from Harbor's own code.

Nothing here restates what a provider can do. For every environment type in Harbor's
registry (``harbor/environments/factory.py``) the answer comes from running Harbor:

1. **The network plan.** The task's ``TaskConfig`` (the real ``task.toml`` the exporter
   writes, loaded by Harbor's ``Task``) goes through ``Trial._network_plan``, which calls
   ``harbor.trial.network_policy.resolve_trial_network_plan``: agent-environment baseline
   (agent setup), agent phase, separate-verifier baseline and verifier phase.
2. **The environments, built as a Trial builds them.** ``EnvironmentFactory.
   create_environment_from_config`` creates the agent environment (and, in separate mode,
   the verifier environment from ``resolve_verifier_environment_definition``) with the
   same ``network_policy`` / ``phase_network_policies`` that ``Trial._init_agent_environment``
   and ``Trial._separate_verifier_env`` pass. The provider's own ``__init__`` runs: it
   parses its options and sets the state its ``capabilities`` read (Docker's
   ``_enable_egress_control``, Modal's ``_capabilities``, Daytona's ``_compose_mode``...).
   It is stopped the moment it calls ``BaseEnvironment.__init__``, which runs in full:
   static phase-policy inference ("The execution phase network policy differs ..."),
   ``_validate_definition``, resource modes and ``validate_network_policy_support``. The
   rest of the provider's ``__init__`` (SDK clients, credentials) never runs.
3. **Trial's own checks**, ``Trial._validate_network_policy_modes`` and
   ``Trial._validate_separate_verifier_env_policies``, run unchanged on a stand-in trial,
   and the job-level ``EnvironmentFactory.validate_resource_policies``.

A provider module whose SDK is not installed is imported with inert stand-ins for just
the missing top-level packages (found from the module's own import statements), so that
its Harbor code can run; the output names those packages. Processes and network
connections are blocked while a provider is evaluated, so nothing here contacts a
provider or needs credentials. Docker and Podman enable network control only through
Harbor's egress-control sidecar, gated by a kernel probe container
(``DockerEnvironment._egress_control_kernel_support``); both outcomes of that probe are
evaluated and reported as separate rows.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import os
import socket
import subprocess
import sys
import tempfile
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping
from unittest import mock

import harbor.environments.factory as _factory
from harbor.environments.base import BaseEnvironment
from harbor.environments.factory import EnvironmentFactory
from harbor.models.environment_type import EnvironmentType
from harbor.models.task.config import NetworkMode, NetworkPolicy, TaskConfig, VerifierEnvironmentMode
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import (
    resolve_task_verifier_mode,
    resolve_verifier_environment_definition,
)
from harbor.models.trial.config import AgentConfig as TrialAgentConfig
from harbor.models.trial.config import EnvironmentConfig as TrialEnvironmentConfig
from harbor.models.trial.config import ResourceMode
from harbor.models.trial.config import VerifierConfig as TrialVerifierConfig
from harbor.models.trial.paths import EnvironmentPaths, TrialPaths
from harbor.trial.trial import Trial

from orharbor.errors import UserError

#: The four export variants of the table: (``--verifier-mode``, ``--agent-network``).
VARIANTS: tuple[tuple[str, str], ...] = (
    ("separate", "public"), ("shared", "public"), ("separate", "allowlist"), ("shared", "allowlist"))
#: The allowlist the table's allowlist columns use (the model API of claude-code).
DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = ("api.anthropic.com",)

#: Short codes of the table cells, and what each means.
CODES = {
    "no-network": "a container must run offline (network_mode='no-network') and the provider cannot disable networking",
    "allowlist": "the agent phase has an allowlist and the provider cannot enforce it (or not for these host types)",
    "switch": "a container must change network policy after start and the provider cannot",
    "definition": "the provider rejects the task's environment definition (e.g. it needs a prebuilt docker_image)",
    "resources": "the provider cannot enforce the requested resource mode",
    "platform": "the provider cannot run this OS, GPU or compose setup",
    "provider": "the provider's own constructor refuses the task or options",
    "unevaluated": "Harbor's code for this provider could not be run offline",
    "error": "another error from Harbor's checks",
}

_PROBE_TEXT = "orharbor-probe"
_LOG = logging.getLogger("orharbor.providers.probe")
_LOG.addHandler(logging.NullHandler())
_LOG.propagate = False


class UnknownProvider(UserError):
    """A provider name Harbor does not know."""


class TaskUnreadable(UserError):
    """A task folder or task.toml that Harbor cannot read."""


class OfflineProbeError(RuntimeError):
    """Raised when provider code tries to start a process or open a connection while probed."""


# --------------------------------------------------------------------------- names


def provider_names() -> list[str]:
    """Every environment type Harbor's factory knows (``--env`` / ``-e`` values), sorted."""
    return EnvironmentFactory.registered_names()


def resolve_provider(name: str) -> str:
    """``name`` as Harbor spells it; :class:`UnknownProvider` naming the close match otherwise."""
    names = provider_names()
    if name in names:
        return name
    lowered = name.strip().lower().replace("_", "-")
    if lowered in names:
        return lowered
    close = difflib.get_close_matches(lowered, names, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise UnknownProvider(f"unknown environment provider {name!r}.{hint} "
                          f"Harbor {_harbor_version()} knows: {', '.join(names)}")


def has_egress_sidecar_condition(provider: str) -> bool:
    """Whether the provider's network control depends on Docker's egress-control sidecar probe."""
    cls = _provider(resolve_provider(provider)).cls
    return cls is not None and hasattr(cls, "_egress_control_kernel_support")


# --------------------------------------------------------------------------- export options


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

        return ExportOptions(verifier_mode=self.verifier_mode, agent_network=self.agent_network,
                             allowed_hosts=tuple(self.allowed_hosts), cpus=self.cpus, memory_mb=self.memory_mb)


@functools.cache
def _probe_row() -> dict:
    """One shipped level-1 row: the network and resource settings do not depend on the row."""
    from orharbor.datasets.rows import read_rows, shipped_datasets

    for path in sorted(shipped_datasets()):
        for row in read_rows(path):
            if row["level"] == 1:
                return row
    raise RuntimeError("no shipped level-1 row to build a task from")


def task_toml(verifier_mode: str = "separate", agent_network: str = "public",
              allowed_hosts: tuple[str, ...] | list[str] = (), cpus: int = 2, memory_mb: int = 4096) -> str:
    """The ``task.toml`` text ``orharbor export`` writes for these options (the exporter's own function)."""
    import tomli_w

    from orharbor import problem_modules
    from orharbor.exporter.algorithm import task_config

    choice = ExportChoice(verifier_mode, agent_network, tuple(allowed_hosts), cpus, memory_mb)
    row = _probe_row()
    return tomli_w.dumps(task_config(problem_modules.get(row["problem"]), row, choice.export_options()))


def build_task_config(verifier_mode: str = "separate", agent_network: str = "public",
                      allowed_hosts: tuple[str, ...] | list[str] = (), cpus: int = 2,
                      memory_mb: int = 4096) -> TaskConfig:
    """Harbor's ``TaskConfig`` of an export with these options, parsed from the exporter's task.toml."""
    return TaskConfig.model_validate_toml(task_toml(verifier_mode, agent_network, allowed_hosts, cpus, memory_mb))


def export_task(out: Path, verifier_mode: str = "separate", agent_network: str = "public",
                allowed_hosts: tuple[str, ...] | list[str] = (), cpus: int = 2, memory_mb: int = 4096) -> Path:
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
        memory_mb=config.environment.memory_mb or 4096)


# --------------------------------------------------------------------------- tasks


def _write_skeleton(config: TaskConfig, task_dir: Path) -> Path:
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
def _open_task(task: Any) -> Iterator[Task]:
    """A Harbor ``Task`` for a task directory, a task.toml path, TOML text, a mapping or a TaskConfig.

    Anything but a directory is placed in a temporary task directory that has the files the
    exporter writes (``environment/Dockerfile``; ``tests/Dockerfile`` in separate mode).
    """
    if isinstance(task, Task):
        yield task
        return
    where = "task.toml"
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
        yield Task(_write_skeleton(config, Path(tmp) / "orharbor-probe-task"))


def _parsed(where: object, parse, source):
    """``parse(source)``; TaskUnreadable naming ``where`` if Harbor cannot read it (a file, TOML syntax, a field)."""
    try:
        return parse(source)
    except (OSError, ValueError) as exc:
        raise TaskUnreadable(f"{where}: not a Harbor task ({str(exc).splitlines()[0]})") from None


# --------------------------------------------------------------------------- loading providers


#: Names of stubbed SDK objects that provider code touched while it was being probed.
_STUB_USES: set[str] = set()


class _StubMeta(type):
    """Classes that answer every attribute with another inert class."""

    def __getattr__(cls, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        _STUB_USES.add(f"{cls.__qualname__}.{name}")
        return _stub_class(f"{cls.__qualname__}.{name}")

    def __getitem__(cls, item):
        return cls

    def __iter__(cls):
        return iter(())


def _stub_class(qualname: str) -> type:
    """An inert stand-in: instances are falsy, empty, and answer every attribute or call with another."""

    def used(what: str):
        _STUB_USES.add(what)

    def __init__(self, *args, **kwargs):
        used(qualname + "()")

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        used(f"{qualname}().{name}")
        return object.__new__(_stub_class(f"{qualname}().{name}"))

    def __call__(self, *args, **kwargs):
        used(f"{qualname}(...)")
        return self

    return _StubMeta(qualname.rsplit(".", 1)[-1], (), {
        "__init__": __init__, "__getattr__": __getattr__, "__call__": __call__,
        "__bool__": lambda self: False, "__len__": lambda self: 0, "__iter__": lambda self: iter(()),
        "__getitem__": lambda self, key: object.__new__(_stub_class(f"{qualname}[]")),
        "__qualname__": qualname, "__module__": "orharbor.providers.stub"})


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _stub_class(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        pass


class _StubFinder(importlib.abc.MetaPathFinder):
    def __init__(self, roots: tuple[str, ...]):
        self.roots = frozenset(roots)

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)
        return None


def _is_stub(value: object) -> bool:
    return isinstance(value, (_StubModule, _StubMeta)) or isinstance(type(value), _StubMeta)


def _forget(name: str, restore: types.ModuleType | None = None) -> None:
    """Remove a module from sys.modules and from its parent package (or put ``restore`` back in both)."""
    module = sys.modules.pop(name, None)
    parent, _, child = name.rpartition(".")
    package = sys.modules.get(parent) if parent else None
    if restore is not None:
        sys.modules[name] = restore
        if package is not None:
            setattr(package, child, restore)
    elif package is not None and module is not None and getattr(package, child, None) is module:
        delattr(package, child)


def _drop_stub_modules(roots: tuple[str, ...], before: set[str]) -> None:
    """Forget the stub packages and any module first imported while they were installed that uses them."""
    for name in [n for n in sys.modules if n.split(".")[0] in roots]:
        _forget(name)
    for name in [n for n in sys.modules if n not in before]:
        if any(_is_stub(value) for value in list(vars(sys.modules[name]).values())):
            _forget(name)


@contextlib.contextmanager
def _stubs(roots: tuple[str, ...]) -> Iterator[None]:
    if not roots:
        yield
        return
    finder = _StubFinder(roots)
    before = set(sys.modules)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        _drop_stub_modules(roots, before)


def _module_files(module_name: str) -> list[Path]:
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        return []
    if spec.submodule_search_locations:
        return sorted(p for location in spec.submodule_search_locations for p in Path(location).rglob("*.py"))
    return [Path(spec.origin)]


def _missing_packages(files: list[Path]) -> tuple[str, ...]:
    """Top-level packages the provider's own files import that are not installed."""
    roots: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots.add(node.module.split(".")[0])
    return tuple(sorted(root for root in roots
                        if root not in sys.stdlib_module_names and importlib.util.find_spec(root) is None))


@dataclass(frozen=True)
class _Provider:
    name: str
    cls: type[BaseEnvironment] | None
    stubbed: tuple[str, ...] = ()
    load_error: str | None = None


def _import_with_stubs(module_name: str, roots: tuple[str, ...]) -> tuple[types.ModuleType, tuple[str, ...]]:
    """A fresh copy of ``module_name`` imported with ``roots`` stubbed; sys.modules is left as it was."""
    for _ in range(20):
        own = [n for n in sys.modules if n == module_name or n.startswith(module_name + ".")]
        saved = {name: sys.modules.pop(name) for name in own}
        try:
            with _stubs(roots), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return importlib.import_module(module_name), roots
        except ModuleNotFoundError as exc:
            root = (exc.name or "").split(".")[0]
            if not root or root in roots or importlib.util.find_spec(root) is not None:
                raise
            roots = tuple(sorted({*roots, root}))
        finally:
            for name in sorted((n for n in sys.modules if n == module_name or n.startswith(module_name + ".")),
                               reverse=True):
                _forget(name)
            for name, module in sorted(saved.items()):
                _forget(name, restore=module)
    raise ImportError(f"could not import {module_name} with stubbed SDK packages {roots}")


@functools.cache
def _provider(name: str) -> _Provider:
    entry = _factory._ENVIRONMENT_REGISTRY[EnvironmentType(name)]
    try:
        roots = _missing_packages(_module_files(entry.module))
        if roots:
            module, roots = _import_with_stubs(entry.module, roots)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    module = importlib.import_module(entry.module)
                except ModuleNotFoundError as exc:
                    module, roots = _import_with_stubs(entry.module, ((exc.name or "").split(".")[0],))
        cls = getattr(module, entry.class_name)
        if not (isinstance(cls, type) and issubclass(cls, BaseEnvironment)):
            raise TypeError(f"{entry.module}.{entry.class_name} is not a BaseEnvironment")
        return _Provider(name, cls, tuple(roots))
    except Exception as exc:  # noqa: BLE001 - reported in the table, never fatal
        return _Provider(name, None, (), f"{type(exc).__name__}: {exc}")


# --------------------------------------------------------------------------- probing


class _Reached(BaseException):
    """Carries the environment out of the provider's __init__ once BaseEnvironment.__init__ has run."""

    def __init__(self, env: BaseEnvironment, error: BaseException | None):
        super().__init__()
        self.env, self.error = env, error


class _StopAtBaseInit(BaseEnvironment):
    """Sits just above BaseEnvironment in a probe class's MRO: Harbor's checks run, the rest does not."""

    def __init__(self, *args, **kwargs):
        try:
            BaseEnvironment.__init__(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the refusal being measured
            raise _Reached(self, exc) from None
        raise _Reached(self, None)


#: BaseEnvironment.__init__'s validation hooks, and the table code of a refusal from each.
_HOOKS = {
    "_validate_extra_docker_compose_support": "platform",
    "_validate_definition": "definition",
    "_validate_resource_mode_support": "resources",
    "_validate_gpu_support": "platform",
    "_validate_tpu_support": "platform",
    "_validate_network_policy_support": "network",
    "_validate_windows_support": "platform",
}


def _hook(name: str):
    def wrapper(self, *args, **kwargs):
        try:
            return getattr(super(type(self), self), name)(*args, **kwargs)
        except Exception:
            self.__dict__.setdefault("_orharbor_failed_hook", name)
            raise

    wrapper.__name__ = name
    return wrapper


@functools.cache
def _probe_class(name: str, egress_sidecar: bool | None) -> type:
    cls = _provider(name).cls
    namespace: dict[str, Any] = {"__module__": __name__, **{hook: _hook(hook) for hook in _HOOKS}}
    if egress_sidecar is not None:
        # DockerEnvironment._egress_control_kernel_support runs a probe container; its answer is
        # the runtime condition, so it is fixed here instead of run.
        namespace["_egress_control_kernel_support"] = classmethod(lambda _cls: egress_sidecar)
    return type(f"Probe{cls.__name__}", (cls, _StopAtBaseInit), namespace)


def _blocked(*args, **kwargs):
    raise OfflineProbeError("provider code tried to start a process or open a network connection "
                            "before Harbor's checks; orharbor evaluates providers offline")


@contextlib.contextmanager
def _offline(roots: tuple[str, ...]) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        stack.enter_context(warnings.catch_warnings())
        warnings.simplefilter("ignore")
        for target, attribute in ((subprocess, "Popen"), (os, "system"), (socket, "create_connection"),
                                  (socket, "getaddrinfo"), (socket.socket, "connect")):
            stack.enter_context(mock.patch.object(target, attribute, _blocked))
        stack.enter_context(_stubs(roots))
        yield


@dataclass
class _Built:
    env: BaseEnvironment | None
    error: BaseException | None
    hook: str | None  # the validation hook that raised, "inline", "constructor" or "unevaluated"
    stub_uses: frozenset[str] = frozenset()


def _construct(probe_cls: type, config: TrialEnvironmentConfig, **kwargs) -> _Built:
    """``EnvironmentFactory.create_environment_from_config`` with the probe class in the registry's place."""
    _STUB_USES.clear()
    with mock.patch.object(_factory, "_load_environment_class", lambda _type: probe_cls):
        try:
            EnvironmentFactory.create_environment_from_config(config=config, **kwargs)
            built = _Built(None, RuntimeError(f"{probe_cls.__name__} was built without calling "
                                              "BaseEnvironment.__init__"), "unevaluated")
        except _Reached as reached:
            hook = reached.env.__dict__.get("_orharbor_failed_hook", "inline") if reached.error else None
            built = _Built(reached.env, reached.error, hook)
        except OfflineProbeError as exc:
            built = _Built(None, exc, "unevaluated")
        except Exception as exc:  # noqa: BLE001 - the provider refused before Harbor's base checks
            built = _Built(None, exc, "constructor")
    built.stub_uses = frozenset(_STUB_USES)
    _STUB_USES.clear()
    return built


class _TrialStandIn:
    """Just enough of a Trial for Trial's own network-plan methods, which run unchanged."""

    _network_plan = Trial._network_plan
    _validate_network_policy_modes = Trial._validate_network_policy_modes
    _validate_network_plan = Trial._validate_network_plan
    _validate_dynamic_phase_switch = Trial._validate_dynamic_phase_switch
    _validate_separate_verifier_env_policies = Trial._validate_separate_verifier_env_policies
    _verifier_env_mounts = Trial._verifier_env_mounts

    def __init__(self, task: Task, environment: TrialEnvironmentConfig, paths: TrialPaths):
        self.task = task
        self.paths = paths
        self.config = types.SimpleNamespace(
            agent=TrialAgentConfig(), environment=environment, verifier=TrialVerifierConfig(),
            install_only=False, is_regrade=False)
        self.logger = _LOG
        # A host-side agent: Harbor adds no inference hosts (orharbor's allowlist already holds them).
        self.agent = None
        self.user_agent = None
        self._warned_inference_agents: set[str] = set()
        self.agent_environment: BaseEnvironment | None = None
        self.agent_env_paths = EnvironmentPaths.for_os(task.config.environment.os)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Refusal:
    """One reason a provider refuses a task, with the Harbor check and message behind it."""

    stage: str       # "agent environment", "separate verifier environment", "trial network plan", "job preflight"
    code: str        # a key of CODES
    message: str     # Harbor's own exception text
    text: str = ""   # the human-readable reason

    def key(self) -> tuple[str, str]:
        return self.stage, self.code


@dataclass
class Evaluation:
    """What Harbor decided for one provider (under one runtime condition) and one task."""

    provider: str
    egress_sidecar: bool | None
    refusals: list[Refusal] = field(default_factory=list)
    plan: Any = None
    verifier_plan: Any = None
    capabilities: dict[str, Any] = field(default_factory=dict)  # stage -> EnvironmentCapabilities
    stub_uses: set[str] = field(default_factory=set)  # stubbed SDK objects the constructor touched

    @property
    def accepted(self) -> bool:
        return not self.refusals

    def codes(self) -> list[str]:
        return list(dict.fromkeys(r.code for r in self.refusals))


def _code(error: BaseException, hook: str | None) -> str:
    message = str(error)
    if isinstance(error, OfflineProbeError) or hook == "unevaluated":
        return "unevaluated"
    if hook == "constructor":
        return "provider"
    if hook in _HOOKS and _HOOKS[hook] not in ("network",):
        return _HOOKS[hook]
    if "network_mode='no-network'" in message:
        return "no-network"
    if "network_mode='allowlist'" in message:
        return "allowlist"
    if "change network policy after start" in message or "Static network policy inference" in message:
        return "switch"
    return "error"


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message


def _refusals_of(built: _Built, stage: str, policies: list[NetworkPolicy]) -> list[Refusal]:
    """The refusal Harbor raised first, then the other checks Harbor would have reached after it."""
    if built.error is None:
        return []
    found = [Refusal(stage, _code(built.error, built.hook), str(built.error))]
    env = built.env
    if env is None:
        return found
    extra: list[tuple[BaseException, str | None]] = []
    for hook in ("_validate_definition", "_validate_resource_mode_support"):
        if hook == built.hook:
            continue
        try:
            getattr(env, hook)()
        except AttributeError:
            pass  # state the provider sets after BaseEnvironment.__init__: not reached by Harbor either
        except Exception as exc:  # noqa: BLE001
            extra.append((exc, hook))
    for policy in dict.fromkeys(p.model_dump_json() for p in policies):
        try:
            env.validate_network_policy_support(NetworkPolicy.model_validate_json(policy))
        except AttributeError:
            pass
        except Exception as exc:  # noqa: BLE001
            extra.append((exc, "_validate_network_policy_support"))
    for exc, hook in extra:
        refusal = Refusal(stage, _code(exc, hook), str(exc))
        if refusal.key() not in {r.key() for r in found}:
            found.append(refusal)
    return found


def _capabilities(env: BaseEnvironment | None):
    if env is None:
        return None
    try:
        return env.capabilities
    except Exception:  # noqa: BLE001
        return None


def _evaluate(provider: str, task: Task, egress_sidecar: bool | None, options: Mapping[str, Any],
              cpu_mode: ResourceMode, memory_mode: ResourceMode) -> Evaluation:
    loaded = _provider(provider)
    result = Evaluation(provider, egress_sidecar)
    if loaded.cls is None:
        result.refusals.append(Refusal("import", "unevaluated", loaded.load_error or "import failed"))
        return result
    kwargs = dict(options)
    if loaded.cls.options_model is not None:
        # Required provider options (a region, a resource group) get a placeholder; none is a credential.
        for name, info in loaded.cls.options_model.model_fields.items():
            if info.is_required() and name not in kwargs:
                kwargs[name] = _PROBE_TEXT
    environment = TrialEnvironmentConfig(type=EnvironmentType(provider), kwargs=kwargs,
                                         cpu_enforcement_policy=cpu_mode, memory_enforcement_policy=memory_mode)
    probe_cls = _probe_class(provider, egress_sidecar)
    with tempfile.TemporaryDirectory(prefix="orharbor-trial-") as tmp, _offline(loaded.stubbed):
        paths = TrialPaths(trial_dir=Path(tmp) / "trial")
        trial = _TrialStandIn(task, environment, paths)

        # Job preflight (harbor/job.py): resource policies against resource_capabilities().
        with mock.patch.object(_factory, "_load_environment_class", lambda _type: probe_cls):
            try:
                EnvironmentFactory.validate_resource_policies(environment)
            except ValueError as exc:
                result.refusals.append(Refusal("job preflight", "resources", str(exc)))

        # Trial._init_agent_environment.
        plan = trial._network_plan(None, dynamic_network_policy=True)
        result.plan = plan
        shared = plan.verifier_env_baseline is None
        phases = [plan.agent_phase, plan.verifier_phase] if shared else [plan.agent_phase]
        built = _construct(
            probe_cls, environment, environment_dir=task.paths.environment_dir,
            environment_name=task.short_name, session_id=f"{_PROBE_TEXT}__env", trial_paths=paths,
            task_env_config=task.config.environment.model_copy(deep=True), logger=_LOG,
            mounts=environment.mounts, network_policy=plan.agent_env_baseline, phase_network_policies=phases)
        result.capabilities["agent environment"] = _capabilities(built.env)
        result.stub_uses |= built.stub_uses
        result.refusals += _refusals_of(built, "agent environment", [plan.agent_env_baseline, *phases])
        if built.env is not None and built.error is None:
            # Trial.__init__ -> _validate_network_policy_modes, with the agent environment's capabilities.
            trial.agent_environment = built.env
            try:
                trial._validate_network_policy_modes()
            except ValueError as exc:
                result.refusals.append(Refusal("trial network plan", _code(exc, None), str(exc)))

        # Trial._run_separate_verifier -> _separate_verifier_env.
        if not shared:
            definition = resolve_verifier_environment_definition(task.config, task.paths)
            # The agent environment's static check was made above; the verifier fields of the
            # plan do not depend on it.
            vplan = trial._network_plan(None, env_config=definition.config, dynamic_network_policy=True)
            result.verifier_plan = vplan
            vbuilt = _construct(
                probe_cls, environment.model_copy(update={"extra_docker_compose": []}), stream=False,
                environment_dir=definition.directory, enable_environment_dir_upload=not definition.bundled_tests,
                environment_name=task.short_name, session_id=f"{_PROBE_TEXT}__verifier__final",
                trial_paths=paths, task_env_config=definition.config, logger=_LOG,
                auto_mounts=trial._verifier_env_mounts(definition.config),
                network_policy=vplan.verifier_env_baseline, phase_network_policies=[vplan.verifier_phase])
            result.capabilities["separate verifier environment"] = _capabilities(vbuilt.env)
            result.stub_uses |= vbuilt.stub_uses
            result.refusals += _refusals_of(vbuilt, "separate verifier environment",
                                            [vplan.verifier_env_baseline, vplan.verifier_phase])
            if vbuilt.env is not None and vbuilt.error is None:
                try:
                    trial._validate_separate_verifier_env_policies(vbuilt.env, plan=vplan)
                except ValueError as exc:
                    result.refusals.append(Refusal("separate verifier environment", _code(exc, None), str(exc)))
    # One Harbor error met at several stages (a resource mode: job preflight, then each container) once.
    seen: set[tuple[str, str]] = set()
    result.refusals = [r for r in result.refusals
                       if (r.code, r.message) not in seen and not seen.add((r.code, r.message))]
    return result


# --------------------------------------------------------------------------- reasons


def _policy_text(policy: NetworkPolicy | None) -> str:
    if policy is None:
        return "-"
    if policy.network_mode == NetworkMode.ALLOWLIST:
        return f"allowlist ({', '.join(policy.allowed_hosts)})"
    return policy.network_mode.value


def condition_label(provider: str, egress_sidecar: bool | None) -> str:
    if egress_sidecar is None:
        return provider
    return f"{provider} ({'egress sidecar available' if egress_sidecar else 'no sidecar'})"


def _describe(refusal: Refusal, evaluation: Evaluation, task: Task) -> str:
    p = condition_label(evaluation.provider, evaluation.egress_sidecar)
    plan, vplan = evaluation.plan, evaluation.verifier_plan
    harbor = f'Harbor: "{_first_line(refusal.message)}"'
    stage, code = refusal.stage, refusal.code
    if stage == "separate verifier environment" and vplan is not None:
        start, phase = vplan.verifier_env_baseline, vplan.verifier_phase
        origin = ("[verifier.environment]" if task.config.verifier.environment is not None
                  else "a copy of [environment], since the task has no [verifier.environment]")
        later = "; Harbor raises this only when it creates the verifier container, after the agent has run"
        if code == "no-network":
            return (f"the separate verifier container must start offline (no-network) but {p} cannot disable "
                    f"networking{later} ({harbor})")
        if code == "switch":
            return (f"the separate verifier container starts with {_policy_text(start)} networking ({origin}) and "
                    f"must switch to {_policy_text(phase)} after start, but {p} cannot change network policy "
                    f"after start{later} ({harbor})")
        if code == "allowlist":
            return f"the separate verifier container needs an allowlist {p} cannot enforce{later} ({harbor})"
        if code == "definition":
            return f"{p} rejects the verifier container's definition (tests/){later} ({harbor})"
    if stage in ("agent environment", "trial network plan") and plan is not None:
        setup, agent, verifier = plan.agent_env_baseline, plan.agent_phase, plan.verifier_phase
        shared = plan.verifier_env_baseline is None
        if code == "switch":
            changes = []
            if agent != setup:
                changes.append(f"to {_policy_text(agent)} for the agent phase")
            if shared and verifier != agent:
                changes.append(f"to {_policy_text(verifier)} for the verifier, which shares the container in "
                               "shared mode")
            return (f"the agent container starts with {_policy_text(setup)} networking for agent setup and must "
                    f"then switch {' and '.join(changes) or 'its network policy'}, but {p} cannot change network "
                    f"policy after start ({harbor})")
        if code == "allowlist":
            return f"the agent phase is limited to {_policy_text(agent)}, which {p} cannot enforce ({harbor})"
        if code == "no-network":
            return f"a phase of the agent container must run offline but {p} cannot disable networking ({harbor})"
        if code == "definition":
            return f"{p} rejects the agent container's definition (environment/) ({harbor})"
    if code == "resources":
        return f"{p} cannot enforce the requested resource mode ({harbor})"
    if code == "unevaluated":
        return f"{p} could not be evaluated offline from Harbor's code ({harbor})"
    if code == "provider":
        return f"{p}'s constructor refuses the task or its options ({harbor})"
    return f"{p} refuses the task in the {stage} ({harbor})"


# --------------------------------------------------------------------------- public API


def _conditions(provider: str, egress_sidecar: bool | None) -> list[bool | None]:
    if not has_egress_sidecar_condition(provider):
        return [None]
    return [egress_sidecar] if egress_sidecar is not None else [True, False]


def evaluate(provider: str, task: Any, *, egress_sidecar: bool | None = None,
             options: Mapping[str, Any] | None = None, cpu_enforcement_policy: ResourceMode | str = "auto",
             memory_enforcement_policy: ResourceMode | str = "auto") -> list[Evaluation]:
    """Harbor's verdict on ``task`` for ``provider``, one :class:`Evaluation` per runtime condition.

    ``task`` is a task directory, a task.toml path or text, a mapping or a ``TaskConfig``.
    ``options`` are provider kwargs (``harbor run --ek``). For Docker and Podman,
    ``egress_sidecar`` picks one outcome of Harbor's egress-control kernel probe; by default
    both are evaluated.
    """
    name = resolve_provider(provider)
    with _open_task(task) as opened:
        out = []
        for condition in _conditions(name, egress_sidecar):
            evaluation = _evaluate(name, opened, condition, options or {}, ResourceMode(cpu_enforcement_policy),
                                   ResourceMode(memory_enforcement_policy))
            evaluation.refusals = [Refusal(r.stage, r.code, r.message, _describe(r, evaluation, opened))
                                   for r in evaluation.refusals]
            out.append(evaluation)
        return out


def _alternatives(choice: ExportChoice) -> list[ExportChoice]:
    """The other export variants, closest first: flip the verifier mode, open the agent network, both."""
    out: list[ExportChoice] = []
    for verifier_mode, agent_network in ((_other(choice.verifier_mode), choice.agent_network),
                                         (choice.verifier_mode, "public"),
                                         (_other(choice.verifier_mode), "public")):
        hosts = choice.allowed_hosts if agent_network == "allowlist" else ()
        alt = ExportChoice(verifier_mode, agent_network, hosts, choice.cpus, choice.memory_mb)
        if (verifier_mode, agent_network) != (choice.verifier_mode, choice.agent_network) and alt not in out:
            out.append(alt)
    return out


def _change(choice: ExportChoice, alt: ExportChoice) -> str:
    flags = [f"--verifier-mode {alt.verifier_mode}"] if alt.verifier_mode != choice.verifier_mode else []
    if alt.agent_network != choice.agent_network:
        flags.append(f"--agent-network {alt.agent_network}")
    return " ".join(flags)


def _suggestions(provider: str, evaluation: Evaluation, task: Task, options: Mapping[str, Any],
                 modes: tuple[ResourceMode, ResourceMode]) -> dict[tuple[str, str], str]:
    """For each refusal, the export option that avoids it, found by asking Harbor again with it."""
    label = condition_label(provider, evaluation.egress_sidecar)
    choice = export_choice_of(task.config)
    results: list[tuple[ExportChoice, Evaluation]] = []
    if choice is not None:
        for alt in _alternatives(choice):
            with tempfile.TemporaryDirectory(prefix="orharbor-alt-") as tmp:
                alt_task = Task(_export_or_skeleton(alt, Path(tmp)))
                results.append((alt, _evaluate(provider, alt_task, evaluation.egress_sidecar, options, *modes)))
    sidecar_fixes = (evaluation.egress_sidecar is False
                     and _evaluate(provider, task, True, options, *modes).accepted)
    out = {}
    for refusal in evaluation.refusals:
        accepted = [alt for alt, result in results if result.accepted]
        avoiding = [(alt, result) for alt, result in results if refusal.code not in result.codes()]
        if accepted:
            hint = f"export with {_change(choice, accepted[0])}"
        elif avoiding:
            alt, result = avoiding[0]
            hint = (f"export with {_change(choice, alt)} to avoid this, though {label} refuses that export "
                    f"too ({', '.join(result.codes())})")
        elif refusal.code == "resources":
            hint = ("no orharbor export option avoids this; run harbor without that CPU/memory enforcement "
                    "policy (the default is auto)")
        elif refusal.code == "definition":
            hint = ("no orharbor export option avoids this: orharbor tasks build from environment/Dockerfile "
                    "(and tests/Dockerfile) and set no prebuilt docker_image; Harbor's message names what the "
                    "provider needs")
        else:
            hint = "no orharbor export option avoids this"
        if sidecar_fixes:
            hint += (", or run where Harbor's Docker egress-control sidecar works (its kernel-probe container "
                     "must run and the sidecar image must build)")
        out[refusal.key()] = hint
    return out


def _other(verifier_mode: str) -> str:
    return "shared" if verifier_mode == "separate" else "separate"


def _export_or_skeleton(choice: ExportChoice, out: Path) -> Path:
    """A real exported task for ``choice``; a skeleton from the exporter's task.toml if export fails."""
    try:
        return export_task(out, choice.verifier_mode, choice.agent_network, choice.allowed_hosts,
                           choice.cpus, choice.memory_mb)
    except Exception:  # noqa: BLE001 - the exporter is not what is being tested here
        config = build_task_config(choice.verifier_mode, choice.agent_network, choice.allowed_hosts,
                                   choice.cpus, choice.memory_mb)
        return _write_skeleton(config, out / "orharbor-probe-task")


def _explained(name: str, task: Task, egress_sidecar: bool | None, options: Mapping[str, Any],
               modes: tuple[ResourceMode, ResourceMode], suggest: bool) -> list[tuple[Evaluation, list[str]]]:
    out = []
    for evaluation in evaluate(name, task, egress_sidecar=egress_sidecar, options=options,
                               cpu_enforcement_policy=modes[0], memory_enforcement_policy=modes[1]):
        reasons = [r.text for r in evaluation.refusals]
        if reasons and suggest:
            hints = _suggestions(name, evaluation, task, options, modes)
            reasons = [f"{r.text}; {hints[r.key()]}" for r in evaluation.refusals]
        out.append((evaluation, reasons))
    return out


def check_export(provider: str, task_config: Any, *, egress_sidecar: bool | None = None,
                 options: Mapping[str, Any] | None = None, cpu_enforcement_policy: ResourceMode | str = "auto",
                 memory_enforcement_policy: ResourceMode | str = "auto", suggest: bool = True) -> list[str]:
    """Why ``provider`` refuses this export, one human-readable reason each; empty if it accepts it.

    ``task_config`` is a ``TaskConfig`` (e.g. from :func:`build_task_config`), a mapping, task.toml
    text or path, or an exported task directory. Each reason ends with the export option that
    would work, found by asking Harbor again with that option. For Docker and Podman both
    outcomes of the egress-sidecar probe are checked unless ``egress_sidecar`` is given; a reason
    that holds under one outcome only is prefixed with it.
    """
    name = resolve_provider(provider)
    modes = (ResourceMode(cpu_enforcement_policy), ResourceMode(memory_enforcement_policy))
    with _open_task(task_config) as task:
        per_condition = _explained(name, task, egress_sidecar, options or {}, modes, suggest)
    if len(per_condition) > 1 and len({tuple(r) for _, r in per_condition}) > 1:
        return [f"{condition_label(name, e.egress_sidecar)}: {reason}" for e, reasons in per_condition
                for reason in reasons]
    return per_condition[0][1]


def _capability_summary(capabilities) -> str:
    if capabilities is None:
        return "not computed"
    hosts = [kind for kind in ("hostnames", "wildcard_hostnames", "ipv4_addresses", "ipv6_addresses",
                               "ipv4_cidrs", "ipv6_cidrs")
             if getattr(capabilities, f"network_allowlist_{kind}")]
    allowlist = f"yes ({', '.join(hosts)})" if capabilities.network_allowlist else "no"
    return (f"disable_internet={'yes' if capabilities.disable_internet else 'no'}, network_allowlist={allowlist}, "
            f"dynamic_network_policy={'yes' if capabilities.dynamic_network_policy else 'no'}")


def provider_report(provider: str, task: Any = None, *,
                    allowed_hosts: tuple[str, ...] | list[str] = DEFAULT_ALLOWED_HOSTS, cpus: int = 2,
                    memory_mb: int = 4096, egress_sidecar: bool | None = None,
                    options: Mapping[str, Any] | None = None, cpu_enforcement_policy: ResourceMode | str = "auto",
                    memory_enforcement_policy: ResourceMode | str = "auto") -> str:
    """Everything Harbor decided for one provider: per export variant (or for ``task``), per runtime
    condition, the capabilities it computed, and each refusal with the option that would work."""
    name = resolve_provider(provider)
    modes = (ResourceMode(cpu_enforcement_policy), ResourceMode(memory_enforcement_policy))
    lines = [f"{name}: Harbor {_harbor_version()} environment type {name!r}"]
    note = evaluation_note(name)
    if note:
        lines.append(f"evaluated with: {note}")
    uses: set[str] = set()
    with contextlib.ExitStack() as stack:
        if task is not None:
            opened = stack.enter_context(_open_task(task))
            label = str(task) if isinstance(task, os.PathLike) or (isinstance(task, str) and "\n" not in task) \
                else "task"
            targets = [(label, "", opened)]
        else:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="orharbor-providers-")))
            descriptions = variant_descriptions(allowed_hosts)
            targets = []
            for verifier_mode, agent_network in VARIANTS:
                choice = ExportChoice(verifier_mode, agent_network,
                                      tuple(allowed_hosts) if agent_network == "allowlist" else (), cpus, memory_mb)
                (tmp / choice.label).mkdir()
                targets.append((choice.label, descriptions[choice.label],
                                Task(_export_or_skeleton(choice, tmp / choice.label))))
        for label, description, opened in targets:
            lines += ["", f"{label}" + (f"  ({description})" if description else "")]
            for evaluation, reasons in _explained(name, opened, egress_sidecar, options or {}, modes, True):
                who = condition_label(name, evaluation.egress_sidecar)
                lines.append(f"  {who}: {'yes' if evaluation.accepted else 'no'}")
                for stage, capabilities in evaluation.capabilities.items():
                    lines.append(f"    {stage} capabilities: {_capability_summary(capabilities)}")
                lines += [f"    - {reason}" for reason in reasons]
                uses |= evaluation.stub_uses
    if uses:
        lines += ["", "note: " + _stub_use_note(uses)]
    return "\n".join(lines) + "\n"


def _cell(evaluation: Evaluation) -> str:
    return "yes" if evaluation.accepted else "no: " + ", ".join(evaluation.codes())


def _stub_use_note(stub_uses: set[str] | frozenset[str]) -> str:
    shown = sorted(stub_uses)
    return ("its Harbor code touched stubbed " + ", ".join(shown[:4]) + (" ..." if len(shown) > 4 else "")
            + " while probed (inert stand-ins: empty, falsy)")


def evaluation_note(provider: str, stub_uses: set[str] | frozenset[str] = frozenset()) -> str:
    """How the provider's Harbor code was run here (stubbed SDK packages, placeholder options).

    ``stub_uses``: stubbed SDK objects an evaluation saw the provider's constructor use before
    Harbor's checks (see :attr:`Evaluation.stub_uses`).
    """
    name = resolve_provider(provider)
    loaded = _provider(name)
    if loaded.cls is None:
        return f"not evaluated: the Harbor module could not be imported ({loaded.load_error})"
    notes = []
    if loaded.stubbed:
        notes.append("SDK not installed, stubbed: " + ", ".join(loaded.stubbed))
    if loaded.cls.options_model is not None:
        required = [n for n, f in loaded.cls.options_model.model_fields.items() if f.is_required()]
        if required:
            notes.append("placeholder options: " + ", ".join(f"{n}={_PROBE_TEXT}" for n in required))
    if stub_uses:
        notes.append(_stub_use_note(stub_uses))
    if has_egress_sidecar_condition(name):
        notes.append("egress-sidecar kernel probe fixed to each outcome")
    return "; ".join(notes)


def compatibility_table(allowed_hosts: tuple[str, ...] | list[str] = DEFAULT_ALLOWED_HOSTS, cpus: int = 2,
                        memory_mb: int = 4096, providers: list[str] | None = None,
                        cpu_enforcement_policy: ResourceMode | str = "auto",
                        memory_enforcement_policy: ResourceMode | str = "auto") -> list[dict]:
    """One row per provider (and egress-sidecar condition) with a cell per export variant.

    A cell is ``"yes"`` or ``"no: "`` and the codes of :data:`CODES`. Each row also has
    ``provider`` (the row label), ``harbor_name`` and ``note`` (how it was evaluated).
    Conditions that give the same answers everywhere are merged into one row.
    """
    names = [resolve_provider(p) for p in providers] if providers else provider_names()
    modes = (ResourceMode(cpu_enforcement_policy), ResourceMode(memory_enforcement_policy))
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="orharbor-providers-") as tmp:
        tasks = {}
        for verifier_mode, agent_network in VARIANTS:
            choice = ExportChoice(verifier_mode, agent_network,
                                  tuple(allowed_hosts) if agent_network == "allowlist" else (), cpus, memory_mb)
            folder = Path(tmp) / choice.label
            folder.mkdir()
            tasks[choice.label] = Task(_export_or_skeleton(choice, folder))
        for name in names:
            by_condition: dict[bool | None, dict[str, str]] = {}
            uses: set[str] = set()
            for condition in _conditions(name, None):
                by_condition[condition] = {}
                for label, task in tasks.items():
                    evaluation = _evaluate(name, task, condition, {}, *modes)
                    by_condition[condition][label] = _cell(evaluation)
                    uses |= evaluation.stub_uses
            cells = list(by_condition.values())
            if all(c == cells[0] for c in cells):
                by_condition = {None: cells[0]}
            for condition, row_cells in by_condition.items():
                rows.append({"provider": condition_label(name, condition), "harbor_name": name,
                             "egress_sidecar": condition, **row_cells, "note": evaluation_note(name, uses)})
    return rows


def variant_descriptions(allowed_hosts: tuple[str, ...] | list[str] = DEFAULT_ALLOWED_HOSTS) -> dict[str, str]:
    """For each table column: the network settings of the task.toml the exporter writes."""
    out = {}
    for verifier_mode, agent_network in VARIANTS:
        hosts = tuple(allowed_hosts) if agent_network == "allowlist" else ()
        config = build_task_config(verifier_mode, agent_network, hosts)
        parts = [f"[environment] network_mode={config.environment.network_mode.value}"]
        agent = config.agent.explicit_phase_policy()
        if agent is not None:
            parts.append(f"[agent] network_mode={_policy_text(agent)}")
        parts.append(f"[verifier] environment_mode={resolve_task_verifier_mode(config).value}")
        if config.verifier.network_mode is not None:
            parts.append(f"[verifier] network_mode={config.verifier.network_mode.value}")
        if config.verifier.environment is not None:
            parts.append(f"[verifier.environment] network_mode={config.verifier.environment.network_mode.value}")
        out[f"{verifier_mode}+{agent_network}"] = "; ".join(parts)
    return out


def _columns() -> list[str]:
    return [f"{v}+{a}" for v, a in VARIANTS]


def format_markdown(table: list[dict], *, legend: bool = True) -> str:
    """The table as GitHub markdown, with the codes and how each provider was evaluated below it."""
    columns = _columns()
    lines = ["| provider | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for row in table:
        lines.append(f"| {row['provider']} | " + " | ".join(row[c] for c in columns) + " |")
    if not legend:
        return "\n".join(lines) + "\n"
    lines += ["", f"Computed from Harbor {_harbor_version()}'s own code by `orharbor providers`.", ""]
    try:
        descriptions = variant_descriptions()
        lines += ["Columns (the exporter's task.toml; allowlist columns use "
                  f"`--allowed-hosts {' '.join(DEFAULT_ALLOWED_HOSTS)}`):", ""]
        lines += [f"- `{label}`: {text}" for label, text in descriptions.items()]
        lines.append("")
    except Exception:  # noqa: BLE001 - the legend is a courtesy
        pass
    used = {code for row in table for c in columns for code in row[c].removeprefix("no: ").split(", ")
            if row[c] != "yes"}
    if used:
        lines += ["Codes:", ""] + [f"- `{code}`: {CODES[code]}" for code in CODES if code in used] + [""]
    notes = [(row["provider"], row["note"]) for row in table if row.get("note")]
    if notes:
        lines += ["How each provider was evaluated, where more than its Harbor code as installed was needed:", ""]
        lines += [f"- {provider}: {note}" for provider, note in notes]
    return "\n".join(lines).rstrip() + "\n"


def format_plain(table: list[dict]) -> str:
    """The table as fixed-width text."""
    columns = _columns()
    header = ["provider", *columns]
    body = [[row["provider"], *(row[c] for c in columns)] for row in table]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    rule = "  ".join("-" * w for w in widths)
    render = lambda r: "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([render(header), rule, *(render(r) for r in body)]) + "\n"


def _harbor_version() -> str:
    try:
        from importlib.metadata import version

        return version("harbor")
    except Exception:  # noqa: BLE001
        return "(unknown version)"
