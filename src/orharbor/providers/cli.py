"""``orharbor providers``: which Harbor environment providers accept which export.

A thin click layer over :mod:`orharbor.providers`; register it on the main group with
``main.add_command(providers_cmd)``. Harbor's code is imported only when the command runs.
"""

from __future__ import annotations

from pathlib import Path

import click

from orharbor.errors import UserError
from orharbor.providers import DEFAULT_ALLOWED_HOSTS


def _parse_ek(values: tuple[str, ...]) -> dict[str, str]:
    options = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint="--ek")
        options[key] = val
    return options


@click.command("providers")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["plain", "markdown"]),
    default="plain",
    show_default=True,
    help="Table format.",
)
@click.option(
    "--provider",
    "provider",
    metavar="NAME",
    help="Print every reason for one provider (a Harbor --env name such as docker or daytona).",
)
@click.option(
    "--task",
    "task",
    type=click.Path(exists=True, path_type=Path),
    help="Check this exported task directory (or task.toml) instead of the four export variants.",
)
@click.option(
    "--allowed-hosts",
    multiple=True,
    metavar="HOST",
    help=f"Allowlist of the allowlist variants [default: {' '.join(DEFAULT_ALLOWED_HOSTS)}].",
)
@click.option("--cpus", type=int, default=2, show_default=True, help="[environment] cpus of the checked exports.")
@click.option(
    "--memory-mb", type=int, default=4096, show_default=True, help="[environment] memory_mb of the checked exports."
)
@click.option(
    "--resource-mode",
    type=click.Choice(["auto", "limit", "request", "guarantee", "ignore"]),
    default="auto",
    show_default=True,
    help="harbor run's --cpu/--memory enforcement policy to check the providers against.",
)
@click.option(
    "--egress-sidecar",
    type=click.Choice(["both", "yes", "no"]),
    default="both",
    show_default=True,
    help="With --provider: Docker/Podman egress-control sidecar available, unavailable, or both.",
)
@click.option(
    "--ek", "ek", multiple=True, metavar="KEY=VALUE", help="With --provider: a provider option, as harbor run --ek."
)
def providers_cmd(
    fmt: str,
    provider: str | None,
    task: Path | None,
    allowed_hosts: tuple[str, ...],
    cpus: int,
    memory_mb: int,
    resource_mode: str,
    egress_sidecar: str,
    ek: tuple[str, ...],
) -> None:
    """Which Harbor environment providers accept an orharbor export, computed from Harbor's own code.

    Without --provider: a table with one row per provider (Docker and Podman once with and once
    without Harbor's egress-control sidecar) and a column per export variant:
    --verifier-mode separate|shared with --agent-network public|allowlist. A cell is "yes" or
    "no:" with the reason codes. With --provider NAME: the full reasons and the export option
    that would work.
    """
    from orharbor import providers as prov

    hosts = tuple(allowed_hosts) or DEFAULT_ALLOWED_HOSTS
    if provider is None and (ek or egress_sidecar != "both"):
        raise click.UsageError("--ek and --egress-sidecar apply to one provider: add --provider NAME")
    try:
        if provider is not None:
            name = prov.resolve_provider(provider)
            sidecar = {"both": None, "yes": True, "no": False}[egress_sidecar]
            click.echo(
                prov.provider_report(
                    name,
                    task,
                    allowed_hosts=hosts,
                    cpus=cpus,
                    memory_mb=memory_mb,
                    egress_sidecar=sidecar,
                    options=_parse_ek(ek),
                    cpu_enforcement_policy=resource_mode,
                    memory_enforcement_policy=resource_mode,
                ),
                nl=False,
            )
            return
        if task is not None:
            for name in prov.provider_names():
                for evaluation in prov.evaluate(
                    name, task, cpu_enforcement_policy=resource_mode, memory_enforcement_policy=resource_mode
                ):
                    label = prov.condition_label(name, evaluation.egress_sidecar)
                    cell = "yes" if evaluation.accepted else "no: " + ", ".join(evaluation.codes())
                    click.echo(f"{label:<36} {cell}")
            return
        table = prov.compatibility_table(
            allowed_hosts=hosts,
            cpus=cpus,
            memory_mb=memory_mb,
            cpu_enforcement_policy=resource_mode,
            memory_enforcement_policy=resource_mode,
        )
    except prov.UnknownProvider as exc:
        raise click.BadParameter(str(exc), param_hint="--provider") from None
    except UserError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(prov.format_markdown(table) if fmt == "markdown" else prov.format_plain(table), nl=False)
