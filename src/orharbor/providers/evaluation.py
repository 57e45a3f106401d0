"""Harbor's verdict on one task for one provider, stage by stage as a Trial reaches them.

1. **The network plan.** The task's ``TaskConfig`` goes through ``Trial._network_plan``,
   which calls ``harbor.trial.network_policy.resolve_trial_network_plan``: agent-environment
   baseline (agent setup), agent phase, separate-verifier baseline and verifier phase.
2. **The environments, built as a Trial builds them** (:mod:`orharbor.providers.probe`): the
   agent environment, and in separate mode the verifier environment from
   ``resolve_verifier_environment_definition``, with the ``network_policy`` /
   ``phase_network_policies`` that ``Trial._init_agent_environment`` and
   ``Trial._separate_verifier_env`` pass. ``BaseEnvironment.__init__`` runs in full: static
   phase-policy inference, ``_validate_definition``, resource modes and
   ``validate_network_policy_support``.
3. **Trial's own checks**, ``Trial._validate_network_policy_modes`` and
   ``Trial._validate_separate_verifier_env_policies``, run unchanged on a stand-in trial,
   and the job-level ``EnvironmentFactory.validate_resource_policies``.

Each refusal is Harbor's own exception, with a code (a key of
:data:`orharbor.providers.table.CODES`) and a sentence saying which container and phase it
concerns.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from unittest import mock

import harbor.environments.factory as _factory
from harbor.environments.base import BaseEnvironment
from harbor.environments.factory import EnvironmentFactory
from harbor.models.environment_type import EnvironmentType
from harbor.models.task.config import NetworkPolicy
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import resolve_verifier_environment_definition
from harbor.models.trial.config import EnvironmentConfig as TrialEnvironmentConfig
from harbor.models.trial.config import ResourceMode
from harbor.models.trial.paths import TrialPaths

from orharbor.providers.probe import (
    HOOKS,
    LOG,
    PROBE_TEXT,
    Built,
    OfflineProbeError,
    TrialStandIn,
    construct,
    offline,
    probe_class,
)
from orharbor.providers.registry import condition_label, conditions, load_provider, resolve_provider
from orharbor.providers.tasks import open_task, policy_text


@dataclass(frozen=True)
class Refusal:
    """One reason a provider refuses a task, with the Harbor check and message behind it."""

    stage: str  # "agent environment", "separate verifier environment", "trial network plan", "job preflight"
    code: str  # a key of orharbor.providers.table.CODES
    message: str  # Harbor's own exception text
    text: str = ""  # the human-readable reason

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
    """The table code of a Harbor error, from the hook that raised it or else from its message."""
    message = str(error)
    if isinstance(error, OfflineProbeError) or hook == "unevaluated":
        return "unevaluated"
    if hook == "constructor":
        return "provider"
    if hook in HOOKS and HOOKS[hook] not in ("network",):
        return HOOKS[hook]
    if "network_mode='no-network'" in message:
        return "no-network"
    if "network_mode='allowlist'" in message:
        return "allowlist"
    if "change network policy after start" in message or "Static network policy inference" in message:
        return "switch"
    return "error"


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message


def _refusals_of(built: Built, stage: str, policies: list[NetworkPolicy]) -> list[Refusal]:
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
    for error, failed_hook in extra:
        refusal = Refusal(stage, _code(error, failed_hook), str(error))
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


def evaluate_condition(
    provider: str,
    task: Task,
    egress_sidecar: bool | None,
    options: Mapping[str, Any],
    cpu_mode: ResourceMode,
    memory_mode: ResourceMode,
) -> Evaluation:
    """Harbor's checks, stage by stage, for one provider under one egress-sidecar outcome; refusals without text."""
    loaded = load_provider(provider)
    result = Evaluation(provider, egress_sidecar)
    if loaded.cls is None:
        result.refusals.append(Refusal("import", "unevaluated", loaded.load_error or "import failed"))
        return result
    kwargs = dict(options)
    if loaded.cls.options_model is not None:
        # Required provider options (a region, a resource group) get a placeholder; none is a credential.
        for name, info in loaded.cls.options_model.model_fields.items():
            if info.is_required() and name not in kwargs:
                kwargs[name] = PROBE_TEXT
    environment = TrialEnvironmentConfig(
        type=EnvironmentType(provider),
        kwargs=kwargs,
        cpu_enforcement_policy=cpu_mode,
        memory_enforcement_policy=memory_mode,
    )
    probe_cls = probe_class(provider, egress_sidecar)
    with tempfile.TemporaryDirectory(prefix="orharbor-trial-") as tmp, offline(loaded.stubbed):
        paths = TrialPaths(trial_dir=Path(tmp) / "trial")
        trial = TrialStandIn(task, environment, paths)

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
        built = construct(
            probe_cls,
            environment,
            environment_dir=task.paths.environment_dir,
            environment_name=task.short_name,
            session_id=f"{PROBE_TEXT}__env",
            trial_paths=paths,
            task_env_config=task.config.environment.model_copy(deep=True),
            logger=LOG,
            mounts=environment.mounts,
            network_policy=plan.agent_env_baseline,
            phase_network_policies=phases,
        )
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
            vbuilt = construct(
                probe_cls,
                environment.model_copy(update={"extra_docker_compose": []}),
                stream=False,
                environment_dir=definition.directory,
                enable_environment_dir_upload=not definition.bundled_tests,
                environment_name=task.short_name,
                session_id=f"{PROBE_TEXT}__verifier__final",
                trial_paths=paths,
                task_env_config=definition.config,
                logger=LOG,
                auto_mounts=trial._verifier_env_mounts(definition.config),
                network_policy=vplan.verifier_env_baseline,
                phase_network_policies=[vplan.verifier_phase],
            )
            result.capabilities["separate verifier environment"] = _capabilities(vbuilt.env)
            result.stub_uses |= vbuilt.stub_uses
            result.refusals += _refusals_of(
                vbuilt, "separate verifier environment", [vplan.verifier_env_baseline, vplan.verifier_phase]
            )
            if vbuilt.env is not None and vbuilt.error is None:
                try:
                    trial._validate_separate_verifier_env_policies(vbuilt.env, plan=vplan)
                except ValueError as exc:
                    result.refusals.append(Refusal("separate verifier environment", _code(exc, None), str(exc)))
    # One Harbor error met at several stages (a resource mode: job preflight, then each container) once.
    seen: set[tuple[str, str]] = set()
    kept = []
    for r in result.refusals:
        if (r.code, r.message) not in seen:
            seen.add((r.code, r.message))
            kept.append(r)
    result.refusals = kept
    return result


