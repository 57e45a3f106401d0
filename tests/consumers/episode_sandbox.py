"""Shared by drive_tinker.py and drive_prime.py: a bubblewrap Harbor environment started from a task's Dockerfile."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

from harbor.models.task.config import NetworkMode, NetworkPolicy
from harbor.models.task.task import Task
from harbor.models.trial.paths import TrialPaths

from orharbor.harbor_env import BubblewrapEnvironment

SCRATCH = Path(tempfile.mkdtemp(prefix="orharbor-episodes-"))


async def start(task_dir: Path, name: str) -> BubblewrapEnvironment:
    """The task's agent environment, running (what the consumer's sandbox would be built from)."""
    paths = TrialPaths(SCRATCH / f"{name}-{uuid.uuid4().hex[:8]}")
    paths.mkdir()
    env = BubblewrapEnvironment(
        environment_dir=task_dir / "environment",
        environment_name=name,
        session_id=f"{name}-{uuid.uuid4().hex[:8]}",
        trial_paths=paths,
        task_env_config=Task(task_dir).config.environment,
        network_policy=NetworkPolicy(network_mode=NetworkMode.PUBLIC),
    )
    await env.start(force_build=False)
    return env


async def start_verifier(task_dir: Path) -> BubblewrapEnvironment:
    """The task's separate verifier environment (tests/Dockerfile, offline), running."""
    paths = TrialPaths(SCRATCH / f"verifier-{uuid.uuid4().hex[:8]}")
    paths.mkdir()
    env = BubblewrapEnvironment(
        environment_dir=task_dir / "tests",
        environment_name="verifier",
        session_id=f"verifier-{uuid.uuid4().hex[:8]}",
        trial_paths=paths,
        task_env_config=Task(task_dir).config.verifier.environment,
        network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK),
    )
    await env.start(force_build=False)
    return env


async def upload_bytes(env: BubblewrapEnvironment, data: bytes, path: str) -> None:
    local = SCRATCH / f"upload-{uuid.uuid4().hex}"
    local.write_bytes(data)
    try:
        await env.upload_file(local, path)
    finally:
        local.unlink()


async def download_bytes(env: BubblewrapEnvironment, path: str) -> bytes:
    local = SCRATCH / f"download-{uuid.uuid4().hex}"
    await env.download_file(path, local)
    try:
        return local.read_bytes()
    finally:
        local.unlink()


def answer(task_dir: Path, policy: str) -> tuple[str, Path | None]:
    """(deliverable path in /app, the file the scripted POLICY hands in): oracle, naive, or nop (none)."""
    solution = task_dir / "solution"
    name = "solve.py" if (solution / "solve.py").exists() else "solution.json"
    files = {"oracle": solution / name, "naive": solution / "naive" / name, "nop": None}
    if policy not in files:
        raise SystemExit(f"unknown policy {policy!r}")
    return f"/app/{name}", files[policy]
