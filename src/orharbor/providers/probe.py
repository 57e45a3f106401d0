"""Offline probing: a provider's environment built as a Trial builds it, stopped once Harbor's checks have run.

``EnvironmentFactory.create_environment_from_config`` creates the environment with a probe


class in the registry's place (``mock.patch`` of the factory's private
``_load_environment_class``): the provider's class with a class just above
``BaseEnvironment`` in its MRO. The provider's own ``__init__`` runs (it parses its options
and sets the state its ``capabilities`` read) until it calls ``BaseEnvironment.__init__``,
which runs in full, its validation hooks recorded; then the probe carries the environment
out. The rest of the provider's ``__init__`` (SDK clients, credentials) never runs, and
processes and network connections are blocked meanwhile. Docker's egress-control kernel
probe (``_egress_control_kernel_support``, which starts a container) is fixed to one
outcome instead of run.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
import subprocess
import types
import warnings
from dataclasses import dataclass
from typing import Any, Iterator
from unittest import mock

import harbor.environments.factory as _factory
from harbor.environments.base import BaseEnvironment
from harbor.environments.factory import EnvironmentFactory
from harbor.models.task.task import Task
from harbor.models.trial.config import AgentConfig as TrialAgentConfig
from harbor.models.trial.config import EnvironmentConfig as TrialEnvironmentConfig
from harbor.models.trial.config import VerifierConfig as TrialVerifierConfig
from harbor.models.trial.paths import EnvironmentPaths, TrialPaths
from harbor.trial.trial import Trial

from orharbor.providers.registry import load_provider
from orharbor.providers.stubs import STUB_USES, stubs_installed

#: The placeholder of a provider's required options and of the probe's session ids (never a credential).
PROBE_TEXT = "orharbor-probe"
LOG = logging.getLogger("orharbor.providers.probe")
LOG.addHandler(logging.NullHandler())
LOG.propagate = False


class OfflineProbeError(RuntimeError):
    """Raised when provider code tries to start a process or open a connection while probed."""


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
HOOKS = {
    "_validate_extra_docker_compose_support": "platform",
    "_validate_definition": "definition",
    "_validate_resource_mode_support": "resources",
    "_validate_gpu_support": "platform",
    "_validate_tpu_support": "platform",
    "_validate_network_policy_support": "network",
    "_validate_windows_support": "platform",
}


def _hook(name: str):
    """A validation hook that notes its name on the environment when it raises."""

    def wrapper(self, *args, **kwargs):
        try:
            return getattr(super(type(self), self), name)(*args, **kwargs)
        except Exception:
            self.__dict__.setdefault("_orharbor_failed_hook", name)
            raise

    wrapper.__name__ = name
    return wrapper


@functools.cache
def probe_class(name: str, egress_sidecar: bool | None) -> type:
    """The provider's class, stopped at ``BaseEnvironment.__init__``, its validation hooks recorded."""
    cls = load_provider(name).cls
    assert cls is not None  # evaluation probes a provider only once its class loaded
    namespace: dict[str, Any] = {"__module__": __name__, **{hook: _hook(hook) for hook in HOOKS}}
    if egress_sidecar is not None:
        # DockerEnvironment._egress_control_kernel_support runs a probe container; its answer is
        # the runtime condition, so it is fixed here instead of run.
        namespace["_egress_control_kernel_support"] = classmethod(lambda _cls: egress_sidecar)
    return type(f"Probe{cls.__name__}", (cls, _StopAtBaseInit), namespace)


def _blocked(*args, **kwargs):
    raise OfflineProbeError(
        "provider code tried to start a process or open a network connection "
        "before Harbor's checks; orharbor evaluates providers offline"
    )


@contextlib.contextmanager
def offline(roots: tuple[str, ...]) -> Iterator[None]:
    """No process, no connection, no warning, and stand-ins for the SDK packages ``roots``, until it ends."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(warnings.catch_warnings())
        warnings.simplefilter("ignore")
        for target, attribute in (
            (subprocess, "Popen"),
            (os, "system"),
            (socket, "create_connection"),
            (socket, "getaddrinfo"),
            (socket.socket, "connect"),
        ):
            stack.enter_context(mock.patch.object(target, attribute, _blocked))
        stack.enter_context(stubs_installed(roots))
        yield


@dataclass
class Built:
    """What a probe construction left: the environment (if ``BaseEnvironment.__init__`` ran) and its refusal."""

    env: BaseEnvironment | None
    error: BaseException | None
    hook: str | None  # the validation hook that raised, "inline", "constructor" or "unevaluated"
    stub_uses: frozenset[str] = frozenset()


def construct(probe_cls: type, config: TrialEnvironmentConfig, **kwargs) -> Built:
    """``EnvironmentFactory.create_environment_from_config`` with the probe class in the registry's place."""
    STUB_USES.clear()
    with mock.patch.object(_factory, "_load_environment_class", lambda _type: probe_cls):
        try:
            EnvironmentFactory.create_environment_from_config(config=config, **kwargs)
            built = Built(
                None,
                RuntimeError(f"{probe_cls.__name__} was built without calling BaseEnvironment.__init__"),
                "unevaluated",
            )
        except _Reached as reached:
            hook = reached.env.__dict__.get("_orharbor_failed_hook", "inline") if reached.error else None
            built = Built(reached.env, reached.error, hook)
        except OfflineProbeError as exc:
            built = Built(None, exc, "unevaluated")
        except Exception as exc:  # noqa: BLE001 - the provider refused before Harbor's base checks
            built = Built(None, exc, "constructor")
    built.stub_uses = frozenset(STUB_USES)
    STUB_USES.clear()
    return built


class TrialStandIn:
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
            agent=TrialAgentConfig(),
            environment=environment,
            verifier=TrialVerifierConfig(),
            install_only=False,
            is_regrade=False,
        )
        self.logger = LOG
        # A host-side agent: Harbor adds no inference hosts (orharbor's allowlist already holds them).
        self.agent = None
        self.user_agent = None
        self._warned_inference_agents: set[str] = set()
        self.agent_environment: BaseEnvironment | None = None
        self.agent_env_paths = EnvironmentPaths.for_os(task.config.environment.os)
