"""Prebuilt task images: build (and push) the images an export's task.toml files name.

``orharbor export --image-prefix REGISTRY/NAME`` names each task's agent image
``REGISTRY/NAME:TASK`` (``[environment] docker_image``) and, in separate verifier
mode, its verifier image ``REGISTRY/NAME-verifier:TASK`` (``[verifier.environment]
docker_image``). This module turns those names back into build commands: the agent
image from ``environment/Dockerfile`` (context ``environment/``), the verifier image
from ``tests/Dockerfile`` (context ``tests/``), exactly what Harbor itself would
build. Consumers that build no Dockerfiles (Prime's ``verifiers``) then pull them;
Harbor keeps the Dockerfiles as its fallback (``--force-build``).
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from orharbor.errors import UserError
from orharbor.exporter.task_folder import TaskFolder
from orharbor.image_facts.base_image import probe


class ImagesError(UserError):
    """An export whose images cannot be built or pushed as asked."""


@dataclass(frozen=True)
class ImageBuild:
    """One image of one task: its name and what it is built from."""

    task: str
    role: str  #: "agent" or "verifier"
    image: str
    dockerfile: Path
    context: Path


def plan(export: Path) -> list[ImageBuild]:
    """Every image the task.toml files under ``export`` name, in task order; ImagesError if one names none."""
    tomls = sorted(export.glob("*/task.toml"))
    if not tomls:
        raise ImagesError(f"{export} holds no task folders (*/task.toml)")
    builds = []
    for toml in tomls:
        task = toml.parent
        config = TaskFolder(task).config
        agent = config.get("environment", {}).get("docker_image")
        if not agent:
            raise ImagesError(f"{toml} names no [environment] docker_image: export with --image-prefix REGISTRY/NAME")
        builds.append(ImageBuild(task.name, "agent", agent, task / "environment" / "Dockerfile", task / "environment"))
        verifier = config.get("verifier", {}).get("environment", {}).get("docker_image")
        if config.get("verifier", {}).get("environment_mode") == "separate":
            if not verifier:
                raise ImagesError(
                    f"{toml} is in separate verifier mode but names no [verifier.environment] "
                    "docker_image: export with --image-prefix REGISTRY/NAME"
                )
            builds.append(ImageBuild(task.name, "verifier", verifier, task / "tests" / "Dockerfile", task / "tests"))
    for build in builds:
        if not build.dockerfile.is_file():
            raise ImagesError(f"{build.dockerfile} is missing: the {build.role} image of {build.task} cannot be built")
    return builds


def commands(builds: list[ImageBuild], engine: str = "podman", push: str | None = None) -> list[list[str]]:
    """The engine commands that build every image, then push each to ``push`` (a registry or repository prefix).

    Images are pushed only to where task.toml names them: every image must start
    with ``push + "/"`` (ImagesError otherwise), so a mistyped registry pushes nothing.
    """
    if push is not None:
        prefix = push.rstrip("/") + "/"
        elsewhere = [b.image for b in builds if not b.image.startswith(prefix)]
        if elsewhere:
            raise ImagesError(
                f"--push {push}: {elsewhere[0]} is named for another registry; export with "
                f"--image-prefix {push.rstrip('/')}/NAME"
            )
    run = [[engine, "build", "--tag", b.image, "--file", str(b.dockerfile), str(b.context)] for b in builds]
    if push is not None:
        run += [[engine, "push", b.image] for b in builds]
    return run


def execute(run: list[list[str]], echo: Callable[[str], None] = print) -> None:
    """Run each command in turn, printing it first; ImagesError at the first that fails."""
    for command in run:
        echo("$ " + shlex.join(command))
        try:
            done = subprocess.run(command)
        except FileNotFoundError:
            raise ImagesError(f"{command[0]} is not installed") from None
        if done.returncode != 0:
            raise ImagesError(f"{shlex.join(command)} failed with exit status {done.returncode}")


def base_images(builds: list[ImageBuild]) -> list[str]:
    """The distinct images the builds' Dockerfiles start FROM, in order."""
    found: dict[str, None] = {}
    for build in builds:
        for line in build.dockerfile.read_text().splitlines():
            if line.upper().startswith("FROM "):
                found.setdefault(line.split()[1], None)
                break
    return list(found)


def check_base_images(builds: list[ImageBuild], engine: str, echo: Callable[[str], None] = print) -> None:
    """Run the base image check (:mod:`orharbor.image_facts.base_image`) in every base image before any build:
    ImagesError with its one line for an image that lacks something, or that the engine cannot run."""
    for image in base_images(builds):
        echo(f"checking base image {image}")
        try:
            reason = probe(engine, image)
        except FileNotFoundError:
            raise ImagesError(f"{engine} is not installed") from None
        except (OSError, subprocess.SubprocessError) as exc:
            raise ImagesError(f"{engine} could not run {image}: {exc}") from None
        if reason is not None:
            raise ImagesError(f"{image}: {reason.removeprefix('orharbor: ')}; nothing was built")
