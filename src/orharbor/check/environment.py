"""Which Harbor environment ``orharbor check`` runs its trials on (``--env``).

A Harbor type name (``docker``, ``podman``, ``daytona``, ``modal``...: the names of
Harbor's own environment registry, ``EnvironmentFactory.registered_names()``) or an
import path ``module:Class`` of any ``BaseEnvironment`` subclass. With neither,
``docker`` when a Docker daemon answers ``GET /_ping`` on ``DOCKER_HOST`` (or
``/var/run/docker.sock``), else orharbor's bubblewrap environment, the container-less
stand-in.

Whatever the environment, check learns what it needs and what it can do from the
environment class itself, as Harbor does: its ``preflight`` (what it needs of this
host), an optional ``preflight_tasks(task_dirs)`` classmethod (what the tasks' images
need of this host), and its ``capabilities`` (:func:`environment_capabilities`). A new
provider needs nothing here.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from orharbor.errors import UserError

#: orharbor's container-less environment (:mod:`orharbor.harbor_env`).
BUBBLEWRAP = "orharbor.harbor_env:BubblewrapEnvironment"
#: The socket a local Docker daemon listens on when ``DOCKER_HOST`` is not set.
DEFAULT_DOCKER_SOCKET = "/var/run/docker.sock"


class UnknownEnvironment(UserError):
    """An ``--env`` value that is neither a Harbor environment name nor an importable environment class."""


@dataclass(frozen=True)
class CheckEnvironment:
    """A Harbor environment to run check's trials on.

    Exactly one of ``type`` (a Harbor registry name) and ``import_path``
    (``module:Class``) is set, as in Harbor's ``EnvironmentConfig``.
    """

    type: str | None = None
    import_path: str | None = None
    why: str = "chosen with --env"

    @property
    def name(self) -> str:
        return self.type or self.import_path or "?"

    def config_kwargs(self) -> dict:
        """The fields of Harbor's trial ``EnvironmentConfig`` that select this environment."""
        return {"type": self.type} if self.type else {"import_path": self.import_path}

    def describe(self) -> str:
        """One line for check's header."""
        kind = "Harbor environment" if self.type else "environment class"
        return f"environment: {self.name} ({kind}; {self.why})"


def environment_names() -> list[str]:
    """The environment type names Harbor's factory knows, sorted."""
    from harbor.environments.factory import EnvironmentFactory

    return EnvironmentFactory.registered_names()


def environment_class(env: CheckEnvironment) -> type[Any]:
    """The ``BaseEnvironment`` subclass ``env`` names (a Harbor type imports its SDK here)."""
    from harbor.environments.factory import EnvironmentFactory
    from harbor.models.environment_type import EnvironmentType

    if env.import_path is not None:
        return EnvironmentFactory.get_environment_class(import_path=env.import_path)
    return EnvironmentFactory.get_environment_class(environment_type=EnvironmentType(env.type))


def resolve_environment(value: str | CheckEnvironment | None) -> CheckEnvironment:
    """``--env``'s value as a :class:`CheckEnvironment`; ``None`` picks :func:`default_environment`.

    A name must be one of Harbor's (case and ``_``/``-`` forgiven); an import
    path must name an importable ``BaseEnvironment`` subclass. Anything else is
    an :class:`UnknownEnvironment` that lists the valid names.
    """
    if isinstance(value, CheckEnvironment):
        return value
    if value is None:
        return default_environment()
    text = value.strip()
    if ":" in text:
        env = CheckEnvironment(import_path=text)
        try:
            environment_class(env)
        except Exception as exc:  # ImportError, AttributeError, TypeError (not a BaseEnvironment)...
            raise UnknownEnvironment(
                f"cannot load the environment class {text!r}: {type(exc).__name__}: {exc}. "
                f"An import path is module:Class, a subclass of Harbor's BaseEnvironment"
            ) from None
        return env
    names = environment_names()
    lowered = text.lower().replace("_", "-")
    if lowered in names:
        return CheckEnvironment(type=lowered)
    raise UnknownEnvironment(
        f"unknown Harbor environment {value!r}; Harbor knows: {', '.join(names)}; "
        f"or give an import path module:Class (e.g. {BUBBLEWRAP})"
    )


def default_environment() -> CheckEnvironment:
    """``docker`` when a Docker daemon answers, else the bubblewrap environment."""
    host = docker_host()
    if docker_daemon_answers(host):
        return CheckEnvironment(type="docker", why=f"a Docker daemon answers at {host}")
    return CheckEnvironment(import_path=BUBBLEWRAP, why=f"no Docker daemon answers at {host}")


def docker_host() -> str:
    """Where Docker's clients look for the daemon: ``DOCKER_HOST``, else the default unix socket."""
    return os.environ.get("DOCKER_HOST") or f"unix://{DEFAULT_DOCKER_SOCKET}"


