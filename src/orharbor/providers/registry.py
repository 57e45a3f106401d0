"""Harbor's environment providers by name, and each one's class, imported as Harbor's factory would.

The names are Harbor's registry (``harbor/environments/factory.py``); a provider's class is
imported from the module the registry names, with stand-ins for an SDK that is not installed
(:mod:`orharbor.providers.stubs`). Docker and Podman have a runtime condition of their own,
Harbor's egress-control sidecar probe: each outcome is evaluated as its own row.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import warnings
from dataclasses import dataclass

import harbor.environments.factory as _factory
from harbor.environments.base import BaseEnvironment
from harbor.environments.factory import EnvironmentFactory
from harbor.models.environment_type import EnvironmentType

from orharbor.errors import UserError
from orharbor.providers.stubs import import_with_stubs, missing_packages, module_files


class UnknownProvider(UserError):
    """A provider name Harbor does not know."""


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
    raise UnknownProvider(
        f"unknown environment provider {name!r}.{hint} Harbor {harbor_version()} knows: {', '.join(names)}"
    )


@dataclass(frozen=True)
class Provider:
    """A provider's environment class (None when it cannot be imported, with why) and the SDK packages stubbed."""

    name: str
    cls: type[BaseEnvironment] | None
    stubbed: tuple[str, ...] = ()
    load_error: str | None = None


@functools.cache
def load_provider(name: str) -> Provider:
    """The class Harbor's registry names for ``name``, imported with stand-ins for a missing SDK; never raises."""
    entry = _factory._ENVIRONMENT_REGISTRY[EnvironmentType(name)]
    try:
        roots = missing_packages(module_files(entry.module))
        if roots:
            module, roots = import_with_stubs(entry.module, roots)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    module = importlib.import_module(entry.module)
                except ModuleNotFoundError as exc:
                    module, roots = import_with_stubs(entry.module, ((exc.name or "").split(".")[0],))
        cls = getattr(module, entry.class_name)
        if not (isinstance(cls, type) and issubclass(cls, BaseEnvironment)):
            raise TypeError(f"{entry.module}.{entry.class_name} is not a BaseEnvironment")
        return Provider(name, cls, tuple(roots))
    except Exception as exc:  # noqa: BLE001 - reported in the table, never fatal
        return Provider(name, None, (), f"{type(exc).__name__}: {exc}")


def has_egress_sidecar_condition(provider: str) -> bool:
    """Whether the provider's network control depends on Docker's egress-control sidecar probe."""
    cls = load_provider(resolve_provider(provider)).cls
    return cls is not None and hasattr(cls, "_egress_control_kernel_support")


def condition_label(provider: str, egress_sidecar: bool | None) -> str:
    """The row label of a provider under one outcome of the egress-sidecar probe (None: it has none)."""
    if egress_sidecar is None:
        return provider
    return f"{provider} ({'egress sidecar available' if egress_sidecar else 'no sidecar'})"


def conditions(provider: str, egress_sidecar: bool | None) -> list[bool | None]:
    """The egress-sidecar outcomes to evaluate: ``egress_sidecar`` if given, else both; [None] without the probe."""
    if not has_egress_sidecar_condition(provider):
        return [None]
    return [egress_sidecar] if egress_sidecar is not None else [True, False]


def harbor_version() -> str:
    """The installed Harbor's version, for the output."""
    try:
        from importlib.metadata import version

        return version("harbor")
    except Exception:  # noqa: BLE001
        return "(unknown version)"
