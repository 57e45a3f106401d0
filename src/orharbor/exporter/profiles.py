"""Consumer profiles of ``orharbor export --for``: what each RL trainer that reads Harbor tasks needs changed.

Each profile changes only what its consumer's own loader needs (read from that
consumer's public code; the version checked is in :data:`PROFILES`):

- ``harbor``, ``skyrl``, ``openenv``, ``trl``: today's export. Those three run
  Harbor's own trial code, so a task Harbor scores they score.
- ``tinker`` (tinker-cookbook ``harbor_rl``): its grader uploads ``tests/`` to
  ``/tests`` in the agent's own sandbox, each file read as text (earlier
  checkouts upload only the top-level files; 0.6.1 walks the folder), and runs
  ``bash /tests/test.sh`` from ``/root`` under its own ``grader_timeout``. So the
  verifier runs in shared mode and ``tests/`` is flat (:func:`flatten`): every
  file top-level under an injective name, the manifest checks that flat folder,
  and ``verify.py`` rebuilds the tree in a private folder before it imports it.
- ``prime`` (Prime Intellect ``verifiers`` ``HarborTaskset``): it refuses a
  collect hook that names a ``user`` (its hooks run as the runtime's default
  user) and builds no Dockerfiles, so it needs ``--image-prefix``. The hook
  keeps its ``user``-free form and ends with a root check
  (:func:`orharbor.exporter.collect_hook.collect_hook`): as root it is the same
  defence; as anyone else it exits non-zero, which ``verifiers`` turns into a
  failed rollout instead of a scored one.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from orharbor.task_template.verify import LAYOUT


@dataclass(frozen=True)
class Profile:
    """What one consumer needs of an export."""

    name: str
    checked: str  #: the consumer's code this profile was read from
    modes: tuple[str, ...] = ("separate", "shared")  #: verifier modes the consumer runs
    flat_tests: bool = False  #: every tests/ file top-level, text only
    hook_user: bool = True  #: the collect hook may say ``user = "root"``
    needs_image: bool = False  #: [environment] docker_image is required (no Dockerfile builds)


PROFILES = {
    p.name: p
    for p in (
        Profile("harbor", "harbor 0.26.0"),
        Profile("skyrl", "SkyRL Harbor generator (a Harbor TrialConfig)"),
        Profile("openenv", "OpenEnv Harbor environment"),
        Profile("trl", "trl.experimental.harbor"),
        Profile("tinker", "tinker-cookbook 0.6.1 recipes/harbor_rl", modes=("shared",), flat_tests=True),
        Profile("prime", "verifiers 0.4.0 HarborTaskset", hook_user=False, needs_image=True),
    )
}
CONSUMERS = tuple(PROFILES)

#: An image repository without tag or digest: [host[:port]/]path, lower case (the OCI distribution spec's form).
_COMPONENT = r"[a-z0-9]+(?:[._-][a-z0-9]+)*"
_REPOSITORY = re.compile(rf"^(?:[a-z0-9.-]+(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*$")


class ProfileError(ValueError):
    """Options a consumer profile cannot take."""


def check(consumer: str, verifier_mode: str, image_prefix: str | None) -> None:
    """ProfileError unless ``consumer`` is known and runs this verifier mode, with an image where it needs one."""
    profile = PROFILES.get(consumer)
    if profile is None:
        raise ProfileError(f"unknown consumer {consumer!r}; one of: {', '.join(CONSUMERS)}")
    if verifier_mode not in profile.modes:
        raise ProfileError(
            f"--for {consumer} runs the verifier in {' or '.join(profile.modes)} mode only, not {verifier_mode}"
        )
    if profile.needs_image and not image_prefix:
        raise ProfileError(
            f"--for {consumer} builds no Dockerfiles: give --image-prefix REGISTRY/NAME, then "
            "build and push the images with `orharbor images`"
        )
    if image_prefix is not None:
        check_image_prefix(image_prefix)


def default_mode(consumer: str) -> str:
    """The verifier mode an export for ``consumer`` gets when none is asked for."""
    return PROFILES[consumer].modes[0] if consumer in PROFILES else "separate"


def check_image_prefix(prefix: str) -> str:
    """``prefix`` if it is an image repository (no tag, no digest): task ids become its tags."""
    if not isinstance(prefix, str) or not _REPOSITORY.match(prefix):
        raise ProfileError(
            f"--image-prefix must be an image repository such as registry.example.com/team/orharbor "
            f"(lower case, no tag or digest), got {prefix!r}"
        )
    return prefix


def images(prefix: str, task_id: str) -> tuple[str, str]:
    """(agent image, verifier image) of a task: one repository each, the task id as the tag.

    One image per task keeps the instance in the agent image and the hidden tests
    in the verifier image, as the Dockerfiles build them. Every task of a package
    set shares all layers but the last few (the task's own files), so a registry
    stores the common layers once.
    """
    return f"{prefix}:{task_id}", f"{prefix}-verifier:{task_id}"


def apply_images(config: dict, task_id: str, prefix: str | None) -> dict:
    """task.toml ``config`` with ``docker_image`` set where the task has a Dockerfile to build it from."""
    if prefix is None:
        return config
    agent, verifier = images(prefix, task_id)
    config["environment"]["docker_image"] = agent
    if "environment" in config["verifier"]:
        config["verifier"]["environment"]["docker_image"] = verifier
    return config


def flat_name(relative: str) -> str:
    """A tests/ path as one top-level file name (percent-encoded, so no two paths share a name)."""
    return quote(relative, safe="")


def flatten(tests: Path) -> dict[str, str]:
    """Move every file under ``tests`` to the top level under :func:`flat_name`; return {flat name: path}.

    Refuses a file that is not UTF-8 text or holds a carriage return: Tinker reads
    each with ``Path.read_text`` (newlines translated), so either would arrive changed.
    """
    layout = {}
    for path in sorted(p for p in tests.rglob("*") if p.is_file()):
        relative = path.relative_to(tests).as_posix()
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise ProfileError(
                f"tests/{relative} is not UTF-8 text: a flat tests/ for Tinker holds text only"
            ) from None
        if b"\r" in data:
            raise ProfileError(f"tests/{relative} holds a carriage return, which Tinker's text upload would change")
        if "/" in relative:
            layout[flat_name(relative)] = relative
    for name, relative in layout.items():
        os.replace(tests / relative, tests / name)
    for folder in sorted((p for p in tests.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        folder.rmdir()
    if layout:
        (tests / LAYOUT).write_text(json.dumps(layout, indent=1, sort_keys=True) + "\n")
    return layout


def consumer_name(config: dict) -> str:
    """The consumer task.toml data ``config`` was exported for: ``[metadata] consumer`` (``harbor`` if none)."""
    return config.get("metadata", {}).get("consumer", "harbor")


#: tinker-cookbook's default grader timeout (HarborDatasetBuilder.grader_timeout), in seconds.
TINKER_GRADER_TIMEOUT_S = 60


def tinker_grader_warning(budgets_s: list[float]) -> str | None:
    """What to tell a Tinker user whose tasks' verifier budgets (each task's ``[verifier] timeout_sec``,
    :attr:`orharbor.exporter.task_folder.TaskFolder.verifier_timeout_s`) exceed Tinker's 60 s grader default;
    None if none do.

    Tinker runs test.sh under its own ``grader_timeout`` and ignores task.toml's
    ``[verifier] timeout_sec``; a level-2 verifier that runs solve.py on several hidden
    instances needs up to that budget, and a grader killed early leaves no reward.
    """
    over = [b for b in budgets_s if b > TINKER_GRADER_TIMEOUT_S]
    if not over:
        return None
    return (
        f"{len(over)} of {len(budgets_s)} tasks give their verifier more than Tinker's {TINKER_GRADER_TIMEOUT_S} "
        f"s grader default (up to {max(over):g} s, task.toml [verifier] timeout_sec): build Tinker's "
        f"HarborDatasetBuilder with grader_timeout={int(max(over) + 0.999)}"
    )