def docker_daemon_answers(host: str | None = None, timeout_s: float = 1.0) -> bool:
    """Whether a Docker-compatible daemon at ``host`` answers ``GET /_ping`` with 200 within ``timeout_s`` s.

    ``unix://PATH`` and ``tcp://HOST:PORT`` (plain HTTP) are probed; other schemes
    (``ssh://``, ``npipe://``) count as no answer. No docker CLI is needed.
    """
    url = urlparse(host or docker_host())
    try:
        if url.scheme == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout_s)
            sock.connect(url.path)
        elif url.scheme in ("tcp", "http"):
            sock = socket.create_connection((url.hostname or "localhost", url.port or 2375), timeout=timeout_s)
        else:
            return False
    except OSError:
        return False
    try:
        with sock:
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            reply = b""
            while b"\r\n" not in reply and len(reply) < 4096:
                chunk = sock.recv(1024)
                if not chunk:
                    break
                reply += chunk
    except OSError:
        return False
    status = reply.split(b"\r\n", 1)[0].split()
    return len(status) >= 2 and status[0].startswith(b"HTTP/") and status[1] == b"200"


def preflight(env: CheckEnvironment) -> None:
    """Harbor's own preflight of the environment class (engine installed and running, credentials, root...).

    Harbor's preflights end the process with ``SystemExit(message)``; that
    message becomes an :class:`EnvironmentUnavailable` naming the environment
    here, or, when the exit was raised from one of orharbor's
    :class:`~orharbor.errors.UserError` s (as the bubblewrap environment's is),
    that error as it is.
    """
    try:
        cls = environment_class(env)
        cls.preflight(kwargs={})
    except ImportError as exc:  # a cloud provider whose SDK is not installed: Harbor names the pip extra
        raise EnvironmentUnavailable(f"{env.name}: {exc}") from None
    except SystemExit as exc:
        raise _refusal(env, exc) from None
    if env.type == "docker":
        _require_compose_v2()


def preflight_tasks(env: CheckEnvironment, task_dirs: list[Path]) -> None:
    """The environment class's ``preflight_tasks(task_dirs)``, if it has one: what these tasks need of this host.

    Not a Harbor hook: an environment that can tell before any trial that a task's image
    cannot start here (the bubblewrap environment: a Debian package this machine lacks)
    says so once, instead of every trial failing at its start.
    """
    try:
        hook = getattr(environment_class(env), "preflight_tasks", None)
    except ImportError:  # preflight has said so already; Harbor names it per trial otherwise
        return
    if hook is None:
        return
    try:
        hook(list(task_dirs))
    except SystemExit as exc:
        raise _refusal(env, exc) from None


def _refusal(env: CheckEnvironment, exc: SystemExit) -> UserError:
    """A preflight's exit as one line: the UserError it was raised from, else its message naming the environment."""
    if isinstance(exc.__cause__, UserError):
        return exc.__cause__
    return EnvironmentUnavailable(f"{env.name}: {exc}")


def environment_capabilities(env: CheckEnvironment):
    """The class's ``capabilities`` (Harbor's ``EnvironmentCapabilities``), when the class alone decides them.

    Harbor reads ``capabilities`` on an environment it has built. Many classes answer
    without any state of a built one (orharbor's, and Harbor's runloop, e2b, ec2...): their
    answer, read on an instance nothing was set on, is the answer for every trial. A class
    that reads its options or its state (Docker's egress sidecar, Modal, Daytona) gives
    None: Harbor decides from the built environment, per trial.
    """
    from harbor.environments.capabilities import EnvironmentCapabilities

    try:
        cls = environment_class(env)
        capabilities = getattr(object.__new__(cls), "capabilities")
    except Exception:  # noqa: BLE001 - not knowable before a build: Harbor decides per trial
        return None
    return capabilities if isinstance(capabilities, EnvironmentCapabilities) else None


def environment_kind(env: CheckEnvironment) -> str:
    """The environment's own name for its kind (its ``type()``: ``docker``, ``bubblewrap``...), else ``--env``'s."""
    try:
        kind = environment_class(env).type()
    except Exception:  # noqa: BLE001 - a class that cannot say: the name it was chosen by
        return env.name
    return str(getattr(kind, "value", kind))


def _require_compose_v2() -> None:
    """Harbor's docker environment runs ``docker compose`` (the v2 plugin); its preflight does not ask."""
    import subprocess

    try:
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentUnavailable(f"docker: `docker compose version` failed: {exc}") from None
    if probe.returncode != 0:
        raise EnvironmentUnavailable(
            "docker: Harbor's docker environment runs `docker compose` (Compose v2, the "
            "docker CLI plugin), which is not installed here: `docker compose version` "
            f"says {(probe.stderr or probe.stdout).strip()[:200]!r}"
        )


class EnvironmentUnavailable(UserError):
    """Harbor's preflight of the chosen environment failed (engine missing or not running, no credentials)."""
