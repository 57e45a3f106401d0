"""Sandboxes for the isolation tests: the bubblewrap environment started from a small image, as Harbor starts it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from harbor.models.task.config import EnvironmentConfig, NetworkMode, NetworkPolicy
from harbor.models.trial.paths import TrialPaths

from orharbor.harbor_env import BubblewrapEnvironment

#: What the task images hold that these tests need: the agent's user, a solver venv, /app, and procps
#: (ps, pkill), which the agent images install for Harbor's agents and python:3.12-slim lacks.
DOCKERFILE = """FROM python:3.12-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends procps && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/orharbor-solver && /opt/orharbor-solver/bin/pip install numpy
RUN useradd --create-home --shell /bin/bash agent
WORKDIR /app
RUN chown -R agent:agent /app
"""


def environment(
    folder: Path,
    name: str = "t",
    network: NetworkMode = NetworkMode.NO_NETWORK,
    cls: type[BubblewrapEnvironment] = BubblewrapEnvironment,
    config: EnvironmentConfig | None = None,
) -> BubblewrapEnvironment:
    """An environment for :data:`DOCKERFILE` with its own trial folder under ``folder`` (``config``: the task's)."""
    image = folder / f"{name}-image"
    image.mkdir(parents=True)
    (image / "Dockerfile").write_text(DOCKERFILE)
    paths = TrialPaths(folder / f"{name}-trial")
    paths.mkdir()
    return cls(
        environment_dir=image,
        environment_name=name,
        session_id=f"{name}__env",
        trial_paths=paths,
        task_env_config=config or EnvironmentConfig(),
        network_policy=NetworkPolicy(network_mode=network),
    )


@contextlib.asynccontextmanager
async def running(*envs: BubblewrapEnvironment) -> AsyncIterator[tuple[BubblewrapEnvironment, ...]]:
    """Start ``envs`` together and always stop them."""
    try:
        await asyncio.gather(*(env.start(force_build=False) for env in envs))
        yield envs
    finally:
        await asyncio.gather(*(env.stop(delete=True) for env in envs))


def run(coroutine):
    return asyncio.run(coroutine)
