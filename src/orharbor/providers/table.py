"""The compatibility table (a row per provider and runtime condition, a cell per export variant), the
one-provider report, and their markdown and plain-text forms."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

from harbor.models.trial.config import ResourceMode

from orharbor.providers import DEFAULT_ALLOWED_HOSTS, VARIANTS
from orharbor.providers.evaluation import Evaluation, evaluate_condition
from orharbor.providers.probe import PROBE_TEXT
from orharbor.providers.registry import (
    condition_label,
    conditions,
    harbor_version,
    has_egress_sidecar_condition,
    load_provider,
    provider_names,
    resolve_provider,
)
from orharbor.providers.suggest import explained
from orharbor.providers.tasks import open_task, variant_descriptions, variant_tasks

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


def _capability_summary(capabilities) -> str:
    if capabilities is None:
        return "not computed"
    hosts = [
        kind
        for kind in ("hostnames", "wildcard_hostnames", "ipv4_addresses", "ipv6_addresses", "ipv4_cidrs", "ipv6_cidrs")
        if getattr(capabilities, f"network_allowlist_{kind}")
    ]
    allowlist = f"yes ({', '.join(hosts)})" if capabilities.network_allowlist else "no"
    return (
        f"disable_internet={'yes' if capabilities.disable_internet else 'no'}, network_allowlist={allowlist}, "
        f"dynamic_network_policy={'yes' if capabilities.dynamic_network_policy else 'no'}"
    )


def provider_report(
    provider: str,
    task: Any = None,
    *,
    allowed_hosts: tuple[str, ...] | list[str] = DEFAULT_ALLOWED_HOSTS,
    cpus: int = 2,
    memory_mb: int = 4096,
    egress_sidecar: bool | None = None,
    options: Mapping[str, Any] | None = None,
    cpu_enforcement_policy: ResourceMode | str = "auto",
    memory_enforcement_policy: ResourceMode | str = "auto",
) -> str:
    """Everything Harbor decided for one provider: per export variant (or for ``task``), per runtime
    condition, the capabilities it computed, and each refusal with the option that would work."""
    name = resolve_provider(provider)
    modes = (ResourceMode(cpu_enforcement_policy), ResourceMode(memory_enforcement_policy))
    lines = [f"{name}: Harbor {harbor_version()} environment type {name!r}"]
    note = evaluation_note(name)
    if note:
        lines.append(f"evaluated with: {note}")
    uses: set[str] = set()
    with contextlib.ExitStack() as stack:
        if task is not None:
            opened = stack.enter_context(open_task(task))
            label = (
                str(task) if isinstance(task, os.PathLike) or (isinstance(task, str) and "\n" not in task) else "task"
            )
            targets = [(label, "", opened)]
        else:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="orharbor-providers-")))
            descriptions = variant_descriptions(allowed_hosts)
            targets = [
                (label, descriptions[label], opened)
                for label, opened in variant_tasks(tmp, allowed_hosts, cpus, memory_mb).items()
            ]
        for label, description, opened in targets:
            lines += ["", f"{label}" + (f"  ({description})" if description else "")]
            for evaluation, reasons in explained(name, opened, egress_sidecar, options or {}, modes, True):
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
    return (
        "its Harbor code touched stubbed "
        + ", ".join(shown[:4])
        + (" ..." if len(shown) > 4 else "")
        + " while probed (inert stand-ins: empty, falsy)"
    )


def evaluation_note(provider: str, stub_uses: set[str] | frozenset[str] = frozenset()) -> str:
    """How the provider's Harbor code was run here (stubbed SDK packages, placeholder options).

    ``stub_uses``: stubbed SDK objects an evaluation saw the provider's constructor use before
    Harbor's checks (see :attr:`Evaluation.stub_uses`).
    """
    name = resolve_provider(provider)
    loaded = load_provider(name)
    if loaded.cls is None:
        return f"not evaluated: the Harbor module could not be imported ({loaded.load_error})"
    notes = []
    if loaded.stubbed:
        notes.append("SDK not installed, stubbed: " + ", ".join(loaded.stubbed))
    if loaded.cls.options_model is not None:
        required = [n for n, f in loaded.cls.options_model.model_fields.items() if f.is_required()]
        if required:
            notes.append("placeholder options: " + ", ".join(f"{n}={PROBE_TEXT}" for n in required))
    if stub_uses:
        notes.append(_stub_use_note(stub_uses))
    if has_egress_sidecar_condition(name):
        notes.append("egress-sidecar kernel probe fixed to each outcome")
    return "; ".join(notes)


def compatibility_table(
    allowed_hosts: tuple[str, ...] | list[str] = DEFAULT_ALLOWED_HOSTS,
    cpus: int = 2,
    memory_mb: int = 4096,
    providers: list[str] | None = None,
    cpu_enforcement_policy: ResourceMode | str = "auto",
    memory_enforcement_policy: ResourceMode | str = "auto",
) -> list[dict]:
    """One row per provider (and egress-sidecar condition) with a cell per export variant.

    A cell is ``"yes"`` or ``"no: "`` and the codes of :data:`CODES`. Each row also has
    ``provider`` (the row label), ``harbor_name`` and ``note`` (how it was evaluated).
    Conditions that give the same answers everywhere are merged into one row.
    """
    names = [resolve_provider(p) for p in providers] if providers else provider_names()
    modes = (ResourceMode(cpu_enforcement_policy), ResourceMode(memory_enforcement_policy))
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="orharbor-providers-") as tmp:
        tasks = variant_tasks(Path(tmp), allowed_hosts, cpus, memory_mb)
        for name in names:
            by_condition: dict[bool | None, dict[str, str]] = {}
            uses: set[str] = set()
            for condition in conditions(name, None):
                by_condition[condition] = {}
                for label, task in tasks.items():
                    evaluation = evaluate_condition(name, task, condition, {}, *modes)
                    by_condition[condition][label] = _cell(evaluation)
                    uses |= evaluation.stub_uses
            cells = list(by_condition.values())
            if all(c == cells[0] for c in cells):
                by_condition = {None: cells[0]}
            for condition, row_cells in by_condition.items():
                rows.append(
                    {
                        "provider": condition_label(name, condition),
                        "harbor_name": name,
                        "egress_sidecar": condition,
                        **row_cells,
                        "note": evaluation_note(name, uses),
                    }
                )
    return rows


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
    lines += ["", f"Computed from Harbor {harbor_version()}'s own code by `orharbor providers`.", ""]
    try:
        descriptions = variant_descriptions()
        lines += [
            "Columns (the exporter's task.toml; allowlist columns use "
            f"`--allowed-hosts {' '.join(DEFAULT_ALLOWED_HOSTS)}`):",
            "",
        ]
        lines += [f"- `{label}`: {text}" for label, text in descriptions.items()]
        lines.append("")
    except Exception:  # noqa: BLE001 - the legend is a courtesy
        pass
    used = {
        code for row in table for c in columns for code in row[c].removeprefix("no: ").split(", ") if row[c] != "yes"
    }
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
