"""The toolkit every task exporter shares: options, task.toml, templates, tests/, atomic builds.

:mod:`orharbor.exporter.algorithm` (dataset rows) and
:mod:`orharbor.exporter.modelling` (specs and RetailOpt rows) write their own
files and build everything else from here, so a task of any kind gets the same
task.toml shape, verifier bundle, test.sh and Dockerfile pins (those of
:mod:`orharbor.image_facts`).
"""

from __future__ import annotations

import json
import shutil
import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import tomli_w

from orharbor.errors import UserError
from orharbor.exporter.agent_files import write_record
from orharbor.exporter.bundle import unpack as unpack_bundle
from orharbor.exporter.bundle import write_bundle
from orharbor.exporter import profiles
from orharbor.exporter.collect_hook import collect_hook
from orharbor.exporter.task_folder import TaskFolder
from orharbor.files import replace_dir, staging_dir
from orharbor.image_facts import AGENT_USER, BASE_IMAGE, base_image, interpreter_record
from orharbor.interrupts import deferred
from orharbor.task_template.verify import MANIFEST, describe
from orharbor.verifiers import contract
from orharbor.verifiers import reward_scale as reward_scales


class ExportOptionError(UserError):
    """Export options that make no task: an unknown mode, an empty allowlist, a base image that is not one token."""


@dataclass(frozen=True)
class ExportOptions:
    """How rows become tasks; every field is a CLI flag of ``orharbor export``."""

    verifier_mode: str = "separate"
    allow_ortools: bool = False
    agent_network: str = "public"
    allowed_hosts: tuple[str, ...] = ()
    agent_timeout_s: float | None = None
    cpus: int = 2
    memory_mb: int = 4096
    storage_mb: int = 10240
    solve_memory_mb: int = 2048
    examples: int = 2
    base_image: str = BASE_IMAGE
    reference_time_limit_s: float = 60.0
    #: Network of a separate verifier. "public" is for testing on an engine that cannot take a
    #: container offline (Docker or Podman without Harbor's egress sidecar), never for a benchmark.
    verifier_network: str = "no-network"
    #: Who reads the export (``--for``): :data:`orharbor.exporter.profiles.PROFILES`.
    consumer: str = "harbor"
    #: Image repository the task images are named in (``--image-prefix``): task.toml gets docker_image.
    image_prefix: str | None = None
    #: The scale reward.json is written on: "orharbor" (failure -1, naive 0, reference 1) or "unit"
    #: (failure 0, naive 0.5, reference 1; what RL trainers assume): :mod:`orharbor.verifiers.reward_scale`.
    reward_scale: str = reward_scales.DEFAULT

    def __post_init__(self) -> None:
        try:
            reward_scales.check_scale(self.reward_scale)
        except reward_scales.UnknownScale as exc:
            raise ExportOptionError(str(exc)) from None
        if self.verifier_network not in ("no-network", "public"):
            raise ExportOptionError(f"verifier network must be 'no-network' or 'public', got {self.verifier_network!r}")
        if self.verifier_mode not in ("separate", "shared"):
            raise ExportOptionError(f"verifier mode must be 'separate' or 'shared', got {self.verifier_mode!r}")
        if self.agent_network not in ("public", "allowlist"):
            raise ExportOptionError(f"agent network must be 'public' or 'allowlist', got {self.agent_network!r}")
        if self.agent_network == "allowlist" and not self.allowed_hosts:
            raise ExportOptionError(
                "--agent-network allowlist needs at least one --allowed-hosts entry (the model API)"
            )
        if self.allowed_hosts and self.agent_network != "allowlist":
            raise ExportOptionError(
                "--allowed-hosts needs --agent-network allowlist (without it the agent's "
                "network is public and no allowlist is written)"
            )
        check_base_image(self.base_image)
        try:
            profiles.check(self.consumer, self.verifier_mode, self.image_prefix)
        except profiles.ProfileError as exc:
            raise ExportOptionError(str(exc)) from None

    def agent_timeout_s_for(self, level: int) -> float:
        """The agent's seconds at ``level``: ``agent_timeout_s``, else 1800 (level 1) or 3600 (level 2)."""
        return self.agent_timeout_s or (1800.0 if level == 1 else 3600.0)


