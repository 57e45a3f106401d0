"""Run a Harbor environment of your choice (orharbor's by default) under an RL trainer that names environments by type.

TRL's `trl.experimental.harbor` and OpenEnv's Harbor rollout build Harbor's environment from
one of Harbor's built-in type names (docker, e2b, podman, ...) and take no import path, so
`orharbor.harbor_env:BubblewrapEnvironment`, or any other environment class, cannot be named
to them. `serve_as(NAME)` makes that name create the class in the calling process, inside
Harbor's own environment factory, so the trainer's code runs unchanged: every path that
resolves a type (creation, preflight, capabilities) then reaches the same class, and so
whatever that class says of itself.

Consumers that build a full Harbor `TrialConfig` (SkyRL's Harbor generator) need none of this:
set the trial config's `environment.import_path` to `ENVIRONMENT` instead.
"""

from __future__ import annotations

#: orharbor's own environment, the container-less one, as Harbor's ``module:Class`` import path.
ENVIRONMENT = "orharbor.harbor_env:BubblewrapEnvironment"


def serve_as(type_name: str = "docker", environment: str = ENVIRONMENT) -> None:
    """Make Harbor's built-in environment type `type_name` create the class `environment` (`module:Class`).

    Process-wide and until the process ends. Refuses a name that is not one of Harbor's
    environment types, an `environment` that is not a `module:Class` path, and a Harbor whose
    factory no longer keeps its types in the registry this relies on (Harbor 0.26's
    `_ENVIRONMENT_REGISTRY` of `_EnvEntry`), rather than silently leaving the real provider in
    place.
    """
    from harbor.environments import factory
    from harbor.models.environment_type import EnvironmentType

    try:
        env_type = EnvironmentType(type_name)
    except ValueError:
        known = ", ".join(sorted(t.value for t in EnvironmentType))
        raise ValueError(f"{type_name!r} is not a Harbor environment type (one of: {known})") from None
    module, sep, class_name = environment.partition(":")
    if not (module and sep and class_name):
        raise ValueError(f"{environment!r} is not an environment import path module:Class")
    registry = getattr(factory, "_ENVIRONMENT_REGISTRY", None)
    entry = getattr(factory, "_EnvEntry", None)
    if not isinstance(registry, dict) or entry is None or env_type not in registry:
        raise RuntimeError(
            "this Harbor's environment factory has no type registry to route; "
            "orharbor.consumers.serve_as was written for Harbor 0.26"
        )
    registry[env_type] = entry(module, class_name, None)