def _describe(refusal: Refusal, evaluation: Evaluation, task: Task) -> str:
    """The refusal as a sentence: which container, which phase, what the provider cannot do, Harbor's words."""
    p = condition_label(evaluation.provider, evaluation.egress_sidecar)
    plan, vplan = evaluation.plan, evaluation.verifier_plan
    harbor = f'Harbor: "{_first_line(refusal.message)}"'
    stage, code = refusal.stage, refusal.code
    if stage == "separate verifier environment" and vplan is not None:
        start, phase = vplan.verifier_env_baseline, vplan.verifier_phase
        origin = (
            "[verifier.environment]"
            if task.config.verifier.environment is not None
            else "a copy of [environment], since the task has no [verifier.environment]"
        )
        later = "; Harbor raises this only when it creates the verifier container, after the agent has run"
        if code == "no-network":
            return (
                f"the separate verifier container must start offline (no-network) but {p} cannot disable "
                f"networking{later} ({harbor})"
            )
        if code == "switch":
            return (
                f"the separate verifier container starts with {policy_text(start)} networking ({origin}) and "
                f"must switch to {policy_text(phase)} after start, but {p} cannot change network policy "
                f"after start{later} ({harbor})"
            )
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
                changes.append(f"to {policy_text(agent)} for the agent phase")
            if shared and verifier != agent:
                changes.append(
                    f"to {policy_text(verifier)} for the verifier, which shares the container in shared mode"
                )
            return (
                f"the agent container starts with {policy_text(setup)} networking for agent setup and must "
                f"then switch {' and '.join(changes) or 'its network policy'}, but {p} cannot change network "
                f"policy after start ({harbor})"
            )
        if code == "allowlist":
            return f"the agent phase is limited to {policy_text(agent)}, which {p} cannot enforce ({harbor})"
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


def evaluate(
    provider: str,
    task: Any,
    *,
    egress_sidecar: bool | None = None,
    options: Mapping[str, Any] | None = None,
    cpu_enforcement_policy: ResourceMode | str = "auto",
    memory_enforcement_policy: ResourceMode | str = "auto",
) -> list[Evaluation]:
    """Harbor's verdict on ``task`` for ``provider``, one :class:`Evaluation` per runtime condition.

    ``task`` is a task directory, a task.toml path or text, a mapping or a ``TaskConfig``.
    ``options`` are provider kwargs (``harbor run --ek``). For Docker and Podman,
    ``egress_sidecar`` picks one outcome of Harbor's egress-control kernel probe; by default
    both are evaluated.
    """
    name = resolve_provider(provider)
    with open_task(task) as opened:
        out = []
        for condition in conditions(name, egress_sidecar):
            evaluation = evaluate_condition(
                name,
                opened,
                condition,
                options or {},
                ResourceMode(cpu_enforcement_policy),
                ResourceMode(memory_enforcement_policy),
            )
            evaluation.refusals = [
                Refusal(r.stage, r.code, r.message, _describe(r, evaluation, opened)) for r in evaluation.refusals
            ]
            out.append(evaluation)
        return out
