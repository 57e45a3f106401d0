"""Read a task's Dockerfile into the steps that stand in for building its image.

No image is built: the sandbox mirrors the base image from host files. What the
Dockerfile would download (``apt-get``, ``pip install``, ``python3 -m venv``) is
replaced by venvs assembled from the packages installed here, and by the host's
files of the Debian packages ``apt-get install`` names (see :mod:`.debian`); ``useradd`` adds
a user to the sandbox's own ``/etc/passwd``; ``COPY``, ``WORKDIR``, ``ENV``,
``USER`` and every other ``RUN`` command are carried out as Docker would.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

#: The environment of the python slim images the exporter pins.
BASE_ENV = {"PATH": "/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
#: Commands that provision packages from the network; the mirror provides what they would install.
_PROVISIONING = re.compile(r"^(apt-get|apt|pip3?|python3? -m pip)\b|^\S*/bin/pip3? |^rm -rf /var/lib/apt/lists")
_VENV = re.compile(r"^python3? -m venv (\S+)$")
_PIP = re.compile(r"^(?:(\S*)/bin/)?pip3? install (.*)$")
_APT_INSTALL = re.compile(r"^apt(?:-get)? install (.*)$")


class DockerfileError(ValueError):
    """A Dockerfile instruction the sandbox cannot stand in for."""


@dataclass(frozen=True)
class Copy:
    """``COPY source target``: a file or folder of the build context."""

    source: Path
    target: str


@dataclass(frozen=True)
class Run:
    """A shell command run as root at build time, in the current working directory."""

    command: str
    workdir: str


@dataclass
class ImagePlan:
    """Everything the sandbox needs to stand in for one image."""

    steps: list[Copy | Run] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=lambda: dict(BASE_ENV))
    workdir: str = "/"
    user: str | None = None
    users: list[str] = field(default_factory=list)
    #: venv path -> package names installed into it (``python3 -m venv`` + its pip)
    venvs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: packages ``pip install``-ed into the image's own python (``/usr/local``)
    local_packages: tuple[str, ...] = ()
    #: Debian packages ``apt-get install``-ed (the sandbox shows their programs, and the base image's)
    apt_packages: tuple[str, ...] = ()


def read_dockerfile(path: Path) -> ImagePlan:
    """The plan of the Dockerfile at ``path`` (its folder is the build context)."""
    plan = ImagePlan()
    context = path.parent
    for number, instruction, argument in _instructions(path.read_text()):
        where = f"{path}:{number}"
        if instruction in (
            "FROM",
            "LABEL",
            "ARG",
            "EXPOSE",
            "CMD",
            "ENTRYPOINT",
            "SHELL",
            "HEALTHCHECK",
            "STOPSIGNAL",
        ):  # the sandbox's stop is a SIGKILL already
            continue
        if instruction == "ENV":
            plan.env.update(_env_pairs(argument, plan.env, where))
        elif instruction == "WORKDIR":
            plan.workdir = _join(plan.workdir, _expand(argument.strip(), plan.env))
            plan.steps.append(Run(f"mkdir -p {shlex.quote(plan.workdir)}", "/"))
        elif instruction == "USER":
            plan.user = argument.strip()
        elif instruction in ("COPY", "ADD"):
            parts = [p for p in shlex.split(argument) if not p.startswith("--")]
            if len(parts) != 2:
                raise DockerfileError(
                    f"{where}: {instruction} with one source and one target is all "
                    f"the sandbox supports, got {argument!r}"
                )
            source = (context / parts[0]).resolve()
            if not source.is_relative_to(context.resolve()) or not source.exists():
                raise DockerfileError(f"{where}: {parts[0]!r} is not in the build context {context}")
            plan.steps.append(Copy(source, _join(plan.workdir, _expand(parts[1], plan.env))))
        elif instruction == "RUN":
            _plan_run(plan, argument)
        else:
            raise DockerfileError(f"{where}: the sandbox does not support {instruction}")
    return plan


def _plan_run(plan: ImagePlan, argument: str) -> None:
    """Split ``RUN a && b && c``: provisioning is mirrored, users are added, the rest runs."""
    for command in (c.strip() for c in argument.split("&&")):
        if match := _APT_INSTALL.match(command):
            plan.apt_packages += tuple(p for p in shlex.split(match.group(1)) if not p.startswith("-"))
        elif match := _VENV.match(command):
            plan.venvs.setdefault(match.group(1), ())
        elif match := _PIP.match(command):
            packages = tuple(_package_name(p) for p in shlex.split(match.group(2)) if not p.startswith("-"))
            if match.group(1):
                plan.venvs[match.group(1)] = plan.venvs.get(match.group(1), ()) + packages
            else:
                plan.local_packages += packages
        elif command.startswith("useradd "):
            plan.users.append(shlex.split(command)[-1])
        elif not _PROVISIONING.match(command):
            plan.steps.append(Run(command, plan.workdir))


def _package_name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0]


def _instructions(text: str) -> list[tuple[int, str, str]]:
    """(line number, INSTRUCTION, argument) with continuation lines joined and comments dropped."""
    result, buffer, start = [], "", 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not buffer and (not stripped or stripped.startswith("#")):
            continue
        if buffer and stripped.startswith("#"):
            continue
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer += stripped[:-1] + " "
            continue
        buffer += stripped
        instruction, _, argument = buffer.partition(" ")
        result.append((start, instruction.upper(), argument.strip()))
        buffer = ""
    return result


def _env_pairs(argument: str, env: dict[str, str], where: str) -> dict[str, str]:
    parts = shlex.split(argument)
    if parts and "=" not in parts[0]:
        return {parts[0]: _expand(" ".join(parts[1:]), env)}
    pairs: dict[str, str] = {}
    for part in parts:
        if "=" not in part:
            raise DockerfileError(f"{where}: ENV expects KEY=VALUE pairs, got {part!r}")
        key, value = part.split("=", 1)
        pairs[key] = _expand(value, {**env, **pairs})
    return pairs


def _expand(value: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), ""), value)


def _join(base: str, path: str) -> str:
    return path if path.startswith("/") else f"{base.rstrip('/')}/{path}"
