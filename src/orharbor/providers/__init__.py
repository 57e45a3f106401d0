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

The package, one module per job (each imports only the ones above it):

- :mod:`.stubs`: inert stand-ins for a provider's missing SDK packages;
- :mod:`.registry`: Harbor's provider names and each one's class;
- :mod:`.tasks`: the export variants and the Harbor tasks asked about;
- :mod:`.probe`: a provider's environment built offline, stopped once Harbor's checks ran;
- :mod:`.evaluation`: Harbor's verdict, stage by stage, as :class:`~.evaluation.Refusal` s;
- :mod:`.suggest`: each refusal's reason and the export option that would work;
- :mod:`.table`: the compatibility table and the one-provider report, as text;
- :mod:`.cli`: ``orharbor providers``.

Importing this package imports no Harbor code (``orharbor providers`` is registered on the
command line at start-up); the names below load their module when first used.
"""

from __future__ import annotations

import importlib
from typing import Any

#: The four export variants of the table: (``--verifier-mode``, ``--agent-network``).
VARIANTS: tuple[tuple[str, str], ...] = (
    ("separate", "public"),
    ("shared", "public"),
    ("separate", "allowlist"),
    ("shared", "allowlist"),
)
#: The allowlist the table's allowlist columns use (the model API of claude-code).
DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = ("api.anthropic.com",)

#: What this package offers its callers, and the module each name is defined in.
_PUBLIC = {
    "UnknownProvider": "registry",
    "provider_names": "registry",
    "resolve_provider": "registry",
    "has_egress_sidecar_condition": "registry",
    "condition_label": "registry",
    "ExportChoice": "tasks",
    "build_task_config": "tasks",
    "export_task": "tasks",
    "export_choice_of": "tasks",
    "evaluate": "evaluation",
    "check_export": "suggest",
    "compatibility_table": "table",
    "provider_report": "table",
    "format_markdown": "table",
    "format_plain": "table",
}

__all__ = ["VARIANTS", "DEFAULT_ALLOWED_HOSTS", *_PUBLIC]


def __getattr__(name: str) -> Any:
    """A public name, from its module, imported the first time it is asked for."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
