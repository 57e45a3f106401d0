"""Why a provider refuses an export, each reason ending with the export option that would work.

The option is found by asking Harbor again (:mod:`orharbor.providers.evaluation`) with the
other export variants, closest first: the other verifier mode, a public agent network, both.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Mapping

from harbor.models.task.task import Task
from harbor.models.trial.config import ResourceMode

from orharbor.providers.evaluation import Evaluation, evaluate, evaluate_condition
from orharbor.providers.registry import condition_label, resolve_provider
from orharbor.providers.tasks import ExportChoice, export_choice_of, export_or_skeleton, open_task


def _alternatives(choice: ExportChoice) -> list[ExportChoice]:
    """The other export variants, closest first: flip the verifier mode, open the agent network, both."""
    out: list[ExportChoice] = []
    for verifier_mode, agent_network in (
        (_other(choice.verifier_mode), choice.agent_network),
        (choice.verifier_mode, "public"),
        (_other(choice.verifier_mode), "public"),
    ):
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


def _suggestions(
    provider: str,
    evaluation: Evaluation,
    task: Task,
    options: Mapping[str, Any],
    modes: tuple[ResourceMode, ResourceMode],
) -> dict[tuple[str, str], str]:
    """For each refusal, the export option that avoids it, found by asking Harbor again with it."""
    label = condition_label(provider, evaluation.egress_sidecar)
    choice = export_choice_of(task.config)
    results: list[tuple[ExportChoice, Evaluation]] = []
    if choice is not None:
        for alt in _alternatives(choice):
            with tempfile.TemporaryDirectory(prefix="orharbor-alt-") as tmp:
                alt_task = Task(export_or_skeleton(alt, Path(tmp)))
                results.append(
                    (alt, evaluate_condition(provider, alt_task, evaluation.egress_sidecar, options, *modes))
                )
    sidecar_fixes = (
        evaluation.egress_sidecar is False and evaluate_condition(provider, task, True, options, *modes).accepted
    )
    out = {}
    for refusal in evaluation.refusals:
        accepted = [alt for alt, result in results if result.accepted]
        avoiding = [(alt, result) for alt, result in results if refusal.code not in result.codes()]
        if accepted:
            assert choice is not None  # every alternative is one of choice's
            hint = f"export with {_change(choice, accepted[0])}"
        elif avoiding:
            alt, result = avoiding[0]
            assert choice is not None  # every alternative is one of choice's
            hint = (
                f"export with {_change(choice, alt)} to avoid this, though {label} refuses that export "
                f"too ({', '.join(result.codes())})"
            )
        elif refusal.code == "resources":
            hint = (
                "no orharbor export option avoids this; run harbor without that CPU/memory enforcement "
                "policy (the default is auto)"
            )
        elif refusal.code == "definition":
            hint = (
                "no orharbor export option avoids this: orharbor tasks build from environment/Dockerfile "
                "(and tests/Dockerfile) and set no prebuilt docker_image; Harbor's message names what the "
                "provider needs"
            )
        else:
            hint = "no orharbor export option avoids this"
        if sidecar_fixes:
            hint += (
                ", or run where Harbor's Docker egress-control sidecar works (its kernel-probe container "
                "must run and the sidecar image must build)"
            )
        out[refusal.key()] = hint
    return out


def _other(verifier_mode: str) -> str:
    return "shared" if verifier_mode == "separate" else "separate"


def explained(
    name: str,
    task: Task,
    egress_sidecar: bool | None,
    options: Mapping[str, Any],
    modes: tuple[ResourceMode, ResourceMode],
    suggest: bool,
) -> list[tuple[Evaluation, list[str]]]:
    """Each condition's evaluation and its reasons, each ending with the option that avoids it if ``suggest``."""
    out = []
    for evaluation in evaluate(
        name,
        task,
        egress_sidecar=egress_sidecar,
        options=options,
        cpu_enforcement_policy=modes[0],
        memory_enforcement_policy=modes[1],
    ):
        reasons = [r.text for r in evaluation.refusals]
        if reasons and suggest:
            hints = _suggestions(name, evaluation, task, options, modes)
            reasons = [f"{r.text}; {hints[r.key()]}" for r in evaluation.refusals]
        out.append((evaluation, reasons))
    return out


def check_export(
    provider: str,
    task_config: Any,
    *,
    egress_sidecar: bool | None = None,
    options: Mapping[str, Any] | None = None,
    cpu_enforcement_policy: ResourceMode | str = "auto",
    memory_enforcement_policy: ResourceMode | str = "auto",
    suggest: bool = True,
) -> list[str]:
    """Why ``provider`` refuses this export, one human-readable reason each; empty if it accepts it.

    ``task_config`` is a ``TaskConfig`` (e.g. from :func:`build_task_config`), a mapping, task.toml
    text or path, or an exported task directory. Each reason ends with the export option that
    would work, found by asking Harbor again with that option. For Docker and Podman both
    outcomes of the egress-sidecar probe are checked unless ``egress_sidecar`` is given; a reason
    that holds under one outcome only is prefixed with it.
    """
    name = resolve_provider(provider)
    modes = (ResourceMode(cpu_enforcement_policy), ResourceMode(memory_enforcement_policy))
    with open_task(task_config) as task:
        per_condition = explained(name, task, egress_sidecar, options or {}, modes, suggest)
    if len(per_condition) > 1 and len({tuple(r) for _, r in per_condition}) > 1:
        return [
            f"{condition_label(name, e.egress_sidecar)}: {reason}" for e, reasons in per_condition for reason in reasons
        ]
    return per_condition[0][1]