def check_base_image(image: str) -> str:
    """``image`` if it is one printable token; it lands on a Dockerfile's FROM line as is."""
    if not isinstance(image, str) or not image.isprintable() or image.split() != [image]:
        raise ExportOptionError(
            f"base image must be one image reference, without whitespace or control characters, got {image!r}"
        )
    return image


def build_task(out: Path, task_id: str, write: Callable[[Path], Path], force: bool = False) -> Path:
    """Run ``write(parent)``, which writes ``parent/task_id``, in a temporary folder in ``out``; then rename.

    The finished folder replaces ``out/task_id`` only with ``force``
    (:func:`orharbor.files.replace_dir`); a failed write leaves ``out`` as it was.
    Every exporter goes through here: ``export_row`` in :mod:`orharbor.exporter.algorithm`, and
    ``export_spec`` and ``export_retail`` in :mod:`orharbor.exporter.modelling`.
    """
    staging = staging_dir(out, task_id)
    try:
        built = write(staging)
        if built != staging / task_id:
            raise ValueError(f"task {task_id!r} was written to {built.name!r}")
        return replace_dir(built, out / task_id, force)
    finally:
        with deferred():  # a Ctrl-C here would leave the hidden staging folder in the user's --out
            shutil.rmtree(staging, ignore_errors=True)


def fresh_task(task: Path) -> Path:
    """The empty layout of a new task folder (in build_task's temporary folder)."""
    for sub in ("environment", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    return task


def write_tests(tests: Path, task: contract.Task, problem: str | None = None) -> None:
    """tests/: task.json (the typed contract), the verifier bundle (``problem``'s verify.py if any), verify.py, test.sh.

    The exporter writes the task's other tests/ files after this; :func:`seal`, its last step, writes
    ``manifest.json`` over all of them.
    """
    write_json(tests / contract.TASK_FILE, contract.dump(task))
    write_bundle(problem, tests)
    copy_template("verify.py", tests / "verify.py")
    write_test_sh(tests, task.kind, task.reward_scale)


def write_task_toml(task: Path, config: dict) -> None:
    (task / "task.toml").write_text(tomli_w.dumps(config))


def task_toml(
    task_id: str,
    description: str,
    metadata: dict,
    options: ExportOptions,
    *,
    agent_timeout_s: float,
    verifier_timeout_s: float,
    artifacts: list[str],
) -> dict:
    """task.toml as data, in the shape of Harbor's TaskConfig: the one builder for every task kind.

    A separate verifier gets its own ``[verifier.environment]``, offline from the
    start, so no provider has to switch its network after start. In both modes a
    collect hook (:mod:`orharbor.exporter.collect_hook`), run by Harbor as root
    before it takes anything out of the agent's container, ends the agent's
    processes, bounds /logs/artifacts and leaves each declared artifact a regular
    file or nothing; in shared mode it also empties /logs/verifier and removes
    /tests. An allowlist
    applies to the agent phase only (``[agent]``): ``[environment]`` stays public
    because agent setup installs claude-code or codex from the network.
    """
    resources = {
        "build_timeout_sec": 1800.0,
        "cpus": options.cpus,
        "memory_mb": options.memory_mb,
        "storage_mb": options.storage_mb,
    }
    verifier: dict = {"timeout_sec": verifier_timeout_s, "environment_mode": options.verifier_mode}
    if options.verifier_mode == "separate":
        verifier["environment"] = {**resources, "network_mode": options.verifier_network}
    verifier["collect"] = [
        collect_hook(options.verifier_mode, artifacts, user=profiles.PROFILES[options.consumer].hook_user)
    ]
    agent: dict = {"timeout_sec": agent_timeout_s, "user": AGENT_USER}
    if options.agent_network == "allowlist":
        agent.update(network_mode="allowlist", allowed_hosts=list(options.allowed_hosts))
    config: dict[str, Any] = {
        "schema_version": "1.4",
        "task": {"name": f"orharbor/{task_id}", "description": description, "keywords": metadata["tags"]},
        "metadata": {**metadata, "verifier_mode": options.verifier_mode, "reward_scale": options.reward_scale},
        "verifier": verifier,
        "agent": agent,
        "environment": {**resources, "network_mode": "public"},
        "artifacts": artifacts,
    }
    if options.consumer != "harbor":
        config["metadata"]["consumer"] = options.consumer
    return profiles.apply_images(config, task_id, options.image_prefix)


def network_text(options: ExportOptions) -> str:
    """What the instruction says of the network during the agent phase."""
    if options.agent_network == "public":
        return "The network is open (your model API needs it)."
    return "The network is limited to an allowlist (your model API); package installs will fail."


def time_up_text(what: str) -> str:
    """What happens when the agent's time runs out: Harbor still verifies the deliverable it finds then."""
    return (
        f"When the time is up you are stopped, and the state of {what} at that moment is scored "
        "as if you had finished; running out of time costs nothing by itself."
    )


def template_text(name: str) -> str:
    return resources.files("orharbor.task_template").joinpath(name).read_text()


def render(name: str, values: dict) -> str:
    """Template ``name`` with ``values``; a Dockerfile's ``$base_image_check`` and ``$interpreter_record`` are
    the base image check's and the interpreter record's RUN steps."""
    return string.Template(template_text(name)).substitute(
        {
            "base_image_check": base_image.dockerfile_step(),
            "interpreter_record": interpreter_record.dockerfile_step(),
            **values,
        }
    )


def copy_template(name: str, target: Path, executable: bool = False) -> None:
    target.write_text(template_text(name))
    if executable:
        target.chmod(0o755)


def write_manifest(tests: Path) -> dict:
    """``tests/manifest.json``: relative path, size and sha256 of every file of tests/ (itself aside), every folder.

    The task's verify.py checks /tests against it before it imports anything
    from there (in a task container), so whatever else lands in /tests, or is
    changed there, scores the failure reward. Written by :func:`seal`, last;
    anything that edits a task's tests/ afterwards must call it again.
    """
    manifest = describe(str(tests))
    (tests / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def seal(tests: Path, config: dict | None = None) -> None:
    """Record the agent's data files (:mod:`orharbor.exporter.agent_files`), write tests/manifest.json
    (:func:`write_manifest`), then make tests/ readable by its owner only.

    ``config`` is the task.toml data the exporter has just written (its consumer
    decides whether tests/ goes flat); without it, as for a task edited after
    export, the task's task.toml is read (:class:`~orharbor.exporter.task_folder.TaskFolder`).

    Uploads keep these modes and land owned by root, so in shared mode a process
    the agent left behind cannot read the expected values or hidden instances in
    the moment between the upload and test.sh's own ``chmod``.
    """
    write_record(tests.parent)
    if config is None:
        config = TaskFolder(tests.parent).config
    if profiles.PROFILES[profiles.consumer_name(config)].flat_tests:
        unpack_bundle(tests)  # Tinker uploads text files only: the bundle goes as its tree
        profiles.flatten(tests)
    write_manifest(tests)
    for path in (tests, *tests.rglob("*")):
        path.chmod(0o700 if path.is_dir() or path.name == "test.sh" else 0o600)


def write_test_sh(tests: Path, kind: contract.Kind, scale: str = reward_scales.DEFAULT) -> None:
    """tests/test.sh; if Python itself fails it still leaves the failure reward, and says why in details.json.

    test.sh puts the reason (a tampered interpreter or tests folder, or a failed
    Python) in place of ``@ERROR@``. The failure reward is on the task's reward
    ``scale`` (0.0 on ``unit`` for every kind), as the verifier's own is.
    """
    reward = reward_scales.to_scale(kind.fail_reward, scale, kind.fail_reward)
    details = {
        "kind": kind.family,
        "error": "@ERROR@",
        "reward": reward,
        "reward_scale": scale,
        "orharbor_reward": kind.fail_reward,
        **({"executed": 0, "correct": 0} if kind.family == "modelling" else {"feasible": 0}),
    }
    (tests / "test.sh").write_text(
        render(
            "test.sh",
            {
                "fail_reward": f"{reward:.1f}",
                "fail_json": json.dumps({"reward": reward}),
                "fail_details": json.dumps(details),
            },
        )
    )
    (tests / "test.sh").chmod(0o755)


def write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=1) + "\n")
